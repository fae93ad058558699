// SPDX-License-Identifier: GPL-2.0-or-later
// A recording to per-task scripts, and the scripts played on a driver
// (recorded.h).  Counterpart: perf's builtin-sched.c replay (its run, sleep
// and wake-up atoms), written from its documented behaviour.

#include "isolation/workload/recorded.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "isolation/core/mutex.h"
#include "core/status_macros.h"
#include "isolation/core/cpumask.h"

namespace isolation::workload {
namespace {

using replay::Event;
using replay::EventKind;

// One task's conversion state while the stream is read.
struct Tracking {
  int index = 0;
  bool on_cpu = false;
  bool blocked = false;
  bool done = false;
  Nanos since = 0;              // switch-in time while on_cpu
  int cpu = -1;                 // the CPU it is on while on_cpu
  Nanos ready_at = 0;           // when it last became runnable (woken, preempted)
  Nanos acc = 0;                // run time not yet written as an action
  Nanos blocked_at = 0;         // while blocked
  int32_t blocks = 0;           // kBlock actions written
  std::map<int, Nanos> run_on;  // run time per CPU
  // A wake-up given while it was still on a CPU (sched_waking can be traced
  // after the sleeper's dequeue but before its sched_switch): the waker's
  // placeholder action, made a kWake if the task then blocks.
  int early_waker = -1;     // task index, -1: none
  size_t early_action = 0;  // index in the waker's script
};

class Converter {
 public:
  Converter(const RecordedWorkloadOptions& options, int64_t& actions)
      : options_(options), actions_(actions) {}

  absl::Status Switch(const Event& e) {
    CpuTrack& cpu = cpus_[e.cpu];
    // The CPU's current task by the stream, if the switch names another
    // `prev`: its switch-out is missing; it stopped here, still runnable.
    if (cpu.current > 0 && cpu.current != e.other) {
      if (auto it = tracking_.find(cpu.current);
          it != tracking_.end() && it->second.on_cpu && it->second.cpu == e.cpu) {
        Ran(it->second, e.cpu, e.time - it->second.since);
        it->second.on_cpu = false;
        it->second.ready_at = e.time;
        ++inferred_switch_outs_;
      }
    }
    if (e.other > 0) {
      ISOLATION_ASSIGN_OR_RETURN(Tracking * prev, Task(e.other, e.cpu, e.time));
      RecordedTask& t = out.tasks[static_cast<size_t>(prev->index)];
      if (!prev->on_cpu && !prev->done && prev->index != cpu_new_) {
        // Its switch-in is missing (a CPU leaving idle unrecorded): it ran
        // here since the CPU's last switch, or since it became runnable.
        const Nanos from = std::max(cpu.last_switch, prev->ready_at);
        if (prev->blocked) ISOLATION_RETURN_IF_ERROR(EndBlockTimed(*prev, from));
        Ran(*prev, e.cpu, e.time - from);
        ++inferred_switch_ins_;
      } else if (prev->on_cpu) {
        Ran(*prev, prev->cpu, e.time - prev->since);
      }
      prev->on_cpu = false;
      prev->ready_at = e.time;
      if (e.value != replay::kPrevStateRunnable && !prev->done) {
        ISOLATION_RETURN_IF_ERROR(Flush(*prev));
        if (e.value & (replay::kPrevStateDead | replay::kPrevStateZombie)) {
          ISOLATION_RETURN_IF_ERROR(Push(t, {RecordedAction::Kind::kExit}));
          prev->done = true;
        } else if (prev->early_waker >= 0) {
          // Woken before it was switched out: the block ends with that wake.
          RecordedAction& wake =
              out.tasks[static_cast<size_t>(prev->early_waker)].script[prev->early_action];
          wake.target = prev->index;
          wake.block = prev->blocks;
          ISOLATION_RETURN_IF_ERROR(Push(t, {RecordedAction::Kind::kBlock, -1, prev->blocks}));
          ++prev->blocks;
          ++t.recorded_wakeups;
          ++out.blocks_woken_by_tasks;
          prev->ready_at = e.time;
        } else {
          prev->blocked = true;
          prev->blocked_at = e.time;
        }
      }
      prev->early_waker = -1;  // the wake-up of a task that did not block was a no-op
    }
    cpu_new_ = -1;
    if (e.task > 0) {
      ISOLATION_ASSIGN_OR_RETURN(Tracking * next, Task(e.task, e.cpu, e.time));
      if (next->on_cpu && next->cpu != e.cpu) {
        // Still on another CPU by the stream: it left that one unrecorded.
        Ran(*next, next->cpu, e.time - next->since);
        ++inferred_switch_outs_;
      }
      if (next->blocked) {
        // Woken without a recorded wake-up (the event was lost or filtered):
        // it slept until it ran.
        ISOLATION_RETURN_IF_ERROR(EndBlockTimed(*next, e.time));
      }
      next->on_cpu = true;
      next->since = e.time;
      next->cpu = e.cpu;
    }
    cpu.current = e.task;
    cpu.last_switch = e.time;
    return absl::OkStatus();
  }

