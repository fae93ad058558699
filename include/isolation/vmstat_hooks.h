// SPDX-License-Identifier: GPL-2.0-or-later
// -----------------------------------------------------------------------------
// vmstat_hooks.h
// -----------------------------------------------------------------------------
//
// Runs a vmstat::Vmstat under either driver (driver.h): the Hooks adapter
// that plays the kernel's deferred vmstat machinery around the counters.
//
//   OnStart         arms the shepherd (vmstat_shepherd) as housekeeping work
//                   every stat interval P (QueueHousekeepingWork, HK_TYPE_WQ);
//                   A/B: it queues per-CPU work (vmstat_update) with delay 0
//                   via QueueWorkOn; the work re-queues itself after P while
//                   its refresh returns non-zero.  C/D: it folds remotely.
//   OnTickStop      quiet_vmstat() (tick_nohz_stop_tick, running->stopped).
//   OnReturnToUser  B: tick_nohz_user_enter_prepare() -> quiet_vmstat() when
//                   the CPU is nohz_full and Driver::TickStopped(cpu).
//   OnCpuOffline/Online  hotplug callbacks (fold of the dead CPU, thresholds).
//
// Kernel counterpart: mm/vmstat.c (vmstat_shepherd, vmstat_update,
// quiet_vmstat, vmstat_cpu_online/_down_prep/_dead), mm/page_alloc.c
// (page_alloc_cpu_dead), kernel/time/tick-sched.c (tick_nohz_stop_tick) and
// the seed's __tick_nohz_user_enter_prepare.  round_jiffies_relative(P) is
// modelled as a plain delay of P.
//
// Thread safety: hooks follow driver.h's contract; the adapter keeps only
// atomics.  The Vmstat object and the adapter must outlive the driver's runs.

#ifndef ISOLATION_VMSTAT_HOOKS_H_
#define ISOLATION_VMSTAT_HOOKS_H_

#include <atomic>
#include <cstdint>

#include "isolation/driver.h"
#include "isolation/vmstat.h"

namespace isolation::vmstat {

class VmstatHooks final : public Hooks {
 public:
  explicit VmstatHooks(Vmstat& vm) : vm_(vm) {}

  void OnStart(Driver& driver) override;
  void OnTickStop(CpuContext& ctx) override;
  void OnReturnToUser(CpuContext& ctx, TaskId task) override;
  void OnCpuOffline(int cpu, Nanos now) override;
  void OnCpuOnline(int cpu, Nanos now) override;

  // The shepherd stops re-arming after its next run.
  void Stop() { stopped_.store(true, std::memory_order_relaxed); }
  int64_t shepherd_runs() const { return shepherd_runs_.load(std::memory_order_relaxed); }
  // CPU the last shepherd run executed on (-1 before the first).
  int last_shepherd_cpu() const { return last_shepherd_cpu_.load(std::memory_order_relaxed); }
  Vmstat& vmstat() { return vm_; }

 private:
  void ShepherdWork(CpuContext& ctx);
  void CpuWork(CpuContext& ctx, int cpu, uint64_t generation);

  Vmstat& vm_;
  Driver* driver_ = nullptr;
  std::atomic<bool> stopped_{false};
  std::atomic<int64_t> shepherd_runs_{0};
  std::atomic<int> last_shepherd_cpu_{-1};
};

}  // namespace isolation::vmstat

#endif  // ISOLATION_VMSTAT_HOOKS_H_
