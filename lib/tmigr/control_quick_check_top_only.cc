// SPDX-License-Identifier: GPL-2.0-or-later
// Negative control "quick_check_top_only": before 8ca1836769d7,
// tmigr_quick_check() returned the top level's next expiry only, missing an
// earlier event of a lower level that is not propagated while the CPU is active
// (spec S14).

#include "tmigr/builtins.h"
#include "tmigr/hierarchy_impl.h"

namespace isolation::tmigr {

struct QuickCheckTopOnlyQuirks : MainlineQuirks {
  static constexpr bool kQuickCheckTopOnly = true;
};
template class HierarchyImpl<QuickCheckTopOnlyQuirks>;

std::unique_ptr<TimerMigration> MakeQuickCheckTopOnlyHierarchy(HierarchyArgs args) {
  return MakeHierarchy<QuickCheckTopOnlyQuirks>(std::move(args));
}

// Registry entry (variants.cc registers it).
HierarchyEntry QuickCheckTopOnlyHierarchyEntry() {
  HierarchyEntry e{
      "quick_check_top_only",
      "negative control: quick check reads the top level only, before 8ca1836769d7 (S14)",
      /*negative_control=*/true,
      [](HierarchyArgs a) { return MakeQuickCheckTopOnlyHierarchy(std::move(a)); }};
  return e;
}

}  // namespace isolation::tmigr
