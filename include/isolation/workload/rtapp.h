// SPDX-License-Identifier: GPL-2.0-or-later
// -----------------------------------------------------------------------------
// rtapp.h
// -----------------------------------------------------------------------------
//
// rt-app workload descriptions run on any driver.  rt-app
// (github.com/scheduler-tools/rt-app) describes a workload as JSON: a
// `global` object (duration, default policy, calibration, logging) and
// `tasks`, each a thread object with `instance`, `loop`, `delay`, `cpus` and
// `phases` of events (`run`, `runtime`, `sleep`, `timer`, `barrier`,
// `lock`/`unlock`, `signal`/`broad`/`wait`/`sync`, `fork`, `yield`).  LISA,
// the EAS work and sched_ext's simulator feed their runs with it; here the
// same file drives the simulator (or the real-thread driver) so that a
// mechanism variant, or an `isolcpus=` on some CPUs, can be judged on the
// workload a user already has.
//
// Two steps:
//   ParseRtApp / LoadRtApp   the JSON to an RtAppDescription, refusing what
//                            the model cannot honour (an InvalidArgument
//                            naming the task, the key and the value) and
//                            listing in `notes` what it reads but does not
//                            model (calibration, scheduling classes, logs).
//   RtAppRun::Start          spawns the description's tasks on a driver; each
//                            task body plays its events as rt-app's thread
//                            loop does.  RunToEnd runs the driver for the
//                            description's duration.
//
// What each event is on the model (docs/workloads.md has the full table):
//   run N      N us of user work (Step::Run): the model's CPUs have no
//              capacity or frequency, so rt-app's calibrated loop count is
//              the time itself.
//   runtime N  user work until N us of wall time passed since the event began
//              (in 100 us slices: it ends within a slice of that time).
//   sleep N    Step::Sleep(N us).
//   timer      {"ref", "period", "mode"}: sleep until the timer's next expiry,
//              which advances by `period` from its previous one (started at
//              the first use), so a late task keeps the period; an expiry
//              already passed is a miss: no sleep, and in "relative" mode
//              (rt-app's default) the reference moves to now.  A ref starting
//              with "unique" is one timer per thread, any other ref is shared
//              by every thread that names it, as in rt-app.
//   lock/unlock  a blocking mutex handed over FIFO; unlocking a mutex the
//              thread does not hold is a run error (status()).
//   signal/broad/wait  a condition variable (pthread semantics: a signal with
//              nobody waiting is lost; wait releases its mutex and takes it
//              again before it returns).  sync = lock, signal, wait, unlock.
//   barrier    every thread that names it waits until all have arrived; the
//              number of users is counted at parse time (instances x
//              references), so a task that is forked may not use one (rt-app's
//              rule).
//   fork       spawns one more thread of the named task (its `instance` may
//              be 0), in the same address space, at the current time.
//   yield      Step::Yield.
// An event that makes a system call in rt-app (sleep, a timer that sleeps,
// a contended lock, an unlock or signal that wakes a waiter, wait, barrier,
// fork, yield) enters the kernel here: the body makes a syscall
// (TaskContext::Syscall) and calls RtAppRunOptions::on_kernel_entry inside
// it, which is how a harness lets the workload touch a mechanism.
// Refused: suspend, resume, mem, iorun, unknown events and keys.
//
// All threads share one address space (rt-app is one process): every task
// gets RtAppRunOptions::group.
//
// Kernel / tool counterpart: rt-app's src/rt-app_parse_config.c (the
// grammar) and src/rt-app.c (run_event(), the thread loop).
//
// Thread safety: parsing is a pure function.  An RtAppRun's shared objects
// (mutexes, condition variables, barriers, shared timers, statistics) are
// guarded by one lock, so its task bodies may run on the real-thread driver's
// CPU threads; Start, RunToEnd and the observers are called from the thread
// that owns the driver.  The task bodies share the run's state, so a driver
// may outlive the RtAppRun (or a failed Start) safely.

#ifndef ISOLATION_WORKLOAD_RTAPP_H_
#define ISOLATION_WORKLOAD_RTAPP_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "isolation/core/clock.h"
#include "isolation/core/driver.h"
#include "isolation/runtime/noise_meter.h"

