// SPDX-License-Identifier: GPL-2.0-or-later
// -----------------------------------------------------------------------------
// mm_cid/internal/layouts.h
// -----------------------------------------------------------------------------
//
// Internal: no API stability; not for use outside the library and the inline
// switcher (mm_cid/switcher.h), which is why it is installed at all.  The
// layouts the designs share with the switcher -- the per-(mm, CPU) slot rows,
// the lazy and owner619 designs' slots, task and CPU state -- and the cached
// context-switch paths both the designs' ContextSwitch and the switcher run.
//
// Kernel counterpart: struct mm_cid and the mm_cid fields of task_struct and
// mm_struct (include/linux/mm_types.h, include/linux/sched.h) and the cached
// paths of switch_mm_cid() (v6.4-v6.18) and mm_cid_schedin() /
// mm_cid_schedout() (6.19+), kernel/sched/sched.h.
//
// Thread-safety: as mm_cid.h and switcher.h state for the designs: a CPU's
// switch runs in its context with its run-queue lock held; every access is
// relaxed.

#ifndef ISOLATION_MM_CID_INTERNAL_LAYOUTS_H_
#define ISOLATION_MM_CID_INTERNAL_LAYOUTS_H_

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "isolation/core/clock.h"
#include "isolation/core/contract.h"
#include "isolation/core/fence.h"
#include "isolation/core/interleave.h"
#include "isolation/core/store_buffer.h"
#include "isolation/mm_cid/mm_cid.h"
#include "isolation/mm_cid/types.h"

namespace isolation::mm_cid {
namespace internal {

// alloc_percpu()'s layout of per-(mm, CPU) slots: one CPU's slots of a
// group of mms share a cache line of that CPU's own (per_cpu_slots.h).
inline constexpr size_t kCacheLine = 64;
template <typename Slot>
struct alignas(kCacheLine) PerCpuRow {
  static constexpr int kMms = static_cast<int>(kCacheLine / sizeof(Slot));
  Slot slot[kMms];
};
template <typename Slot>
class PerCpuRef {
 public:
  PerCpuRef() = default;
  PerCpuRef(PerCpuRow<Slot>* rows, int index) : rows_(rows), index_(index) {}
  Slot& operator[](int cpu) const { return rows_[cpu].slot[index_]; }

