// SPDX-License-Identifier: GPL-2.0-or-later
// -----------------------------------------------------------------------------
// trace.h
// -----------------------------------------------------------------------------
//
// A timeline trace of one or more runs, written in the Chrome trace-event
// JSON format (opens in ui.perfetto.dev and chrome://tracing): what each
// model CPU went through, when.
//
//   TraceFile  one output file, opened at creation (an unwritable path fails
//              there, before anything runs); a bound on the number of events
//              of the whole file and a CPU filter.  Each run is a "process"
//              of the trace (pid 1, 2, ...) named after the run.
//   TraceRun   one run (one driver, or one discrete-event model): a Tracer
//              (tracer.h) with a track per CPU ("thread" tid = CPU + 1,
//              named "CPU 005 (isolated, nohz_full)"): what the CPU runs (a
//              slice per task period, category "task", and per idle period,
//              "idle"), the kernel activities inside them (categories tick,
//              kworker, timer, syscall; an activity that interrupted a user
//              task carries args.interrupted = that task) and the
//              mechanisms' instant events with their arguments.  Time is the
//              driver's: virtual on the simulator, CLOCK_MONOTONIC since the
//              driver's start on real threads (args and metadata say which).
//
// Bounds: TraceFileOptions::max_events caps the whole file.  TraceFile splits
// what is left between the runs it still expects (PlanRuns); a run keeps the
// first events it is given (on the simulator: a prefix in time of the whole
// machine; on real threads: a prefix per CPU) and counts the rest (what each
// CPU runs at the end is closed from a small reserve, so the last slices
// still reach the end).  A truncated run says so in its process name, in a
// "trace truncated" instant event where it began dropping (outside the
// bound) and in the file's "otherData" ("truncated", "dropped_events") and
// "isolation" (per run) objects.  The file is valid JSON in every case once
// Close() ran.
//
// In the file, each track's events are sorted by time (then longest first),
// and slices nest: a slice that would end after its enclosing slice (on real
// threads a tick that switches tasks ends after the task it preempted) is
// clipped to it and counted ("clipped_slices").
//
// Kernel counterpart: none (the kernel's would be a perf/ftrace recording
// read by KernelShark or Perfetto); the event vocabulary follows
// sched_switch / irq / workqueue / timer / tick_stop tracepoints.
//
// Thread safety: TraceFile is thread-safe.  A TraceRun follows tracer.h's
// contract: on the simulator (and a model without driver) every call comes
// from one thread; attached to a RealThreadDriver each CPU thread records
// into its own buffer (no lock), calls from other threads into a locked one.
// Finish() after the driver stopped (RunFor returned).

#ifndef ISOLATION_RUNTIME_TRACE_H_
#define ISOLATION_RUNTIME_TRACE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "isolation/core/clock.h"
#include "isolation/core/cpumask.h"
#include "isolation/core/driver.h"
#include "isolation/core/isolation_config.h"
#include "isolation/core/mutex.h"
#include "isolation/core/tracer.h"

namespace isolation {

inline constexpr int64_t kMaxTraceEvents = 100'000'000;

struct TraceFileOptions {
  // Events of the whole file, in [1, kMaxTraceEvents].
  int64_t max_events = 1'000'000;
  // CPUs whose tracks are recorded; an empty mask (nbits() == 0) records
  // every CPU.  Bits beyond a run's CPUs are ignored for that run.
  CpuMask cpus;
};

struct TraceRunSpec {
  std::string name;                    // the run's process name
  int num_cpus = 0;                    // tracks 0 .. num_cpus - 1
  std::vector<std::string> cpu_roles;  // optional, per CPU ("isolated, nohz_full")
};

// "isolated, nohz_full" / "housekeeping" per CPU of `config`.
std::vector<std::string> TraceCpuRoles(const IsolationConfig& config);

class TraceRun;

class TraceFile {
 public:
  // Opens (truncates) `path`.  Errors: max_events out of range, a CPU
  // filter of more than kMaxCpus bits, a path that cannot be opened for
  // writing (InvalidArgument naming the path and the reason).
  static absl::StatusOr<std::unique_ptr<TraceFile>> Create(const std::string& path,
                                                           TraceFileOptions options);
  ~TraceFile();  // Close()s if needed (errors are lost: call Close()).
  TraceFile(const TraceFile&) = delete;
  TraceFile& operator=(const TraceFile&) = delete;

