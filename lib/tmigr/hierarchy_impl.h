// SPDX-License-Identifier: GPL-2.0-or-later
// Internal to lib/tmigr: the walks and per-CPU entry points of the
// timer-migration hierarchy (kernel/time/timer_migration.c), as a class
// template over a set of compile-time quirks.  "mainline" is
// HierarchyImpl<MainlineQuirks>, in which every quirk is false, so its code
// holds no branch on a variant; each negative control (control_*.cc) turns
// one quirk on to re-create a fixed bug.  Each .cc instantiates its own type;
// the instantiations share HierarchyBase (hierarchy.h).  Not installed.

#ifndef ISOLATION_LIB_TMIGR_HIERARCHY_IMPL_H_
#define ISOLATION_LIB_TMIGR_HIERARCHY_IMPL_H_

#include <algorithm>
#include <atomic>
#include <bit>
#include <memory>
#include <utility>

#include "isolation/core/fence.h"
#include "isolation/core/interleave.h"
#include "tmigr/hierarchy.h"

namespace isolation::tmigr {

// Every quirk off: the released code with its fixes.  A negative control
// derives and sets one to true.
struct MainlineQuirks {
  static constexpr bool kGhostTimer = false;    // f55acb1e44f3 undone
  static constexpr bool kNoCpuRefresh = false;  // 61f7fdf8fd00 undone
  static constexpr bool kEarlyReturn =
      false;  // 7a96a84bfbee's single-level rule undone (4b6f4c5a67c0's bug)
  static constexpr bool kQuickCheckTopOnly = false;    // 8ca1836769d7 undone
  static constexpr bool kNoSeqIncrement = false;       // race R1 unprotected
  static constexpr bool kLocklessUpdateReads = false;  // race R2 unprotected
  // Race R4 (docs/tmigr.md, S28): the kernel as released (checked against
  // v6.19's timer_migration.c) lets a CPU that is not the last to idle in
  // its group queue its event after the last one already propagated the
  // group upward; nobody carries the event further.  Mainline here carries
  // it (see InactiveUp); the kernel_r4 control is the kernel's code exactly.
  static constexpr bool kKernelR4 = false;
};

namespace hierarchy_internal {

// Interleave point names per level (the Interleaver stops at the first point
// of a given name, so races at level 1 need their own names).
#define TMIGR_LEVEL_POINTS(prefix)                                                      \
  {                                                                                     \
    prefix ".l0", prefix ".l1", prefix ".l2", prefix ".l3", prefix ".l4", prefix ".l5", \
        prefix ".l6", prefix ".l7"                                                      \
  }
inline constexpr const char* kInactiveBeforeCas[] =
    TMIGR_LEVEL_POINTS("tmigr.inactive_up.before_cas");
inline constexpr const char* kInactiveAfterCas[] =
    TMIGR_LEVEL_POINTS("tmigr.inactive_up.after_cas");
inline constexpr const char* kActiveAfterCas[] = TMIGR_LEVEL_POINTS("tmigr.active_up.after_cas");
inline constexpr const char* kUpdateEnter[] = TMIGR_LEVEL_POINTS("tmigr.update_events.enter");
// After the states are read in the "lockless_update_reads" control, before
// the locks in every variant: where race R2 needs the other walk to run.
inline constexpr const char* kUpdateBeforeLock[] =
    TMIGR_LEVEL_POINTS("tmigr.update_events.before_lock");
#undef TMIGR_LEVEL_POINTS
inline const char* PointAt(const char* const* names, int level) {
  return names[std::min(level, 7)];
}

// smp_mb__after_atomic(): a full fence (core/fence.h).
inline void FullFence() { SeqCstFence(); }

}  // namespace hierarchy_internal

template <typename Q>
class HierarchyImpl final : public HierarchyBase {
 public:
  explicit HierarchyImpl(HierarchyArgs args) : HierarchyBase(std::move(args)) {}

