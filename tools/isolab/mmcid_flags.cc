// SPDX-License-Identifier: GPL-2.0-or-later
// `isolab mmcid`: the flags of experiments::RunMmCidExperiment.

#include <string>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "experiments/mmcid_experiment.h"
#include "isolab/subcommands.h"
#include "isolab/flag_parser.h"
#include "isolation/core/topology.h"

using isolation::experiments::MmCidExperimentOptions;

ABSL_FLAG(int, mmcid_duration_ms, MmCidExperimentOptions{}.duration_ms,
          "simulated duration of the S11 placement run (ms)");
ABSL_FLAG(
    std::string, mmcid_allocator, MmCidExperimentOptions{}.allocator,
    absl::StrCat(
        "allocator (", isolation::experiments::RegisteredAllocatorsHelp(),
        "); scan scopes and placements registered outside the library are rows of their own"));
ABSL_FLAG(int, mmcid_batch, MmCidExperimentOptions{}.batch,
          "CPUs per call of the batch strategy (batch_N)");
ABSL_FLAG(int, mmcid_scan_reps, MmCidExperimentOptions{}.scan_reps,
          "host-timed repetitions per scan strategy (median reported)");
ABSL_FLAG(std::string, mmcid_tick_kick, MmCidExperimentOptions{}.tick_kick,
          "lazy runs with the [WQ] tick kick on every placement: tick_kick|no_tick_kick "
          "(work_unbound always has it)");

// Documented ranges, checked by the flag parser for every subcommand (flag_parser.h).
ISOLAB_FLAG_RANGE(mmcid_duration_ms, 1, 3600000);
ISOLAB_FLAG_RANGE(mmcid_batch, 1, isolation::kMaxCpus);
ISOLAB_FLAG_RANGE(mmcid_scan_reps, 1, 1000000);

namespace isolation::isolab {

absl::StatusOr<MmCidExperimentOptions> MmCidOptionsFromFlags() {
  MmCidExperimentOptions o;
  o.duration_ms = absl::GetFlag(FLAGS_mmcid_duration_ms);
  o.allocator = absl::GetFlag(FLAGS_mmcid_allocator);
  o.batch = absl::GetFlag(FLAGS_mmcid_batch);
  o.scan_reps = absl::GetFlag(FLAGS_mmcid_scan_reps);
  o.tick_kick = absl::GetFlag(FLAGS_mmcid_tick_kick);
  return o;
}

Subcommand MmCidSubcommand() {
  return {
      "mmcid",
      "mm_cid compaction: scan cost per strategy, isolated-CPU stall per placement, convergence",
      {"topology", "isolcpus", "nohz_full", "seed", "quick", "json", "mmcid_duration_ms",
       "mmcid_allocator", "mmcid_batch", "mmcid_scan_reps", "mmcid_tick_kick"},
      [](const experiments::CommonOptions& common,
         experiments::Progress& progress) -> absl::StatusOr<experiments::ExperimentReport> {
        ISOLATION_ASSIGN_OR_RETURN(MmCidExperimentOptions options, MmCidOptionsFromFlags());
        return experiments::RunMmCidExperiment(common, options, progress);
      },
      [](const experiments::CommonOptions& common) -> absl::StatusOr<experiments::RunCost> {
        ISOLATION_ASSIGN_OR_RETURN(MmCidExperimentOptions options, MmCidOptionsFromFlags());
        return experiments::EstimateMmCidExperiment(common, options);
      }};
}

}  // namespace isolation::isolab
