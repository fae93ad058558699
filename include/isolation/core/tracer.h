// SPDX-License-Identifier: GPL-2.0-or-later
// -----------------------------------------------------------------------------
// tracer.h
// -----------------------------------------------------------------------------
//
// What a run tells a trace sink: the timeline of every model CPU (which task
// or idle it runs, the kernel activities that interrupt it) and the
// mechanisms' own events.  The drivers (sim.h, real_driver.h) report the
// scheduler side; the mechanisms' hook adapters report what their mechanism
// did (an mm_cid ID change or scan, a tmigr migrator hand-over or remote
// expiry, an idle selection and its probes, a vmstat fold) as instant events.
// A mechanism reaches the sink only through this interface, never through the
// runtime: the runtime's Chrome-trace writer (runtime/trace.h) implements it,
// and so can a test.
//
// Kernel counterpart: the role of the tracepoints an isolated CPU's activity
// is read from (sched_switch, irq/softirq entry/exit, workqueue_execute_*,
// timer_expire_*, tick_stop, osnoise:*), not their format.
//
// Cost: with tracing off a driver or adapter holds a null Tracer* and pays
// one pointer test per event.  Adapters read Driver::tracer() once, in
// Hooks::OnStart, so a tracer must be set on the driver before the first
// Spawn or RunFor.
//
// Thread-safety contract: calls about one CPU (its `cpu` argument) come from
// that CPU's context, as the driver contract serialises hooks per CPU; calls
// about different CPUs may be concurrent on the real-thread driver.  An
// implementation must accept that without a lock shared by all CPUs on the
// hot path.  Instant() may also be called for a CPU from another CPU's
// context (a wakeup placed on a remote CPU); CpuRuns, Activity and
// NameActivity only from `cpu`'s own context.

#ifndef ISOLATION_CORE_TRACER_H_
#define ISOLATION_CORE_TRACER_H_

#include <cstdint>
#include <initializer_list>
#include <string_view>

#include "isolation/core/clock.h"

namespace isolation {

// One integer argument of a trace event.  `key` must have static storage
// duration (a string literal): sinks keep the pointer.
struct TraceArg {
  const char* key;
  int64_t value;
};
using TraceArgs = std::initializer_list<TraceArg>;

// Categories of Tracer::Activity (and the names of the CPU-state slices).
inline constexpr char kTraceTick[] = "tick";        // the scheduler tick
inline constexpr char kTraceKworker[] = "kworker";  // per-CPU work item
inline constexpr char kTraceTimer[] = "timer";      // timer callback (hrtimer / softirq)
inline constexpr char kTraceSyscall[] = "syscall";  // a task's own kernel entry
inline constexpr char kTraceTask[] = "task";        // CPU state: a task runs
inline constexpr char kTraceIdle[] = "idle";        // CPU state: idle

class Tracer {
 public:
  virtual ~Tracer() = default;

  // Whether events of `cpu` are recorded (a CPU filter); callers may skip
  // work that only feeds the tracer.
  virtual bool Wants(int cpu) const = 0;

  // The run's current time, for callers without a `now` of their own (a
  // mechanism entry point that takes no time): the driver's Now() when the
  // sink is attached to a driver.
  virtual Nanos Now() const = 0;

  // From `ts` on, `cpu` runs task `task` named `name` (task >= 0) or is idle
  // (task < 0), until the next CpuRuns for `cpu` or the end of the run.
  virtual void CpuRuns(int cpu, Nanos ts, int32_t task, std::string_view name) = 0;

  // A kernel activity on `cpu` during [start, end]: category kTraceTick,
  // kTraceKworker, kTraceTimer or kTraceSyscall; `interrupted` is the user
  // task it preempted (counted as an interruption, CpuStats::interruptions),
  // or < 0 if the CPU was idle or the activity is the task's own syscall.
  // The name is `name`, unless the activity named itself (NameActivity
  // since the previous Activity of `cpu`; the name is consumed).
  virtual void Activity(int cpu, Nanos start, Nanos end, const char* category,
                        std::string_view name, int32_t interrupted) = 0;

  // A point event on `cpu`'s track (mechanism events: "tmigr.remote_expiry").
  virtual void Instant(int cpu, Nanos ts, std::string_view name, TraceArgs args) = 0;

  // Called from inside a work item, timer callback or tick hook running on
  // `cpu`: the activity's slice is named `name` (static storage) instead of
  // the driver's generic "kworker" / "timer" / "tick".
  virtual void NameActivity(int cpu, const char* name) = 0;
};

}  // namespace isolation

#endif  // ISOLATION_CORE_TRACER_H_
