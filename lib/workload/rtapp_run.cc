// SPDX-License-Identifier: GPL-2.0-or-later
// An rt-app description played on a driver (rtapp.h).  Counterpart: rt-app's
// src/rt-app.c, thread_body() (the loop over phases and events) and
// run_event() (one event), written from its documentation.

#include <algorithm>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "isolation/core/mutex.h"
#include "isolation/core/cpumask.h"
#include "isolation/runtime/noise_meter.h"
#include "isolation/workload/rtapp.h"

namespace isolation::workload {

struct RtAppRun::State {
  // runtime events run in slices of at most this, ending within a slice of
  // their wall-clock end.
  static constexpr Nanos kRunTimeSlice = 100 * kNsPerUs;

  // What a thread waits for when its last step ended.
  enum class Pending {
    kNone,
    kDelay,
    kRun,
    kRunTime,
    kSleep,
    kTimer,
    kYield,
    kMutex,    // blocked until it owns `wait_ref`
    kCond,     // blocked on condition `wait_ref` (then kMutex for the retake)
    kBarrier,  // blocked until `barrier_generation` moves
  };
  struct Timer {
    bool started = false;
    Nanos next = 0;
  };
  struct Thread {
    int index = 0;
    const RtAppTask* task = nullptr;
    RtAppThreadStats stats;
    bool started = false;
    size_t phase = 0;
    int64_t phase_loop = 0;
    size_t event = 0;
    Pending pending = Pending::kNone;
    Nanos pending_ns = 0;    // run: its length; runtime: the slice asked
    Nanos deadline = 0;      // runtime: when it ends
    Nanos timer_expiry = 0;  // timer: the expiry slept to
    std::string wait_ref;    // mutex / condition / barrier waited on
    std::string retake;      // cond wait: the mutex taken again after the signal
    uint64_t barrier_generation = 0;
    // The phase whose cpus are applied (-1: the task's; -2: none yet, so the
    // first phase applies its affinity and every thread, a fork's too,
    // reaches the hooks' OnAffinityChange).
    int affinity_phase = -2;
    std::map<std::string, Timer> unique_timers;
  };
  struct RtMutex {   // an rt-app mutex (the modelled lock)
    int owner = -1;  // thread index
    std::deque<int> waiters;
  };
  struct Barrier {
    int users = 0;
    int arrived = 0;
    uint64_t generation = 0;
    std::vector<int> waiters;
  };
  // What a step asks the driver to do after the lock is released.
  struct Effects {
    int kernel_entries = 0;
    std::vector<TaskId> wakes;
    std::vector<int> forks;  // thread indices to spawn
    bool set_affinity = false;
    CpuMask affinity;
  };

  RtAppDescription d;
  Driver* driver = nullptr;
  RtAppRunOptions options;
  int num_cpus = 0;
  int next_spawn_cpu = 0;

  mutable isolation::Mutex
      mu;  // std::mutex underneath: TSan sees it (absl::Mutex from Debian is not instrumented)
  absl::Status error ABSL_GUARDED_BY(mu);
  std::vector<std::unique_ptr<Thread>> threads ABSL_GUARDED_BY(mu);
  int live ABSL_GUARDED_BY(mu) = 0;
  std::map<std::string, int> forks_of ABSL_GUARDED_BY(mu);
  std::map<std::string, RtMutex> mutexes ABSL_GUARDED_BY(mu);
  std::map<std::string, std::deque<int>> conditions ABSL_GUARDED_BY(mu);
  std::map<std::string, Barrier> barriers ABSL_GUARDED_BY(mu);
  std::map<std::string, Timer> shared_timers ABSL_GUARDED_BY(mu);
  // Per CPU, made at its first sample: timer wake-up latencies.
  std::vector<std::unique_ptr<NoiseMeter>> latency ABSL_GUARDED_BY(mu);
  Nanos started_at = 0;

  CpuMask MaskOf(const std::vector<int>& cpus) const {
    CpuMask m(num_cpus);
    if (cpus.empty()) {
      for (int c = 0; c < num_cpus; ++c) m.Set(c);
    } else {
      for (int c : cpus) m.Set(c);
    }
    return m;
  }

