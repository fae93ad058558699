// SPDX-License-Identifier: GPL-2.0-or-later
// vmstat_experiment.h (internal): `isolab vmstat`, deferred vmstat folding on
// isolated CPUs (interruptions, residue and syscall cost per strategy), as a
// function.  What it runs: vmstat_experiment.cc.  The option defaults are
// isolab's flag defaults; each option names its flag.  Thread safety: see
// experiment.h.

#ifndef ISOLATION_LIB_EXPERIMENTS_VMSTAT_EXPERIMENT_H_
#define ISOLATION_LIB_EXPERIMENTS_VMSTAT_EXPERIMENT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "experiments/experiment.h"
#include "experiments/registered.h"
#include "isolation/core/isolation_config.h"
#include "isolation/core/topology.h"
#include "isolation/vmstat/vmstat.h"

namespace isolation::experiments {

struct VmstatExperimentOptions {
  // --vmstat_strategies: registered fold policies, e.g. A0, A1, B, C, D (D
  // is the library's own idea).  Default: A0 A1 B C, then every policy
  // registered outside the library (not a negative control; registered.h).
  std::vector<std::string> strategies = DefaultVmstatStrategies();
  int32_t syscalls = 2000;  // --vmstat_syscalls: simulated mlock/munlock-like syscalls per isolated
                            // CPU, 0..10000000
  int32_t spin_ms =
      3000;  // --vmstat_spin_ms: simulated user-mode spin after the RT start-up, 1..3600000
  int32_t stat_interval_ms = 1000;  // --vmstat_stat_interval_ms: sysctl_stat_interval P, 1..60000
  int32_t host_iterations =
      60000;  // --vmstat_host_iterations: host mlock+munlock iterations per strategy, 0..100000000
  bool real_syscall =
      true;  // --vmstat_real_syscall: a real mlock/munlock pair per iteration (else getppid)
};

// With common.nohz_full empty, nohz_full= is put on the isolated CPUs (the
// seeds' setup).  Errors: InvalidArgument naming the option as its flag
// (--vmstat_spin_ms=0); the model machine's errors.
// What RunVmstatExperiment(common, options) is expected to cost (experiment.h:
// RunCost).  Errors: the machine's (LoadTopology, LoadIsolation).
// The modelled machine's counters (a DMA32 zone and one Normal zone per
// node, their watermarks), fold policy `policy` (registered), shepherd
// period `period`, and the isolation's isolated and nohz_full CPUs: the
// vmstat configuration of the experiment's simulated runs and of `isolab
// run`'s vmstat rows.
vmstat::VmstatConfig VmstatModelConfig(const std::string& policy, const Topology& topology,
                                       const IsolationConfig& isolation, Nanos period);

absl::StatusOr<RunCost> EstimateVmstatExperiment(const CommonOptions& common,
                                                 const VmstatExperimentOptions& options);
absl::StatusOr<ExperimentReport> RunVmstatExperiment(const CommonOptions& common,
                                                     const VmstatExperimentOptions& options,
                                                     Progress& progress);

}  // namespace isolation::experiments

#endif  // ISOLATION_LIB_EXPERIMENTS_VMSTAT_EXPERIMENT_H_
