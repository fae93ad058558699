// SPDX-License-Identifier: GPL-2.0-or-later
//
// The deterministic simulator (sim.h).
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

#include <algorithm>
#include <cstring>
#include <deque>
#include <utility>
#include <vector>

#include "absl/base/attributes.h"
#include "absl/base/optimization.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "isolation/runtime/sim.h"
#include "runtime/cpu_state.h"
#include "runtime/event_queue.h"
#include "runtime/sched_model.h"

namespace isolation {

bool SimTraceEvent::operator==(const SimTraceEvent& o) const {
  return time == o.time && cpu == o.cpu && std::strcmp(kind, o.kind) == 0 && a == o.a && b == o.b;
}

namespace {

enum class EvKind : uint8_t {
  kTick,
  kRunEnd,
  kResched,
  kWork,
  kTimer,
  kSleepEnd,
  kAt,
  kWakeEnqueue,
  kIdleCommit
};

struct Event {
  Nanos time;
  uint64_t seq;
  int64_t arg;   // task id, pool slot
  uint64_t gen;  // generation for lazy deletion
  int32_t cpu;   // -1: not bound to a CPU
  EvKind kind;
};

enum class TaskState : uint8_t { kRunnable, kRunning, kSleeping, kBlocked, kExited };

// What a kernel activity was, for its trace slice (tracer.h categories).
enum class ActivityKind : uint8_t { kTick, kWork, kTimer };

// A pool of closures addressed by slot; freed slots are reused (LIFO, which is
// deterministic).
template <typename Fn>
class SlotPool {
 public:
  uint32_t Add(Fn fn) {
    uint32_t slot;
    if (!free_.empty()) {
      slot = free_.back();
      free_.pop_back();
      fns_[slot] = std::move(fn);
    } else {
      slot = static_cast<uint32_t>(fns_.size());
      fns_.push_back(std::move(fn));
    }
    return slot;
  }
  Fn Take(uint32_t slot) {
    Fn fn = std::move(fns_[slot]);
    fns_[slot] = nullptr;
    free_.push_back(slot);
    return fn;
  }

 private:
  std::vector<Fn> fns_;
  std::vector<uint32_t> free_;
};

constexpr int kMaxInlineSteps = 4096;  // body steps without a time advance before yielding
// Consecutive such yields of one CPU (each moves its clock 1 ns) with no body
// step that takes time, sleeps, blocks or exits: a body that never advances
// virtual time would make RunFor take kMaxInlineSteps steps per nanosecond
// of its window, so the run stops with an error naming the task (4096 ns of
// virtual time, ~1.7e7 body steps).
constexpr int kMaxStalledYields = 4096;

const char kSimEvTick[] = "tick";
const char kSimEvSwitch[] = "switch";
const char kSimEvWork[] = "work";
const char kSimEvTimer[] = "timer";
const char kSimEvFork[] = "fork";
const char kSimEvExit[] = "exit";
const char kSimEvMigrate[] = "migrate";
const char kSimEvWake[] = "wake";
const char kSimEvOnline[] = "online";
const char kSimEvOffline[] = "offline";
const char kSimEvSyscall[] = "syscall";
const char kSimEvAffinity[] = "affinity";
const char kSimEvEnqueue[] = "enqueue";
const char kSimEvLostWakeup[] = "lost_wakeup";

}  // namespace

struct Simulator::Impl {
  // The fields read on every event of the task's CPU first, on one cache
  // line; the 2.5 KiB random engine and the name last (before, the engine
  // sat between them: ~2 % of BM_SimPeriodicBusy/4096).
  struct Task {
    TaskState state = TaskState::kRunnable;
    bool wake_pending = false;
    int cpu = 0;
    Nanos run_remaining = 0;  // > 0: inside a Step::Run
    Nanos resume_at = -1;     // >= 0: running in user mode since then, kRunEnd pending
    int warm_cpu = -1;        // the CPU it last ran user work on (refill penalty); -1: none yet
    int group = 0;
    std::unique_ptr<TaskBody> body;
    CpuMask affinity;
    uint64_t sleep_gen = 0;
    sched::LastRun last_run;  // where and when it last left a CPU (newidle cache-hot test)
    std::string name;
    std::mt19937_64 rng;
  };

