// SPDX-License-Identifier: GPL-2.0-or-later
// `isolab tmigr`: the flags of experiments::RunTmigrExperiment.

#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "core/status_macros.h"
#include "experiments/tmigr_experiment.h"
#include "isolab/flag_parser.h"
#include "isolab/subcommands.h"

using isolation::experiments::TmigrExperimentOptions;

ABSL_FLAG(int64_t, tmigr_duration_ms, TmigrExperimentOptions{}.duration_ms,
          "simulated span of the S24 run (ms); --quick uses 2000");
ABSL_FLAG(std::string, tmigr_variants, absl::StrJoin(TmigrExperimentOptions{}.variants, ","),
          absl::StrCat("participations to run, comma-separated (",
                       isolation::experiments::RegisteredParticipationsHelp(), ")"));
ABSL_FLAG(int64_t, tmigr_hk_period_us, TmigrExperimentOptions{}.hk_period_us,
          "housekeeping burst period (us); 1000 = spec S24 literally (then no timer is ever handed "
          "over at HZ=1000)");
ABSL_FLAG(int64_t, tmigr_callback_cost_us, TmigrExperimentOptions{}.callback_cost_us,
          "modelled cost of one timer callback (us)");
ABSL_FLAG(int64_t, tmigr_real_ms, TmigrExperimentOptions{}.real_ms,
          "real-thread run per variant (ms); 0 disables; --quick uses 150");
ABSL_FLAG(
    std::string, tmigr_bugs, absl::StrJoin(TmigrExperimentOptions{}.bugs, ","),
    "negative controls for the modelled run: re-create fixed bugs, comma-separated: ghost_timer, "
    "no_cpu_refresh, early_return, quick_check_top_only ('' = correct code); each also runs its "
    "directed "
    "probe on this machine's hierarchy (violations: exit 1); a bug this machine cannot show exits "
    "2 "
    "saying which machine can");

// Documented ranges, checked by the flag parser for every subcommand (flag_parser.h).
ISOLAB_FLAG_RANGE(tmigr_duration_ms, 1, 3600000);
ISOLAB_FLAG_RANGE(tmigr_hk_period_us, 101, 1000000);
ISOLAB_FLAG_RANGE(tmigr_callback_cost_us, 0, 100000);
ISOLAB_FLAG_RANGE(tmigr_real_ms, 0, 600000);

namespace isolation::isolab {

absl::StatusOr<TmigrExperimentOptions> TmigrOptionsFromFlags() {
  TmigrExperimentOptions o;
  o.duration_ms = absl::GetFlag(FLAGS_tmigr_duration_ms);
  ISOLATION_ASSIGN_OR_RETURN(
      o.variants, ParseNameListFlag("tmigr_variants", absl::GetFlag(FLAGS_tmigr_variants)));
  o.hk_period_us = absl::GetFlag(FLAGS_tmigr_hk_period_us);
  o.callback_cost_us = absl::GetFlag(FLAGS_tmigr_callback_cost_us);
  o.real_ms = absl::GetFlag(FLAGS_tmigr_real_ms);
  ISOLATION_ASSIGN_OR_RETURN(
      o.bugs,
      ParseNameListFlag("tmigr_bugs", absl::GetFlag(FLAGS_tmigr_bugs), /*allow_empty=*/true));
  return o;
}

Subcommand TmigrSubcommand() {
  return {
      "tmigr",
      "timer migration: who runs housekeeping timers on the oslat seed machine, v6.9 vs "
      "isolation-aware",
      {"topology", "isolcpus", "nohz_full", "seed", "quick", "tmigr_duration_ms", "tmigr_variants",
       "tmigr_hk_period_us", "tmigr_callback_cost_us", "tmigr_real_ms", "tmigr_bugs", "real_cpus",
       "allow_oversubscribed", "hist", "bucket_size", "entries", "no_zero_lines", "oslat"},
      [](const experiments::CommonOptions& common,
         experiments::Progress& progress) -> absl::StatusOr<experiments::ExperimentReport> {
        ISOLATION_ASSIGN_OR_RETURN(TmigrExperimentOptions options, TmigrOptionsFromFlags());
        return experiments::RunTmigrExperiment(common, options, progress);
      },
      [](const experiments::CommonOptions& common) -> absl::StatusOr<experiments::RunCost> {
        ISOLATION_ASSIGN_OR_RETURN(experiments::TmigrExperimentOptions options,
                                   TmigrOptionsFromFlags());
        return experiments::EstimateTmigrExperiment(common, options);
      }};
}

}  // namespace isolation::isolab
