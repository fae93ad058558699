// SPDX-License-Identifier: GPL-2.0-or-later
// Negative control "lockless_update_reads": tmigr_update_events() reads the
// child and group states before taking the locks, so the last CPU going idle
// and an idle CPU queuing a new first timer can both miss each other and nobody
// wakes for the timer (race R2 of the design comment, spec S13).

#include "tmigr/builtins.h"
#include "tmigr/hierarchy_impl.h"

namespace isolation::tmigr {

struct LocklessUpdateReadsQuirks : MainlineQuirks {
  static constexpr bool kLocklessUpdateReads = true;
};
template class HierarchyImpl<LocklessUpdateReadsQuirks>;

std::unique_ptr<TimerMigration> MakeLocklessUpdateReadsHierarchy(HierarchyArgs args) {
  return MakeHierarchy<LocklessUpdateReadsQuirks>(std::move(args));
}

// Registry entry (variants.cc registers it).
HierarchyEntry LocklessUpdateReadsHierarchyEntry() {
  HierarchyEntry e{"lockless_update_reads",
                   "negative control: event update reads the states before the locks, race R2 "
                   "unprotected (S13)",
                   /*negative_control=*/true,
                   [](HierarchyArgs a) { return MakeLocklessUpdateReadsHierarchy(std::move(a)); }};
  return e;
}

}  // namespace isolation::tmigr
