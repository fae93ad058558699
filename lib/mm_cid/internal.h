// SPDX-License-Identifier: GPL-2.0-or-later
// internal.h (mm_cid module, not installed): factories of the two designs.

#ifndef ISOLATION_LIB_MM_CID_INTERNAL_H_
#define ISOLATION_LIB_MM_CID_INTERNAL_H_

#include <atomic>
#include <memory>

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
#if defined(__SANITIZE_THREAD__)
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

absl::StatusOr<std::unique_ptr<MmCid>> CreateLazy(int num_cpus, const MmCidConfig& config,
                                                  MmCid::Limits limits);
absl::StatusOr<std::unique_ptr<MmCid>> CreateOwner619(int num_cpus, const MmCidConfig& config,
                                                      MmCid::Limits limits);

}  // namespace isolation::mm_cid::internal

#endif  // ISOLATION_LIB_MM_CID_INTERNAL_H_
