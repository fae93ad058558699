// SPDX-License-Identifier: GPL-2.0-or-later
// -----------------------------------------------------------------------------
// recorded.h
// -----------------------------------------------------------------------------
//
// A recorded kernel trace as a closed-loop workload, like `perf sched
// replay` but under the model's policies.  Each recorded task becomes a task
// body that plays its own timeline:
//   - it runs for the time it ran (between its switch-in and switch-out,
//     preemptions merged), scaled by RecordedWorkloadOptions::cpu_scale;
//   - where it woke another recorded task (sched_waking, or sched_wakeup
//     when the recording has no sched_waking, with the waker current on the
//     CPU), it wakes that task at the same point of its own run;
//   - where it blocked, it blocks until that wake-up when a recorded task
//     woke it; when an interrupt, a timer or an unrecorded context woke it,
//     it sleeps until the time of that wake-up (measured from the start of
//     the recording and of the run), not at all if the run is already past
//     it: the outside world's events keep their times, so a model that runs
//     late does not drift further with every sleep (perf sched replay's
//     relative sleeps do);
//   - a task first seen after the start waits until its first switch-in
//     time; a task that exited exits.
// The model then places, switches and times those bodies under whatever
// machine, isolation and mechanism variants the driver has.  With the
// recorded machine, the recorded isolation and the recorded kernel's
// variants, the reproduced per-task run time and wake-up counts are those of
// the recording within the tolerance docs/workloads.md states (its test pins
// it); anything else is a what-if.
//
// A wake-up traced while its target was still on a CPU (sched_waking can
// come after the dequeue but before the sched_switch that shows the block)
// ends the block that follows, if one follows at once.  A pid reused after
// an exit is a new task.  Each wake-up names the block it ends: a wake that arrives before its
// target reaches that block lets it pass at once, so the closed loop cannot
// lose one, and since the recording's wake-ups follow its causal order the
// replay cannot deadlock (a wake-up that ended a block in the recording ends
// the same block here, never an earlier one).
//
// Affinity: by default each task may run on the CPUs where it did at least
// 5 % of its run in the recording, and starts on the one it ran most on (a
// per-CPU kthread or a pinned thread stays pinned, also one that started
// elsewhere before its sched_setaffinity(); a task that ran everywhere may
// go anywhere); RecordedAffinity::kAll frees them all.  The trace does not
// carry affinity masks, so this is a reconstruction.
//
// Kernel / tool counterpart: perf's builtin-sched.c `replay` (which replays
// run / sleep / wake-up atoms open loop on the host); here on the model.
//
// Thread safety: FromRecording is a pure function.  A RecordedRun's
// counters are guarded by one lock, so its bodies may run on the real-thread
// driver; Start and the observers are called from the driver's owner.  The
// task bodies share the run's state, so a driver may outlive the RecordedRun
// (or a failed Start) safely; the figures are the RecordedRun's to read.

#ifndef ISOLATION_WORKLOAD_RECORDED_H_
#define ISOLATION_WORKLOAD_RECORDED_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "isolation/core/clock.h"
#include "isolation/core/driver.h"
#include "isolation/replay/recording.h"

