// SPDX-License-Identifier: GPL-2.0-or-later
// The run-queue harness: Hooks adapter and message-passing workloads.

#include "isolation/idle_select/hooks.h"

#include <algorithm>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "isolation/core/mutex.h"

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

// ---------------------------------------------------------------------------
// Channel
// ---------------------------------------------------------------------------

bool Channel::TryWrite(Driver& d, TaskId self, int waker_cpu) {
  TaskId to_wake = kIdleTask;
  {
    MutexLock lock(mu_);
    if (count_ >= capacity_) {
      if (std::find(waiting_writers_.begin(), waiting_writers_.end(), self) ==
          waiting_writers_.end()) {
        waiting_writers_.push_back(self);
      }
      return false;
    }
    ++count_;
    // A writer that was recorded earlier and got through on a re-check is
    // no longer waiting (else a later read would wake it instead of a real
    // waiter).
    std::erase(waiting_writers_, self);
    if (!waiting_readers_.empty()) {
      to_wake = waiting_readers_.front();
      waiting_readers_.pop_front();
    }
  }
  if (to_wake != kIdleTask) d.Wake(to_wake, waker_cpu);
  return true;
}

bool Channel::TryRead(Driver& d, TaskId self, int waker_cpu) {
  TaskId to_wake = kIdleTask;
  {
    MutexLock lock(mu_);
    if (count_ == 0) {
      if (std::find(waiting_readers_.begin(), waiting_readers_.end(), self) ==
          waiting_readers_.end()) {
        waiting_readers_.push_back(self);
      }
      return false;
    }
    --count_;
    std::erase(waiting_readers_, self);
    if (!waiting_writers_.empty()) {
      to_wake = waiting_writers_.front();
      waiting_writers_.pop_front();
    }
  }
  if (to_wake != kIdleTask) d.Wake(to_wake, waker_cpu);
  return true;
}

// ---------------------------------------------------------------------------
// Workloads
// ---------------------------------------------------------------------------
namespace {

struct RunState {
  std::atomic<int> remaining{0};
  std::atomic<Nanos> end_ns{0};
  std::atomic<int64_t> operations{0};
  Nanos start_ns = 0;
  void TaskDone(Nanos now) {
    if (remaining.fetch_sub(1, std::memory_order_acq_rel) == 1)
      end_ns.store(now, std::memory_order_release);
  }
};

Nanos Jitter(TaskContext& ctx, Nanos base, int pct) {
  if (pct <= 0 || base <= 0) return base;
  const Nanos span =
      base / 100 * pct + base % 100 * pct / 100;  // base * pct / 100 without overflow
  const uint64_t draw = ctx.rng()() % (2 * static_cast<uint64_t>(span) + 1);
  return SaturatingAdd(
      base - span, static_cast<Nanos>(std::min<uint64_t>(draw, static_cast<uint64_t>(kNanosMax))));
}

// What every workload checks before it allocates or spawns: the task count
// (int64, so a product of large parameters cannot wrap), the jitter, the
// timeout, and a start mask that is empty (any CPU) or of the driver's size
// with at least one online CPU.
absl::Status CheckWorkload(const Driver& d, const char* name, int64_t tasks, int jitter_pct,
                           Nanos timeout, const CpuMask& cpus) {
  if (tasks < 1 || tasks > kMaxHarnessTasks) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ": ", tasks, " tasks, outside [1, ", kMaxHarnessTasks, "]"));
  }
  if (jitter_pct < 0 || jitter_pct > 100) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ": work_jitter_pct ", jitter_pct, " outside [0, 100]"));
  }
  if (timeout < 0)
    return absl::InvalidArgumentError(absl::StrCat(name, ": negative timeout ", timeout));
  if (cpus.nbits() != 0 && cpus.nbits() != d.num_cpus()) {
    return absl::InvalidArgumentError(absl::StrCat(name, ": cpu mask of ", cpus.nbits(),
                                                   " bits for a machine of ", d.num_cpus()));
  }
  if (!cpus.Empty() && !cpus.Intersects(d.topology().online())) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ": cpu mask '", cpus.ToString(), "' has no online cpu"));
  }
  return absl::OkStatus();
}

