// SPDX-License-Identifier: GPL-2.0-or-later
// The "mainline" hierarchy: the pull model of kernel/time/timer_migration.c
// as released (v6.9 with its -rc fixes and the later fixes listed in
// tmigr.h), every quirk of hierarchy_impl.h off.

#include "tmigr/builtins.h"
#include "tmigr/hierarchy_impl.h"

namespace isolation::tmigr {

template class HierarchyImpl<MainlineQuirks>;

std::unique_ptr<TimerMigration> MakeMainlineHierarchy(HierarchyArgs args) {
  return MakeHierarchy<MainlineQuirks>(std::move(args));
}

// Registry entry (variants.cc registers it).
HierarchyEntry MainlineHierarchyEntry() {
  HierarchyEntry e{"mainline",
                   "the pull model as released: v6.9 with its -rc fixes and the later fixes "
                   "(setup as in 2519003dd5fb), plus our fix of race R4 (S28)",
                   /*negative_control=*/false,
                   [](HierarchyArgs a) { return MakeMainlineHierarchy(std::move(a)); }};
  return e;
}

}  // namespace isolation::tmigr