  // `runs` more runs will start: each new run gets an equal share of the
  // events left.  Without a plan a run may use all that is left.
  void PlanRuns(int runs);
  // A new phase (one experiment of several): the runs started from now on
  // share 1/phases_left of the events left, whatever they plan.
  void BeginPhase(int phases_left);
  // A new run.  Errors: num_cpus out of [1, kMaxCpus], cpu_roles of the
  // wrong size, the file already closed.
  absl::StatusOr<std::unique_ptr<TraceRun>> StartRun(TraceRunSpec spec);
  // Ends the JSON document (the "otherData" trailer says whether and where
  // the trace was truncated) and closes the file.  Unfinished runs are
  // finished first.  Errors: a write failed.  Idempotent.
  absl::Status Close();

  const std::string& path() const { return path_; }
  int64_t max_events() const { return options_.max_events; }
  const CpuMask& cpu_filter() const { return options_.cpus; }  // nbits 0: every CPU
  int64_t events_written() const;
  int64_t events_dropped() const;

 private:
  friend class TraceRun;
  TraceFile(std::string path, TraceFileOptions options);
  // Called by TraceRun::Finish: writes the run's events (sorted per track).
  void WriteRun(TraceRun& run);
  void ForgetRun(TraceRun* run);
  void WriteLine(const std::string& line) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const std::string path_;
  const TraceFileOptions options_;
  mutable Mutex mu_;
  struct Impl;
  std::unique_ptr<Impl> impl_
      ABSL_PT_GUARDED_BY(mu_);  // the pointer itself is set once, in the constructor
};

class TraceRun final : public Tracer {
 public:
  ~TraceRun() override;  // Finish()es at the latest recorded time if needed.
  TraceRun(const TraceRun&) = delete;
  TraceRun& operator=(const TraceRun&) = delete;

  // Makes `driver` report here (Driver::SetTracer) and uses its clock; on a
  // real-thread driver each CPU thread gets its own buffer.  REQUIRES:
  // before the driver's first Spawn / RunFor; `driver` outlives the run's
  // recording (Finish()).
  void Attach(Driver& driver);
  // The clock of a run that has no driver (Tracer::Now()).
  void SetClock(std::function<Nanos()> clock);

  // Ends what each CPU runs at `end` and writes the run into its file.
  // REQUIRES: the driver stopped (RunFor returned).  Later calls do nothing.
  void Finish(Nanos end);

  int pid() const { return pid_; }
  int num_cpus() const { return num_cpus_; }
  int64_t budget() const { return budget_; }
  int64_t recorded() const;  // events kept so far
  int64_t dropped() const;   // events lost to the bound so far

  // Tracer:
  bool Wants(int cpu) const override;
  Nanos Now() const override;
  void CpuRuns(int cpu, Nanos ts, int32_t task, std::string_view name) override;
  void Activity(int cpu, Nanos start, Nanos end, const char* category, std::string_view name,
                int32_t interrupted) override;
  void Instant(int cpu, Nanos ts, std::string_view name, TraceArgs args) override;
  void NameActivity(int cpu, const char* name) override;

 private:
  friend class TraceFile;
  struct Event;
  struct Buffer;
  struct Track;
  TraceRun(TraceFile* file, int pid, TraceRunSpec spec, CpuMask wanted, int64_t budget);
  Buffer& BufferFor(int cpu);
  void Record(Buffer& b, Event&& e);
  Nanos LatestTime() const;  // end of the latest recorded event or open state

  TraceFile* file_;
  const int pid_;
  const int num_cpus_;
  const std::string name_;
  const std::vector<std::string> roles_;
  const CpuMask wanted_;
  const int64_t budget_;
  int64_t reserve_ = 0;  // kept back for closing the CPU states at Finish
  bool real_threads_ = false;
  bool finished_ = false;
  const Driver* driver_ = nullptr;
  std::function<Nanos()> clock_;
  std::string clock_label_ = "model time (a discrete-event model without a driver)";
  std::vector<std::unique_ptr<Buffer>> buffers_;  // per CPU thread (real) or [0] (single)
  // Real threads: events of threads other than the CPU threads.  Recorded
  // under foreign_mu_ while the driver runs; Attach (before), Finish and the
  // counters (after, the driver stopped) read it without the lock.  Not
  // annotated: the analysis cannot see those phases.
  std::unique_ptr<Buffer> foreign_;
  Mutex foreign_mu_;
  std::vector<std::unique_ptr<Track>> tracks_;  // per CPU: open CPU state, activity name
  std::vector<Event> closing_;                  // written by Finish
  int64_t clipped_ = 0;
};

}  // namespace isolation

#endif  // ISOLATION_RUNTIME_TRACE_H_