  // Switches the stream lacked, inferred from the ones it has.
  int64_t inferred_switch_ins() const { return inferred_switch_ins_; }
  int64_t inferred_switch_outs() const { return inferred_switch_outs_; }

  absl::Status Wake(const Event& e) {
    auto it = tracking_.find(e.task);
    if (it == tracking_.end() || it->second.done) return absl::OkStatus();
    Tracking& woken = it->second;
    auto waker = tracking_.find(e.pid);
    if (!woken.blocked) {
      // Still on a CPU: keep the place in the waker's run, in case the
      // sleeper's blocking switch-out is traced only after this wake-up.
      if (woken.on_cpu && woken.early_waker < 0 && e.pid > 0 && e.pid != e.task &&
          waker != tracking_.end() && waker->second.on_cpu) {
        Tracking& w = waker->second;
        Ran(w, w.cpu, e.time - w.since);
        w.since = e.time;
        ISOLATION_RETURN_IF_ERROR(Flush(w));
        RecordedTask& wt = out.tasks[static_cast<size_t>(w.index)];
        ISOLATION_RETURN_IF_ERROR(Push(wt, {RecordedAction::Kind::kWake, -1, -1}));
        woken.early_waker = w.index;
        woken.early_action = wt.script.size() - 1;
      }
      return absl::OkStatus();
    }
    if (e.pid > 0 && e.pid != e.task && waker != tracking_.end() && waker->second.on_cpu) {
      Tracking& w = waker->second;
      Ran(w, w.cpu, e.time - w.since);
      w.since = e.time;
      ISOLATION_RETURN_IF_ERROR(Flush(w));
      ISOLATION_RETURN_IF_ERROR(Push(out.tasks[static_cast<size_t>(w.index)],
                                     {RecordedAction::Kind::kWake, woken.index, woken.blocks}));
      ISOLATION_RETURN_IF_ERROR(Push(out.tasks[static_cast<size_t>(woken.index)],
                                     {RecordedAction::Kind::kBlock, -1, woken.blocks}));
      ++woken.blocks;
      woken.blocked = false;
      woken.ready_at = e.time;
      ++out.tasks[static_cast<size_t>(woken.index)].recorded_wakeups;
      ++out.blocks_woken_by_tasks;
      return absl::OkStatus();
    }
    return EndBlockTimed(woken, e.time);
  }

  void NewTask(const Event& e) {
    // The parent is the task current on the CPU (clone's caller).
    if ((static_cast<uint64_t>(e.wide) & replay::kCloneVm) != 0 && e.pid > 0) {
      shared_parent_[e.task] = e.pid;
    }
  }

  absl::Status Finish(Nanos end) {
    for (auto& [pid, t] : tracking_) {
      if (t.done) continue;
      if (t.on_cpu) Ran(t, t.cpu, end - t.since);
      ISOLATION_RETURN_IF_ERROR(Flush(t));
      RecordedTask& task = out.tasks[static_cast<size_t>(t.index)];
      if (t.blocked) {
        // Blocked at the end: no wake-up follows in the recording.
        ISOLATION_RETURN_IF_ERROR(Push(task, {RecordedAction::Kind::kBlock, -1, t.blocks++}));
      } else {
        ISOLATION_RETURN_IF_ERROR(Push(task, {RecordedAction::Kind::kExit}));
      }
    }
    for (auto& [pid, t] : tracking_) SetAffinity(t);
    return absl::OkStatus();
  }