  struct Cpu {
    int id = 0;
    bool online = true;
    sched::RunQueue rq;  // runnable tasks other than `curr`
    TaskId curr = kIdleTask;
    int stalled_yields = 0;  // kMaxStalledYields
    TickMode mode = TickMode::kNohzIdle;
    bool tick_stopped = true;
    uint64_t tick_gen = 0;
    Nanos clock = 0;
    Nanos busy_until = 0;
    uint64_t run_gen = 0;
    Nanos slice_start = 0;
    bool idle_state = false;  // between OnIdleEnter and OnIdleExit
    Nanos idle_since = 0;
    Nanos avg_idle = 0;  // rq->avg_idle (newidle gate); set at construction
    bool resched_pending = false;
    // Between the go-idle path's run-queue check and its sleep
    // (SimOptions::idle_entry_cost): a Kick sends no IPI then.
    bool entering_idle = false;
    uint64_t idle_entry_gen = 0;
    CpuStats stats;
  };

  struct TimerSlot {
    WorkFn fn;
    uint32_t gen = 1;
    bool pending = false;
  };

  // Kernel context on one CPU handed to hooks, work, timers and bodies.
  class Context final : public TaskContext {
   public:
    Context(Impl* sim, int cpu, TaskId task) : sim_(sim), cpu_(cpu), task_(task) {}
    int cpu() const override { return cpu_; }
    Nanos now() const override { return sim_->cpus[static_cast<size_t>(cpu_)].clock; }
    Driver& driver() override { return *sim_->self; }
    void Charge(Nanos ns) override { sim_->Charge(sim_->cpus[static_cast<size_t>(cpu_)], ns); }
    TaskId task() const override { return task_; }
    void Syscall(absl::FunctionRef<void(CpuContext&)> fn, Nanos cost_ns) override {
      Cpu& c = sim_->cpus[static_cast<size_t>(cpu_)];
      const Nanos begin = c.clock;
      sim_->Trace(c.clock, cpu_, kSimEvSyscall, task_, cost_ns);
      Context kernel(sim_, cpu_, task_);
      fn(kernel);
      sim_->Charge(c, cost_ns);
      if (task_ != kIdleTask) sim_->ReturnToUser(c, task_);
      if (ABSL_PREDICT_FALSE(sim_->tracer != nullptr)) sim_->TraceSyscall(c, begin);
    }
    std::mt19937_64& rng() override {
      return task_ == kIdleTask ? sim_->rng : sim_->tasks[static_cast<size_t>(task_)].rng;
    }

   private:
    Impl* sim_;
    int cpu_;
    TaskId task_;
  };

  // Marks the CPU whose context is running, so Driver::Now() reads its clock.
  class CpuScope {
   public:
    CpuScope(Impl* sim, Cpu& c) : sim_(sim), saved_(sim->current_cpu) { sim->current_cpu = c.id; }
    ~CpuScope() { sim_->current_cpu = saved_; }
    CpuScope(const CpuScope&) = delete;
    CpuScope& operator=(const CpuScope&) = delete;

   private:
    Impl* sim_;
    int saved_;
  };

  Impl(Topology topo, IsolationConfig iso, SimOptions opts)
      : topology(std::move(topo)), isolation(std::move(iso)), options(opts) {
    tick_period = sched::TickPeriod(options.hz);
    rng.seed(sched::DriverRngSeed(options.seed));
    wake_rng.seed(sched::SplitMix64(options.seed ^ 0x77616b6557696e64ULL));  // "wakeWind"
    const int n = topology.num_cpus();
    cpus.resize(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) {
      Cpu& c = cpus[static_cast<size_t>(i)];
      c.id = i;
      c.online = topology.IsOnline(i);
      c.avg_idle = 2 * options.newidle_migration_cost;  // sched_init(): rq->avg_idle
      c.mode = sched::InitialTickMode(isolation, i, options.default_tick_mode);
    }
  }

  // --- bookkeeping -----------------------------------------------------------

  Cpu& cpu_at(int cpu) { return cpus[static_cast<size_t>(cpu)]; }
  Task& task_at(TaskId t) { return tasks[static_cast<size_t>(t)]; }
  int num_cpus() const { return static_cast<int>(cpus.size()); }

  void Post(Nanos time, EvKind kind, int cpu, int64_t arg, uint64_t gen) {
    queue.Push(Event{time, seq++, arg, gen, cpu, kind});
  }

  Nanos Now() const {
    return current_cpu >= 0 ? cpus[static_cast<size_t>(current_cpu)].clock : event_time;
  }

  void Charge(Cpu& c, Nanos ns) {
    if (ns <= 0) return;
    c.clock = SaturatingAdd(c.clock, ns);  // kNanosMax: the CPU never comes back
    c.stats.kernel_ns = SaturatingAdd(c.stats.kernel_ns, ns);
  }

