// SPDX-License-Identifier: GPL-2.0-or-later
// -----------------------------------------------------------------------------
// tmigr_hooks.h
// -----------------------------------------------------------------------------
//
// Runs the timer-migration hierarchy under either driver (simulator or real
// threads): a Hooks adapter that forwards tick, tick stop/restart and
// hotplug events to a TimerSystem, arms the driver timer an idle CPU needs
// for its programmed wake-up, charges (simulator) or spins (real threads) a
// modelled cost for every timer callback, and a housekeeping task body that
// arms global timers the way drivers' delayed work does.  With a tracer on
// the driver (Driver::tracer()), every timer run is a "tmigr.timer" event
// (owner, global, remote) and names its activity "timer_softirq" or
// "timer_softirq (pulled)"; the hierarchy reports its migrator hand-overs
// and remote expiries (TimerMigration::SetTracer).
//
// Kernel counterpart: the tick-sched / timer-softirq glue around
// kernel/time/timer_migration.c: tick_nohz_stop_tick() ->
// fetch_next_timer_interrupt() -> tmigr_cpu_deactivate(), tick_nohz_restart
// -> timer_clear_idle() -> tmigr_cpu_activate(), the tick's
// tmigr_requires_handle_remote() and run_timer_softirq().
//
// Thread safety: hooks for one CPU never overlap (driver contract); hooks for
// different CPUs may run concurrently, which the TimerSystem allows.  The
// per-CPU fields here are touched only from their CPU's hooks and tasks,
// except the pending-timer flag (atomic).

#ifndef ISOLATION_TMIGR_HOOKS_H_
#define ISOLATION_TMIGR_HOOKS_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "isolation/core/driver.h"
#include "isolation/tmigr/timers.h"

namespace isolation::tmigr {

class TmigrHooks final : public Hooks {
 public:
  struct Config {
    Nanos callback_cost = 20 * kNsPerUs;  // modelled time of each timer callback
  };
  // `ts` must outlive the hooks and be booted (BootAll) before the run.
  TmigrHooks(TimerSystem& ts, Config config);

  // OK, or the setup error found at OnStart: a driver whose CPU count
  // differs from the TimerSystem's (the hooks then ignore every event, so a
  // mismatched machine never indexes the bases out of range).
  absl::Status status() const;

  void OnStart(Driver& driver) override;
  void OnTick(CpuContext& ctx, TaskId curr) override;
  void OnTickStop(CpuContext& ctx) override;
  void OnTickRestart(CpuContext& ctx) override;
  void OnCpuOnline(int cpu, Nanos now) override;
  void OnCpuOffline(int cpu, Nanos now) override;

  // A housekeeping task for `cpu`: each period it enters the kernel, (re)arms
  // one global timer `global_period` ahead if none is pending (delayed work),
  // runs `burst`, then sleeps for the rest of the period.  nullptr (which
  // Driver::Spawn rejects) for a cpu outside [0, num_cpus), period < 1,
  // burst < 0 or global_period < 1.
  std::unique_ptr<TaskBody> MakeHousekeepingTask(int cpu, Nanos period, Nanos burst,
                                                 Nanos global_period);

  // Callbacks run per CPU and modelled callback time spent there (0 for a
  // cpu out of range).
  int64_t callbacks_on(int cpu) const;
  int64_t remote_callbacks_on(int cpu) const;

 private:
  struct alignas(64) PerCpu {
    TimerId wake_timer = kNoTimer;
    std::atomic<bool> global_pending{false};
    std::atomic<int64_t> callbacks{0};
    std::atomic<int64_t> remote_callbacks{0};
  };
  // Arms `c`'s driver wake-up for its programmed event (none if kNanosMax).
  void ArmWake(Driver& driver, int c, Nanos now);
  void OnWakeTimer(CpuContext& ctx, int target_cpu);
  void TryStopTick(CpuContext& ctx);
  PerCpu& cpu(int c) { return *per_cpu_[static_cast<size_t>(c)]; }

  TimerSystem& ts_;
  Config config_;
  Driver* driver_ = nullptr;
  // false after OnStart with a driver of another size: every hook returns.
  // Written by OnStart before any other event (driver.h), then read-only.
  bool active_ = true;
  int driver_cpus_ = 0;       // the mismatched driver's size, for status()
  Tracer* tracer_ = nullptr;  // Driver::tracer() at OnStart
  std::vector<std::unique_ptr<PerCpu>> per_cpu_;
};

}  // namespace isolation::tmigr

#endif  // ISOLATION_TMIGR_HOOKS_H_