  int64_t reused_pids() const { return reused_pids_; }

  RecordedWorkload out;

 private:
  absl::StatusOr<Tracking*> Task(int32_t pid, int cpu, Nanos time) {
    auto it = tracking_.find(pid);
    if (it != tracking_.end() && !it->second.done) return &it->second;
    if (it != tracking_.end()) {
      // The pid was reused after its task exited: a new task from here on.
      SetAffinity(it->second);
      tracking_.erase(it);
      ++reused_pids_;
    }
    if (static_cast<int>(out.tasks.size()) >= options_.max_tasks) {
      return absl::ResourceExhaustedError(
          absl::StrCat("the recording has more than ", options_.max_tasks, " tasks (max_tasks)"));
    }
    Tracking& t = tracking_[pid];
    t.index = static_cast<int>(out.tasks.size());
    cpu_new_ = t.index;  // first seen now: what it did before is not in the recording
    RecordedTask& task = out.tasks.emplace_back();
    task.pid = pid;
    task.first_cpu = cpu;
    task.start = time - start_;
    task.group = t.index;
    if (auto parent = shared_parent_.find(pid); parent != shared_parent_.end()) {
      if (auto p = tracking_.find(parent->second); p != tracking_.end()) {
        task.group = out.tasks[static_cast<size_t>(p->second.index)].group;
      }
    }
    return &t;
  }

  // Affinity, as far as a trace tells it: the CPUs where the task did at
  // least 5 % of its run (a thread that started on one CPU and was then
  // pinned to another keeps only the second); its first CPU, the one it ran
  // most on.
  void SetAffinity(const Tracking& t) {
    RecordedTask& task = out.tasks[static_cast<size_t>(t.index)];
    task.cpus.clear();
    Nanos total = 0;
    Nanos most = -1;
    for (const auto& [cpu, ns] : t.run_on) total += ns;
    for (const auto& [cpu, ns] : t.run_on) {
      if (ns * 20 >= total) task.cpus.push_back(cpu);
      if (ns > most) {
        most = ns;
        task.first_cpu = cpu;
      }
    }
    if (options_.affinity == RecordedAffinity::kAll) task.cpus.clear();
  }

  void Ran(Tracking& t, int cpu, Nanos ns) {
    t.acc += ns;
    t.run_on[cpu] += ns;
  }

  absl::Status Flush(Tracking& t) {
    if (t.acc <= 0) return absl::OkStatus();
    RecordedTask& task = out.tasks[static_cast<size_t>(t.index)];
    task.recorded_run_ns += t.acc;
    const Nanos ns =
        static_cast<Nanos>(std::llround(static_cast<double>(t.acc) * options_.cpu_scale));
    t.acc = 0;
    return Push(task, {RecordedAction::Kind::kRun, -1, -1, std::max<Nanos>(1, ns)});
  }

  absl::Status EndBlockTimed(Tracking& t, Nanos time) {
    t.blocked = false;
    t.ready_at = time;
    RecordedTask& task = out.tasks[static_cast<size_t>(t.index)];
    ++task.recorded_wakeups;
    ++out.blocks_timed;
    return Push(task, {RecordedAction::Kind::kSleep, -1, -1, time - t.blocked_at, time - start_});
  }

  absl::Status Push(RecordedTask& task, RecordedAction a) {
    if (++actions_ > options_.max_actions) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "the recording converts to more than ", options_.max_actions, " actions (max_actions)"));
    }
    task.script.push_back(a);
    return absl::OkStatus();
  }

 public:
  Nanos start_ = 0;

 private:
  const RecordedWorkloadOptions& options_;
  int64_t& actions_;
  struct CpuTrack {
    int32_t current = 0;  // the task the stream last switched in (0: idle)
    Nanos last_switch = 0;
  };
  absl::flat_hash_map<int32_t, Tracking> tracking_;
  absl::flat_hash_map<int32_t, CpuTrack> cpus_;
  int cpu_new_ = -1;  // the task Task() created during this event, if any
  int64_t inferred_switch_ins_ = 0;
  int64_t inferred_switch_outs_ = 0;
  int64_t reused_pids_ = 0;
  absl::flat_hash_map<int32_t, int32_t> shared_parent_;  // child pid -> parent (CLONE_VM)
};

}  // namespace