  void Trace(Nanos time, int cpu, const char* kind, int64_t a, int64_t b) {
    // FNV-1a, 64-bit, over the fields of the record.
    auto mix = [this](const void* p, size_t len) {
      const auto* bytes = static_cast<const unsigned char*>(p);
      for (size_t i = 0; i < len; ++i) {
        trace_hash ^= bytes[i];
        trace_hash *= 0x100000001b3ULL;
      }
    };
    mix(&time, sizeof time);
    mix(&cpu, sizeof cpu);
    mix(kind, std::strlen(kind));
    mix(&a, sizeof a);
    mix(&b, sizeof b);
    if (options.record_trace) trace.push_back(SimTraceEvent{time, cpu, kind, a, b});
  }

  // --- trace sink (tracer.h): out of line, so that with tracing off the
  // event paths keep their shape and pay one pointer test -------------------

  ABSL_ATTRIBUTE_NOINLINE ABSL_ATTRIBUTE_COLD void TraceCpuRuns(const Cpu& c, TaskId next) {
    tracer->CpuRuns(c.id, c.clock, next,
                    next == kIdleTask ? std::string_view() : std::string_view(task_at(next).name));
  }
  // A tick / work item / timer that fell due at `start` ends now; it began
  // when the CPU was free (busy_until is still the end of the previous
  // activity: FinishCpuEvent updates it last).
  ABSL_ATTRIBUTE_NOINLINE ABSL_ATTRIBUTE_COLD void TraceActivity(const Cpu& c, Nanos start,
                                                                 ActivityKind kind,
                                                                 TaskId interrupted) {
    static constexpr const char* kCategory[] = {kTraceTick, kTraceKworker, kTraceTimer};
    const char* category = kCategory[static_cast<int>(kind)];
    tracer->Activity(c.id, std::max(start, c.busy_until), c.clock, category, category, interrupted);
  }
  ABSL_ATTRIBUTE_NOINLINE ABSL_ATTRIBUTE_COLD void TraceSyscall(const Cpu& c, Nanos begin) {
    tracer->Activity(c.id, begin, c.clock, kTraceSyscall, kTraceSyscall, kIdleTask);
  }
  ABSL_ATTRIBUTE_NOINLINE ABSL_ATTRIBUTE_COLD void TraceMigrate(TaskId task, int from, int to) {
    tracer->Instant(to, Now(), "migrate", {{"task", task}, {"from", from}, {"to", to}});
  }

  void EnsureStarted() {
    if (!started) {
      started = true;
      tracer = self->tracer();  // fixed from here on (Driver::SetTracer: before the start)
      while (hooks_started < hooks.size()) hooks[hooks_started++]->OnStart(*self);
      Boot();
    }
    while (hooks_started < hooks.size()) hooks[hooks_started++]->OnStart(*self);
  }

  // Every online CPU starts idle; its tick runs or stops per its mode.
  void Boot() {
    for (Cpu& c : cpus) {
      if (!c.online) continue;
      CpuScope scope(this, c);
      c.clock = std::max(event_time, c.busy_until);
      cpu_state::Boot(*this, c);
      c.busy_until = c.clock;
    }
  }

  // --- ticks -------------------------------------------------------------------

  int NumRunning(const Cpu& c) const { return sched::NrRunning(c.rq.size(), c.curr); }

  bool WantTickStopped(const Cpu& c) const {
    return sched::WantTickStopped(c.online, c.mode, NumRunning(c));
  }

  void PostNextTick(Cpu& c) {
    Post(sched::NextTickAfter(c.clock, tick_period), EvKind::kTick, c.id, 0, c.tick_gen);
  }

  // --- the CPU state machine (cpu_state.h) and its policy ------------------------

  void StopTick(Cpu& c) { cpu_state::StopTick(*this, c); }
  void RestartTick(Cpu& c) { cpu_state::RestartTick(*this, c); }
  void UpdateTick(Cpu& c) { cpu_state::UpdateTick(*this, c); }
  void ReturnToUser(Cpu& c, TaskId task) { cpu_state::ReturnToUser(*this, c, task); }
  void EnterIdle(Cpu& c) { cpu_state::EnterIdle(*this, c); }
  void ExitIdle(Cpu& c) { cpu_state::ExitIdle(*this, c); }

