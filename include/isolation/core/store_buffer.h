// SPDX-License-Identifier: GPL-2.0-or-later
// -----------------------------------------------------------------------------
// store_buffer.h
// -----------------------------------------------------------------------------
//
// A deterministic store-buffer model for showing what a full fence buys.
//
// The kernel's lock-free protocols pair "store my variable, smp_mb(), load
// the other side's variable" on two CPUs (the Dekker pattern of the mm_cid
// lazy put; the mode word of the 6.19 mm_cid rewrite, 47ee94efccf6).  The
// fence exists because a CPU may satisfy a later load before its earlier
// store is visible to the other CPU (the "SB" litmus test; allowed on x86-TSO,
// arm64, PowerPC).  Forced interleavings (interleave.h) run actors one at a
// time with sequentially consistent memory, so they can never produce that
// outcome: removing a fence changes nothing there.  This model can.
//
// Mechanisms route the accesses that take part in such a pairing through the
// wrappers below.  While a test holds a `StoreBufferModel`:
//   - store_buffer::Store(a, v): the store goes into the calling thread's
//     buffer; that thread's later store_buffer::Load of `a` sees it (store
//     forwarding), other threads keep seeing the old value;
//   - store_buffer::CompareExchangeDelayed(a, e, d): the CAS is performed
//     atomically (so two CASes can never both win), but other threads'
//     store_buffer::Load of `a` keep returning the value it replaced -- the
//     store half of an RMW that a later load may overtake (arm64 LSE/LL-SC,
//     PowerPC; the C++ model for seq_cst RMW + relaxed load);
//   - store_buffer::CompareExchange(a, e, d): an RMW that is visible at once;
//     like every RMW on a location it ends other threads' delayed views of it
//     (after one CPU's RMW has read a value, every CPU sees it: arm64 and
//     x86 are other-multi-copy atomic);
//   - store_buffer::OnFullFence(): the calling thread's buffer drains (FIFO)
//     and its delayed CAS values become visible.  A mechanism calls it inside
//     its own full-fence helper, next to the real fence.
//   - store_buffer::OnProcessWideBarrier(): every thread's buffer drains
//     and every delayed CAS becomes visible -- membarrier(2)'s
//     PRIVATE_EXPEDITED command, a full barrier on every CPU running a
//     thread of the process (core/membarrier.h).  The slow side of an
//     asymmetric pairing calls it next to the syscall; the fast side then
//     has no fence and does not call OnFullFence().
//   - a thread's buffer also drains when an Interleaver actor's function
//     returns (the operation is over) and when the test calls DrainAll() or
//     destroys the model.
// Only store->load reordering is modelled (buffers drain whole and in FIFO
// order, loads are not reordered among themselves): exactly the reordering
// a store/fence/load pairing exists to forbid.  Accesses that are not routed
// through the wrappers stay sequentially consistent.  Discipline: a location
// written through Store() is not also CASed (locations are either
// store-buffered or CAS-delayed), and a location with delayed CASes is only
// written by RMWs or by plain stores that happen after an RMW of the same
// thread on it (the mechanisms document why their code obeys this).  The
// model does not drain at a lock release: a routed store buffered after the
// writer's last fence and then read by another thread under the same lock
// would look stale, which real hardware (TSO, release unlock) forbids.  A
// routed location read under a lock must therefore be drained by its writer
// (OnFullFence / OperationEnds) before the unlock, or the test must not
// schedule such a reader (owner619's final mode store after the fixup's last
// fence is only read under mm.mutex by actors the S9 tests do not run).
//
// Kernel counterpart: none (a model of the hardware the kernel's smp_mb()
// defends against; tools/memory-model's SB litmus test is the same shape).
//
// Cost in normal operation: each wrapper is a relaxed load of a global flag
// and a never-taken branch around the plain atomic operation, like
// ISOLATION_INTERLEAVE_POINT; built without ISOLATION_INTERLEAVE_POINTS the
// wrappers are the plain operations.
//
// Thread safety: one StoreBufferModel at a time in the process.  All model
// state is guarded by one std::mutex (slow path only); the model is meant
// for actors that run one at a time under an Interleaver, where its results
// are deterministic.  Memory ordering: g_active is read relaxed; it only
// selects the slow path, which synchronises through the model's mutex.

#ifndef ISOLATION_STORE_BUFFER_H_
#define ISOLATION_STORE_BUFFER_H_