  // The CPU a new thread starts on: the allowed CPUs in turn, as fork
  // balancing spreads new threads over idle CPUs.
  int SpawnCpu(const CpuMask& allowed) {
    for (int i = 0; i < num_cpus; ++i) {
      const int c = (next_spawn_cpu + i) % num_cpus;
      if (allowed.Test(c)) {
        next_spawn_cpu = (c + 1) % num_cpus;
        return c;
      }
    }
    return 0;
  }

  Thread& NewThread(const RtAppTask& task, std::string name) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    auto t = std::make_unique<Thread>();
    t->index = static_cast<int>(threads.size());
    t->task = &task;
    t->stats.name = std::move(name);
    t->stats.task = task.name;
    threads.push_back(std::move(t));
    ++live;
    return *threads.back();
  }

  void Fail(Thread& t, std::string what) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    if (error.ok()) {
      error = absl::FailedPreconditionError(
          absl::StrCat(d.source, ": thread ", t.stats.name, ": ", what));
    }
  }

  // Gives `m` to its first waiter (woken), or frees it.
  void Release(RtMutex& m, Effects& fx) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    if (m.waiters.empty()) {
      m.owner = -1;
      return;
    }
    m.owner = m.waiters.front();
    m.waiters.pop_front();
    fx.wakes.push_back(threads[static_cast<size_t>(m.owner)]->stats.id);
  }

  // A signalled waiter retakes its mutex: at once if free (woken), else it
  // queues for it and stays blocked.
  void Retake(int waiter, Effects& fx) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    Thread& w = *threads[static_cast<size_t>(waiter)];
    w.pending = Pending::kMutex;
    w.wait_ref = w.retake;
    RtMutex& m = mutexes[w.retake];
    if (m.owner < 0) {
      m.owner = waiter;
      fx.wakes.push_back(w.stats.id);
    } else {
      m.waiters.push_back(waiter);
    }
  }

  // Ends the thread: its loops are done or it hit a run error.
  Step End(Thread& t) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    t.stats.ended = true;
    --live;
    return Step::Exit();
  }

  // Accounts the step that just ended; false if the thread must block again
  // (woken before what it waits for happened).
  bool Resume(Thread& t, Nanos now, int cpu) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    switch (t.pending) {
      case Pending::kRun:
        t.stats.run_ns += t.pending_ns;
        break;
      case Pending::kRunTime:
        t.stats.run_ns += t.pending_ns;
        if (now < t.deadline) return true;  // Advance runs the rest
        break;
      case Pending::kSleep:
        ++t.stats.wakeups;
        break;
      case Pending::kTimer: {
        ++t.stats.wakeups;
        ++t.stats.timer_wakeups;
        const Nanos late = std::max<Nanos>(0, now - t.timer_expiry);
        t.stats.max_timer_latency_ns = std::max(t.stats.max_timer_latency_ns, late);
        t.stats.sum_timer_latency_ns += late;
        if (cpu >= 0 && cpu < num_cpus) {
          auto& m = latency[static_cast<size_t>(cpu)];
          if (m == nullptr) m = std::make_unique<NoiseMeter>(options.timer_latency_histogram);
          m->Record(late);
        }
        break;
      }
      case Pending::kMutex:
        if (mutexes[t.wait_ref].owner != t.index) return false;
        ++t.stats.wakeups;
        break;
      case Pending::kCond:
        return false;  // a signal turns it into kMutex first
      case Pending::kBarrier:
        if (barriers[t.wait_ref].generation == t.barrier_generation) return false;
        ++t.stats.wakeups;
        break;
      case Pending::kNone:
      case Pending::kDelay:
      case Pending::kYield:
        break;
    }
    t.pending = Pending::kNone;
    return true;
  }

  Timer& TimerFor(Thread& t, const std::string& ref) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    if (ref.rfind("unique", 0) == 0) return t.unique_timers[ref];
    return shared_timers[ref];
  }

  // The thread's next step: runs its events from where it is until one takes
  // time or blocks.  thread_body() / run_event().
  Step Advance(Thread& t, Nanos now, Effects& fx) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    if (!t.started) {
      t.started = true;
      if (t.task->delay > 0) {
        t.pending = Pending::kDelay;
        return Step::Sleep(t.task->delay);
      }
    }
    if (t.pending == Pending::kRunTime) {
      // runtime: more work until its wall-clock end, in slices, since a Run
      // step counts run time and a stalled or preempted thread would
      // otherwise work past the end.
      t.pending_ns = std::min(t.deadline - now, kRunTimeSlice);
      return Step::Run(t.pending_ns);
    }
    const std::vector<RtAppPhase>& phases = t.task->phases;
    // Bounded: every pass of this loop consumes an event; a loop that makes
    // no progress in time is the driver's to catch (a body that never takes
    // time), so stop after a phase list's worth of zero-time events.
    for (int64_t budget = 1 << 20; budget > 0; --budget) {
      if (t.event >= phases[t.phase].events.size()) {
        t.event = 0;
        if (++t.phase_loop < phases[t.phase].loop) continue;
        t.phase_loop = 0;
        if (++t.phase >= phases.size()) {
          t.phase = 0;
          ++t.stats.loops;
          if (t.task->loop >= 0 && t.stats.loops >= t.task->loop) return End(t);
        }
      }
      const RtAppPhase& phase = phases[t.phase];
      if (t.event == 0 && t.phase_loop == 0) {
        // Entering a phase: its affinity, or back to the task's.
        const int want = phase.cpus.empty() ? -1 : static_cast<int>(t.phase);
        if (want != t.affinity_phase) {
          t.affinity_phase = want;
          fx.set_affinity = true;
          fx.affinity = MaskOf(want < 0 ? t.task->cpus : phase.cpus);
        }
      }
      const RtAppEvent& e = phase.events[t.event++];
      switch (e.kind) {
        case RtAppEventKind::kRun:
          t.pending = Pending::kRun;
          t.pending_ns = e.ns;
          return Step::Run(e.ns);
        case RtAppEventKind::kRunTime:
          if (e.ns == 0) break;
          t.pending = Pending::kRunTime;
          t.deadline = now + e.ns;
          t.pending_ns = std::min(e.ns, kRunTimeSlice);
          return Step::Run(t.pending_ns);
        case RtAppEventKind::kSleep:
          ++fx.kernel_entries;
          t.pending = Pending::kSleep;
          return Step::Sleep(e.ns);
        case RtAppEventKind::kTimer: {
          Timer& timer = TimerFor(t, e.ref);
          if (!timer.started) {
            timer.started = true;
            timer.next = now;
          }
          timer.next += e.ns;
          ++t.stats.timer_waits;
          if (now < timer.next) {
            ++fx.kernel_entries;  // clock_nanosleep(TIMER_ABSTIME)
            t.pending = Pending::kTimer;
            t.timer_expiry = timer.next;
            return Step::Sleep(timer.next - now);
          }
          ++t.stats.timer_misses;
          if (!e.timer_absolute) timer.next = now;  // relative: the reference moves
          break;
        }
        case RtAppEventKind::kYield:
          ++fx.kernel_entries;
          t.pending = Pending::kYield;
          return Step::Yield();
        case RtAppEventKind::kLock: {
          RtMutex& m = mutexes[e.ref];
          if (m.owner == t.index) {
            Fail(t, absl::StrCat("locks mutex '", e.ref, "' it already holds (", e.key, ")"));
            return End(t);
          }
          if (m.owner < 0) {
            m.owner = t.index;  // uncontended: no system call
            break;
          }
          ++fx.kernel_entries;  // futex wait
          m.waiters.push_back(t.index);
          t.pending = Pending::kMutex;
          t.wait_ref = e.ref;
          return Step::Block();
        }
        case RtAppEventKind::kUnlock: {
          RtMutex& m = mutexes[e.ref];
          if (m.owner != t.index) {
            Fail(t, absl::StrCat("unlocks mutex '", e.ref, "' it does not hold (", e.key, ")"));
            return End(t);
          }
          if (!m.waiters.empty()) ++fx.kernel_entries;  // futex wake
          Release(m, fx);
          break;
        }
        case RtAppEventKind::kSignal:
        case RtAppEventKind::kBroadcast: {
          std::deque<int>& waiters = conditions[e.ref];
          if (waiters.empty()) break;  // lost, as pthread_cond_signal's
          ++fx.kernel_entries;
          do {
            const int w = waiters.front();
            waiters.pop_front();
            Retake(w, fx);
          } while (e.kind == RtAppEventKind::kBroadcast && !waiters.empty());
          break;
        }
        case RtAppEventKind::kWait: {
          RtMutex& m = mutexes[e.mutex];
          if (m.owner != t.index) {
            Fail(t, absl::StrCat("waits on '", e.ref, "' without holding mutex '", e.mutex, "' (",
                                 e.key, ")"));
            return End(t);
          }
          ++fx.kernel_entries;
          Release(m, fx);
          conditions[e.ref].push_back(t.index);
          t.pending = Pending::kCond;
          t.wait_ref = e.ref;
          t.retake = e.mutex;
          return Step::Block();
        }
        case RtAppEventKind::kBarrier: {
          ++fx.kernel_entries;
          Barrier& b = barriers[e.ref];
          if (++b.arrived >= b.users) {
            b.arrived = 0;
            ++b.generation;
            for (int w : b.waiters) fx.wakes.push_back(threads[static_cast<size_t>(w)]->stats.id);
            b.waiters.clear();
            break;
          }
          b.waiters.push_back(t.index);
          t.pending = Pending::kBarrier;
          t.wait_ref = e.ref;
          t.barrier_generation = b.generation;
          return Step::Block();
        }
        case RtAppEventKind::kFork: {
          ++fx.kernel_entries;  // clone
          if (static_cast<int>(threads.size()) >= kRtAppMaxThreads) {
            Fail(t, absl::StrCat("fork of '", e.ref, "' beyond ", kRtAppMaxThreads, " threads (",
                                 e.key, ")"));
            return End(t);
          }
          const RtAppTask* forked = nullptr;
          for (const RtAppTask& task : d.tasks) {
            if (task.name == e.ref) forked = &task;
          }
          const int n = forks_of[e.ref]++;
          Thread& child = NewThread(*forked, absl::StrCat(e.ref, "-f", n));
          fx.forks.push_back(child.index);
          break;
        }
      }
    }
    Fail(t, "runs 2^20 events that take no time in a row");
    return End(t);
  }
};