absl::StatusOr<RecordedWorkload> WorkloadFromRecording(const replay::Recording& recording,
                                                       const RecordedWorkloadOptions& options) {
  if (!(options.cpu_scale > 0.0 && options.cpu_scale <= 100.0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("cpu_scale ", options.cpu_scale, " is outside (0, 100]"));
  }
  if (options.max_tasks < 1 || options.max_tasks > (1 << 20)) {
    return absl::InvalidArgumentError(
        absl::StrCat("max_tasks ", options.max_tasks, " is outside [1, 1048576]"));
  }
  if (options.max_actions < 1 || options.max_actions > (int64_t{1} << 28)) {
    return absl::InvalidArgumentError(
        absl::StrCat("max_actions ", options.max_actions, " is outside [1, 2^28]"));
  }
  if (recording.Count(EventKind::kSwitch) == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(recording.info.path, ": no sched:sched_switch events to build tasks from"));
  }
  int64_t actions = 0;
  Converter c(options, actions);
  const bool use_waking = recording.Count(EventKind::kWaking) > 0;
  if (!use_waking) {
    c.out.notes.push_back(
        "no sched:sched_waking in the recording: the waker is the task current where "
        "sched_wakeup was recorded, which for a remote wake-up may be the target CPU's");
  }
  Nanos end = 0;
  if (!recording.events.empty()) c.start_ = recording.events.front().time;
  for (const Event& e : recording.events) {
    end = std::max(end, e.time);
    absl::Status s;
    switch (e.kind) {
      case EventKind::kSwitch:
        s = c.Switch(e);
        break;
      case EventKind::kWaking:
        if (use_waking) s = c.Wake(e);
        break;
      case EventKind::kWakeup:
        if (!use_waking) s = c.Wake(e);
        break;
      case EventKind::kNewTask:
        c.NewTask(e);
        break;
      default:
        break;
    }
    if (!s.ok()) return s;
  }
  if (absl::Status s = c.Finish(end); !s.ok()) return s;
  if (c.reused_pids() > 0) {
    c.out.notes.push_back(
        absl::StrCat(c.reused_pids(), " pid(s) reused after an exit: each use is its own task"));
  }
  if (c.inferred_switch_ins() + c.inferred_switch_outs() > 0) {
    c.out.notes.push_back(absl::StrCat(
        "the recording lacks ", c.inferred_switch_ins(), " switch-ins and ",
        c.inferred_switch_outs(),
        " switch-outs (a CPU leaving idle unrecorded, a lost event): inferred from the next "
        "switch on that CPU"));
  }
  RecordedWorkload w = std::move(c.out);
  w.duration = end - c.start_;
  w.num_cpus = recording.info.num_cpus;
  for (RecordedTask& t : w.tasks) {
    auto comm = recording.comms.find(t.pid);
    t.comm = comm != recording.comms.end() ? comm->second : absl::StrCat("pid ", t.pid);
  }
  return w;
}

// --- the scripts on a driver -------------------------------------------------

struct RecordedRun::State {
  struct Task {
    size_t pc = 0;
    bool started = false;
    enum class Pending { kNone, kRun, kBlock, kSleep } pending = Pending::kNone;
    Nanos pending_ns = 0;     // kRun: the slice asked
    Nanos run_left = 0;       // of the current run action, after the slice
    std::vector<bool> woken;  // per kBlock action: its wake-up came
    int32_t next_block = 0;   // the kBlock action reached next
    RecordedTaskStats stats;
  };
  std::shared_ptr<const RecordedWorkload> workload;  // shared with the caller
  const RecordedWorkload& w;
  explicit State(std::shared_ptr<const RecordedWorkload> wl)
      : workload(std::move(wl)), w(*workload) {}
  Driver* driver = nullptr;
  Nanos run_start = 0;  // driver time of the recording's start
  absl::AnyInvocable<void(CpuContext&, TaskId)> on_kernel_entry;
  std::vector<std::string> notes;
  mutable isolation::Mutex
      mu;  // std::mutex underneath: TSan sees it (absl::Mutex from Debian is not instrumented)
  std::vector<Task> tasks ABSL_GUARDED_BY(mu);

