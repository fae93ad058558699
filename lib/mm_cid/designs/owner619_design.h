// SPDX-License-Identifier: GPL-2.0-or-later
// owner619_design.h (mm_cid module, not installed): the `owner619` design
// (6.19 rewrite, [REWRITE]): IDs owned either by tasks (per-task mode) or by
// CPUs (per-CPU mode), switched by user-count thresholds, with the TRANSIT
// bit covering the fixup walk.
//
// The design's historical fixes are a compile-time policy `Fixes`, one per
// registered design: owner619.cc (mainline 7.0: every fix), and the negative
// controls (controls/) owner619_direct.cc (no TRANSIT hand-over, pre-4327fb13fa47),
// owner619_walk619.cc (the 6.19 fixup walk and fork order) and
// owner619_split_mode.cc (pre-47ee94efccf6 mode layout).  Each instantiation
// compiles only its own code, so the mainline switch carries no branch for a
// control.  Only those four files include this.
//
// The observers and argument contracts shared with the other designs are
// DesignCommon's (design_common.h).  There is no scan: the fixup walk of a
// mode change (Transition) runs inside fork, exit and affinity changes.
//
// Library choices (documented in docs/mm_cid.md):
//   - each CPU's rq lock is MmCid::RunQueueLock(cpu): the caller holds it
//     around ContextSwitch (the real-thread driver's own per-CPU lock, bound
//     by the Hooks adapter; the switch takes no lock), Exit/Exec/the fixups
//     take it, as the kernel's do;
//   - in per-CPU mode a task switching out drops its copy of the CPU's ID
//     (task ID = UNSET), so "no task owns an ID" (I11) holds literally;
//   - the affinity-growth deferred work (irq_work -> work) runs synchronously
//     inside SetAffinity.
//   - the mode is read and written through store_buffer.h (ReadMode /
//     WriteMode), so that a StoreBufferModel can show what the two fences of
//     47ee94efccf6 do; owner619_split_mode (negative control) keeps the
//     pre-fix layout: separate `percpu` and `transit` words, no fences.

#ifndef ISOLATION_LIB_MM_CID_DESIGNS_OWNER619_DESIGN_H_
#define ISOLATION_LIB_MM_CID_DESIGNS_OWNER619_DESIGN_H_

#include <algorithm>
#include <atomic>
#include <bit>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "isolation/core/interleave.h"
#include "isolation/core/mutex.h"
#include "isolation/mm_cid/mm_cid.h"
#include "isolation/mm_cid/registry.h"
#include "isolation/core/store_buffer.h"
#include "mm_cid/always_check.h"
#include "mm_cid/designs/design_common.h"
#include "mm_cid/internal.h"
#include "mm_cid/mm_registry.h"
#include "mm_cid/per_cpu_slots.h"

namespace isolation::mm_cid::internal {
namespace owner619_design {

// The flags, the slot, the task's and mm's switch fields, the per-CPU
// state and the cached switch are shared with the inline front end
// (switcher.h).
using owner619_layout::Cpu;
using owner619_layout::HasId;
using owner619_layout::IdOf;
using owner619_layout::kFlags;
using owner619_layout::kOnCpu;
using owner619_layout::kTransit;
using owner619_layout::kUnset;
using owner619_layout::Slot;
using owner619_layout::TaskOwned;

// mm->mm_cid.pcpu (Slot: the per-CPU ID, 4 bytes as in the kernel) is
// stored per CPU (per_cpu_slots.h), so CPUs never share its cache lines.
// pcpu, mode (0, TRANSIT, ONCPU, ONCPU|TRANSIT: one word, 47ee94efccf6) and
// max_cids are owner619_layout::MmSwitchState's.
struct Mm : owner619_layout::MmSwitchState {
  // The creator's affinity is copied here, before the mm is published (a
  // constructor needs no lock; the analysis does not check constructors).
  Mm(int p, PerCpuRef<Slot> slots, const CpuMask& affinity)
      : MmSwitchState(slots), cidmask(p), allowed(p) {
    allowed.CopyFrom(affinity);
    nr_cpus_allowed = affinity.Weight();
  }
  // owner619_split_mode only (pre-47ee94efccf6): mm_cid.percpu (0/1) and
  // mm_cid.transit (0/TRANSIT), written and read separately.
  std::atomic<uint32_t> percpu{0};
  std::atomic<uint32_t> transit{0};
  AtomicCpuMask cidmask;
  // mutable: the const observers (MmAllowed, CheckQuiescent) take them.
  mutable Mutex mutex;  // fork/exit/deferred work: users, mode changes
  mutable Mutex lock;   // max_cids, affinity; nests inside mutex and rq locks
  CpuMask allowed ABSL_GUARDED_BY(lock);
  int nr_cpus_allowed = 0;
  // Written with both mutex and lock held, so either suffices to read it;
  // the analysis has no "either", so it checks the stricter half (mutex).
  int users ABSL_GUARDED_BY(mutex) = 0;
  int pcpu_thrs ABSL_GUARDED_BY(lock) = 0;
  std::vector<TaskId> user_list ABSL_GUARDED_BY(mutex);
};

// active, mm_ptr (t->mm, set beside `mm` wherever it names an mm: Fork,
// Exec; read only by the task's own switches while active, which the harness
// orders after the Fork/Exec that wrote it), cid, cpu and ran are
// owner619_layout::TaskSwitchState's.
struct alignas(64) Task : owner619_layout::TaskSwitchState {
  std::atomic<MmId> mm{kNoMm};
  // Thread group (tgid): the parent's for a thread, its own for a task made
  // by ForkVm (vfork / CLONE_VM without CLONE_THREAD).  Read only by the
  // owner619_walk619 walk.
  std::atomic<TaskId> tgid{kNoTask};
  // In the thread and task lists (attach_pid()); only owner619_walk619's
  // task-list walk depends on it.
  std::atomic<bool> visible{false};
  bool exists = false;
};
static_assert(std::has_single_bit(sizeof(Task)), "the switcher indexes tasks by a shift");
// The Mm a task's mm_ptr names (it is always one).
inline Mm& MmOf(const owner619_layout::TaskSwitchState& t) { return static_cast<Mm&>(*t.mm_ptr); }

// The mainline fixes; a control's policy sets one of them false.
//   transit_handover: tasks->CPUs hand-overs during a transition use
//     TRANSIT (4327fb13fa47); false = direct ONCPU transfer.
//   user_list_walk: the 7.0 fork order (visible, then a user) and the
//     per-mm user list walk; false = the 6.19 walk (owner619_walk619).
//   mode_word: one mode word with two fences (47ee94efccf6); false = the
//     split percpu/transit words without fences.
struct MainlineFixes {
  static constexpr bool kTransitHandover = true;
  static constexpr bool kUserListWalk = true;
  static constexpr bool kModeWord = true;
};

template <typename Fixes>
class Owner619MmCid final : public DesignCommon<Owner619MmCid<Fixes>>, private AlwaysInvariants {
  using Common = DesignCommon<Owner619MmCid>;
  friend Common;
  // The base is dependent: name what this class uses of it and of MmCid.
  using Common::BeginFork;
  using Common::CheckRunningTaskId;
  using Common::ContractMigrate;
  using Common::ContractSwitch;
  using Common::GetMm;
  using Common::num_cpus_;
  using Common::NumMms;
  using Common::ProgressBound;
  using Common::RunQueueLock;

