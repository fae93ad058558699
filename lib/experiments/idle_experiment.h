// SPDX-License-Identifier: GPL-2.0-or-later
// idle_experiment.h (internal): `isolab idle`, wakeup idle-CPU selection
// (idle_select) as a function.  What it runs: idle_experiment.cc.  The
// option defaults are isolab's flag defaults; each option names its flag.
// Thread safety: see experiment.h.

#ifndef ISOLATION_LIB_EXPERIMENTS_IDLE_EXPERIMENT_H_
#define ISOLATION_LIB_EXPERIMENTS_IDLE_EXPERIMENT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "experiments/experiment.h"
#include "experiments/registered.h"

namespace isolation::experiments {

struct IdleExperimentOptions {
  // --idle_variants: registered selectors of the select sweep.  Default: V0
  // V1 V1-eager V1-tickstop V1-unbounded V2 V3 V4 V4n V5, then every selector
  // registered outside the library (not a negative control), which also get
  // rows in the workload and schbench tables beside V0 and V1
  // (registered.h).
  std::vector<std::string> variants = DefaultIdleVariants();
  std::vector<int> llc_cpus = {
      16, 64, 256};  // --idle_llc_cpus: LLC sizes of the select sweep, each 2..4096 (quick: 64)
  int32_t samples = 20000;     // --idle_samples: wakeups per select-sweep point (quick: 3000)
  int32_t iterations = 20;     // --idle_iterations: workload iterations per variant (quick: 3)
  std::string driver = "sim";  // --idle_driver: "sim" or "real" (the workloads' driver)
  // --idle_workload_topology: the workloads' machine (the seed's 32-core
  // Ampere eMAG, one LLC, no isolation).
  std::string workload_topology = "package:1 l3cache:1 core:32 pu:1";
  int32_t hackbench_loops = 200;    // --idle_hackbench_loops (the seed used 5000; quick: 40)
  int32_t pipe_round_trips = 3000;  // --idle_pipe_round_trips (the seed used 100000; quick: 300)
  // --idle_placement_penalty: the simulator's cache-refill penalty of
  // placement (SimOptions::refill_penalty, its default costs) in the
  // workload and schbench tables: "off" (those tables as before), "on"
  // (those tables with it), "both" (those tables off, plus a "placement
  // penalty" section beside them with it on).  The real-thread driver
  // models none: "on" is an error there, "both" runs the tables off.
  std::string placement_penalty = "both";
};

// Errors: InvalidArgument naming the option as its flag (--idle_samples=-5);
// the model machine's errors.  Values are validated as given, then --quick
// shortens them.
// What RunIdleExperiment(common, options) is expected to cost (experiment.h:
// RunCost).  Errors: none today (a StatusOr like the others').
absl::StatusOr<RunCost> EstimateIdleExperiment(const CommonOptions& common,
                                               const IdleExperimentOptions& options);
absl::StatusOr<ExperimentReport> RunIdleExperiment(const CommonOptions& common,
                                                   const IdleExperimentOptions& options,
                                                   Progress& progress);

}  // namespace isolation::experiments

#endif  // ISOLATION_LIB_EXPERIMENTS_IDLE_EXPERIMENT_H_
