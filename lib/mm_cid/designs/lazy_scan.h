// SPDX-License-Identifier: GPL-2.0-or-later
// lazy_scan.h (mm_cid module, not installed): the compaction scan of the
// `lazy` design (v6.4-v6.18), task_mm_cid_work() and what it calls --
// sched_mm_cid_remote_clear_old(), sched_mm_cid_remote_clear_weight(),
// sched_mm_cid_remote_clear() and the mm_cid_next_scan rate limit -- as
// the member definitions of LazyMmCid declared in lazy_design.h, which
// holds the switch path (switch_mm_cid(), migration, allocation).  The two
// meet at the slot: the scan marks a slot LAZY and frees its ID only if no
// active user of the mm runs on that CPU, the switch resolves a LAZY slot
// it finds (the Dekker pairing, Fences).  The loop is resolved at
// construction (scan_path.h): inlined for the built-in scopes and
// granularities, generic for strategies registered from outside.
//
// Thread safety and memory ordering: mm_cid.h.  Scan() may run on any
// thread concurrently with every CPU's switches and with other scans of
// the same mm (PassRateLimit and the granularity's cursor CAS pick one
// scanner per pass or batch).

#ifndef ISOLATION_LIB_MM_CID_DESIGNS_LAZY_SCAN_H_
#define ISOLATION_LIB_MM_CID_DESIGNS_LAZY_SCAN_H_

#include <cstddef>
#include <type_traits>
#include <utility>

#include "mm_cid/designs/lazy_design.h"