 public:
  using typename Common::Limits;

  Owner619MmCid(int p, Limits limits)
      : Common(p),
        limits_(limits),
        tasks_(new Task[static_cast<size_t>(limits.max_tasks)]),
        cpus_(new Cpu[static_cast<size_t>(p)]),
        slots_(p),
        mms_(limits.max_mms) {
    // The switcher's owner619 form reads the one mode word; the split-word
    // control forwards every switch.
    this->template PublishSwitchLayout<owner619_layout::TaskSwitchState>(
        Fixes::kModeWord ? SwitchForm::kOwner619 : SwitchForm::kVirtual);
  }

  // ReadMode as the shared cached switch takes it.
  struct ModeReader {
    static uint32_t Read(const owner619_layout::MmSwitchState& mm) {
      return ReadMode(static_cast<const Mm&>(mm));
    }
  };

  absl::StatusOr<MmId> CreateMm(const CpuMask& affinity, Nanos now) override {
    (void)now;
    ISOLATION_RETURN_IF_ERROR(CheckCreatorAffinity(affinity, num_cpus_));
    return mms_.Create([&](MmId id) {
      (void)id;
      return std::make_unique<Mm>(num_cpus_, slots_.Allocate(), affinity);
    });
  }

  absl::Status Fork(TaskId parent, TaskId child, MmId mm_id, const CpuMask& affinity,
                    Nanos now) override {
    return ForkImpl(parent, child, mm_id, affinity, now, /*clone_thread=*/true);
  }
  absl::Status ForkVm(TaskId parent, TaskId child, MmId mm_id, const CpuMask& affinity,
                      Nanos now) override {
    return ForkImpl(parent, child, mm_id, affinity, now, /*clone_thread=*/false);
  }

  // copy_process() ... sched_mm_cid_fork().  7.0 (default): the child is
  // made visible (thread/task lists) first, then accounted as a user and put
  // on the mm's user list in one step under the mutex, so a concurrent fixup
  // either sees it as a user or it is not a user yet.  owner619_walk619: the
  // 6.19 order -- accounted in copy_mm() (ID allocated), visible only later;
  // the interleave point sits in that window.
  absl::Status ForkImpl(TaskId parent, TaskId child, MmId mm_id, const CpuMask& affinity, Nanos now,
                        bool clone_thread) {
    (void)now;
    ISOLATION_RETURN_IF_ERROR(BeginFork(parent, child, mm_id, affinity));
    Mm* mm = GetMm(mm_id);
    Task& t = tasks_[child];
    t.ran = false;
    t.cid.store(kUnset, std::memory_order_relaxed);
    t.cpu.store(affinity.First(), std::memory_order_relaxed);
    t.mm.store(mm_id, std::memory_order_relaxed);
    t.mm_ptr = mm;
    const TaskId parent_tgid = parent != kNoTask && tasks_[parent].exists
                                   ? tasks_[parent].tgid.load(std::memory_order_relaxed)
                                   : kNoTask;
    t.tgid.store(clone_thread && parent_tgid != kNoTask ? parent_tgid : child,
                 std::memory_order_relaxed);
    NoteTaskId(child);
    if constexpr (Fixes::kUserListWalk) {
      t.visible.store(true, std::memory_order_relaxed);  // attach_pid() before sched_post_fork()
      ISOLATION_INTERLEAVE_POINT("mm_cid.owner619.fork.visible_not_user");
    }
    const absl::Status s = AddUser(parent, child, mm_id, *mm, affinity, parent_tgid);
    if constexpr (!Fixes::kUserListWalk) {
      ISOLATION_INTERLEAVE_POINT("mm_cid.owner619.fork.user_not_visible");
      t.visible.store(true, std::memory_order_relaxed);
    }
    return s;
  }

  // sched_mm_cid_fork() proper.
  absl::Status AddUser(TaskId parent, TaskId child, MmId mm_id, Mm& mm_ref, const CpuMask& affinity,
                       TaskId parent_tgid) {
    Mm* mm = &mm_ref;
    Task& t = tasks_[child];
    MutexLock ml(mm->mutex);
    bool flip = false;
    {
      MutexLock l(mm->lock);
      mm->allowed.Or(affinity);
      mm->nr_cpus_allowed = mm->allowed.Weight();
      mm->users++;
      mm->user_list.push_back(child);
      t.active.store(true, std::memory_order_relaxed);
      flip = UpdateMaxCids(*mm);
      if (!flip && (ReadMode(*mm) & kOnCpu) == 0) {
        // Per-task mode: the child gets its own ID now (not yet visible).
        int64_t attempts = 0;
        t.cid.store(AllocCid(*mm, attempts), std::memory_order_relaxed);
      }
    }
    if (flip) {
      // To per-CPU: the parent's own task ID goes into transit, then fix
      // up every other user (tasks -> CPUs).
      // (A harness may fork from a parent that is not running; then the
      // parent is fixed up like every other user.)
      TaskId self = kNoTask;
      if (parent != kNoTask && parent >= 0 && parent < limits_.max_tasks &&
          tasks_[parent].mm.load(std::memory_order_relaxed) == mm_id) {
        const int pcpu = tasks_[parent].cpu.load(std::memory_order_relaxed);
        MutexLock rq(RunQueueLock(pcpu));
        const uint32_t pc = tasks_[parent].cid.load(std::memory_order_relaxed);
        if (cpus_[pcpu].curr.load(std::memory_order_relaxed) == parent) {
          self = parent;
          if (TaskOwned(pc)) {
            notes_.Task(parent);
            tasks_[parent].cid.store(IdOf(pc) | kTransit, std::memory_order_relaxed);
            mm->pcpu[pcpu].cid = IdOf(pc) | kTransit;
          }
        }
      }
      Transition(*mm, mm_id, /*to_per_cpu=*/true, self, child, parent_tgid);
    }
    return absl::OkStatus();
  }

