// SPDX-License-Identifier: GPL-2.0-or-later
// The `v63_mmlock` design (v6.3, [INTRO] af7f588d8f73 "sched: Introduce
// per-memory-map concurrency ID"): the optional baseline of the variants
// table (docs/mm_cid.md).  One per-mm spinlock (mm->cid_lock) guards the cid bitmap;
// every context switch between tasks of *different* mms releases prev's ID
// and allocates next's (first zero, set) under that lock -- two lock round
// trips, every CPU running the mm on the same lock, which is the contention
// Aaron Lu reported (`__schedule` 7.30 % -> 49.01 %) and [LF] removed.  A
// switch between two tasks of the *same* mm hands the ID over without any
// lock or atomic.  A task holds an ID only while it runs: there is no
// per-CPU slot, no migration hook, no compaction scan (IDs are always
// allocated first-zero among the running tasks, so they are compact by
// construction).
//
// Library choices (documented in docs/mm_cid.md):
//   - the raw spinlock is internal::CountingSpinLock (test-and-test-and-set,
//     yields to the host scheduler while spinning) so that acquisitions and
//     contended acquisitions can be counted (MmCidStats::mm_lock_*);
//   - the bitmap is a plain CpuMask guarded by the lock, as v6.3 used
//     non-atomic __cpumask_set_cpu/__cpumask_clear_cpu under it; observers
//     take the lock without counting it;
//   - v6.3 has no mm_cpus_allowed; MmAllowed()/MmAllowedWeight() report the
//     union the library tracks for every design (observers only).

#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "isolation/core/interleave.h"
#include "isolation/core/mutex.h"
#include "isolation/mm_cid/mm_cid.h"
#include "mm_cid/always_check.h"
#include "mm_cid/builtins.h"
#include "mm_cid/designs/design_common.h"
#include "mm_cid/internal.h"
#include "mm_cid/mm_registry.h"

namespace isolation::mm_cid::internal {
namespace {

// The mm's ID state: the lock and what it guards share one cache line
// group; nothing else in the mm is written on the switch path.
struct alignas(64) Mm {
  // The affinity is copied here, before the mm is published: a constructor
  // needs no lock (and the analysis does not check constructors).
  Mm(MmId mm_id, int p, const CpuMask& affinity) : id(mm_id), cidmask(p), allowed(p) {
    allowed.CopyFrom(affinity);
  }
  const MmId id;
  mutable CountingSpinLock cid_lock;          // mm->cid_lock (observers lock it uncounted)
  CpuMask cidmask ABSL_GUARDED_BY(cid_lock);  // indexed by ID
  int64_t allocations ABSL_GUARDED_BY(cid_lock) = 0;
  int64_t frees ABSL_GUARDED_BY(cid_lock) = 0;
  // Library bookkeeping, not on the switch path.
  alignas(64) mutable Mutex allowed_lock;  // mutable: MmAllowed() takes it
  CpuMask allowed ABSL_GUARDED_BY(allowed_lock);
  std::atomic<int> nr_cpus_allowed{0};
  std::atomic<int> users{0};  // mm_users (threads)
};

struct alignas(64) Task {
  std::atomic<MmId> mm{kNoMm};
  std::atomic<bool> active{false};  // mm_cid_active
  std::atomic<int32_t> mm_cid{-1};  // written in its CPU's context; read by observers
  std::atomic<int> cpu{-1};         // CPU it last switched in on (observers)
  bool ran = false;                 // switched in at least once (ForkFailed precondition)
  bool exists = false;
};

struct alignas(64) Cpu {
  std::atomic<TaskId> curr{kNoTask};  // rq->curr
  int64_t context_switches = 0;       // written only in this CPU's context
  int64_t switch_locks = 0;           // cid_lock round trips inside ContextSwitch
};

class V63MmLockMmCid final : public DesignCommon<V63MmLockMmCid>, private AlwaysInvariants {
  friend DesignCommon<V63MmLockMmCid>;

