// SPDX-License-Identifier: GPL-2.0-or-later
#include "isolation/vmstat/hooks.h"

#include <utility>

namespace isolation::vmstat {

VmstatHooks::VmstatHooks(Vmstat& vm)
    : vm_(vm),
      never_yields_(std::make_unique<std::atomic<bool>[]>(static_cast<size_t>(vm.num_cpus()))),
      local_timer_(std::make_unique<std::atomic<TimerId>[]>(static_cast<size_t>(vm.num_cpus()))),
      parked_(static_cast<size_t>(vm.num_cpus())) {
  for (int cpu = 0; cpu < vm.num_cpus(); ++cpu)
    local_timer_[static_cast<size_t>(cpu)].store(kNoTimer);
  // Every policy gets the queue; only those arming their own work use it.
  vm.SetLocalWorkQueue(this);
}

VmstatHooks::~VmstatHooks() { vm_.SetLocalWorkQueue(nullptr); }

void VmstatHooks::OnStart(Driver& driver) {
  driver_ = &driver;
  tracer_ = driver.tracer();
  // start_shepherd_timer(): first run after one interval.
  driver.QueueHousekeepingWork(vm_.config().stat_interval,
                               [this](CpuContext& ctx) { ShepherdWork(ctx); });
}

// vmstat_shepherd(): one pass, then re-arm.
void VmstatHooks::ShepherdWork(CpuContext& ctx) {
  Driver& d = ctx.driver();
  shepherd_runs_.fetch_add(1, std::memory_order_relaxed);
  last_shepherd_cpu_.store(ctx.cpu(), std::memory_order_relaxed);
  const int handled = vm_.Shepherd([&d](int cpu) { return d.TickStopped(cpu); },
                                   [this, &d](int cpu, uint64_t generation) {
                                     // queue_delayed_work_on(cpu, mm_percpu_wq, work, 0)
                                     d.QueueWorkOn(cpu, 0, [this, cpu, generation](CpuContext& c) {
                                       CpuWork(c, cpu, generation);
                                     });
                                   });
  if (tracer_ != nullptr) {
    tracer_->NameActivity(ctx.cpu(), "vmstat_shepherd");
    // A/B: per-CPU work items queued; C/D: CPUs folded remotely.
    tracer_->Instant(ctx.cpu(), ctx.now(), "vmstat.shepherd", {{"handled", handled}});
  }
  if (!stopped_.load(std::memory_order_relaxed)) {
    d.QueueHousekeepingWork(vm_.config().stat_interval, [this](CpuContext& c) { ShepherdWork(c); });
  }
}

// vmstat_update(): fold, and re-queue on the same CPU while something moved.
void VmstatHooks::CpuWork(CpuContext& ctx, int cpu, uint64_t generation) {
  // The drivers run the items of an offlined CPU on a housekeeping CPU; the
  // kernel's vmstat_cpu_down_prep cancels this work synchronously, so it
  // never runs elsewhere.  Drop it: run as `ctx.cpu()`'s own work it would
  // pass that CPU's generation check and start a second re-queue chain there.
  if (ctx.cpu() != cpu) return;
  if (ParkIfStarved(cpu, [this, cpu, generation](CpuContext& c) { CpuWork(c, cpu, generation); }))
    return;
  const int64_t runs_before = tracer_ != nullptr ? vm_.Counters(cpu).work_runs : 0;
  const bool requeue = vm_.RunCpuWork(cpu, generation);
  if (tracer_ != nullptr) {
    // A cancelled item (stale generation) runs but does nothing.
    const bool ran = vm_.Counters(cpu).work_runs != runs_before;
    tracer_->NameActivity(cpu, ran ? "vmstat_update" : "vmstat_update (cancelled)");
    if (ran)
      tracer_->Instant(cpu, ctx.now(), "vmstat.fold", {{"work", 1}, {"requeue", requeue ? 1 : 0}});
  }
  if (requeue) {
    if (vm_.RequeueLocally(cpu)) {
      ArmLocalWork(cpu, generation);  // cancellable by the next return to user
      return;
    }
    ctx.driver().QueueWorkOn(
        cpu, vm_.config().stat_interval,
        [this, cpu, generation](CpuContext& c) { CpuWork(c, cpu, generation); });
  }
}

// B.local: queue_delayed_work_on(cpu, ..., round_jiffies_relative(P)) from
// the CPU itself: the delayed work's timer.
void VmstatHooks::ArmLocalWork(int cpu, uint64_t generation) {
  Driver* d = driver_;
  if (d == nullptr) return;  // before OnStart: the pending bit alone (see header)
  const TimerId id =
      d->ArmTimer(cpu, d->Now() + vm_.config().stat_interval,
                  [this, cpu, generation](CpuContext& c) { LocalWorkTimer(c, cpu, generation); });
  if (tracer_ != nullptr) tracer_->Instant(cpu, d->Now(), "vmstat.local_arm", {});
  // Relaxed: only this CPU's contexts (serialised by the driver) and the
  // hotplug callback use the id; a stale id only makes CancelTimer fail.
  local_timer_[static_cast<size_t>(cpu)].store(id, std::memory_order_relaxed);
}

void VmstatHooks::LocalWorkTimer(CpuContext& ctx, int cpu, uint64_t generation) {
  // The CPU went down (the driver runs its timers elsewhere): the v9 race,
  // an item re-armed around the hotplug flush must not run unbound.
  if (ctx.cpu() != cpu) return;
  if (tracer_ != nullptr) tracer_->NameActivity(cpu, "vmstat_work timer");
  local_timer_[static_cast<size_t>(cpu)].store(kNoTimer, std::memory_order_relaxed);
  ctx.driver().QueueWorkOn(cpu, 0,
                           [this, cpu, generation](CpuContext& c) { CpuWork(c, cpu, generation); });
}

// cancel_delayed_work(): drop the timer so the cancelled item never fires.
void VmstatHooks::CancelLocalWork(int cpu) {
  const TimerId id =
      local_timer_[static_cast<size_t>(cpu)].exchange(kNoTimer, std::memory_order_relaxed);
  if (id != kNoTimer && driver_ != nullptr) driver_->CancelTimer(id);
}

bool VmstatHooks::ParkIfStarved(int cpu, WorkFn retry) {
  if (!never_yields_[static_cast<size_t>(cpu)].load(std::memory_order_relaxed)) return false;
  MutexLock lock(parked_mu_);
  parked_[static_cast<size_t>(cpu)].push_back(std::move(retry));
  return true;
}

void VmstatHooks::SetNeverYields(int cpu, bool on) {
  if (cpu < 0 || cpu >= vm_.num_cpus()) return;  // no such CPU (documented no-op)
  never_yields_[static_cast<size_t>(cpu)].store(on, std::memory_order_relaxed);
  if (on || driver_ == nullptr) return;
  std::vector<WorkFn> items;
  {
    MutexLock lock(parked_mu_);
    items.swap(parked_[static_cast<size_t>(cpu)]);
  }
  for (WorkFn& fn : items) driver_->QueueWorkOn(cpu, 0, std::move(fn));
}

// vmstat_refresh(): schedule_on_each_cpu(refresh_vm_stats); policies that
// fold remotely fold every CPU from the caller instead.
bool VmstatHooks::StatRefresh(Driver& driver) {
  if (refresh_waiting_.load(std::memory_order_acquire) != 0) return false;
  if (vm_.policy_traits().folds_remotely) {
    for (int cpu = 0; cpu < vm_.num_cpus(); ++cpu) {
      if (vm_.IsOnline(cpu)) (void)vm_.FoldCpuRemote(cpu);
    }
    refresh_completed_.fetch_add(1, std::memory_order_release);
    return true;
  }
  int online = 0;
  for (int cpu = 0; cpu < vm_.num_cpus(); ++cpu) online += vm_.IsOnline(cpu) ? 1 : 0;
  // Set before queueing: an item may run (real driver) before the loop ends.
  refresh_waiting_.store(online, std::memory_order_release);
  for (int cpu = 0; cpu < vm_.num_cpus(); ++cpu) {
    if (vm_.IsOnline(cpu))
      driver.QueueWorkOn(cpu, 0, [this, cpu](CpuContext& c) { RefreshWork(c, cpu); });
  }
  return true;
}

// refresh_vm_stats() on `cpu` (refresh_cpu_vm_stats(true); per-CPU page
// lists are not modelled, so it folds like refresh_cpu_vm_stats(false)).
void VmstatHooks::RefreshWork(CpuContext& ctx, int cpu) {
  if (ParkIfStarved(cpu, [this, cpu](CpuContext& c) { RefreshWork(c, cpu); })) return;
  // An item of a CPU that went offline meanwhile runs elsewhere; the offline
  // fold already emptied that CPU (the kernel holds cpus_read_lock instead).
  if (ctx.cpu() == cpu) (void)vm_.RefreshCpu(cpu);
  // acq_rel: the last item publishes every earlier fold to the waiter.
  if (refresh_waiting_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    refresh_completed_.fetch_add(1, std::memory_order_release);
  }
}

void VmstatHooks::OnTickStop(CpuContext& ctx) {
  const bool folded = vm_.QuietVmstat(ctx.cpu(), true);
  if (tracer_ != nullptr && folded)
    tracer_->Instant(ctx.cpu(), ctx.now(), "vmstat.fold", {{"tick_stop", 1}});
}

void VmstatHooks::OnReturnToUser(CpuContext& ctx, TaskId task) {
  (void)task;
  const int cpu = ctx.cpu();
  // tick_nohz_user_enter_prepare(): only nohz_full CPUs pay for the check,
  // and only under a policy that hooks the return to user.
  if (!vm_.policy_traits().hooks_return_to_user || !vm_.IsNohzFull(cpu)) return;
  const bool folded = vm_.ReturnToUser(cpu, ctx.driver().TickStopped(cpu));
  if (tracer_ != nullptr && folded)
    tracer_->Instant(cpu, ctx.now(), "vmstat.fold", {{"return_to_user", 1}});
}

void VmstatHooks::OnCpuOffline(int cpu, Nanos now) {
  (void)now;
  (void)vm_.CpuOffline(cpu);  // already-offline is not an error for the driver
}

void VmstatHooks::OnCpuOnline(int cpu, Nanos now) {
  (void)now;
  (void)vm_.CpuOnline(cpu);
}

}  // namespace isolation::vmstat
