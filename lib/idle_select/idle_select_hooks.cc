// SPDX-License-Identifier: GPL-2.0-or-later
// The run-queue harness: the Hooks adapter (the workloads are workload_*.cc).

#include "isolation/idle_select/hooks.h"

#include <algorithm>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"

namespace isolation::idle_select {
namespace {
enum CounterIndex {
  kSelections,
  kIdleFound,
  kFallbacks,
  kProbes,
  kStaleHits,
  kClaimFailures,
  kPlacedOnBusy,
  kMigrations,
  kViolations,
  kQueuedAhead,
  kMaxQueuedAhead,
  kTickStopsHidden,
  kMigrateEvents,
  kStackings,
  kLostWakeups,
  kNumCounters
};
}  // namespace

namespace {
int CheckedMaxTasks(int max_tasks) {
  ISOLATION_CONTRACT(max_tasks >= 1 && max_tasks <= kMaxHarnessTasks,
                     "idle_select harness: max_tasks %d outside [1, %d]", max_tasks,
                     kMaxHarnessTasks);
  return std::clamp(max_tasks, 1, kMaxHarnessTasks);
}
}  // namespace

IdleSelectHooks::IdleSelectHooks(IdleState& state, HarnessOptions options)
    : IdleSelectHooks(state, state.selector(), options) {}

IdleSelectHooks::IdleSelectHooks(IdleState& state, IdleSelector& selector, HarnessOptions options)
    : state_(state),
      selector_(selector),
      options_(options),
      tasks_(static_cast<size_t>(CheckedMaxTasks(options.max_tasks))),
      cpu_slots_(static_cast<size_t>(state.num_cpus())),
      counters_(kNumCounters) {
  idle_recheck_ = selector.traits().idle_entry_recheck;
  if (options.max_tasks != static_cast<int>(tasks_.size())) {
    setup_error_ = absl::StrCat("idle_select harness: max_tasks ", options.max_tasks,
                                " outside [1, ", kMaxHarnessTasks, "], using ", tasks_.size());
  }
  for (int l = 0; l < state.num_llcs(); ++l) {
    llc_last_update_.push_back(std::make_unique<std::atomic<Nanos>>(0));
  }
}

absl::Status IdleSelectHooks::status() const {
  return setup_error_.empty() ? absl::OkStatus() : absl::InvalidArgumentError(setup_error_);
}

absl::Status IdleSelectHooks::RegisterTask(TaskId task, const CpuMask& affinity, bool sched_idle) {
  if (task < 0 || task >= static_cast<TaskId>(tasks_.size())) {
    return absl::InvalidArgumentError(
        absl::StrCat("idle_select harness: task id ", task, " outside [0, ", tasks_.size(), ")"));
  }
  TaskSlot& s = tasks_[static_cast<size_t>(task)];
  s.has_affinity = affinity.nbits() == state_.num_cpus() && !affinity.Empty();
  s.affinity = affinity;
  s.sched_idle = sched_idle;
  return absl::OkStatus();
}

HarnessCounters IdleSelectHooks::counters() const {
  auto v = [&](int i) {
    return counters_[static_cast<size_t>(i)].v.load(std::memory_order_relaxed);
  };
  HarnessCounters c;
  c.selections = v(kSelections);
  c.idle_found = v(kIdleFound);
  c.fallbacks = v(kFallbacks);
  c.probes = v(kProbes);
  c.stale_hits = v(kStaleHits);
  c.claim_failures = v(kClaimFailures);
  c.placed_on_busy = v(kPlacedOnBusy);
  c.migrations = v(kMigrations);
  c.invariant_violations = v(kViolations);
  c.queued_ahead = v(kQueuedAhead);
  c.max_queued_ahead = v(kMaxQueuedAhead);
  c.tick_stops_hidden = v(kTickStopsHidden);
  c.migrate_events = v(kMigrateEvents);
  c.stackings = v(kStackings);
  c.lost_wakeups = v(kLostWakeups);
  return c;
}

void IdleSelectHooks::OnStart(Driver& driver) {
  if (driver.num_cpus() != state_.num_cpus()) {
    active_ = false;
    setup_error_ = absl::StrCat("idle_select harness: the driver has ", driver.num_cpus(),
                                " cpus, the state ", state_.num_cpus(), "; events are ignored");
    return;
  }
  driver_ = &driver;
  tracer_ = driver.tracer();
  for (int cpu = 0; cpu < state_.num_cpus(); ++cpu) {
    cpu_slots_[static_cast<size_t>(cpu)].last_idle_ns.store(driver.Stats(cpu).idle_ns,
                                                            std::memory_order_relaxed);
  }
}

// The periodic LLC balance: sum_util from the idle time the driver measured
// over the last period (a windowed stand-in for PELT), then
// update_idle_cpu_scan().  One updater per LLC per period (CAS on the stamp).
void IdleSelectHooks::MaybeUpdateBudget(int cpu, Nanos now) {
  if (options_.sis_util_period <= 0 || driver_ == nullptr) return;
  const int l = state_.llc_of(cpu);
  if (l < 0) return;
  std::atomic<Nanos>& stamp = *llc_last_update_[static_cast<size_t>(l)];
  Nanos last = stamp.load(std::memory_order_relaxed);
  if (now - last < options_.sis_util_period) return;
  // Relaxed CAS: it only elects one updater; the data it reads is the
  // driver's (synchronised inside Stats()).
  if (!stamp.compare_exchange_strong(last, now, std::memory_order_relaxed)) return;
  const Nanos window = now - last;
  int64_t sum_util = 0;
  for (int c : state_.llc_span(l)) {
    CpuSlot& slot = cpu_slots_[static_cast<size_t>(c)];
    const Nanos idle = driver_->Stats(c).idle_ns;
    const Nanos d_idle = std::clamp<Nanos>(
        idle - slot.last_idle_ns.exchange(idle, std::memory_order_relaxed), 0, window);
    sum_util += (window - d_idle) * kSchedCapacityScale / std::max<Nanos>(window, 1);
  }
  (void)state_.UpdateIdleCpuScan(l, sum_util);  // l is a valid LLC id
}

void IdleSelectHooks::OnTick(CpuContext& ctx, TaskId curr) {
  if (!active_) return;
  const int cpu = ctx.cpu();
  if (curr != kIdleTask && driver_ != nullptr) {
    state_.SetNrRunning(cpu, std::max(1, driver_->NumRunnable(cpu)));
  }
  state_.Tick(cpu);
  MaybeUpdateBudget(cpu, ctx.now());
}

void IdleSelectHooks::OnIdleEnter(int cpu, Nanos now) {
  if (!active_) return;
  cpu_slots_[static_cast<size_t>(cpu)].idle_start_ns = now;
  // The idle task runs: the queue is empty (pending wakeups stay pending
  // until they land: ttwu_pending is cleared on switch-in).
  state_.SetNrRunning(cpu, 0);
  state_.SetNrSchedIdle(cpu, 0);
  state_.IdleEnter(cpu);
}

void IdleSelectHooks::OnIdleExit(int cpu, Nanos now) {
  if (!active_) return;
  // The idle-length guess of the tick-stop gating rule: update_avg()
  // (avg += (sample - avg) / 8), as rq->avg_idle is kept.
  CpuSlot& slot = cpu_slots_[static_cast<size_t>(cpu)];
  const Nanos sample = std::max<Nanos>(0, now - slot.idle_start_ns);
  slot.predicted_idle_ns += (sample - slot.predicted_idle_ns) / 8;
  state_.SetNrRunning(cpu, 1);
  state_.SetWakePending(cpu, false);
  state_.IdleExit(cpu);
}

void IdleSelectHooks::OnTickStop(CpuContext& ctx) {
  if (!active_) return;
  // tick_nohz_idle_stop_tick() keeps the tick when the governor predicts a
  // short idle (the V1-tickstop gating rule, spec S13): such a stop is not
  // forwarded, so the CPU keeps tick_stopped == 0 and V1-tickstop never
  // sets its bit for this idle period.
  const Nanos min_idle = options_.tick_stop_min_predicted_idle;
  if (min_idle > 0 && cpu_slots_[static_cast<size_t>(ctx.cpu())].predicted_idle_ns <= min_idle) {
    Add(kTickStopsHidden, 1);
    return;
  }
  state_.TickStop(ctx.cpu());
}
void IdleSelectHooks::OnTickRestart(CpuContext& ctx) {
  if (active_) state_.TickRestart(ctx.cpu());
}

void IdleSelectHooks::OnContextSwitch(int cpu, TaskId prev, TaskId next, Nanos now) {
  (void)prev;
  (void)now;
  // A wakeup in flight has landed by the time this CPU switches.
  if (active_ && next != kIdleTask) state_.SetWakePending(cpu, false);
}

void IdleSelectHooks::OnAffinityChange(TaskId task, const CpuMask& mask, Nanos now) {
  (void)now;
  (void)RegisterTask(task, mask,
                     task >= 0 && task < static_cast<TaskId>(tasks_.size()) &&
                         tasks_[static_cast<size_t>(task)].sched_idle);
}

void IdleSelectHooks::OnMigrate(TaskId task, int from, int to, Nanos now) {
  (void)task;
  (void)from;
  (void)to;
  (void)now;
  Add(kMigrateEvents, 1);
}

int IdleSelectHooks::SelectTaskCpu(TaskId task, int prev_cpu, int waker_cpu, Nanos now) {
  (void)now;
  if (!active_ || task < 0 || task >= static_cast<TaskId>(tasks_.size())) return -1;
  TaskSlot& slot = tasks_[static_cast<size_t>(task)];
  const CpuMask* aff = slot.has_affinity ? &slot.affinity : nullptr;
  auto allowed = [&](int c) { return c >= 0 && (aff == nullptr || aff->Test(c)); };
  WakeTask wt;
  wt.prev_cpu = prev_cpu;
  wt.recent_used_cpu = slot.recent_used_cpu;
  wt.affinity = aff;
  wt.sched_idle = slot.sched_idle;
  WakeContext ctx;
  ctx.waker_cpu = waker_cpu;
  ctx.target = prev_cpu;
  if (options_.wake_affine && allowed(waker_cpu)) {
    if (options_.wake_affine_kernel) {
      ctx.target = WakeAffineTarget(prev_cpu, waker_cpu);
    } else if (!state_.AvailableIdleCpu(prev_cpu)) {
      // wake_affine() simplified: pull next to the waker unless prev is idle.
      ctx.target = waker_cpu;
    }
  }
  const Selection sel = selector_.Select(wt, ctx);
  slot.recent_used_cpu = wt.recent_used_cpu;
  int cpu = sel.cpu;
  if (cpu < 0) cpu = allowed(prev_cpu) ? prev_cpu : -1;  // V4 "none": keep prev
  Add(kSelections, 1);
  Add(sel.idle_found() ? kIdleFound : kFallbacks, 1);
  Add(kProbes, sel.probes);
  Add(kStaleHits, sel.stale_hits);
  Add(kClaimFailures, sel.claim_failures);
  if (cpu >= 0) {
    if (cpu != prev_cpu) Add(kMigrations, 1);
    if (driver_ != nullptr) {
      const int64_t ahead = driver_->NumRunnable(cpu);
      Add(kQueuedAhead, ahead);
      std::atomic<int64_t>& max = counters_[static_cast<size_t>(kMaxQueuedAhead)].v;
      int64_t seen = max.load(std::memory_order_relaxed);
      while (ahead > seen && !max.compare_exchange_weak(seen, ahead, std::memory_order_relaxed)) {
      }
    }
    if (!state_.IdleCpu(cpu) && !sel.claimed) Add(kPlacedOnBusy, 1);
    if (options_.check_invariants && !allowed(cpu)) Add(kViolations, 1);  // I3
    // Another wakeup chose this CPU and has not enqueued: two wakers place
    // on one idle CPU (only inside SimOptions::wake_select_cost's window).
    std::atomic<int>& inflight = cpu_slots_[static_cast<size_t>(cpu)].inflight;
    if (inflight.fetch_add(1, std::memory_order_relaxed) > 0 && driver_ != nullptr &&
        driver_->IsIdle(cpu)) {
      Add(kStackings, 1);
    }
    slot.inflight_cpu = cpu;
    slot.inflight_waker = waker_cpu;
  }
  if (tracer_ != nullptr) {
    // On the waker's track (the previous CPU's for a timer wakeup).
    tracer_->Instant(waker_cpu >= 0 ? waker_cpu : prev_cpu, now, "idle.select",
                     {{"task", task},
                      {"prev", prev_cpu},
                      {"target", cpu},
                      {"probes", sel.probes},
                      {"found", sel.idle_found() ? 1 : 0}});
  }
  return cpu;
}

void IdleSelectHooks::OnWakeEnqueue(TaskId task, int cpu, Nanos now) {
  (void)cpu;  // the hooks' own choice is the one in flight (the driver may fall back)
  (void)now;
  if (!active_ || task < 0 || task >= static_cast<TaskId>(tasks_.size())) return;
  TaskSlot& slot = tasks_[static_cast<size_t>(task)];
  const int chosen = slot.inflight_cpu;
  if (chosen < 0) return;
  slot.inflight_cpu = -1;
  if (chosen != slot.inflight_waker) state_.SetWakePending(chosen, true);  // ttwu_queue_wakelist
  cpu_slots_[static_cast<size_t>(chosen)].inflight.fetch_sub(1, std::memory_order_relaxed);
}

bool IdleSelectHooks::IdleRecheck(int cpu, Nanos now) {
  (void)now;
  if (!active_) return true;
  if (!idle_recheck_ && driver_ != nullptr && driver_->NumRunnable(cpu) > 0) Add(kLostWakeups, 1);
  return idle_recheck_;
}

// wake_affine() (kernel/sched/fair.c): wake_affine_idle(), then
// wake_affine_weight() with the run-queue length standing in for cpu_load()
// and one task's load for task_h_load(); anything but "this CPU" means prev.
// Only called when the waker CPU is allowed; without a shared affine domain
// (different LLC here: the model has no wider SD_WAKE_AFFINE level) prev.
int IdleSelectHooks::WakeAffineTarget(int prev_cpu, int waker_cpu) const {
  const int this_cpu = waker_cpu;
  if (this_cpu == prev_cpu || driver_ == nullptr) return prev_cpu;
  if (!state_.topology().SharesCache(this_cpu, prev_cpu)) return prev_cpu;
  // wake_affine_idle() (no WF_SYNC: the driver's Wake carries none).
  if (state_.AvailableIdleCpu(this_cpu))
    return state_.AvailableIdleCpu(prev_cpu) ? prev_cpu : this_cpu;
  if (state_.AvailableIdleCpu(prev_cpu)) return prev_cpu;
  // wake_affine_weight(): the wakee's load moves from prev (where the
  // kernel still counts its blocked load; our run-queue length already
  // excludes it) to this CPU; WA_BIAS favours prev by half imbalance_pct.
  const int64_t this_eff = (int64_t{driver_->NumRunnable(this_cpu)} + 1) * 100;
  const int64_t prev_eff =
      int64_t{driver_->NumRunnable(prev_cpu)} * (100 + (kLlcImbalancePct - 100) / 2);
  return this_eff < prev_eff ? this_cpu : prev_cpu;
}

}  // namespace isolation::idle_select