std::vector<int> StartCpus(const Driver& d, const CpuMask& cpus) {
  std::vector<int> out;
  const CpuMask& online = d.topology().online();
  for (int c = 0; c < d.num_cpus(); ++c) {
    if (online.Test(c) && (cpus.nbits() == 0 || cpus.Empty() || cpus.Test(c))) out.push_back(c);
  }
  return out;
}

absl::StatusOr<TaskId> SpawnOn(Driver& d, IdleSelectHooks* hooks, std::string name, int cpu,
                               const CpuMask& cpus, std::unique_ptr<TaskBody> body) {
  TaskSpec spec;
  spec.name = std::move(name);
  spec.cpu = cpu;
  if (cpus.nbits() == d.num_cpus() && !cpus.Empty()) spec.affinity = cpus;
  spec.body = std::move(body);
  auto id = d.Spawn(std::move(spec));
  if (!id.ok()) return id.status();
  if (hooks != nullptr) {
    absl::Status s = hooks->RegisterTask(*id, cpus.nbits() == d.num_cpus() ? cpus : CpuMask());
    if (!s.ok()) return s;
  }
  return *id;
}

absl::StatusOr<WorkloadResult> Drive(Driver& d, RunState& rs, Nanos timeout) {
  const Nanos step = d.poll_interval();
  while (rs.remaining.load(std::memory_order_acquire) > 0 && d.Now() - rs.start_ns < timeout) {
    absl::Status s = d.RunFor(step);
    if (!s.ok()) return s;
  }
  WorkloadResult r;
  r.completed = rs.remaining.load(std::memory_order_acquire) == 0;
  r.duration_ns =
      r.completed ? rs.end_ns.load(std::memory_order_acquire) - rs.start_ns : d.Now() - rs.start_ns;
  r.operations = rs.operations.load(std::memory_order_relaxed);
  return r;
}

}  // namespace

absl::StatusOr<WorkloadResult> RunHackbench(Driver& d, IdleSelectHooks* hooks,
                                            const HackbenchParams& p, Nanos timeout,
                                            const CpuMask& cpus) {
  if (p.groups < 1 || p.senders < 1 || p.messages < 1 || p.channel_capacity < 1) {
    return absl::InvalidArgumentError(absl::StrCat("hackbench: bad parameters groups=", p.groups,
                                                   " senders=", p.senders, " messages=", p.messages,
                                                   " capacity=", p.channel_capacity));
  }
  if (absl::Status st = CheckWorkload(d, "hackbench", int64_t{p.groups} * p.senders * 2,
                                      p.work_jitter_pct, timeout, cpus);
      !st.ok()) {
    return st;
  }
  struct Shared {
    RunState rs;
    std::vector<std::unique_ptr<Channel>> channels;  // one per receiver
  };
  auto sh = std::make_shared<Shared>();
  const int receivers = p.senders;
  for (int i = 0; i < p.groups * receivers; ++i)
    sh->channels.push_back(std::make_unique<Channel>(p.channel_capacity));
  sh->rs.remaining.store(p.groups * (p.senders + receivers), std::memory_order_relaxed);
  sh->rs.start_ns = d.Now();
  const std::vector<int> start = StartCpus(d, cpus);
  int rr = 0;
  for (int g = 0; g < p.groups; ++g) {
    for (int r = 0; r < receivers; ++r) {
      Channel* ch = sh->channels[static_cast<size_t>(g * receivers + r)].get();
      const int64_t total = int64_t{p.senders} * p.messages;
      auto received = std::make_shared<int64_t>(0);
      auto body = MakeTaskBody([sh, ch, total, received, work = p.work_per_message,
                                jit = p.work_jitter_pct](TaskContext& ctx) -> Step {
        if (*received == total) {
          sh->rs.TaskDone(ctx.now());
          return Step::Exit();
        }
        if (!ch->TryRead(ctx.driver(), ctx.task(), ctx.cpu())) return Step::Block();
        ++*received;
        sh->rs.operations.fetch_add(1, std::memory_order_relaxed);
        return Step::Run(Jitter(ctx, work, jit));
      });
      auto id = SpawnOn(d, hooks, absl::StrCat("hb-recv-", g, "-", r),
                        start[static_cast<size_t>(rr++ % static_cast<int>(start.size()))], cpus,
                        std::move(body));
      if (!id.ok()) return id.status();
    }
    for (int s = 0; s < p.senders; ++s) {
      struct SenderState {
        int next = 0;
        int round = 0;
      };
      auto st = std::make_shared<SenderState>();
      auto body =
          MakeTaskBody([sh, st, g, receivers, messages = p.messages, work = p.work_per_message,
                        jit = p.work_jitter_pct](TaskContext& ctx) -> Step {
            if (st->round == messages) {
              sh->rs.TaskDone(ctx.now());
              return Step::Exit();
            }
            Channel* ch = sh->channels[static_cast<size_t>(g * receivers + st->next)].get();
            if (!ch->TryWrite(ctx.driver(), ctx.task(), ctx.cpu())) return Step::Block();
            if (++st->next == receivers) {
              st->next = 0;
              ++st->round;
            }
            return Step::Run(Jitter(ctx, work, jit));
          });
      auto id = SpawnOn(d, hooks, absl::StrCat("hb-send-", g, "-", s),
                        start[static_cast<size_t>(rr++ % static_cast<int>(start.size()))], cpus,
                        std::move(body));
      if (!id.ok()) return id.status();
    }
  }
  return Drive(d, sh->rs, timeout);
}