namespace {

class ThreadBody final : public TaskBody {
 public:
  ThreadBody(std::shared_ptr<RtAppRun::State> s, int index)
      : keep_(std::move(s)), s_(*keep_), index_(index) {}

  Step Next(TaskContext& ctx) override {
    RtAppRun::State::Effects fx;
    Step step;
    {
      MutexLock lock(s_.mu);
      RtAppRun::State::Thread& t = *s_.threads[static_cast<size_t>(index_)];
      t.stats.id = ctx.task();
      const Nanos now = ctx.now();
      if (!s_.Resume(t, now, ctx.cpu())) return Step::Block();
      step = s_.Advance(t, now, fx);
    }
    for (int i = 0; i < fx.kernel_entries; ++i) {
      ctx.Syscall(
          [&](CpuContext& k) {
            if (s_.options.on_kernel_entry) s_.options.on_kernel_entry(k, ctx.task());
          },
          s_.options.syscall_cost);
    }
    for (int child : fx.forks) Spawn(ctx, child);
    for (TaskId w : fx.wakes) ctx.driver().Wake(w, ctx.cpu());
    if (fx.set_affinity) {
      // Cannot fail: Start checked every phase's CPUs against the machine.
      (void)ctx.driver().SetAffinity(ctx.task(), fx.affinity);
    }
    return step;
  }

