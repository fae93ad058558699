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
//                   where the fold policy says so it queues per-CPU work
//                   (vmstat_update) with delay 0 via QueueWorkOn; the work
//                   re-queues itself after P while its refresh returns
//                   non-zero.  C/D: it folds remotely.
//   OnTickStop      quiet_vmstat() (tick_nohz_stop_tick, running->stopped).
//   OnReturnToUser  tick_nohz_user_enter_prepare() on nohz_full CPUs, for
//                   policies that hook it (B: quiet_vmstat() when
//                   Driver::TickStopped(cpu); B.local: fold + cancel).
//   LocalWorkQueue  a CPU's own work (B.local: a nohz_full CPU's
//                   vmstat_update) is a driver
//                   timer (ArmTimer at now + P, the delayed work's timer)
//                   that queues the work item with delay 0; cancelling it
//                   cancels the timer (cancel_delayed_work), so a cancelled
//                   item never wakes the CPU.  Its re-queue after a fold goes
//                   the same way.  Not deferrable in the model (the kernel's
//                   vmstat_work timer does not wake an idle CPU).
//   OnCpuOffline/Online  hotplug callbacks (fold of the dead CPU, thresholds).
//   StatRefresh     vmstat_refresh() (/proc/sys/vm/stat_refresh): queues a
//                   refresh on every online CPU (schedule_on_each_cpu) and
//                   completes when the last one ran; policies that fold
//                   remotely (C/D) fold every online CPU from the caller and
//                   complete at once.
//   SetNeverYields  models a task that never yields on a CPU (SCHED_FIFO busy
//                   loop, RT throttling off): the drivers let every work item
//                   preempt a task, so the adapter itself keeps this CPU's
//                   kworker from running -- each of its items that comes due
//                   is parked (the driver still counts that wake-up) and
//                   re-queued when the flag is cleared.
//
// Kernel counterpart: mm/vmstat.c (vmstat_shepherd, vmstat_update,
// quiet_vmstat, vmstat_cpu_online/_down_prep/_dead), mm/page_alloc.c
// (page_alloc_cpu_dead), kernel/time/tick-sched.c (tick_nohz_stop_tick) and
// the seed's __tick_nohz_user_enter_prepare.  round_jiffies_relative(P) is
// modelled as a plain delay of P.
//
// Tracing: with a tracer on the driver, work items name their slices
// ("vmstat_update", "vmstat_update (cancelled)", "vmstat_shepherd",
// "vmstat_work timer") and every fold is a "vmstat.fold" instant on its CPU
// (args: work / tick_stop / return_to_user), the shepherd's pass a
// "vmstat.shepherd" instant (handled = items queued or CPUs folded).
//
// Thread safety: hooks follow driver.h's contract; the adapter keeps atomics
// and a mutex for parked work items (never on a hot path).  The Vmstat object and the adapter must
// outlive the driver's runs.

#ifndef ISOLATION_VMSTAT_HOOKS_H_
#define ISOLATION_VMSTAT_HOOKS_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "isolation/core/driver.h"
#include "isolation/core/mutex.h"
#include "isolation/vmstat/vmstat.h"

namespace isolation::vmstat {

class VmstatHooks final : public Hooks, private LocalWorkQueue {
 public:
  // Registers itself as `vm`'s LocalWorkQueue until destroyed.
  explicit VmstatHooks(Vmstat& vm);
  ~VmstatHooks() override;

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

  // vmstat_refresh(): starts one refresh of every online CPU.  Returns false
  // (and does nothing) while a previous one is still waiting for CPUs.
  // REQUIRES: OnStart ran; called from a context allowed to queue work.
  bool StatRefresh(Driver& driver);
  // Refreshes that finished (every CPU's item ran, or folded remotely).
  int64_t stat_refreshes_completed() const {
    return refresh_completed_.load(std::memory_order_acquire);
  }
  // CPUs whose refresh item has not run yet (0 when none is in flight).
  int stat_refresh_waiting() const { return refresh_waiting_.load(std::memory_order_acquire); }
  // See the header comment.  Clearing re-queues the parked items on `cpu`.
  // A cpu outside [0, vmstat().num_cpus()) is ignored.
  void SetNeverYields(int cpu, bool on);

 private:
  void ShepherdWork(CpuContext& ctx);
  void CpuWork(CpuContext& ctx, int cpu, uint64_t generation);
  void RefreshWork(CpuContext& ctx, int cpu);
  // True if `cpu` runs a task that never yields; `retry` is then parked.
  bool ParkIfStarved(int cpu, WorkFn retry);
  // LocalWorkQueue (a CPU's own work: B.local).
  void ArmLocalWork(int cpu, uint64_t generation) override;
  void CancelLocalWork(int cpu) override;
  void LocalWorkTimer(CpuContext& ctx, int cpu, uint64_t generation);

  Vmstat& vm_;
  Driver* driver_ = nullptr;
  Tracer* tracer_ = nullptr;  // Driver::tracer() at OnStart
  std::atomic<bool> stopped_{false};
  std::atomic<int64_t> shepherd_runs_{0};
  std::atomic<int> last_shepherd_cpu_{-1};
  std::atomic<int> refresh_waiting_{0};
  std::atomic<int64_t> refresh_completed_{0};
  std::unique_ptr<std::atomic<bool>[]> never_yields_;
  // B.local: the armed timer per CPU (kNoTimer if none); touched from that
  // CPU's contexts and the hotplug callback.
  std::unique_ptr<std::atomic<TimerId>[]> local_timer_;
  Mutex parked_mu_;
  std::vector<std::vector<WorkFn>> parked_ ABSL_GUARDED_BY(parked_mu_);  // per CPU
};

}  // namespace isolation::vmstat

#endif  // ISOLATION_VMSTAT_HOOKS_H_
