// SPDX-License-Identifier: GPL-2.0-or-later
// -----------------------------------------------------------------------------
// sched_model.h (internal to lib/runtime)
// -----------------------------------------------------------------------------
//
// The scheduler model both drivers play: the rules that decide what a CPU
// does, kept here once so that the simulator (sim*.cc, an event queue in
// virtual time) and the real-thread driver (real_driver.cc, pinned threads
// in host time) differ only in their engines.
//
//   run-queue choice   RunQueue: FIFO of runnable tasks other than the
//                      current one; PickNext() is the next to switch in,
//                      PreemptAtTick() the round-robin rule of the tick.
//   wake-up path       two steps, so an engine may interleave other work
//                      between them (concurrent wake-ups):
//                        SelectWakeCpu()  select_task_rq(): the hooks'
//                                         placement, else prev, else the
//                                         fallback CPU;
//                        (engine)         ttwu_queue()/activate_task() on the
//                                         chosen CPU's run queue
//                                         (Hooks::OnWakeEnqueue first),
//                                         OnMigrate when the CPU changes.
//                      The simulator can open a window between the two
//                      (SimOptions::wake_select_cost) and one in its go-idle
//                      path (idle_entry_cost, ended by Hooks::IdleRecheck).
//   placement          Placement: Allowed(), Fallback() (select_fallback_rq()),
//                      Housekeeping(), NextHousekeeping() (the unbound
//                      workqueue's round-robin); LastRun: where and
//                      when a task last left a CPU (cache-hot test of the
//                      newidle pull).  The simulator's cache-refill penalty
//                      (SimOptions::refill_penalty) keys on where a task last
//                      ran user work instead (sim_sched.cc), the real-thread driver
//                      pays real refills and models none.
//   tick-stop policy   InitialTickMode(), WantTickStopped(), UpdateTick(),
//                      NextTickAfter() (tick_nohz_*: CONFIG_NO_HZ_IDLE /
//                      nohz_full=).
//   argument checks    Check*(): every outside input of the Driver interface,
//                      with the same messages on both drivers.
//   statistics         AccountInterruption(), StatsAt().
//   random source      SplitMix64() seeding of the driver's, the tasks' and
//                      the CPUs' engines.
//
// Nothing here allocates or takes a lock; the templates take the engine's
// "is this CPU online" as a callable so each engine keeps its own per-CPU
// state (plain fields in the simulator, atomics on real threads) and the
// hot paths stay free of indirect calls.
//
// Kernel counterpart: the decisions of kernel/sched/core.c (select_task_rq,
// select_fallback_rq, sched_tick preemption), kernel/time/tick-sched.c
// (can_stop_idle_tick / can_stop_full_tick) and kernel/workqueue.c (unbound
// work on housekeeping CPUs), at the level the drivers model them.
//
// Thread safety: pure functions of their arguments; a RunQueue and a LastRun
// are guarded by their owner (the simulator's thread, or the real driver's
// run-queue lock).

#ifndef ISOLATION_RUNTIME_SCHED_MODEL_H_
#define ISOLATION_RUNTIME_SCHED_MODEL_H_

#include <algorithm>
#include <cstdint>
#include <deque>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "isolation/core/clock.h"
#include "isolation/core/cpumask.h"
#include "isolation/core/driver.h"
#include "isolation/core/isolation_config.h"

namespace isolation::sched {

// --- random source -----------------------------------------------------------

// SplitMix64 finaliser: turns a seed (and small counters) into well-mixed
// engine seeds, so seed 1 and seed 2 give unrelated streams.
constexpr uint64_t SplitMix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}
// Driver::Random()'s engine.
constexpr uint64_t DriverRngSeed(uint64_t seed) { return SplitMix64(seed); }
// TaskContext::rng() of task `id`.
constexpr uint64_t TaskRngSeed(uint64_t seed, TaskId id) {
  return SplitMix64(seed ^ SplitMix64(static_cast<uint64_t>(id) + 1));
}
// The idle context's engine of `cpu` where a driver keeps one per CPU.
constexpr uint64_t CpuRngSeed(uint64_t seed, int cpu) {
  return SplitMix64(seed ^ (0x1000u + static_cast<uint64_t>(cpu)));
}

// --- run-queue choice --------------------------------------------------------