  void Spawn(TaskContext& ctx, int child) {
    TaskSpec spec;
    {
      MutexLock lock(s_.mu);
      RtAppRun::State::Thread& c = *s_.threads[static_cast<size_t>(child)];
      spec.name = c.stats.name;
      spec.affinity = s_.MaskOf(c.task->cpus);
      spec.cpu = spec.affinity.Test(ctx.cpu()) ? ctx.cpu() : s_.SpawnCpu(spec.affinity);
    }
    spec.group = s_.options.group;
    spec.parent = ctx.task();
    spec.body = std::make_unique<ThreadBody>(keep_, child);
    absl::StatusOr<TaskId> id = ctx.driver().Spawn(std::move(spec));
    MutexLock lock(s_.mu);
    RtAppRun::State::Thread& c = *s_.threads[static_cast<size_t>(child)];
    if (id.ok()) {
      c.stats.id = *id;
    } else {
      s_.Fail(c, absl::StrCat("fork failed: ", id.status().message()));
      c.stats.ended = true;
      --s_.live;
    }
  }

 private:
  // The bodies own the state with the RtAppRun, so a body the driver still
  // holds after a failed Start (or after the RtAppRun is gone) stays valid.
  std::shared_ptr<RtAppRun::State> keep_;
  RtAppRun::State& s_;
  const int index_;
};

}  // namespace

RtAppRun::RtAppRun(std::shared_ptr<State> state) : state_(std::move(state)) {}
RtAppRun::~RtAppRun() = default;

