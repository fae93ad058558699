// SPDX-License-Identifier: GPL-2.0-or-later
//
// The deterministic simulator (sim.h): this file is its Driver interface
// (argument checks, the public calls); the engine is split by responsibility
// over sim_engine.cc (event loop, kernel activities, trace), sim_cpu.cc
// (boot, tick and nohz, idle, return to user -- the policy of the CPU state
// machine shared with the real-thread driver, cpu_state.h) and sim_sched.cc
// (switch, dispatch, wake-up, placement, newidle pull, refill cost), around
// the state in sim_internal.h.  The model they implement:
//
// Model.  One global event queue of plain `Event` records popped in (time,
// sequence) order; the sequence number is a monotonically increasing counter,
// so two runs with the same seed pop events in exactly the same order.  The
// queue (event_queue.h) keeps the events of one time in a FIFO bucket and
// heap-orders only the buckets: the ticks of all CPUs share their times.
// Closures (work items, timer callbacks, At() callbacks) live in slot pools
// indexed by the event; the queue itself never allocates per event once it
// has grown.
//
// Per CPU: a local `clock` that runs while the CPU processes one event (hooks
// and bodies see it through CpuContext::now() and Driver::Now()), and
// `busy_until`, the end of its last kernel activity.  An event for a CPU that
// pops while the CPU is still busy is pushed back to `busy_until` (same order
// among the deferred ones), so kernel activities on one CPU never overlap.
//
// Time inside a kernel activity: Now() is the activity's start time plus the
// cost charged so far (base cost first, then whatever hooks Charge()).  So
// Driver::Now() read from different CPUs' contexts may step back by at most
// one activity's cost; outside any CPU context it is the time of the event
// being processed, which never decreases.
//
// A user task in Step::Run(ns) has `run_remaining` and `resume_at`; its end is
// one kRunEnd event.  A kernel activity that interrupts it deducts the time
// already run, bumps the CPU's `run_gen` (which makes the pending kRunEnd
// stale: lazy deletion) and, once the activity is over, re-posts the end at
// clock + remaining.  The difference is the stall (CpuStats::max_stall_ns).
//
// Ticks are kTick events at multiples of the tick period, with a per-CPU
// generation number so that stopping the tick simply makes the pending tick
// stale.  An idle CPU with a stopped tick has no event in the queue at all.
//
// Modelling choices of this simulator (documented here and in sim.h):
//  - Work items and timer callbacks whose CPU is offline when they fall due
//    run on a housekeeping (HK_TYPE_WQ / HK_TYPE_TIMER) online CPU instead,
//    like unbound work and like the timer migration done at CPU-down time.
//  - An offlined CPU stays in its idle state (no OnIdleExit), and its tick is
//    stopped through the ordinary OnTickStop; onlining restarts it if its tick
//    mode needs it.  Tasks of an offlined CPU go to an online CPU of their
//    affinity, else to any online CPU (select_fallback_rq) without changing
//    their affinity.
//  - Per-CPU work is kernel activity on that CPU (interruption of the current
//    task), not a context switch to a kworker: no OnContextSwitch.
//  - A kNohzFull CPU leaving idle restarts its tick (OnTickRestart, as
//    tick_nohz_idle_exit does) and stops it again at once if only one task is
//    runnable (the kernel does it at the next interrupt exit).
//  - Preemption at the tick: when the current task has used its timeslice and
//    another task is runnable, the tick switches to it; the preempted task
//    gets no OnReturnToUser from that tick.
//  - Placement cost (SimOptions::refill_penalty): charged where a task's
//    user work starts (Dispatch), not at the switch, so a task that blocks
//    again without running work pays nothing and its warm CPU stays where
//    its last work ran; an interrupted Run that resumes on the same CPU pays
//    nothing, one evicted mid-run pays on its new CPU.
//  - Wake() on a task that is running or runnable records a pending wakeup
//    consumed by its next Step::Block() (which then does not block): the
//    lost-wakeup protection the kernel gets from set_current_state().
//  - Concurrent wake-ups (both off by default): with
//    SimOptions::wake_select_cost a wakeup's enqueue is its own event
//    (kWakeEnqueue, not bound to a CPU, so the waker is not held up) after
//    the select; with idle_entry_cost a CPU that found its run queue empty
//    is published idle at once but sleeps only at kIdleCommit, after the
//    hooks' re-check (Hooks::IdleRecheck).  Inside that window a Kick sends
//    nothing (the CPU polls); any other event on the CPU ends the window.
//
// Kernel counterpart: the scheduler, tick and workqueue behaviour of a
// machine as seen by the mechanisms' hooks (driver.h lists each hook's).
//
// Thread safety: none; a Simulator is used from one thread, and hooks and
// task bodies run on that thread (RunFor refuses to be re-entered).

