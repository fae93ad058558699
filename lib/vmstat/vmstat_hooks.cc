// SPDX-License-Identifier: GPL-2.0-or-later
#include "isolation/vmstat_hooks.h"

namespace isolation::vmstat {

void VmstatHooks::OnStart(Driver& driver) {
  driver_ = &driver;
  // start_shepherd_timer(): first run after one interval.
  driver.QueueHousekeepingWork(vm_.config().stat_interval,
                               [this](CpuContext& ctx) { ShepherdWork(ctx); });
}

// vmstat_shepherd(): one pass, then re-arm.
void VmstatHooks::ShepherdWork(CpuContext& ctx) {
  Driver& d = ctx.driver();
  shepherd_runs_.fetch_add(1, std::memory_order_relaxed);
  last_shepherd_cpu_.store(ctx.cpu(), std::memory_order_relaxed);
  vm_.Shepherd([&d](int cpu) { return d.TickStopped(cpu); },
               [this, &d](int cpu, uint64_t generation) {
                 // queue_delayed_work_on(cpu, mm_percpu_wq, work, 0)
                 d.QueueWorkOn(cpu, 0, [this, cpu, generation](CpuContext& c) { CpuWork(c, cpu, generation); });
               });
  if (!stopped_.load(std::memory_order_relaxed)) {
    d.QueueHousekeepingWork(vm_.config().stat_interval,
                            [this](CpuContext& c) { ShepherdWork(c); });
  }
}

// vmstat_update(): fold, and re-queue on the same CPU while something moved.
void VmstatHooks::CpuWork(CpuContext& ctx, int cpu, uint64_t generation) {
  // The drivers run the items of an offlined CPU on a housekeeping CPU; the
  // kernel's vmstat_cpu_down_prep cancels this work synchronously, so it
  // never runs elsewhere.  Drop it: run as `ctx.cpu()`'s own work it would
  // pass that CPU's generation check and start a second re-queue chain there.
  if (ctx.cpu() != cpu) return;
  if (vm_.RunCpuWork(cpu, generation)) {
    ctx.driver().QueueWorkOn(cpu, vm_.config().stat_interval,
                             [this, cpu, generation](CpuContext& c) { CpuWork(c, cpu, generation); });
  }
}

void VmstatHooks::OnTickStop(CpuContext& ctx) { vm_.QuietVmstat(ctx.cpu(), true); }

void VmstatHooks::OnReturnToUser(CpuContext& ctx, TaskId task) {
  (void)task;
  const int cpu = ctx.cpu();
  // tick_nohz_user_enter_prepare(): only nohz_full CPUs pay for the check.
  if (vm_.strategy() != Strategy::kB || !vm_.IsNohzFull(cpu)) return;
  vm_.ReturnToUser(cpu, ctx.driver().TickStopped(cpu));
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