namespace isolation::workload {

enum class RecordedAffinity {
  kRecordedCpus,  // the CPUs each task ran on in the recording
  kAll,           // every CPU of the driver's machine
};

struct RecordedWorkloadOptions {
  // Run times are multiplied by this: 0.5 models CPUs twice as fast as the
  // recorded machine's.  (0, 100].
  double cpu_scale = 1.0;
  RecordedAffinity affinity = RecordedAffinity::kRecordedCpus;
  // Tasks (pids) converted at most; a recording with more is refused, naming
  // the bound.  [1, 1 << 20].
  int max_tasks = 65536;
  // Actions (runs, wakes, blocks, sleeps) of all tasks together; each costs
  // 32 bytes (2 GiB at the default).  A recording with more is refused.
  // [1, 1 << 28].
  int64_t max_actions = int64_t{1} << 26;
};

// One step of a recorded task's script.
struct RecordedAction {
  enum class Kind : uint8_t { kRun, kWake, kBlock, kSleep, kExit };
  Kind kind = Kind::kRun;
  int32_t target = -1;  // kWake: the task index woken
  int32_t block = -1;   // kWake: which of the target's kBlock actions it ends (0, 1, ...)
  Nanos ns = 0;         // kRun: run time (scaled); kSleep: how long it slept
  Nanos at = 0;         // kSleep: when it was woken, from the recording's start
};

static_assert(sizeof(RecordedAction) <= 32, "max_actions' memory bound assumes 32 bytes");

struct RecordedTask {
  int32_t pid = 0;
  std::string comm;
  int first_cpu = 0;  // the CPU it ran most on (its first, if it never ran)
  // Address space: the index of the first task of its process (a task
  // created with CLONE_VM, task:task_newtask, shares its parent's), else
  // its own index.
  int group = 0;
  Nanos start = 0;               // first switch-in, from the recording's first event
  std::vector<int> cpus;         // CPUs with >= 5 % of its run, ascending (empty: none)
  Nanos recorded_run_ns = 0;     // on-CPU time in the recording (unscaled)
  int64_t recorded_wakeups = 0;  // blocks that ended in the recording
  std::vector<RecordedAction> script;
};

struct RecordedWorkload {
  std::vector<RecordedTask> tasks;    // by first appearance
  Nanos duration = 0;                 // first to last event of the recording
  int num_cpus = 0;                   // the recorded machine's
  int64_t blocks_woken_by_tasks = 0;  // blocks ended by a recorded task's wake-up
  int64_t blocks_timed = 0;           // blocks ended otherwise (replayed as sleeps)
  std::vector<std::string> notes;     // what the conversion could not carry over
};

// Errors: InvalidArgument for options out of range or a recording without
// sched:sched_switch events; ResourceExhausted past max_tasks / max_actions,
// naming the bound.
absl::StatusOr<RecordedWorkload> WorkloadFromRecording(const replay::Recording& recording,
                                                       const RecordedWorkloadOptions& options = {});

struct RecordedTaskStats {
  int32_t pid = 0;
  std::string comm;
  TaskId id = kIdleTask;
  Nanos run_ns = 0;         // run time completed in the model (scaled), to 100 us
  int64_t late_sleeps = 0;  // timed wake-ups the run reached after their time
  int64_t wakeups = 0;
  bool ended = false;             // its script ran to the end
  size_t actions_done = 0;        // of its script
  bool waiting_for_wake = false;  // blocked on a recorded task's wake-up at the end
};

class RecordedRun {
 public:
  // Spawns every task on `driver` (at its first recorded CPU if the machine
  // has it, else CPU 0 ... in turn).  Errors: the driver's Spawn errors; a
  // machine smaller than a task's recorded CPUs with kRecordedCpus keeps
  // the CPUs that exist, and a task with none left may run anywhere (a
  // note).
  static absl::StatusOr<std::unique_ptr<RecordedRun>> Start(
      const RecordedWorkload& workload, Driver& driver,
      absl::AnyInvocable<void(CpuContext&, TaskId)> on_kernel_entry = nullptr);
  // The same without a copy of the workload: one conversion shared by every
  // run (isolab run's rows).  Errors: also a null workload.
  static absl::StatusOr<std::unique_ptr<RecordedRun>> Start(
      std::shared_ptr<const RecordedWorkload> workload, Driver& driver,
      absl::AnyInvocable<void(CpuContext&, TaskId)> on_kernel_entry = nullptr);
  ~RecordedRun();
  RecordedRun(const RecordedRun&) = delete;
  RecordedRun& operator=(const RecordedRun&) = delete;

  // Runs the driver for the recording's duration.  Returns the time run.
  absl::StatusOr<Nanos> RunToEnd();
  std::vector<RecordedTaskStats> Tasks() const;  // in RecordedWorkload::tasks order
  const RecordedWorkload& workload() const;
  std::vector<std::string> notes() const;  // Start's notes

  struct State;

 private:
  explicit RecordedRun(std::shared_ptr<State> state);
  std::shared_ptr<State> state_;  // shared with the task bodies
};

}  // namespace isolation::workload

#endif  // ISOLATION_WORKLOAD_RECORDED_H_