absl::StatusOr<WorkloadResult> RunPipe(Driver& d, IdleSelectHooks* hooks, const PipeParams& p,
                                       Nanos timeout, const CpuMask& cpus) {
  if (p.round_trips < 1 || p.pairs < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("pipe: round_trips=", p.round_trips, " pairs=", p.pairs));
  }
  if (absl::Status st =
          CheckWorkload(d, "pipe", int64_t{p.pairs} * 2, p.work_jitter_pct, timeout, cpus);
      !st.ok()) {
    return st;
  }
  struct PairChannels {
    Channel ab{1}, ba{1};
  };
  struct Shared {
    RunState rs;
    std::vector<std::unique_ptr<PairChannels>> pairs;
  };
  auto sh = std::make_shared<Shared>();
  for (int i = 0; i < p.pairs; ++i) sh->pairs.push_back(std::make_unique<PairChannels>());
  sh->rs.remaining.store(2 * p.pairs, std::memory_order_relaxed);
  sh->rs.start_ns = d.Now();
  const std::vector<int> start = StartCpus(d, cpus);
  for (int pair = 0; pair < p.pairs; ++pair) {
    PairChannels* ch = sh->pairs[static_cast<size_t>(pair)].get();
    for (int side = 0; side < 2; ++side) {
      struct SideState {
        int done = 0;
        bool wrote = false;  // A: wrote this round; B: read this round
      };
      auto st = std::make_shared<SideState>();
      auto body = MakeTaskBody([sh, ch, st, side, n = p.round_trips, work0 = p.work_per_message,
                                jit = p.work_jitter_pct](TaskContext& ctx) -> Step {
        const Nanos work = Jitter(ctx, work0, jit);
        if (st->done == n) {
          sh->rs.TaskDone(ctx.now());
          return Step::Exit();
        }
        Channel& out = side == 0 ? ch->ab : ch->ba;
        Channel& in = side == 0 ? ch->ba : ch->ab;
        if (side == 0) {
          // A: write, then block on the reply.
          if (!st->wrote) {
            if (!out.TryWrite(ctx.driver(), ctx.task(), ctx.cpu())) return Step::Block();
            st->wrote = true;
            return Step::Run(work);
          }
          if (!in.TryRead(ctx.driver(), ctx.task(), ctx.cpu())) return Step::Block();
          st->wrote = false;
          ++st->done;
          sh->rs.operations.fetch_add(1, std::memory_order_relaxed);
          return Step::Run(work);
        }
        // B: read, then reply.
        if (!st->wrote) {
          if (!in.TryRead(ctx.driver(), ctx.task(), ctx.cpu())) return Step::Block();
          st->wrote = true;
          return Step::Run(work);
        }
        if (!out.TryWrite(ctx.driver(), ctx.task(), ctx.cpu())) return Step::Block();
        st->wrote = false;
        ++st->done;
        return Step::Run(work);
      });
      const int slot = (2 * pair + side) % static_cast<int>(start.size());
      auto id = SpawnOn(d, hooks, side == 0 ? "pipe-a" : "pipe-b", start[static_cast<size_t>(slot)],
                        cpus, std::move(body));
      if (!id.ok()) return id.status();
    }
  }
  return Drive(d, sh->rs, timeout);
}