 public:
  V63MmLockMmCid(int p, Limits limits)
      : DesignCommon(p),
        limits_(limits),
        tasks_(new Task[static_cast<size_t>(limits.max_tasks)]),
        cpus_(new Cpu[static_cast<size_t>(p)]),
        mms_(limits.max_mms) {}

  // mm_init_cid(): lock initialised, bitmap cleared.
  absl::StatusOr<MmId> CreateMm(const CpuMask& affinity, Nanos now) override {
    (void)now;
    ISOLATION_RETURN_IF_ERROR(CheckCreatorAffinity(affinity, num_cpus_));
    return mms_.Create([&](MmId id) {
      auto mm = std::make_unique<Mm>(id, num_cpus_, affinity);
      mm->nr_cpus_allowed.store(affinity.Weight(), std::memory_order_relaxed);
      return mm;
    });
  }

  // dup_task_struct() (mm_cid = -1, inactive) + sched_mm_cid_fork(): the
  // child becomes active; no ID before its first switch-in.
  absl::Status Fork(TaskId parent, TaskId child, MmId mm_id, const CpuMask& affinity,
                    Nanos now) override {
    (void)now;
    ISOLATION_RETURN_IF_ERROR(BeginFork(parent, child, mm_id, affinity));
    Mm* mm = GetMm(mm_id);
    Task& t = tasks_[child];
    int bound = task_id_bound_.load(std::memory_order_relaxed);
    while (bound < child + 1 &&
           !task_id_bound_.compare_exchange_weak(bound, child + 1, std::memory_order_relaxed)) {
    }
    t.mm_cid.store(-1, std::memory_order_relaxed);
    t.cpu.store(affinity.First(), std::memory_order_relaxed);
    mm->users.fetch_add(1, std::memory_order_relaxed);
    UnionAffinity(*mm, affinity);
    t.mm.store(mm_id, std::memory_order_relaxed);
    t.active.store(true, std::memory_order_relaxed);
    return absl::OkStatus();
  }

  // The bad_fork_* rollback of copy_process() after copy_mm(): the child
  // never ran, so it holds no ID; only mm_users is dropped (mmput()).
  absl::Status ForkFailed(TaskId child, Nanos now) override {
    (void)now;
    return RollBackUnrunFork(child);
  }
  // ForkVm (CLONE_VM without CLONE_THREAD): DesignCommon's plain fork, as
  // v6.3 walks no tasks.

  // v6.3 keeps no per-mm CPU union; only the library's observer union grows.
  absl::Status SetAffinity(TaskId task, const CpuMask& mask, Nanos now) override {
    (void)now;
    ISOLATION_RETURN_IF_ERROR(
        CheckSetAffinityArgs(tasks_.get(), limits_.max_tasks, task, mask, num_cpus_));
    if (Mm* mm = GetMm(tasks_[task].mm.load(std::memory_order_relaxed))) UnionAffinity(*mm, mask);
    return absl::OkStatus();
  }

  // switch_mm_cid(prev, next), from prepare_task_switch() with the rq lock
  // held (here: the caller's per-CPU serialisation).
  void ContextSwitch(int cpu, TaskId prev, TaskId next, Nanos now) override {
    (void)now;
    ContractSwitch(cpu, prev, next);
    Cpu& c = cpus_[cpu];
    ++c.context_switches;
    notes_.Switch(cpu, prev, next);
    c.curr.store(next, std::memory_order_relaxed);
    Task* p = prev == kNoTask ? nullptr : &tasks_[prev];
    Task* n = next == kNoTask ? nullptr : &tasks_[next];
    if (n != nullptr) n->ran = true;  // this CPU's context, like the switch itself
    const bool next_active = n != nullptr && n->active.load(std::memory_order_relaxed);
    if (p != nullptr && p->active.load(std::memory_order_relaxed)) {
      const MmId pmm = p->mm.load(std::memory_order_relaxed);
      if (next_active && n->mm.load(std::memory_order_relaxed) == pmm) {
        // Threads of one mm: hand the ID over, no lock, no atomic RMW.
        n->mm_cid.store(p->mm_cid.load(std::memory_order_relaxed), std::memory_order_relaxed);
        n->cpu.store(cpu, std::memory_order_relaxed);
        p->mm_cid.store(-1, std::memory_order_relaxed);
        return;
      }
      if (Put(*GetMm(pmm), p->mm_cid.load(std::memory_order_relaxed))) ++c.switch_locks;
      p->mm_cid.store(-1, std::memory_order_relaxed);
    }
    if (next_active) {
      n->cpu.store(cpu, std::memory_order_relaxed);
      n->mm_cid.store(Get(*GetMm(n->mm.load(std::memory_order_relaxed))),
                      std::memory_order_relaxed);
      ++c.switch_locks;
    }
  }

