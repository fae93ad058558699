// SPDX-License-Identifier: GPL-2.0-or-later
// The replay driver (replay_driver.h): the recording's events delivered to
// the hooks in order, the adapters' own work run in the recording's time.

#include "isolation/replay/replay_driver.h"

#include <algorithm>
#include <utility>

#include "absl/base/optimization.h"
#include "absl/strings/str_cat.h"
#include "replay/reader_internal.h"
#include "runtime/sched_model.h"

namespace isolation::replay {

// A CPU context in the recording's time.  Charge() has no effect on the
// schedule (it is the kernel's); it adds to the CPU's kernel_ns.
class ReplayDriver::Context final : public CpuContext {
 public:
  Context(ReplayDriver* d, int cpu) : d_(d), cpu_(cpu) {}
  int cpu() const override { return cpu_; }
  Nanos now() const override { return d_->now_; }
  Driver& driver() override { return *d_; }
  void Charge(Nanos ns) override {
    if (ns > 0) d_->cpus_[static_cast<size_t>(cpu_)].stats.kernel_ns += ns;
  }

 private:
  ReplayDriver* d_;
  int cpu_;
};

absl::StatusOr<std::unique_ptr<ReplayDriver>> ReplayDriver::Create(Topology topology,
                                                                   IsolationConfig isolation,
                                                                   ReplayDriverOptions options) {
  if (options.hz < 1 || options.hz > 10000) {
    return absl::InvalidArgumentError(Cat("replay: hz ", options.hz, " outside [1, 10000]"));
  }
  if (isolation.num_cpus() != topology.num_cpus()) {
    return absl::InvalidArgumentError(Cat("replay: the isolation configuration has ",
                                          isolation.num_cpus(), " CPUs, the topology ",
                                          topology.num_cpus()));
  }
  if (options.max_live_tasks < 1 || options.max_pending_work < 1) {
    return absl::InvalidArgumentError(
        "replay: max_live_tasks and max_pending_work must be positive");
  }
  if (options.tick_preempt_window < 0) {
    return absl::InvalidArgumentError(
        Cat("replay: tick_preempt_window ", options.tick_preempt_window, " ns is negative"));
  }
  return std::unique_ptr<ReplayDriver>(
      new ReplayDriver(std::move(topology), std::move(isolation), options));
}

ReplayDriver::ReplayDriver(Topology topology, IsolationConfig isolation,
                           ReplayDriverOptions options)
    : topology_(std::move(topology)),
      isolation_(std::move(isolation)),
      options_(options),
      tick_period_(sched::TickPeriod(options.hz)),
      cpus_(static_cast<size_t>(topology_.num_cpus())),
      rng_(sched::SplitMix64(options.seed)) {
  for (int c = 0; c < topology_.num_cpus(); ++c) {
    cpus_[static_cast<size_t>(c)].mode = sched::InitialTickMode(isolation_, c, TickMode::kNohzIdle);
  }
}

ReplayDriver::~ReplayDriver() = default;

absl::Status ReplayDriver::Bad(std::string_view what) const {
  return absl::InvalidArgumentError(Cat(info_.path, ": replay at ", now_, " ns (",
                                        EventKindName(current_.kind), " on CPU ", current_.cpu,
                                        "): ", what));
}

absl::Status ReplayDriver::OnInfo(const RecordingInfo& info) {
  if (info.num_cpus != topology_.num_cpus()) {
    return absl::InvalidArgumentError(Cat(info.path, ": the recording has ", info.num_cpus,
                                          " CPUs, the replayed machine ", topology_.num_cpus()));
  }
  info_ = info;
  info_seen_ = true;
  return absl::OkStatus();
}

void ReplayDriver::OnComm(int32_t pid, std::string_view comm) { comms_[pid] = std::string(comm); }

void ReplayDriver::AddHooks(Hooks* hooks) {
  if (hooks == nullptr) return;
  hooks_.push_back(hooks);
  selections_.push_back(-1);
  if (started_) hooks->OnStart(*this);
}

void ReplayDriver::Start() {
  started_ = true;
  for (Hooks* h : hooks_) h->OnStart(*this);
}

const TaskInfo* ReplayDriver::Task(TaskId task) const {
  return task >= 0 && static_cast<size_t>(task) < tasks_.size() ? &tasks_[static_cast<size_t>(task)]
                                                                : nullptr;
}

TaskId ReplayDriver::TaskOfPid(int32_t pid) const {
  auto it = live_.find(pid);
  return it == live_.end() ? kIdleTask : it->second;
}

std::string_view ReplayDriver::Comm(TaskId task) const {
  const TaskInfo* t = Task(task);
  if (t == nullptr) return "<idle>";
  auto it = comms_.find(t->pid);
  return it == comms_.end() ? std::string_view("?") : std::string_view(it->second);
}

TaskId ReplayDriver::NewTask(int32_t pid, int mm, bool mm_known, bool predates) {
  if (auto it = live_.find(pid); it != live_.end()) {
    // A pid reused without the old incarnation's exit in the recording.
    if (TaskInfo* old = MutableTask(it->second)) old->state = TaskInfo::State::kDead;
    live_.erase(it);
    --live_count_;
  }
  if (live_count_ >= options_.max_live_tasks && deferred_error_.ok()) {
    deferred_error_ =
        absl::ResourceExhaustedError(Cat(info_.path, ": more than ", options_.max_live_tasks,
                                         " live tasks (ReplayDriverOptions::max_live_tasks)"));
  }
  const auto id = static_cast<TaskId>(tasks_.size());
  TaskInfo t;
  t.pid = pid;
  t.mm = mm;
  t.mm_known = mm_known;
  t.predates = predates;
  tasks_.push_back(t);
  live_.emplace(pid, id);
  ++live_count_;
  return id;
}

TaskId ReplayDriver::EnsureTask(int32_t pid, bool from_fork) {
  if (pid == 0) return kIdleTask;
  if (auto it = live_.find(pid); it != live_.end()) return it->second;
  // First seen without a fork: it predates the recording, its mm unknown.
  const TaskId id = NewTask(pid, next_mm_++, /*mm_known=*/false, /*predates=*/!from_fork);
  for (Hooks* h : hooks_) h->OnTaskFork(kIdleTask, id, tasks_[static_cast<size_t>(id)].mm, now_);
  return id;
}

void ReplayDriver::EnterIdle(Cpu& c, int cpu) {
  if (c.idle) return;
  c.idle = true;
  c.idle_since = now_;
  for (Hooks* h : hooks_) h->OnIdleEnter(cpu, now_);
}

void ReplayDriver::ExitIdle(Cpu& c, int cpu) {
  if (!c.idle) return;
  c.idle = false;
  c.stats.idle_ns += now_ - c.idle_since;
  for (Hooks* h : hooks_) h->OnIdleExit(cpu, now_);
  if (c.tick_stopped && c.mode != TickMode::kNohzFull) {
    // tick_nohz_idle_exit() restarts a tick stopped in idle.
    c.tick_stopped = false;
    Context ctx(this, cpu);
    for (Hooks* h : hooks_) h->OnTickRestart(ctx);
  }
}

void ReplayDriver::SwitchTo(Cpu& c, int cpu, TaskId prev, TaskId next, int32_t prev_state) {
  if (prev == kIdleTask) ExitIdle(c, cpu);
  for (Hooks* h : hooks_) h->OnContextSwitch(cpu, prev, next, now_);
  ++c.stats.context_switches;
  if (ABSL_PREDICT_FALSE(tracer_ != nullptr) && tracer_->Wants(cpu)) {
    const TaskInfo* n = Task(next);
    tracer_->CpuRuns(cpu, now_, n == nullptr ? -1 : n->pid,
                     n == nullptr ? std::string_view("idle") : Comm(next));
  }
  if (TaskInfo* p = MutableTask(prev)) {
    if (p->exited || (prev_state & (kPrevStateDead | kPrevStateZombie)) != 0) {
      p->state = TaskInfo::State::kDead;
      if (auto it = live_.find(p->pid); it != live_.end() && it->second == prev) {
        live_.erase(it);
        --live_count_;
      }
    } else if (prev_state == kPrevStateRunnable) {
      p->state = TaskInfo::State::kRunnable;
      ++c.runnable;
    } else {
      p->state = TaskInfo::State::kBlocked;
    }
  }
  if (TaskInfo* n = MutableTask(next)) {
    if (n->state == TaskInfo::State::kRunnable && n->cpu == cpu && c.runnable > 0) --c.runnable;
    n->state = TaskInfo::State::kRunning;
    n->cpu = cpu;
  }
  c.curr = next;
  if (next == kIdleTask) EnterIdle(c, cpu);
}

void ReplayDriver::Bootstrap(Cpu& c, int cpu, int32_t pid) {
  c.known = true;
  ++counters_.bootstraps;
  if (pid == 0) {
    c.curr = kIdleTask;
    EnterIdle(c, cpu);
    return;
  }
  c.idle = true;  // so that the switch below delivers OnIdleExit first
  c.idle_since = now_;
  SwitchTo(c, cpu, kIdleTask, EnsureTask(pid, false), kPrevStateRunnable);
}

void ReplayDriver::ResolveTickReturn(Cpu& c, int cpu, const Event& e) {
  if (c.tick_return == kIdleTask) return;
  switch (e.kind) {
    case EventKind::kSwitch:
    case EventKind::kTick:
    case EventKind::kRseqUpdate:
    case EventKind::kExit:
    case EventKind::kExec:
      break;
    default:
      return;  // still in the tick's interrupt or softirq, as far as the recording shows
  }
  const TaskId t = c.tick_return;
  c.tick_return = kIdleTask;
  const TaskInfo* info = Task(t);
  if (e.kind == EventKind::kSwitch && info != nullptr && e.other == info->pid &&
      e.value == kPrevStateRunnable && e.time - c.tick_time <= options_.tick_preempt_window) {
    ++counters_.tick_returns_dropped;  // preempted at the tick
    return;
  }
  if (c.curr != t) return;
  Context ctx(this, cpu);
  for (Hooks* h : hooks_) h->OnReturnToUser(ctx, t);
}

void ReplayDriver::RunDue(Nanos until) {
  int64_t budget = 16 * options_.max_pending_work;
  while (!due_.empty() && due_.top().due <= until) {
    const Work w = due_.top();
    due_.pop();
    auto it = work_fns_.find(w.seq);
    if (it == work_fns_.end()) continue;  // a cancelled timer
    WorkFn fn = std::move(it->second);
    work_fns_.erase(it);
    if (w.timer != kNoTimer) timers_.erase(w.timer);
    if (--budget < 0) {
      if (deferred_error_.ok()) {
        deferred_error_ =
            absl::ResourceExhaustedError(Cat(info_.path, ": adapter work re-queues itself at ",
                                             w.due, " ns without the time advancing"));
      }
      return;
    }
    now_ = std::max(now_, w.due);
    Context ctx(this, w.cpu);
    fn(ctx);
    if (ABSL_PREDICT_FALSE(tracer_ != nullptr) && tracer_->Wants(w.cpu)) {
      const TaskInfo* t = Task(cpus_[static_cast<size_t>(w.cpu)].curr);
      tracer_->Activity(w.cpu, now_, now_, w.timer != kNoTimer ? kTraceTimer : kTraceKworker,
                        w.timer != kNoTimer ? "model timer" : "model work",
                        t == nullptr ? -1 : t->pid);
    }
    Cpu& c = cpus_[static_cast<size_t>(w.cpu)];
    if (w.timer != kNoTimer) {
      ++c.stats.timer_callbacks;
    } else {
      ++c.stats.work_items;
    }
    ++counters_.work_run;
  }
}

absl::Status ReplayDriver::OnEvent(const Event& e) {
  if (!info_seen_)
    return absl::FailedPreconditionError("replay: an event before the recording's info");
  if (e.cpu < 0 || e.cpu >= num_cpus()) {
    return absl::InvalidArgumentError(
        Cat(info_.path, ": event on CPU ", e.cpu, ", outside the ", num_cpus(), " CPUs"));
  }
  if (e.time < now_ && !due_.empty()) {
    // Time never goes back for the adapters: an event at an earlier time
    // than work already run plays at the work's time.
  }
  RunDue(e.time);
  if (!deferred_error_.ok()) return deferred_error_;
  now_ = std::max(now_, e.time);
  current_ = e;
  if (!started_) Start();
  ++counters_.events;
  if (absl::Status s = Play(e); !s.ok()) return s;
  for (ReplayObserver* o : observers_) o->OnRecorded(e, *this);
  return deferred_error_;
}

absl::Status ReplayDriver::Play(const Event& e) {
  Cpu& c = cpus_[static_cast<size_t>(e.cpu)];
  const int cpu = e.cpu;
  // The task current on the CPU as the event shows it (a switch shows prev).
  const int32_t shown = e.kind == EventKind::kSwitch ? e.other : e.pid;
  if (!c.known) Bootstrap(c, cpu, shown);
  ResolveTickReturn(c, cpu, e);
  const TaskInfo* curr = Task(c.curr);
  const int32_t tracked = curr == nullptr ? 0 : curr->pid;
  if (shown != tracked && e.kind != EventKind::kExec) {
    // A lost event, or a task the replay missed: take the CPU's state from
    // the event.
    ++counters_.resyncs;
    if (c.curr == kIdleTask) {
      ++c.unrecorded_idle_exits;
      ++counters_.unrecorded_idle_exits;
    }
    SwitchTo(c, cpu, c.curr, EnsureTask(shown, false), kPrevStateRunnable);
  }
  Context ctx(this, cpu);
  switch (e.kind) {
    case EventKind::kSwitch: {
      const TaskId next = EnsureTask(e.task, false);
      if (TaskInfo* n = MutableTask(next)) n->prio = e.prio;
      SwitchTo(c, cpu, c.curr, next, e.value);
      break;
    }
    case EventKind::kWaking: {
      const TaskId t = EnsureTask(e.task, false);
      const TaskInfo* ti = Task(t);
      std::fill(selections_.begin(), selections_.end(), -1);
      // ttwu_runnable(): a task still on its run queue is not placed again.
      if (ti != nullptr &&
          (ti->state == TaskInfo::State::kBlocked || ti->state == TaskInfo::State::kUnknown)) {
        ++counters_.selections;
        for (size_t i = 0; i < hooks_.size(); ++i) {
          selections_[i] = hooks_[i]->SelectTaskCpu(t, e.cpu2, cpu, now_);
        }
      }
      break;
    }
    case EventKind::kMigrate: {
      const TaskId t = EnsureTask(e.task, false);
      for (Hooks* h : hooks_) h->OnMigrate(t, e.cpu2, e.value, now_);
      if (TaskInfo* ti = MutableTask(t)) {
        if (ti->state == TaskInfo::State::kRunnable) {
          Cpu& from = cpus_[static_cast<size_t>(e.cpu2)];
          if (from.runnable > 0) --from.runnable;
          ++cpus_[static_cast<size_t>(e.value)].runnable;
        }
        ti->cpu = e.value;
      }
      break;
    }
    case EventKind::kWakeup:
    case EventKind::kWakeupNew: {
      const TaskId t = EnsureTask(e.task, e.kind == EventKind::kWakeupNew);
      TaskInfo* ti = MutableTask(t);
      if (ti == nullptr) break;
      ti->prio = e.prio;
      const bool sleeping =
          ti->state == TaskInfo::State::kBlocked || ti->state == TaskInfo::State::kUnknown;
      if (e.kind == EventKind::kWakeup && sleeping) {
        for (Hooks* h : hooks_) h->OnWakeEnqueue(t, e.cpu2, now_);
      }
      if (sleeping) {
        ti->state = TaskInfo::State::kRunnable;
        ti->cpu = e.cpu2;
        ++cpus_[static_cast<size_t>(e.cpu2)].runnable;
      }
      break;
    }
    case EventKind::kNewTask: {
      const TaskId parent = c.curr;  // copy_process() runs in the parent
      const TaskInfo* p = Task(parent);
      const auto flags = static_cast<uint64_t>(e.wide);
      const bool share = (flags & kCloneVm) != 0 && p != nullptr;
      const int mm = share ? p->mm : next_mm_++;
      const bool known = share ? p->mm_known : true;
      const TaskId child = NewTask(e.task, mm, known, /*predates=*/false);
      tasks_[static_cast<size_t>(child)].state =
          TaskInfo::State::kBlocked;  // until wake_up_new_task()
      tasks_[static_cast<size_t>(child)].cpu = cpu;
      clone_flags_[e.task] = flags;
      for (Hooks* h : hooks_) h->OnTaskFork(parent, child, mm, now_);
      break;
    }
    case EventKind::kFork: {
      // task_newtask came first (copy_process) when it was recorded.
      if (clone_flags_.erase(e.task) > 0 && live_.contains(e.task)) break;
      const TaskId parent = EnsureTask(e.other, false);
      const TaskId child = NewTask(e.task, next_mm_++, /*mm_known=*/false, /*predates=*/false);
      tasks_[static_cast<size_t>(child)].state = TaskInfo::State::kBlocked;
      tasks_[static_cast<size_t>(child)].cpu = cpu;
      for (Hooks* h : hooks_)
        h->OnTaskFork(parent, child, tasks_[static_cast<size_t>(child)].mm, now_);
      break;
    }
    case EventKind::kExec: {
      // begin_new_exec(): the task leaves its mm for a new one (and a
      // non-leader thread takes the leader's pid: old_pid -> pid).
      TaskId old = c.curr;
      if (const TaskInfo* o = Task(old); o == nullptr || o->pid != e.other) {
        ++counters_.resyncs;
        old = EnsureTask(e.other, false);
        SwitchTo(c, cpu, c.curr, old, kPrevStateRunnable);
      }
      for (Hooks* h : hooks_) h->OnTaskExit(cpu, old, now_);
      if (TaskInfo* o = MutableTask(old)) o->exited = true;
      const int mm = next_mm_++;
      const TaskId fresh = NewTask(e.task, mm, /*mm_known=*/true, /*predates=*/false);
      tasks_[static_cast<size_t>(fresh)].cpu = cpu;
      tasks_[static_cast<size_t>(fresh)].prio = Task(old) != nullptr ? Task(old)->prio : -1;
      // No parent: exec's mm is a fresh one (mm_alloc), not a copy of the
      // old task's (dup_mm), so it inherits none of its state.
      for (Hooks* h : hooks_) h->OnTaskFork(kIdleTask, fresh, mm, now_);
      // The old incarnation's pid entry (if it was old_pid != pid) goes too.
      if (TaskInfo* o = MutableTask(old); o != nullptr && o->pid != e.task) {
        if (auto it = live_.find(o->pid); it != live_.end() && it->second == old) {
          live_.erase(it);
          --live_count_;
        }
      }
      SwitchTo(c, cpu, old, fresh, kPrevStateDead);
      break;
    }
    case EventKind::kExit: {
      const TaskId t = EnsureTask(e.task, false);
      for (Hooks* h : hooks_) h->OnTaskExit(cpu, t, now_);
      if (TaskInfo* ti = MutableTask(t)) ti->exited = true;
      break;
    }
    case EventKind::kRseqUpdate:
      if (c.curr != kIdleTask) {
        for (Hooks* h : hooks_) h->OnReturnToUser(ctx, c.curr);
      }
      break;
    case EventKind::kTick:
      ++counters_.ticks;
      ++c.stats.ticks;
      if (c.tick_stopped) {
        c.tick_stopped = false;
        for (Hooks* h : hooks_) h->OnTickRestart(ctx);
      }
      if (ABSL_PREDICT_FALSE(tracer_ != nullptr) && tracer_->Wants(cpu)) {
        const TaskInfo* t = Task(c.curr);
        tracer_->Activity(cpu, now_, now_, kTraceTick, "tick", t == nullptr ? -1 : t->pid);
      }
      for (Hooks* h : hooks_) h->OnTick(ctx, c.curr);
      if (c.curr != kIdleTask) {
        c.tick_return = c.curr;
        c.tick_time = now_;
      }
      break;
    case EventKind::kTickStop:
      if (e.value != 0 && !c.tick_stopped) {
        c.tick_stopped = true;
        ++c.stats.tick_stops;
        for (Hooks* h : hooks_) h->OnTickStop(ctx);
      }
      break;
    default:
      break;  // mechanism-specific: the observers read them
  }
  return absl::OkStatus();
}

absl::Status ReplayDriver::Finish() {
  for (int cpu = 0; cpu < num_cpus(); ++cpu) {
    Cpu& c = cpus_[static_cast<size_t>(cpu)];
    if (c.tick_return != kIdleTask && c.curr == c.tick_return) {
      Context ctx(this, cpu);
      const TaskId t = c.tick_return;
      c.tick_return = kIdleTask;
      for (Hooks* h : hooks_) h->OnReturnToUser(ctx, t);
    }
  }
  RunDue(now_);
  for (ReplayObserver* o : observers_) o->OnFinish(*this);
  return deferred_error_;
}

absl::StatusOr<TaskId> ReplayDriver::Spawn(TaskSpec spec) {
  return absl::FailedPreconditionError(Cat("replay: cannot spawn '", spec.name,
                                           "': a replay's tasks are the recording's (open loop)"));
}

void ReplayDriver::Wake(TaskId, int) {}

absl::Status ReplayDriver::SetAffinity(TaskId task, const CpuMask&) {
  return absl::FailedPreconditionError(
      Cat("replay: cannot change task ", task, "'s affinity: the schedule is the recording's"));
}

int ReplayDriver::TaskCpu(TaskId task) const {
  const TaskInfo* t = Task(task);
  return t == nullptr ? -1 : t->cpu;
}

int ReplayDriver::TaskGroup(TaskId task) const {
  const TaskInfo* t = Task(task);
  return t == nullptr ? -1 : t->mm;
}

TaskId ReplayDriver::CurrentTask(int cpu) const {
  return cpu >= 0 && cpu < num_cpus() ? cpus_[static_cast<size_t>(cpu)].curr : kIdleTask;
}

int ReplayDriver::NumRunnable(int cpu) const {
  if (cpu < 0 || cpu >= num_cpus()) return 0;
  const Cpu& c = cpus_[static_cast<size_t>(cpu)];
  return sched::NrRunning(c.runnable, c.curr);
}

bool ReplayDriver::IsIdle(int cpu) const {
  return cpu >= 0 && cpu < num_cpus() && cpus_[static_cast<size_t>(cpu)].idle;
}

void ReplayDriver::QueueWorkOn(int cpu, Nanos delay, WorkFn fn) {
  if (delay == kNanosMax || !fn) return;  // never
  if (static_cast<int64_t>(work_fns_.size()) >= options_.max_pending_work) {
    if (deferred_error_.ok()) {
      deferred_error_ =
          absl::ResourceExhaustedError(Cat(info_.path, ": more than ", options_.max_pending_work,
                                           " pending work items (max_pending_work)"));
    }
    return;
  }
  if (cpu < 0 || cpu >= num_cpus()) {
    const sched::Placement place(isolation_, num_cpus(), [](int) { return true; });
    cpu = place.Housekeeping(HousekeepingType::kWq);
  }
  const uint64_t seq = ++seq_;
  due_.push(Work{sched::DueAfter(now_, delay), seq, cpu, kNoTimer});
  work_fns_.emplace(seq, std::move(fn));
}

int ReplayDriver::QueueHousekeepingWork(Nanos delay, WorkFn fn) {
  const sched::Placement place(isolation_, num_cpus(), [](int) { return true; });
  hk_cursor_ = place.NextHousekeeping(hk_cursor_);
  QueueWorkOn(hk_cursor_, delay, std::move(fn));
  return hk_cursor_;
}

TimerId ReplayDriver::ArmTimer(int cpu, Nanos expires, WorkFn fn) {
  if (expires == kNanosMax || !fn) return kNoTimer;
  if (static_cast<int64_t>(work_fns_.size()) >= options_.max_pending_work) {
    if (deferred_error_.ok()) {
      deferred_error_ =
          absl::ResourceExhaustedError(Cat(info_.path, ": more than ", options_.max_pending_work,
                                           " pending timers and work (max_pending_work)"));
    }
    return kNoTimer;
  }
  if (cpu < 0 || cpu >= num_cpus()) {
    const sched::Placement place(isolation_, num_cpus(), [](int) { return true; });
    cpu = place.Housekeeping(HousekeepingType::kTimer);
  }
  const uint64_t seq = ++seq_;
  const TimerId id = next_timer_++;
  due_.push(Work{std::max(expires, now_), seq, cpu, id});
  work_fns_.emplace(seq, std::move(fn));
  timers_.emplace(id, seq);
  return id;
}

bool ReplayDriver::CancelTimer(TimerId id) {
  auto it = timers_.find(id);
  if (it == timers_.end()) return false;
  work_fns_.erase(it->second);
  timers_.erase(it);
  return true;
}

void ReplayDriver::SetTickMode(int cpu, TickMode mode) {
  if (cpu >= 0 && cpu < num_cpus()) cpus_[static_cast<size_t>(cpu)].mode = mode;
}

TickMode ReplayDriver::GetTickMode(int cpu) const {
  return cpu >= 0 && cpu < num_cpus() ? cpus_[static_cast<size_t>(cpu)].mode : TickMode::kPeriodic;
}

bool ReplayDriver::TickStopped(int cpu) const {
  return cpu < 0 || cpu >= num_cpus() || cpus_[static_cast<size_t>(cpu)].tick_stopped;
}

absl::Status ReplayDriver::SetCpuOnline(int cpu, bool) {
  return absl::FailedPreconditionError(
      Cat("replay: cannot change CPU ", cpu, "'s online state: the machine is the recording's"));
}

absl::Status ReplayDriver::RunFor(Nanos) {
  return absl::FailedPreconditionError(
      "replay: time is the recording's; feed the driver a recording (ReadTrace with it as the "
      "sink)");
}

CpuStats ReplayDriver::Stats(int cpu) const {
  if (cpu < 0 || cpu >= num_cpus()) return {};
  const Cpu& c = cpus_[static_cast<size_t>(cpu)];
  return sched::StatsAt(c.stats, c.idle, c.idle_since, now_);
}

Nanos ReplayDriver::EndKernelSpan(KernelSpan, CpuContext* ctx, Nanos modelled_ns) {
  if (ctx != nullptr) ctx->Charge(modelled_ns);
  return modelled_ns;
}

void ReplayDriver::SpendKernelTime(CpuContext& ctx, Nanos ns) { ctx.Charge(ns); }

}  // namespace isolation::replay
