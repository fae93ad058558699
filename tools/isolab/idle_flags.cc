// SPDX-License-Identifier: GPL-2.0-or-later
// `isolab idle`: the flags of experiments::RunIdleExperiment.

#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "core/status_macros.h"
#include "experiments/idle_experiment.h"
#include "isolab/flag_parser.h"
#include "isolab/subcommands.h"

using isolation::experiments::IdleExperimentOptions;

ABSL_FLAG(
    std::string, idle_variants, absl::StrJoin(IdleExperimentOptions{}.variants, ","),
    absl::StrCat(
        "idle_select selectors for the select sweep; those registered outside the library are also "
        "workload and schbench rows (",
        isolation::experiments::RegisteredSelectorsHelp(), ")"));
ABSL_FLAG(std::string, idle_llc_cpus, absl::StrJoin(IdleExperimentOptions{}.llc_cpus, ","),
          "LLC sizes of the select sweep (quick: 64)");
ABSL_FLAG(int32_t, idle_samples, IdleExperimentOptions{}.samples,
          "Wakeups per select-sweep point (quick: 3000)");
ABSL_FLAG(int32_t, idle_iterations, IdleExperimentOptions{}.iterations,
          "Workload iterations per variant (quick: 3)");
ABSL_FLAG(std::string, idle_driver, IdleExperimentOptions{}.driver,
          "Run-queue harness driver for the workloads: sim | real");
ABSL_FLAG(std::string, idle_workload_topology, IdleExperimentOptions{}.workload_topology,
          "Model machine of the workloads (default: the seed's 32-core Ampere eMAG, one LLC, no "
          "isolation)");
ABSL_FLAG(int32_t, idle_hackbench_loops, IdleExperimentOptions{}.hackbench_loops,
          "Messages per sender per receiver (hackbench --loops; the seed used 5000; quick: 40)");
ABSL_FLAG(int32_t, idle_pipe_round_trips, IdleExperimentOptions{}.pipe_round_trips,
          "Pipe round trips per iteration (the seed used 100000; quick: 300)");
ABSL_FLAG(std::string, idle_placement_penalty, IdleExperimentOptions{}.placement_penalty,
          "Simulator cache-refill penalty of placement in the workload tables: off | on | both "
          "(both: the tables "
          "off plus a penalty-on section beside them)");

// Documented ranges, checked by the flag parser for every subcommand (flag_parser.h).
ISOLAB_FLAG_RANGE(idle_samples, 1, 10000000);
ISOLAB_FLAG_RANGE(idle_iterations, 1, 100000);
ISOLAB_FLAG_RANGE(idle_hackbench_loops, 1, 1000000);
ISOLAB_FLAG_RANGE(idle_pipe_round_trips, 1, 10000000);

namespace isolation::isolab {

absl::StatusOr<IdleExperimentOptions> IdleOptionsFromFlags() {
  IdleExperimentOptions o;
  ISOLATION_ASSIGN_OR_RETURN(
      o.variants, ParseNameListFlag("idle_variants", absl::GetFlag(FLAGS_idle_variants)));
  ISOLATION_ASSIGN_OR_RETURN(
      o.llc_cpus, ParseIntListFlag("idle_llc_cpus", absl::GetFlag(FLAGS_idle_llc_cpus), 2, 4096));
  o.samples = absl::GetFlag(FLAGS_idle_samples);
  o.iterations = absl::GetFlag(FLAGS_idle_iterations);
  o.driver = absl::GetFlag(FLAGS_idle_driver);
  o.workload_topology = absl::GetFlag(FLAGS_idle_workload_topology);
  o.hackbench_loops = absl::GetFlag(FLAGS_idle_hackbench_loops);
  o.pipe_round_trips = absl::GetFlag(FLAGS_idle_pipe_round_trips);
  o.placement_penalty = absl::GetFlag(FLAGS_idle_placement_penalty);
  return o;
}

Subcommand IdleSubcommand() {
  return {
      "idle",
      "Wakeup idle-CPU selection: SIS_UTIL scan vs idle cpumask vs sched_ext claim (idle_select)",
      {"topology", "isolcpus", "nohz_full", "seed", "quick", "json", "idle_variants",
       "idle_llc_cpus", "idle_samples", "idle_iterations", "idle_driver", "idle_workload_topology",
       "idle_hackbench_loops", "idle_pipe_round_trips", "idle_placement_penalty", "real_cpus",
       "allow_oversubscribed"},
      [](const experiments::CommonOptions& common,
         experiments::Progress& progress) -> absl::StatusOr<experiments::ExperimentReport> {
        ISOLATION_ASSIGN_OR_RETURN(IdleExperimentOptions options, IdleOptionsFromFlags());
        return experiments::RunIdleExperiment(common, options, progress);
      },
      [](const experiments::CommonOptions& common) -> absl::StatusOr<experiments::RunCost> {
        ISOLATION_ASSIGN_OR_RETURN(experiments::IdleExperimentOptions options,
                                   IdleOptionsFromFlags());
        return experiments::EstimateIdleExperiment(common, options);
      }};
}

}  // namespace isolation::isolab
