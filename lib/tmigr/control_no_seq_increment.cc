// SPDX-License-Identifier: GPL-2.0-or-later
// Negative control "no_seq_increment": the group state word changed without its
// seq increment, so a deactivation's CAS succeeds over a concurrent activation
// that left the active bits unchanged, and the parent loses an active child
// (race R1 of the design comment, spec S12, I3).

#include "tmigr/builtins.h"
#include "tmigr/hierarchy_impl.h"

namespace isolation::tmigr {

struct NoSeqIncrementQuirks : MainlineQuirks {
  static constexpr bool kNoSeqIncrement = true;
};
template class HierarchyImpl<NoSeqIncrementQuirks>;

std::unique_ptr<TimerMigration> MakeNoSeqIncrementHierarchy(HierarchyArgs args) {
  return MakeHierarchy<NoSeqIncrementQuirks>(std::move(args));
}

// Registry entry (variants.cc registers it).
HierarchyEntry NoSeqIncrementHierarchyEntry() {
  HierarchyEntry e{"no_seq_increment",
                   "negative control: state CAS without seq++, race R1 unprotected (S12)",
                   /*negative_control=*/true,
                   [](HierarchyArgs a) { return MakeNoSeqIncrementHierarchy(std::move(a)); }};
  return e;
}

}  // namespace isolation::tmigr
