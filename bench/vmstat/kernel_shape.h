// SPDX-License-Identifier: GPL-2.0-or-later
// The kernel's vmstat fast path as its C reads, compiled here: the reference
// the writer's rows are measured against in the same run, so that "the
// kernel's cost" is a figure of this host and this compiler, not a guess.
//
// Kernel counterpart: __mod_zone_page_state and __inc_zone_state
// (mm/vmstat.c, !PREEMPT_RT): one CPU's struct per_cpu_zonestat reached
// through this_cpu accessors -- an s8 load of vm_stat_diff[item], an s8 load
// of stat_threshold, the add, |x| > t, an s8 store; past the threshold
// zone_page_state_add() (out of line here, never taken in the benchmark
// loops).  The per-CPU base is resolved by the caller once, as %gs does for
// the kernel.  Written from the kernel's description, not copied.
//
// Thread-safety: owner-only, as the kernel's (interrupts off or the caller's
// own CPU): relaxed atomics only so that the compiler does one load and one
// store per update, as the kernel's volatile per-CPU asm does.

#ifndef ISOLATION_BENCH_VMSTAT_KERNEL_SHAPE_H_
#define ISOLATION_BENCH_VMSTAT_KERNEL_SHAPE_H_

#include <atomic>
#include <cstdint>
#include <cstdlib>

namespace isolation::vmstat::bench {

inline constexpr int kKernelShapeItems = 16;

// struct per_cpu_zonestat of one CPU (the differentials, then the threshold).
struct alignas(64) KernelShapeZoneStat {
  std::atomic<int8_t> vm_stat_diff[kKernelShapeItems] = {};
  std::atomic<int8_t> stat_threshold{0};
};

// The part of struct zone the fast path reads: the per-CPU pointer (a
// __percpu offset the kernel adds %gs to).
struct KernelShapeZone {
  KernelShapeZoneStat* per_cpu_zonestats = nullptr;
};

// zone_page_state_add(): the fold to the shared counters, out of line.
[[gnu::noinline, gnu::cold]] void KernelShapeFold(long x, int item);

// __mod_zone_page_state().
inline void KernelShapeMod(KernelShapeZoneStat& pcp, int item, long delta) {
  std::atomic<int8_t>& p = pcp.vm_stat_diff[item];
  long x = delta + p.load(std::memory_order_relaxed);
  const long t = pcp.stat_threshold.load(std::memory_order_relaxed);
  if (__builtin_expect(std::labs(x) > t, 0)) {
    KernelShapeFold(x, item);
    x = 0;
  }
  p.store(static_cast<int8_t>(x), std::memory_order_relaxed);
}

// __inc_zone_state(): increment, then past the threshold fold with the
// overstep (t / 2) left behind as a negative differential.
inline void KernelShapeInc(KernelShapeZoneStat& pcp, int item) {
  std::atomic<int8_t>& p = pcp.vm_stat_diff[item];
  const int8_t v = static_cast<int8_t>(p.load(std::memory_order_relaxed) + 1);
  p.store(v, std::memory_order_relaxed);
  const int8_t t = pcp.stat_threshold.load(std::memory_order_relaxed);
  if (__builtin_expect(v > t, 0)) {
    const int8_t overstep = static_cast<int8_t>(t >> 1);
    KernelShapeFold(v + overstep, item);
    p.store(static_cast<int8_t>(-overstep), std::memory_order_relaxed);
  }
}

}  // namespace isolation::vmstat::bench

#endif  // ISOLATION_BENCH_VMSTAT_KERNEL_SHAPE_H_
