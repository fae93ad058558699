// SPDX-License-Identifier: GPL-2.0-or-later
// Internal to lib/idle_select: the per-CPU and per-LLC structs of IdleState
// (not API: inspection goes through CpuSnapshot / LlcSnapshot), inline
// predicates for the built-in selectors' hot paths, and the per-thread
// scratch masks.

#ifndef ISOLATION_LIB_IDLE_SELECT_STATE_INTERNAL_H_
#define ISOLATION_LIB_IDLE_SELECT_STATE_INTERNAL_H_

#include <atomic>
#include <cstdint>

#include "isolation/core/cpumask.h"
#include "isolation/idle_select/idle_select.h"

namespace isolation::idle_select {

// Per-CPU state the selection reads; one cache line per CPU.  Written by the
// CPU's own context (harness), read by any waker.
struct alignas(64) CpuIdleState {
  std::atomic<uint8_t> curr_is_idle{1};  // the idle task runs
  std::atomic<uint8_t> ttwu_pending{0};  // remote wakeup in flight
  std::atomic<uint8_t> tick_stopped{0};
  std::atomic<uint8_t> in_domain{1};      // has sd_llc (copy of llc_of >= 0)
  std::atomic<int32_t> nr_running{0};     // queued + running (excl. idle task)
  std::atomic<int32_t> nr_sched_idle{0};  // of which SCHED_IDLE
  // Shared-line writes this CPU performed (I12); owner-only, read quiescent.
  std::atomic<int64_t> shared_writes{0};
};

// Per-LLC shared state (struct sched_domain_shared): the hint and the budget
// share a line, as in the kernel.  Selectors keep their masks themselves.
struct alignas(64) LlcShared {
  std::atomic<int32_t> has_idle_cores{0};
  std::atomic<int32_t> nr_idle_scan{0};
  std::atomic<int64_t> budget_stores{0};  // I12 / S1: stores of nr_idle_scan
  int weight = 0;                         // weight of the LLC span
};

// The built-in selectors' view of IdleState's internals (friend).
class IdleStateAccess {
 public:
  static const CpuIdleState& Cpu(const IdleState& s, int cpu) { return *s.cpus_[s.CpuIndex(cpu)]; }
  static CpuIdleState& Cpu(IdleState& s, int cpu) { return *s.cpus_[s.CpuIndex(cpu)]; }
  static LlcShared& Llc(IdleState& s, int llc) {
    return *s.llcs_[IdleState::IdIndex(llc, s.llcs_.size(), "llc")];
  }
  static const LlcShared& Llc(const IdleState& s, int llc) {
    return *s.llcs_[IdleState::IdIndex(llc, s.llcs_.size(), "llc")];
  }
};

namespace internal {

// idle_cpu(): idle task current, nothing queued, no wakeup in flight.
inline bool IdleCpu(const IdleState& s, int cpu) {
  const CpuIdleState& c = IdleStateAccess::Cpu(s, cpu);
  return c.curr_is_idle.load(std::memory_order_relaxed) != 0 &&
         c.nr_running.load(std::memory_order_relaxed) == 0 &&
         c.ttwu_pending.load(std::memory_order_relaxed) == 0;
}
// available_idle_cpu(): vcpu_is_preempted() is always false in userspace.
inline bool AvailableIdleCpu(const IdleState& s, int cpu) { return IdleCpu(s, cpu); }
// sched_idle_cpu(): a non-empty queue of SCHED_IDLE tasks only.
inline bool SchedIdleCpu(const IdleState& s, int cpu) {
  const CpuIdleState& c = IdleStateAccess::Cpu(s, cpu);
  const int32_t nr = c.nr_running.load(std::memory_order_relaxed);
  return nr > 0 && nr == c.nr_sched_idle.load(std::memory_order_relaxed);
}
inline bool CurrIsIdle(const IdleState& s, int cpu) {
  return IdleStateAccess::Cpu(s, cpu).curr_is_idle.load(std::memory_order_relaxed) != 0;
}
inline bool TickStopped(const IdleState& s, int cpu) {
  return IdleStateAccess::Cpu(s, cpu).tick_stopped.load(std::memory_order_relaxed) != 0;
}

// Per-thread scratch masks of `nbits` bits (the kernel's per-CPU
// select_rq_mask): allocated once per thread and size, then reused.
CpuMask& ScratchMask(int which, int nbits);

}  // namespace internal
}  // namespace isolation::idle_select

#endif  // ISOLATION_LIB_IDLE_SELECT_STATE_INTERNAL_H_
