// SPDX-License-Identifier: GPL-2.0-or-later
//
// RealThreadDriver (real_driver.h): one pinned std::thread per model CPU.
//
// Each CPU thread runs a loop that plays the kernel for its CPU:
//   1. park while the driver is paused (between RunFor calls);
//   2. run the due items of its inbox: per-CPU work, timer callbacks,
//      wakeups of sleeping tasks (absolute due times, a min-heap);
//   3. run the tick if it is due and not stopped;
//   4. update the tick state (TickMode rules, same as the simulator);
//   5. run the current task for one step (a Run chunk of at most `slice`,
//      or one call of its body), or switch in a runnable task, or idle by
//      waiting on its condition variable until the earliest due time.
// The idle, tick and return-to-user transitions of these steps are the CPU
// state machine shared with the simulator (cpu_state.h); this driver gives
// it its policy: the host clock, the idle state and statistics under
// Cpu::mu, the next tick as a deadline its thread waits for.
//
// Locks (all isolation::Mutex -- a std::mutex, visible to TSan -- with the
// data they guard annotated for clang's thread-safety analysis):
//   Task::pi   the task's pi_lock: its state, affinity, wake token, cpu.
//   Cpu::mu    the run-queue lock: run queue, inbox, stats, idle state.
//              OnContextSwitch and OnMigrate run with it held (driver.h).
//   ctl_mu    pause/resume of all CPU threads.
//   timers_mu pending timer ids (for CancelTimer).
//   Cpu::inbox_mu  the CPU's inbox (work, timers, sleep wakeups) and the
//              mutex its idle wait uses.
// Lock order: Task::pi -> Cpu::mu -> Cpu::inbox_mu; ctl_mu and timers_mu
// are never held together with another lock.  Hooks that run with the
// run-queue lock held (OnContextSwitch, OnMigrate) may queue work and arm
// timers but must not call Wake, SetAffinity or Spawn (the kernel has the
// same rule under rq->lock).  A task's state changes under its pi lock, so a
// Wake() that races with the task blocking waits until the task has been
// switched out completely (the kernel gets the same from p->on_cpu).
//
// Hotplug is only accepted while the CPU threads are parked (between RunFor
// calls): the model topology is read lock-free by the mechanisms' hooks, and
// Topology::SetOnline must not race with them.  Its hooks then run on the
// calling thread (the owning CPU thread is parked; the pause handshake orders
// them).  Work items and timers of an offlined CPU move to a housekeeping CPU.
//
// Charge() is ignored: kernel time is measured on the real clock.

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <deque>
#include <mutex>
#include <thread>
#include <unordered_set>
#include <utility>
#include <vector>

#include <hwloc.h>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "isolation/core/host.h"
#include "isolation/core/mutex.h"
#include "isolation/runtime/real_driver.h"
#include "runtime/cpu_state.h"
#include "runtime/sched_model.h"
#include "runtime/trace_internal.h"

namespace isolation {
namespace {

constexpr int kMaxTasks = 1 << 16;

enum class RealTaskState : uint8_t {
  kQueued,
  kSleeping,
  kBlocked,
  kExited
};  // kQueued: runnable or running
enum class ItemKind : uint8_t { kWork, kTimer, kSleepWake };

thread_local bool tls_on_cpu_thread = false;

}  // namespace

struct RealThreadDriver::Impl {
  struct Task {
    // The affinity is set here, before Spawn publishes the task (a
    // constructor needs no lock; the analysis does not check constructors).
    explicit Task(CpuMask mask) : affinity(std::move(mask)) {}
    Mutex pi;  // pi_lock
    RealTaskState state ABSL_GUARDED_BY(pi) = RealTaskState::kQueued;
    CpuMask affinity ABSL_GUARDED_BY(pi);
    bool wake_pending ABSL_GUARDED_BY(pi) = false;
    uint64_t sleep_gen ABSL_GUARDED_BY(pi) = 0;
    // Written under pi, read anywhere.
    std::atomic<int> cpu{0};
    std::atomic<bool> affinity_changed{false};
    // Immutable after Spawn.
    std::string name;
    int group = 0;
    // Owned by the CPU thread running the task (handed over under Cpu::mu).
    std::unique_ptr<TaskBody> body;
    std::mt19937_64 rng;
    Nanos run_remaining = 0;
    // Where and when it last left a CPU: written by that CPU under its mu
    // (the lock of whichever CPU the task left: not annotated, the analysis
    // cannot name a lock chosen at run time).
    sched::LastRun last_run;
  };

  struct Item {
    Nanos due;
    uint64_t seq;
    ItemKind kind;
    int64_t id;    // timer id / task id
    uint64_t gen;  // sleep generation
    WorkFn fn;
  };
  struct ItemLater {
    bool operator()(const Item& a, const Item& b) const {
      return a.due != b.due ? a.due > b.due : a.seq > b.seq;
    }
  };

  struct alignas(64) Cpu {
    int id = 0;
    int host = -1;
    Mutex mu;  // the run-queue lock
    sched::RunQueue rq ABSL_GUARDED_BY(mu);
    CpuStats stats ABSL_GUARDED_BY(mu);
    bool idle_state ABSL_GUARDED_BY(mu) = false;
    Nanos idle_since ABSL_GUARDED_BY(mu) = 0;
    bool parked ABSL_GUARDED_BY(mu) =
        false;  // paused between RunFor calls: idle time does not accrue
    // The inbox has its own lock (taken after mu, never before it), so work
    // and timers may be queued from any hook, including those that run with
    // the run-queue lock held.  The CPU thread idles on cv under inbox_mu.
    Mutex inbox_mu;
    CondVar cv;
    std::vector<Item> items ABSL_GUARDED_BY(inbox_mu);  // min-heap by (due, seq)
    // Read anywhere (racy like rq->curr), written by the owner under mu or
    // by the hotplug path while parked.
    std::atomic<TaskId> curr{kIdleTask};
    std::atomic<int> nr_queued{0};
    std::atomic<bool> online{true};
    std::atomic<TickMode> mode{TickMode::kNohzIdle};
    std::atomic<bool> tick_stopped{false};
    std::atomic<int> observed_host{-1};
    std::atomic<bool> pinned{false};
    // CPU thread only:
    bool booted = false;
    Nanos next_tick = 0;
    Nanos slice_start = 0;
    std::thread thread;
  };