#include <algorithm>
#include <cstring>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "isolation/runtime/sim.h"
#include "runtime/cpu_state.h"
#include "runtime/sched_model.h"
#include "runtime/sim_internal.h"

namespace isolation {

using sim_internal::EvKind;
using sim_internal::TaskState;

bool SimTraceEvent::operator==(const SimTraceEvent& o) const {
  return time == o.time && cpu == o.cpu && std::strcmp(kind, o.kind) == 0 && a == o.a && b == o.b;
}

SimOptions ZeroCostSimOptions(int hz, uint64_t seed) {
  SimOptions o;
  o.seed = seed;
  o.hz = hz;
  o.tick_cost = 0;
  o.context_switch_cost = 0;
  o.work_cost = 0;
  o.timer_cost = 0;
  return o;
}

// --- Simulator ---------------------------------------------------------------------

absl::StatusOr<std::unique_ptr<Simulator>> Simulator::Create(Topology topology,
                                                             IsolationConfig isolation,
                                                             SimOptions options) {
  if (absl::Status st = sched::CheckDriverSetup("Simulator", options.hz, options.timeslice,
                                                topology.num_cpus(), isolation.num_cpus());
      !st.ok()) {
    return st;
  }
  if (options.tick_cost < 0 || options.context_switch_cost < 0 || options.work_cost < 0 ||
      options.timer_cost < 0 || options.newidle_cost < 0 || options.newidle_migration_cost < 0 ||
      options.newidle_migration_cost > kNanosMax / 2 || options.wake_select_cost < 0 ||
      options.wake_select_cost > kNanosMax / 4 || options.idle_entry_cost < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Simulator: modelled costs must be >= 0 (newidle_migration_cost <= kNanosMax / 2, "
        "wake_select_cost <= "
        "kNanosMax / 4), got tick ",
        options.tick_cost, " switch ", options.context_switch_cost, " work ", options.work_cost,
        " timer ", options.timer_cost, " newidle ", options.newidle_cost, " newidle_migration ",
        options.newidle_migration_cost, " wake_select ", options.wake_select_cost, " idle_entry ",
        options.idle_entry_cost));
  }
  if (const CacheRefillPenalty& p = options.refill_penalty;
      p.smt_sibling < 0 || p.cross_core_same_llc < 0 || p.cross_llc < 0 || p.cross_node < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("Simulator: refill penalties must be >= 0, got smt_sibling ", p.smt_sibling,
                     " cross_core_same_llc ", p.cross_core_same_llc, " cross_llc ", p.cross_llc,
                     " cross_node ", p.cross_node));
  }
  auto impl = std::make_unique<Impl>(std::move(topology), std::move(isolation), options);
  Impl* raw = impl.get();
  std::unique_ptr<Simulator> sim(new Simulator(std::move(impl)));
  raw->self = sim.get();
  return sim;
}