  Nanos CpuNow(const Cpu& c) const { return c.clock; }
  bool MarkIdle(Cpu& c, Nanos now) {
    if (c.idle_state) return false;
    c.idle_state = true;
    c.idle_since = now;
    return true;
  }
  bool MarkBusy(Cpu& c, Nanos now) {
    if (!c.idle_state) return false;
    c.idle_state = false;
    c.entering_idle = false;
    c.stats.idle_ns += now - c.idle_since;
    // update_avg(&rq->avg_idle, delta), capped at 2 * migration cost as
    // ttwu_do_activate() does.
    c.avg_idle += (now - c.idle_since - c.avg_idle) / 8;
    c.avg_idle = std::min(c.avg_idle, 2 * options.newidle_migration_cost);
    return true;
  }
  bool TickStopped(const Cpu& c) const { return c.tick_stopped; }
  bool CpuOnline(const Cpu& c) const { return c.online; }
  void MarkTickStopped(Cpu& c) {
    c.tick_stopped = true;
    ++c.tick_gen;  // the pending tick goes stale
    ++c.stats.tick_stops;
  }
  void MarkTickRunning(Cpu& c) {
    c.tick_stopped = false;
    ++c.tick_gen;
  }
  void ArmNextTick(Cpu& c) { PostNextTick(c); }
  void RecordCpuEvent(const Cpu& c, const char* kind, int64_t a, int64_t b) {
    Trace(c.clock, c.id, kind, a, b);
  }
  Tracer* active_tracer() const { return tracer; }

  // --- scheduling ----------------------------------------------------------------

