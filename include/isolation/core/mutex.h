// SPDX-License-Identifier: GPL-2.0-or-later
// -----------------------------------------------------------------------------
// mutex.h
// -----------------------------------------------------------------------------
//
// isolation::Mutex, MutexLock and CondVar: std::mutex, a scoped guard and
// std::condition_variable with clang thread-safety annotations, so that a
// member declared ABSL_GUARDED_BY(mu_) or a function declared
// ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) is checked at compile time
// (-Wthread-safety, an error in clang builds: cmake/Warnings.cmake).
// libstdc++'s std::mutex carries no annotations, so the analysis cannot see
// it being taken; these wrappers are what it sees.
//
// Kernel counterpart: the kernel's sleeping `struct mutex` and, where the
// library models one with a blocking lock, raw_spinlock_t (rq->lock,
// pi_lock, timer_base lock).  lockdep is the kernel's run-time checker of
// the same discipline; this is a compile-time subset of it (which lock
// guards which data, which function needs which lock held), not lock order.
//
// Why not absl::Mutex everywhere: the real-thread driver and the interleaver
// block in std::condition_variable, and TSan and the existing hot paths
// (rq locks, timer bases) are measured with std::mutex; these wrappers keep
// that mutex, inline, with no extra state -- the same code as std::mutex plus
// std::lock_guard.
//
// Thread-safety: Mutex is a std::mutex (not recursive; Unlock by the owner).
// A MutexLock is used by one thread.  CondVar is a std::condition_variable:
// Wait*() takes the MutexLock that holds the mutex, and the analysis treats
// the mutex as held across the wait, which is what the caller observes (it
// is re-taken before Wait returns).
//
// What the analysis cannot express (say so in a comment at the site):
//  - a lock reached through a run-time index (cpus_[cpu].mu guarding
//    cpus_[cpu]'s fields is fine; "the lock of the CPU the task is on" is not);
//  - a lock the library's *caller* holds (the harness's rq lock);
//  - ownership by convention (a per-CPU field only its CPU's thread writes).

#ifndef ISOLATION_CORE_MUTEX_H_
#define ISOLATION_CORE_MUTEX_H_

#include <chrono>
#include <condition_variable>
#include <mutex>

#include "absl/base/thread_annotations.h"

namespace isolation {

class ABSL_LOCKABLE Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void Lock() ABSL_EXCLUSIVE_LOCK_FUNCTION() { mu_.lock(); }
  void Unlock() ABSL_UNLOCK_FUNCTION() { mu_.unlock(); }
  bool TryLock() ABSL_EXCLUSIVE_TRYLOCK_FUNCTION(true) { return mu_.try_lock(); }

  // The Lockable spelling, so std::scoped_lock (several locks at once,
  // deadlock-free) and std::condition_variable_any accept a Mutex.
  void lock() ABSL_EXCLUSIVE_LOCK_FUNCTION() { mu_.lock(); }
  void unlock() ABSL_UNLOCK_FUNCTION() { mu_.unlock(); }
  bool try_lock() ABSL_EXCLUSIVE_TRYLOCK_FUNCTION(true) { return mu_.try_lock(); }

  // Tells the analysis the lock is held where it cannot follow (a callback
  // invoked under the lock by code the analysis does not see).  No run-time
  // check: std::mutex does not record its owner.
  void AssertHeld() const ABSL_ASSERT_EXCLUSIVE_LOCK() {}

 private:
  friend class CondVar;
  std::mutex mu_;
};

// std::lock_guard for Mutex, visible to the analysis.
class ABSL_SCOPED_LOCKABLE MutexLock {
 public:
  explicit MutexLock(Mutex& mu) ABSL_EXCLUSIVE_LOCK_FUNCTION(mu) : mu_(mu) { mu_.Lock(); }
  ~MutexLock() ABSL_UNLOCK_FUNCTION() { mu_.Unlock(); }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

 private:
  friend class CondVar;
  Mutex& mu_;
};

// std::condition_variable waiting on a Mutex held by a MutexLock.  The
// std::unique_lock it needs adopts the already-held std::mutex and gives it
// back before returning, so the guard still owns the lock afterwards.
// No predicate overloads: a predicate lambda is analysed as a function of
// its own, which does not hold the lock, so callers write the loop
// (`while (!ready) cv.Wait(lock);`, what wait(lock, pred) does) and the
// guarded reads stay visible to the analysis.
class CondVar {
 public:
  void Wait(MutexLock& lock) {
    std::unique_lock<std::mutex> ul(lock.mu_.mu_, std::adopt_lock);
    cv_.wait(ul);
    ul.release();
  }
  // Returns std::cv_status::timeout when `deadline` passed.
  template <typename Clock, typename Duration>
  std::cv_status WaitUntil(MutexLock& lock,
                           const std::chrono::time_point<Clock, Duration>& deadline) {
    std::unique_lock<std::mutex> ul(lock.mu_.mu_, std::adopt_lock);
    const std::cv_status st = cv_.wait_until(ul, deadline);
    ul.release();
    return st;
  }
  void NotifyOne() noexcept { cv_.notify_one(); }
  void NotifyAll() noexcept { cv_.notify_all(); }

 private:
  std::condition_variable cv_;
};

}  // namespace isolation

#endif  // ISOLATION_CORE_MUTEX_H_
