// SPDX-License-Identifier: GPL-2.0-or-later
// -----------------------------------------------------------------------------
// core/fence.h
// -----------------------------------------------------------------------------
//
// SeqCstFence(): the full memory barrier of the kernel's smp_mb() (and of
// smp_mb__after_atomic() on architectures where it is one), as the
// mechanisms' Dekker pairings and the kit's handshake checks need it.
//
// Why not plain std::atomic_thread_fence: ThreadSanitizer does not model
// standalone fences, and g++ rejects atomic_thread_fence under
// -fsanitize=thread (-Werror=tsan).  TSan builds therefore use a seq_cst RMW
// on a thread-local dummy, a full barrier on x86-64 and arm64 that TSan
// understands; every other build uses the fence itself.  The store-buffer
// model (store_buffer.h) is not drained here: callers that route stores
// through it call store_buffer::OnFullFence() as well.
//
// Kernel counterpart: smp_mb() (include/asm-generic/barrier.h).
// Thread-safety: callable from any thread; no state shared between threads.

#ifndef ISOLATION_CORE_FENCE_H_
#define ISOLATION_CORE_FENCE_H_

#include <atomic>

namespace isolation {

inline void SeqCstFence() {
#if defined(__SANITIZE_THREAD__) || defined(ISOLATION_TSAN)
  thread_local std::atomic<int> dummy{0};
  dummy.fetch_add(0, std::memory_order_seq_cst);
#else
  std::atomic_thread_fence(std::memory_order_seq_cst);
#endif
}

}  // namespace isolation

#endif  // ISOLATION_CORE_FENCE_H_