  // mm_update_cpus_allowed()
  absl::Status SetAffinity(TaskId task, const CpuMask& mask, Nanos now) override {
    (void)now;
    ISOLATION_RETURN_IF_ERROR(
        CheckSetAffinityArgs(tasks_.get(), limits_.max_tasks, task, mask, num_cpus_));
    const MmId mm_id = tasks_[task].mm.load(std::memory_order_relaxed);
    Mm* mm = GetMm(mm_id);
    if (mm == nullptr) return absl::OkStatus();
    MutexLock ml(mm->mutex);  // the deferred work's mutex (run synchronously)
    bool to_per_task = false;
    {
      MutexLock l(mm->lock);
      if (mm->users == 0) return absl::OkStatus();
      const int before = mm->nr_cpus_allowed;
      mm->allowed.Or(mask);
      mm->nr_cpus_allowed = mm->allowed.Weight();
      if (mm->nr_cpus_allowed == before) return absl::OkStatus();
      to_per_task = UpdateMaxCids(*mm);
      // Growth can only make per-task more attractive.
      to_per_task = to_per_task && (ReadMode(*mm) & kOnCpu) != 0;
    }
    if (to_per_task) Transition(*mm, mm_id, /*to_per_cpu=*/false, kNoTask, kNoTask);
    return absl::OkStatus();
  }

  // mm_cid_switch_to(): schedout(prev) then schedin(next), with the CPU's
  // rq lock (RunQueueLock(cpu)) held by the caller, as context_switch()
  // holds it: this takes no lock.  The fixups that write this CPU's slot and
  // its tasks' IDs from other threads take that lock.
  //
  // The fast path (no incremental check attached, the outgoing task's
  // mm_cid_schedout() a no-op, the incoming task's mm_cid_schedin() one of
  // its two fast cases) is a leaf: it makes no call, so it saves no
  // callee-saved register.  Everything else continues out of line in a tail
  // call (a jump) that takes the values already loaded: no word is read
  // twice.
  void ContextSwitch(int cpu, TaskId prev, TaskId next, Nanos now) override {
    (void)now;
    ContractSwitch(cpu, prev, next);
    if (__builtin_expect(notes_.Enabled(), 0)) return SwitchJournaled(cpu, prev, next);
    SwitchBody(cpu, prev, next);
  }

  [[gnu::noinline]] void SwitchJournaled(int cpu, TaskId prev, TaskId next) {
    notes_.Switch(cpu, prev, next);
    SwitchBody(cpu, prev, next);
  }

  // The cached path is owner619_layout::SwitchCached (switcher.h), which the
  // inline front end runs too; its slow paths are the tail calls below.
  [[gnu::always_inline]] void SwitchBody(int cpu, TaskId prev, TaskId next) {
    Cpu& c = cpus_[cpu];
    ++c.switches;
    owner619_layout::SwitchCached<ModeReader>(
        c, [this](TaskId t) -> owner619_layout::TaskSwitchState& { return tasks_[t]; }, cpu, prev,
        next,
        [&](uint32_t tcid, uint32_t mode) {
          return SwitchSchedoutSlow(cpu, prev, next, tcid, mode);
        },
        [&](owner619_layout::TaskSwitchState& t, owner619_layout::MmSwitchState& mm) {
          return SchedinSlow(cpu, static_cast<Task&>(t), static_cast<Mm&>(mm));
        });
  }
  [[gnu::noinline]] void SwitchSchedoutSlow(int cpu, TaskId prev, TaskId next, uint32_t tcid,
                                            uint32_t mode) {
    Schedout(cpu, tasks_[prev], tcid, mode);
    cpus_[cpu].curr.store(next, std::memory_order_relaxed);
    if (next != kNoTask) {
      tasks_[next].cpu.store(cpu, std::memory_order_relaxed);
      tasks_[next].ran = true;
      Schedin(cpu, next);
    }
  }
  void JournalSwitch(int cpu, TaskId prev, TaskId next) override { notes_.Switch(cpu, prev, next); }

  // Tasks keep their IDs across migrations (I13).
  void Migrate(TaskId task, int from, int to, Nanos now) override {
    (void)now;
    ContractMigrate(task, from, to);
    notes_.Task(task);
    tasks_[task].cpu.store(to, std::memory_order_relaxed);
  }

  // No background work at all in this design: Tick, ReturnToUser and Scan
  // are DesignCommon's (the contracts, nothing queued).

