// SPDX-License-Identifier: GPL-2.0-or-later
// -----------------------------------------------------------------------------
// replay_driver.h
// -----------------------------------------------------------------------------
//
// The third driver: a recorded kernel plays the machine.  Where the simulator
// decides what each CPU runs and the real-thread driver lets the host decide,
// the replay driver takes every decision from a recording (recording.h) and
// delivers it, in the recording's time order, to the mechanisms' ordinary
// Hooks adapters (driver.h) -- open loop: the schedule is the kernel's, and
// at each decision point every attached variant decides too, so a caller can
// set the kernel's decision beside each variant's.
//
//   recorded event                     hooks delivered (in this order)
//   sched_switch prev -> next          OnIdleExit (prev idle; OnTickRestart if
//                                      the tick was stopped), OnContextSwitch,
//                                      OnIdleEnter (next idle)
//   sched_waking of a sleeping task    SelectTaskCpu (every hook's answer kept:
//                                      LastSelection); none for a task still
//                                      on its run queue (ttwu_runnable())
//   sched_migrate_task                 OnMigrate
//   sched_wakeup of a sleeping task    OnWakeEnqueue (the CPU the kernel chose)
//   task_newtask (else sched_process_fork)  OnTaskFork (mm: CLONE_VM shares
//                                      the parent's, else a new one)
//   sched_process_exec                 OnTaskExit + OnTaskFork (a new task id
//                                      in a new mm, no parent) + OnContextSwitch to it
//   sched_process_exit                 OnTaskExit
//   rseq_update                        OnReturnToUser
//   the tick (hrtimer_expire_entry)    OnTickRestart if stopped, OnTick, then
//                                      OnReturnToUser of the interrupted user
//                                      task unless the next event on that CPU
//                                      switches it out (see below)
//   tick_stop (success)                OnTickStop
//   every event, after its hooks       ReplayObserver::OnRecorded
//
// Tasks are the recording's pids, one TaskId per incarnation (a pid that
// exits and is reused gets a new id; exec gets a new id too, since the task
// changes mm).  A task first seen without a fork *predates* the recording:
// its mm is unknown, so it gets an mm of its own (mm ids from 1; the id 0 is
// unused) and TaskInfo::mm_known is false.  A CPU's state is unknown until
// its first event, which *bootstraps* it (OnIdleEnter for the idle task, else
// a switch from idle to the task that event shows current); an event showing
// another current task than the replay tracked (a lost event) *resyncs* it
// the same way.  Both are counted (ReplayCounters) so a caller can tell.
//
// A tick's return to user: the interrupted task returns to user mode after
// the tick unless the tick preempts it, which the recording shows only as a
// switch-out of that task, still runnable, soon after.  The driver holds the
// tick's OnReturnToUser until the CPU's next switch, tick, rseq_update, exit
// or exec: it drops it when that is a runnable switch-out of the task within
// ReplayDriverOptions::tick_preempt_window of the tick (preempted: its task
// work runs at its next return to user, the rseq_update after its next
// switch-in), and delivers it first otherwise.  The window is a heuristic
// (a wakeup preemption inside it looks the same); ReplayCounters counts the
// drops.
//
// The adapters' own services run in the recording's time: work and timers
// (QueueWorkOn, QueueHousekeepingWork, ArmTimer) fall due between recorded
// events, on a CPU context for their CPU; the kernel-time service charges
// nothing (the recording's times are the kernel's) and adds the modelled
// cost to CpuStats::kernel_ns.  What only a closed loop can do is refused:
// Spawn, SetAffinity, SetCpuOnline and RunFor return FailedPrecondition;
// Wake is ignored.
//
// Tracing (Driver::SetTracer): each recorded switch is a CpuRuns (the pid and
// its name), each tick an Activity, each adapter work item or timer an
// Activity named "model work" / "model timer" (zero length: the recording's
// time does not include the model's costs), besides the adapters' own
// instants.
//
// Kernel counterpart: none itself; it replays the kernel's context_switch,
// try_to_wake_up, set_task_cpu, copy_process, begin_new_exec, do_exit,
// rseq_handle_notify_resume, sched_tick and tick_nohz_stop_tick as their
// tracepoints recorded them.
//
// Thread safety: one thread.  OnInfo/OnEvent (EventSink), the observers and
// every hook run on the caller's thread; hooks_run_concurrently() is false.

#ifndef ISOLATION_REPLAY_REPLAY_DRIVER_H_
#define ISOLATION_REPLAY_REPLAY_DRIVER_H_

#include <cstdint>
#include <memory>
#include <queue>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "isolation/core/driver.h"
#include "isolation/replay/recording.h"