  class Context final : public TaskContext {
   public:
    Context(Impl* d, int cpu, TaskId task) : d_(d), cpu_(cpu), task_(task) {}
    int cpu() const override { return cpu_; }
    Nanos now() const override { return d_->Now(); }
    Driver& driver() override { return *d_->self; }
    void Charge(Nanos) override {}  // real time is measured, not modelled
    TaskId task() const override { return task_; }
    void Syscall(absl::FunctionRef<void(CpuContext&)> fn, Nanos) override {
      const Nanos start = d_->Now();
      Context kernel(d_, cpu_, task_);
      fn(kernel);
      if (task_ != kIdleTask) d_->ReturnToUser(d_->cpu(cpu_), task_);
      const Nanos end = d_->Now();
      if (Tracer* tr = d_->self->tracer())
        tr->Activity(cpu_, start, end, kTraceSyscall, "syscall", -1);
      const Nanos spent = end - start;
      Cpu& c = d_->cpu(cpu_);
      MutexLock lk(c.mu);
      c.stats.kernel_ns += spent;
    }
    std::mt19937_64& rng() override {
      return task_ == kIdleTask ? d_->cpu_rng[static_cast<size_t>(cpu_)] : d_->task(task_).rng;
    }

   private:
    Impl* d_;
    int cpu_;
    TaskId task_;
  };

  Impl(Topology model, IsolationConfig iso, RealDriverOptions opts)
      : topology(std::move(model)),
        isolation(std::move(iso)),
        options(std::move(opts)),
        tasks(kMaxTasks) {
    tick_period = sched::TickPeriod(options.hz);
    rng.seed(sched::DriverRngSeed(options.seed));
    const int n = topology.num_cpus();
    for (int i = 0; i < n; ++i) {
      auto c = std::make_unique<Cpu>();
      c->id = i;
      c->online.store(topology.IsOnline(i), std::memory_order_relaxed);
      c->mode.store(sched::InitialTickMode(isolation, i, options.default_tick_mode),
                    std::memory_order_relaxed);
      cpus.push_back(std::move(c));
      cpu_rng.emplace_back(sched::CpuRngSeed(options.seed, i));
    }
    t0 = MonotonicNanos();
  }

  ~Impl() {
    {
      MutexLock lk(ctl_mu);
      stop = true;
      running.store(false, std::memory_order_release);
    }
    ctl_cv.NotifyAll();
    for (auto& c : cpus) Notify(*c);
    for (auto& c : cpus) {
      if (c->thread.joinable()) c->thread.join();
    }
    const int n = num_tasks.load(std::memory_order_acquire);
    for (int i = 0; i < n; ++i)
      delete tasks[static_cast<size_t>(i)].load(std::memory_order_acquire);
    if (host_topo != nullptr) hwloc_topology_destroy(host_topo);
  }

  // --- helpers -----------------------------------------------------------------

  Nanos Now() const { return MonotonicNanos() - t0; }
  int num_cpus() const { return static_cast<int>(cpus.size()); }
  Cpu& cpu(int i) { return *cpus[static_cast<size_t>(i)]; }
  Task& task(TaskId id) { return *tasks[static_cast<size_t>(id)].load(std::memory_order_acquire); }
  bool ValidTask(TaskId id) const {
    return id >= 0 && id < num_tasks.load(std::memory_order_acquire);
  }

  std::chrono::steady_clock::time_point ToTimePoint(Nanos t) const {
    // steady_clock is CLOCK_MONOTONIC in libstdc++ on Linux, like MonotonicNanos().
    return std::chrono::steady_clock::time_point(std::chrono::nanoseconds(SaturatingAdd(t0, t)));
  }

  bool Online(int cpu_id) const {
    return cpus[static_cast<size_t>(cpu_id)]->online.load(std::memory_order_acquire);
  }

  // The scheduler model's placement rules over the CPUs' online flags.
  // Uses of a task's affinity REQUIRE its pi lock.
  auto Place() const {
    return sched::Placement(isolation, num_cpus(), [this](int cpu_id) { return Online(cpu_id); });
  }

  // Wakes the CPU thread if it idles.  Taking inbox_mu orders this after the
  // idle thread's check of its run queue and inbox (no lost wakeup).
  void Notify(Cpu& c) {
    { MutexLock lk(c.inbox_mu); }
    c.cv.NotifyOne();
  }

  void PushItem(Cpu& c, Item item) {
    {
      MutexLock lk(c.inbox_mu);
      item.seq = item_seq.fetch_add(1, std::memory_order_relaxed);
      c.items.push_back(std::move(item));
      std::push_heap(c.items.begin(), c.items.end(), ItemLater{});
    }
    c.cv.NotifyOne();
  }

  void EnsureStarted() {
    MutexLock lk(start_mu);
    while (hooks_started < hooks.size()) hooks[hooks_started++]->OnStart(*self);
  }

  // --- per-CPU events (CPU thread) -----------------------------------------------

  // The CPU state machine (cpu_state.h): idle, tick and return to user.
  void ReturnToUser(Cpu& c, TaskId t) { cpu_state::ReturnToUser(*this, c, t); }
  void EnterIdle(Cpu& c) { cpu_state::EnterIdle(*this, c); }
  void ExitIdle(Cpu& c) { cpu_state::ExitIdle(*this, c); }
  void StopTick(Cpu& c) { cpu_state::StopTick(*this, c); }
  void UpdateTick(Cpu& c) { cpu_state::UpdateTick(*this, c); }

