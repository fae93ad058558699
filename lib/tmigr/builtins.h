// SPDX-License-Identifier: GPL-2.0-or-later
// Internal to lib/tmigr: the lists of the built-in variants, one per file,
// registered by the registries of variants.cc on first use (no static
// initialisation order to rely on, nothing for the linker to drop).

#ifndef ISOLATION_LIB_TMIGR_BUILTINS_H_
#define ISOLATION_LIB_TMIGR_BUILTINS_H_

#include <memory>

#include "isolation/tmigr/tmigr.h"
#include "isolation/tmigr/variants.h"

namespace isolation::tmigr {

// The built-in variants of each registry in registration order, one line
// each: X(<entry function>), defined in the variant's file (description,
// negative-control flag, default row).  A new built-in is its file plus one
// line here.
#define ISOLATION_TMIGR_PARTICIPATIONS(X)                                                  \
  X(V69ParticipationEntry)                   /* participation_v69.cc */                    \
  X(IsolationParticipationEntry)             /* participation_isolation.cc */              \
  X(IsolationV15ParticipationEntry)          /* participation_isolation_v15.cc */          \
  X(IsolationV70ParticipationEntry)          /* participation_isolation_v70.cc */          \
  X(IsolationNoCpusetTermParticipationEntry) /* participation_isolation_no_cpuset_term.cc, \
                                                negative control */

#define ISOLATION_TMIGR_HIERARCHIES(X)                                                          \
  X(MainlineHierarchyEntry)            /* hierarchy_mainline.cc */                              \
  X(GhostTimerHierarchyEntry)          /* control_ghost_timer.cc, negative control */           \
  X(NoCpuRefreshHierarchyEntry)        /* control_no_cpu_refresh.cc, negative control */        \
  X(EarlyReturnHierarchyEntry)         /* control_early_return.cc, negative control */          \
  X(QuickCheckTopOnlyHierarchyEntry)   /* control_quick_check_top_only.cc, negative control */  \
  X(NoSeqIncrementHierarchyEntry)      /* control_no_seq_increment.cc, negative control */      \
  X(LocklessUpdateReadsHierarchyEntry) /* control_lockless_update_reads.cc, negative control */ \
  X(KernelR4HierarchyEntry)            /* control_kernel_r4.cc, negative control */

#define ISOLATION_TMIGR_DECLARE_PARTICIPATION_(entry) ParticipationEntry entry();
#define ISOLATION_TMIGR_DECLARE_HIERARCHY_(entry) HierarchyEntry entry();
ISOLATION_TMIGR_PARTICIPATIONS(ISOLATION_TMIGR_DECLARE_PARTICIPATION_)
ISOLATION_TMIGR_HIERARCHIES(ISOLATION_TMIGR_DECLARE_HIERARCHY_)
#undef ISOLATION_TMIGR_DECLARE_PARTICIPATION_
#undef ISOLATION_TMIGR_DECLARE_HIERARCHY_

}  // namespace isolation::tmigr

#endif  // ISOLATION_LIB_TMIGR_BUILTINS_H_