  // context_switch(): prev's state was set by the caller.
  void SwitchTo(Cpu& c, TaskId next) {
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
  ABSL_ATTRIBUTE_NOINLINE void LeaveCpu(Cpu& c) { SwitchTo(c, c.rq.PickNext()); }

  // Stops the current task's user-mode run at the CPU's clock; returns whether a
  // user task was running (i.e. the caller's activity interrupts it).
  bool PauseCurrent(Cpu& c) {
    if (c.curr == kIdleTask) return false;
    Task& t = task_at(c.curr);
    if (t.resume_at >= 0) {
      t.run_remaining = std::max<Nanos>(0, t.run_remaining - (c.clock - t.resume_at));
      t.resume_at = -1;
      ++c.run_gen;
    }
    return true;
  }

  // The scheduler model's placement rules over this engine's online flags.
  auto Place() const {
    return sched::Placement(isolation, num_cpus(),
                            [this](int cpu) { return cpus[static_cast<size_t>(cpu)].online; });
  }

  void Kick(int cpu) {
    Cpu& c = cpu_at(cpu);
    if (c.resched_pending) return;
    // Polling in its idle entry: no IPI; its re-check finds the queue.
    if (c.entering_idle) return;
    c.resched_pending = true;
    Post(Now(), EvKind::kResched, cpu, 0, 0);
  }

  // A queued (not current) task moves to `to` (move_queued_task()).
  void MoveQueued(TaskId task, int from, int to) {
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
  void EvictCurrent(Cpu& c) {
    const TaskId task = c.curr;
    PauseCurrent(c);
    task_at(task).state = TaskState::kRunnable;
    LeaveCpu(c);
    MoveQueued(task, c.id, Place().Fallback(task_at(task).affinity));
  }

  // Queued tasks that may no longer run on `c` move elsewhere.
  void EvictQueued(Cpu& c) {
    c.rq.Partition(
        [&](TaskId id) { return Place().Allowed(task_at(id).affinity, c.id); },
        [&](TaskId id) { MoveQueued(id, c.id, Place().Fallback(task_at(id).affinity)); });
  }

  // sched_balance_newidle() reduced to its effect (SimOptions::newidle_balance):
  // pull one queued task allowed on `c` from the busiest CPU of c's LLC.
  bool NewidlePull(Cpu& c) {
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
  void Refill(const Cpu& c, Task& t) {
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
  void Dispatch(Cpu& c) {
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
      if (!Place().Allowed(t.affinity, c.id)) {
        EvictCurrent(c);
        continue;
      }
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
  void TryToWakeUp(TaskId task, int waker_cpu) {
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
      Post(SaturatingAdd(now, delay), EvKind::kWakeEnqueue, -1, task,
           static_cast<uint64_t>(target));
      return;
    }
    WakeEnqueue(task, prev, target);
  }

  // ttwu_queue() / activate_task() on `target`.
  void WakeEnqueue(TaskId task, int prev, int target) {
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
  void HandleWakeEnqueue(TaskId task, int target) {
    Task& t = task_at(task);
    if (!Place().Allowed(t.affinity, target)) target = Place().Fallback(t.affinity);
    Trace(Now(), target, kSimEvEnqueue, task, t.cpu);
    WakeEnqueue(task, t.cpu, target);
  }

  // The end of the idle entry's window: the re-check (every hook must agree),
  // then either the queued task runs or the CPU sleeps with it queued.
  void HandleIdleCommit(Cpu& c, Nanos time) {
    CpuScope scope(this, c);
    c.clock = std::max(time, c.busy_until);
    c.entering_idle = false;
    bool recheck = true;
    for (Hooks* h : hooks) recheck = h->IdleRecheck(c.id, c.clock) && recheck;
    if (!c.rq.empty()) {
      if (recheck) {
        FinishCpuEvent(c);
        return;
      }
      ++lost_wakeups;
      Trace(c.clock, c.id, kSimEvLostWakeup, c.rq.Front(), c.rq.size());
    }
    c.busy_until = std::max(c.busy_until, c.clock);
  }

  // --- kernel activities ---------------------------------------------------------

  // Begins an activity at the event time; returns the interrupted task.
  TaskId BeginActivity(Cpu& c, Nanos time) {
    c.clock = std::max(time, c.busy_until);
    return PauseCurrent(c) ? c.curr : kIdleTask;
  }

  // `start`: when the activity fell due (the stall counts from there);
  // `kind` labels its trace slice; a tick may preempt the interrupted task.
  void EndActivity(Cpu& c, Nanos start, TaskId interrupted, ActivityKind kind) {
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

  void FinishCpuEvent(Cpu& c) {
    if (c.online) {
      EvictQueued(c);
      Dispatch(c);
    }
    UpdateTick(c);
    c.busy_until = c.clock;
  }

  void HandleTick(Cpu& c, Nanos time) {
    CpuScope scope(this, c);
    const TaskId interrupted = BeginActivity(c, time);
    ++c.stats.ticks;
    Trace(c.clock, c.id, kSimEvTick, c.curr, 0);
    Charge(c, options.tick_cost);
    {
      Context ctx(this, c.id, c.curr);
      for (Hooks* h : hooks) h->OnTick(ctx, c.curr);
    }
    if (!c.tick_stopped) PostNextTick(c);
    EndActivity(c, time, interrupted, ActivityKind::kTick);
  }

  void HandleWork(Cpu& c, Nanos time, uint32_t slot) {
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

  void HandleTimer(Cpu& c, Nanos time, uint32_t slot) {
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

  void Process(const Event& e) {
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

  // Applies a state change to CPU `c` in its own context (hotplug, tick mode).
  template <typename Fn>
  void InCpuContext(Cpu& c, Fn&& fn) {
    const Nanos outer = Now();
    CpuScope scope(this, c);
    c.clock = std::max(c.clock, std::max(outer, c.busy_until));
    fn();
    c.busy_until = std::max(c.busy_until, c.clock);
  }

  Simulator* self = nullptr;
  Topology topology;
  IsolationConfig isolation;
  SimOptions options;
  Nanos tick_period = kNsPerMs;
  std::mt19937_64 rng;
  std::mt19937_64 wake_rng;  // SimOptions::wake_select_cost jitter
  int64_t lost_wakeups = 0;

  std::vector<Hooks*> hooks;
  Tracer* tracer = nullptr;  // Driver::tracer() at the start; nullptr: tracing off
  size_t hooks_started = 0;
  bool started = false;
  bool running = false;
  // Set once a CPU made no progress in virtual time (kMaxStalledYields):
  // RunFor returns it, now and after.
  absl::Status stall;

  std::vector<Cpu> cpus;
  std::deque<Task> tasks;  // deque: references stay valid when a body spawns
  sim_internal::EventQueue<Event> queue;
  uint64_t seq = 0;
  Nanos event_time = 0;
  int current_cpu = -1;
  TaskId in_body = kIdleTask;
  int64_t events = 0;
  int hk_cursor = -1;

  SlotPool<WorkFn> work_pool;
  SlotPool<absl::AnyInvocable<void()>> at_pool;
  std::vector<TimerSlot> timers;
  std::vector<uint32_t> timer_free;

  std::vector<SimTraceEvent> trace;
  uint64_t trace_hash = 0xcbf29ce484222325ULL;
  SimPlacementStats placement;
};

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
  t.rng.seed(sched::TaskRngSeed(s.options.seed, id));
  const Nanos now = s.Now();
  s.Trace(now, spec.cpu, kSimEvFork, spec.parent, id);
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
  const Nanos now = s.Now();
  s.Trace(now, t.cpu, kSimEvAffinity, task, 0);
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
      s.Trace(c.clock, cpu, kSimEvOffline, 0, 0);
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
      s.Trace(c.clock, cpu, kSimEvOnline, 0, 0);
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