  void Activate(int cpu) override;
  Nanos Deactivate(int cpu, Nanos next_global) override;
  Nanos NewTimer(int cpu, Nanos next_global) override;
  Nanos QuickCheck(int cpu, Nanos next_global) override;
  bool RequiresHandleRemote(int cpu, Nanos now) override;
  void HandleRemote(int cpu, Nanos now) override;

 protected:
  void ActivateLocked(CpuState& tmc) override;
  Nanos DeactivateLocked(CpuState& tmc, Nanos next_global) override;
  void PropagateActivation(Group* parent, uint8_t childmask) override;

 private:
  struct Walk {
    Nanos nextexp = kNanosMax;
    Nanos firstexp = kNanosMax;
    Event* evt = nullptr;
    uint8_t childmask = 0;
    bool remote = false;
    Nanos now = 0;
    bool check = false;
    int runner = -1;
    int cpu = -1;  // the CPU whose (de)activation walks (trace events only)
    // Set by UpdateEvents: it queued a live event into a group it found
    // inactive under the group's lock (what race R4 needs to know).
    bool queued_into_idle_group = false;
  };

  template <typename StepFn>
  void WalkGroupsFrom(Group* group, Walk& data, StepFn&& step);
  template <typename StepFn>
  void WalkGroups(CpuState& tmc, Walk& data, StepFn&& step) {
    data.childmask = tmc.groupmask;
    WalkGroupsFrom(tmc.tmgroup, data, std::forward<StepFn>(step));
  }