absl::StatusOr<WorkloadResult> RunRequestResponse(Driver& d, IdleSelectHooks* hooks,
                                                  const RequestResponseParams& p, Nanos timeout,
                                                  const CpuMask& cpus) {
  if (p.pairs < 1 || p.transactions < 1 || p.work_per_message < 0 || p.net_delay_ns < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "request/response: bad parameters pairs=", p.pairs, " transactions=", p.transactions,
        " work=", p.work_per_message, " net_delay=", p.net_delay_ns));
  }
  if (absl::Status st = CheckWorkload(d, "request/response", int64_t{p.pairs} * 2,
                                      p.work_jitter_pct, timeout, cpus);
      !st.ok()) {
    return st;
  }
  struct Pair {
    Channel request{1}, response{1};
  };
  struct Shared {
    RunState rs;
    std::vector<std::unique_ptr<Pair>> pairs;
  };
  auto sh = std::make_shared<Shared>();
  for (int i = 0; i < p.pairs; ++i) sh->pairs.push_back(std::make_unique<Pair>());
  sh->rs.remaining.store(2 * p.pairs, std::memory_order_relaxed);
  sh->rs.start_ns = d.Now();
  const std::vector<int> start = StartCpus(d, cpus);
  int rr = 0;
  for (int i = 0; i < p.pairs; ++i) {
    for (int side = 0; side < 2; ++side) {
      // Client (side 0): work, wire, send request, wait for the response.
      // Server (side 1): wait for a request, work, wire, send the response.
      enum Phase { kWork, kWire, kSend, kWait };
      struct SideState {
        Phase phase;
        int done = 0;
      };
      auto st = std::make_shared<SideState>(SideState{side == 0 ? kWork : kWait});
      Pair* pair = sh->pairs[static_cast<size_t>(i)].get();
      auto body =
          MakeTaskBody([sh, st, pair, side, n = p.transactions, work = p.work_per_message,
                        wire = p.net_delay_ns, jit = p.work_jitter_pct](TaskContext& ctx) -> Step {
            Channel& out = side == 0 ? pair->request : pair->response;
            Channel& in = side == 0 ? pair->response : pair->request;
            for (;;) {
              switch (st->phase) {
                case kWork:
                  st->phase = kWire;
                  return Step::Run(Jitter(ctx, work, jit));
                case kWire:
                  st->phase = kSend;
                  if (wire > 0) return Step::Sleep(Jitter(ctx, wire, jit));
                  break;
                case kSend:
                  // Capacity 1 and strict alternation: the partner has consumed
                  // the previous message, so the write cannot fail.
                  if (!out.TryWrite(ctx.driver(), ctx.task(), ctx.cpu())) return Step::Block();
                  if (side == 1 && ++st->done == n) {
                    sh->rs.TaskDone(ctx.now());
                    return Step::Exit();
                  }
                  st->phase = kWait;
                  break;
                case kWait:
                  if (side == 0 && st->done == n) {
                    sh->rs.TaskDone(ctx.now());
                    return Step::Exit();
                  }
                  if (!in.TryRead(ctx.driver(), ctx.task(), ctx.cpu())) return Step::Block();
                  if (side == 0) {
                    ++st->done;
                    sh->rs.operations.fetch_add(1, std::memory_order_relaxed);
                    if (st->done == n) {
                      sh->rs.TaskDone(ctx.now());
                      return Step::Exit();
                    }
                  }
                  st->phase = kWork;
                  break;
              }
            }
          });
      auto id = SpawnOn(d, hooks, absl::StrCat(side == 0 ? "rr-client-" : "rr-server-", i),
                        start[static_cast<size_t>(rr++ % static_cast<int>(start.size()))], cpus,
                        std::move(body));
      if (!id.ok()) return id.status();
    }
  }
  return Drive(d, sh->rs, timeout);
}

