// SPDX-License-Identifier: GPL-2.0-or-later
// -----------------------------------------------------------------------------
// driver.h
// -----------------------------------------------------------------------------
//
// The hook interface between mechanisms and the two drivers that run them.
//
// A mechanism (mm_cid, tmigr, idle_select, vmstat) is a plain data structure
// with kernel-like entry points taking a CPU number and a time.  A *driver*
// plays the kernel around it: it runs tasks on model CPUs, ticks them, idles
// them, switches between tasks, returns to user space, runs deferred work and
// timers, and calls the mechanism through `Hooks` at the same points the kernel
// would.  Two drivers implement `Driver`:
//
//   Simulator         (sim.h)          one OS thread, virtual clock, seeded
//                                      randomness, any number of model CPUs;
//                                      same seed => same event trace.
//   RealThreadDriver  (real_driver.h)  one pinned OS thread per model CPU,
//                                      CLOCK_MONOTONIC, real ticks, idle by
//                                      sleeping.
//
// A harness author writes one `Hooks` adapter that forwards events to the
// mechanism's entry points, and gets both drivers.
//
//   Hooks         events a driver delivers (tick, idle enter/exit, tick
//                 stop/restart, context switch, return to user, fork/exit,
//                 migration, affinity change, hotplug, wakeup placement).
//   TaskBody      what a task does each time it runs (Step: run N ns, sleep,
//                 block until woken, yield, exit; syscalls through the
//                 TaskContext).
//   WorkFn        kernel work run on a CPU: a timer callback (IRQ context), a
//                 per-CPU work item (kworker: preempts the current task and is
//                 counted as an interruption), or housekeeping work.
//   Driver        services: spawn tasks, queue work and timers, change affinity
//                 and online state, tick mode, run for a span of time, stats.
//   Tracer        (tracer.h) optional trace sink: the driver reports what each
//                 CPU runs and its kernel activities, hook adapters report
//                 their mechanism's events (Driver::tracer()).
//   Kernel time   how long a piece of kernel work lasts (BeginKernelSpan /
//                 EndKernelSpan, SpendKernelTime): charged to the model in the
//                 simulator, measured on the host clock on real threads.  An
//                 adapter asks this service, never which driver it runs on.
//
// Kernel counterparts: scheduler_tick/sched_tick (kernel/sched/core.c),
// do_idle (kernel/sched/idle.c), tick_nohz_stop_tick / tick_nohz_restart
// (kernel/time/tick-sched.c), context_switch, exit_to_user_mode_prepare,
// queue_delayed_work_on / mm_percpu_wq, hrtimers, CPU hotplug callbacks,
// select_task_rq.
//
// Thread-safety contract (what a mechanism may assume):
//   - Per-CPU hooks (OnTick, OnIdleEnter/Exit, OnTickStop/Restart,
//     OnContextSwitch, OnReturnToUser, work and timer callbacks for `cpu`) run
//     on `cpu`'s context: in the simulator on the single driver thread; in the
//     real-thread driver on the thread pinned for `cpu`.  Two hooks for the
//     same CPU never run concurrently; hooks for different CPUs do run
//     concurrently in the real-thread driver, as in the kernel.
//   - OnContextSwitch and OnMigrate are called with that CPU's run-queue lock
//     held (the driver's per-CPU mutex), like the kernel's rq lock.
//   - Driver member functions may be called from any hook or task context
//     unless stated otherwise; RunFor and AddHooks only from the owning thread.
//
// Memory ordering: everything a context did before QueueWorkOn / ArmTimer /
// Wake / Spawn is visible to the work, timer or task when it runs (the
// real-thread driver hands items over under the target CPU's mutex, which is
// the release/acquire pair the kernel's queue_work_on and ttwu provide).

#ifndef ISOLATION_DRIVER_H_
#define ISOLATION_DRIVER_H_

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "isolation/core/clock.h"
#include "isolation/core/cpumask.h"
#include "isolation/core/isolation_config.h"
#include "isolation/core/mutex.h"
#include "isolation/core/topology.h"
#include "isolation/core/tracer.h"

