// SPDX-License-Identifier: GPL-2.0-or-later
// internal.h (mm_cid module, not installed): the argument checks the designs
// share, the full fence of their Dekker pairings, and the counting spinlock
// of the v6.3 design.

#ifndef ISOLATION_LIB_MM_CID_INTERNAL_H_
#define ISOLATION_LIB_MM_CID_INTERNAL_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "isolation/core/fence.h"
#include "isolation/core/contract.h"
#include "isolation/mm_cid/mm_cid.h"
#include "core/status_macros.h"
#include "isolation/core/store_buffer.h"

namespace isolation::mm_cid::internal {

// Argument checks every design's entry points make (outside input: the
// messages name the bad value).
// CreateMm(): the creator's affinity.
inline absl::Status CheckCreatorAffinity(const CpuMask& affinity, int num_cpus) {
  if (affinity.nbits() != num_cpus || affinity.Empty()) {
    return absl::InvalidArgumentError(absl::StrCat("mm_cid: creator affinity '",
                                                   affinity.ToString(), "' empty or not of ",
                                                   num_cpus, " CPUs"));
  }
  return absl::OkStatus();
}
// Fork()/ForkVm(): ids, the target mm (`mm_known`) and the child's affinity.
inline absl::Status CheckForkArgs(TaskId parent, TaskId child, bool child_exists, int max_tasks,
                                  MmId mm_id, bool mm_known, const CpuMask& affinity,
                                  int num_cpus) {
  if (child < 0 || child >= max_tasks || child_exists) {
    return absl::InvalidArgumentError(
        absl::StrCat("mm_cid: child task id ", child, " out of range or reused"));
  }
  if (parent != kNoTask && (parent < 0 || parent >= max_tasks)) {
    return absl::InvalidArgumentError(
        absl::StrCat("mm_cid: parent task id ", parent, " out of range"));
  }
  if (!mm_known) return absl::InvalidArgumentError(absl::StrCat("mm_cid: unknown mm ", mm_id));
  if (affinity.nbits() != num_cpus || affinity.Empty()) {
    return absl::InvalidArgumentError(absl::StrCat("mm_cid: task affinity '", affinity.ToString(),
                                                   "' empty or not of ", num_cpus, " CPUs"));
  }
  return absl::OkStatus();
}
// ForkFailed(): `child` must have been forked (`exists`), never run, still
// be an active user of a known mm.
inline absl::Status CheckForkFailedArgs(TaskId child, int max_tasks, bool exists, bool ran,
                                        bool mm_known, bool active) {
  if (child < 0 || child >= max_tasks || !exists) {
    return absl::InvalidArgumentError(
        absl::StrCat("mm_cid: ForkFailed of task id ", child, " that was not forked"));
  }
  if (ran || !mm_known || !active) {
    return absl::FailedPreconditionError(
        absl::StrCat("mm_cid: ForkFailed of task ", child, " that already ran or exited"));
  }
  return absl::OkStatus();
}
// Whether `t` is a task id that was forked (false outside [0, max_tasks)).
// `Task` is the design's task type (a plain `exists` flag written by Fork).
template <typename Task>
bool TaskKnown(const Task* tasks, int max_tasks, TaskId t) {
  return t >= 0 && t < max_tasks && tasks[t].exists;
}

// Contracts of the hot entry points (mm_cid.h REQUIRES): compiled in only
// where contract checks are on (contract.h), no cost otherwise.
inline void ContractCpu(const char* op, int cpu, int num_cpus) {
  ISOLATION_CONTRACT(cpu >= 0 && cpu < num_cpus, "mm_cid %s: cpu %d outside [0, %d)", op, cpu,
                     num_cpus);
}
// A task id in [0, max_tasks) (or kNoTask where `none_ok`).  A task id in
// range that was never forked (or whose fork failed) is inactive, which
// every design treats as "no ID" -- that is safe, so only the range is part
// of the contract (no read of another thread's `exists`).
inline void ContractTask(const char* op, int max_tasks, TaskId t, bool none_ok) {
  ISOLATION_CONTRACT((none_ok && t == kNoTask) || (t >= 0 && t < max_tasks),
                     "mm_cid %s: task %d outside [0, %d)%s", op, t, max_tasks,
                     none_ok ? " and not kNoTask" : "");
}

// Exit()/Exec(): validated always (not hot).  InvalidArgument naming the
// value for a CPU out of range or a task that was never forked.
template <typename Task>
absl::Status CheckTaskOnCpu(const char* op, const Task* tasks, int max_tasks, TaskId task, int cpu,
                            int num_cpus) {
  if (cpu < 0 || cpu >= num_cpus) {
    return absl::InvalidArgumentError(
        absl::StrCat("mm_cid: ", op, " on cpu ", cpu, " outside [0, ", num_cpus, ")"));
  }
  if (!TaskKnown(tasks, max_tasks, task)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "mm_cid: ", op, " of task ", task, ", never forked (ids are [0, ", max_tasks, "))"));
  }
  return absl::OkStatus();
}
// SetAffinity(): a forked task and a non-empty mask of num_cpus bits.
template <typename Task>
absl::Status CheckSetAffinityArgs(const Task* tasks, int max_tasks, TaskId task,
                                  const CpuMask& mask, int num_cpus) {
  if (!TaskKnown(tasks, max_tasks, task)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "mm_cid: SetAffinity of task ", task, ", never forked (ids are [0, ", max_tasks, "))"));
  }
  if (mask.nbits() != num_cpus || mask.Empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("mm_cid: SetAffinity of task ", task, " to mask '", mask.ToString(), "' of ",
                     mask.nbits(), " bits (need a non-empty mask of ", num_cpus, ")"));
  }
  return absl::OkStatus();
}