absl::StatusOr<WorkloadResult> RunSchbench(Driver& d, IdleSelectHooks* hooks,
                                           const SchbenchParams& p, Nanos timeout,
                                           const CpuMask& cpus) {
  if (p.message_tasks < 1 || p.workers_per_message < 1 || p.rounds < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("schbench: bad parameters message_tasks=", p.message_tasks,
                     " workers=", p.workers_per_message, " rounds=", p.rounds));
  }
  if (absl::Status st = CheckWorkload(
          d, "schbench", int64_t{p.message_tasks} * (1 + int64_t{p.workers_per_message}), 0,
          timeout, cpus);
      !st.ok()) {
    return st;
  }
  struct Msg {
    Mutex mu;
    std::vector<int> list ABSL_GUARDED_BY(mu);  // worker indexes waiting to be woken
    bool waiting ABSL_GUARDED_BY(mu) = false;   // the message task is blocked
    std::atomic<TaskId> id{kIdleTask};
    int finished ABSL_GUARDED_BY(mu) = 0;
  };
  struct Worker {
    std::atomic<TaskId> id{kIdleTask};
    std::atomic<bool> released{false};
    std::atomic<Nanos> wake_ns{0};
    int rounds = 0;
    bool queued = false;
    std::vector<Nanos> lat;
  };
  struct Shared {
    RunState rs;
    std::vector<std::unique_ptr<Msg>> msgs;
    std::vector<std::unique_ptr<Worker>> workers;
  };
  auto sh = std::make_shared<Shared>();
  const int nw = p.message_tasks * p.workers_per_message;
  for (int m = 0; m < p.message_tasks; ++m) sh->msgs.push_back(std::make_unique<Msg>());
  for (int w = 0; w < nw; ++w) sh->workers.push_back(std::make_unique<Worker>());
  sh->rs.remaining.store(p.message_tasks + nw, std::memory_order_relaxed);
  sh->rs.start_ns = d.Now();
  const std::vector<int> start = StartCpus(d, cpus);
  int rr = 0;
  const int per = p.workers_per_message;
  for (int m = 0; m < p.message_tasks; ++m) {
    auto body = MakeTaskBody([sh, m, per](TaskContext& ctx) -> Step {
      Msg& msg = *sh->msgs[static_cast<size_t>(m)];
      std::vector<int> batch;
      {
        MutexLock lock(msg.mu);
        if (msg.list.empty()) {
          if (msg.finished == per) {
            sh->rs.TaskDone(ctx.now());
            return Step::Exit();
          }
          msg.waiting = true;
          return Step::Block();
        }
        batch.swap(msg.list);
      }
      for (int w : batch) {
        Worker& wk = *sh->workers[static_cast<size_t>(w)];
        wk.wake_ns.store(ctx.now(), std::memory_order_relaxed);
        wk.released.store(true, std::memory_order_release);
        ctx.driver().Wake(wk.id.load(std::memory_order_relaxed), ctx.cpu());
        sh->rs.operations.fetch_add(1, std::memory_order_relaxed);
      }
      return Step::Run(1 * kNsPerUs);
    });
    auto id = SpawnOn(d, hooks, absl::StrCat("sb-msg-", m),
                      start[static_cast<size_t>(rr++ % static_cast<int>(start.size()))], cpus,
                      std::move(body));
    if (!id.ok()) return id.status();
    sh->msgs[static_cast<size_t>(m)]->id.store(*id, std::memory_order_relaxed);
  }
  for (int w = 0; w < nw; ++w) {
    const int m = w / per;
    auto body =
        MakeTaskBody([sh, w, m, rounds = p.rounds, think = p.think_ns](TaskContext& ctx) -> Step {
          Worker& wk = *sh->workers[static_cast<size_t>(w)];
          Msg& msg = *sh->msgs[static_cast<size_t>(m)];
          if (wk.queued) {
            if (!wk.released.load(std::memory_order_acquire)) return Step::Block();  // spurious
            wk.queued = false;
            wk.released.store(false, std::memory_order_relaxed);
            wk.lat.push_back(ctx.now() - wk.wake_ns.load(std::memory_order_relaxed));
            ++wk.rounds;
            return Step::Run(think);
          }
          bool wake_msg = false;
          const bool last = wk.rounds == rounds;
          {
            MutexLock lock(msg.mu);
            if (last) {
              ++msg.finished;
            } else {
              msg.list.push_back(w);
            }
            wake_msg = msg.waiting;
            msg.waiting = false;
          }
          if (wake_msg) ctx.driver().Wake(msg.id.load(std::memory_order_relaxed), ctx.cpu());
          if (last) {
            sh->rs.TaskDone(ctx.now());
            return Step::Exit();
          }
          wk.queued = true;
          return Step::Block();
        });
    auto id = SpawnOn(d, hooks, absl::StrCat("sb-worker-", w),
                      start[static_cast<size_t>(rr++ % static_cast<int>(start.size()))], cpus,
                      std::move(body));
    if (!id.ok()) return id.status();
    sh->workers[static_cast<size_t>(w)]->id.store(*id, std::memory_order_relaxed);
  }
  auto r = Drive(d, sh->rs, timeout);
  if (!r.ok()) return r;
  for (const auto& w : sh->workers)
    r->latencies.insert(r->latencies.end(), w->lat.begin(), w->lat.end());
  return r;
}

