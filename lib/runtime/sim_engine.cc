// SPDX-License-Identifier: GPL-2.0-or-later
//
// The simulator's engine (sim_internal.h): the event loop and the kernel
// activities.  Process() pops one Event, drops it when stale (lazy deletion:
// its generation no longer matches), moves work and timers of an offline CPU
// to a housekeeping CPU, defers an event to `busy_until` while its CPU is
// still busy, and hands it to its handler.  Work items and timer callbacks
// (their closures in slot pools) are kernel activities: they interrupt the
// CPU's task, charge their cost and account the stall.  Trace() keeps the
// deterministic trace (a hash over every record: Simulator::TraceHash); the
// Trace*() helpers feed the trace sink (tracer.h) out of line.
//
// Kernel counterpart: a CPU's interrupt and workqueue entry around a timer
// callback or a kworker (irq_enter/irq_exit), reduced to its cost.
//
// Thread safety: the simulator's one thread.

#include <algorithm>
#include <cstring>
#include <utility>

#include "absl/base/attributes.h"
#include "absl/base/optimization.h"
#include "runtime/sim_internal.h"

namespace isolation {

namespace {

// FNV-1a, 64-bit, of a kind name: the kind's word of every record.
uint64_t KindWord(const char* kind) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (const char* p = kind; *p != '\0'; ++p) {
    h ^= static_cast<unsigned char>(*p);
    h *= 0x100000001b3ULL;
  }
  return h;
}

}  // namespace

uint64_t Simulator::Impl::KindWordOf(const char* kind) {
  // Kinds are static strings (a record keeps the pointer), so a name's word
  // is memoised by its address; a slot taken by another name is recomputed.
  // The word is the name's, whatever the cache holds: deterministic.
  KindMemo& m = kind_memo[(reinterpret_cast<uintptr_t>(kind) >> 3) % kind_memo.size()];
  if (ABSL_PREDICT_FALSE(m.kind != kind)) m = KindMemo{kind, KindWord(kind)};
  return m.word;
}

void Simulator::Impl::Trace(Nanos time, int cpu, const char* kind, int64_t a, int64_t b) {
  // One word per record, its fields multiplied by distinct odd constants
  // (independent multiplies, not a chain), then folded into the running
  // hash: one multiply and a shift on the serial path per record, where
  // byte-wise FNV-1a over the fields took 36 (43 % of the busy 4096-CPU
  // benchmark's time on a Zen 3 guest).  Order-sensitive through the chain;
  // a fingerprint for "same seed, same trace", not a cryptographic hash.
  const uint64_t record =
      static_cast<uint64_t>(time) * 0x9e3779b97f4a7c15ULL ^
      (static_cast<uint64_t>(static_cast<uint32_t>(cpu)) + 1) * 0xc2b2ae3d27d4eb4fULL ^
      KindWordOf(kind) * 0x165667b19e3779f9ULL ^ static_cast<uint64_t>(a) * 0xd6e8feb86659fd93ULL ^
      static_cast<uint64_t>(b) * 0xff51afd7ed558ccdULL;
  trace_hash = (trace_hash ^ record) * 0x100000001b3ULL;
  trace_hash ^= trace_hash >> 29;
  if (options.record_trace) trace.push_back(SimTraceEvent{time, cpu, kind, a, b});
}

void Simulator::Impl::TraceCpuRuns(const Cpu& c, TaskId next) {
  tracer->CpuRuns(c.id, c.clock, next,
                  next == kIdleTask ? std::string_view() : std::string_view(task_at(next).name));
}

// A tick / work item / timer that fell due at `start` ends now; it began
// when the CPU was free (busy_until is still the end of the previous
// activity: FinishCpuEvent updates it last).
void Simulator::Impl::TraceActivity(const Cpu& c, Nanos start, ActivityKind kind,
                                    TaskId interrupted) {
  static constexpr const char* kCategory[] = {kTraceTick, kTraceKworker, kTraceTimer};
  const char* category = kCategory[static_cast<int>(kind)];
  tracer->Activity(c.id, std::max(start, c.busy_until), c.clock, category, category, interrupted);
}

void Simulator::Impl::TraceSyscall(const Cpu& c, Nanos begin) {
  tracer->Activity(c.id, begin, c.clock, kTraceSyscall, kTraceSyscall, kIdleTask);
}

void Simulator::Impl::TraceMigrate(TaskId task, int from, int to) {
  tracer->Instant(to, Now(), "migrate", {{"task", task}, {"from", from}, {"to", to}});
}

void Simulator::Impl::EnsureStarted() {
  if (!started) {
    started = true;
    tracer = self->tracer();  // fixed from here on (Driver::SetTracer: before the start)
    while (hooks_started < hooks.size()) hooks[hooks_started++]->OnStart(*self);
    Boot();
  }
  while (hooks_started < hooks.size()) hooks[hooks_started++]->OnStart(*self);
}

// Begins an activity at the event time; returns the interrupted task.
TaskId Simulator::Impl::BeginActivity(Cpu& c, Nanos time) {
  c.clock = std::max(time, c.busy_until);
  return PauseCurrent(c) ? c.curr : kIdleTask;
}