  bool ActiveUp(Group* group, Walk& data);
  bool InactiveUp(Group* group, Group* child, Walk& data);
  bool UpdateEvents(Group* group, Group* child, Walk& data);
  void PropagateFrom(Group* group, Walk& data);
  bool RequiresHandleRemoteUp(Group* group, Walk& data);
  bool HandleRemoteUp(Group* group, Walk& data);
  void HandleRemoteCpu(int cpu, int runner, Nanos now);
  Event* NextGroupEvent(Group* group);
  Event* NextExpiredGroupEvent(Group* group, Nanos now);
  static bool CheckMigrator(const Group* group, uint8_t childmask) {
    const GroupState s = GroupState::Unpack(group->migr_state.load(std::memory_order_relaxed));
    return s.migrator == childmask || s.migrator == kMigratorNone;
  }
  static void BumpSeq(GroupState& s) {
    if constexpr (!Q::kNoSeqIncrement) s.seq++;
  }
};

// ---------------------------------------------------------------------------
// Walking (__walk_groups_from / walk_groups)
// ---------------------------------------------------------------------------
template <typename Q>
template <typename StepFn>
void HierarchyImpl<Q>::WalkGroupsFrom(Group* group, Walk& data, StepFn&& step) {
  Group* child = nullptr;
  do {
    if (step(group, child, data)) break;
    child = group;
    // Pairs with the release store in ConnectChildParent().
    group = group->parent.load(std::memory_order_acquire);
    data.childmask = child->groupmask;
    if (data.childmask == 0) Warn();
  } while (group != nullptr);
}

// ---------------------------------------------------------------------------
// Activation: tmigr_active_up() / __tmigr_cpu_activate() / tmigr_cpu_activate()
// ---------------------------------------------------------------------------
template <typename Q>
bool HierarchyImpl<Q>::ActiveUp(Group* group, Walk& data) {
  const uint8_t childmask = data.childmask;
  // No barrier before: the new value does not depend on the child's state.
  uint32_t cur = group->migr_state.load(std::memory_order_relaxed);
  bool walk_done;
  for (;;) {
    GroupState s = GroupState::Unpack(cur);
    walk_done = true;
    if (s.migrator == kMigratorNone) {
      s.migrator = childmask;
      walk_done = false;
    }
    s.active |= childmask;
    BumpSeq(s);
    // acq_rel: orders the child's update before the parent's (fully ordered
    // cmpxchg in the kernel) and acquires links published by setup.
    if (group->migr_state.compare_exchange_weak(cur, s.Pack(), std::memory_order_acq_rel,
                                                std::memory_order_acquire)) {
      break;
    }
    CountCasRetry();
  }
  if (tracer_ != nullptr && !walk_done) TraceMigrator(group, kMigratorNone, childmask, data.cpu);
  ISOLATION_INTERLEAVE_POINT(
      hierarchy_internal::PointAt(hierarchy_internal::kActiveAfterCas, group->level));
  // The group event may still be queued in the parent; it is stale now.
  group->groupevt.ignore.store(true, std::memory_order_relaxed);
  return walk_done;
}

template <typename Q>
void HierarchyImpl<Q>::ActivateLocked(CpuState& tmc) {
  tmc.cpuevt.ignore.store(true, std::memory_order_relaxed);
  tmc.wakeup.store(kNanosMax, std::memory_order_relaxed);
  Walk data;
  data.cpu = tmc.cpuevt.cpu;
  WalkGroups(tmc, data, [this](Group* g, Group*, Walk& d) { return ActiveUp(g, d); });
}

template <typename Q>
void HierarchyImpl<Q>::PropagateActivation(Group* parent, uint8_t childmask) {
  Walk data;
  data.childmask = childmask;
  WalkGroupsFrom(parent, data, [this](Group* g, Group*, Walk& d) { return ActiveUp(g, d); });
}

template <typename Q>
void HierarchyImpl<Q>::Activate(int cpu) {
  CpuState& tmc = cpu_state(cpu);
  if (!tmc.available.load(std::memory_order_relaxed)) return;
  if (!tmc.idle.load(std::memory_order_relaxed)) {
    Warn();
    return;
  }
  LockRanked(tmc.lock, kCpuLockRank);
  tmc.idle.store(false, std::memory_order_relaxed);
  ActivateLocked(tmc);
  UnlockRanked(tmc.lock, kCpuLockRank);
}

// ---------------------------------------------------------------------------
// Event update: tmigr_next_groupevt(), tmigr_update_events()
// ---------------------------------------------------------------------------
template <typename Q>
Event* HierarchyImpl<Q>::NextGroupEvent(Group* group) {
  group->next_expiry.store(kNanosMax, std::memory_order_relaxed);
  while (Event* evt = group->events.First()) {
    if (!evt->ignore.load(std::memory_order_relaxed)) {
      group->next_expiry.store(evt->expires, std::memory_order_relaxed);
      return evt;
    }
    // Purge ignored events: the lock is held anyway.
    if (!group->events.Remove(evt)) break;
  }
  return nullptr;
}

template <typename Q>
Event* HierarchyImpl<Q>::NextExpiredGroupEvent(Group* group, Nanos now) {
  Event* evt = NextGroupEvent(group);
  if (evt == nullptr || now < evt->expires) return nullptr;
  group->events.Remove(evt);
  NextGroupEvent(group);  // recompute next_expiry
  return evt;
}

template <typename Q>
bool HierarchyImpl<Q>::UpdateEvents(Group* group, Group* child, Walk& data) {
  using hierarchy_internal::PointAt;
  const bool remote = data.remote;
  bool walk_done = false;
  Event* evt;
  Event* first_childevt;
  Nanos nextexp;
  bool ignore;
  GroupState childstate, groupstate;
  const int grank = GroupLockRank(group->level);

  if (child != nullptr) {
    ISOLATION_INTERLEAVE_POINT(PointAt(hierarchy_internal::kUpdateEnter, group->level));
    if constexpr (Q::kLocklessUpdateReads) {
      childstate = child->state();
      groupstate = group->state();
    }
    ISOLATION_INTERLEAVE_POINT(PointAt(hierarchy_internal::kUpdateBeforeLock, group->level));
    LockRanked(child->lock, GroupLockRank(child->level));
    LockRanked(group->lock, grank);
    if constexpr (!Q::kLocklessUpdateReads) {
      // Under the locks: orders "last CPU idle" against "new timer from idle" (R2).
      childstate = child->state();
      groupstate = group->state();
    }
    if (childstate.active != 0) {
      walk_done = true;
      goto unlock;
    }
    first_childevt = NextGroupEvent(child);
    nextexp = child->next_expiry.load(std::memory_order_relaxed);
    evt = &child->groupevt;
    // May race with a concurrent activation: either a useless remote expiry or
    // a correctly ignored event.
    ignore = nextexp == kNanosMax;
    evt->ignore.store(ignore, std::memory_order_relaxed);
  } else {
    nextexp = data.nextexp;
    first_childevt = evt = data.evt;
    ignore = evt->ignore.load(std::memory_order_relaxed);
    // Fast path: the parent-level step purges the ignored event.  Never at the
    // top of a single-level hierarchy (7a96a84bfbee); the early_return control
    // takes it there too (the bug 4b6f4c5a67c0 removed).
    const bool has_parent =
        Q::kEarlyReturn || group->parent.load(std::memory_order_acquire) != nullptr;
    if (ignore && !remote && has_parent) return true;
    LockRanked(group->lock, grank);
    childstate = GroupState{0, kMigratorNone, 0};
    groupstate = group->state();
  }

  if (evt->queued) {
    if (evt->expires == nextexp && !ignore) {
      // 61f7fdf8fd00: do not miss a new CPU event with the same expiry.
      if constexpr (!Q::kNoCpuRefresh) evt->cpu = first_childevt->cpu;
      goto check_toplvl;
    }
    if (!group->events.Remove(evt)) group->next_expiry.store(kNanosMax, std::memory_order_relaxed);
  }

  if (ignore) {
    // A remote expiry into an inactive group must still push the group's
    // remaining events upward.
    if (!remote || groupstate.active != 0) walk_done = true;
  } else {
    evt->expires = nextexp;
    evt->cpu = first_childevt->cpu;
    if (group->events.Add(evt)) group->next_expiry.store(nextexp, std::memory_order_relaxed);
    data.queued_into_idle_group = groupstate.active == 0;
  }

check_toplvl:
  if (group->parent.load(std::memory_order_acquire) == nullptr &&
      groupstate.migrator == kMigratorNone) {
    walk_done = true;
    if (!remote) {
      // The whole hierarchy is idle: hand the global first expiry to this CPU.
      Event* first = NextGroupEvent(group);
      data.firstexp = first != nullptr ? first->expires : kNanosMax;
    }
  }

unlock:
  UnlockRanked(group->lock, grank);
  if (child != nullptr) UnlockRanked(child->lock, GroupLockRank(child->level));
  return walk_done;
}

// ---------------------------------------------------------------------------
// Deactivation: tmigr_inactive_up() / __tmigr_cpu_deactivate()
// ---------------------------------------------------------------------------
template <typename Q>
bool HierarchyImpl<Q>::InactiveUp(Group* group, Group* child, Walk& data) {
  using hierarchy_internal::PointAt;
  const uint8_t childmask = data.childmask;
  uint32_t cur = group->migr_state.load(std::memory_order_acquire);
  bool walk_done;
  uint8_t old_migrator = kMigratorNone;
  uint8_t new_migrator = kMigratorNone;
  for (;;) {
    GroupState childstate{0, kMigratorNone, 0};
    if (child != nullptr)
      childstate = GroupState::Unpack(child->migr_state.load(std::memory_order_relaxed));
    GroupState s = GroupState::Unpack(cur);
    old_migrator = s.migrator;
    walk_done = true;
    if (childstate.active == 0) {
      s.active &= static_cast<uint8_t>(~childmask);
      if (s.migrator == childmask) {
        if (s.active != 0) {
          // Hand the role to the lowest active child.
          s.migrator =
              static_cast<uint8_t>(1u << std::countr_zero(static_cast<unsigned>(s.active)));
        } else {
          s.migrator = kMigratorNone;
          walk_done = false;
        }
      }
    }
    BumpSeq(s);
    if (s.migrator != kMigratorNone && s.active == 0) Warn();
    new_migrator = s.migrator;
    ISOLATION_INTERLEAVE_POINT(PointAt(hierarchy_internal::kInactiveBeforeCas, group->level));
    if (group->migr_state.compare_exchange_weak(cur, s.Pack(), std::memory_order_acq_rel,
                                                std::memory_order_acquire)) {
      break;
    }
    CountCasRetry();
    // smp_mb__after_atomic(): re-read the child state after the failed CAS.
    hierarchy_internal::FullFence();
  }
  if (tracer_ != nullptr && new_migrator != old_migrator) {
    TraceMigrator(group, old_migrator, new_migrator, data.cpu);
  }
  ISOLATION_INTERLEAVE_POINT(PointAt(hierarchy_internal::kInactiveAfterCas, group->level));
  data.remote = false;
  data.queued_into_idle_group = false;
  UpdateEvents(group, child, data);
  if constexpr (!Q::kKernelR4) {
    // Race R4: the CAS above left the group active (another child was), but
    // by the time this walk held the group's lock the last child had gone
    // idle and may already have propagated the group's first event upward
    // without ours.  The state was read under the lock, so either that
    // propagation saw our event or we see the group inactive here: carry it
    // up ourselves, as a new timer would (tmigr_new_timer_up()).
    if (walk_done && data.queued_into_idle_group) PropagateFrom(group, data);
  }
  return walk_done;
}

// The rest of a tmigr_new_timer_up() walk, from `group`'s parent: used only
// by the R4 fix, so the common path pays one store and one test.
template <typename Q>
void HierarchyImpl<Q>::PropagateFrom(Group* group, Walk& data) {
  Group* child = group;
  // Pairs with the release store in ConnectChildParent().
  for (Group* parent = child->parent.load(std::memory_order_acquire); parent != nullptr;
       parent = parent->parent.load(std::memory_order_acquire)) {
    data.childmask = child->groupmask;
    if (UpdateEvents(parent, child, data)) break;
    child = parent;
  }
}

template <typename Q>
Nanos HierarchyImpl<Q>::DeactivateLocked(CpuState& tmc, Nanos next_global) {
  Walk data;
  data.nextexp = next_global;
  data.firstexp = kNanosMax;
  data.evt = &tmc.cpuevt;
  data.cpu = tmc.cpuevt.cpu;
  if (next_global != kNanosMax) tmc.cpuevt.ignore.store(false, std::memory_order_relaxed);
  WalkGroups(tmc, data, [this](Group* g, Group* c, Walk& d) { return InactiveUp(g, c, d); });
  return data.firstexp;
}

template <typename Q>
Nanos HierarchyImpl<Q>::Deactivate(int cpu, Nanos next_global) {
  CpuState& tmc = cpu_state(cpu);
  if (!tmc.available.load(std::memory_order_relaxed)) return next_global;
  LockRanked(tmc.lock, kCpuLockRank);
  const Nanos ret = DeactivateLocked(tmc, next_global);
  tmc.idle.store(true, std::memory_order_relaxed);
  tmc.wakeup.store(ret, std::memory_order_relaxed);
  UnlockRanked(tmc.lock, kCpuLockRank);
  return ret;
}

// ---------------------------------------------------------------------------
// New timer on an idle CPU: tmigr_cpu_new_timer() / tmigr_new_timer()
// ---------------------------------------------------------------------------
template <typename Q>
Nanos HierarchyImpl<Q>::NewTimer(int cpu, Nanos next_global) {
  CpuState& tmc = cpu_state(cpu);
  if (!tmc.available.load(std::memory_order_relaxed)) return next_global;
  LockRanked(tmc.lock, kCpuLockRank);
  Nanos ret = tmc.wakeup.load(std::memory_order_relaxed);
  if (next_global != kNanosMax &&
      (next_global != tmc.cpuevt.expires || tmc.cpuevt.ignore.load(std::memory_order_relaxed))) {
    if (tmc.remote.load(std::memory_order_relaxed)) {
      ret = kNanosMax;  // the remote expirer re-walks for this CPU
    } else {
      tmc.cpuevt.ignore.store(false, std::memory_order_relaxed);
      Walk data;
      data.nextexp = next_global;
      data.evt = &tmc.cpuevt;
      data.remote = false;
      WalkGroups(tmc, data, [this](Group* g, Group* c, Walk& d) { return UpdateEvents(g, c, d); });
      ret = data.firstexp;
    }
    tmc.wakeup.store(ret, std::memory_order_relaxed);
  }
  UnlockRanked(tmc.lock, kCpuLockRank);
  return ret;
}

// ---------------------------------------------------------------------------
// Tick: tmigr_requires_handle_remote()
// ---------------------------------------------------------------------------
template <typename Q>
bool HierarchyImpl<Q>::RequiresHandleRemoteUp(Group* group, Walk& data) {
  if (!CheckMigrator(group, data.childmask)) return true;
  data.firstexp = group->next_expiry.load(std::memory_order_relaxed);
  if (data.now >= data.firstexp) {
    data.check = true;
    return true;
  }
  return false;
}

template <typename Q>
bool HierarchyImpl<Q>::RequiresHandleRemote(int cpu, Nanos now) {
  CpuState& tmc = cpu_state(cpu);
  if (!tmc.available.load(std::memory_order_relaxed)) return false;
  if (!tmc.idle.load(std::memory_order_relaxed)) {
    Walk data;
    data.now = now;
    WalkGroups(tmc, data,
               [this](Group* g, Group*, Walk& d) { return RequiresHandleRemoteUp(g, d); });
    return data.check;
  }
  // Idle CPU whose wake-up fired.
  return now >= tmc.wakeup.load(std::memory_order_relaxed);
}

// ---------------------------------------------------------------------------
// Softirq: tmigr_handle_remote(), tmigr_handle_remote_up(), tmigr_handle_remote_cpu()
// ---------------------------------------------------------------------------
template <typename Q>
void HierarchyImpl<Q>::HandleRemoteCpu(int cpu, int runner, Nanos now) {
  CpuState& tmc = *cpus_[static_cast<size_t>(cpu)];
  LockRanked(tmc.lock, kCpuLockRank);
  if (!tmc.available.load(std::memory_order_relaxed) ||
      tmc.remote.load(std::memory_order_relaxed) ||
      tmc.cpuevt.ignore.load(std::memory_order_relaxed) || now < tmc.cpuevt.expires) {
    UnlockRanked(tmc.lock, kCpuLockRank);
    return;
  }
  tmc.remote.store(true, std::memory_order_relaxed);
  tmc.wakeup.store(kNanosMax, std::memory_order_relaxed);
  // Drop the lock so the remote CPU can leave idle meanwhile.
  UnlockRanked(tmc.lock, kCpuLockRank);

  if (cpu != runner) {
    CountRemoteExpiry(runner);
    // tmigr_handle_remote_cpu() -> timer_expire_remote(): `runner` pulls.
    if (tracer_ != nullptr) tracer_->Instant(runner, now, "tmigr.remote_expiry", {{"owner", cpu}});
    backend_->ExpireRemote(cpu, runner, now);
  }
  ISOLATION_INTERLEAVE_POINT("tmigr.handle_remote_cpu.after_expire");

  // Lock order: timer bases before tmigr locks.
  NoteAcquire(kBaseLockRank);
  backend_->LockBases(cpu);
  LockRanked(tmc.lock, kCpuLockRank);
  if (!tmc.available.load(std::memory_order_relaxed) || !tmc.idle.load(std::memory_order_relaxed)) {
    backend_->UnlockBases(cpu);
    NoteRelease(kBaseLockRank);
  } else {
    const Nanos next_global = backend_->NextGlobalLocked(cpu, now);
    backend_->UnlockBases(cpu);
    NoteRelease(kBaseLockRank);
    Walk data;
    data.nextexp = next_global;
    data.evt = &tmc.cpuevt;
    data.remote = true;
    // Even without a new timer (race R3): push the remaining events upward.
    WalkGroups(tmc, data, [this](Group* g, Group* c, Walk& d) { return UpdateEvents(g, c, d); });
  }
  tmc.remote.store(false, std::memory_order_relaxed);
  UnlockRanked(tmc.lock, kCpuLockRank);
}

template <typename Q>
bool HierarchyImpl<Q>::HandleRemoteUp(Group* group, Walk& data) {
  const int rank = GroupLockRank(group->level);
  for (;;) {
    // Re-checked before every pop (the kernel's `goto again`): a child that
    // activated while a remote CPU was handled is now this group's migrator
    // and takes over; this CPU stops and leaves `firstexp` as it was.
    if (!CheckMigrator(group, data.childmask)) return true;
    LockRanked(group->lock, rank);
    Event* evt = NextExpiredGroupEvent(group, data.now);
    if (evt != nullptr) {
      const int remote_cpu = evt->cpu;
      UnlockRanked(group->lock, rank);
      HandleRemoteCpu(remote_cpu, data.runner, data.now);
      continue;  // another expired event?
    }
    data.firstexp = group->next_expiry.load(std::memory_order_relaxed);
    UnlockRanked(group->lock, rank);
    return false;
  }
}

template <typename Q>
void HierarchyImpl<Q>::HandleRemote(int cpu, Nanos now) {
  CpuState& tmc = cpu_state(cpu);
  if (!tmc.available.load(std::memory_order_relaxed)) return;
  if (!CheckMigrator(tmc.tmgroup, tmc.groupmask)) {
    // f55acb1e44f3: an idle CPU that was overtaken still walks so that its
    // stale wakeup is cleared (no endless re-arm).  The ghost_timer control
    // returns here, keeping the stale wakeup.
    if constexpr (Q::kGhostTimer) return;
    if (tmc.wakeup.load(std::memory_order_relaxed) == kNanosMax) return;
  }
  Walk data;
  data.now = now;
  data.runner = cpu;
  data.firstexp = kNanosMax;
  WalkGroups(tmc, data, [this](Group* g, Group*, Walk& d) { return HandleRemoteUp(g, d); });
  LockRanked(tmc.lock, kCpuLockRank);
  tmc.wakeup.store(data.firstexp, std::memory_order_relaxed);
  UnlockRanked(tmc.lock, kCpuLockRank);
}

// ---------------------------------------------------------------------------
// Idle forecast: tmigr_quick_check()
// ---------------------------------------------------------------------------
template <typename Q>
Nanos HierarchyImpl<Q>::QuickCheck(int cpu, Nanos next_global) {
  CpuState& tmc = cpu_state(cpu);
  if (!tmc.available.load(std::memory_order_relaxed)) return next_global;
  if (tmc.idle.load(std::memory_order_relaxed)) {
    Warn();
    return next_global;
  }
  Group* group = tmc.tmgroup;
  GroupState s = GroupState::Unpack(group->migr_state.load(std::memory_order_relaxed));
  // tmigr_check_migrator_and_lonely()
  if (!(s.migrator == tmc.groupmask || s.migrator == kMigratorNone) ||
      std::popcount(s.active) > 1) {
    return kNanosMax;
  }
  Nanos next = next_global;
  do {
    s = GroupState::Unpack(group->migr_state.load(std::memory_order_relaxed));
    if (std::popcount(s.active) > 1) return kNanosMax;  // tmigr_check_lonely()
    Group* parent = group->parent.load(std::memory_order_acquire);
    // 8ca1836769d7: the minimum over every level (events are not sorted
    // bottom-up while this CPU is active).  The quick_check_top_only control
    // reads the top only.
    if (!Q::kQuickCheckTopOnly || parent == nullptr) {
      next = std::min(next, group->next_expiry.load(std::memory_order_relaxed));
    }
    group = parent;
  } while (group != nullptr);
  return next;
}

// A factory for the registry.
template <typename Q>
std::unique_ptr<TimerMigration> MakeHierarchy(HierarchyArgs args) {
  return std::make_unique<HierarchyImpl<Q>>(std::move(args));
}

}  // namespace isolation::tmigr

#endif  // ISOLATION_LIB_TMIGR_HIERARCHY_IMPL_H_
