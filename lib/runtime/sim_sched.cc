// SPDX-License-Identifier: GPL-2.0-or-later
//
// Scheduling in the simulator (sim_internal.h): the context switch, the
// dispatch loop that runs task bodies until the CPU's task is in user mode
// or the CPU idles, try_to_wake_up() (the scheduler model's select step,
// then the enqueue, optionally after the select->enqueue window of
// SimOptions::wake_select_cost), placement and eviction when affinity or
// hotplug forbid a CPU, the newidle pull (SimOptions::newidle_balance), and
// the cache-refill cost a task pays when its work starts away from its warm
// CPU (SimOptions::refill_penalty, CacheDistance).
//
// Kernel counterpart: kernel/sched/core.c __schedule(), try_to_wake_up(),
// move_queued_task(), select_fallback_rq(); kernel/sched/fair.c
// sched_balance_newidle().
//
// Thread safety: the simulator's one thread.

#include <algorithm>
#include <memory>
#include <string>

#include "absl/base/attributes.h"
#include "absl/base/optimization.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "runtime/sim_internal.h"

namespace isolation {

// context_switch(): prev's state was set by the caller.
void Simulator::Impl::SwitchTo(Cpu& c, TaskId next) {
  const TaskId prev = c.curr;
  Trace(c.clock, c.id, kSimEvSwitch, prev, next);
  if (ABSL_PREDICT_FALSE(tracer != nullptr)) TraceCpuRuns(c, next);
  for (Hooks* h : hooks) h->OnContextSwitch(c.id, prev, next, c.clock);
  ++c.stats.context_switches;
  if (prev != kIdleTask) task_at(prev).last_run.Note(c.id, c.clock);
  c.slice_start = c.clock;  // the slice starts with the switch, as for the tick's own cost
  Charge(c, options.context_switch_cost);
  c.curr = next;
  if (next != kIdleTask) {
    Task& t = task_at(next);
    t.state = TaskState::kRunning;
    t.cpu = c.id;
    t.resume_at = -1;
    ReturnToUser(c, next);
  }
}

// The current task leaves the CPU (sleep, block, exit): next runnable or idle.
// Out of line, as the compiler chose before the trace sites were added:
// inlined into Dispatch() it grew the hot loop.
void Simulator::Impl::LeaveCpu(Cpu& c) { SwitchTo(c, c.rq.PickNext()); }

// Stops the current task's user-mode run at the CPU's clock; returns whether a
// user task was running (i.e. the caller's activity interrupts it).
bool Simulator::Impl::PauseCurrent(Cpu& c) {
  if (c.curr == kIdleTask) return false;
  Task& t = task_at(c.curr);
  if (t.resume_at >= 0) {
    t.run_remaining = std::max<Nanos>(0, t.run_remaining - (c.clock - t.resume_at));
    t.resume_at = -1;
    ++c.run_gen;
  }
  return true;
}

void Simulator::Impl::Kick(int cpu) {
  Cpu& c = cpu_at(cpu);
  if (c.resched_pending) return;
  // Polling in its idle entry: no IPI; its re-check finds the queue.
  if (c.entering_idle) return;
  c.resched_pending = true;
  Post(Now(), EvKind::kResched, cpu, 0, 0);
}

// A queued (not current) task moves to `to` (move_queued_task()).
void Simulator::Impl::MoveQueued(TaskId task, int from, int to) {
  Task& t = task_at(task);
  t.cpu = to;
  t.state = TaskState::kRunnable;
  Trace(Now(), from, kSimEvMigrate, task, to);
  if (ABSL_PREDICT_FALSE(tracer != nullptr)) TraceMigrate(task, from, to);
  Cpu& dst = cpu_at(to);
  InCpuContext(dst, [&] {
    for (Hooks* h : hooks) h->OnMigrate(task, from, to, dst.clock);
  });
  cpu_at(to).rq.PushBack(task);
  Kick(to);
}

// The current task of `c` may not stay there (affinity, hotplug): switch it
// out and move it to an allowed CPU, keeping the rest of its Run step.
void Simulator::Impl::EvictCurrent(Cpu& c) {
  const TaskId task = c.curr;
  PauseCurrent(c);
  task_at(task).state = TaskState::kRunnable;
  LeaveCpu(c);
  MoveQueued(task, c.id, Place().Fallback(task_at(task).affinity));
}

// Queued tasks that may no longer run on `c` move elsewhere.
void Simulator::Impl::EvictQueued(Cpu& c) {
  c.rq.Partition([&](TaskId id) { return Place().Allowed(task_at(id).affinity, c.id); },
                 [&](TaskId id) { MoveQueued(id, c.id, Place().Fallback(task_at(id).affinity)); });
}

// sched_balance_newidle() reduced to its effect (SimOptions::newidle_balance):
// pull one queued task allowed on `c` from the busiest CPU of c's LLC.
bool Simulator::Impl::NewidlePull(Cpu& c) {
  // The avg_idle gate: an idle period expected shorter than a balance
  // pass is not worth one (this_rq->avg_idle < sd->max_newidle_lb_cost).
  if (c.avg_idle < options.newidle_cost) return false;
  const CpuMask& llc = topology.llc_mask(topology.llc_of(c.id));
  int busiest = -1;
  int most = 1;
  for (int cpu : llc) {
    const Cpu& o = cpus[static_cast<size_t>(cpu)];
    if (cpu == c.id || !o.online || o.rq.empty()) continue;
    if (NumRunning(o) > most) {
      most = NumRunning(o);
      busiest = cpu;
    }
  }
  if (busiest < 0) return false;
  // task_hot(): ran within sysctl_sched_migration_cost -> cache-hot, stays.
  const TaskId task = cpu_at(busiest).rq.TakeFirst([&](TaskId id) {
    const Task& t = task_at(id);
    return Place().Allowed(t.affinity, c.id) &&
           !t.last_run.Hot(c.clock, options.newidle_migration_cost);
  });
  if (task == kIdleTask) return false;
  MoveQueued(task, busiest, c.id);
  return true;
}

// The task's work starts on `c`, away from its warm CPU: count the move
// and, with the penalty on, lengthen the work by the modelled refill.
void Simulator::Impl::Refill(const Cpu& c, Task& t) {
  if (t.warm_cpu >= 0) {
    const CacheDistance d = CacheDistanceBetween(topology, t.warm_cpu, c.id);
    ++placement.moves[static_cast<size_t>(d)];
    const Nanos cost = options.refill_penalty.For(d);
    if (cost > 0) {
      t.run_remaining = SaturatingAdd(t.run_remaining, cost);
      ++placement.penalties;
      placement.penalty_ns = SaturatingAdd(placement.penalty_ns, cost);
    }
  }
  t.warm_cpu = c.id;
}

// Runs the CPU until its current task is in user mode (kRunEnd pending) or it
// is idle.  Body steps (and their syscalls) run inline at the CPU's clock.
void Simulator::Impl::Dispatch(Cpu& c) {
  for (int steps = 0;; ++steps) {
    if (steps >= kMaxInlineSteps) {
      if (++c.stalled_yields >= kMaxStalledYields && stall.ok()) {
        const TaskId id = c.curr;
        stall = absl::FailedPreconditionError(absl::StrCat(
            "simulator: no progress in virtual time on cpu ", c.id, " at ", c.clock, " ns: ",
            id == kIdleTask ? std::string("the idle loop")
                            : absl::StrCat("task ", id, " '", task_at(id).name, "'"),
            " took ", static_cast<int64_t>(kMaxStalledYields) * kMaxInlineSteps,
            " body steps without running for any time, sleeping, blocking or exiting (a "
            "Step::Run(0) or "
            "Step::Yield loop)"));
      }
      // A body that never advances time: let the rest of the machine run.
      if (!c.resched_pending) {
        c.resched_pending = true;
        Post(c.clock + 1, EvKind::kResched, c.id, 0, 0);
      }
      return;
    }
    if (c.curr == kIdleTask) {
      if (c.rq.empty() && c.online && options.newidle_balance && NewidlePull(c)) continue;
      if (c.rq.empty() || !c.online) {
        const bool was_idle = c.idle_state;
        EnterIdle(c);
        c.stalled_yields = 0;
        if (!was_idle && options.idle_entry_cost > 0 && c.online) {
          // The idle entry's window (SimOptions::idle_entry_cost).
          c.entering_idle = true;
          Post(SaturatingAdd(c.clock, options.idle_entry_cost), EvKind::kIdleCommit, c.id, 0,
               ++c.idle_entry_gen);
        }
        return;
      }
      const TaskId next = c.rq.PickNext();
      ExitIdle(c);
      SwitchTo(c, next);
      continue;
    }
    Task& t = task_at(c.curr);
    // Place().Allowed(t.affinity, c.id), its affinity test cached.
    if (t.affinity_known_cpu == c.id ? !c.online : !Place().Allowed(t.affinity, c.id)) {
      EvictCurrent(c);
      continue;
    }
    t.affinity_known_cpu = c.id;
    if (t.run_remaining > 0) {
      if (t.resume_at < 0) {
        if (ABSL_PREDICT_FALSE(t.warm_cpu != c.id)) Refill(c, t);
        t.resume_at = c.clock;
        // Step::Run(kNanosMax) runs until the end of time: its end event
        // saturates at kNanosMax, past every RunFor window.
        Post(SaturatingAdd(c.clock, t.run_remaining), EvKind::kRunEnd, c.id, c.curr, c.run_gen);
      }
      return;
    }
    const TaskId id = c.curr;
    Step step;
    {
      Context ctx(this, c.id, id);
      const TaskId saved = in_body;
      in_body = id;
      step = t.body->Next(ctx);
      in_body = saved;
    }
    if (c.curr != id) continue;  // the body's own calls moved it (cannot happen today)
    if (step.kind != Step::Kind::kYield && (step.kind != Step::Kind::kRun || step.ns > 0))
      c.stalled_yields = 0;
    switch (step.kind) {
      case Step::Kind::kRun:
        if (step.ns > 0) t.run_remaining = step.ns;
        break;
      case Step::Kind::kSleep:
        t.state = TaskState::kSleeping;
        ++t.sleep_gen;
        // Step::Sleep(kNanosMax) never ends (saturating, not wrapping).
        Post(SaturatingAdd(c.clock, std::max<Nanos>(0, step.ns)), EvKind::kSleepEnd, -1, id,
             t.sleep_gen);
        LeaveCpu(c);
        break;
      case Step::Kind::kBlock:
        if (t.wake_pending) {
          t.wake_pending = false;
          break;
        }
        t.state = TaskState::kBlocked;
        LeaveCpu(c);
        break;
      case Step::Kind::kYield:
        if (!c.rq.empty()) {
          t.state = TaskState::kRunnable;
          c.rq.PushBack(id);
          LeaveCpu(c);
        }
        break;
      case Step::Kind::kExit: {
        Trace(c.clock, c.id, kSimEvExit, id, 0);
        for (Hooks* h : hooks) h->OnTaskExit(c.id, id, c.clock);
        t.state = TaskState::kExited;
        LeaveCpu(c);
        std::unique_ptr<TaskBody> body = std::move(t.body);
        body.reset();
        break;
      }
    }
  }
}

// try_to_wake_up(): the model's select step, then the enqueue on the
// chosen CPU -- at the wakeup's time, or after the select->enqueue window
// (SimOptions::wake_select_cost; the kWakeEnqueue event).
void Simulator::Impl::TryToWakeUp(TaskId task, int waker_cpu) {
  Task& t = task_at(task);
  const int prev = t.cpu;
  const Nanos now = Now();
  const int target = sched::SelectWakeCpu(hooks, task, prev, waker_cpu, now, Place(), t.affinity);
  t.state = TaskState::kRunnable;
  t.wake_pending = false;
  Trace(now, target, kSimEvWake, task, waker_cpu);
  if (options.wake_select_cost > 0) {
    const auto cost = static_cast<uint64_t>(options.wake_select_cost);
    const Nanos delay = options.wake_select_cost + static_cast<Nanos>(wake_rng() % cost);
    Post(SaturatingAdd(now, delay), EvKind::kWakeEnqueue, -1, task, static_cast<uint64_t>(target));
    return;
  }
  WakeEnqueue(task, prev, target);
}

// ttwu_queue() / activate_task() on `target`.
void Simulator::Impl::WakeEnqueue(TaskId task, int prev, int target) {
  const Nanos now = Now();
  for (Hooks* h : hooks) h->OnWakeEnqueue(task, target, now);
  if (target != prev) {
    MoveQueued(task, prev, target);
  } else {
    cpu_at(target).rq.PushBack(task);
    Kick(target);
  }
}

// The enqueue step after the window: the chosen CPU if the task may
// still run there (affinity, hotplug may have changed), else its fallback.
void Simulator::Impl::HandleWakeEnqueue(TaskId task, int target) {
  Task& t = task_at(task);
  if (!Place().Allowed(t.affinity, target)) target = Place().Fallback(t.affinity);
  Trace(Now(), target, kSimEvEnqueue, task, t.cpu);
  WakeEnqueue(task, t.cpu, target);
}

const char* CacheDistanceName(CacheDistance d) {
  switch (d) {
    case CacheDistance::kSameCpu:
      return "same_cpu";
    case CacheDistance::kSmtSibling:
      return "smt_sibling";
    case CacheDistance::kCrossCoreSameLlc:
      return "cross_core_same_llc";
    case CacheDistance::kCrossLlc:
      return "cross_llc";
    case CacheDistance::kCrossNode:
      return "cross_node";
  }
  return "?";
}

CacheDistance CacheDistanceBetween(const Topology& topology, int from, int to) {
  if (from == to) return CacheDistance::kSameCpu;
  if (topology.node_of(from) != topology.node_of(to)) return CacheDistance::kCrossNode;
  if (topology.llc_of(from) != topology.llc_of(to)) return CacheDistance::kCrossLlc;
  if (topology.core_of(from) != topology.core_of(to)) return CacheDistance::kCrossCoreSameLlc;
  return CacheDistance::kSmtSibling;
}

Nanos CacheRefillPenalty::For(CacheDistance d) const {
  if (!enabled) return 0;
  switch (d) {
    case CacheDistance::kSameCpu:
      return 0;
    case CacheDistance::kSmtSibling:
      return smt_sibling;
    case CacheDistance::kCrossCoreSameLlc:
      return cross_core_same_llc;
    case CacheDistance::kCrossLlc:
      return cross_llc;
    case CacheDistance::kCrossNode:
      return cross_node;
  }
  return 0;
}

}  // namespace isolation