// `start`: when the activity fell due (the stall counts from there);
// `kind` labels its trace slice; a tick may preempt the interrupted task.
void Simulator::Impl::EndActivity(Cpu& c, Nanos start, TaskId interrupted, ActivityKind kind) {
  if (interrupted != kIdleTask && c.curr == interrupted) {
    if (kind == ActivityKind::kTick && sched::PreemptAtTick(interrupted, c.slice_start, c.clock,
                                                            options.timeslice, !c.rq.empty())) {
      if (ABSL_PREDICT_FALSE(tracer != nullptr)) TraceActivity(c, start, kind, interrupted);
      task_at(interrupted).state = TaskState::kRunnable;
      c.rq.PushBack(interrupted);
      LeaveCpu(c);
    } else {
      ReturnToUser(c, interrupted);
      if (ABSL_PREDICT_FALSE(tracer != nullptr)) TraceActivity(c, start, kind, interrupted);
    }
    sched::AccountInterruption(c.stats, c.clock - start);
  } else if (ABSL_PREDICT_FALSE(tracer != nullptr)) {
    TraceActivity(c, start, kind, kIdleTask);
  }
  FinishCpuEvent(c);
}

void Simulator::Impl::FinishCpuEvent(Cpu& c) {
  if (c.online) {
    EvictQueued(c);
    Dispatch(c);
  }
  UpdateTick(c);
  c.busy_until = c.clock;
}

void Simulator::Impl::HandleWork(Cpu& c, Nanos time, uint32_t slot) {
  CpuScope scope(this, c);
  const TaskId interrupted = BeginActivity(c, time);
  ++c.stats.work_items;
  Trace(c.clock, c.id, kSimEvWork, slot, 0);
  Charge(c, options.work_cost);
  WorkFn fn = work_pool.Take(slot);
  if (fn) {
    Context ctx(this, c.id, kIdleTask);
    fn(ctx);
  }
  EndActivity(c, time, interrupted, ActivityKind::kWork);
}

void Simulator::Impl::HandleTimer(Cpu& c, Nanos time, uint32_t slot) {
  CpuScope scope(this, c);
  TimerSlot& ts = timers[slot];
  WorkFn fn = std::move(ts.fn);
  ts.fn = nullptr;
  ts.pending = false;
  ++ts.gen;
  timer_free.push_back(slot);
  const TaskId interrupted = BeginActivity(c, time);
  ++c.stats.timer_callbacks;
  Trace(c.clock, c.id, kSimEvTimer, slot, 0);
  Charge(c, options.timer_cost);
  if (fn) {
    Context ctx(this, c.id, kIdleTask);
    fn(ctx);
  }
  EndActivity(c, time, interrupted, ActivityKind::kTimer);
}

void Simulator::Impl::Process(const Event& e) {
  ++events;
  if (e.cpu >= 0) {
    Cpu& c = cpu_at(e.cpu);
    // Stale events first, so they are not deferred.
    if (e.kind == EvKind::kTick && (e.gen != c.tick_gen || c.tick_stopped)) return;
    if (e.kind == EvKind::kRunEnd && (e.gen != c.run_gen || c.curr != e.arg)) return;
    if (e.kind == EvKind::kIdleCommit && (e.gen != c.idle_entry_gen || !c.entering_idle)) return;
    if (e.kind == EvKind::kTimer) {
      const TimerSlot& ts = timers[static_cast<size_t>(e.arg)];
      if (!ts.pending || ts.gen != e.gen) return;
    }
    if (!c.online && (e.kind == EvKind::kWork || e.kind == EvKind::kTimer)) {
      // Runs unbound on a housekeeping CPU (see the file comment).
      const int other = Place().Housekeeping(e.kind == EvKind::kWork ? HousekeepingType::kWq
                                                                     : HousekeepingType::kTimer);
      Post(e.time, e.kind, other, e.arg, e.gen);
      return;
    }
    if (e.time < c.busy_until) {
      Post(c.busy_until, e.kind, e.cpu, e.arg, e.gen);
      return;
    }
  }
  event_time = e.time;
  switch (e.kind) {
    case EvKind::kTick:
      HandleTick(cpu_at(e.cpu), e.time);
      break;
    case EvKind::kRunEnd: {
      Cpu& c = cpu_at(e.cpu);
      CpuScope scope(this, c);
      c.clock = e.time;
      Task& t = task_at(c.curr);
      t.run_remaining = 0;
      t.resume_at = -1;
      FinishCpuEvent(c);
      break;
    }
    case EvKind::kResched: {
      Cpu& c = cpu_at(e.cpu);
      c.resched_pending = false;
      CpuScope scope(this, c);
      c.clock = std::max(e.time, c.busy_until);
      FinishCpuEvent(c);
      break;
    }
    case EvKind::kWork:
      HandleWork(cpu_at(e.cpu), e.time, static_cast<uint32_t>(e.arg));
      break;
    case EvKind::kTimer:
      HandleTimer(cpu_at(e.cpu), e.time, static_cast<uint32_t>(e.arg));
      break;
    case EvKind::kSleepEnd: {
      Task& t = task_at(static_cast<TaskId>(e.arg));
      if (t.state == TaskState::kSleeping && t.sleep_gen == e.gen) {
        TryToWakeUp(static_cast<TaskId>(e.arg), -1);
      }
      break;
    }
    case EvKind::kAt: {
      absl::AnyInvocable<void()> fn = at_pool.Take(static_cast<uint32_t>(e.arg));
      if (fn) fn();
      break;
    }
    case EvKind::kWakeEnqueue:
      HandleWakeEnqueue(static_cast<TaskId>(e.arg), static_cast<int>(e.gen));
      break;
    case EvKind::kIdleCommit:
      HandleIdleCommit(cpu_at(e.cpu), e.time);
      break;
  }
}

}  // namespace isolation
