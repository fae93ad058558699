// SPDX-License-Identifier: GPL-2.0-or-later
// The kernel's mm_cid context-switch fast path as its C reads (6.19+, the
// owner design), compiled here: the reference the inline switch's rows are
// measured against in the same run, so that "what the kernel pays" is a
// figure of this host and this compiler.
//
// Kernel counterpart: mm_cid_switch_to() (kernel/sched/sched.h):
// mm_cid_schedout() -- nothing unless the outgoing task's ID is in
// transit -- and mm_cid_schedin() through mm_cid_from_task()'s fast path:
// next->mm_cid.active, the CPU's slot of next->mm (this_cpu_read of
// mm->mm_cid.pcpu->cid), READ_ONCE(mm->mm_cid.mode), the task's ID and
// max_cids, and the slot's store (mm_cid_update_pcpu_cid).  With rq->curr's
// store, which the scheduler makes beside it.  Anything past the fast path
// (transit, per-CPU mode, convergence, allocation) is out of line and never
// taken in the benchmark.  Written from the kernel's description, not
// copied.
//
// Thread-safety: the CPU's rq lock held by the caller, as in the kernel
// (here: one thread).

#ifndef ISOLATION_BENCH_MM_CID_KERNEL_SWITCH_SHAPE_H_
#define ISOLATION_BENCH_MM_CID_KERNEL_SWITCH_SHAPE_H_

#include <atomic>
#include <cstdint>

namespace isolation::mm_cid::bench {

inline constexpr uint32_t kKernelCidUnset = 1u << 31;    // MM_CID_UNSET
inline constexpr uint32_t kKernelCidOnCpu = 1u << 30;    // MM_CID_ONCPU
inline constexpr uint32_t kKernelCidTransit = 1u << 29;  // MM_CID_TRANSIT

struct KernelShapePcpu {  // struct mm_cid_pcpu, one CPU's
  uint32_t cid = kKernelCidUnset;
};
struct KernelShapeMm {              // mm->mm_cid
  KernelShapePcpu* pcpu = nullptr;  // the __percpu array (indexed by CPU here)
  std::atomic<uint32_t> mode{0};
  std::atomic<uint32_t> max_cids{0};
};
struct KernelShapeTask {  // the task_struct fields the switch reads
  KernelShapeMm* mm = nullptr;
  bool active = false;  // mm_cid.active
  uint32_t cid = kKernelCidUnset;
};
struct KernelShapeRq {
  std::atomic<KernelShapeTask*> curr{nullptr};
  int cpu = 0;
};

// Everything past the fast path, out of line (never taken in the benchmark).
[[gnu::noinline, gnu::cold]] void KernelShapeSchedoutSlow(KernelShapeTask& prev);
[[gnu::noinline, gnu::cold]] void KernelShapeSchedinSlow(KernelShapeRq& rq, KernelShapeTask& next,
                                                         uint32_t cpu_cid, uint32_t mode);

// rq->curr = next; mm_cid_switch_to(prev, next).
inline void KernelShapeSwitch(KernelShapeRq& rq, KernelShapeTask& prev, KernelShapeTask& next) {
  rq.curr.store(&next, std::memory_order_relaxed);
  // mm_cid_schedout(): only an ID in transit is dropped.
  if (__builtin_expect((prev.cid & kKernelCidTransit) != 0, 0)) KernelShapeSchedoutSlow(prev);
  // mm_cid_schedin().
  if (!next.active) return;
  KernelShapeMm& mm = *next.mm;
  KernelShapePcpu& pcpu = mm.pcpu[rq.cpu];
  const uint32_t cpu_cid = pcpu.cid;
  const uint32_t mode = mm.mode.load(std::memory_order_relaxed);
  if (__builtin_expect((mode & kKernelCidOnCpu) == 0, 1)) {
    // mm_cid_from_task()'s fast path.
    const uint32_t tcid = next.cid;
    const uint32_t max_cids = mm.max_cids.load(std::memory_order_relaxed);
    // cid_on_task(tcid | cpu_cid): no UNSET, ONCPU or TRANSIT bit in either.
    if (__builtin_expect((tcid | cpu_cid) < kKernelCidTransit && tcid < max_cids, 1)) {
      pcpu.cid = tcid;  // mm_cid_update_pcpu_cid()
      return;
    }
  }
  KernelShapeSchedinSlow(rq, next, cpu_cid, mode);
}

}  // namespace isolation::mm_cid::bench

#endif  // ISOLATION_BENCH_MM_CID_KERNEL_SWITCH_SHAPE_H_