  // No migration hook in v6.3 (a task that is not running holds no ID) and
  // no compaction (nothing is ever scanned or queued): Migrate, Tick,
  // ReturnToUser and Scan are DesignCommon's, the contracts only.

  // sched_mm_cid_exit_signals(): put the ID (under the mm lock), mm_cid = -1,
  // inactive.  `task` is current on `cpu`; its later switch-out sees it
  // inactive and does nothing.
  absl::Status Exit(int cpu, TaskId task, Nanos now) override {
    (void)now;
    ISOLATION_RETURN_IF_ERROR(
        CheckTaskOnCpu("Exit", tasks_.get(), limits_.max_tasks, task, cpu, num_cpus_));
    Task& t = tasks_[task];
    Mm* mm = GetMm(t.mm.load(std::memory_order_relaxed));
    if (mm == nullptr || !t.active.load(std::memory_order_relaxed)) return absl::OkStatus();
    notes_.Cpu(cpu);
    notes_.Task(task);
    Put(*mm, t.mm_cid.load(std::memory_order_relaxed));
    t.mm_cid.store(-1, std::memory_order_relaxed);
    t.active.store(false, std::memory_order_relaxed);
    mm->users.fetch_sub(1, std::memory_order_relaxed);  // exit_mm() -> mmput()
    return absl::OkStatus();
  }

  // sched_mm_cid_before_execve() (= the exit put), the new mm
  // (mm_init_cid() in mm_init()/exec_mmap()), sched_mm_cid_after_execve():
  // active again with mm_cid_get() of the new mm.
  absl::StatusOr<MmId> Exec(int cpu, TaskId task, const CpuMask& affinity, Nanos now) override {
    ISOLATION_ASSIGN_OR_RETURN(const MmId new_id, BeginExec(cpu, task, affinity, now));
    Task& t = tasks_[task];
    notes_.Cpu(cpu);
    notes_.Task(task);
    Mm& mm = *GetMm(new_id);
    mm.users.fetch_add(1, std::memory_order_relaxed);
    t.mm.store(new_id, std::memory_order_relaxed);
    t.cpu.store(cpu, std::memory_order_relaxed);
    t.mm_cid.store(Get(mm), std::memory_order_relaxed);
    t.active.store(true, std::memory_order_relaxed);
    return new_id;
  }

  int32_t TaskCid(TaskId task) const override {
    if (task < 0 || task >= limits_.max_tasks) return -1;
    return tasks_[task].mm_cid.load(std::memory_order_relaxed);
  }
  // The other observers are DesignCommon's; its per-mm reads (the bitmap
  // under the mm lock, uncounted):
  static int UsersOf(const Mm& m) { return m.users.load(std::memory_order_relaxed); }
  static int AllowedWeightOf(const Mm& m) {
    return m.nr_cpus_allowed.load(std::memory_order_relaxed);
  }
  static CpuMask AllowedOf(const Mm& m) {
    MutexLock l(m.allowed_lock);
    return m.allowed;
  }
  static CpuMask CidBitsOf(const Mm& m) { return Snapshot(m).bits; }

  // CheckAlways() (DesignCommon's, over the parts below): I1 (IDs of the
  // running active tasks of an mm are distinct), I2 (< P), the bitmap holds
  // every running task's ID (the v6.3 analogue of I4: no ID in use is
  // free), I15 (an inactive task holds no ID), allocation failures.  Not
  // applicable: I3 (no nr_cpus_allowed bound in v6.3; the allocation is
  // first-zero among running tasks, which tests check directly), I4 (no
  // slots, no remote reclaim), I7-I9 (no scan).

