// SPDX-License-Identifier: GPL-2.0-or-later
// -----------------------------------------------------------------------------
// sim_internal.h (internal to lib/runtime)
// -----------------------------------------------------------------------------
//
// The simulator's state, Simulator::Impl, shared by the files that implement
// it, one responsibility each:
//   sim.cc         the Driver interface: argument checks and the public calls;
//                  the model and its modelling choices are described there;
//   sim_engine.cc  the event loop: Events popped in (time, sequence) order
//                  from event_queue.h, the slot pools of closures below, the
//                  kernel activities (tick, work item, timer) that interrupt
//                  a task, the deterministic trace and the trace sink;
//   sim_cpu.cc     a CPU's own state: boot, the tick and nohz, idle entry and
//                  exit, the return to user mode -- the simulator's policy
//                  for the CPU state machine both drivers share (cpu_state.h);
//   sim_sched.cc   scheduling: context switch, the dispatch loop of task
//                  bodies, wake-up, placement and eviction, the newidle pull
//                  and the cache-refill cost of a move.
// The few helpers every file calls on each event (Post, Charge, Now,
// Place, ...) stay inline here.
//
// Kernel counterpart: the fields of struct rq and struct task_struct the
// model keeps, with the tick, timer and workqueue queues of every CPU folded
// into one event queue in virtual time.
//
// Thread safety: none.  A Simulator and all of this belong to the thread
// that calls it; hooks and task bodies run on that thread.

#ifndef ISOLATION_RUNTIME_SIM_INTERNAL_H_
#define ISOLATION_RUNTIME_SIM_INTERNAL_H_

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/attributes.h"
#include "absl/base/optimization.h"
#include "absl/functional/any_invocable.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "isolation/runtime/sim.h"
#include "runtime/event_queue.h"
#include "runtime/sched_model.h"

namespace isolation {
namespace sim_internal {

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

}  // namespace sim_internal

// The simulator's state and its engine.  The member functions are defined by
// responsibility: sim_engine.cc, sim_cpu.cc, sim_sched.cc (see each group).
struct Simulator::Impl {
  using EvKind = sim_internal::EvKind;
  using Event = sim_internal::Event;
  using TaskState = sim_internal::TaskState;
  using ActivityKind = sim_internal::ActivityKind;
  template <typename Fn>
  using SlotPool = sim_internal::SlotPool<Fn>;

  static constexpr int kMaxInlineSteps = 4096;  // body steps without a time advance before yielding
  // Consecutive such yields of one CPU (each moves its clock 1 ns) with no body
  // step that takes time, sleeps, blocks or exits: a body that never advances
  // virtual time would make RunFor take kMaxInlineSteps steps per nanosecond
  // of its window, so the run stops with an error naming the task (4096 ns of
  // virtual time, ~1.7e7 body steps).
  static constexpr int kMaxStalledYields = 4096;

  static constexpr char kSimEvTick[] = "tick";
  static constexpr char kSimEvSwitch[] = "switch";
  static constexpr char kSimEvWork[] = "work";
  static constexpr char kSimEvTimer[] = "timer";
  static constexpr char kSimEvFork[] = "fork";
  static constexpr char kSimEvExit[] = "exit";
  static constexpr char kSimEvMigrate[] = "migrate";
  static constexpr char kSimEvWake[] = "wake";
  static constexpr char kSimEvOnline[] = "online";
  static constexpr char kSimEvOffline[] = "offline";
  static constexpr char kSimEvSyscall[] = "syscall";
  static constexpr char kSimEvAffinity[] = "affinity";
  static constexpr char kSimEvEnqueue[] = "enqueue";
  static constexpr char kSimEvLostWakeup[] = "lost_wakeup";

  // The fields read on every event of the task's CPU first, on the first
  // of its cache lines (alignas: a Task never straddles them); the mask, the
  // newidle record and the name after them.  A task's random stream lives in
  // task_rngs: a std::mt19937_64 is 2.5 KiB, and inside Task it spread these
  // fields over ~10 MiB at 4096 tasks.
  struct alignas(64) Task {
    TaskState state = TaskState::kRunnable;
    bool wake_pending = false;
    int cpu = 0;
    Nanos run_remaining = 0;  // > 0: inside a Step::Run
    Nanos resume_at = -1;     // >= 0: running in user mode since then, kRunEnd pending
    int warm_cpu = -1;        // the CPU it last ran user work on (refill penalty); -1: none yet
    // A CPU whose bit `affinity` is known to have (-1: none): Dispatch then
    // skips the test, whose mask words are a cache miss per event at 4096
    // tasks.  Reset wherever `affinity` changes.
    int affinity_known_cpu = -1;
    std::unique_ptr<TaskBody> body;
    uint64_t sleep_gen = 0;
    int group = 0;
    CpuMask affinity;
    sched::LastRun last_run;  // where and when it last left a CPU (newidle cache-hot test)
    std::string name;
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
      return task_ == kIdleTask ? sim_->rng : sim_->task_rngs[static_cast<size_t>(task_)];
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

