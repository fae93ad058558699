// SPDX-License-Identifier: GPL-2.0-or-later
// builtins.h (mm_cid module, not installed): the lists of the built-in
// designs and strategies, each entry defined in its own file next to its
// code.  registry.cc registers them, in this order, at each registry's first
// use; referencing them from there is also what links every built-in out of
// a static library.

#ifndef ISOLATION_LIB_MM_CID_BUILTINS_H_
#define ISOLATION_LIB_MM_CID_BUILTINS_H_

#include "isolation/mm_cid/registry.h"

namespace isolation::mm_cid::internal {

// The built-ins of each registry in registration order (the order of every
// list), one line each: X(<entry function>), defined in the variant's file
// (description, negative-control flag, label, aliases, default row).  A new
// built-in is its file (designs/, strategies/ or controls/, which
// CMakeLists.txt globs) plus one line here.
#define ISOLATION_MM_CID_DESIGNS(X)                                                          \
  X(LazyDesignEntry)               /* designs/lazy.cc */                                     \
  X(Owner619DesignEntry)           /* designs/owner619.cc */                                 \
  X(V63MmLockDesignEntry)          /* designs/v63_mmlock.cc */                               \
  X(LazyNoDekkerFencesDesignEntry) /* controls/lazy_no_dekker_fences.cc, negative control */ \
  X(Owner619DirectDesignEntry)     /* controls/owner619_direct.cc, negative control */       \
  X(Owner619Walk619DesignEntry)    /* controls/owner619_walk619.cc, negative control */      \
  X(Owner619SplitModeDesignEntry)  /* controls/owner619_split_mode.cc, negative control */

#define ISOLATION_MM_CID_ALLOCATORS(X)               \
  X(AllocV6_4Entry)  /* strategies/alloc_v6_4.cc */  \
  X(AllocV6_13Entry) /* strategies/alloc_v6_13.cc */ \
  X(AllocV6_14Entry) /* strategies/alloc_v6_14.cc */

#define ISOLATION_MM_CID_SCOPES(X)                       \
  X(ScanPossibleEntry) /* strategies/scan_possible.cc */ \
  X(ScanAllowedEntry)  /* strategies/scan_allowed.cc */  \
  X(ScanCidmaskEntry)  /* controls/scan_cidmask.cc, negative control */

#define ISOLATION_MM_CID_GRANULARITIES(X)          \
  X(BatchFullEntry) /* strategies/batch_full.cc */ \
  X(BatchNEntry)    /* strategies/batch_n.cc */

#define ISOLATION_MM_CID_PLACEMENTS(X)                   \
  X(WorkTaskWorkEntry) /* strategies/work_taskwork.cc */ \
  X(WorkDelayedEntry)  /* strategies/work_delayed.cc */  \
  X(DelayedV1Entry)    /* controls/work_delayed_v1.cc */ \
  X(WorkUnboundEntry)  /* strategies/work_unbound.cc */  \
  X(WorkRcuEntry)      /* strategies/work_rcu.cc */      \
  X(WorkResumeEntry)   /* strategies/work_resume.cc */

#define ISOLATION_MM_CID_TICK_POLICIES(X)             \
  X(NoTickKickEntry) /* strategies/no_tick_kick.cc */ \
  X(TickKickEntry)   /* strategies/tick_kick.cc */

#define ISOLATION_MM_CID_DECLARE_(entry) DesignEntry entry();
ISOLATION_MM_CID_DESIGNS(ISOLATION_MM_CID_DECLARE_)
#undef ISOLATION_MM_CID_DECLARE_
#define ISOLATION_MM_CID_DECLARE_(entry) AllocatorEntry entry();
ISOLATION_MM_CID_ALLOCATORS(ISOLATION_MM_CID_DECLARE_)
#undef ISOLATION_MM_CID_DECLARE_
#define ISOLATION_MM_CID_DECLARE_(entry) ScopeEntry entry();
ISOLATION_MM_CID_SCOPES(ISOLATION_MM_CID_DECLARE_)
#undef ISOLATION_MM_CID_DECLARE_
#define ISOLATION_MM_CID_DECLARE_(entry) GranularityEntry entry();
ISOLATION_MM_CID_GRANULARITIES(ISOLATION_MM_CID_DECLARE_)
#undef ISOLATION_MM_CID_DECLARE_
#define ISOLATION_MM_CID_DECLARE_(entry) PlacementEntry entry();
ISOLATION_MM_CID_PLACEMENTS(ISOLATION_MM_CID_DECLARE_)
#undef ISOLATION_MM_CID_DECLARE_
#define ISOLATION_MM_CID_DECLARE_(entry) TickPolicyEntry entry();
ISOLATION_MM_CID_TICK_POLICIES(ISOLATION_MM_CID_DECLARE_)
#undef ISOLATION_MM_CID_DECLARE_

}  // namespace isolation::mm_cid::internal

#endif  // ISOLATION_LIB_MM_CID_BUILTINS_H_