Simulator::Simulator(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Simulator::~Simulator() = default;

const Topology& Simulator::topology() const { return impl_->topology; }
const IsolationConfig& Simulator::isolation() const { return impl_->isolation; }
Nanos Simulator::Now() const { return impl_->Now(); }
Nanos Simulator::tick_period() const { return impl_->tick_period; }

void Simulator::AddHooks(Hooks* hooks) {
  if (hooks == nullptr) return;
  impl_->hooks.push_back(hooks);
  // Added after the start: it still gets OnStart (but missed the boot events).
  if (impl_->started) impl_->EnsureStarted();
}

absl::StatusOr<TaskId> Simulator::Spawn(TaskSpec spec) {
  Impl& s = *impl_;
  const int n = s.num_cpus();
  absl::StatusOr<CpuMask> affinity =
      sched::CheckSpawn(spec, n, spec.cpu >= 0 && spec.cpu < n && s.cpu_at(spec.cpu).online);
  if (!affinity.ok()) return affinity.status();
  s.EnsureStarted();
  const TaskId id = static_cast<TaskId>(s.tasks.size());
  Impl::Task& t = s.tasks.emplace_back();
  t.name = std::move(spec.name);
  t.group = spec.group;
  t.affinity = *std::move(affinity);
  t.cpu = spec.cpu;
  t.state = TaskState::kRunnable;
  t.body = std::move(spec.body);
  s.task_rngs.emplace_back(sched::TaskRngSeed(s.options.seed, id));
  const Nanos now = s.Now();
  s.Trace(now, spec.cpu, Impl::kSimEvFork, spec.parent, id);
  for (Hooks* h : s.hooks) h->OnTaskFork(spec.parent, id, spec.group, now);
  s.cpu_at(spec.cpu).rq.PushBack(id);
  s.Kick(spec.cpu);
  return id;
}

void Simulator::Wake(TaskId task, int waker_cpu) {
  Impl& s = *impl_;
  if (task < 0 || static_cast<size_t>(task) >= s.tasks.size()) return;
  waker_cpu = sched::NormalizeWakerCpu(waker_cpu, s.num_cpus());
  Impl::Task& t = s.task_at(task);
  if (t.state == TaskState::kBlocked) {
    s.TryToWakeUp(task, waker_cpu);
  } else if (t.state == TaskState::kRunning || t.state == TaskState::kRunnable) {
    t.wake_pending = true;
  }
}

absl::Status Simulator::SetAffinity(TaskId task, const CpuMask& mask) {
  Impl& s = *impl_;
  const bool known = task >= 0 && static_cast<size_t>(task) < s.tasks.size();
  if (absl::Status st = sched::CheckAffinity(
          known, task, mask, s.num_cpus(),
          mask.nbits() == s.num_cpus() && mask.Intersects(s.topology.online()));
      !st.ok()) {
    return st;
  }
  s.EnsureStarted();
  Impl::Task& t = s.task_at(task);
  t.affinity = mask;
  t.affinity_known_cpu = -1;
  const Nanos now = s.Now();
  s.Trace(now, t.cpu, Impl::kSimEvAffinity, task, 0);
  for (Hooks* h : s.hooks) h->OnAffinityChange(task, mask, now);
  if (t.state == TaskState::kExited || mask.Test(t.cpu)) return absl::OkStatus();
  if (t.state == TaskState::kRunnable) {
    // Queued: move it now (move_queued_task()).
    Impl::Cpu& c = s.cpu_at(t.cpu);
    if (c.rq.Remove(task)) {
      const int from = t.cpu;
      s.MoveQueued(task, from, s.Place().Fallback(t.affinity));
      s.Kick(from);
    }
  } else if (t.state == TaskState::kRunning && s.in_body != task) {
    // Running: its CPU evicts it at its next scheduling point (the stopper).
    s.Kick(t.cpu);
  }
  // In its own body: Dispatch() evicts it when the body returns.
  return absl::OkStatus();
}

int Simulator::TaskCpu(TaskId task) const {
  if (task < 0 || static_cast<size_t>(task) >= impl_->tasks.size()) return -1;
  return impl_->tasks[static_cast<size_t>(task)].cpu;
}

int Simulator::TaskGroup(TaskId task) const {
  if (task < 0 || static_cast<size_t>(task) >= impl_->tasks.size()) return -1;
  return impl_->tasks[static_cast<size_t>(task)].group;
}

TaskId Simulator::CurrentTask(int cpu) const {
  if (cpu < 0 || cpu >= impl_->num_cpus()) return kIdleTask;
  return impl_->cpus[static_cast<size_t>(cpu)].curr;
}

int Simulator::NumRunnable(int cpu) const {
  if (cpu < 0 || cpu >= impl_->num_cpus()) return 0;
  return impl_->NumRunning(impl_->cpus[static_cast<size_t>(cpu)]);
}

bool Simulator::IsIdle(int cpu) const {
  if (cpu < 0 || cpu >= impl_->num_cpus()) return false;
  const Impl::Cpu& c = impl_->cpus[static_cast<size_t>(cpu)];
  return c.curr == kIdleTask && c.rq.empty();
}

void Simulator::QueueWorkOn(int cpu, Nanos delay, WorkFn fn) {
  Impl& s = *impl_;
  // An out-of-range CPU is a caller bug; run the work on a housekeeping CPU
  // rather than abort.
  if (cpu < 0 || cpu >= s.num_cpus()) cpu = s.Place().Housekeeping(HousekeepingType::kWq);
  const uint32_t slot = s.work_pool.Add(std::move(fn));
  s.Post(sched::DueAfter(s.Now(), delay), EvKind::kWork, cpu, slot, 0);
}

int Simulator::QueueHousekeepingWork(Nanos delay, WorkFn fn) {
  Impl& s = *impl_;
  const int chosen = s.Place().NextHousekeeping(s.hk_cursor);
  s.hk_cursor = chosen;
  QueueWorkOn(chosen, delay, std::move(fn));
  return chosen;
}

TimerId Simulator::ArmTimer(int cpu, Nanos expires, WorkFn fn) {
  Impl& s = *impl_;
  if (cpu < 0 || cpu >= s.num_cpus()) cpu = s.Place().Housekeeping(HousekeepingType::kTimer);
  uint32_t slot;
  if (!s.timer_free.empty()) {
    slot = s.timer_free.back();
    s.timer_free.pop_back();
  } else {
    slot = static_cast<uint32_t>(s.timers.size());
    s.timers.emplace_back();
  }
  Impl::TimerSlot& ts = s.timers[slot];
  ts.fn = std::move(fn);
  ts.pending = true;
  s.Post(std::max(expires, s.Now()), EvKind::kTimer, cpu, slot, ts.gen);
  return (static_cast<TimerId>(ts.gen) << 32) | static_cast<TimerId>(slot);
}

bool Simulator::CancelTimer(TimerId id) {
  Impl& s = *impl_;
  if (id < 0) return false;
  const auto slot = static_cast<size_t>(id & 0xffffffff);
  const auto gen = static_cast<uint64_t>(id >> 32);
  if (slot >= s.timers.size()) return false;
  Impl::TimerSlot& ts = s.timers[slot];
  if (!ts.pending || ts.gen != gen) return false;
  ts.pending = false;
  ts.fn = nullptr;
  ++ts.gen;
  s.timer_free.push_back(static_cast<uint32_t>(slot));
  return true;
}

void Simulator::SetTickMode(int cpu, TickMode mode) {
  Impl& s = *impl_;
  if (cpu < 0 || cpu >= s.num_cpus()) return;
  Impl::Cpu& c = s.cpu_at(cpu);
  c.mode = mode;
  if (!s.started || !c.online) return;
  s.InCpuContext(c, [&] { s.UpdateTick(c); });
}

TickMode Simulator::GetTickMode(int cpu) const {
  if (cpu < 0 || cpu >= impl_->num_cpus()) return TickMode::kPeriodic;
  return impl_->cpus[static_cast<size_t>(cpu)].mode;
}

bool Simulator::TickStopped(int cpu) const {
  if (cpu < 0 || cpu >= impl_->num_cpus()) return true;
  return impl_->cpus[static_cast<size_t>(cpu)].tick_stopped;
}

absl::Status Simulator::SetCpuOnline(int cpu, bool online) {
  Impl& s = *impl_;
  if (absl::Status st = sched::CheckHotplugCpu(cpu, s.num_cpus()); !st.ok()) return st;
  Impl::Cpu& c = s.cpu_at(cpu);
  if (c.online == online) return absl::OkStatus();
  s.EnsureStarted();
  if (!online && s.topology.online().Weight() <= 1) {
    return absl::FailedPreconditionError(
        absl::StrCat("SetCpuOnline: cpu ", cpu, " is the last online CPU"));
  }
  if (absl::Status st = s.topology.SetOnline(cpu, online); !st.ok()) return st;
  if (!online) {
    s.InCpuContext(c, [&] {
      s.Trace(c.clock, cpu, Impl::kSimEvOffline, 0, 0);
      if (s.tracer != nullptr) cpu_state::TraceInstant(s.tracer, cpu, c.clock, "cpu_offline");
      for (Hooks* h : s.hooks) h->OnCpuOffline(cpu, c.clock);
      c.online = false;
      // Tasks leave (sched_cpu_dying / migrate_tasks); the current one unless it
      // is executing its body right now (then Dispatch() evicts it on return).
      s.EvictQueued(c);
      if (c.curr != kIdleTask && s.in_body != c.curr) s.EvictCurrent(c);
      if (c.curr == kIdleTask) s.EnterIdle(c);
      s.UpdateTick(c);
    });
  } else {
    s.InCpuContext(c, [&] {
      c.online = true;
      s.Trace(c.clock, cpu, Impl::kSimEvOnline, 0, 0);
      if (s.tracer != nullptr) cpu_state::TraceInstant(s.tracer, cpu, c.clock, "cpu_online");
      for (Hooks* h : s.hooks) h->OnCpuOnline(cpu, c.clock);
      s.EnterIdle(c);
      s.UpdateTick(c);
    });
  }
  return absl::OkStatus();
}

absl::Status Simulator::RunFor(Nanos duration) {
  Impl& s = *impl_;
  if (absl::Status st = sched::CheckRunFor(duration, s.event_time, "virtual time"); !st.ok())
    return st;
  if (s.running) return absl::FailedPreconditionError("RunFor: called re-entrantly from a hook");
  if (!s.stall.ok()) return s.stall;
  s.EnsureStarted();
  s.running = true;
  const Nanos end = s.event_time + duration;
  while (!s.queue.empty() && s.queue.front_time() < end && s.stall.ok()) s.Process(s.queue.Pop());
  s.running = false;
  if (!s.stall.ok()) return s.stall;
  s.event_time = end;
  return absl::OkStatus();
}

CpuStats Simulator::Stats(int cpu) const {
  if (cpu < 0 || cpu >= impl_->num_cpus()) return {};
  const Impl::Cpu& c = impl_->cpus[static_cast<size_t>(cpu)];
  return sched::StatsAt(c.stats, c.idle_state, c.idle_since, impl_->Now());
}

uint64_t Simulator::Random() { return impl_->rng(); }

// Kernel time is the model's: what is charged is how long the work lasts.
Driver::KernelSpan Simulator::BeginKernelSpan() const { return {}; }

Nanos Simulator::EndKernelSpan(KernelSpan, CpuContext* ctx, Nanos modelled_ns) {
  if (ctx != nullptr) ctx->Charge(modelled_ns);
  return modelled_ns;
}

void Simulator::SpendKernelTime(CpuContext& ctx, Nanos ns) { ctx.Charge(ns); }

void Simulator::At(Nanos when, absl::AnyInvocable<void()> fn) {
  Impl& s = *impl_;
  const uint32_t slot = s.at_pool.Add(std::move(fn));
  s.Post(std::max(when, s.Now()), EvKind::kAt, -1, slot, 0);
}

const std::vector<SimTraceEvent>& Simulator::trace() const { return impl_->trace; }
uint64_t Simulator::TraceHash() const { return impl_->trace_hash; }
int64_t Simulator::events_processed() const { return impl_->events; }
SimPlacementStats Simulator::placement_stats() const { return impl_->placement; }
int64_t Simulator::lost_wakeups() const { return impl_->lost_wakeups; }

}  // namespace isolation
