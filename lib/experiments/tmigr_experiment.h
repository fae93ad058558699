// SPDX-License-Identifier: GPL-2.0-or-later
// tmigr_experiment.h (internal): `isolab tmigr`, who runs housekeeping timers
// on the oslat seed machine (v6.9 vs isolation-aware timer migration), as a
// function.  What it runs: tmigr_experiment.cc.  The option defaults are
// isolab's flag defaults; each option names its flag.  Thread safety: see
// experiment.h.

#ifndef ISOLATION_LIB_EXPERIMENTS_TMIGR_EXPERIMENT_H_
#define ISOLATION_LIB_EXPERIMENTS_TMIGR_EXPERIMENT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "experiments/experiment.h"
#include "experiments/registered.h"

namespace isolation::experiments {

struct TmigrExperimentOptions {
  int64_t duration_ms = 62000;  // --tmigr_duration_ms: S24 span, 1..3600000 (quick: <= 2000)
  // --tmigr_variants: registered participations.  Default: v6.9 isolation,
  // then every participation registered outside the library (not a
  // negative control; registered.h).
  std::vector<std::string> variants = DefaultTmigrVariants();
  // --tmigr_hk_period_us: housekeeping burst period, 101..1000000; 1000 is
  // spec S24 literally (then no timer is ever handed over at HZ=1000).
  int64_t hk_period_us = 10000;
  int64_t callback_cost_us =
      20;  // --tmigr_callback_cost_us: modelled cost of one timer callback, 0..100000
  int64_t real_ms =
      400;  // --tmigr_real_ms: real-thread run per variant, 0 (off)..600000 (quick: <= 150)
  // --tmigr_bugs: negative controls of the modelled run, re-creating fixed
  // bugs: ghost_timer, no_cpu_refresh, early_return, quick_check_top_only.
  // A run that catches one reports invariant violations.
  std::vector<std::string> bugs;
};

// Errors: InvalidArgument naming the option as its flag
// (--tmigr_real_ms=-1, --tmigr_bugs: unknown bug 'frob'); the model
// machine's errors; common.hist's (--bucket_size=0).
// What RunTmigrExperiment(common, options) is expected to cost (experiment.h:
// RunCost).  Errors: the machine's (LoadTopology).
absl::StatusOr<RunCost> EstimateTmigrExperiment(const CommonOptions& common,
                                                const TmigrExperimentOptions& options);
absl::StatusOr<ExperimentReport> RunTmigrExperiment(const CommonOptions& common,
                                                    const TmigrExperimentOptions& options,
                                                    Progress& progress);

}  // namespace isolation::experiments

#endif  // ISOLATION_LIB_EXPERIMENTS_TMIGR_EXPERIMENT_H_