// Runnable tasks of one CPU other than its current task, in the order they
// run: round-robin, the head switches in next (pick_next_task of a single
// FIFO class).
class RunQueue {
 public:
  bool empty() const { return q_.empty(); }
  int size() const { return static_cast<int>(q_.size()); }
  void PushBack(TaskId t) { q_.push_back(t); }
  // The next task to switch in, removed; kIdleTask when empty.
  TaskId PickNext() {
    if (q_.empty()) return kIdleTask;
    const TaskId t = q_.front();
    q_.pop_front();
    return t;
  }
  TaskId Front() const { return q_.front(); }
  // Removes `t` if queued; true if it was.
  bool Remove(TaskId t) {
    auto it = std::find(q_.begin(), q_.end(), t);
    if (it == q_.end()) return false;
    q_.erase(it);
    return true;
  }
  // Keeps the tasks for which keep(t) holds, in order; the others are passed
  // to leave(t) in order.
  template <typename Keep, typename Leave>
  void Partition(Keep keep, Leave leave) {
    bool all = true;
    for (TaskId t : q_) all = all && keep(t);
    if (all) return;
    std::vector<TaskId> kept, left;
    for (TaskId t : q_) (keep(t) ? kept : left).push_back(t);
    q_.assign(kept.begin(), kept.end());
    for (TaskId t : left) leave(t);
  }
  // Removes and returns the first task for which take(t) holds (kIdleTask
  // if none): the newidle pull's detach.
  template <typename Take>
  TaskId TakeFirst(Take take) {
    for (auto it = q_.begin(); it != q_.end(); ++it) {
      if (!take(*it)) continue;
      const TaskId t = *it;
      q_.erase(it);
      return t;
    }
    return kIdleTask;
  }
  std::deque<TaskId>::const_iterator begin() const { return q_.begin(); }
  std::deque<TaskId>::const_iterator end() const { return q_.end(); }

 private:
  std::deque<TaskId> q_;
};

// Tasks on a CPU: its queue plus the current one (rq->nr_running).
inline int NrRunning(int queued, TaskId curr) { return queued + (curr != kIdleTask ? 1 : 0); }

// sched_tick(): the current task, running since `slice_start`, is preempted
// by the tick once it used its timeslice and another task is runnable.
inline bool PreemptAtTick(TaskId curr, Nanos slice_start, Nanos now, Nanos timeslice,
                          bool others_queued) {
  return curr != kIdleTask && now - slice_start >= timeslice && others_queued;
}

// --- placement -----------------------------------------------------------------

// Placement rules over an engine's online state: `online(cpu)` is the
// engine's own read (a plain field in the simulator, an atomic on real
// threads), inlined.  Cheap to build: make one per use.
template <typename Online>
class Placement {
 public:
  Placement(const IsolationConfig& isolation, int num_cpus, Online online)
      : isolation_(isolation), num_cpus_(num_cpus), online_(online) {}

  // May a task with `affinity` run on `cpu` now?
  bool Allowed(const CpuMask& affinity, int cpu) const {
    return cpu >= 0 && cpu < num_cpus_ && affinity.Test(cpu) && online_(cpu);
  }

  // The first online CPU (0 if none, which hotplug never allows).
  int FirstOnline() const {
    for (int c = 0; c < num_cpus_; ++c) {
      if (online_(c)) return c;
    }
    return 0;
  }

  // select_fallback_rq(): the first allowed online CPU, else the first
  // online CPU (the task keeps its affinity).
  int Fallback(const CpuMask& affinity) const {
    for (int c = affinity.First(); c < num_cpus_; c = affinity.Next(c)) {
      if (online_(c)) return c;
    }
    return FirstOnline();
  }

  // An online CPU of housekeeping type `type` for work or timers whose own
  // CPU is offline or out of range, else the first online CPU.
  int Housekeeping(HousekeepingType type) const {
    const CpuMask& hk = isolation_.housekeeping(type);
    for (int c = hk.First(); c < hk.nbits() && c < num_cpus_; c = hk.Next(c)) {
      if (online_(c)) return c;
    }
    return FirstOnline();
  }

  // Unbound work (HK_TYPE_WQ): the next online housekeeping CPU after
  // `cursor`, round-robin, else the first online CPU.
  int NextHousekeeping(int cursor) const {
    const CpuMask& hk = isolation_.housekeeping(HousekeepingType::kWq);
    for (int i = 0, c = cursor; i < num_cpus_; ++i) {
      c = c + 1 >= num_cpus_ ? 0 : c + 1;
      if (hk.Test(c) && online_(c)) return c;
    }
    return FirstOnline();
  }

 private:
  const IsolationConfig& isolation_;
  int num_cpus_;
  Online online_;
};

// The wake-up path's select step (select_task_rq()): the first hook that
// places the task decides (a CPU outside its allowed set is ignored), else
// its previous CPU if still allowed, else its fallback CPU.  The engine
// holds what guards `affinity` (the real driver's pi lock).
template <typename Online>
int SelectWakeCpu(const std::vector<Hooks*>& hooks, TaskId task, int prev, int waker_cpu, Nanos now,
                  const Placement<Online>& place, const CpuMask& affinity) {
  for (Hooks* h : hooks) {
    const int choice = h->SelectTaskCpu(task, prev, waker_cpu, now);
    if (choice >= 0) {
      if (place.Allowed(affinity, choice)) return choice;
      break;
    }
  }
  return place.Allowed(affinity, prev) ? prev : place.Fallback(affinity);
}

