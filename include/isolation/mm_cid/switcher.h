// SPDX-License-Identifier: GPL-2.0-or-later
// -----------------------------------------------------------------------------
// mm_cid/switcher.h
// -----------------------------------------------------------------------------
//
// MmCidSwitcher: an MmCid's context-switch hook compiled into its caller, as
// the kernel compiles switch_mm_cid() -- a static inline of
// kernel/sched/sched.h -- into context_switch().  MmCid::ContextSwitch is a
// virtual call into the library; a harness that switches millions of times
// measures that call as much as the mechanism (docs/performance.md, goal 1).  The
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
// The layouts the designs share with the switcher are in
// mm_cid/internal/layouts.h, not for use outside the library and this header.

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
#include "isolation/mm_cid/internal/layouts.h"
#include "isolation/mm_cid/mm_cid.h"
#include "isolation/mm_cid/types.h"

namespace isolation::mm_cid {

// The designs' layouts and cached paths: mm_cid/internal/layouts.h.

// An MmCidSwitcher whose form F is a compile-time constant (made by
// MmCidSwitcher::WithSwitchForm, which picks F = form()): the same switch
// with no test of the form, its few fields plain scalars a loop keeps in
// registers.  Same contract and thread-safety as MmCidSwitcher.
template <internal::SwitchForm F>
class MmCidFormSwitcher {
 public:
  MmCidFormSwitcher(MmCid* mm, const internal::SwitchLayout& layout)
      : mm_(mm),
        tasks_(layout.tasks),
        cpus_(layout.cpus),
        journaled_(layout.journaled),
        shift_(layout.task_shift) {}

  static constexpr internal::SwitchForm form() { return F; }
  MmCid& mm() const { return *mm_; }

  // switch_mm_cid(): MmCid::ContextSwitch's contract and result.
  void ContextSwitch(int cpu, TaskId prev, TaskId next, Nanos now) {
    ISOLATION_CONTRACT(cpu >= 0 && cpu < mm_->num_cpus(),
                       "mm_cid Switcher ContextSwitch: cpu %d outside [0, %d)", cpu,
                       mm_->num_cpus());
    ISOLATION_CONTRACT(prev == kNoTask || (prev >= 0 && prev < mm_->max_tasks()),
                       "mm_cid Switcher ContextSwitch: prev %d outside [0, %d) and not kNoTask",
                       prev, mm_->max_tasks());
    ISOLATION_CONTRACT(next == kNoTask || (next >= 0 && next < mm_->max_tasks()),
                       "mm_cid Switcher ContextSwitch: next %d outside [0, %d) and not kNoTask",
                       next, mm_->max_tasks());
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
  [[gnu::noinline]] static void Redo(MmCid* mm, int64_t* count, int cpu, TaskId prev, TaskId next,
                                     Nanos now) {
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
        c, [this](TaskId t) -> L::TaskSwitchState& { return TaskAt<L::TaskSwitchState>(t); }, cpu,
        prev, next, now, redo, redo);
  }
  void Owner619(int cpu, TaskId prev, TaskId next, Nanos now) const {
    namespace O = internal::owner619_layout;
    Journal(cpu, prev, next);
    O::Cpu& c = static_cast<O::Cpu*>(cpus_)[cpu];
    ++c.switches;
    MmCid* mm = mm_;
    O::SwitchCached<O::ModeWord>(
        c, [this](TaskId t) -> O::TaskSwitchState& { return TaskAt<O::TaskSwitchState>(t); }, cpu,
        prev, next, [&](uint32_t, uint32_t) { return Redo(mm, &c.switches, cpu, prev, next, now); },
        [&](O::TaskSwitchState&, O::MmSwitchState&) {
          return Redo(mm, &c.switches, cpu, prev, next, now);
        });
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
