// SPDX-License-Identifier: GPL-2.0-or-later
// Negative control "ghost_timer": the ghost timer fixed by f55acb1e44f3
// ("timers/migration: Fix ghost timer"): an idle CPU overtaken as migrator
// returns from tmigr_handle_remote() early and keeps its stale wake-up, so it
// re-arms for an expiry that another CPU already handled, forever (spec S11).

#include "tmigr/builtins.h"
#include "tmigr/hierarchy_impl.h"

namespace isolation::tmigr {

struct GhostTimerQuirks : MainlineQuirks {
  static constexpr bool kGhostTimer = true;
};
template class HierarchyImpl<GhostTimerQuirks>;

std::unique_ptr<TimerMigration> MakeGhostTimerHierarchy(HierarchyArgs args) {
  return MakeHierarchy<GhostTimerQuirks>(std::move(args));
}

// Registry entry (variants.cc registers it).
HierarchyEntry GhostTimerHierarchyEntry() {
  HierarchyEntry e{"ghost_timer", "negative control: the ghost timer fixed by f55acb1e44f3 (S11)",
                   /*negative_control=*/true,
                   [](HierarchyArgs a) { return MakeGhostTimerHierarchy(std::move(a)); }};
  return e;
}

}  // namespace isolation::tmigr