// Where and when a task last left a CPU (set at every switch-out).
struct LastRun {
  int cpu = -1;
  Nanos at = -1000 * kNsPerSec;  // "long ago": never cache-hot
  void Note(int on_cpu, Nanos when) {
    cpu = on_cpu;
    at = when;
  }
  // task_hot(): it left a CPU less than `migration_cost` ago.
  bool Hot(Nanos now, Nanos migration_cost) const { return now - at < migration_cost; }
};

// --- tick-stop policy ------------------------------------------------------------

inline Nanos TickPeriod(int hz) { return kNsPerSec / hz; }

// nohz_full CPUs of the isolation config tick as kNohzFull, the others per
// the driver's default.
inline TickMode InitialTickMode(const IsolationConfig& isolation, int cpu, TickMode default_mode) {
  const CpuMask& full = isolation.nohz_full();
  return full.nbits() > cpu && full.Test(cpu) ? TickMode::kNohzFull : default_mode;
}

// can_stop_idle_tick() / can_stop_full_tick(): an offline CPU never ticks;
// a nohz-idle CPU stops its tick with nothing to run, a nohz_full CPU with at
// most one task.
inline bool WantTickStopped(bool online, TickMode mode, int nr_running) {
  if (!online) return true;
  switch (mode) {
    case TickMode::kPeriodic:
      return false;
    case TickMode::kNohzIdle:
      return nr_running == 0;
    case TickMode::kNohzFull:
      return nr_running <= 1;
  }
  return false;
}

// tick_nohz_stop_tick() when the tick runs but should not, tick_nohz_restart()
// when it is stopped but should run.
template <typename Stop, typename Restart>
void UpdateTick(bool want_stopped, bool stopped, Stop stop, Restart restart) {
  if (want_stopped && !stopped) {
    stop();
  } else if (!want_stopped && stopped) {
    restart();
  }
}

// The next tick after `now`: the next multiple of the period (saturating at
// kNanosMax, "never").
inline Nanos NextTickAfter(Nanos now, Nanos period) {
  return SaturatingAdd(now - now % period, period);
}

// Due time of work queued `delay` from `now` (negative = now; kNanosMax and
// overflow = never).
inline Nanos DueAfter(Nanos now, Nanos delay) {
  return SaturatingAdd(now, std::max<Nanos>(0, delay));
}

// --- argument checks ---------------------------------------------------------------

// Create(): hz in [1, 100000], timeslice > 0, the isolation config sized
// like the topology.  `driver` names the driver in the messages.
absl::Status CheckDriverSetup(const char* driver, int hz, Nanos timeslice, int topology_cpus,
                              int isolation_cpus);
// Spawn(): the CPU in range and online, the affinity (empty = all CPUs)
// sized like the machine and including the CPU, a body.  Returns the
// effective affinity.
absl::StatusOr<CpuMask> CheckSpawn(TaskSpec& spec, int num_cpus, bool cpu_online);
// SetAffinity(): a known task, a mask sized like the machine with an online
// CPU.
absl::Status CheckAffinity(bool task_known, TaskId task, const CpuMask& mask, int num_cpus,
                           bool any_online);
// SetCpuOnline(): the CPU in range.
absl::Status CheckHotplugCpu(int cpu, int num_cpus);
// RunFor(): a non-negative duration whose window ends before kNanosMax.
absl::Status CheckRunFor(Nanos duration, Nanos now, const char* time_name);
// Wake(): a waker CPU outside [-1, num_cpus) is a remote wakeup (-1).
inline int NormalizeWakerCpu(int waker_cpu, int num_cpus) {
  return waker_cpu < -1 || waker_cpu >= num_cpus ? -1 : waker_cpu;
}

// --- statistics ------------------------------------------------------------------

// A kernel activity stalled the running user task for `stall`.
inline void AccountInterruption(CpuStats& stats, Nanos stall) {
  ++stats.interruptions;
  stats.max_stall_ns = std::max(stats.max_stall_ns, stall);
  stats.stalled_ns += stall;
}
// The counters as of `now`, with an idle period still open since `idle_since`.
inline CpuStats StatsAt(const CpuStats& stats, bool idle_open, Nanos idle_since, Nanos now) {
  CpuStats st = stats;
  if (idle_open) st.idle_ns += std::max<Nanos>(0, now - idle_since);
  return st;
}

}  // namespace isolation::sched

#endif  // ISOLATION_RUNTIME_SCHED_MODEL_H_