  // The task's next step.  `wakes`: tasks to wake after the lock is released;
  // `entries`: system calls to make.
  static bool Woken(const Task& t) {
    return static_cast<size_t>(t.next_block) < t.woken.size() &&
           t.woken[static_cast<size_t>(t.next_block)];
  }

  // Runs are played in slices of at most this, so a task stopped in the
  // middle of a long run (the end of the window) has its run time counted
  // to within a slice.
  static constexpr Nanos kRunSlice = 100 * kNsPerUs;

  Step Advance(int index, Nanos now, std::vector<TaskId>& wakes, int& entries)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    Task& t = tasks[static_cast<size_t>(index)];
    const RecordedTask& rt = w.tasks[static_cast<size_t>(index)];
    switch (t.pending) {
      case Task::Pending::kRun:
        t.stats.run_ns += t.pending_ns;
        break;
      case Task::Pending::kSleep:
        ++t.stats.wakeups;
        break;
      case Task::Pending::kBlock:
        if (!Woken(t)) return Step::Block();  // not its wake-up yet
        ++t.next_block;
        ++t.stats.wakeups;
        break;
      case Task::Pending::kNone:
        break;
    }
    t.pending = Task::Pending::kNone;
    if (t.run_left > 0) {
      t.pending = Task::Pending::kRun;
      t.pending_ns = std::min(t.run_left, kRunSlice);
      t.run_left -= t.pending_ns;
      return Step::Run(t.pending_ns);
    }
    if (!t.started) {
      t.started = true;
      if (rt.start > 0 && run_start + rt.start > now)
        return Step::Sleep(run_start + rt.start - now);
    }
    while (t.pc < rt.script.size()) {
      const RecordedAction& a = rt.script[t.pc++];
      switch (a.kind) {
        case RecordedAction::Kind::kRun:
          t.pending = Task::Pending::kRun;
          t.pending_ns = std::min(a.ns, kRunSlice);
          t.run_left = a.ns - t.pending_ns;
          return Step::Run(t.pending_ns);
        case RecordedAction::Kind::kWake: {
          if (a.target < 0) break;  // a wake-up of a task that then did not block
          ++entries;
          Task& target = tasks[static_cast<size_t>(a.target)];
          target.woken[static_cast<size_t>(a.block)] = true;
          wakes.push_back(target.stats.id);
          break;
        }
        case RecordedAction::Kind::kBlock:
          ++entries;
          if (Woken(t)) {  // its wake-up came first
            ++t.next_block;
            ++t.stats.wakeups;
            break;
          }
          t.pending = Task::Pending::kBlock;
          return Step::Block();
        case RecordedAction::Kind::kSleep: {
          ++entries;
          const Nanos wake = run_start + a.at;
          if (wake <= now) {  // the run is past the recorded wake-up
            ++t.stats.late_sleeps;
            ++t.stats.wakeups;
            break;
          }
          t.pending = Task::Pending::kSleep;
          return Step::Sleep(wake - now);
        }
        case RecordedAction::Kind::kExit:
          t.pc = rt.script.size();
          break;
      }
    }
    t.stats.ended = true;
    return Step::Exit();
  }
};

namespace {

class RecordedBody final : public TaskBody {
 public:
  RecordedBody(std::shared_ptr<RecordedRun::State> s, int index)
      : keep_(std::move(s)), s_(*keep_), index_(index) {}
  Step Next(TaskContext& ctx) override {
    std::vector<TaskId> wakes;
    int entries = 0;
    Step step;
    {
      MutexLock lock(s_.mu);
      s_.tasks[static_cast<size_t>(index_)].stats.id = ctx.task();
      step = s_.Advance(index_, ctx.now(), wakes, entries);
    }
    for (int i = 0; i < entries; ++i) {
      ctx.Syscall([&](CpuContext& k) {
        if (s_.on_kernel_entry) s_.on_kernel_entry(k, ctx.task());
      });
    }
    for (TaskId w : wakes) ctx.driver().Wake(w, ctx.cpu());
    return step;
  }

 private:
  std::shared_ptr<RecordedRun::State> keep_;  // the bodies own the state too
  RecordedRun::State& s_;
  const int index_;
};

}  // namespace

