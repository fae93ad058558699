// SPDX-License-Identifier: GPL-2.0-or-later
// Negative control "kernel_r4": the kernel's tmigr_inactive_up() exactly as
// released (v6.19), without our fix for race R4 (docs/tmigr.md, S28).  A CPU
// whose state CAS left its group active, but whose event reaches the group
// only after the group's last child idled and propagated upward, stops its
// walk there: its global timer is covered by nobody until some other walk
// passes through the group (lost for good when that never happens).

#include "tmigr/builtins.h"
#include "tmigr/hierarchy_impl.h"

namespace isolation::tmigr {

struct KernelR4Quirks : MainlineQuirks {
  static constexpr bool kKernelR4 = true;
};
template class HierarchyImpl<KernelR4Quirks>;

std::unique_ptr<TimerMigration> MakeKernelR4Hierarchy(HierarchyArgs args) {
  return MakeHierarchy<KernelR4Quirks>(std::move(args));
}

// Registry entry (variants.cc registers it).
HierarchyEntry KernelR4HierarchyEntry() {
  HierarchyEntry e{
      "kernel_r4",
      "negative control: tmigr_inactive_up() exactly as in v6.19, race R4 unprotected: a "
      "non-last idler's late event is not carried upward (S28)",
      /*negative_control=*/true,
      [](HierarchyArgs a) { return MakeKernelR4Hierarchy(std::move(a)); }};
  return e;
}

}  // namespace isolation::tmigr
