// SPDX-License-Identifier: GPL-2.0-or-later
// mmcid_experiment.h (internal): `isolab mmcid`, mm_cid compaction (scan cost
// per strategy, isolated-CPU stall per placement, convergence) as a
// function.  What it runs: mmcid_experiment.cc.  The option defaults are
// isolab's flag defaults; each option names its flag.  Thread safety: see
// experiment.h.

#ifndef ISOLATION_LIB_EXPERIMENTS_MMCID_EXPERIMENT_H_
#define ISOLATION_LIB_EXPERIMENTS_MMCID_EXPERIMENT_H_

#include <string>

#include "absl/status/statusor.h"
#include "experiments/experiment.h"

namespace isolation::experiments {

struct MmCidExperimentOptions {
  int duration_ms =
      2000;  // --mmcid_duration_ms: simulated span of the S11 placement run (quick: <= 500)
  // --mmcid_allocator: a registered allocator (alloc_v6_4 | alloc_v6_13 |
  // alloc_v6_14, or one registered outside the library).  Scan scopes and
  // placements registered outside the library (not negative controls) get
  // rows of their own in the scan, compaction and placement tables
  // (registered.h).
  std::string allocator = "alloc_v6_14";
  int batch = 8;  // --mmcid_batch: CPUs per call of the batch strategy (batch_N)
  int scan_reps =
      301;  // --mmcid_scan_reps: host-timed repetitions per scan strategy (quick: <= 51)
  // --mmcid_tick_kick: lazy runs with the [WQ] tick kick on every placement:
  // "tick_kick" | "no_tick_kick" (work_unbound always has it).
  std::string tick_kick = "no_tick_kick";
};

// Errors: InvalidArgument naming the option as its flag (--mmcid_batch=0);
// the model machine's errors.
// What RunMmCidExperiment(common, options) is expected to cost (experiment.h:
// RunCost).  Errors: the machine's (LoadTopology, LoadIsolation).
absl::StatusOr<RunCost> EstimateMmCidExperiment(const CommonOptions& common,
                                                const MmCidExperimentOptions& options);
absl::StatusOr<ExperimentReport> RunMmCidExperiment(const CommonOptions& common,
                                                    const MmCidExperimentOptions& options,
                                                    Progress& progress);

}  // namespace isolation::experiments

#endif  // ISOLATION_LIB_EXPERIMENTS_MMCID_EXPERIMENT_H_