  // sched_mm_cid_exit()
  absl::Status Exit(int cpu, TaskId task, Nanos now) override {
    (void)now;
    // Validated first: an unknown task or CPU would have this spin on a lock
    // that does not exist.
    ISOLATION_RETURN_IF_ERROR(
        CheckTaskOnCpu("Exit", tasks_.get(), limits_.max_tasks, task, cpu, num_cpus_));
    Task& t = tasks_[task];
    const MmId mm_id = t.mm.load(std::memory_order_relaxed);
    Mm* mm = GetMm(mm_id);
    if (mm == nullptr || !t.active.load(std::memory_order_relaxed)) return absl::OkStatus();
    notes_.Cpu(cpu);
    notes_.Task(task);
    MutexLock ml(mm->mutex);
    bool to_per_task = false;
    {
      MutexLock rq(RunQueueLock(cpu));
      MutexLock l(mm->lock);
      if (mm->users == 1 && cpus_[cpu].curr.load(std::memory_order_relaxed) == task) {
        // mm_cid_transit_to_task(): a CPU-owned ID becomes the task's transit
        // ID so that removing the user frees it.
        const uint32_t s = mm->pcpu[cpu].cid;
        if (HasId(s) && (s & kOnCpu)) {
          t.cid.store(IdOf(s) | kTransit, std::memory_order_relaxed);
          mm->pcpu[cpu].cid = IdOf(s) | kTransit;
        }
      }
      // Remove the user: inactive, strip TRANSIT, drop a task-owned ID.
      t.active.store(false, std::memory_order_relaxed);
      const uint32_t c = t.cid.load(std::memory_order_relaxed);
      if (TaskOwned(c)) {
        if (IdOf(mm->pcpu[cpu].cid) == IdOf(c) && HasId(mm->pcpu[cpu].cid))
          mm->pcpu[cpu].cid = kUnset;
        FreeCid(*mm, IdOf(c));
      }
      t.cid.store(kUnset, std::memory_order_relaxed);
      mm->users--;
      mm->user_list.erase(std::remove(mm->user_list.begin(), mm->user_list.end(), task),
                          mm->user_list.end());
      if (mm->users > 0) {
        to_per_task = UpdateMaxCids(*mm) && (ReadMode(*mm) & kOnCpu) != 0;
        if (to_per_task) {
          const uint32_t s = mm->pcpu[cpu].cid;  // drop the local CPU-owned ID
          if (HasId(s) && (s & kOnCpu)) {
            FreeCid(*mm, IdOf(s));
            mm->pcpu[cpu].cid = kUnset;
          }
        }
      } else {
        WriteMode(*mm, 0);
        mm->pcpu_thrs = 0;
      }
    }
    if (to_per_task) Transition(*mm, mm_id, /*to_per_cpu=*/false, kNoTask, kNoTask);
    return absl::OkStatus();
  }

  // Exec = exit, then fork into a fresh mm (first user: store in the slot).
  absl::StatusOr<MmId> Exec(int cpu, TaskId task, const CpuMask& affinity, Nanos now) override {
    ISOLATION_ASSIGN_OR_RETURN(const MmId id, this->BeginExec(cpu, task, affinity, now));
    Task& t = tasks_[task];
    Mm& mm = *GetMm(id);
    MutexLock ml(mm.mutex);
    MutexLock rq(RunQueueLock(cpu));
    MutexLock l(mm.lock);
    notes_.Cpu(cpu);
    notes_.Task(task);
    t.mm.store(id, std::memory_order_relaxed);
    t.mm_ptr = &mm;
    t.ran = true;
    t.tgid.store(task,
                 std::memory_order_relaxed);  // de_thread(): the exec'ing task leads the group
    mm.users = 1;
    mm.user_list.push_back(task);
    UpdateMaxCids(mm);
    int64_t attempts = 0;
    const uint32_t c = AllocCid(mm, attempts);
    t.cid.store(c, std::memory_order_relaxed);
    mm.pcpu[cpu].cid = c;
    t.active.store(true, std::memory_order_relaxed);
    return id;
  }

  // The copy_process() error path after the child was accounted
  // (bad_fork_cleanup_mm: sched_mm_cid_exit() of the child in 6.19; in 7.0
  // sched_mm_cid_fork() runs after the last failure point, so a failing
  // clone is never accounted -- this is then the no-op it undoes).  Same
  // removal as an exit, for a task that is not running: drop the ID the fork
  // allocated, users--, and if that crosses pcpu_thrs flip back to per-task
  // with the CPUs->tasks fixup.
  absl::Status ForkFailed(TaskId child, Nanos now) override {
    (void)now;
    const bool in_range = child >= 0 && child < limits_.max_tasks;
    ISOLATION_RETURN_IF_ERROR(CheckForkFailedArgs(
        child, limits_.max_tasks, in_range && tasks_[child].exists, in_range && tasks_[child].ran,
        in_range && GetMm(tasks_[child].mm.load(std::memory_order_relaxed)),
        in_range && tasks_[child].active.load(std::memory_order_relaxed)));
    Task& t = tasks_[child];
    notes_.Task(child);
    const MmId mm_id = t.mm.load(std::memory_order_relaxed);
    Mm* mm = GetMm(mm_id);
    bool to_per_task = false;
    {
      MutexLock ml(mm->mutex);
      {
        MutexLock l(mm->lock);
        t.active.store(false, std::memory_order_relaxed);
        const uint32_t c = t.cid.load(std::memory_order_relaxed);
        if (TaskOwned(c)) FreeCid(*mm, IdOf(c));  // never ran: no slot holds it
        t.cid.store(kUnset, std::memory_order_relaxed);
        mm->users--;
        mm->user_list.erase(std::remove(mm->user_list.begin(), mm->user_list.end(), child),
                            mm->user_list.end());
        if (mm->users > 0) {
          to_per_task = UpdateMaxCids(*mm) && (ReadMode(*mm) & kOnCpu) != 0;
        } else {
          WriteMode(*mm, 0);
          mm->pcpu_thrs = 0;
        }
      }
      if (to_per_task) Transition(*mm, mm_id, /*to_per_cpu=*/false, kNoTask, kNoTask);
    }
    t.visible.store(false, std::memory_order_relaxed);
    t.mm.store(kNoMm, std::memory_order_relaxed);
    t.exists = false;  // free_task(): the id may be forked again
    return absl::OkStatus();
  }