#include <atomic>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace isolation {
namespace store_buffer_internal {

extern std::atomic<bool> g_active;

using CommitFn = void (*)(void* addr, uint64_t bits);
// Slow paths (store_buffer.cc); all take the model's mutex.
void BufferStore(void* addr, uint64_t bits, CommitFn commit);
// The value the calling thread sees at `addr` if it differs from memory:
// its own newest buffered store, else another thread's delayed CAS.
bool ViewOf(const void* addr, uint64_t* bits);
// An RMW on `addr` read the latest value: other threads' delayed views of
// it end (and the caller's own too unless `delayed`).
void AfterRmw(const void* addr, bool delayed);
void DelayVisibility(const void* addr, uint64_t old_bits);
void Fence();
void FenceEveryThread();
void OperationEnds();

inline bool Active() {
#if defined(ISOLATION_INTERLEAVE_POINTS)
  return __builtin_expect(g_active.load(std::memory_order_relaxed), 0);
#else
  return false;
#endif
}

template <typename T>
uint64_t ToBits(T v) {
  static_assert(std::is_trivially_copyable_v<T> && sizeof(T) <= sizeof(uint64_t));
  uint64_t bits = 0;
  std::memcpy(&bits, &v, sizeof(T));
  return bits;
}
template <typename T>
T FromBits(uint64_t bits) {
  T v;
  std::memcpy(&v, &bits, sizeof(T));
  return v;
}
template <typename T>
void Commit(void* addr, uint64_t bits) {
  // release: a drained store publishes like any store followed by a fence.
  static_cast<std::atomic<T>*>(addr)->store(FromBits<T>(bits), std::memory_order_release);
}

}  // namespace store_buffer_internal

namespace store_buffer {

// A plain store that may sit in the calling thread's buffer.
template <typename T>
inline void Store(std::atomic<T>& a, T v, std::memory_order order) {
  if (store_buffer_internal::Active()) {
    store_buffer_internal::BufferStore(&a, store_buffer_internal::ToBits(v),
                                       &store_buffer_internal::Commit<T>);
    return;
  }
  a.store(v, order);
}

// A load that sees what the calling thread would see: its own buffered
// stores, and other threads' delayed CASes as not yet done.
template <typename T>
inline T Load(const std::atomic<T>& a, std::memory_order order) {
  if (store_buffer_internal::Active()) {
    uint64_t bits = 0;
    if (store_buffer_internal::ViewOf(&a, &bits)) return store_buffer_internal::FromBits<T>(bits);
  }
  return a.load(order);
}

// An RMW visible to everyone at once (ends delayed views of `a`).
template <typename T>
inline bool CompareExchange(std::atomic<T>& a, T& expected, T desired, std::memory_order order) {
  const bool ok = a.compare_exchange_strong(expected, desired, order);
  if (store_buffer_internal::Active()) store_buffer_internal::AfterRmw(&a, /*delayed=*/false);
  return ok;
}

// An atomic CAS whose new value other threads' Load()s do not see until the
// calling thread's next full fence (OnFullFence) or the end of its operation.
template <typename T>
inline bool CompareExchangeDelayed(std::atomic<T>& a, T& expected, T desired,
                                   std::memory_order order) {
  const T seen = expected;
  const bool ok = a.compare_exchange_strong(expected, desired, order);
  if (store_buffer_internal::Active()) {
    store_buffer_internal::AfterRmw(&a, /*delayed=*/true);
    if (ok) store_buffer_internal::DelayVisibility(&a, store_buffer_internal::ToBits(seen));
  }
  return ok;
}

// Call at every full fence (next to the real one): drains the model.
inline void OnFullFence() {
  if (store_buffer_internal::Active()) store_buffer_internal::Fence();
}

// Call at every process-wide barrier (membarrier(2), next to the syscall):
// drains every thread's buffer and delayed CASes.
inline void OnProcessWideBarrier() {
  if (store_buffer_internal::Active()) store_buffer_internal::FenceEveryThread();
}

// Call where an operation of the calling thread ends (its stores drain, as
// at a fence); an Interleaver actor's end does this by itself.
inline void OperationEnds() {
  if (store_buffer_internal::Active()) store_buffer_internal::OperationEnds();
}

}  // namespace store_buffer

// Activates the model for its lifetime (one at a time: a second instance
// created by another thread blocks until the first is destroyed; nesting two
// on one thread deadlocks).  Destruction drains every buffer and deactivates.
// Buffers are keyed by thread id: stores of a thread that ends without a
// fence, an actor end or a DrainAll() would be inherited by a later thread
// with the same id, so non-actor threads should call OperationEnds().
class StoreBufferModel {
 public:
  struct Stats {
    int64_t buffered_stores = 0;   // Store() calls that were buffered
    int64_t forwarded_loads = 0;   // Load()s served from the thread's own buffer
    int64_t stale_loads = 0;       // Load()s that saw another thread's delayed CAS undone
    int64_t delayed_cas = 0;       // successful CompareExchangeDelayed()s
    int64_t fences = 0;            // OnFullFence() calls while active
    int64_t process_barriers = 0;  // OnProcessWideBarrier() calls while active
    int64_t drained_stores = 0;    // buffered stores made visible (fence, operation end, DrainAll)
  };
  StoreBufferModel();
  ~StoreBufferModel();
  StoreBufferModel(const StoreBufferModel&) = delete;
  StoreBufferModel& operator=(const StoreBufferModel&) = delete;
  // Makes every buffered store and delayed CAS visible (from any thread).
  void DrainAll();
  // Number of stores still buffered and CASes still delayed, all threads.
  int Pending() const;
  Stats stats() const;
};

}  // namespace isolation

#endif  // ISOLATION_STORE_BUFFER_H_