  int NumRunning(const Cpu& c) const { return sched::NrRunning(c.rq.size(), c.curr); }

  bool WantTickStopped(const Cpu& c) const {
    return sched::WantTickStopped(c.online, c.mode, NumRunning(c));
  }

  void PostNextTick(Cpu& c) {
    Post(sched::NextTickAfter(c.clock, tick_period), EvKind::kTick, c.id, 0, c.tick_gen);
  }

  // The scheduler model's placement rules over this engine's online flags.
  auto Place() const {
    return sched::Placement(isolation, num_cpus(),
                            [this](int cpu) { return cpus[static_cast<size_t>(cpu)].online; });
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

  // --- sim_engine.cc: the event loop, kernel activities, the trace --------------

  void Trace(Nanos time, int cpu, const char* kind, int64_t a, int64_t b);
  uint64_t KindWordOf(const char* kind);
  // The trace sink (tracer.h): out of line and cold, so that with tracing off
  // the event paths keep their shape and pay one pointer test.
  ABSL_ATTRIBUTE_NOINLINE ABSL_ATTRIBUTE_COLD void TraceCpuRuns(const Cpu& c, TaskId next);
  ABSL_ATTRIBUTE_NOINLINE ABSL_ATTRIBUTE_COLD void TraceActivity(const Cpu& c, Nanos start,
                                                                 ActivityKind kind,
                                                                 TaskId interrupted);
  ABSL_ATTRIBUTE_NOINLINE ABSL_ATTRIBUTE_COLD void TraceSyscall(const Cpu& c, Nanos begin);
  ABSL_ATTRIBUTE_NOINLINE ABSL_ATTRIBUTE_COLD void TraceMigrate(TaskId task, int from, int to);
  void EnsureStarted();
  TaskId BeginActivity(Cpu& c, Nanos time);
  void EndActivity(Cpu& c, Nanos start, TaskId interrupted, ActivityKind kind);
  void FinishCpuEvent(Cpu& c);
  void HandleWork(Cpu& c, Nanos time, uint32_t slot);
  void HandleTimer(Cpu& c, Nanos time, uint32_t slot);
  void Process(const Event& e);

  // --- sim_cpu.cc: boot, tick and nohz, idle, return to user; the policy of
  // the CPU state machine (cpu_state.h) ----------------------------------------

  void Boot();
  void StopTick(Cpu& c);
  void RestartTick(Cpu& c);
  void UpdateTick(Cpu& c);
  void ReturnToUser(Cpu& c, TaskId task);
  void EnterIdle(Cpu& c);
  void ExitIdle(Cpu& c);
  // The CPU state machine's policy (cpu_state.h).
  Nanos CpuNow(const Cpu& c) const;
  bool MarkIdle(Cpu& c, Nanos now);
  bool MarkBusy(Cpu& c, Nanos now);
  bool TickStopped(const Cpu& c) const;
  bool CpuOnline(const Cpu& c) const;
  void MarkTickStopped(Cpu& c);
  void MarkTickRunning(Cpu& c);
  void ArmNextTick(Cpu& c);
  void RecordCpuEvent(const Cpu& c, const char* kind, int64_t a, int64_t b);
  Tracer* active_tracer() const;
  void HandleIdleCommit(Cpu& c, Nanos time);
  void HandleTick(Cpu& c, Nanos time);

  // --- sim_sched.cc: switch, dispatch, wake-up, placement, newidle pull, refill ---

  void SwitchTo(Cpu& c, TaskId next);
  ABSL_ATTRIBUTE_NOINLINE void LeaveCpu(Cpu& c);
  bool PauseCurrent(Cpu& c);
  void Kick(int cpu);
  void MoveQueued(TaskId task, int from, int to);
  void EvictCurrent(Cpu& c);
  void EvictQueued(Cpu& c);
  bool NewidlePull(Cpu& c);
  void Refill(const Cpu& c, Task& t);
  void Dispatch(Cpu& c);
  void TryToWakeUp(TaskId task, int waker_cpu);
  void WakeEnqueue(TaskId task, int prev, int target);
  void HandleWakeEnqueue(TaskId task, int target);

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
  std::deque<Task> tasks;                 // deque: references stay valid when a body spawns
  std::deque<std::mt19937_64> task_rngs;  // each task's stream (Context::rng), by TaskId
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
  struct KindMemo {
    const char* kind = nullptr;
    uint64_t word = 0;
  };
  std::array<KindMemo, 32> kind_memo;  // Trace's kind words by address
  SimPlacementStats placement;
};

}  // namespace isolation

#endif  // ISOLATION_RUNTIME_SIM_INTERNAL_H_