std::string_view LoadWorkloadName(LoadWorkload w) {
  switch (w) {
    case LoadWorkload::kHackbench:
      return "hackbench";
    case LoadWorkload::kPipe:
      return "pipe";
    case LoadWorkload::kSchbench:
      return "schbench";
    case LoadWorkload::kRequestResponse:
      return "rr";
  }
  return "?";
}

absl::StatusOr<LoadPointResult> RunLoadPoint(Driver& d, IdleSelectHooks& hooks, LoadWorkload w,
                                             int load_pct, Nanos window) {
  if (load_pct < 1 || load_pct > 1000 || window <= 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "load point: load_pct=", load_pct, " window=", window, " (need 1..1000 % and window > 0)"));
  }
  const int n = std::max(1, d.topology().online().Weight() * load_pct / 100);
  LoadPointResult out;
  absl::StatusOr<WorkloadResult> r;
  const double window_ms = static_cast<double>(window) / static_cast<double>(kNsPerMs);
  switch (w) {
    case LoadWorkload::kHackbench: {
      HackbenchParams p;
      p.senders = std::max(1, n / 2);
      p.messages = 20;
      p.work_jitter_pct = 20;
      out.tasks = 2 * p.senders;
      r = RunHackbench(d, &hooks, p, 20 * window);
      if (r.ok()) out.value = static_cast<double>(r->duration_ns) / static_cast<double>(kNsPerMs);
      break;
    }
    case LoadWorkload::kPipe: {
      PipeParams p;
      p.pairs = n;
      p.round_trips = 1 << 30;
      p.work_jitter_pct = 20;
      out.tasks = 2 * n;
      r = RunPipe(d, &hooks, p, window);
      if (r.ok()) out.value = static_cast<double>(r->operations) / window_ms;
      break;
    }
    case LoadWorkload::kRequestResponse: {
      RequestResponseParams p;
      p.pairs = n;
      p.transactions = 1 << 30;
      out.tasks = 2 * n;
      r = RunRequestResponse(d, &hooks, p, window);
      if (r.ok()) out.value = static_cast<double>(r->operations) / window_ms;
      break;
    }
    case LoadWorkload::kSchbench: {
      SchbenchParams p;
      p.message_tasks = 2;
      p.workers_per_message = std::max(1, n / 2);
      p.rounds = 30;
      p.think_ns = 100 * kNsPerUs;
      out.tasks = p.message_tasks * (1 + p.workers_per_message);
      r = RunSchbench(d, &hooks, p, 20 * window);
      if (r.ok()) {
        std::vector<Nanos> lat = r->latencies;
        if (!lat.empty()) {
          const size_t k = std::min(lat.size() - 1, lat.size() * 99 / 100);
          std::nth_element(lat.begin(), lat.begin() + static_cast<std::ptrdiff_t>(k), lat.end());
          out.value = static_cast<double>(lat[k]) / static_cast<double>(kNsPerUs);
        }
      }
      break;
    }
  }
  if (!r.ok()) return r.status();
  out.completed = r->completed;
  out.counters = hooks.counters();
  return out;
}

}  // namespace isolation::idle_select
