// SPDX-License-Identifier: GPL-2.0-or-later
// -----------------------------------------------------------------------------
// mm_cid/switcher.h
// -----------------------------------------------------------------------------
//
// MmCidSwitcher: an MmCid's context-switch hook compiled into its caller, as
// the kernel compiles switch_mm_cid() -- a static inline of
// kernel/sched/sched.h -- into context_switch().  MmCid::ContextSwitch is a
// virtual call into the library; a harness that switches millions of times
// measures that call as much as the mechanism (issue #12 goal 1).  The
// switcher resolves the design once, at MmCid::Switcher(), and runs the
// *cached* switch inline: the outgoing task's slot is not marked LAZY (lazy)
// or its schedout is a no-op (owner619), and the incoming task finds its ID
// in place.  Everything else -- an allocation, a lazy put, a TRANSIT
// hand-over, a journal for CheckAlwaysIncremental -- goes to the virtual
// MmCid::ContextSwitch, which redoes the switch from the start.  That is
// safe because the cached path stores only what the redo stores again with
// the same value (rq->curr, the slot's time stamp, the outgoing task's
// mm_cid = -1): nothing is applied twice and nothing is lost.
//
// The cached paths are the designs' own (the lazy and owner619 designs call
// the same functions below for their ContextSwitch), so the switcher and
// MmCid::ContextSwitch cannot drift apart.  Forms (fixed at Create):
//   lazy, barrier=membarrier  compiler barrier after publishing rq->curr;
//   lazy, barrier=fences      a full fence there (the kernel's smp_mb());
//   owner619 (mainline)       the schedout/schedin no-op tests, no atomics;
//   anything else             (v63_mmlock, the negative controls, a design
//                             of your own) every switch is the virtual call;
//                             inline_fast_path() says which.
//
// Kernel counterpart: switch_mm_cid() / mm_cid_get() (v6.4-v6.18) and
// mm_cid_switch_to() / mm_cid_schedin() / mm_cid_schedout() (6.19+).
//
// Thread-safety: exactly MmCid::ContextSwitch's contract: call
// ContextSwitch(cpu, ...) in `cpu`'s context with RunQueueLock(cpu) held (or
// from the simulator's one thread).  A switcher is a small value (a copy is
// the same switcher); it holds pointers into its MmCid and must not outlive
// it.  Contracts (cpu and task ids in range) are checked with
// ISOLATION_CONTRACT where contract checks are compiled in (core/contract.h).
// The code is inline templates, which the library instantiates too (the
// Hooks adapter): build the code that includes this header with the
// library's contract and instrumentation settings (NDEBUG,
// ISOLATION_HARDENED; ISOLATION_INTERLEAVE_POINTS comes with the CMake
// target), or the linker keeps either copy.  A redo passes the cached
// path's interleave points and store-buffer routing a second time: a forced
// schedule counts them twice, and the fences form calls OnFullFence twice.
//
// Memory ordering: as mm_cid.h states for the lazy design's Dekker pairing
// (the compiler barrier or the fence after the rq->curr store) and
// owner619's run-queue locks; every access here is relaxed.
//
// The `internal` namespaces below are the layouts the designs share with
// the switcher; they are not for use outside the library and this header.

#ifndef ISOLATION_MM_CID_SWITCHER_H_
#define ISOLATION_MM_CID_SWITCHER_H_

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
[[gnu::always_inline]] inline void SwitchCached(Cpu& c, TaskAt task_at, int cpu, TaskId prev, TaskId next,
                                                Nanos now, PutLazy put_lazy, Allocate allocate) {
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
  static uint32_t Read(const MmSwitchState& mm) { return store_buffer::Load(mm.mode, std::memory_order_relaxed); }
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
  } else if (HasId(slot) && (slot & kOnCpu) && HasId(tcid) && (tcid & kOnCpu) && IdOf(slot) == IdOf(tcid) &&
             IdOf(slot) < max_cids) {
    return;
  }
  return slow(t, mm);
}