namespace isolation {

class Driver;

using TaskId = int32_t;
inline constexpr TaskId kIdleTask = -1;  // "no task": the CPU's idle task

// How a CPU's periodic tick behaves (CONFIG_NO_HZ_IDLE / nohz_full=).
enum class TickMode {
  kPeriodic,  // tick always runs
  kNohzIdle,  // tick stops while the CPU is idle
  kNohzFull,  // tick also stops while exactly one task is runnable
};

// What a task asks for when one step of its body ends.
struct Step {
  enum class Kind { kRun, kSleep, kBlock, kYield, kExit };
  Kind kind = Kind::kRun;
  Nanos ns = 0;
  // Run in user mode for `ns` (simulator: advance virtual time, possibly
  // interrupted by ticks/work/timers; real driver: busy-spin, in slices that
  // let the CPU thread handle pending events).  Run(0) (or negative) =
  // return immediately.  Run(kNanosMax) runs forever: the task never asks
  // for another step (clocks saturate at kNanosMax, they do not wrap).
  static Step Run(Nanos ns) { return {Kind::kRun, ns}; }
  // Sleep `ns` (negative = 0), then wake up (placement through
  // Hooks::SelectTaskCpu).  Sleep(kNanosMax) never wakes (Wake() does not
  // end a sleep; use Block() for a sleep another task ends).
  static Step Sleep(Nanos ns) { return {Kind::kSleep, ns}; }
  // Sleep until another context calls Wake() for this task.
  static Step Block() { return {Kind::kBlock, 0}; }
  // Go to the back of the run queue.
  static Step Yield() { return {Kind::kYield, 0}; }
  // The task exits (Hooks::OnTaskExit runs on its CPU).
  static Step Exit() { return {Kind::kExit, 0}; }
};

// Kernel context on one CPU: a tick, a timer callback, a work item, a
// syscall body or a hook.  Charge() adds modelled kernel time (simulator only;
// the real driver measures real time and ignores it).
class CpuContext {
 public:
  virtual ~CpuContext() = default;
  virtual int cpu() const = 0;
  virtual Nanos now() const = 0;
  virtual Driver& driver() = 0;
  virtual void Charge(Nanos ns) = 0;
};

// What a running task can do from its body.
class TaskContext : public CpuContext {
 public:
  virtual TaskId task() const = 0;
  // Enter the kernel on this CPU: runs `fn` in kernel context, charges
  // `cost_ns` (simulator), then returns to user mode, which delivers
  // Hooks::OnReturnToUser.
  virtual void Syscall(absl::FunctionRef<void(CpuContext&)> fn, Nanos cost_ns = 0) = 0;
  // Seeded per-task random engine (deterministic in the simulator).
  virtual std::mt19937_64& rng() = 0;
};

class TaskBody {
 public:
  virtual ~TaskBody() = default;
  // Called whenever the task is current and its previous step has ended.
  virtual Step Next(TaskContext& ctx) = 0;
};
// A TaskBody from a callable.
std::unique_ptr<TaskBody> MakeTaskBody(absl::AnyInvocable<Step(TaskContext&)> fn);

using WorkFn = absl::AnyInvocable<void(CpuContext&)>;
using TimerId = int64_t;
inline constexpr TimerId kNoTimer = -1;

struct TaskSpec {
  std::string name;
  int cpu = 0;                // CPU the task starts on
  CpuMask affinity;           // empty = every possible CPU
  int group = 0;              // address space ("mm") id; tasks of a group share it
  TaskId parent = kIdleTask;  // for Hooks::OnTaskFork
  std::unique_ptr<TaskBody> body;
};

// Events delivered by a driver.  Default implementations do nothing, so an
// adapter overrides only what its mechanism needs.
class Hooks {
 public:
  virtual ~Hooks() = default;
  // Once, before any other event, from the thread calling RunFor.
  virtual void OnStart(Driver& driver) { (void)driver; }
  // Scheduler tick on ctx.cpu() (interrupt context).  `curr` is the task
  // interrupted (kIdleTask if idle).
  virtual void OnTick(CpuContext& ctx, TaskId curr) {
    (void)ctx;
    (void)curr;
  }
  virtual void OnIdleEnter(int cpu, Nanos now) {
    (void)cpu;
    (void)now;
  }
  virtual void OnIdleExit(int cpu, Nanos now) {
    (void)cpu;
    (void)now;
  }
  // The tick stops (idle, or nohz_full with a single task) / restarts.
  virtual void OnTickStop(CpuContext& ctx) { (void)ctx; }
  virtual void OnTickRestart(CpuContext& ctx) { (void)ctx; }
  // prev/next may be kIdleTask.  Run-queue lock of `cpu` held.
  virtual void OnContextSwitch(int cpu, TaskId prev, TaskId next, Nanos now) {
    (void)cpu;
    (void)prev;
    (void)next;
    (void)now;
  }
  // The current task is about to resume user mode (after a syscall, an
  // interrupt such as the tick, or a switch-in).
  virtual void OnReturnToUser(CpuContext& ctx, TaskId task) {
    (void)ctx;
    (void)task;
  }
  // A task was created (before it first runs) / is exiting on `cpu`.
  virtual void OnTaskFork(TaskId parent, TaskId child, int group, Nanos now) {
    (void)parent;
    (void)child;
    (void)group;
    (void)now;
  }
  virtual void OnTaskExit(int cpu, TaskId task, Nanos now) {
    (void)cpu;
    (void)task;
    (void)now;
  }
  // A queued (not running) task moves between CPUs (set_task_cpu +
  // activate_task).  Destination run-queue lock held.
  virtual void OnMigrate(TaskId task, int from, int to, Nanos now) {
    (void)task;
    (void)from;
    (void)to;
    (void)now;
  }
  virtual void OnAffinityChange(TaskId task, const CpuMask& mask, Nanos now) {
    (void)task;
    (void)mask;
    (void)now;
  }
  virtual void OnCpuOnline(int cpu, Nanos now) {
    (void)cpu;
    (void)now;
  }
  virtual void OnCpuOffline(int cpu, Nanos now) {
    (void)cpu;
    (void)now;
  }
  // Wakeup placement (select_task_rq).  Return a CPU in the task's affinity,
  // or -1 to let the driver choose (prev_cpu if allowed and online).  Runs on
  // the waker's CPU (`waker_cpu`, -1 for a timer wakeup).
  virtual int SelectTaskCpu(TaskId task, int prev_cpu, int waker_cpu, Nanos now) {
    (void)task;
    (void)prev_cpu;
    (void)waker_cpu;
    (void)now;
    return -1;
  }
  // The enqueue step of that wakeup (ttwu_queue() / activate_task()): `task`
  // is about to become visible on `cpu`'s run queue.  Follows the task's
  // SelectTaskCpu at once, or, on the simulator with
  // SimOptions::wake_select_cost, after the select->enqueue window in which
  // other wakeups may select.  Not for forks or migrations.
  virtual void OnWakeEnqueue(TaskId task, int cpu, Nanos now) {
    (void)task;
    (void)cpu;
    (void)now;
  }
  // The go-idle half of the wakeup handshake: `cpu` published itself idle
  // (OnIdleEnter) and is about to sleep; true = re-check the run queue first
  // (do_idle()'s need_resched() after __current_set_polling()), so an
  // enqueue that raced with the idle entry is run.  Every hook must agree;
  // false from any skips the re-check (a negative control's broken
  // handshake: the CPU sleeps with that task queued).  Called only by the
  // simulator with SimOptions::idle_entry_cost > 0.
  virtual bool IdleRecheck(int cpu, Nanos now) {
    (void)cpu;
    (void)now;
    return true;
  }
};

// Per-CPU counters kept by every driver.
struct CpuStats {
  int64_t ticks = 0;
  int64_t context_switches = 0;
  int64_t work_items = 0;       // per-CPU work (kworker) executions on this CPU
  int64_t timer_callbacks = 0;  // timer callbacks run on this CPU
  int64_t interruptions = 0;    // kernel activities that preempted a running user task
  Nanos kernel_ns = 0;          // time in ticks/work/timers/syscalls
  Nanos max_stall_ns = 0;       // longest single interruption of a running user task
  Nanos stalled_ns = 0;         // all interruptions of a running user task together
  Nanos idle_ns = 0;
  int64_t tick_stops = 0;
};

class Driver {
 public:
  virtual ~Driver() = default;

