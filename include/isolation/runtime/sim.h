// SPDX-License-Identifier: GPL-2.0-or-later
// -----------------------------------------------------------------------------
// sim.h
// -----------------------------------------------------------------------------
//
// The deterministic simulator: a model machine of any size (8, 128, 4096
// CPUs) run on one OS thread with a virtual clock and seeded randomness.
// It implements `Driver` (driver.h): per-CPU run queues with round-robin
// time slices, a stoppable periodic tick per CPU (TickMode), idle entry/exit,
// context switches, return to user after syscalls/ticks/switch-in, per-CPU
// work that preempts the running task, housekeeping work, one-shot timers,
// hotplug and affinity changes -- all as timestamped events processed in
// (time, sequence) order.  The same seed gives the same event trace.
//
// Time accounting: kernel activity on a CPU (a tick, work item, timer
// callback or syscall) lasts the time its hooks Charge()d plus the configured
// base cost; the running task is delayed by that long, which is how a
// modelled "stall on an isolated CPU" is measured (CpuStats::max_stall_ns).
// Base costs are charged first, so a timer callback for `expires` sees
// ctx.now() == expires + timer_cost.  Inside a CPU context Now() is that CPU's
// clock (activity start + cost charged so far); outside (At() callbacks,
// between RunFor calls) it is the time of the current event, which never
// decreases.  Reads from different CPUs' contexts may therefore step back by
// at most one kernel activity's cost.
//
// The kernel-time service (driver.h) is the model: EndKernelSpan charges and
// reports the modelled cost, SpendKernelTime charges it.  The scheduling
// rules (run queues, wake-up placement, fallback CPUs, tick-stop policy,
// argument checks) are the scheduler model the real-thread driver plays too
// (lib/runtime/sched_model.h); this file's engine is the event queue.
//
// Placement cost (SimOptions::refill_penalty, off by default): work that
// starts on a CPU other than the task's warm CPU runs longer by a modelled
// cache refill sized by the topology distance; placement_stats() counts the
// moves and charges.
//
// Choices where the kernel offers several (see lib/runtime/sim.cc):
//   - work/timers due on an offline CPU run on an online housekeeping CPU;
//   - per-CPU work is kernel activity (no OnContextSwitch to a kworker);
//   - the tick preempts a task that used its timeslice when another is
//     runnable (no OnReturnToUser for it then);
//   - a kNohzFull CPU leaving idle restarts its tick, and stops it again at
//     once when one task is runnable;
//   - CPUs start idle: the first RunFor/Spawn delivers OnStart, then
//     OnIdleEnter (and OnTickStop per tick mode) for every online CPU, so add
//     hooks before the first Spawn.
//
// Kernel counterpart: none directly; it plays kernel/sched/core.c,
// kernel/sched/idle.c, kernel/time/tick-sched.c and kernel/workqueue.c at the
// level of the events the mechanisms hook.
//
// Thread safety: not thread-safe; every call (including from hooks and task
// bodies) happens on the thread that calls RunFor.

#ifndef ISOLATION_SIM_H_
#define ISOLATION_SIM_H_

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "isolation/core/driver.h"