// mm_cid_switch_to() up to its slow paths: the outgoing task's schedout
// (`schedout_slow(tcid, mode)` unless a no-op), rq->curr, the incoming
// task's CPU and schedin.  No atomics: the caller holds the rq lock.
template <typename Mode, typename TaskAt, typename SchedoutSlow, typename SchedinSlow>
[[gnu::always_inline]] inline void SwitchCached(Cpu& c, TaskAt task_at, int cpu, TaskId prev, TaskId next,
                                                SchedoutSlow schedout_slow, SchedinSlow schedin_slow) {
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

// An MmCidSwitcher whose form F is a compile-time constant (made by
// MmCidSwitcher::WithSwitchForm, which picks F = form()): the same switch
// with no test of the form, its few fields plain scalars a loop keeps in
// registers.  Same contract and thread-safety as MmCidSwitcher.
template <internal::SwitchForm F>
class MmCidFormSwitcher {
 public:
  MmCidFormSwitcher(MmCid* mm, const internal::SwitchLayout& layout)
      : mm_(mm), tasks_(layout.tasks), cpus_(layout.cpus), journaled_(layout.journaled), shift_(layout.task_shift) {}

  static constexpr internal::SwitchForm form() { return F; }
  MmCid& mm() const { return *mm_; }

  // switch_mm_cid(): MmCid::ContextSwitch's contract and result.
  void ContextSwitch(int cpu, TaskId prev, TaskId next, Nanos now) {
    ISOLATION_CONTRACT(cpu >= 0 && cpu < mm_->num_cpus(), "mm_cid Switcher ContextSwitch: cpu %d outside [0, %d)",
                       cpu, mm_->num_cpus());
    ISOLATION_CONTRACT(prev == kNoTask || (prev >= 0 && prev < mm_->max_tasks()),
                       "mm_cid Switcher ContextSwitch: prev %d outside [0, %d) and not kNoTask", prev,
                       mm_->max_tasks());
    ISOLATION_CONTRACT(next == kNoTask || (next >= 0 && next < mm_->max_tasks()),
                       "mm_cid Switcher ContextSwitch: next %d outside [0, %d) and not kNoTask", next,
                       mm_->max_tasks());
    if constexpr (F == internal::SwitchForm::kLazyCompilerBarrier) {
      Lazy<internal::lazy_layout::CompilerBarrierAfterPublish>(cpu, prev, next, now);
    } else if constexpr (F == internal::SwitchForm::kLazyFence) {
      Lazy<internal::lazy_layout::FenceAfterPublish>(cpu, prev, next, now);
    } else if constexpr (F == internal::SwitchForm::kOwner619) {
      Owner619(cpu, prev, next, now);
    } else {
      mm_->ContextSwitch(cpu, prev, next, now);
    }
  }
  // The other hot entry points are MmCid's (so a switcher can stand in for
  // the MmCid in a harness's switch loop).
  void Migrate(TaskId task, int from, int to, Nanos now) { mm_->Migrate(task, from, to, now); }

 private:
  template <typename State>
  State& TaskAt(TaskId t) const {
    return *reinterpret_cast<State*>(tasks_ + (static_cast<size_t>(t) << shift_));
  }
  // The journal's notes (CheckAlwaysIncremental attached), out of line.
  void Journal(int cpu, TaskId prev, TaskId next) const {
    if (__builtin_expect(*journaled_, 0)) mm_->JournalSwitch(cpu, prev, next);
  }
  // Anything past the cached path: the virtual switch from the start (the
  // cached path stored only what it stores again).  The count the cached
  // path took is given back first: the virtual switch counts itself.  A
  // static function of values, so a switcher held in a local never has its
  // address taken.
  [[gnu::noinline]] static void Redo(MmCid* mm, int64_t* count, int cpu, TaskId prev, TaskId next, Nanos now) {
    --*count;
    mm->ContextSwitch(cpu, prev, next, now);
  }

  template <typename Barrier>
  void Lazy(int cpu, TaskId prev, TaskId next, Nanos now) const {
    namespace L = internal::lazy_layout;
    Journal(cpu, prev, next);
    L::Cpu& c = static_cast<L::Cpu*>(cpus_)[cpu];
    ++c.context_switches;
    MmCid* mm = mm_;
    auto redo = [&](uint32_t) { return Redo(mm, &c.context_switches, cpu, prev, next, now); };
    L::SwitchCached<Barrier>(
        c, [this](TaskId t) -> L::TaskSwitchState& { return TaskAt<L::TaskSwitchState>(t); }, cpu, prev, next, now,
        redo, redo);
  }
  void Owner619(int cpu, TaskId prev, TaskId next, Nanos now) const {
    namespace O = internal::owner619_layout;
    Journal(cpu, prev, next);
    O::Cpu& c = static_cast<O::Cpu*>(cpus_)[cpu];
    ++c.switches;
    MmCid* mm = mm_;
    O::SwitchCached<O::ModeWord>(
        c, [this](TaskId t) -> O::TaskSwitchState& { return TaskAt<O::TaskSwitchState>(t); }, cpu, prev, next,
        [&](uint32_t, uint32_t) { return Redo(mm, &c.switches, cpu, prev, next, now); },
        [&](O::TaskSwitchState&, O::MmSwitchState&) { return Redo(mm, &c.switches, cpu, prev, next, now); });
  }

  MmCid* mm_;
  char* tasks_;
  void* cpus_;
  const bool* journaled_;
  uint8_t shift_;
};

class MmCidSwitcher {
 public:
  // The switcher of `mm` (also MmCid::Switcher()).
  explicit MmCidSwitcher(MmCid& mm) : mm_(&mm), layout_(mm.switch_layout_) {}

  // false: every switch is the virtual MmCid::ContextSwitch (see above).
  bool inline_fast_path() const { return layout_.form != internal::SwitchForm::kVirtual; }
  internal::SwitchForm form() const { return layout_.form; }
  MmCid& mm() const { return *mm_; }

  // Calls fn(MmCidFormSwitcher<form()>) and returns its result: the form
  // resolved once for a whole loop of switches, which inside `fn` -- a
  // generic lambda, instantiated per form -- has no test of it:
  //   switcher.WithSwitchForm([&](auto s) { for (...) s.ContextSwitch(cpu, prev, next, now); });
  template <typename Fn>
  decltype(auto) WithSwitchForm(Fn&& fn) const {
    using internal::SwitchForm;
    switch (layout_.form) {
      case SwitchForm::kLazyCompilerBarrier:
        return fn(MmCidFormSwitcher<SwitchForm::kLazyCompilerBarrier>(mm_, layout_));
      case SwitchForm::kLazyFence:
        return fn(MmCidFormSwitcher<SwitchForm::kLazyFence>(mm_, layout_));
      case SwitchForm::kOwner619:
        return fn(MmCidFormSwitcher<SwitchForm::kOwner619>(mm_, layout_));
      case SwitchForm::kVirtual:
        break;
    }
    return fn(MmCidFormSwitcher<SwitchForm::kVirtual>(mm_, layout_));
  }


  // switch_mm_cid(): MmCid::ContextSwitch's contract and result; a
  // predictable branch on the form per switch.
  void ContextSwitch(int cpu, TaskId prev, TaskId next, Nanos now) {
    WithSwitchForm([&](auto s) { s.ContextSwitch(cpu, prev, next, now); });
  }
  void Migrate(TaskId task, int from, int to, Nanos now) { mm_->Migrate(task, from, to, now); }

 private:
  MmCid* mm_;
  internal::SwitchLayout layout_;
};

inline MmCidSwitcher MmCid::Switcher() { return MmCidSwitcher(*this); }

}  // namespace isolation::mm_cid

#endif  // ISOLATION_MM_CID_SWITCHER_H_