namespace isolation::mm_cid::internal::lazy_design {

// task_mm_cid_work(): the loop chosen at construction (scan_path.h).
template <typename Fences>
inline ScanResult LazyMmCid<Fences>::Scan(MmId mm_id, Nanos now) {
  Mm* mm = GetMm(mm_id);
  if (mm == nullptr) return ScanResult{};
  // Not due: the plain read of mm_cid_next_scan and return, before the
  // loop's frame (a full pass always starts at 0, where ScanLoop's
  // PassRateLimit would decide the same without a CAS).
  if (rate_limited_ && full_pass_) {
    const Nanos next = mm->next_scan.load(std::memory_order_relaxed);
    if (next != 0 && now < next) return ScanResult{};
  }
  if (scan_path_ != kGenericScanPath)
    return ScanInlined(*mm, mm_id, now, std::make_index_sequence<kInlineScanPaths>{});
  return ScanLoop(*mm, mm_id, now, *scope_, *granularity_);
}

template <typename Fences>
inline int LazyMmCid<Fences>::ScanScopeSize(MmId mm_id) const {
  const Mm* mm = GetMm(mm_id);
  return mm != nullptr ? scope_->Size(View(*mm)) : 0;
}

// The scan's loop for the scope and granularity types given: the
// built-in classes (final, methods inline, ForEachInline) or the
// interfaces (virtual calls, the visitor through absl::FunctionRef).  The
// granularity picks this call's window of the scope (the cursor,
// [BATCH]); a call that starts a pass is rate limited when the placement
// uses mm_cid_next_scan.
// Out of line: Scan's not-due return above then pays no part of its frame.
template <typename Fences>
template <typename Scope, typename Granularity>
ScanResult LazyMmCid<Fences>::ScanLoop(Mm& mm, MmId mm_id, Nanos now, const Scope& scope,
                                       const Granularity& granularity) {
  ScanResult r;
  const ScanSet set = View(mm);
  // batch_full ignores the scope's size (batch.h): not computed then.
  int size = 0;
  if constexpr (UsesScopeSize<Granularity>()) size = scope.Size(set);
  const int start = granularity.Start(mm.scan_cursor, size);
  if (start == 0 && rate_limited_ && !PassRateLimit(mm, now)) return r;
  ScanWindow window;
  if (!granularity.Claim(mm.scan_cursor, start, size, num_cpus_, window))
    return r;  // another scanner's batch
  r.ran = true;
  r.pass_start = window.start == 0;
  r.pass_end = window.pass_end;
  // Pass 1: sched_mm_cid_remote_clear_old() on every CPU of the window.
  WalkScope(scope, set, window.start, window.count, [&](const int* cpus, int n) {
    for (int i = 0; i < n; ++i) {
      ++r.visits;
      r.reclaimed += ClearOld(mm, mm_id, cpus[i], now);
    }
  });
  // Pass 2: sched_mm_cid_remote_clear_weight().
  const int weight = mm.cidmask.Weight();
  WalkScope(scope, set, window.start, window.count, [&](const int* cpus, int n) {
    for (int i = 0; i < n; ++i) {
      ++r.visits;
      const uint32_t cid = store_buffer::Load(mm.slots[cpus[i]].cid, std::memory_order_relaxed);
      if (CidIsValid(cid) && cid >= static_cast<uint32_t>(weight))
        r.reclaimed += RemoteClear(mm, mm_id, cpus[i]);
    }
  });
  // Statistics the kernel does not keep: per-thread shards, no locked RMW
  // (stat_shards.h).  The RMWs left in a call are the kernel's -- the
  // mm_cid_next_scan cmpxchg of a due pass (I9), a batch's cursor CAS, the
  // slot CASes and bit clear of a reclaim -- and, per freed ID only,
  // FreeCid's mm->frees count (I6).
  stats_.Add(kStatScans, 1, kStatSlotVisits, r.visits);
  return r;
}

template <typename Fences>
template <typename Granularity>
constexpr bool LazyMmCid<Fences>::UsesScopeSize() {
  if constexpr (std::is_same_v<Granularity, GranularityStrategy>) {
    return true;
  } else {
    return Granularity::kUsesScopeSize;
  }
}

template <typename Fences>
template <typename Scope, typename Visit>
inline void LazyMmCid<Fences>::WalkScope(const Scope& scope, const ScanSet& set, int start,
                                         int count, Visit&& visit) {
  if constexpr (std::is_same_v<Scope, ScopeStrategy>) {
    scope.ForEach(set, start, count, visit);
  } else {
    scope.ForEachInline(set, start, count, visit);
  }
}

// The built-in strategy object of type T (ChooseScanPath checked it).
template <typename Fences>
template <typename T>
inline const T& LazyMmCid<Fences>::Builtin() const {
  if constexpr (std::is_base_of_v<ScopeStrategy, T>) {
    return static_cast<const T&>(*scope_);
  } else {
    return static_cast<const T&>(*granularity_);
  }
}

// The loop of the path chosen at construction, its strategies' classes
// known (scan_path.h): one comparison per inlined path before it.
template <typename Fences>
template <size_t... kPath>
inline ScanResult LazyMmCid<Fences>::ScanInlined(Mm& mm, MmId mm_id, Nanos now,
                                                 std::index_sequence<kPath...>) {
  ScanResult r{};
  (void)((scan_path_ == static_cast<ScanPath>(kPath) &&
          (r = ScanLoop(mm, mm_id, now, Builtin<PathScope<kPath>>(),
                        Builtin<PathGranularity<kPath>>()),
           true)) ||
         ...);
  return r;
}

// What the scope sees of `mm`.
template <typename Fences>
inline ScanSet LazyMmCid<Fences>::View(const Mm& mm) const {
  ScanSet set;
  set.num_cpus = num_cpus_;
  set.allowed = &mm.allowed_atomic;
  set.cidmask = &mm.cidmask;
  return set;
}

// sched_mm_cid_remote_clear(): 1 if this call freed the ID.
template <typename Fences>
inline int LazyMmCid<Fences>::RemoteClear(Mm& mm, MmId mm_id, int cpu) {
  Slot& s = mm.slots[cpu];
  uint32_t cid = store_buffer::Load(s.cid, std::memory_order_relaxed);
  if (!CidIsValid(cid)) return 0;
  // Announce.  Delayed under a StoreBufferModel: the owner CPU may not see
  // LAZY until our fence.
  if (!store_buffer::CompareExchangeDelayed(s.cid, cid, cid | kLazyPut, std::memory_order_relaxed))
    return 0;
  notes_.Cpu(cpu);  // a remote write of `cpu`'s slot
  ISOLATION_INTERLEAVE_POINT("mm_cid.remote_clear.after_lazy_cas");
  // Reclaimer half of the Dekker pairing: the LAZY store must be ordered
  // before the load of rq->curr; a seq_cst CAS alone does not order a later
  // relaxed load in the C++ model, the fence does.
  Fences::AfterLazyCas();
  // Verify: an active user of the mm there resolves LAZY itself.
  if (ActiveUserCurrentOn(cpu, mm_id)) return 0;
  ISOLATION_INTERLEAVE_POINT("mm_cid.remote_clear.before_commit");
  // Commit: single winner frees the bit.
  uint32_t lazy = cid | kLazyPut;
  if (!store_buffer::CompareExchange(s.cid, lazy, kUnset, std::memory_order_relaxed)) return 0;
  FreeCid(mm, cid);
  return 1;
}

// sched_mm_cid_remote_clear_old()
template <typename Fences>
inline int LazyMmCid<Fences>::ClearOld(Mm& mm, MmId mm_id, int cpu, Nanos rq_clock) {
  Slot& s = mm.slots[cpu];
  if (ActiveUserCurrentOn(cpu, mm_id)) {
    s.time.store(rq_clock, std::memory_order_relaxed);  // keep a long runner's ID
    return 0;
  }
  if (rq_clock < s.time.load(std::memory_order_relaxed) + kCidPeriodNs) return 0;
  return RemoteClear(mm, mm_id, cpu);
}

// The rate limit of task_mm_cid_work(): exactly one scanner per period.
template <typename Fences>
inline bool LazyMmCid<Fences>::PassRateLimit(Mm& mm, Nanos now) {
  const Nanos next = now + kScanDelayNs;
  Nanos old = mm.next_scan.load(std::memory_order_relaxed);
  if (old == 0) {
    Nanos expected = 0;
    if (mm.next_scan.compare_exchange_strong(expected, next, std::memory_order_relaxed)) {
      old = next;
    } else {
      old = expected;
    }
  }
  if (now < old) return false;
  // Two scanners that both read an expired `old` race here; the CAS lets
  // exactly one of them start the pass (I9).
  ISOLATION_INTERLEAVE_POINT("mm_cid.scan.rate_limit.before_cas");
  return mm.next_scan.compare_exchange_strong(old, next, std::memory_order_relaxed);
}

}  // namespace isolation::mm_cid::internal::lazy_design

#endif  // ISOLATION_LIB_MM_CID_DESIGNS_LAZY_SCAN_H_