// The ForkFailed() rollback of the designs in which a child that never ran
// holds no ID (lazy, v63_mmlock): copy_process()'s bad_fork_cleanup_mm ->
// mmput() drops the user; free_task() lets the id be forked again.  Task
// is the design's type (atomic mm/active); get_mm(MmId) its mm or nullptr.
template <typename Task, typename GetMm>
absl::Status RollBackUnrunChild(Task* tasks, int max_tasks, TaskId child, GetMm get_mm) {
  const bool in_range = child >= 0 && child < max_tasks;
  Task* t = in_range ? &tasks[child] : nullptr;
  auto* mm = t != nullptr ? get_mm(t->mm.load(std::memory_order_relaxed)) : nullptr;
  const absl::Status st =
      CheckForkFailedArgs(child, max_tasks, t != nullptr && t->exists, t != nullptr && t->ran,
                          mm != nullptr, t != nullptr && t->active.load(std::memory_order_relaxed));
  if (!st.ok()) return st;
  t->active.store(false, std::memory_order_relaxed);
  mm->users.fetch_sub(1, std::memory_order_relaxed);
  t->mm.store(kNoMm, std::memory_order_relaxed);
  t->exists = false;
  return absl::OkStatus();
}

// smp_mb(): the full fence of the Dekker pairings (core/fence.h says why TSan
// builds use an RMW instead).  Under a StoreBufferModel (store_buffer.h) the
// fence also drains the calling thread's modelled store buffer; otherwise
// that is a relaxed load and a never-taken branch.
inline void FullFence() {
  store_buffer::OnFullFence();
  SeqCstFence();
}

// cpu_relax(): the spin-wait hint.
inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

// raw_spinlock_t as v6.3 uses it for mm->cid_lock, with the two statistics
// the baseline is about: acquisitions and contended acquisitions.
// Test-and-test-and-set: an uncontended lock() is one exchange.  When the
// first exchange finds the lock taken the acquisition counts as contended
// and the waiter spins on a relaxed load with cpu_relax(), yielding to the
// host scheduler every 64 spins: in user space the holder can be preempted
// (the kernel's holder cannot -- IRQs off, rq lock held), and on a 2-core
// box a pure spin against a preempted holder would burn the waiter's slice.
// Memory ordering: exchange(acquire) / store(release) is all a lock needs.
// `acquisitions_` is only written by the holder, so it is bumped with a
// relaxed load + store (no RMW on the fast path); it is atomic only so that
// observers may read it without the lock.  `contended_` is a relaxed
// fetch_add on the slow path only, done *before* spinning so that a test can
// wait for a waiter to be known contended.
// ABSL_LOCKABLE: the thread-safety analysis checks what it guards (the
// annotations are attributes only: no code).
class ABSL_LOCKABLE CountingSpinLock {
 public:
  void lock() ABSL_EXCLUSIVE_LOCK_FUNCTION() {
    if (locked_.exchange(true, std::memory_order_acquire)) {
      contended_.fetch_add(1, std::memory_order_relaxed);
      int spins = 0;
      do {
        while (locked_.load(std::memory_order_relaxed)) {
          CpuRelax();
          if (++spins % 64 == 0) std::this_thread::yield();
        }
      } while (locked_.exchange(true, std::memory_order_acquire));
    }
    acquisitions_.store(acquisitions_.load(std::memory_order_relaxed) + 1,
                        std::memory_order_relaxed);
  }
  // For observers (checks, statistics): takes the lock without counting.
  void lock_uncounted() ABSL_EXCLUSIVE_LOCK_FUNCTION() {
    while (locked_.exchange(true, std::memory_order_acquire)) {
      while (locked_.load(std::memory_order_relaxed)) std::this_thread::yield();
    }
  }
  void unlock() ABSL_UNLOCK_FUNCTION() { locked_.store(false, std::memory_order_release); }
  int64_t acquisitions() const { return acquisitions_.load(std::memory_order_relaxed); }
  int64_t contended() const { return contended_.load(std::memory_order_relaxed); }

 private:
  std::atomic<bool> locked_{false};
  std::atomic<int64_t> acquisitions_{0};
  std::atomic<int64_t> contended_{0};
};

}  // namespace isolation::mm_cid::internal

#endif  // ISOLATION_LIB_MM_CID_INTERNAL_H_