namespace isolation::workload {

// Bounds on what a description may ask for, so any input costs bounded
// memory and every time stays far from Nanos' range.
inline constexpr int64_t kRtAppMaxFileBytes = int64_t{64} << 20;
inline constexpr int kRtAppMaxThreads = 65536;              // instances at start, forks included
inline constexpr int64_t kRtAppMaxEventUs = 3'600'000'000;  // one hour
inline constexpr int64_t kRtAppMaxDurationS = 24 * 3600;

enum class RtAppEventKind {
  kRun,
  kRunTime,
  kSleep,
  kTimer,
  kBarrier,
  kLock,
  kUnlock,
  kSignal,
  kBroadcast,
  kWait,
  kFork,
  kYield,
};
// "run", "runtime", "sleep", "timer", "barrier", "lock", "unlock", "signal",
// "broad", "wait", "fork", "yield".
const char* RtAppEventKindName(RtAppEventKind kind);

struct RtAppEvent {
  RtAppEventKind kind = RtAppEventKind::kRun;
  std::string key;              // the JSON key it came from ("run0"), for messages
  Nanos ns = 0;                 // run, runtime, sleep: the duration; timer: the period
  std::string ref;              // the resource (timer, barrier, mutex, condition) or forked task
  std::string mutex;            // wait: the mutex it releases while waiting
  bool timer_absolute = false;  // timer "mode": "absolute"
};

struct RtAppPhase {
  std::string name;
  int64_t loop = 1;       // >= 1
  std::vector<int> cpus;  // empty: the task's affinity
  std::vector<RtAppEvent> events;
};

struct RtAppTask {
  std::string name;
  int instances = 1;      // threads started at the beginning (0: only forked)
  int64_t loop = -1;      // runs of the whole phase list; -1: until the end of the run
  Nanos delay = 0;        // before the first event
  std::vector<int> cpus;  // empty: every CPU
  std::string policy;     // as written (or the global default); not modelled
  std::vector<RtAppPhase> phases;
};

struct RtAppDescription {
  std::string source;   // the file name, for messages
  Nanos duration = -1;  // -1: until every thread has ended
  std::string default_policy = "SCHED_OTHER";
  std::vector<RtAppTask> tasks;  // in file order
  // What was read and deliberately not modelled, one line each, to be shown
  // with the results ("global.calibration: ignored, ...").
  std::vector<std::string> notes;
  // Threads each barrier waits for (name -> count).
  std::vector<std::pair<std::string, int>> barriers;
};

// Errors: InvalidArgument naming the source, the task, the phase, the key and
// the bad value (malformed JSON with its byte offset, a duplicate key, an
// unknown or unmodelled event, a negative or oversized duration, a fork of an
// unknown task, a barrier used by a forked task, more than kRtAppMaxThreads
// threads).
absl::StatusOr<RtAppDescription> ParseRtApp(std::string_view json,
                                            std::string_view source = "<string>");
// Reads `path` (at most kRtAppMaxFileBytes).  Errors: NotFound / Internal
// naming the file; ParseRtApp's.
absl::StatusOr<RtAppDescription> LoadRtApp(const std::string& path);

struct RtAppRunOptions {
  int group = 0;  // the address space of every thread
  // Called in kernel context (inside the syscall) at every event that enters
  // the kernel, with the calling thread.  Runs on the thread's CPU context.
  absl::AnyInvocable<void(CpuContext&, TaskId)> on_kernel_entry;
  // Modelled kernel time of such an entry (simulator).
  Nanos syscall_cost = 1 * kNsPerUs;
  // Shape of the per-CPU histograms of timer wake-up latency (expiry to the
  // thread running again), as `rtla timerlat hist`'s thread column.
  // REQUIRES: ValidateNoiseHistogram (Start refuses it otherwise).
  NoiseHistogramOptions timer_latency_histogram;
};

// One thread's figures over the run.
struct RtAppThreadStats {
  std::string name;       // "<task>-<instance>", forks "<task>-f<n>"
  std::string task;       // its task object
  TaskId id = kIdleTask;  // the driver's
  Nanos run_ns = 0;       // run and runtime work completed
  int64_t loops = 0;      // completed runs of the phase list
  int64_t wakeups = 0;    // sleeps, timer waits and blocks that ended
  int64_t timer_waits = 0;
  int64_t timer_misses = 0;        // expiry already passed: no sleep
  int64_t timer_wakeups = 0;       // timer sleeps that ended (the latency samples)
  Nanos max_timer_latency_ns = 0;  // expiry -> the thread running again
  Nanos sum_timer_latency_ns = 0;
  bool ended = false;  // its loops are done (it exited)
};

class RtAppRun {
 public:
  // Spawns every task's instances on `driver` at driver.Now().  Errors:
  // InvalidArgument for a `cpus` entry outside the driver's machine (naming
  // the task and the CPU) or a bad histogram shape; the driver's Spawn
  // errors.
  static absl::StatusOr<std::unique_ptr<RtAppRun>> Start(const RtAppDescription& description,
                                                         Driver& driver,
                                                         RtAppRunOptions options = {});
  ~RtAppRun();
  RtAppRun(const RtAppRun&) = delete;
  RtAppRun& operator=(const RtAppRun&) = delete;

  // Runs the driver for the description's duration, or, when it is -1,
  // until every thread has ended (checked every driver poll interval) but at
  // most `bound`.  Returns the time run.  Errors: the driver's; status().
  absl::StatusOr<Nanos> RunToEnd(Nanos bound = 60 * kNsPerSec);

  // The first run error (an unlock of a mutex the thread does not hold, a
  // wait without its mutex, a fork beyond kRtAppMaxThreads), or OK.  The
  // thread that hit it exits.
  absl::Status status() const;
  std::vector<RtAppThreadStats> Threads() const;
  // Timer wake-up latencies by the CPU the thread woke on (CPUs with
  // samples only, ascending), each over the time run so far: what `rtla
  // timerlat hist` prints in its Thr-NNN columns (FormatRtlaHistogram with
  // tool "timerlat", column "Thr").
  std::vector<std::pair<int, NoiseResult>> TimerLatencies() const;
  int live_threads() const;
  const RtAppDescription& description() const;

  struct State;  // the shared objects (rtapp_run.cc)

 private:
  explicit RtAppRun(std::shared_ptr<State> state);
  std::shared_ptr<State> state_;  // shared with the task bodies
};

}  // namespace isolation::workload

#endif  // ISOLATION_WORKLOAD_RTAPP_H_