  int32_t TaskCid(TaskId task) const override {
    if (task < 0 || task >= limits_.max_tasks) return -1;
    const Task& t = tasks_[task];
    const int cpu = t.cpu.load(std::memory_order_relaxed);
    if (cpus_[cpu].curr.load(std::memory_order_relaxed) != task) return -1;
    const uint32_t c = t.cid.load(std::memory_order_relaxed);
    return HasId(c) ? static_cast<int32_t>(IdOf(c)) : -1;
  }
  // The other observers and CheckAlways() are DesignCommon's; its per-mm
  // reads take the mm's locks (they are not on the switch path):
  static int UsersOf(const Mm& m) {
    MutexLock ml(m.mutex);
    return m.users;
  }
  static int AllowedWeightOf(const Mm& m) { return m.nr_cpus_allowed; }
  static CpuMask AllowedOf(const Mm& m) {
    MutexLock l(m.lock);
    return m.allowed;
  }
  static const AtomicCpuMask& CidBitsOf(const Mm& m) { return m.cidmask; }

  std::vector<std::string> CheckQuiescent() const override {
    std::vector<std::string> v;
    for (int m = 0; m < NumMms(); ++m) {
      const Mm* mmp = GetMm(m);
      if (mmp == nullptr) continue;
      const Mm& mm = *mmp;
      // Quiescent: nothing contends; the locks are for the analysis (the
      // same order as the mechanism's: mutex, then lock).
      MutexLock ml(mm.mutex);
      MutexLock l(mm.lock);
      const uint32_t mode = RawMode(mm);
      // I12
      if ((mm.pcpu_thrs != 0) != ((mode & kOnCpu) != 0) && mm.users > 0) {
        v.push_back(absl::StrCat("I12: mm ", m, " pcpu_thrs ", mm.pcpu_thrs, " vs mode ", mode));
      }
      if ((mode & kOnCpu) && (mm.pcpu_thrs < 1 || mm.pcpu_thrs > std::max(num_cpus_ / 2, 1))) {
        v.push_back(absl::StrCat("I12: mm ", m, " pcpu_thrs ", mm.pcpu_thrs, " out of [1, P/2]"));
      }
      if (mode & kTransit) {
        v.push_back(absl::StrCat("mm ", m, " left in TRANSIT mode"));
        continue;
      }
      // I5 + I11
      CpuMask held(num_cpus_);
      for (TaskId t : mm.user_list) {
        const uint32_t c = tasks_[t].cid.load(std::memory_order_relaxed);
        if (c & kOnCpu) {
          const int cpu = tasks_[t].cpu.load(std::memory_order_relaxed);
          const bool running = cpus_[cpu].curr.load(std::memory_order_relaxed) == t;
          if (!(mode & kOnCpu))
            v.push_back(absl::StrCat("I11: per-task mm ", m, " task ", t, " carries ONCPU"));
          if (!running || mm.pcpu[cpu].cid != c) {
            v.push_back(absl::StrCat("I11: per-CPU mm ", m, " task ", t,
                                     " holds a CPU ID while not running"));
          }
          continue;
        }
        if (!TaskOwned(c)) continue;
        if (mode & kOnCpu) {
          // Allowed only as the running task's not-yet-scheduled-out transit
          // ID, equal to its CPU's slot.
          const int cpu = tasks_[t].cpu.load(std::memory_order_relaxed);
          const bool running = cpus_[cpu].curr.load(std::memory_order_relaxed) == t;
          if (!running || mm.pcpu[cpu].cid != c || !(c & kTransit)) {
            v.push_back(absl::StrCat("I11: per-CPU mm ", m, " task ", t, " owns ID ", IdOf(c)));
          }
        }
        if (held.TestAndSet(static_cast<int>(IdOf(c)))) {
          v.push_back(absl::StrCat("I5: mm ", m, " ID ", IdOf(c), " owned twice"));
        }
      }
      for (int c = 0; c < num_cpus_; ++c) {
        const uint32_t s = mm.pcpu[c].cid;
        if (!HasId(s) || !(s & kOnCpu)) continue;
        if (!(mode & kOnCpu))
          v.push_back(absl::StrCat("I11: per-task mm ", m, " CPU ", c, " owns an ID"));
        if (held.TestAndSet(static_cast<int>(IdOf(s)))) {
          v.push_back(absl::StrCat("I5: mm ", m, " ID ", IdOf(s), " owned twice (CPU ", c, ")"));
        }
      }
      const CpuMask bits = mm.cidmask.Snapshot();
      if (!(bits == held)) {
        v.push_back(absl::StrCat("I5: mm ", m, " bitmap {", bits.ToString(), "} != owned {",
                                 held.ToString(), "}"));
      }
    }
    return v;
  }

  MmCidStats Stats() const override {
    MmCidStats s;
    s.allocations = allocations_.load(std::memory_order_relaxed);
    s.frees = frees_.load(std::memory_order_relaxed);
    s.bitmap_ops = s.allocations + s.frees;
    for (int c = 0; c < num_cpus_; ++c) {
      s.context_switches += cpus_[c].switches;
      s.switch_rmw += cpus_[c].switch_rmw;
    }
    s.max_alloc_attempts = max_attempts_.load(std::memory_order_relaxed);
    s.alloc_failures = alloc_failures_.load(std::memory_order_relaxed);
    s.mode_changes = mode_changes_.load(std::memory_order_relaxed);
    s.remote_lock_acquisitions = remote_locks_.load(std::memory_order_relaxed);
    return s;
  }

 private:
  // CheckAlways(), per part (always_check.h).  Per CPU: I14 (a running
  // active task has an ID), I2 (< P), I1 via `unique`.  Global: I14 (no
  // allocation exceeded the progress bound).
  CpuCheck CheckCpu(int c, Findings& before, Findings& after) const override {
    (void)after;
    CpuCheck r;
    CheckRunningTaskId(c, before, r);
    return r;
  }
  void CheckGlobal(Findings& f) const override {
    if (int64_t n = alloc_failures_.load(std::memory_order_relaxed)) {
      f.Add([&] {
        return absl::StrCat("I14: ", n, " allocations exceeded the progress bound ",
                            ProgressBound());
      });
    }
  }

