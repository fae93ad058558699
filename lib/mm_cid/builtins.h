// SPDX-License-Identifier: GPL-2.0-or-later
// builtins.h (mm_cid module, not installed): the registry entry of each
// built-in design and strategy, each defined in its own file next to its
// code (description and negative-control flag included).  registry.cc
// registers them, in this order, at each registry's first use; referencing
// them from there is also what links every built-in out of a static
// library.

#ifndef ISOLATION_LIB_MM_CID_BUILTINS_H_
#define ISOLATION_LIB_MM_CID_BUILTINS_H_

#include "isolation/mm_cid/registry.h"

namespace isolation::mm_cid::internal {

// Designs.
DesignEntry LazyDesignEntry();                 // lazy.cc
DesignEntry Owner619DesignEntry();             // owner619.cc
DesignEntry V63MmLockDesignEntry();            // v63_mmlock.cc
DesignEntry LazyNoDekkerFencesDesignEntry();   // lazy_no_dekker_fences.cc (negative control)
DesignEntry Owner619DirectDesignEntry();       // owner619_direct.cc (negative control)
DesignEntry Owner619Walk619DesignEntry();      // owner619_walk619.cc (negative control)
DesignEntry Owner619SplitModeDesignEntry();    // owner619_split_mode.cc (negative control)

// The lazy design's axes (strategies.h).
AllocatorEntry AllocV6_4Entry();     // alloc_v6_4.cc
AllocatorEntry AllocV6_13Entry();    // alloc_v6_13.cc
AllocatorEntry AllocV6_14Entry();    // alloc_v6_14.cc
ScopeEntry ScanPossibleEntry();      // scan_possible.cc
ScopeEntry ScanAllowedEntry();       // scan_allowed.cc
ScopeEntry ScanCidmaskEntry();       // scan_cidmask.cc (negative control)
GranularityEntry BatchFullEntry();   // batch_full.cc
GranularityEntry BatchNEntry();      // batch_n.cc
PlacementEntry WorkTaskWorkEntry();  // work_taskwork.cc
PlacementEntry WorkDelayedEntry();   // work_delayed.cc
PlacementEntry WorkUnboundEntry();   // work_unbound.cc
PlacementEntry WorkRcuEntry();       // work_rcu.cc
PlacementEntry WorkResumeEntry();    // work_resume.cc
TickPolicyEntry NoTickKickEntry();   // no_tick_kick.cc
TickPolicyEntry TickKickEntry();     // tick_kick.cc

}  // namespace isolation::mm_cid::internal

#endif  // ISOLATION_LIB_MM_CID_BUILTINS_H_