 private:
  PerCpuRow<Slot>* rows_ = nullptr;
  int index_ = 0;
};

// ---- lazy (v6.4-v6.18) ----------------------------------------------------
namespace lazy_layout {

// MM_CID_UNSET / MM_CID_LAZY_PUT (kernel/sched/sched.h).
inline constexpr uint32_t kUnset = 0xFFFFFFFFu;
inline constexpr uint32_t kLazyPut = 1u << 31;
constexpr bool CidIsUnset(uint32_t c) { return c == kUnset; }
constexpr bool CidIsValid(uint32_t c) { return (c & kLazyPut) == 0; }
constexpr bool CidIsLazy(uint32_t c) { return c != kUnset && (c & kLazyPut) != 0; }

// Per-(mm, CPU) slot (struct mm_cid), 16 bytes as in the kernel.
struct Slot {
  std::atomic<uint32_t> cid{kUnset};
  std::atomic<uint32_t> recent_cid{kUnset};  // v6.13+ allocation hint
  std::atomic<Nanos> time{0};                // rq clock at last use
};

// The fields of a task the switch touches (the design's Task derives).
struct TaskSwitchState {
  std::atomic<bool> active{false};  // mm_cid_active
  // t->mm->pcpu_cid, set beside t->mm (Fork, Exec); read only while active.
  PerCpuRef<Slot> slots;
  std::atomic<int32_t> mm_cid{-1};  // read by observers
  int32_t last_mm_cid = -1;
  // TIF_NOTIFY_RESUME for rseq: set at switch-in, consumed by the next
  // return to user.
  bool resume_pending = false;
  bool ran = false;          // switched in at least once
  Nanos switched_in_at = 0;  // runtime since switch-in
};

// Per-CPU scheduler state the mechanism needs: rq->curr.
struct alignas(64) Cpu {
  std::atomic<TaskId> curr{kNoTask};
  int64_t context_switches = 0;  // written only in this CPU's context
};

// The switch side of the lazy put's Dekker pairing (mm_cid.h): after
// publishing rq->curr, before loading any slot.
struct FenceAfterPublish {  // smp_mb__after_switch_mm() as a full fence
  static void AfterPublishCurr() {
    store_buffer::OnFullFence();
    SeqCstFence();
  }
};
struct CompilerBarrierAfterPublish {  // the reclaimer runs membarrier()
  static void AfterPublishCurr() { std::atomic_signal_fence(std::memory_order_seq_cst); }
};

[[gnu::always_inline]] inline void SwitchedIn(TaskSwitchState& n, int32_t cid, Nanos now) {
  n.mm_cid.store(cid, std::memory_order_relaxed);
  n.last_mm_cid = cid;
  n.resume_pending = true;
  n.ran = true;
  n.switched_in_at = now;
}

// mm_cid_get() for the incoming task: the parked ID in place (a load, a
// test, the time stamp); otherwise `allocate(cid)` in tail position.
template <typename TaskAt, typename Allocate>
[[gnu::always_inline]] inline void SwitchInCached(TaskAt task_at, int cpu, TaskId next, Nanos now,
                                                  Allocate allocate) {
  if (next != kNoTask) {
    TaskSwitchState& n = task_at(next);
    if (n.active.load(std::memory_order_relaxed)) {
      Slot& s = n.slots[cpu];
      const uint32_t cid = store_buffer::Load(s.cid, std::memory_order_relaxed);
      if (__builtin_expect(!CidIsValid(cid), 0)) return allocate(cid);
      s.time.store(now, std::memory_order_relaxed);  // mm_cid_snapshot_time()
      SwitchedIn(n, static_cast<int32_t>(cid), now);
    }
  }
  ISOLATION_INTERLEAVE_POINT("mm_cid.switch.end");
}

// switch_mm_cid() up to its slow paths: publish rq->curr, the barrier, the
// outgoing task's slot (mm_cid_put_lazy() only for a slot a reclaimer
// marked LAZY: `put_lazy(cid)`), then SwitchInCached.  The slow paths are
// callables in tail position, so with out-of-line targets the cached path
// stays a leaf.  The store and the slot loads go through store_buffer.h so
// a StoreBufferModel can show what the barrier does.
template <typename Barrier, typename TaskAt, typename PutLazy, typename Allocate>
[[gnu::always_inline]] inline void SwitchCached(Cpu& c, TaskAt task_at, int cpu, TaskId prev,
                                                TaskId next, Nanos now, PutLazy put_lazy,
                                                Allocate allocate) {
  store_buffer::Store(c.curr, next, std::memory_order_relaxed);
  ISOLATION_INTERLEAVE_POINT("mm_cid.switch.after_publish_curr");
  Barrier::AfterPublishCurr();
  if (prev != kNoTask) {
    TaskSwitchState& p = task_at(prev);
    if (p.active.load(std::memory_order_relaxed)) {
      Slot& s = p.slots[cpu];
      s.time.store(now, std::memory_order_relaxed);  // mm_cid_snapshot_time()
      const uint32_t cid = store_buffer::Load(s.cid, std::memory_order_relaxed);
      if (__builtin_expect(CidIsLazy(cid), 0)) return put_lazy(cid);
      p.mm_cid.store(-1, std::memory_order_relaxed);
    }
  }
  SwitchInCached(task_at, cpu, next, now, allocate);
}

}  // namespace lazy_layout

// ---- owner619 (6.19+) -----------------------------------------------------
namespace owner619_layout {

inline constexpr uint32_t kUnset = 1u << 31;    // MM_CID_UNSET
inline constexpr uint32_t kOnCpu = 1u << 30;    // MM_CID_ONCPU
inline constexpr uint32_t kTransit = 1u << 29;  // MM_CID_TRANSIT
inline constexpr uint32_t kFlags = kOnCpu | kTransit;
constexpr bool HasId(uint32_t c) { return (c & kUnset) == 0; }
constexpr uint32_t IdOf(uint32_t c) { return c & ~kFlags; }
// A task-owned ID: a value without ONCPU (TRANSIT allowed).
constexpr bool TaskOwned(uint32_t c) { return HasId(c) && (c & kOnCpu) == 0; }

// mm->mm_cid.pcpu's per-CPU ID, 4 bytes as in the kernel.
struct Slot {
  // Guarded by the CPU's rq lock (RunQueueLock(cpu)): a lock reached
  // through the slot's CPU index, which the thread-safety analysis cannot
  // name, so a comment and not ABSL_GUARDED_BY.
  uint32_t cid = kUnset;
};

// The fields of an mm the switch reads (the design's Mm derives).
struct MmSwitchState {
  MmSwitchState() = default;
  explicit MmSwitchState(PerCpuRef<Slot> slots) : pcpu(slots) {}
  PerCpuRef<Slot> pcpu;
  std::atomic<uint32_t> mode{0};  // 0, TRANSIT, ONCPU, ONCPU|TRANSIT (one word, 47ee94efccf6)
  std::atomic<int> max_cids{0};
};

// The fields of a task the switch touches (the design's Task derives).
struct TaskSwitchState {
  std::atomic<bool> active{false};
  // t->mm, set beside the task's mm id (Fork, Exec); read only by the
  // task's own switches while active.
  MmSwitchState* mm_ptr = nullptr;
  std::atomic<uint32_t> cid{kUnset};  // written under the task's CPU rq lock
  std::atomic<int> cpu{0};            // CPU it is queued on / runs on
  bool ran = false;                   // switched in at least once
};

struct alignas(64) Cpu {
  std::atomic<TaskId> curr{kNoTask};  // written under the CPU's RunQueueLock
  int64_t switches = 0;
  int64_t switch_rmw = 0;
};

// mm_cid_schedout() has nothing to do: no TRANSIT ID to settle, and not a
// per-CPU-mode task dropping its copy of the CPU's ID.
constexpr bool SchedoutIsNoop(uint32_t tcid, uint32_t mode) {
  return !(HasId(tcid) && (tcid & kTransit)) && !((mode & kOnCpu) && (tcid & kOnCpu));
}

// The mainline mode word (one load; the split-word control reads two).
struct ModeWord {
  static uint32_t Read(const MmSwitchState& mm) {
    return store_buffer::Load(mm.mode, std::memory_order_relaxed);
  }
};

// mm_cid_schedin()'s no-op tests: per-task mode with flag-free IDs in
// range (the slot takes the task's ID), or per-CPU mode with the task
// holding the CPU's ID.  Otherwise `slow(task, mm)` in tail position.
template <typename Mode, typename SchedinSlow>
[[gnu::always_inline]] inline void SchedinCached(int cpu, TaskSwitchState& t, SchedinSlow slow) {
  if (!t.active.load(std::memory_order_relaxed)) return;
  MmSwitchState& mm = *t.mm_ptr;
  uint32_t& slot = mm.pcpu[cpu].cid;
  const uint32_t tcid = t.cid.load(std::memory_order_relaxed);
  const uint32_t mode = Mode::Read(mm);
  const uint32_t max_cids = static_cast<uint32_t>(mm.max_cids.load(std::memory_order_relaxed));
  if ((mode & kOnCpu) == 0) {
    if (__builtin_expect((tcid | slot) < kTransit && tcid < max_cids, 1)) {
      slot = tcid;
      return;  // t.cid already holds tcid
    }
  } else if (HasId(slot) && (slot & kOnCpu) && HasId(tcid) && (tcid & kOnCpu) &&
             IdOf(slot) == IdOf(tcid) && IdOf(slot) < max_cids) {
    return;
  }
  return slow(t, mm);
}

// mm_cid_switch_to() up to its slow paths: the outgoing task's schedout
// (`schedout_slow(tcid, mode)` unless a no-op), rq->curr, the incoming
// task's CPU and schedin.  No atomics: the caller holds the rq lock.
template <typename Mode, typename TaskAt, typename SchedoutSlow, typename SchedinSlow>
[[gnu::always_inline]] inline void SwitchCached(Cpu& c, TaskAt task_at, int cpu, TaskId prev,
                                                TaskId next, SchedoutSlow schedout_slow,
                                                SchedinSlow schedin_slow) {
  if (prev != kNoTask) {
    TaskSwitchState& p = task_at(prev);
    if (p.active.load(std::memory_order_relaxed)) {
      const uint32_t tcid = p.cid.load(std::memory_order_relaxed);
      const uint32_t mode = Mode::Read(*p.mm_ptr);
      if (__builtin_expect(!SchedoutIsNoop(tcid, mode), 0)) return schedout_slow(tcid, mode);
    }
  }
  c.curr.store(next, std::memory_order_relaxed);
  if (next != kNoTask) {
    TaskSwitchState& n = task_at(next);
    n.cpu.store(cpu, std::memory_order_relaxed);
    n.ran = true;
    SchedinCached<Mode>(cpu, n, schedin_slow);
  }
}

}  // namespace owner619_layout

}  // namespace internal

}  // namespace isolation::mm_cid

#endif  // ISOLATION_MM_CID_INTERNAL_LAYOUTS_H_
