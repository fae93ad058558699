// SPDX-License-Identifier: GPL-2.0-or-later
// The directed probes behind `isolab tmigr --tmigr_bugs`: each bug switch
// re-creates a fixed kernel bug that a workload rarely reaches (the oslat
// seed of S24 never lets two CPUs' global timers share an expiry, never
// leaves a single-level hierarchy...).  A probe drives the hierarchy of the
// run's machine -- its CPUs, nodes and isolation, the participation under
// test -- through the one sequence of entry points that shows the bug (the
// kit's S10, S11, S14 and S15 scenarios, placed on CPUs of this machine that
// the participation keeps available), and says which CPUs it used.  Where no
// placement on this machine can show the bug, it says why instead, and isolab
// refuses the run (exit 2) rather than report a clean one.
//
// Internal to the experiments; kernel counterpart: kernel/time/timer_migration.c.

#ifndef ISOLATION_LIB_EXPERIMENTS_TMIGR_BUG_PROBE_H_
#define ISOLATION_LIB_EXPERIMENTS_TMIGR_BUG_PROBE_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "isolation/core/isolation_config.h"
#include "isolation/core/topology.h"

namespace isolation::experiments {

struct TmigrBugProbe {
  std::string bug;            // the hierarchy's registry name ("ghost_timer")
  std::string participation;  // registry spelling
  std::string scenario;       // spec label and the fix ("S11 ghost timer (f55acb1e44f3)")
  // false: no placement on this machine shows the bug; `reason` says why and
  // which machine would.
  bool applicable = false;
  std::string reason;
  std::string placement;                         // the CPUs used ("cpu 0 idles last, cpu 1 ...")
  std::vector<std::string> violations;           // of the bug's hierarchy (empty: not caught)
  std::vector<std::string> mainline_violations;  // the same sequence on "mainline" (must be empty)
};

// The names the probes know: the hierarchy negative controls whose bug a
// deterministic event sequence shows (the race controls need forced
// interleavings: tmigr_test).
const std::vector<std::string>& TmigrProbedBugs();

// Runs `bug`'s probe on a hierarchy of `topology` with `participation`
// and `isolation` applied (SetIsolation + InitIsolation), every CPU brought
// up.  Errors: an unknown bug or participation; the hierarchy's own errors.
absl::StatusOr<TmigrBugProbe> ProbeTmigrBug(std::string_view bug, std::string_view participation,
                                            const Topology& topology,
                                            const IsolationConfig& isolation);

}  // namespace isolation::experiments

#endif  // ISOLATION_LIB_EXPERIMENTS_TMIGR_BUG_PROBE_H_
