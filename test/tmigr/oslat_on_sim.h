// SPDX-License-Identifier: GPL-2.0-or-later
// What the tmigr test files share: the oslat workload (tmigr/workload.h) on
// a fresh zero-cost simulator of a machine.

#ifndef ISOLATION_TEST_TMIGR_OSLAT_ON_SIM_H_
#define ISOLATION_TEST_TMIGR_OSLAT_ON_SIM_H_

#include "absl/status/statusor.h"
#include "isolation/core/isolation_config.h"
#include "isolation/core/topology.h"
#include "isolation/runtime/sim.h"
#include "isolation/tmigr/workload.h"

namespace isolation::tmigr::test {

inline absl::StatusOr<OslatWorkloadResult> RunOslatOnFreshSim(const Topology& topology,
                                                              const IsolationConfig& isolation,
                                                              const Options& options,
                                                              const OslatWorkloadConfig& cfg) {
  auto sim = Simulator::Create(topology, isolation,
                               ZeroCostSimOptions(static_cast<int>(kNsPerSec / kNsPerMs)));
  if (!sim.ok()) return sim.status();
  return RunOslatWorkload(**sim, options, cfg);
}

}  // namespace isolation::tmigr::test

#endif  // ISOLATION_TEST_TMIGR_OSLAT_ON_SIM_H_
