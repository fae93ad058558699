// SPDX-License-Identifier: GPL-2.0-or-later
// internal.h (mm_cid module, not installed): factories of the three designs
// and the counting spinlock of the v6.3 design.

#ifndef ISOLATION_LIB_MM_CID_INTERNAL_H_
#define ISOLATION_LIB_MM_CID_INTERNAL_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <thread>

#include "absl/status/statusor.h"
#include "isolation/mm_cid.h"
#include "isolation/store_buffer.h"

namespace isolation::mm_cid::internal {

// smp_mb(): the full fence of the Dekker pairings.  ThreadSanitizer does not
// model atomic_thread_fence (g++ rejects it under -fsanitize=thread with
// -Werror=tsan), so TSan builds use a seq_cst RMW on a thread-local dummy,
// which is a full barrier on x86-64 and arm64 and which TSan understands.
// Under a StoreBufferModel (store_buffer.h) the fence also drains the
// calling thread's modelled store buffer; otherwise that is a relaxed load
// and a never-taken branch.
#if defined(__SANITIZE_THREAD__) || defined(ISOLATION_TSAN)
inline void FullFence() {
  store_buffer::OnFullFence();
  thread_local std::atomic<int> dummy{0};
  dummy.fetch_add(0, std::memory_order_seq_cst);
}
#else
inline void FullFence() {
  store_buffer::OnFullFence();
  std::atomic_thread_fence(std::memory_order_seq_cst);
}
#endif

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
class CountingSpinLock {
 public:
  void lock() {
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
    acquisitions_.store(acquisitions_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }
  // For observers (checks, statistics): takes the lock without counting.
  void lock_uncounted() {
    while (locked_.exchange(true, std::memory_order_acquire)) {
      while (locked_.load(std::memory_order_relaxed)) std::this_thread::yield();
    }
  }
  void unlock() { locked_.store(false, std::memory_order_release); }
  int64_t acquisitions() const { return acquisitions_.load(std::memory_order_relaxed); }
  int64_t contended() const { return contended_.load(std::memory_order_relaxed); }

 private:
  std::atomic<bool> locked_{false};
  std::atomic<int64_t> acquisitions_{0};
  std::atomic<int64_t> contended_{0};
};

absl::StatusOr<std::unique_ptr<MmCid>> CreateLazy(int num_cpus, const MmCidConfig& config,
                                                  MmCid::Limits limits);
absl::StatusOr<std::unique_ptr<MmCid>> CreateOwner619(int num_cpus, const MmCidConfig& config,
                                                      MmCid::Limits limits);
absl::StatusOr<std::unique_ptr<MmCid>> CreateV63MmLock(int num_cpus, const MmCidConfig& config,
                                                       MmCid::Limits limits);

}  // namespace isolation::mm_cid::internal

#endif  // ISOLATION_LIB_MM_CID_INTERNAL_H_