namespace isolation {

// How far a task's work moved from the CPU whose caches hold its working set
// (the CPU it last ran user work on), by the topology's levels.
enum class CacheDistance : uint8_t {
  kSameCpu = 0,
  kSmtSibling,        // another hardware thread of the same core (shares L1/L2)
  kCrossCoreSameLlc,  // another core under the same last-level cache
  kCrossLlc,          // another LLC in the same NUMA node
  kCrossNode,         // another NUMA node
};
inline constexpr int kNumCacheDistances = 5;
// "same_cpu", "smt_sibling", "cross_core_same_llc", "cross_llc", "cross_node".
const char* CacheDistanceName(CacheDistance d);
// The distance from `from` to `to` on `topology` (node first, then LLC, then
// core).  REQUIRES: both CPUs in range.
CacheDistance CacheDistanceBetween(const Topology& topology, int from, int to);

// The modelled cost of placement: a task whose user work
// starts on a CPU other than the one it last ran user work on first refills
// its working set into that CPU's caches, which the simulator charges as
// extra user run time (the Step::Run lasts longer), sized by CacheDistance.
// No decay: a task back on its warm CPU after any time pays nothing, and a
// task's first run (fork) pays nothing.
//
// Defaults: model defaults, tunable, estimated as working set / refill
// bandwidth with the working set = one core's private L2, 256 KiB (Ampere
// eMAG, the idle experiment's default machine: 256 KiB L2 per core pair;
// Zen 3 has 512 KiB per core, Skylake-SP 1 MiB, so larger L2s pay more):
//   smt_sibling          0: SMT siblings share L1 and L2, nothing to refill.
//   cross_core_same_llc  256 KiB / ~50 GB/s (one core refilling its L2 from
//                        the shared L3: about half of a 32 B/cycle L3->L2
//                        path at 2-3 GHz) = 5.2 us -> 5 us.
//   cross_llc            256 KiB / ~16 GB/s (from DRAM or another LLC, one
//                        core is bounded by its misses in flight: Little's
//                        law, ~20 x 64 B / ~80 ns) = 16.4 us -> 16 us.
//   cross_node           256 KiB / ~10 GB/s (the same ~20 misses over a
//                        remote hop, ~130 ns) = 26 us -> 25 us.
// Estimates, not measurements; the table: docs/idle_select.md, "Placement
// has a cost".  The kernel's sysctl_sched_migration_cost (500 us) is a
// cache-hotness heuristic (task_hot()), not a refill cost, and is not used.
// The real-thread driver has no such model: its tasks pay real refills.
struct CacheRefillPenalty {
  bool enabled = false;  // off by default: traces of existing workloads are unchanged
  Nanos smt_sibling = 0;
  Nanos cross_core_same_llc = 5 * kNsPerUs;
  Nanos cross_llc = 16 * kNsPerUs;
  Nanos cross_node = 25 * kNsPerUs;
  // The charge for `d` (0 for kSameCpu, and when not enabled).
  Nanos For(CacheDistance d) const;
};

struct SimOptions {
  uint64_t seed = 1;
  int hz = 1000;
  Nanos timeslice = 3 * kNsPerMs;
  Nanos tick_cost = 1 * kNsPerUs;  // modelled base cost of a tick
  Nanos context_switch_cost = 1 * kNsPerUs;
  Nanos work_cost = 2 * kNsPerUs;  // base cost of a per-CPU work item (kworker switch)
  Nanos timer_cost = 500;          // base cost of a timer interrupt
  // Tick mode per CPU: nohz_full CPUs of the isolation config get kNohzFull,
  // the others `default_tick_mode`.
  TickMode default_tick_mode = TickMode::kNohzIdle;
  // Record every event in the trace (needed for determinism checks; costs
  // memory on long runs).
  bool record_trace = false;
  // Newly-idle balancing (sched_balance_newidle(), formerly
  // newidle_balance()): a CPU about to enter idle first pulls one queued,
  // not running task that may run on it from the busiest CPU of its LLC
  // (most runnable tasks, at least 2): the allowed task queued longest,
  // i.e. the one that ran least recently, as detach_tasks() takes from the
  // tail of cfs_tasks -- unless the CPU's avg_idle (update_avg of its idle
  // periods, capped at 2 x migration cost) is below `newidle_cost` (the
  // max_newidle_lb_cost gate) or the task is cache-hot (left a CPU less
  // than `newidle_migration_cost` ago: task_hot(),
  // sysctl_sched_migration_cost).  The pass itself costs no modelled time;
  // LLC level only, one task.  Off by default: without it the simulator
  // has no load balancer at all.
  bool newidle_balance = false;
  Nanos newidle_cost = 10 * kNsPerUs;
  Nanos newidle_migration_cost = 500 * kNsPerUs;
  // Concurrent wake-ups.  Both 0 by default: a wakeup's select
  // and enqueue then happen at its time and the go-idle path is one step, so
  // every trace is what it was before these options existed.
  // wake_select_cost > 0: a wakeup's enqueue (Hooks::OnWakeEnqueue, then the
  // run queue) lands wake_select_cost + a jitter uniform in
  // [0, wake_select_cost) after its select step (Hooks::SelectTaskCpu); the
  // jitter comes from an engine seeded by `seed`, apart from Random()'s.
  // Wakeups issued by other CPUs or timers inside that window select while
  // it is open, so two may choose the same idle CPU (stacking: ttwu_pending
  // is set by the enqueue).  The waker's CPU is not held up meanwhile; the
  // wakee is runnable but on no run queue.
  Nanos wake_select_cost = 0;
  // idle_entry_cost > 0: the go-idle path takes this long between finding
  // the run queue empty (the CPU is published idle there: OnIdleEnter) and
  // sleeping.  An enqueue inside that window sends no IPI (the CPU is
  // polling) and is run after the re-check at its end (Hooks::IdleRecheck);
  // if a hook skips the re-check the CPU sleeps with the task queued until a
  // later event on it -- a lost wakeup, counted by lost_wakeups() and traced
  // as "lost_wakeup".  Any event on the CPU inside the window ends it.
  Nanos idle_entry_cost = 0;
  // Cache-refill penalty of a task's work starting away from its warm CPU
  // (CacheRefillPenalty above; off by default).
  CacheRefillPenalty refill_penalty;
};

// Where tasks' work landed relative to their warm CPU, over a simulator's
// life (Simulator::placement_stats()).
struct SimPlacementStats {
  // Work starts (a Step::Run beginning or resuming in user mode) on a CPU
  // other than the task's warm CPU, by CacheDistance (index kSameCpu stays
  // 0); counted whether or not the penalty is enabled.
  std::array<int64_t, kNumCacheDistances> moves{};
  int64_t penalties = 0;  // moves that were charged a non-zero refill
  Nanos penalty_ns = 0;   // their total
};

// Options of a simulator at `hz` whose kernel activities (ticks, context
// switches, work items, timer interrupts) take no modelled time unless hooks
// Charge() it: every event happens exactly at its scripted time.  For
// workloads whose model has its own notion of time (tmigr's oslat run).
SimOptions ZeroCostSimOptions(int hz, uint64_t seed = 1);

// One trace record (kind names: "tick", "switch", "idle_enter", "idle_exit",
// "tick_stop", "tick_restart", "work", "timer", "rtu", "fork", "exit",
// "migrate", "wake", "online", "offline"; with SimOptions::wake_select_cost
// "enqueue" (a = task, b = its CPU before), with idle_entry_cost
// "lost_wakeup" (a = first queued task, b = tasks queued)).
struct SimTraceEvent {
  Nanos time;
  int cpu;
  const char* kind;
  int64_t a;  // kind-specific (e.g. prev task)
  int64_t b;  // kind-specific (e.g. next task)
  bool operator==(const SimTraceEvent& o) const;
};

class Simulator final : public Driver {
 public:
  // Errors: invalid options (hz <= 0, timeslice <= 0).
  static absl::StatusOr<std::unique_ptr<Simulator>> Create(Topology topology,
                                                           IsolationConfig isolation,
                                                           SimOptions options = {});
  ~Simulator() override;