  virtual const Topology& topology() const = 0;
  virtual const IsolationConfig& isolation() const = 0;
  int num_cpus() const { return topology().num_cpus(); }
  // For drivers' own tooling (trace labels, noise meter).  Mechanism adapters
  // do not ask it: they use the kernel-time service and the properties below.
  virtual bool is_simulated() const = 0;
  // True when hooks for different CPUs may run at the same time on different
  // host threads (real threads); false when every hook, work item and task
  // body runs on the one thread that calls RunFor, one after the other.  With
  // false, an adapter may check invariants that read every CPU's state after
  // each event, and must not let a host thread of its own (e.g. a liburcu
  // call_rcu worker) call into the mechanism behind the driver's back.
  virtual bool hooks_run_concurrently() const = 0;
  // How long a harness waiting for a condition should let RunFor run before
  // checking it again: the simulator 1 ms of virtual time; the real-thread
  // driver 2 ms (each RunFor parks and restarts every CPU thread).
  virtual Nanos poll_interval() const = 0;
  // Current time: virtual (simulator) or CLOCK_MONOTONIC since the driver's
  // start (real threads).  Both start at 0.
  virtual Nanos Now() const = 0;
  // Tick period (1 s / HZ).
  virtual Nanos tick_period() const = 0;
  int hz() const { return static_cast<int>(kNsPerSec / tick_period()); }