  // READ_ONCE(mm->mm_cid.mode), or percpu + transit in the split layout.
  static uint32_t ReadMode(const Mm& mm) {
    if constexpr (!Fixes::kModeWord) {
      const uint32_t percpu = store_buffer::Load(mm.percpu, std::memory_order_relaxed);
      return (percpu != 0 ? kOnCpu : 0u) |
             store_buffer::Load(mm.transit, std::memory_order_relaxed);
    }
    return store_buffer::Load(mm.mode, std::memory_order_relaxed);
  }
  void WriteMode(Mm& mm, uint32_t mode) {
    if constexpr (!Fixes::kModeWord) {
      mm.percpu.store((mode & kOnCpu) != 0 ? 1 : 0, std::memory_order_relaxed);
      mm.transit.store(mode & kTransit, std::memory_order_relaxed);
      return;
    }
    store_buffer::Store(mm.mode, mode, std::memory_order_relaxed);
  }
  // Observers: the value in memory, whatever any buffer holds.
  uint32_t RawMode(const Mm& mm) const {
    if constexpr (!Fixes::kModeWord) {
      return (mm.percpu.load(std::memory_order_relaxed) != 0 ? kOnCpu : 0u) |
             mm.transit.load(std::memory_order_relaxed);
    }
    return mm.mode.load(std::memory_order_relaxed);
  }

  // __mm_update_max_cids() + mm_cid_calc_pcpu_thrs(); returns true if the
  // mode must flip.  Caller holds mm.lock.
  bool UpdateMaxCids(Mm& mm) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mm.mutex, mm.lock) {
    const int opt = std::min(mm.nr_cpus_allowed, mm.users);
    const int max_cids = std::min(opt + opt / 4, num_cpus_);
    mm.max_cids.store(max_cids, std::memory_order_relaxed);
    const bool per_cpu = (ReadMode(mm) & kOnCpu) != 0;
    if (!per_cpu && mm.users > max_cids) {
      mm.pcpu_thrs = std::max(std::min(opt - opt / 4, num_cpus_ / 2), 1);
      return true;
    }
    if (per_cpu && mm.users < mm.pcpu_thrs) {
      mm.pcpu_thrs = 0;
      return true;
    }
    return false;
  }

  void FreeCid(Mm& mm, uint32_t id) {
    mm.cidmask.Clear(static_cast<int>(id), std::memory_order_release);
    frees_.fetch_add(1, std::memory_order_relaxed);
  }
  // mm_get_cid(): first zero below max_cids, then spin over [0, P) with a
  // bound (the kernel spins without one; the bound makes the S8 live lock
  // observable as an I14 violation instead of a hang).
  uint32_t AllocCid(Mm& mm, int64_t& attempts) {
    int limit = mm.max_cids.load(std::memory_order_relaxed);
    for (int i = 0; i < ProgressBound(); ++i) {
      ++attempts;
      const int id = mm.cidmask.FirstZero();
      if (id < limit && !mm.cidmask.TestAndSet(id, std::memory_order_acq_rel)) {
        allocations_.fetch_add(1, std::memory_order_relaxed);
        NoteAttempts(attempts);
        return static_cast<uint32_t>(id);
      }
      limit = num_cpus_;
      if (i > 4 * num_cpus_) std::this_thread::yield();
    }
    NoteAttempts(attempts);
    alloc_failures_.fetch_add(1, std::memory_order_relaxed);
    return kUnset;
  }
  void NoteAttempts(int64_t a) {
    int64_t prev = max_attempts_.load(std::memory_order_relaxed);
    while (a > prev && !max_attempts_.compare_exchange_weak(prev, a, std::memory_order_relaxed)) {
    }
  }
  // mm_cid_converge(): move an out-of-range ID below max_cids if one is free.
  uint32_t Converge(Mm& mm, uint32_t c, Cpu& cpu) {
    const int max_cids = mm.max_cids.load(std::memory_order_relaxed);
    const int id = mm.cidmask.FirstZero();
    if (id >= max_cids) return c;
    ++cpu.switch_rmw;
    if (mm.cidmask.TestAndSet(id, std::memory_order_acq_rel)) return c;
    allocations_.fetch_add(1, std::memory_order_relaxed);
    FreeCid(mm, IdOf(c));
    return static_cast<uint32_t>(id) | (c & kFlags);
  }

  // mm_cid_schedin(): the two fast paths inline -- per-task mode with no
  // flag on the task's ID or the CPU's slot and the ID in range (the slot
  // takes the task's ID), per-CPU mode with the CPU's ID in the task already
  // -- everything else out of line.
  // (owner619_layout::SchedinCached, shared with the switcher.)
  void Schedin(int cpu, TaskId task) {
    owner619_layout::SchedinCached<ModeReader>(
        cpu, tasks_[task],
        [&](owner619_layout::TaskSwitchState& t, owner619_layout::MmSwitchState& mm) {
          return SchedinSlow(cpu, static_cast<Task&>(t), static_cast<Mm&>(mm));
        });
  }
  [[gnu::noinline]] void SchedinSlow(int cpu, Task& t, Mm& mm) {
    Cpu& c = cpus_[cpu];
    uint32_t& slot = mm.pcpu[cpu].cid;
    uint32_t tcid = t.cid.load(std::memory_order_relaxed);
    const uint32_t mode = ReadMode(mm);
    const uint32_t max_cids = static_cast<uint32_t>(mm.max_cids.load(std::memory_order_relaxed));
    const int64_t allocs_before = allocations_.load(std::memory_order_relaxed);
    int64_t attempts = 0;
    if ((mode & kOnCpu) == 0) {
      // Per-task mode.  Fast path: no flags anywhere, ID in range.
      if ((tcid | slot) < kTransit) {
        if (tcid >= max_cids) tcid = Converge(mm, tcid, c);
        slot = tcid;
        t.cid.store(tcid, std::memory_order_relaxed);
        return;
      }
      // Slow path (leftovers of per-CPU mode or a transition).
      if (HasId(slot) && (slot & kOnCpu)) {
        if (TaskOwned(tcid)) {
          FreeCid(mm, IdOf(slot));  // the task already owns one: drop the CPU's
          ++c.switch_rmw;
        } else {
          tcid = IdOf(slot);  // adopt the CPU-owned ID
        }
        slot = kUnset;
      }
      if (!TaskOwned(tcid)) tcid = AllocCid(mm, attempts);
      if (HasId(tcid)) {
        tcid = IdOf(tcid) | (mode & kTransit);
        slot = tcid;
      }
      t.cid.store(tcid, std::memory_order_relaxed);
    } else {
      // Per-CPU mode.  Fast path: both carry ONCPU and the ID is in range.
      if (HasId(slot) && (slot & kOnCpu) && HasId(tcid) && (tcid & kOnCpu) &&
          IdOf(slot) == IdOf(tcid) && IdOf(slot) < max_cids) {
        return;
      }
      if (HasId(slot) && (slot & kOnCpu) && (mode & kTransit) == 0 && IdOf(slot) >= max_cids) {
        slot = Converge(mm, slot, c);
      }
      if (TaskOwned(tcid)) {
        if (HasId(slot) && (slot & kOnCpu)) {
          FreeCid(mm, IdOf(tcid));  // the CPU already owns one
          ++c.switch_rmw;
        } else {
          // Hand the task's ID to the CPU.  During the transition it stays a
          // temporary plain ID|TRANSIT (4327fb13fa47) unless the direct
          // negative control is selected.
          slot = (mode & kTransit) && Fixes::kTransitHandover ? (IdOf(tcid) | kTransit)
                                                              : (IdOf(tcid) | kOnCpu);
        }
      }
      if (!HasId(slot) || !(slot & (kOnCpu | kTransit))) {
        const uint32_t id = AllocCid(mm, attempts);
        slot = !HasId(id) ? kUnset
                          : ((mode & kTransit) && Fixes::kTransitHandover ? (id | kTransit)
                                                                          : (id | kOnCpu));
      }
      t.cid.store(slot, std::memory_order_relaxed);
    }
    c.switch_rmw += allocations_.load(std::memory_order_relaxed) - allocs_before;
  }

