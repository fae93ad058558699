// SPDX-License-Identifier: GPL-2.0-or-later
// `isolab run --workload=rtapp:FILE`: the flags of
// experiments::RunWorkloadExperiment.  The rows of each mechanism are chosen
// by the flags the other subcommands choose them with (--mmcid_variants,
// --tmigr_variants, --idle_variants, --vmstat_strategies); not given, each
// mechanism runs its default rows.

#include <string>
#include <vector>

#include "absl/flags/commandlineflag.h"
#include "absl/flags/flag.h"
#include "absl/flags/reflection.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/status_macros.h"
#include "experiments/workload_experiment.h"
#include "isolab/flag_parser.h"
#include "isolab/subcommands.h"

using isolation::experiments::WorkloadExperimentOptions;

ABSL_FLAG(std::string, workload, "",
          "The workload to run on the model machine: rtapp:FILE (an rt-app JSON description) or "
          "trace:FILE (a recording, as a closed-loop workload; --topology and --isolcpus left at "
          "'seed' mean the recorded machine and isolation); docs/workloads.md");
ABSL_FLAG(double, cpu_scale, 1.0,
          "trace: workloads: the recorded run times are multiplied by this (0.5 = model CPUs "
          "twice as fast as the recorded ones), (0, 100]");
ABSL_FLAG(std::string, run_mechanisms, absl::StrJoin(WorkloadExperimentOptions{}.mechanisms, ","),
          "Mechanisms whose variants run the workload: mm_cid, tmigr, idle_select, vmstat");
ABSL_FLAG(std::string, variants, "",
          "Rows of any mechanism by variant name, comma-separated (e.g. v6.9,isolation,A0,A1): "
          "each name goes to the mechanism whose registry knows it, and mechanisms not named are "
          "left out");
ABSL_FLAG(bool, osnoise_top, false,
          "After each row, the isolated CPUs' modelled noise as an `rtla osnoise top` table (with "
          "--hist, rt-app rows also print their timer latencies as `rtla timerlat hist`)");
ABSL_FLAG(int64_t, run_duration_ms, 0,
          "Virtual time each row runs (0: the description's global.duration; a description that "
          "runs until its threads end is bounded by 60 s)");

ISOLAB_FLAG_RANGE(run_duration_ms, 0, 3600000);

namespace isolation::isolab {
namespace {

// Set by RestrictWorkloadTo (isolab's one thread, before the run).
std::string& RestrictedMechanism() {
  static std::string mechanism;
  return mechanism;
}

absl::StatusOr<WorkloadExperimentOptions> WorkloadOptionsFromFlags() {
  WorkloadExperimentOptions o;
  o.workload = absl::GetFlag(FLAGS_workload);
  ISOLATION_ASSIGN_OR_RETURN(
      o.mechanisms, ParseNameListFlag("run_mechanisms", absl::GetFlag(FLAGS_run_mechanisms)));
  if (!RestrictedMechanism().empty()) o.mechanisms = {RestrictedMechanism()};
  o.duration_ms = absl::GetFlag(FLAGS_run_duration_ms);
  o.cpu_scale = absl::GetFlag(FLAGS_cpu_scale);
  o.osnoise_top = absl::GetFlag(FLAGS_osnoise_top);
  ISOLATION_ASSIGN_OR_RETURN(o.variants, RowFlagsGiven());
  if (FlagGiven("variants")) {
    ISOLATION_ASSIGN_OR_RETURN(o.any_variants,
                               ParseNameListFlag("variants", absl::GetFlag(FLAGS_variants)));
  }
  return o;
}

}  // namespace

std::string WorkloadMechanismOf(const std::string& subcommand) {
  if (subcommand == "mmcid") return "mm_cid";
  if (subcommand == "tmigr") return "tmigr";
  if (subcommand == "idle") return "idle_select";
  if (subcommand == "vmstat") return "vmstat";
  return "";
}

bool WorkloadGiven() { return !absl::GetFlag(FLAGS_workload).empty(); }

void RestrictWorkloadTo(const std::string& mechanism) { RestrictedMechanism() = mechanism; }

Subcommand RunSubcommand() {
  return {
      "run",
      "Run a workload (--workload=rtapp:FILE) on the model machine under every mechanism's "
      "variants: the workload's wake-ups, timer misses and latency, the isolated CPUs' "
      "interruptions, and each mechanism's own figures, one row per variant",
      {"topology", "isolcpus", "nohz_full", "seed", "json", "workload", "run_mechanisms",
       "run_duration_ms", "cpu_scale", "variants", "osnoise_top", "hist", "bucket_size", "entries",
       "no_zero_lines", "mmcid_variants", "tmigr_variants", "idle_variants", "vmstat_strategies"},
      [](const experiments::CommonOptions& common,
         experiments::Progress& progress) -> absl::StatusOr<experiments::ExperimentReport> {
        ISOLATION_ASSIGN_OR_RETURN(WorkloadExperimentOptions options, WorkloadOptionsFromFlags());
        return experiments::RunWorkloadExperiment(common, options, progress);
      },
      [](const experiments::CommonOptions& common) -> absl::StatusOr<experiments::RunCost> {
        ISOLATION_ASSIGN_OR_RETURN(WorkloadExperimentOptions options, WorkloadOptionsFromFlags());
        return experiments::EstimateWorkloadExperiment(common, options);
      }};
}

}  // namespace isolation::isolab