  // Accounting at quiescence (the v6.3 form of I5/I6): the set bits of each
  // mm's bitmap are exactly the IDs of its running active tasks, each once;
  // a task that is not running holds no ID; allocations - frees = popcount.
  std::vector<std::string> CheckQuiescent() const override {
    std::vector<std::string> v;
    const int nmms = NumMms();
    std::vector<CpuMask> held(static_cast<size_t>(nmms), CpuMask(num_cpus_));
    for (int c = 0; c < num_cpus_; ++c) {
      const TaskId t = cpus_[c].curr.load(std::memory_order_relaxed);
      if (t == kNoTask || !tasks_[t].active.load(std::memory_order_relaxed)) continue;
      const int32_t k = tasks_[t].mm_cid.load(std::memory_order_relaxed);
      if (k >= 0 && k < num_cpus_)
        held[static_cast<size_t>(tasks_[t].mm.load(std::memory_order_relaxed))].Set(k);
    }
    for (TaskId t = 0; t < TaskIdBound(); ++t) {
      if (!tasks_[t].exists) continue;
      const int32_t k = tasks_[t].mm_cid.load(std::memory_order_relaxed);
      const int cpu = tasks_[t].cpu.load(std::memory_order_relaxed);
      const bool running = cpu >= 0 && cpus_[cpu].curr.load(std::memory_order_relaxed) == t;
      if (k >= 0 && !running)
        v.push_back(absl::StrCat("I5(v63): task ", t, " holds ID ", k, " while not running"));
    }
    for (int m = 0; m < nmms; ++m) {
      const MmSnapshot s = Snapshot(*GetMm(m));
      if (!(s.bits == held[static_cast<size_t>(m)])) {
        v.push_back(absl::StrCat("I5(v63): mm ", m, " bitmap {", s.bits.ToString(),
                                 "} != running IDs {", held[static_cast<size_t>(m)].ToString(),
                                 "}"));
      }
      if (s.frees > s.allocations)
        v.push_back(absl::StrCat("I6: mm ", m, " freed more IDs than it allocated"));
      if (s.allocations - s.frees != s.bits.Weight()) {
        v.push_back(absl::StrCat("I6: mm ", m, " allocations-frees=", s.allocations - s.frees,
                                 " != popcount ", s.bits.Weight()));
      }
    }
    return v;
  }

  MmCidStats Stats() const override {
    MmCidStats s;
    for (int m = 0; m < NumMms(); ++m) {
      const Mm& mm = *GetMm(m);
      const MmSnapshot snap = Snapshot(mm);
      s.allocations += snap.allocations;
      s.frees += snap.frees;
      s.mm_lock_acquisitions += mm.cid_lock.acquisitions();
      s.mm_lock_contended += mm.cid_lock.contended();
    }
    s.bitmap_ops = s.allocations + s.frees;
    for (int c = 0; c < num_cpus_; ++c) {
      s.context_switches += cpus_[c].context_switches;
      // Each cid_lock round trip is at least one atomic exchange.
      s.switch_rmw += cpus_[c].switch_locks;
    }
    s.alloc_failures = alloc_failures_.load(std::memory_order_relaxed);
    s.max_alloc_attempts = s.allocations > 0 ? 1 : 0;  // first-zero under the lock never retries
    return s;
  }