  // mm_cid_schedout() of an active task whose ID word `tcid` and mm mode
  // `mode` the caller loaded (owner619_layout::SchedoutIsNoop said it has
  // something to do: a TRANSIT ID, or in per-CPU mode the CPU's ID).
  void Schedout(int cpu, Task& t, uint32_t tcid, uint32_t mode) {
    Mm& mm = MmOf(t);
    uint32_t& slot = mm.pcpu[cpu].cid;
    if (HasId(tcid) && (tcid & kTransit)) {
      const uint32_t id = IdOf(tcid);
      if ((mode & kTransit) == 0 &&
          id < static_cast<uint32_t>(mm.max_cids.load(std::memory_order_relaxed))) {
        // Keep it (4463c7aa11a6): permanent in the current mode's form.
        const uint32_t v = (mode & kOnCpu) ? (id | kOnCpu) : id;
        t.cid.store(v, std::memory_order_relaxed);
        slot = v;
      } else {
        FreeCid(mm, id);
        ++cpus_[cpu].switch_rmw;
        t.cid.store(kUnset, std::memory_order_relaxed);
        if (HasId(slot) && IdOf(slot) == id) slot = kUnset;
      }
    }
    // Per-CPU mode: the CPU keeps its ID; the task does not own it.
    if ((mode & kOnCpu) && (t.cid.load(std::memory_order_relaxed) & kOnCpu)) {
      t.cid.store(kUnset, std::memory_order_relaxed);
    }
  }

  // Mode change with fixup.  Caller holds mm.mutex, no rq lock, not mm.lock.
  void Transition(Mm& mm, MmId mm_id, bool to_per_cpu, TaskId self, TaskId skip,
                  TaskId group_tgid = kNoTask) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mm.mutex) {
    mode_changes_.fetch_add(1, std::memory_order_relaxed);
    if constexpr (!Fixes::kModeWord) {
      // Pre-47ee94efccf6 (negative control): WRITE_ONCE(transit, TRANSIT);
      // WRITE_ONCE(percpu, new) and no fence.  A weakly ordered CPU (PowerPC)
      // may make the second store visible first; a FIFO store buffer cannot
      // produce that, so the control issues them in that visible order, as
      // plain stores, with a point between: a reader there sees the new
      // percpu and transit == 0, i.e. a stable mode.
      mm.percpu.store(to_per_cpu ? 1 : 0, std::memory_order_relaxed);
      ISOLATION_INTERLEAVE_POINT("mm_cid.owner619.split_mode.percpu_visible");
      mm.transit.store(kTransit, std::memory_order_relaxed);
    } else {
      // mode ^= ONCPU|TRANSIT, then a full fence before taking any rq lock (a
      // lock acquire does not keep an earlier store before it).
      store_buffer::Store(mm.mode, to_per_cpu ? (kOnCpu | kTransit) : kTransit,
                          std::memory_order_relaxed);
      FullFence();
    }
    if (to_per_cpu && !Fixes::kUserListWalk) {
      WalkTasksToCpus619(mm, mm_id, self, skip, group_tgid);
    } else if (to_per_cpu) {
      // Tasks -> CPUs, 7.0: walk the mm's user list (every registered user,
      // threads and CLONE_VM sharers alike).
      const std::vector<TaskId> users = mm.user_list;
      for (TaskId u : users) {
        if (u == self || u == skip) continue;
        FixupTaskToCpu(mm, mm_id, u);
      }
    } else {
      // CPUs -> tasks: walk every possible CPU.
      for (int cpu = 0; cpu < num_cpus_; ++cpu) {
        ISOLATION_INTERLEAVE_POINT("mm_cid.owner619.fixup_cpu");
        MutexLock rq(RunQueueLock(cpu));
        remote_locks_.fetch_add(1, std::memory_order_relaxed);
        uint32_t& s = mm.pcpu[cpu].cid;
        const TaskId curr = cpus_[cpu].curr.load(std::memory_order_relaxed);
        const bool user_running = curr != kNoTask &&
                                  tasks_[curr].active.load(std::memory_order_relaxed) &&
                                  tasks_[curr].mm.load(std::memory_order_relaxed) == mm_id;
        if (user_running) notes_.Task(curr);
        if (HasId(s) && (s & kOnCpu)) {
          if (user_running) {
            s = IdOf(s) | kTransit;
            tasks_[curr].cid.store(s, std::memory_order_relaxed);
          } else {
            FreeCid(mm, IdOf(s));
            s = kUnset;
          }
        } else if (user_running) {
          const uint32_t c = tasks_[curr].cid.load(std::memory_order_relaxed);
          if (TaskOwned(c) && !(c & kTransit)) {
            tasks_[curr].cid.store(c | kTransit, std::memory_order_relaxed);
            s = c | kTransit;
          }
        }
      }
    }
    // Full fence, then the final mode (mm_cid_complete_transit()).
    if constexpr (!Fixes::kModeWord) {
      mm.transit.store(0, std::memory_order_relaxed);
    } else {
      FullFence();
      store_buffer::Store(mm.mode, to_per_cpu ? kOnCpu : 0u, std::memory_order_relaxed);
    }
    notes_.Task(skip);
    if (to_per_cpu && skip != kNoTask) tasks_[skip].cid.store(kUnset, std::memory_order_relaxed);
    if (!to_per_cpu && skip != kNoTask) {
      int64_t attempts = 0;
      tasks_[skip].cid.store(AllocCid(mm, attempts), std::memory_order_relaxed);
    }
  }

