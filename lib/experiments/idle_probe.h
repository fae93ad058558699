// SPDX-License-Identifier: GPL-2.0-or-later
// The directed probe behind `isolab idle --idle_variants=<control>`: the
// select sweep keeps its idle hints fresh, so a selector that trusts a stale
// hint (the negative control V1-trusting) looks like its honest sibling
// there.  The probe makes the hint stale on purpose -- CPUs first in scan
// order go busy after their idle bit was published, before any tick clears
// it -- and asserts I4 at every selection: a CPU returned as idle is idle
// now (available_idle_cpu() or sched_idle_cpu()).  It runs for every
// variant asked for; a correct scan-style selector passes it.
//
// Internal to the experiments; kernel counterpart: select_idle_cpu() /
// __select_idle_cpu() in kernel/sched/fair.c.

#ifndef ISOLATION_LIB_EXPERIMENTS_IDLE_PROBE_H_
#define ISOLATION_LIB_EXPERIMENTS_IDLE_PROBE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace isolation::experiments {

struct StaleHintProbe {
  bool applicable = false;  // false: a claim-style selector (I4 is about scan style)
  int64_t selections = 0;
  std::vector<std::string> violations;  // at most 10 kept
  int64_t violation_count = 0;
};

// `selector` (a registered name) on one LLC of `llc_cpus` CPUs.  Errors: the
// selector's creation error.
absl::StatusOr<StaleHintProbe> ProbeStaleIdleHint(std::string_view selector, int llc_cpus);

}  // namespace isolation::experiments

#endif  // ISOLATION_LIB_EXPERIMENTS_IDLE_PROBE_H_