  // Switches to the head of the run queue (or idle).
  TaskId SwitchOutLocked(Cpu& c, Nanos now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(c.mu) {
    const TaskId next = c.rq.PickNext();
    if (next != kIdleTask) c.nr_queued.fetch_sub(1, std::memory_order_relaxed);
    SwitchLocked(c, next, now);
    return next;
  }

  // context_switch().
  void SwitchLocked(Cpu& c, TaskId next, Nanos now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(c.mu) {
    const TaskId prev = c.curr.load(std::memory_order_relaxed);
    for (Hooks* h : hooks) h->OnContextSwitch(c.id, prev, next, now);
    if (Tracer* tr = self->tracer()) {
      tr->CpuRuns(c.id, now, next,
                  next == kIdleTask ? std::string_view() : std::string_view(task(next).name));
    }
    if (prev != kIdleTask) task(prev).last_run.Note(c.id, now);
    c.curr.store(next, std::memory_order_release);
    ++c.stats.context_switches;
  }

  // After a switch (c.mu released): the new task returns to user mode.
  void AfterSwitch(Cpu& c, TaskId next, Nanos now) {
    c.slice_start = now;
    if (next != kIdleTask) ReturnToUser(c, next);
  }

  Nanos NextTickAfter(Nanos now) const { return sched::NextTickAfter(now, tick_period); }

  // --- the CPU state machine's policy: the host clock, the idle state and
  // the statistics under the run-queue lock, no deterministic trace --------------

  Nanos CpuNow(const Cpu&) const { return Now(); }
  bool MarkIdle(Cpu& c, Nanos now) {
    MutexLock lk(c.mu);
    if (c.idle_state) return false;
    c.idle_state = true;
    c.idle_since = now;
    return true;
  }
  bool MarkBusy(Cpu& c, Nanos now) {
    MutexLock lk(c.mu);
    if (!c.idle_state) return false;
    c.idle_state = false;
    c.stats.idle_ns += now - c.idle_since;
    return true;
  }
  bool TickStopped(const Cpu& c) const { return c.tick_stopped.load(std::memory_order_relaxed); }
  bool CpuOnline(const Cpu& c) const { return c.online.load(std::memory_order_relaxed); }
  void MarkTickStopped(Cpu& c) {
    c.tick_stopped.store(true, std::memory_order_relaxed);
    MutexLock lk(c.mu);
    ++c.stats.tick_stops;
  }
  void MarkTickRunning(Cpu& c) { c.tick_stopped.store(false, std::memory_order_relaxed); }
  void ArmNextTick(Cpu& c) { c.next_tick = NextTickAfter(Now()); }
  void RecordCpuEvent(const Cpu&, const char*, int64_t, int64_t) {}
  Tracer* active_tracer() const { return self->tracer(); }

  // Relaxed loads: the CPU's own thread re-evaluates after every change it
  // is notified of (the notify orders the writer's store before the read).
  bool WantTickStopped(Cpu& c) {
    return sched::WantTickStopped(c.online.load(std::memory_order_relaxed),
                                  c.mode.load(std::memory_order_relaxed),
                                  sched::NrRunning(c.nr_queued.load(std::memory_order_relaxed),
                                                   c.curr.load(std::memory_order_relaxed)));
  }

  // End of a kernel activity that started at `start`: the interrupted task
  // returns to user mode; the interruption is accounted.  `category` and
  // `name` label the activity's trace slice (nullptr: not traced here).
  void EndActivity(Cpu& c, Nanos start, TaskId interrupted, bool counted_as_work, bool timer,
                   const char* category, const char* name) {
    if (interrupted != kIdleTask) ReturnToUser(c, interrupted);
    const Nanos end = Now();
    if (Tracer* tr = self->tracer(); tr != nullptr && category != nullptr) {
      tr->Activity(c.id, start, end, category, name, interrupted);
    }
    const Nanos spent = end - start;
    MutexLock lk(c.mu);
    c.stats.kernel_ns += spent;
    if (counted_as_work) ++c.stats.work_items;
    if (timer) ++c.stats.timer_callbacks;
    if (interrupted != kIdleTask) sched::AccountInterruption(c.stats, spent);
  }

  void RunDueItems(Cpu& c) {
    for (int budget = 0; budget < 1024; ++budget) {
      Item item;
      {
        MutexLock lk(c.inbox_mu);
        if (c.items.empty() || c.items.front().due > Now()) return;
        std::pop_heap(c.items.begin(), c.items.end(), ItemLater{});
        item = std::move(c.items.back());
        c.items.pop_back();
      }
      if (item.kind == ItemKind::kSleepWake) {
        TryToWakeUp(static_cast<TaskId>(item.id), -1, item.gen);
        continue;
      }
      if (item.kind == ItemKind::kTimer) {
        MutexLock lk(timers_mu);
        if (pending_timers.erase(item.id) == 0) continue;  // cancelled
      }
      const TaskId interrupted = c.curr.load(std::memory_order_relaxed);
      const Nanos start = Now();
      if (item.fn) {
        Context ctx(this, c.id, kIdleTask);
        item.fn(ctx);
      }
      const bool work = item.kind == ItemKind::kWork;
      EndActivity(c, start, interrupted, work, !work, work ? kTraceKworker : kTraceTimer,
                  work ? "kworker" : "timer");
    }
  }

  void MaybeTick(Cpu& c) {
    if (c.tick_stopped.load(std::memory_order_relaxed)) return;
    const Nanos start = Now();
    if (start < c.next_tick) return;
    const TaskId curr = c.curr.load(std::memory_order_relaxed);
    {
      Context ctx(this, c.id, curr);
      for (Hooks* h : hooks) h->OnTick(ctx, curr);
    }
    c.next_tick = NextTickAfter(start);
    {
      MutexLock lk(c.mu);
      ++c.stats.ticks;
    }
    if (sched::PreemptAtTick(curr, c.slice_start, start, options.timeslice,
                             c.nr_queued.load(std::memory_order_relaxed) > 0)) {
      // Preemption at the tick: round-robin.
      TaskId next;
      {
        MutexLock lk(c.mu);
        c.rq.PushBack(curr);
        c.nr_queued.fetch_add(1, std::memory_order_relaxed);
        next = SwitchOutLocked(c, Now());
      }
      AfterSwitch(c, next, Now());
      // Traced as an interruption of `curr` (ending after its slice: the
      // trace writer clips it there).
      if (Tracer* tr = self->tracer()) tr->Activity(c.id, start, Now(), kTraceTick, "tick", curr);
      EndActivity(c, start, kIdleTask, false, false, nullptr, nullptr);
      MutexLock lk(c.mu);
      sched::AccountInterruption(c.stats, Now() - start);
      return;
    }
    EndActivity(c, start, curr, false, false, kTraceTick, "tick");
  }

  // try_to_wake_up().  `gen` >= 0: only wake a sleep of that generation.
  void TryToWakeUp(TaskId id, int waker_cpu, int64_t gen = -1) {
    Task& t = task(id);
    int target;
    {
      MutexLock pi(t.pi);
      if (gen >= 0) {
        if (t.state != RealTaskState::kSleeping || t.sleep_gen != static_cast<uint64_t>(gen))
          return;
      } else if (t.state != RealTaskState::kBlocked) {
        if (t.state == RealTaskState::kQueued) t.wake_pending = true;
        return;
      }
      // The model's select step, then the enqueue, both under the pi lock.
      const int prev = t.cpu.load(std::memory_order_relaxed);
      target = sched::SelectWakeCpu(hooks, id, prev, waker_cpu, Now(), Place(), t.affinity);
      t.state = RealTaskState::kQueued;
      t.wake_pending = false;
      const Nanos now = Now();
      for (Hooks* h : hooks) h->OnWakeEnqueue(id, target, now);
      Enqueue(t, id, prev, target);
    }
    Notify(cpu(target));
  }

  // activate_task() on `to`, OnMigrate if it moves.
  void Enqueue(Task& t, TaskId id, int from, int to) ABSL_EXCLUSIVE_LOCKS_REQUIRED(t.pi) {
    Cpu& dst = cpu(to);
    MutexLock lk(dst.mu);
    if (from != to) {
      t.cpu.store(to, std::memory_order_release);
      const Nanos now = Now();
      for (Hooks* h : hooks) h->OnMigrate(id, from, to, now);
      if (Tracer* tr = self->tracer())
        tr->Instant(to, now, "migrate", {{"task", id}, {"from", from}, {"to", to}});
    }
    dst.rq.PushBack(id);
    dst.nr_queued.fetch_add(1, std::memory_order_relaxed);
  }

  // The current task may not stay on `c` (affinity or hotplug): switch it out
  // and queue it on an allowed CPU.  CPU thread (or hotplug while parked).
  void EvictCurrent(Cpu& c) {
    const TaskId id = c.curr.load(std::memory_order_relaxed);
    Task& t = task(id);
    TaskId next;
    int dest;
    {
      MutexLock pi(t.pi);
      {
        MutexLock lk(c.mu);
        next = SwitchOutLocked(c, Now());
      }
      dest = Place().Fallback(t.affinity);
      Enqueue(t, id, c.id, dest);
    }
    Notify(cpu(dest));
    AfterSwitch(c, next, Now());
  }

  // One step of the current task: a Run chunk, or one call of its body.
  void RunCurrent(Cpu& c, TaskId id) {
    Task& t = task(id);
    if (t.affinity_changed.exchange(false, std::memory_order_acq_rel)) {
      bool allowed;
      {
        MutexLock pi(t.pi);
        allowed = Place().Allowed(t.affinity, c.id);
      }
      if (!allowed) {
        EvictCurrent(c);
        return;
      }
    }
    if (t.run_remaining > 0) {
      const Nanos chunk = std::min(t.run_remaining, options.slice);
      const Nanos start = MonotonicNanos();
      Nanos now = start;
      while (now - start < chunk) now = MonotonicNanos();
      t.run_remaining -= now - start;
      return;
    }
    Step step;
    {
      Context ctx(this, c.id, id);
      step = t.body->Next(ctx);
    }
    switch (step.kind) {
      case Step::Kind::kRun:
        if (step.ns > 0) t.run_remaining = step.ns;
        return;
      case Step::Kind::kYield: {
        TaskId next = id;
        {
          MutexLock lk(c.mu);
          if (!c.rq.empty()) {
            c.rq.PushBack(id);
            c.nr_queued.fetch_add(1, std::memory_order_relaxed);
            next = SwitchOutLocked(c, Now());
          }
        }
        if (next != id) AfterSwitch(c, next, Now());
        return;
      }
      case Step::Kind::kSleep:
      case Step::Kind::kBlock:
      case Step::Kind::kExit:
        break;
    }
    if (step.kind == Step::Kind::kExit) {
      const Nanos now = Now();
      for (Hooks* h : hooks) h->OnTaskExit(c.id, id, now);
    }
    TaskId next;
    {
      MutexLock pi(t.pi);
      if (step.kind == Step::Kind::kBlock && t.wake_pending) {
        t.wake_pending = false;  // a Wake came before the Block: do not sleep
        return;
      }
      MutexLock lk(c.mu);
      const Nanos now = Now();
      if (step.kind == Step::Kind::kSleep) {
        t.state = RealTaskState::kSleeping;
        ++t.sleep_gen;
        MutexLock inbox(c.inbox_mu);
        c.items.push_back(Item{SaturatingAdd(now, std::max<Nanos>(0, step.ns)),  // kNanosMax: never
                               item_seq.fetch_add(1, std::memory_order_relaxed),
                               ItemKind::kSleepWake, id, t.sleep_gen, nullptr});
        std::push_heap(c.items.begin(), c.items.end(), ItemLater{});
      } else {
        t.state =
            step.kind == Step::Kind::kBlock ? RealTaskState::kBlocked : RealTaskState::kExited;
      }
      next = SwitchOutLocked(c, now);
    }
    if (step.kind == Step::Kind::kExit) t.body.reset();
    AfterSwitch(c, next, Now());
  }

  // Parks the CPU thread while paused; false when the driver stops.
  bool Park(Cpu& c) {
    {
      MutexLock lk(c.mu);
      if (c.idle_state) c.stats.idle_ns += Now() - c.idle_since;
      c.parked = true;
    }
    bool stopping;
    {
      MutexLock lk(ctl_mu);
      ++parked;
      ctl_cv.NotifyAll();
      while (!(running.load(std::memory_order_relaxed) || stop)) ctl_cv.Wait(lk);
      --parked;
      stopping = stop;
    }
    MutexLock lk(c.mu);
    c.idle_since = Now();
    c.parked = false;
    return !stopping;
  }

  void Pin(Cpu& c) {
    if (!options.pin) return;
    bool ok = false;
    if (host_topo != nullptr && host_is_this_system) {
      hwloc_bitmap_t set = hwloc_bitmap_alloc();
      hwloc_bitmap_only(set, static_cast<unsigned>(c.host));
      ok = hwloc_set_cpubind(host_topo, set, HWLOC_CPUBIND_THREAD) == 0;
      hwloc_bitmap_free(set);
    }
    if (!ok) {
      // hwloc could not bind (or the host topology is not this system, e.g.
      // HWLOC_SYNTHETIC is set): bind with the plain syscall.
      cpu_set_t set;
      CPU_ZERO(&set);
      CPU_SET(static_cast<size_t>(c.host), &set);
      ok = pthread_setaffinity_np(pthread_self(), sizeof(set), &set) == 0;
    }
    c.pinned.store(ok, std::memory_order_relaxed);
  }

  void CpuMain(Cpu& c) {
    tls_on_cpu_thread = true;
    trace_internal::SetThreadCpu(c.id);
    Pin(c);
    {
      MutexLock lk(ctl_mu);
      ++threads_ready;
    }
    ctl_cv.NotifyAll();
    while (true) {
      if (!running.load(std::memory_order_acquire)) {
        if (!Park(c)) return;
        continue;
      }
      c.observed_host.store(sched_getcpu(), std::memory_order_relaxed);
      if (!c.online.load(std::memory_order_acquire)) {
        WaitForWork(c);
        continue;
      }
      if (!c.booted) {
        // Boot: the CPU starts idle; its tick runs unless the policy stops it.
        c.booted = true;
        cpu_state::Boot(*this, c);
      }
      RunDueItems(c);
      MaybeTick(c);
      UpdateTick(c);
      const TaskId curr = c.curr.load(std::memory_order_relaxed);
      if (curr != kIdleTask) {
        RunCurrent(c, curr);
        continue;
      }
      if (c.nr_queued.load(std::memory_order_relaxed) == 0) {
        EnterIdle(c);
        UpdateTick(c);
        WaitForWork(c);
        continue;
      }
      ExitIdle(c);
      TaskId next;
      {
        MutexLock lk(c.mu);
        next = SwitchOutLocked(c, Now());
      }
      AfterSwitch(c, next, Now());
    }
  }

  // Idle: sleep until the earliest item, the next tick, a wakeup or a pause.
  void WaitForWork(Cpu& c) {
    MutexLock lk(c.inbox_mu);
    if (!running.load(std::memory_order_acquire)) return;
    const bool online = c.online.load(std::memory_order_acquire);
    if (online && (c.nr_queued.load(std::memory_order_relaxed) > 0 ||
                   c.curr.load(std::memory_order_relaxed) != kIdleTask)) {
      return;
    }
    Nanos deadline = kNanosMax;
    if (!c.items.empty()) deadline = c.items.front().due;
    if (!c.tick_stopped.load(std::memory_order_relaxed) && online) {
      deadline = std::min(deadline, c.next_tick);
    }
    if (deadline <= Now()) return;
    if (deadline == kNanosMax) {
      c.cv.Wait(lk);
    } else {
      c.cv.WaitUntil(lk, ToTimePoint(deadline));
    }
  }

  absl::Status LoadHost() {
    if (hwloc_topology_init(&host_topo) != 0) {
      host_topo = nullptr;
      return absl::InternalError("RealThreadDriver: hwloc_topology_init failed");
    }
    if (hwloc_topology_load(host_topo) != 0) {
      hwloc_topology_destroy(host_topo);
      host_topo = nullptr;
      return absl::InternalError("RealThreadDriver: hwloc_topology_load failed for the host");
    }
    host_is_this_system = hwloc_topology_is_thissystem(host_topo) != 0;
    // The CPUs a thread of this process can be pinned to: its affinity mask
    // (which reflects the cgroup cpuset) plus the isolcpus= CPUs, which the
    // kernel leaves out of every process's initial mask (core/host.h).
    ISOLATION_ASSIGN_OR_RETURN(allowed_host, UsableHostCpus());
    const int n = num_cpus();
    if (!options.host_cpu_map.empty()) {
      if (static_cast<int>(options.host_cpu_map.size()) != n) {
        return absl::InvalidArgumentError(absl::StrCat("RealThreadDriver: host_cpu_map has ",
                                                       options.host_cpu_map.size(),
                                                       " entries, the model has ", n, " CPUs"));
      }
      for (int i = 0; i < n; ++i) {
        const int h = options.host_cpu_map[static_cast<size_t>(i)];
        if (std::find(allowed_host.begin(), allowed_host.end(), h) == allowed_host.end()) {
          return absl::InvalidArgumentError(
              absl::StrCat("RealThreadDriver: host_cpu_map[", i, "] = ", h,
                           " is not a host CPU this process may use"));
        }
        cpu(i).host = h;
      }
    } else {
      for (int i = 0; i < n; ++i) {
        cpu(i).host = allowed_host[static_cast<size_t>(i) % allowed_host.size()];
      }
    }
    return absl::OkStatus();
  }

  RealThreadDriver* self = nullptr;
  Topology topology;
  IsolationConfig isolation;
  RealDriverOptions options;
  Nanos tick_period = 4 * kNsPerMs;
  Nanos t0 = 0;

  hwloc_topology_t host_topo = nullptr;
  bool host_is_this_system = false;
  std::vector<int> allowed_host;

  std::vector<Hooks*> hooks;  // fixed once the threads start
  Mutex start_mu;
  size_t hooks_started ABSL_GUARDED_BY(start_mu) = 0;

  std::vector<std::unique_ptr<Cpu>> cpus;
  std::vector<std::mt19937_64> cpu_rng;  // each used only by its CPU thread
  std::vector<std::atomic<Task*>> tasks;
  std::atomic<int> num_tasks{0};
  Mutex spawn_mu;

  Mutex ctl_mu;
  CondVar ctl_cv;
  std::atomic<bool> running{false};
  bool stop ABSL_GUARDED_BY(ctl_mu) = false;
  int parked ABSL_GUARDED_BY(ctl_mu) = 0;
  int threads_ready ABSL_GUARDED_BY(ctl_mu) = 0;  // CPU threads started and pinned
  bool threads_started = false;                   // owning thread only
  std::atomic<bool> in_run_for{false};

  Mutex timers_mu;
  std::unordered_set<TimerId> pending_timers ABSL_GUARDED_BY(timers_mu);
  std::atomic<TimerId> next_timer{1};

  std::atomic<uint64_t> item_seq{0};  // FIFO order among items due at the same time

  std::atomic<int> hk_cursor{-1};
  Mutex rng_mu;
  std::mt19937_64 rng ABSL_GUARDED_BY(rng_mu);
};

// --- RealThreadDriver --------------------------------------------------------------

absl::StatusOr<std::unique_ptr<RealThreadDriver>> RealThreadDriver::Create(
    Topology model, IsolationConfig isolation, RealDriverOptions options) {
  if (absl::Status st = sched::CheckDriverSetup("RealThreadDriver", options.hz, options.timeslice,
                                                model.num_cpus(), isolation.num_cpus());
      !st.ok()) {
    return st;
  }
  if (options.slice <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("RealThreadDriver: slice must be > 0 ns, got ", options.slice));
  }
  auto impl = std::make_unique<Impl>(std::move(model), std::move(isolation), std::move(options));
  if (absl::Status st = impl->LoadHost(); !st.ok()) return st;
  Impl* raw = impl.get();
  std::unique_ptr<RealThreadDriver> d(new RealThreadDriver(std::move(impl)));
  raw->self = d.get();
  return d;
}

RealThreadDriver::RealThreadDriver(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
RealThreadDriver::~RealThreadDriver() = default;

const Topology& RealThreadDriver::topology() const { return impl_->topology; }
const IsolationConfig& RealThreadDriver::isolation() const { return impl_->isolation; }
Nanos RealThreadDriver::Now() const { return impl_->Now(); }
Nanos RealThreadDriver::tick_period() const { return impl_->tick_period; }

void RealThreadDriver::AddHooks(Hooks* hooks) {
  // Before the first RunFor (a phase, not a lock: threads_started is the
  // owning thread's, so there is nothing for the analysis to check).
  if (hooks == nullptr || impl_->threads_started) return;
  impl_->hooks.push_back(hooks);
}

absl::StatusOr<TaskId> RealThreadDriver::Spawn(TaskSpec spec) {
  Impl& d = *impl_;
  const int n = d.num_cpus();
  absl::StatusOr<CpuMask> affinity =
      sched::CheckSpawn(spec, n, spec.cpu >= 0 && spec.cpu < n && d.Online(spec.cpu));
  if (!affinity.ok()) return affinity.status();
  d.EnsureStarted();
  TaskId id;
  Impl::Task* t;
  {
    MutexLock lk(d.spawn_mu);
    id = d.num_tasks.load(std::memory_order_relaxed);
    if (id >= kMaxTasks) {
      return absl::ResourceExhaustedError(
          absl::StrCat("Spawn(", spec.name, "): more than ", kMaxTasks, " tasks"));
    }
    t = new Impl::Task(*std::move(affinity));
    t->name = std::move(spec.name);
    t->group = spec.group;
    t->cpu.store(spec.cpu, std::memory_order_relaxed);
    t->body = std::move(spec.body);
    t->rng.seed(sched::TaskRngSeed(d.options.seed, id));
    d.tasks[static_cast<size_t>(id)].store(t, std::memory_order_release);
    d.num_tasks.store(id + 1, std::memory_order_release);
  }
  const Nanos now = d.Now();
  for (Hooks* h : d.hooks) h->OnTaskFork(spec.parent, id, spec.group, now);
  {
    MutexLock pi(t->pi);
    d.Enqueue(*t, id, spec.cpu, spec.cpu);
  }
  d.Notify(d.cpu(spec.cpu));
  return id;
}

void RealThreadDriver::Wake(TaskId task, int waker_cpu) {
  if (!impl_->ValidTask(task)) return;
  impl_->TryToWakeUp(task, sched::NormalizeWakerCpu(waker_cpu, impl_->num_cpus()));
}

absl::Status RealThreadDriver::SetAffinity(TaskId task, const CpuMask& mask) {
  Impl& d = *impl_;
  bool any_online = false;
  if (mask.nbits() == d.num_cpus()) {
    for (int c = mask.First(); c < mask.nbits(); c = mask.Next(c))
      any_online = any_online || d.Online(c);
  }
  if (absl::Status st =
          sched::CheckAffinity(d.ValidTask(task), task, mask, d.num_cpus(), any_online);
      !st.ok()) {
    return st;
  }
  Impl::Task& t = d.task(task);
  int notify_a = -1, notify_b = -1;
  {
    MutexLock pi(t.pi);
    t.affinity = mask;
    const Nanos now = d.Now();
    for (Hooks* h : d.hooks) h->OnAffinityChange(task, mask, now);
    const int from = t.cpu.load(std::memory_order_relaxed);
    if (t.state == RealTaskState::kQueued && !mask.Test(from)) {
      Impl::Cpu& c = d.cpu(from);
      bool was_queued = false;
      {
        MutexLock lk(c.mu);
        if (c.rq.Remove(task)) {
          c.nr_queued.fetch_sub(1, std::memory_order_relaxed);
          was_queued = true;
        }
      }
      if (was_queued) {
        const int dest = d.Place().Fallback(t.affinity);
        d.Enqueue(t, task, from, dest);
        notify_a = dest;
      } else {
        // Running: its CPU evicts it at the next step boundary (the stopper).
        t.affinity_changed.store(true, std::memory_order_release);
      }
      notify_b = from;
    }
  }
  if (notify_a >= 0) d.Notify(d.cpu(notify_a));
  if (notify_b >= 0) d.Notify(d.cpu(notify_b));
  return absl::OkStatus();
}

int RealThreadDriver::TaskCpu(TaskId task) const {
  if (!impl_->ValidTask(task)) return -1;
  return impl_->task(task).cpu.load(std::memory_order_acquire);
}

int RealThreadDriver::TaskGroup(TaskId task) const {
  if (!impl_->ValidTask(task)) return -1;
  return impl_->task(task).group;
}

Mutex* RealThreadDriver::RunQueueLock(int cpu) {
  if (cpu < 0 || cpu >= impl_->num_cpus()) return nullptr;
  return &impl_->cpu(cpu).mu;  // held by SwitchLocked (OnContextSwitch) and Enqueue (OnMigrate)
}

TaskId RealThreadDriver::CurrentTask(int cpu) const {
  if (cpu < 0 || cpu >= impl_->num_cpus()) return kIdleTask;
  return impl_->cpu(cpu).curr.load(std::memory_order_relaxed);
}

int RealThreadDriver::NumRunnable(int cpu) const {
  if (cpu < 0 || cpu >= impl_->num_cpus()) return 0;
  const Impl::Cpu& c = impl_->cpu(cpu);
  return c.nr_queued.load(std::memory_order_relaxed) +
         (c.curr.load(std::memory_order_relaxed) != kIdleTask ? 1 : 0);
}

bool RealThreadDriver::IsIdle(int cpu) const { return NumRunnable(cpu) == 0; }

void RealThreadDriver::QueueWorkOn(int cpu, Nanos delay, WorkFn fn) {
  Impl& d = *impl_;
  if (cpu < 0 || cpu >= d.num_cpus() || !d.Online(cpu)) {
    cpu = d.Place().Housekeeping(HousekeepingType::kWq);
  }
  d.PushItem(d.cpu(cpu),
             Impl::Item{sched::DueAfter(d.Now(), delay), 0, ItemKind::kWork, 0, 0, std::move(fn)});
}

int RealThreadDriver::QueueHousekeepingWork(Nanos delay, WorkFn fn) {
  Impl& d = *impl_;
  const int chosen = d.Place().NextHousekeeping(d.hk_cursor.load(std::memory_order_relaxed));
  d.hk_cursor.store(chosen, std::memory_order_relaxed);  // round-robin hint; races only skew it
  QueueWorkOn(chosen, delay, std::move(fn));
  return chosen;
}

TimerId RealThreadDriver::ArmTimer(int cpu, Nanos expires, WorkFn fn) {
  Impl& d = *impl_;
  if (cpu < 0 || cpu >= d.num_cpus() || !d.Online(cpu)) {
    cpu = d.Place().Housekeeping(HousekeepingType::kTimer);
  }
  const TimerId id = d.next_timer.fetch_add(1, std::memory_order_relaxed);
  {
    MutexLock lk(d.timers_mu);
    d.pending_timers.insert(id);
  }
  d.PushItem(d.cpu(cpu), Impl::Item{expires, 0, ItemKind::kTimer, id, 0, std::move(fn)});
  return id;
}

bool RealThreadDriver::CancelTimer(TimerId id) {
  MutexLock lk(impl_->timers_mu);
  return impl_->pending_timers.erase(id) > 0;
}

void RealThreadDriver::SetTickMode(int cpu, TickMode mode) {
  if (cpu < 0 || cpu >= impl_->num_cpus()) return;
  Impl::Cpu& c = impl_->cpu(cpu);
  c.mode.store(mode, std::memory_order_relaxed);
  impl_->Notify(c);  // its thread re-evaluates the tick state
}

TickMode RealThreadDriver::GetTickMode(int cpu) const {
  if (cpu < 0 || cpu >= impl_->num_cpus()) return TickMode::kPeriodic;
  return impl_->cpu(cpu).mode.load(std::memory_order_relaxed);
}

bool RealThreadDriver::TickStopped(int cpu) const {
  if (cpu < 0 || cpu >= impl_->num_cpus()) return true;
  return impl_->cpu(cpu).tick_stopped.load(std::memory_order_relaxed);
}

absl::Status RealThreadDriver::SetCpuOnline(int cpu, bool online) {
  Impl& d = *impl_;
  if (absl::Status st = sched::CheckHotplugCpu(cpu, d.num_cpus()); !st.ok()) return st;
  if (tls_on_cpu_thread || d.in_run_for.load()) {
    return absl::FailedPreconditionError(
        "SetCpuOnline: the real-thread driver accepts hotplug only between RunFor calls");
  }
  Impl::Cpu& c = d.cpu(cpu);
  if (d.Online(cpu) == online) return absl::OkStatus();
  if (absl::Status st = d.topology.SetOnline(cpu, online); !st.ok()) return st;
  d.EnsureStarted();
  const Nanos now = d.Now();
  if (Tracer* tr = tracer()) tr->Instant(cpu, now, online ? "cpu_online" : "cpu_offline", {});
  if (online) {
    c.online.store(true, std::memory_order_release);
    for (Hooks* h : d.hooks) h->OnCpuOnline(cpu, now);
    return absl::OkStatus();
  }
  // All CPU threads are parked: this thread plays `cpu` (see file comment).
  for (Hooks* h : d.hooks) h->OnCpuOffline(cpu, now);
  c.online.store(false, std::memory_order_release);
  // Queued tasks, then the current one, go to allowed online CPUs.
  while (true) {
    TaskId id;
    {
      MutexLock lk(c.mu);
      if (c.rq.empty()) break;
      id = c.rq.PickNext();
      c.nr_queued.fetch_sub(1, std::memory_order_relaxed);
    }
    Impl::Task& t = d.task(id);
    MutexLock pi(t.pi);
    d.Enqueue(t, id, cpu, d.Place().Fallback(t.affinity));
  }
  if (c.curr.load(std::memory_order_relaxed) != kIdleTask) d.EvictCurrent(c);
  // Pending work, timers and sleep wakeups move to a housekeeping CPU.
  std::vector<Impl::Item> moved;
  {
    MutexLock lk(c.inbox_mu);
    moved.swap(c.items);
  }
  const int hk = d.Place().Housekeeping(HousekeepingType::kTimer);
  for (Impl::Item& item : moved) d.PushItem(d.cpu(hk), std::move(item));
  if (!c.tick_stopped.load(std::memory_order_relaxed)) d.StopTick(c);
  return absl::OkStatus();
}

absl::Status RealThreadDriver::RunFor(Nanos duration) {
  Impl& d = *impl_;
  if (absl::Status st = sched::CheckRunFor(duration, d.Now(), "time"); !st.ok()) return st;
  if (tls_on_cpu_thread || d.in_run_for.load()) {
    return absl::FailedPreconditionError("RunFor: called from a CPU thread or re-entrantly");
  }
  d.EnsureStarted();
  d.in_run_for.store(true);
  {
    MutexLock lk(d.ctl_mu);
    d.running.store(true, std::memory_order_release);
  }
  if (!d.threads_started) {
    d.threads_started = true;
    for (auto& c : d.cpus) {
      Impl::Cpu* cp = c.get();
      c->thread = std::thread([&d, cp] { d.CpuMain(*cp); });
    }
    // The run time starts once every CPU thread exists and is pinned (thread
    // creation can take milliseconds on a loaded host).
    MutexLock lk(d.ctl_mu);
    while (d.threads_ready != d.num_cpus()) d.ctl_cv.Wait(lk);
  } else {
    d.ctl_cv.NotifyAll();
  }
  std::this_thread::sleep_for(std::chrono::nanoseconds(duration));
  {
    MutexLock lk(d.ctl_mu);
    d.running.store(false, std::memory_order_release);
  }
  for (auto& c : d.cpus) d.Notify(*c);
  {
    MutexLock lk(d.ctl_mu);
    while (d.parked != d.num_cpus()) d.ctl_cv.Wait(lk);
  }
  d.in_run_for.store(false);
  return absl::OkStatus();
}

CpuStats RealThreadDriver::Stats(int cpu) const {
  if (cpu < 0 || cpu >= impl_->num_cpus()) return {};
  Impl::Cpu& c = impl_->cpu(cpu);
  MutexLock lk(c.mu);
  return sched::StatsAt(c.stats, c.idle_state && !c.parked, c.idle_since, impl_->Now());
}

uint64_t RealThreadDriver::Random() {
  MutexLock lk(impl_->rng_mu);
  return impl_->rng();
}

// Kernel time is host time: the work is measured, the model ignored.
Driver::KernelSpan RealThreadDriver::BeginKernelSpan() const { return {MonotonicNanos()}; }

Nanos RealThreadDriver::EndKernelSpan(KernelSpan span, CpuContext*, Nanos) {
  return MonotonicNanos() - span.host_start;
}

void RealThreadDriver::SpendKernelTime(CpuContext&, Nanos ns) {
  const Nanos end = SaturatingAdd(MonotonicNanos(), ns);
  while (MonotonicNanos() < end) {
  }
}

int RealThreadDriver::HostCpu(int cpu) const {
  if (cpu < 0 || cpu >= impl_->num_cpus()) return -1;
  return impl_->cpu(cpu).host;
}

bool RealThreadDriver::oversubscribed() const {
  return impl_->num_cpus() > static_cast<int>(impl_->allowed_host.size());
}

int RealThreadDriver::ObservedHostCpu(int cpu) const {
  if (cpu < 0 || cpu >= impl_->num_cpus()) return -1;
  return impl_->cpu(cpu).observed_host.load(std::memory_order_relaxed);
}

}  // namespace isolation