namespace isolation::replay {

class ReplayDriver;

// Sees every recorded event after the driver delivered its hooks.
class ReplayObserver {
 public:
  virtual ~ReplayObserver() = default;
  virtual void OnRecorded(const Event& event, ReplayDriver& driver) = 0;
  // The recording ended (after the last event's work fell due).
  virtual void OnFinish(ReplayDriver& driver) { (void)driver; }
};

struct ReplayDriverOptions {
  int hz = 250;       // the recorded kernel's CONFIG_HZ (tick_period)
  uint64_t seed = 1;  // Driver::Random
  // Bounds: tasks the replay tracks at once (pids alive), pending adapter
  // work items.  Past them: ResourceExhausted naming the bound.
  int64_t max_live_tasks = 1 << 22;
  int64_t max_pending_work = 1 << 20;
  // A tick's preemption shows as a runnable switch-out within this time.
  Nanos tick_preempt_window = 100 * kNsPerUs;
};

// What the replay knows about a task.
struct TaskInfo {
  int32_t pid = -1;
  int mm = 0;             // the mm id given to the hooks (TaskSpec::group)
  bool mm_known = false;  // the mm was created or shared by a fork or exec in the recording
  bool predates = false;  // first seen without a fork
  bool exited = false;
  int cpu = -1;       // last CPU it was on
  int16_t prio = -1;  // last prio seen (sched events)
  enum class State : uint8_t { kUnknown, kRunning, kRunnable, kBlocked, kDead };
  State state = State::kUnknown;
};

struct ReplayCounters {
  int64_t events = 0;
  int64_t bootstraps = 0;             // CPUs whose state began at their first event
  int64_t resyncs = 0;                // events showing another current task than tracked
  int64_t unrecorded_idle_exits = 0;  // ... of which a CPU left idle without its switch recorded
  int64_t selections = 0;             // SelectTaskCpu rounds delivered
  int64_t work_run = 0;               // adapter work items and timers run
  int64_t ticks = 0;
  int64_t tick_returns_dropped = 0;  // tick OnReturnToUser dropped for a preemption
};

class ReplayDriver final : public Driver, public EventSink {
 public:
  // Errors: hz outside [1, 10000]; the isolation configuration's CPU count
  // differs from the topology's.
  static absl::StatusOr<std::unique_ptr<ReplayDriver>> Create(Topology topology,
                                                              IsolationConfig isolation,
                                                              ReplayDriverOptions options = {});
  ~ReplayDriver() override;

  void AddObserver(ReplayObserver* observer) { observers_.push_back(observer); }

  // EventSink: OnInfo checks the recording's CPU count against the
  // topology's (InvalidArgument naming both); OnEvent plays one event.
  absl::Status OnInfo(const RecordingInfo& info) override;
  absl::Status OnEvent(const Event& event) override;
  void OnComm(int32_t pid, std::string_view comm) override;
  // Runs the work still due and tells the observers the recording ended.
  absl::Status Finish();

  // The replay's view of the recording.
  const RecordingInfo& info() const { return info_; }
  const TaskInfo* Task(TaskId task) const;
  TaskId TaskOfPid(int32_t pid) const;  // the live incarnation, kIdleTask if none
  std::string_view Comm(TaskId task) const;
  // True once `cpu` had its first event.
  bool CpuKnown(int cpu) const {
    return cpu >= 0 && cpu < num_cpus() && cpus_[static_cast<size_t>(cpu)].known;
  }
  // Times the recording showed a task running on `cpu` that had been idle
  // without the switch out of idle (a resync from idle).  A CPU where this
  // happened has idle transitions the tracer does not record (seen on a
  // KVM guest for everything its idle loop does): its "idle" is presumed,
  // not known, and the mechanism replays do not judge decisions resting on it.
  int64_t UnrecordedIdleExits(int cpu) const {
    return cpu >= 0 && cpu < num_cpus() ? cpus_[static_cast<size_t>(cpu)].unrecorded_idle_exits : 0;
  }
  // Each hook's answer to the last SelectTaskCpu round (in AddHooks order).
  int LastSelection(size_t hook_index) const {
    return hook_index < selections_.size() ? selections_[hook_index] : -1;
  }
  // The event being played (valid in hooks and observers).
  const Event& current_event() const { return current_; }
  const ReplayCounters& counters() const { return counters_; }

