// SPDX-License-Identifier: GPL-2.0-or-later
// -----------------------------------------------------------------------------
// real_driver.h
// -----------------------------------------------------------------------------
//
// The real-thread driver: one OS thread per model CPU, pinned through hwloc to
// a host CPU (model CPU i -> host CPU map[i], round-robin over the host CPUs
// this process may use when there are more model CPUs than host CPUs), a real
// clock (CLOCK_MONOTONIC), real ticks (each CPU thread fires its tick when
// due, unless its tick is stopped), idle by sleeping on a per-CPU condition
// variable until the next timer/tick/work item or a wakeup, and work handed
// between threads under the target CPU's mutex (the release/acquire the
// kernel's queue_work_on / ttwu provide).
//
// Same `Driver` interface and task model as the simulator (driver.h), so the
// same mechanism adapters and task bodies run on both.  Step::Run(ns) spins
// in slices of at most `slice` so the CPU thread can handle its events.
//
// When model CPUs outnumber host CPUs, `oversubscribed()` is true and every
// timing figure from this driver must be labelled "not representative".
//
// Semantics shared with the simulator are listed in driver.h; differences:
//   - Charge() is ignored (kernel time is measured on the real clock): the
//     kernel-time service (driver.h) measures EndKernelSpan on the host clock
//     and busy-waits SpendKernelTime;
//   - RunFor(d) starts the CPU threads on its first call (and waits until all
//     are pinned), lets them run for d of real time, then parks them; the
//     machine is frozen between RunFor calls (idle time does not accrue);
//   - SetCpuOnline works only between RunFor calls (FailedPrecondition from a
//     hook or task): its hooks then run on the calling thread while the CPU
//     threads are parked.  Pending work/timers of an offlined CPU move to a
//     housekeeping CPU; its tasks to CPUs of their affinity;
//   - hooks that run with a run-queue lock held (OnContextSwitch, OnMigrate)
//     may QueueWorkOn/ArmTimer but must not call Wake, SetAffinity or Spawn;
//   - a task's SetAffinity that excludes its CPU while it runs takes effect
//     at its next step boundary (at most one Run slice later);
//   - no placement-cost model (the simulator's SimOptions::refill_penalty):
//     a task that moves between host CPUs pays the host's real cache refills
//     (and several model CPUs may share one host CPU, whose caches they
//     share too).
//
// Kernel counterpart: none; it plays the kernel with real threads.
//
// Thread safety: Driver member functions may be called from any thread,
// including hooks and task bodies on any CPU thread; RunFor and AddHooks from
// the owning thread only.  Hooks for different CPUs run concurrently.

#ifndef ISOLATION_REAL_DRIVER_H_
#define ISOLATION_REAL_DRIVER_H_

#include <memory>
#include <string>
#include <vector>

#include "isolation/core/driver.h"

namespace isolation {

struct RealDriverOptions {
  int hz = 250;
  Nanos slice = 50 * kNsPerUs;     // longest uninterrupted busy-spin chunk
  Nanos timeslice = 4 * kNsPerMs;  // round-robin slice between tasks
  TickMode default_tick_mode = TickMode::kNohzIdle;
  bool pin = true;  // pin CPU threads to host CPUs
  // Explicit model->host CPU map (empty: round-robin over allowed host CPUs).
  std::vector<int> host_cpu_map;
  uint64_t seed = 1;
};

class RealThreadDriver final : public Driver {
 public:
  // Errors: host topology cannot be loaded; a host CPU in host_cpu_map that
  // this process may not use.
  static absl::StatusOr<std::unique_ptr<RealThreadDriver>> Create(Topology model,
                                                                  IsolationConfig isolation,
                                                                  RealDriverOptions options = {});
  ~RealThreadDriver() override;

  const Topology& topology() const override;
  const IsolationConfig& isolation() const override;
  bool is_simulated() const override { return false; }
  bool hooks_run_concurrently() const override { return true; }
  Mutex* RunQueueLock(int cpu) override;
  Nanos poll_interval() const override { return 2 * kNsPerMs; }
  Nanos Now() const override;
  Nanos tick_period() const override;
  void AddHooks(Hooks* hooks) override;
  absl::StatusOr<TaskId> Spawn(TaskSpec spec) override;
  void Wake(TaskId task, int waker_cpu) override;
  absl::Status SetAffinity(TaskId task, const CpuMask& mask) override;
  int TaskCpu(TaskId task) const override;
  int TaskGroup(TaskId task) const override;
  TaskId CurrentTask(int cpu) const override;
  int NumRunnable(int cpu) const override;
  bool IsIdle(int cpu) const override;
  void QueueWorkOn(int cpu, Nanos delay, WorkFn fn) override;
  int QueueHousekeepingWork(Nanos delay, WorkFn fn) override;
  TimerId ArmTimer(int cpu, Nanos expires, WorkFn fn) override;
  bool CancelTimer(TimerId id) override;
  void SetTickMode(int cpu, TickMode mode) override;
  TickMode GetTickMode(int cpu) const override;
  bool TickStopped(int cpu) const override;
  absl::Status SetCpuOnline(int cpu, bool online) override;
  absl::Status RunFor(Nanos duration) override;
  CpuStats Stats(int cpu) const override;
  uint64_t Random() override;
  // Kernel time: measured on CLOCK_MONOTONIC; SpendKernelTime busy-waits.
  KernelSpan BeginKernelSpan() const override;
  Nanos EndKernelSpan(KernelSpan span, CpuContext* ctx, Nanos modelled_ns) override;
  void SpendKernelTime(CpuContext& ctx, Nanos ns) override;

  // Host CPU that model CPU `cpu` runs on.
  int HostCpu(int cpu) const;
  // More model CPUs than usable host CPUs: timing is not representative.
  bool oversubscribed() const;
  // sched_getcpu() observed by each CPU thread at its last step (-1 before).
  int ObservedHostCpu(int cpu) const;

 private:
  struct Impl;
  explicit RealThreadDriver(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace isolation

#endif  // ISOLATION_REAL_DRIVER_H_