  // mm_cid_fixup_task_to_cpu(): under the task's rq lock, a task-owned ID of
  // a running task goes into transit with its CPU, of a queued task back to
  // the pool.  Returns false for a task that is not an active user (not in
  // the users count).
  bool FixupTaskToCpu(Mm& mm, MmId mm_id, TaskId u) {
    ISOLATION_INTERLEAVE_POINT("mm_cid.owner619.fixup_task");
    const int cpu = tasks_[u].cpu.load(std::memory_order_relaxed);
    MutexLock rq(RunQueueLock(cpu));
    remote_locks_.fetch_add(1, std::memory_order_relaxed);
    if (!tasks_[u].active.load(std::memory_order_relaxed) ||
        tasks_[u].mm.load(std::memory_order_relaxed) != mm_id) {
      return false;
    }
    const uint32_t c = tasks_[u].cid.load(std::memory_order_relaxed);
    if (!TaskOwned(c)) return true;
    notes_.Task(u);
    if (cpus_[cpu].curr.load(std::memory_order_relaxed) == u) {
      const uint32_t v = Fixes::kTransitHandover ? (IdOf(c) | kTransit) : (IdOf(c) | kOnCpu);
      tasks_[u].cid.store(v, std::memory_order_relaxed);
      mm.pcpu[cpu].cid = v;
    } else {
      FreeCid(mm, IdOf(c));
      tasks_[u].cid.store(kUnset, std::memory_order_relaxed);
    }
    return true;
  }

  // owner619_walk619 (negative control): mm_cid_do_fixup_tasks_to_cpus() as
  // merged for 6.19, before the 7.0-rc4 fixes.  Budget = users - 2 (the
  // caller and the incoming child are handled by the fork).  Pass 1: the
  // other threads of the caller's thread group (for_other_threads).  Pass 2,
  // if budget is left: every visible task with this mm
  // (for_each_process_thread) -- the thread-group tasks are counted again,
  // so the budget can run out before a CLONE_VM sharer of another thread
  // group is reached ("Handle vfork()/CLONE_VM correctly").  Invisible
  // tasks (a child accounted in copy_mm() but not yet attached) are never
  // reached ("Prevent CID stalls due to concurrent forks").
  void WalkTasksToCpus619(Mm& mm, MmId mm_id, TaskId self, TaskId skip, TaskId group_tgid)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mm.mutex) {
    int budget = mm.users - 2;
    if (budget <= 0) return;
    const int n = max_task_id_.load(std::memory_order_relaxed) + 1;
    auto eligible = [&](TaskId u) {
      // `visible` (atomic) implies the task exists; `exists` itself is a
      // plain field of the forking thread.
      return u != self && u != skip && tasks_[u].visible.load(std::memory_order_relaxed) &&
             tasks_[u].mm.load(std::memory_order_relaxed) == mm_id;
    };
    for (TaskId u = 0; u < n; ++u) {
      if (!eligible(u) || tasks_[u].tgid.load(std::memory_order_relaxed) != group_tgid) continue;
      if (FixupTaskToCpu(mm, mm_id, u)) --budget;
    }
    if (budget <= 0) return;
    for (TaskId u = 0; u < n; ++u) {
      if (!eligible(u)) continue;
      if (FixupTaskToCpu(mm, mm_id, u) && --budget == 0) return;
    }
  }

  void NoteTaskId(TaskId t) {
    int prev = max_task_id_.load(std::memory_order_relaxed);
    while (t > prev && !max_task_id_.compare_exchange_weak(prev, t, std::memory_order_relaxed)) {
    }
  }

  Limits limits_;
  std::atomic<int> max_task_id_{-1};
  std::unique_ptr<Task[]> tasks_;
  std::unique_ptr<Cpu[]> cpus_;
  // Guarded by the registry's lock (Allocate() runs in CreateMm's callback,
  // under mms_'s private lock): not annotated, the analysis cannot see a
  // lock that another object takes around a callback.
  PerCpuSlots<Slot> slots_;
  MmRegistry<Mm> mms_;
  ChangeNotes notes_;  // CheckAlwaysIncremental()'s journal
  std::atomic<int64_t> allocations_{0};
  std::atomic<int64_t> frees_{0};
  std::atomic<int64_t> max_attempts_{0};
  std::atomic<int64_t> alloc_failures_{0};
  std::atomic<int64_t> mode_changes_{0};
  std::atomic<int64_t> remote_locks_{0};
};

}  // namespace owner619_design

template <typename Fixes>
absl::StatusOr<std::unique_ptr<MmCid>> MakeOwner619Design(int num_cpus,
                                                          const MmCid::Limits& limits) {
  return std::unique_ptr<MmCid>(new owner619_design::Owner619MmCid<Fixes>(num_cpus, limits));
}

// owner619 and its controls take no configuration; what they share.
inline DesignTraits Owner619Traits() {
  DesignTraits traits;
  traits.ids_at_fork = true;
  traits.converges_at_schedin = true;
  traits.ownership_modes = true;
  traits.id_bound = DesignTraits::IdBound::kMaxCids;
  return traits;
}

}  // namespace isolation::mm_cid::internal

#endif  // ISOLATION_LIB_MM_CID_DESIGNS_OWNER619_DESIGN_H_