  // Register a hook adapter (not owned).  REQUIRES: before the first RunFor.
  virtual void AddHooks(Hooks* hooks) = 0;

  // Create a task; it becomes runnable on spec.cpu at the current time.
  // Errors: CPU out of range or offline, affinity empty or excluding the CPU.
  virtual absl::StatusOr<TaskId> Spawn(TaskSpec spec) = 0;
  // Make a blocked task runnable.  A Wake for a task that is running or
  // runnable is remembered and makes its next Step::Block() return at once
  // (no lost wakeup between "check condition" and Block, like
  // set_current_state() + try_to_wake_up()); a sleeping or exited task is
  // unaffected.  An unknown task is ignored; a waker_cpu outside
  // [-1, num_cpus()) is passed to the hooks as -1 (a remote wakeup).
  virtual void Wake(TaskId task, int waker_cpu) = 0;
  virtual absl::Status SetAffinity(TaskId task, const CpuMask& mask) = 0;
  virtual int TaskCpu(TaskId task) const = 0;
  virtual int TaskGroup(TaskId task) const = 0;
  // Observers: an unknown task gives -1 (TaskCpu, TaskGroup); a CPU outside
  // [0, num_cpus()) kIdleTask / 0 / false / periodic / true (TickStopped) /
  // zero stats.  Racy outside the CPU's own context on the real driver (like
  // rq->curr).
  virtual TaskId CurrentTask(int cpu) const = 0;
  virtual int NumRunnable(int cpu) const = 0;
  virtual bool IsIdle(int cpu) const = 0;

  // Per-CPU deferred work (queue_delayed_work_on on a per-CPU workqueue): runs
  // on `cpu` after `delay`, preempting its current task.  If `cpu` is offline
  // when queued, or goes down before the item runs, both drivers run it on an
  // online housekeeping (HK_TYPE_WQ) CPU instead: `fn` must check that
  // CpuContext::cpu() is the CPU it queued for before acting as that CPU's
  // work (the kernel's hotplug callbacks usually cancel such work).  A `cpu`
  // outside [0, num_cpus()) is treated like an offline one; a negative delay
  // is 0; kNanosMax means never.
  virtual void QueueWorkOn(int cpu, Nanos delay, WorkFn fn) = 0;
  // Unbound work restricted to housekeeping CPUs (HK_TYPE_WQ): runs on one of
  // them after `delay`.  Returns the chosen CPU.
  virtual int QueueHousekeepingWork(Nanos delay, WorkFn fn) = 0;
  // A one-shot timer on `cpu` at absolute time `expires` (hrtimer); runs in
  // interrupt context.  A timer on an idle CPU wakes it.  If `cpu` is offline
  // (when armed or at expiry) it runs on an online housekeeping
  // (HK_TYPE_TIMER) CPU, as hrtimers migrate at CPU-down time (also for a
  // `cpu` outside [0, num_cpus())).  An expiry in the past fires at once;
  // kNanosMax never fires.
  virtual TimerId ArmTimer(int cpu, Nanos expires, WorkFn fn) = 0;
  // True if the timer was pending and is now cancelled.
  virtual bool CancelTimer(TimerId id) = 0;

