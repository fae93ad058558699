// SPDX-License-Identifier: GPL-2.0-or-later
// stat_shards.h (mm_cid module, not installed): statistics counters bumped
// without a locked read-modify-write -- the userspace stand-in for the
// kernel's per-CPU counters (this_cpu_add(): one writer per counter because
// the writer cannot be preempted mid-update).  The userspace "CPU" is the
// thread: a thread claims one of kStatShards process-wide shard indices at
// its first bump (one CAS per thread lifetime) and releases it at thread
// exit; every StatShards object has one cache-line-aligned shard per index,
// written only by the thread holding that index.  More than kStatShards
// threads bumping at once: the others use an overflow counter with
// fetch_add (correct, slower).  Used for the lazy design's scan statistics
// (task_mm_cid_work() keeps none, so a scan pays no locked RMW for them the
// kernel does not pay: docs/performance.md, goal 2).
//
// Memory order:
//  - Add(): a relaxed load and a relaxed store of the caller's own shard.
//    Only the index holder writes the shard, and by coherence its load reads
//    its own latest store, so no update is lost without an RMW.
//  - Sum(): relaxed loads of every shard, concurrently with writers.  Each
//    load returns some value of that counter's modification order (atomic,
//    never torn); the sum is not a snapshot across shards or counters, which
//    the fetch_add counters it replaces were not either (Stats() is a
//    monitoring read).  A reader that must see every bump of a thread
//    synchronises with that thread first (join, a lock, a release/acquire
//    pair), which orders the relaxed stores before its loads.
//  - Index hand-over: the exiting holder releases the index with a release
//    RMW, the next holder claims it with an acquire CAS, so the old holder's
//    last store to a shard happens before the new holder's first load of it:
//    the new holder continues from the old total.

#ifndef ISOLATION_LIB_MM_CID_STAT_SHARDS_H_
#define ISOLATION_LIB_MM_CID_STAT_SHARDS_H_

#include <array>
#include <atomic>
#include <bit>
#include <cstdint>

#include "absl/base/attributes.h"

namespace isolation::mm_cid::internal {

inline constexpr int kStatShards = 64;

namespace stat_shards_detail {

inline constexpr int kUnclaimed = -1;  // no index yet: claim at the next bump
inline constexpr int kOverflow = -2;   // every index held, or this thread is exiting

// Bit i set: index i is held by a live thread.
inline std::atomic<uint64_t> g_held{0};
// The calling thread's index (trivial, constant-initialised: no TLS wrapper).
inline thread_local int t_index = kUnclaimed;

struct Releaser {
  int index = kOverflow;
  ~Releaser() {
    if (index >= 0) g_held.fetch_and(~(uint64_t{1} << index), std::memory_order_release);
    t_index = kOverflow;  // a bump from a later thread_local destructor: overflow
  }
};

// Slow path, once per thread: claim the lowest free index.
inline int Claim() {
  uint64_t held = g_held.load(std::memory_order_relaxed);
  int index = kOverflow;
  while (held != ~uint64_t{0}) {
    const int i = std::countr_one(held);
    if (g_held.compare_exchange_weak(held, held | (uint64_t{1} << i), std::memory_order_acquire,
                                     std::memory_order_relaxed)) {
      index = i;
      break;
    }
  }
  thread_local Releaser releaser;  // first use registers its destructor
  releaser.index = index;
  t_index = index;
  return index;
}

inline int Index() {
  const int i = t_index;
  return i != kUnclaimed ? i : Claim();
}

}  // namespace stat_shards_detail

// N int64 counters, one shard per thread index.
template <int N>
class StatShards {
 public:
  void Add(int counter, int64_t v) {
    const int i = stat_shards_detail::Index();
    if (i >= 0) {
      std::atomic<int64_t>& c = shards_[static_cast<size_t>(i)].v[static_cast<size_t>(counter)];
      c.store(c.load(std::memory_order_relaxed) + v, std::memory_order_relaxed);
    } else {
      overflow_[static_cast<size_t>(counter)].fetch_add(v, std::memory_order_relaxed);
    }
  }

  // Two counters, one index lookup.  Inlined: out of line, the call and
  // its register saves were a visible share of a small scan's fixed part
  // (docs/performance.md, goal 2).
  ABSL_ATTRIBUTE_ALWAYS_INLINE void Add(int counter1, int64_t v1, int counter2, int64_t v2) {
    const int i = stat_shards_detail::Index();
    if (i >= 0) {
      Shard& sh = shards_[static_cast<size_t>(i)];
      std::atomic<int64_t>& c1 = sh.v[static_cast<size_t>(counter1)];
      std::atomic<int64_t>& c2 = sh.v[static_cast<size_t>(counter2)];
      c1.store(c1.load(std::memory_order_relaxed) + v1, std::memory_order_relaxed);
      c2.store(c2.load(std::memory_order_relaxed) + v2, std::memory_order_relaxed);
    } else {
      overflow_[static_cast<size_t>(counter1)].fetch_add(v1, std::memory_order_relaxed);
      overflow_[static_cast<size_t>(counter2)].fetch_add(v2, std::memory_order_relaxed);
    }
  }

  int64_t Sum(int counter) const {
    int64_t s = overflow_[static_cast<size_t>(counter)].load(std::memory_order_relaxed);
    for (const Shard& sh : shards_)
      s += sh.v[static_cast<size_t>(counter)].load(std::memory_order_relaxed);
    return s;
  }

 private:
  struct alignas(64) Shard {
    std::array<std::atomic<int64_t>, N> v{};
  };
  std::array<Shard, kStatShards> shards_{};
  alignas(64) std::array<std::atomic<int64_t>, N> overflow_{};
};

}  // namespace isolation::mm_cid::internal

#endif  // ISOLATION_LIB_MM_CID_STAT_SHARDS_H_