  // Driver:
  const Topology& topology() const override { return topology_; }
  const IsolationConfig& isolation() const override { return isolation_; }
  bool is_simulated() const override { return true; }  // virtual (recorded) time, one thread
  bool hooks_run_concurrently() const override { return false; }
  Nanos poll_interval() const override { return kNsPerMs; }
  Nanos Now() const override { return now_; }
  Nanos tick_period() const override { return tick_period_; }
  void AddHooks(Hooks* hooks) override;
  absl::StatusOr<TaskId> Spawn(TaskSpec spec) override;
  void Wake(TaskId task, int waker_cpu) override;
  absl::Status SetAffinity(TaskId task, const CpuMask& mask) override;
  int TaskCpu(TaskId task) const override;
  int TaskGroup(TaskId task) const override;
  TaskId CurrentTask(int cpu) const override;
  int NumRunnable(int cpu) const override;
  bool IsIdle(int cpu) const override;
  void QueueWorkOn(int cpu, Nanos delay, WorkFn fn) override;
  int QueueHousekeepingWork(Nanos delay, WorkFn fn) override;
  TimerId ArmTimer(int cpu, Nanos expires, WorkFn fn) override;
  bool CancelTimer(TimerId id) override;
  void SetTickMode(int cpu, TickMode mode) override;
  TickMode GetTickMode(int cpu) const override;
  bool TickStopped(int cpu) const override;
  absl::Status SetCpuOnline(int cpu, bool online) override;
  absl::Status RunFor(Nanos duration) override;
  CpuStats Stats(int cpu) const override;
  uint64_t Random() override { return rng_(); }
  KernelSpan BeginKernelSpan() const override { return {}; }
  Nanos EndKernelSpan(KernelSpan span, CpuContext* ctx, Nanos modelled_ns) override;
  void SpendKernelTime(CpuContext& ctx, Nanos ns) override;

 private:
  class Context;
  struct Cpu {
    bool known = false;
    TaskId curr = kIdleTask;
    bool idle = false;
    bool tick_stopped = false;
    TickMode mode = TickMode::kNohzIdle;
    int runnable = 0;                // queued tasks other than curr (tracked from the recording)
    TaskId tick_return = kIdleTask;  // a tick's OnReturnToUser held for the next event
    Nanos tick_time = 0;
    int64_t unrecorded_idle_exits = 0;
    CpuStats stats;
    Nanos idle_since = 0;
  };
  struct Work {
    Nanos due;
    uint64_t seq;
    int cpu;
    TimerId timer;  // kNoTimer for work items
    bool operator>(const Work& o) const { return due != o.due ? due > o.due : seq > o.seq; }
  };

  ReplayDriver(Topology topology, IsolationConfig isolation, ReplayDriverOptions options);

  absl::Status Play(const Event& e);
  void RunDue(Nanos until);
  void Start();
  TaskId EnsureTask(int32_t pid, bool from_fork);
  TaskId NewTask(int32_t pid, int mm, bool mm_known, bool predates);
  void Bootstrap(Cpu& c, int cpu, int32_t pid);
  void SwitchTo(Cpu& c, int cpu, TaskId prev, TaskId next, int32_t prev_state);
  void ResolveTickReturn(Cpu& c, int cpu, const Event& e);
  void EnterIdle(Cpu& c, int cpu);
  void ExitIdle(Cpu& c, int cpu);
  TaskInfo* MutableTask(TaskId t) {
    return t >= 0 && static_cast<size_t>(t) < tasks_.size() ? &tasks_[static_cast<size_t>(t)]
                                                            : nullptr;
  }
  absl::Status Bad(std::string_view what) const;

  Topology topology_;
  IsolationConfig isolation_;
  ReplayDriverOptions options_;
  Nanos tick_period_;
  RecordingInfo info_;
  bool info_seen_ = false;
  bool started_ = false;
  Nanos now_ = 0;
  Event current_;
  std::vector<Hooks*> hooks_;
  std::vector<int> selections_;
  std::vector<ReplayObserver*> observers_;
  std::vector<Cpu> cpus_;
  std::vector<TaskInfo> tasks_;
  absl::flat_hash_map<int32_t, TaskId> live_;
  absl::flat_hash_map<int32_t, std::string> comms_;
  absl::flat_hash_map<int32_t, uint64_t> clone_flags_;  // task_newtask's flags until its fork event
  int next_mm_ = 1;
  int64_t live_count_ = 0;
  std::priority_queue<Work, std::vector<Work>, std::greater<Work>> due_;
  absl::flat_hash_map<uint64_t, WorkFn> work_fns_;  // by seq
  absl::flat_hash_map<TimerId, uint64_t> timers_;   // armed timer -> its seq
  uint64_t seq_ = 0;
  TimerId next_timer_ = 1;
  int hk_cursor_ = 0;
  std::mt19937_64 rng_;
  ReplayCounters counters_;
  absl::Status deferred_error_;
};

}  // namespace isolation::replay

#endif  // ISOLATION_REPLAY_REPLAY_DRIVER_H_
