// SPDX-License-Identifier: GPL-2.0-or-later
// Negative control "early_return": the early return of tmigr_update_events()
// for an ignored level-0 event taken even at the top of a single-level
// hierarchy (the bug 4b6f4c5a67c0 removed; 7a96a84bfbee restored the return
// with the single-level rule): the last CPU going idle without a timer of its
// own gets KTIME_MAX instead of the other CPUs' first expiry, and nobody wakes
// for it (spec S15, I5).

#include "tmigr/builtins.h"
#include "tmigr/hierarchy_impl.h"

namespace isolation::tmigr {

struct EarlyReturnQuirks : MainlineQuirks {
  static constexpr bool kEarlyReturn = true;
};
template class HierarchyImpl<EarlyReturnQuirks>;

std::unique_ptr<TimerMigration> MakeEarlyReturnHierarchy(HierarchyArgs args) {
  return MakeHierarchy<EarlyReturnQuirks>(std::move(args));
}

// Registry entry (variants.cc registers it).
HierarchyEntry EarlyReturnHierarchyEntry() {
  HierarchyEntry e{"early_return",
                   "negative control: ignored level-0 event returns early even at the top, the bug "
                   "4b6f4c5a67c0 removed (S15, I5)",
                   /*negative_control=*/true,
                   [](HierarchyArgs a) { return MakeEarlyReturnHierarchy(std::move(a)); }};
  return e;
}

}  // namespace isolation::tmigr