RecordedRun::RecordedRun(std::shared_ptr<State> state) : state_(std::move(state)) {}
RecordedRun::~RecordedRun() = default;

absl::StatusOr<std::unique_ptr<RecordedRun>> RecordedRun::Start(
    const RecordedWorkload& workload, Driver& driver,
    absl::AnyInvocable<void(CpuContext&, TaskId)> on_kernel_entry) {
  return Start(std::make_shared<const RecordedWorkload>(workload), driver,
               std::move(on_kernel_entry));
}

absl::StatusOr<std::unique_ptr<RecordedRun>> RecordedRun::Start(
    std::shared_ptr<const RecordedWorkload> workload, Driver& driver,
    absl::AnyInvocable<void(CpuContext&, TaskId)> on_kernel_entry) {
  if (workload == nullptr) return absl::InvalidArgumentError("RecordedRun::Start: no workload");
  auto s = std::make_shared<State>(std::move(workload));
  s->driver = &driver;
  s->on_kernel_entry = std::move(on_kernel_entry);
  s->run_start = driver.Now();
  const int n = driver.num_cpus();
  std::vector<TaskSpec> specs;
  int unplaced = 0;
  {
    MutexLock lock(s->mu);
    s->tasks.resize(s->w.tasks.size());
    int next_cpu = 0;
    for (size_t i = 0; i < s->w.tasks.size(); ++i) {
      const RecordedTask& rt = s->w.tasks[i];
      s->tasks[i].stats.pid = rt.pid;
      size_t blocks = 0;
      for (const RecordedAction& a : rt.script) blocks += a.kind == RecordedAction::Kind::kBlock;
      s->tasks[i].woken.assign(blocks, false);
      s->tasks[i].stats.comm = rt.comm;
      TaskSpec spec;
      spec.name = rt.comm;
      spec.group = rt.group;
      CpuMask mask(n);
      for (int c : rt.cpus) {
        if (c < n) mask.Set(c);
      }
      if (mask.Empty() || rt.cpus.empty()) {
        if (!rt.cpus.empty()) ++unplaced;
        for (int c = 0; c < n; ++c) mask.Set(c);
      }
      spec.affinity = mask;
      spec.cpu = rt.first_cpu < n && mask.Test(rt.first_cpu) ? rt.first_cpu : -1;
      for (int k = 0; spec.cpu < 0 && k < n; ++k) {
        const int c = (next_cpu + k) % n;
        if (mask.Test(c)) {
          spec.cpu = c;
          next_cpu = (c + 1) % n;
        }
      }
      spec.body = std::make_unique<RecordedBody>(s, static_cast<int>(i));
      specs.push_back(std::move(spec));
    }
  }
  if (unplaced > 0) {
    s->notes.push_back(absl::StrCat(unplaced,
                                    " task(s) ran only on CPUs this machine lacks: they may run "
                                    "anywhere"));
  }
  for (size_t i = 0; i < specs.size(); ++i) {
    absl::StatusOr<TaskId> id = driver.Spawn(std::move(specs[i]));
    if (!id.ok()) return id.status();
    MutexLock lock(s->mu);
    s->tasks[i].stats.id = *id;
  }
  return std::unique_ptr<RecordedRun>(new RecordedRun(std::move(s)));
}

absl::StatusOr<Nanos> RecordedRun::RunToEnd() {
  Driver& d = *state_->driver;
  const Nanos start = d.Now();
  if (absl::Status s = d.RunFor(std::max<Nanos>(1, state_->w.duration)); !s.ok()) return s;
  return d.Now() - start;
}

std::vector<RecordedTaskStats> RecordedRun::Tasks() const {
  MutexLock lock(state_->mu);
  std::vector<RecordedTaskStats> out;
  out.reserve(state_->tasks.size());
  for (const State::Task& t : state_->tasks) {
    out.push_back(t.stats);
    out.back().actions_done = t.pc;
    out.back().waiting_for_wake = t.pending == State::Task::Pending::kBlock;
  }
  return out;
}

const RecordedWorkload& RecordedRun::workload() const { return state_->w; }
std::vector<std::string> RecordedRun::notes() const { return state_->notes; }

}  // namespace isolation::workload