absl::StatusOr<std::unique_ptr<RtAppRun>> RtAppRun::Start(const RtAppDescription& description,
                                                          Driver& driver, RtAppRunOptions options) {
  if (absl::Status st = ValidateNoiseHistogram(options.timer_latency_histogram); !st.ok()) {
    return st;
  }
  auto s = std::make_shared<State>();
  s->d = description;
  s->driver = &driver;
  s->options = std::move(options);
  s->num_cpus = driver.num_cpus();
  s->started_at = driver.Now();
  for (const RtAppTask& t : s->d.tasks) {
    auto check = [&](const std::vector<int>& cpus, const std::string& where) -> absl::Status {
      for (int c : cpus) {
        if (c >= s->num_cpus) {
          return absl::InvalidArgumentError(
              absl::StrCat(s->d.source, ": task '", t.name, "'", where, ": CPU ", c,
                           " is not on the machine (", s->num_cpus, " CPUs)"));
        }
      }
      return absl::OkStatus();
    };
    if (absl::Status st = check(t.cpus, ""); !st.ok()) return st;
    for (const RtAppPhase& p : t.phases) {
      if (absl::Status st = check(p.cpus, absl::StrCat(", phase '", p.name, "'")); !st.ok()) {
        return st;
      }
    }
  }
  State& st = *s;
  std::vector<TaskSpec> specs;
  {
    MutexLock lock(st.mu);
    st.latency.resize(static_cast<size_t>(st.num_cpus));
    for (const auto& [name, users] : st.d.barriers) st.barriers[name].users = users;
    for (const RtAppTask& t : st.d.tasks) {
      for (int i = 0; i < t.instances; ++i) {
        State::Thread& th = st.NewThread(t, absl::StrCat(t.name, "-", i));
        TaskSpec spec;
        spec.name = th.stats.name;
        spec.affinity = st.MaskOf(t.cpus);
        spec.cpu = st.SpawnCpu(spec.affinity);
        spec.group = st.options.group;
        spec.body = std::make_unique<ThreadBody>(s, th.index);
        specs.push_back(std::move(spec));
      }
    }
  }
  for (size_t i = 0; i < specs.size(); ++i) {
    absl::StatusOr<TaskId> id = driver.Spawn(std::move(specs[i]));
    if (!id.ok()) return id.status();
    MutexLock lock(st.mu);
    st.threads[i]->stats.id = *id;
  }
  return std::unique_ptr<RtAppRun>(new RtAppRun(std::move(s)));
}

absl::StatusOr<Nanos> RtAppRun::RunToEnd(Nanos bound) {
  Driver& driver = *state_->driver;
  const Nanos start = driver.Now();
  if (state_->d.duration > 0) {
    if (absl::Status s = driver.RunFor(state_->d.duration); !s.ok()) return s;
  } else {
    while (live_threads() > 0 && driver.Now() - start < bound) {
      const Nanos slice = std::min(driver.poll_interval(), bound - (driver.Now() - start));
      if (absl::Status s = driver.RunFor(slice); !s.ok()) return s;
    }
  }
  if (absl::Status s = status(); !s.ok()) return s;
  return driver.Now() - start;
}

absl::Status RtAppRun::status() const {
  MutexLock lock(state_->mu);
  return state_->error;
}

std::vector<RtAppThreadStats> RtAppRun::Threads() const {
  MutexLock lock(state_->mu);
  std::vector<RtAppThreadStats> out;
  out.reserve(state_->threads.size());
  for (const auto& t : state_->threads) out.push_back(t->stats);
  return out;
}

std::vector<std::pair<int, NoiseResult>> RtAppRun::TimerLatencies() const {
  const Nanos ran = state_->driver->Now() - state_->started_at;
  MutexLock lock(state_->mu);
  std::vector<std::pair<int, NoiseResult>> out;
  for (size_t c = 0; c < state_->latency.size(); ++c) {
    if (state_->latency[c] == nullptr) continue;
    NoiseResult r = state_->latency[c]->Result();
    r.duration_ns = ran;
    out.emplace_back(static_cast<int>(c), std::move(r));
  }
  return out;
}

int RtAppRun::live_threads() const {
  MutexLock lock(state_->mu);
  return state_->live;
}

const RtAppDescription& RtAppRun::description() const { return state_->d; }

}  // namespace isolation::workload