  // A `cpu` outside [0, num_cpus()) is ignored.
  virtual void SetTickMode(int cpu, TickMode mode) = 0;
  virtual TickMode GetTickMode(int cpu) const = 0;
  virtual bool TickStopped(int cpu) const = 0;

  // CPU hotplug: tasks of an offlined CPU move to an online CPU of their
  // affinity (or any online CPU).  Errors: out of range, last online CPU.
  virtual absl::Status SetCpuOnline(int cpu, bool online) = 0;

  // Run the machine for `duration` of (virtual or real) time.  Returns when
  // the time has passed; tasks keep their state for a later RunFor.
  // Errors: negative duration; a window reaching kNanosMax ("never": Now() +
  // duration >= kNanosMax), InvalidArgument naming the value.
  virtual absl::Status RunFor(Nanos duration) = 0;

  virtual CpuStats Stats(int cpu) const = 0;

  // The run-queue lock the driver holds around OnContextSwitch and
  // OnMigrate for `cpu` (rq->lock), so that a mechanism whose remote
  // operations must exclude that CPU's switches takes the same lock instead
  // of a second one per switch (mm_cid owner619's fixups take other CPUs' rq
  // locks, as mm_cid_fixup_cpus_to_tasks() does).  Hooks that run without
  // it (OnTaskFork, OnTaskExit, OnAffinityChange, OnTick, ...) may take it;
  // hooks that run with it must not take another CPU's.  nullptr where hooks
  // never run concurrently (the simulator) or for a CPU out of range.
  virtual Mutex* RunQueueLock(int cpu) {
    (void)cpu;
    return nullptr;
  }

  // Deterministic randomness for harness decisions (seeded in the simulator).
  virtual uint64_t Random() = 0;

  // --- Kernel-time service ---------------------------------------------------
  // How long a piece of kernel work done by a hook adapter lasts.  The
  // simulator charges the modelled cost to the CPU of `ctx` (its clock
  // advances, the interrupted task is stalled that long) and reports it; the
  // real-thread driver measures the work on CLOCK_MONOTONIC and ignores the
  // model.  `ctx` may be nullptr for work running outside every model CPU (a
  // host helper thread): nothing is charged.
  //
  //   const KernelSpan span = driver.BeginKernelSpan();
  //   ... the work ...
  //   const Nanos took = driver.EndKernelSpan(span, ctx, visits * kCostPerVisit);
  //
  // Kernel counterpart: the time the kernel spends in the work itself (what
  // a tracer's duration of the function would show).
  struct KernelSpan {
    Nanos host_start = 0;  // real threads: CLOCK_MONOTONIC at Begin; simulator: unused
  };
  virtual KernelSpan BeginKernelSpan() const = 0;
  virtual Nanos EndKernelSpan(KernelSpan span, CpuContext* ctx, Nanos modelled_ns) = 0;
  // Kernel work of a known length (e.g. a timer callback's modelled cost):
  // charged in the simulator; on real threads the CPU thread is kept busy
  // that long, so the time shows where the real driver measures.
  virtual void SpendKernelTime(CpuContext& ctx, Nanos ns) = 0;

  // The trace sink of this run (tracer.h), nullptr when tracing is off (the
  // default).  Not owned.  REQUIRES: set before the first Spawn or RunFor:
  // the driver's CPU contexts and the hook adapters (in OnStart) read it
  // without synchronisation, and a sink attached mid-run would see slices
  // without their start.
  void SetTracer(Tracer* tracer) { tracer_ = tracer; }
  Tracer* tracer() const { return tracer_; }

 protected:
  Tracer* tracer_ = nullptr;
};

}  // namespace isolation

#endif  // ISOLATION_DRIVER_H_