 private:
  struct MmSnapshot {
    CpuMask bits;
    int64_t allocations = 0;
    int64_t frees = 0;
  };
  // CheckAlways(), per part (always_check.h).
  CpuCheck CheckCpu(int c, Findings& before, Findings& after) const override {
    CpuCheck r;
    const int32_t k = CheckRunningTaskId(c, before, r);
    if (k < 0) return r;
    const TaskId t = r.task;
    const MmId m = r.mm;
    if (!BitSet(*GetMm(m), k)) {
      after.Add([&] {
        return absl::StrCat("v63 held: running task ", t, " on CPU ", c, " holds ID ", k,
                            " whose bit is free");
      });
    }
    return r;
  }
  // Atomics only (Fork may run on another thread): a task never forked is
  // inactive with mm_cid -1, so it needs no `exists` test.
  int TaskBound() const override { return TaskIdBound(); }
  void CheckTask(TaskId t, Findings& f) const override {
    if (tasks_[t].active.load(std::memory_order_relaxed)) return;
    if (const int32_t k = tasks_[t].mm_cid.load(std::memory_order_relaxed); k >= 0) {
      f.Add([&] { return absl::StrCat("I15: inactive task ", t, " still holds ID ", k); });
    }
  }
  void CheckGlobal(Findings& f) const override {
    if (int64_t n = alloc_failures_.load(std::memory_order_relaxed)) {
      f.Add(
          [&] { return absl::StrCat("I14/alloc: ", n, " allocations found no free ID below P"); });
    }
  }

  // Observers read the lock-guarded state under the lock, uncounted.
  static MmSnapshot Snapshot(const Mm& mm) {
    mm.cid_lock.lock_uncounted();
    MmSnapshot s{mm.cidmask, mm.allocations, mm.frees};
    mm.cid_lock.unlock();
    return s;
  }
  static bool BitSet(const Mm& mm, int cid) {
    mm.cid_lock.lock_uncounted();
    const bool set = mm.cidmask.Test(cid);
    mm.cid_lock.unlock();
    return set;
  }
  // One past the highest task id ever forked (observers iterate up to it).
  int TaskIdBound() const { return task_id_bound_.load(std::memory_order_relaxed); }

  void UnionAffinity(Mm& mm, const CpuMask& mask) {
    MutexLock l(mm.allowed_lock);
    mm.allowed.Or(mask);
    mm.nr_cpus_allowed.store(mm.allowed.Weight(), std::memory_order_relaxed);
  }

  // mm_cid_get() + __mm_cid_get(): first zero below P, set, under the lock.
  int32_t Get(Mm& mm) {
    // The point is before the lock, not inside it: an actor parked while
    // holding the spinlock would leave any other lock taker spinning with
    // the baton (interleave.h), so every explored schedule would hang.
    ISOLATION_INTERLEAVE_POINT("mm_cid.v63.before_get_lock");
    mm.cid_lock.lock();
    const int cid = mm.cidmask.FirstZero();
    if (cid >= num_cpus_) {
      mm.cid_lock.unlock();
      alloc_failures_.fetch_add(1, std::memory_order_relaxed);
      return -1;
    }
    mm.cidmask.Set(cid);
    ++mm.allocations;
    notes_.Id(mm.id, cid);
    mm.cid_lock.unlock();
    return cid;
  }
  // mm_cid_put(): nothing for -1; else clear the bit under the lock.
  // Returns whether the lock was taken.
  bool Put(Mm& mm, int32_t cid) {
    if (cid < 0) return false;
    mm.cid_lock.lock();
    mm.cidmask.Clear(cid);
    ++mm.frees;
    notes_.Id(mm.id, cid);
    mm.cid_lock.unlock();
    return true;
  }

  Limits limits_;
  std::unique_ptr<Task[]> tasks_;
  std::unique_ptr<Cpu[]> cpus_;
  MmRegistry<Mm> mms_;
  ChangeNotes notes_;  // CheckAlwaysIncremental()'s journal
  std::atomic<int64_t> alloc_failures_{0};
  std::atomic<int> task_id_bound_{0};
};

}  // namespace

DesignEntry V63MmLockDesignEntry() {
  DesignTraits traits;
  traits.converges_at_schedin = true;  // put at switch-out, first zero at switch-in
  return {"v63_mmlock",
          "v6.3 baseline (af7f588d8f73): per-mm spinlock around first-zero/set/clear at every "
          "cross-mm switch",
          /*negative_control=*/false,
          DesignFactory{[](int num_cpus, const LazyConfig&,
                           const MmCid::Limits& limits) -> absl::StatusOr<std::unique_ptr<MmCid>> {
                          return std::unique_ptr<MmCid>(new V63MmLockMmCid(num_cpus, limits));
                        },
                        traits}};
}

}  // namespace isolation::mm_cid::internal