  // Driver:
  const Topology& topology() const override;
  const IsolationConfig& isolation() const override;
  bool is_simulated() const override { return true; }
  bool hooks_run_concurrently() const override { return false; }
  Nanos poll_interval() const override { return kNsPerMs; }
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
  // Errors besides Driver::RunFor's: FailedPrecondition naming the task and
  // CPU when a CPU makes no progress in virtual time -- a body whose steps
  // never take time, sleep, block or exit (Step::Run(0) or Step::Yield
  // forever) for 4096 x 4096 steps in a row; the machine stops there and
  // every later RunFor returns the same error.
  absl::Status RunFor(Nanos duration) override;
  CpuStats Stats(int cpu) const override;
  uint64_t Random() override;
  // Kernel time: the modelled cost, charged to the context's CPU.
  KernelSpan BeginKernelSpan() const override;
  Nanos EndKernelSpan(KernelSpan span, CpuContext* ctx, Nanos modelled_ns) override;
  void SpendKernelTime(CpuContext& ctx, Nanos ns) override;

  // Simulator-only:
  // Runs `fn` at absolute virtual time `when` on the driver thread (outside
  // any CPU context): lets a harness script hotplug, affinity or cpuset
  // changes at exact times.
  void At(Nanos when, absl::AnyInvocable<void()> fn);
  const std::vector<SimTraceEvent>& trace() const;
  // A hash of the whole trace so far (each record's fields as one word,
  // chained in order): equal for equal traces; a fingerprint, not a proof.
  uint64_t TraceHash() const;
  int64_t events_processed() const;
  // Moves and refill penalties so far (SimOptions::refill_penalty).
  SimPlacementStats placement_stats() const;
  // CPUs that went to sleep with a woken task on their run queue: the go-idle
  // re-check was skipped (SimOptions::idle_entry_cost; 0 without it).
  int64_t lost_wakeups() const;

 private:
  struct Impl;
  explicit Simulator(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace isolation

#endif  // ISOLATION_SIM_H_
