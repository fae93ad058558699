// SPDX-License-Identifier: GPL-2.0-or-later
// Internal to lib/tmigr: the factories of the built-in variants, one per
// file, registered by the registries of variants.cc on first use (no static
// initialisation order to rely on, nothing for the linker to drop).

#ifndef ISOLATION_LIB_TMIGR_BUILTINS_H_
#define ISOLATION_LIB_TMIGR_BUILTINS_H_

#include <memory>

#include "isolation/tmigr/tmigr.h"
#include "isolation/tmigr/variants.h"

namespace isolation::tmigr {

// participation_*.cc
std::unique_ptr<Participation> MakeV69Participation();
std::unique_ptr<Participation> MakeIsolationParticipation();
std::unique_ptr<Participation> MakeIsolationV15Participation();
std::unique_ptr<Participation> MakeIsolationNoCpusetTermParticipation();

// hierarchy_mainline.cc, control_*.cc
std::unique_ptr<TimerMigration> MakeMainlineHierarchy(HierarchyArgs args);
std::unique_ptr<TimerMigration> MakeGhostTimerHierarchy(HierarchyArgs args);
std::unique_ptr<TimerMigration> MakeNoCpuRefreshHierarchy(HierarchyArgs args);
std::unique_ptr<TimerMigration> MakeEarlyReturnHierarchy(HierarchyArgs args);
std::unique_ptr<TimerMigration> MakeQuickCheckTopOnlyHierarchy(HierarchyArgs args);
std::unique_ptr<TimerMigration> MakeNoSeqIncrementHierarchy(HierarchyArgs args);
std::unique_ptr<TimerMigration> MakeLocklessUpdateReadsHierarchy(HierarchyArgs args);
std::unique_ptr<TimerMigration> MakeKernelR4Hierarchy(HierarchyArgs args);

// The registry entries, one per built-in, each defined in its variant's
// file; variants.cc registers them in this order.
ParticipationEntry V69ParticipationEntry();  // participation_v69.cc
ParticipationEntry IsolationParticipationEntry();  // participation_isolation.cc
ParticipationEntry IsolationV15ParticipationEntry();  // participation_isolation_v15.cc
ParticipationEntry IsolationNoCpusetTermParticipationEntry();  // participation_isolation_no_cpuset_term.cc
HierarchyEntry MainlineHierarchyEntry();  // hierarchy_mainline.cc
HierarchyEntry GhostTimerHierarchyEntry();  // control_ghost_timer.cc
HierarchyEntry NoCpuRefreshHierarchyEntry();  // control_no_cpu_refresh.cc
HierarchyEntry EarlyReturnHierarchyEntry();  // control_early_return.cc
HierarchyEntry QuickCheckTopOnlyHierarchyEntry();  // control_quick_check_top_only.cc
HierarchyEntry NoSeqIncrementHierarchyEntry();  // control_no_seq_increment.cc
HierarchyEntry LocklessUpdateReadsHierarchyEntry();  // control_lockless_update_reads.cc
HierarchyEntry KernelR4HierarchyEntry();  // control_kernel_r4.cc

}  // namespace isolation::tmigr

#endif  // ISOLATION_LIB_TMIGR_BUILTINS_H_
