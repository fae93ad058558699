// SPDX-License-Identifier: GPL-2.0-or-later
// -----------------------------------------------------------------------------
// recording.h
// -----------------------------------------------------------------------------
//
// A recorded kernel trace as the library sees it: one time-ordered stream of
// the scheduler, rseq, timer, timer-migration and workqueue events the four
// mechanisms decide on, plus what the file says about the machine it was
// recorded on (CPU count, topology, isolation, HZ, kernel release).  Every
// reader (readers.h: trace.dat, `trace-cmd report` text, `perf script` text)
// produces this model, so a replay (replay_driver.h) and its figures do not
// depend on the file's format.
//
// An `Event` is a small fixed-size record (48 bytes, no heap): its `kind` says
// which fields carry what, in the table at `EventKind`.  Task names live once
// per pid in `Comms`, not in the events.  Readers stream events to an
// `EventSink` in the recording's order (the kernel's global time order, as
// `trace-cmd report` and `perf script` print it), so a replay of 10^7 events
// needs memory for the mechanisms' state, not for the trace; `Recording`
// collects a stream when a caller wants it whole, bounded by
// `ReadOptions::max_events` (readers.h).
//
// Kernel counterpart: the tracepoints of include/trace/events/sched.h,
// rseq.h, timer.h, timer_migration.h and workqueue.h (their fields, decoded
// the way the kernel's print formats define them; timer_start's flags are
// kept raw and decoded by TimerFlags below, not by libtraceevent's printing).
//
// Thread safety: plain values.  A Recording is not synchronised; share it
// read-only.

#ifndef ISOLATION_REPLAY_RECORDING_H_
#define ISOLATION_REPLAY_RECORDING_H_

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "isolation/core/clock.h"
#include "isolation/core/topology.h"

namespace isolation::replay {

// What a recorded event is.  Field use per kind (fields not named are 0/-1):
//
//   kind                 task          other        cpu2          value               ptr / wide
//   kSwitch              next pid      prev pid     -             prev_state & 0xff   -
//                                                                 (0 = still runnable)
//   kWaking              woken pid     -            target_cpu    -                   -
//                                                   (its prev CPU)
//   kWakeup, kWakeupNew  woken pid     -            target_cpu    -                   -
//                                                   (CPU chosen)
//   kMigrate             task pid      -            orig_cpu      dest_cpu            -
//   kFork                child pid     parent pid   -             -                   -
//   kNewTask             new pid       -            -             -                   wide =
//   clone_flags kExec                pid           old pid      -             -                   -
//   kExit                pid           -            -             -                   -
//   kRseqUpdate          pid (current) -            cpu_id        mm_cid              wide =
//   node_id kTmigrCpuIdle        -             -            cpu           -                   wide
//   = nextevt, ptr = parent kTmigrCpuActive      -             -            cpu           - ptr =
//   parent, wide = wakeup kTmigrCpuNewTimer    -             -            cpu           1 for _idle
//   wide = nextevt (_idle), -1 (plain) kTmigrCpuOnline/Offline -          -            cpu - ptr =
//   parent kTmigrGroupActive,   -             numa_node    lvl           childmask           ptr =
//   group, wide = parent, kTmigrGroupInactive aux = active, aux2 = migrator kTmigrHandleRemote   -
//   -            lvl           -                   ptr = group kTmigrHandleRemoteCpu -            -
//   cpu           -                   wide = wakeup, ptr = parent kTmigrUpdateEvents   - -
//   group_lvl     child_evtcpu        ptr = group, wide = nextevt,
//                                                                                     aux =
//                                                                                     child_active,
//                                                                                     aux2 =
//                                                                                     group_active
//   kTimerStart          -             -            timer's CPU   flags (TimerFlags)  ptr = timer,
//   wide = expires (jiffies),
//                                                                                     aux = 1 if
//                                                                                     the flags are
//                                                                                     exact
//                                                                                     (readers.h)
//   kTimerExpire         -             -            -             -                   ptr = timer,
//   wide = now (jiffies) kTimerBaseIdle       -             -            cpu           is_idle -
//   kTickStop            -             -            -             success             wide =
//   dependency kTick                pid (current) -            -             - wide = the hrtimer's
//   now (CLOCK_MONOTONIC ns);
//                                                                                     hrtimer_expire_entry
//                                                                                     of the tick
//                                                                                     handler
//   kWorkExecute         -             -            -             WorkFunction        ptr = work
//   kWorkQueue           -             -            cpu (target;  WorkFunction        ptr = work,
//   wide = req_cpu
//                                                   -1 unbound)
//   kMarker              -             -            -             -                   - (ftrace
//   print: text in Recording::markers)
//
// `cpu` is always the CPU the event was recorded on and `pid` the task that
// was current there (common_pid; 0 = that CPU's idle task).
enum class EventKind : uint8_t {
  kSwitch,
  kWaking,
  kWakeup,
  kWakeupNew,
  kMigrate,
  kFork,
  kNewTask,
  kExec,
  kExit,
  kRseqUpdate,
  kTmigrCpuIdle,
  kTmigrCpuActive,
  kTmigrCpuNewTimer,
  kTmigrCpuOnline,
  kTmigrCpuOffline,
  kTmigrGroupActive,
  kTmigrGroupInactive,
  kTmigrHandleRemote,
  kTmigrHandleRemoteCpu,
  kTmigrUpdateEvents,
  kTimerStart,
  kTimerExpire,
  kTimerBaseIdle,
  kTickStop,
  kTick,
  kWorkExecute,
  kWorkQueue,
  kMarker,
};
inline constexpr int kNumEventKinds = static_cast<int>(EventKind::kMarker) + 1;

// The tracepoint an event kind comes from ("sched:sched_switch"); the one
// name a message uses for it.  kTick: "timer:hrtimer_expire_entry".
std::string_view EventKindName(EventKind kind);

// The workqueue functions a replay tells apart (workqueue_execute_start's
// `function`, by symbol name).
enum class WorkFunction : int32_t {
  kOther = 0,
  kVmstatUpdate = 1,    // mm/vmstat.c vmstat_update: the per-CPU deferred fold
  kVmstatShepherd = 2,  // mm/vmstat.c vmstat_shepherd
};

struct Event {
  Nanos time = 0;     // ns on the recording's trace clock
  uint64_t ptr = 0;   // kernel pointer identity (timer, group, work), kind-specific
  int64_t wide = 0;   // 64-bit value, kind-specific (table above)
  int32_t cpu = -1;   // CPU the event was recorded on
  int32_t pid = -1;   // task current on `cpu` (common_pid), 0 = idle
  int32_t task = -1;  // subject task (table above)
  int32_t other = -1;
  int32_t cpu2 = -1;
  int32_t value = 0;
  int16_t prio = -1;  // subject task's prio (sched events), -1 if not carried
  EventKind kind = EventKind::kMarker;
  uint8_t aux = 0;   // kind-specific small value (tmigr group: active; see readers)
  uint8_t aux2 = 0;  // kind-specific small value (tmigr group: migrator)
  friend bool operator==(const Event&, const Event&) = default;
};
static_assert(sizeof(Event) <= 56, "Event must stay small: a replay streams 10^7 of them");

// Decoded timer_list flags of timer:timer_start (include/linux/timer.h,
// 6.x layout): the CPU in the low 18 bits, then MIGRATING, DEFERRABLE,
// PINNED, IRQSAFE; the wheel index above bit 22.
struct TimerFlags {
  static constexpr uint32_t kCpuMask = 0x0003ffff;
  static constexpr uint32_t kMigrating = 0x00040000;
  static constexpr uint32_t kDeferrable = 0x00080000;
  static constexpr uint32_t kPinned = 0x00100000;
  static constexpr uint32_t kIrqSafe = 0x00200000;
  static constexpr int Cpu(uint32_t flags) { return static_cast<int>(flags & kCpuMask); }
  static constexpr bool Pinned(uint32_t flags) { return (flags & kPinned) != 0; }
  static constexpr bool Deferrable(uint32_t flags) { return (flags & kDeferrable) != 0; }
  // A timer the timer-migration hierarchy may expire on another CPU: neither
  // pinned nor deferrable (timer_list's BASE_GLOBAL; the deferrable base is
  // not handed to the hierarchy, kernel/time/timer.c).
  static constexpr bool Global(uint32_t flags) { return !Pinned(flags) && !Deferrable(flags); }
};

// sched_switch's prev_state, TASK_REPORT bits (6.x): 0 = still runnable
// (preempted or yielded), anything else = the task blocked or exited.
inline constexpr int32_t kPrevStateRunnable = 0;
inline constexpr int32_t kPrevStateDead = 0x10;    // "X" (EXIT_DEAD)
inline constexpr int32_t kPrevStateZombie = 0x20;  // "Z"
inline constexpr int32_t kPrevStateIdle = 0x80;    // "I" (TASK_REPORT_IDLE)

// clone() flags the replay reads from task:task_newtask.
inline constexpr uint64_t kCloneVm = 0x00000100;
inline constexpr uint64_t kCloneVfork = 0x00004000;
inline constexpr uint64_t kCloneThread = 0x00010000;

// Where a recording's machine description came from.
enum class InfoSource : uint8_t {
  kUnknown,   // not in the file, no flag: the reader could not tell
  kFile,      // the file says so (trace.dat header, an isolab-recording marker, perf header)
  kFlag,      // given by the caller (ReadOptions)
  kInferred,  // derived from the events (e.g. the highest CPU seen + 1)
};
std::string_view InfoSourceName(InfoSource source);

// What the file says about the machine and the kernel it was recorded on.
struct RecordingInfo {
  std::string path;
  std::string format;  // "trace.dat", "trace-cmd report", "perf script"
  int num_cpus = 0;
  InfoSource num_cpus_source = InfoSource::kUnknown;
  // The machine's layout: per-CPU ids (an isolab-recording marker, perf's
  // `--header -I`), or an hwloc synthetic string (ReadOptions::topology);
  // both empty if unknown (MachineTopology then assumes one LLC).
  std::vector<int> core_of, llc_of, node_of, package_of;
  std::string topology;
  InfoSource topology_source = InfoSource::kUnknown;
  std::string kernel_release;  // `uname -r`, e.g. "6.18.44-fc-v1147"
  InfoSource kernel_source = InfoSource::kUnknown;
  std::string isolcpus;  // boot parameters the kernel ran with, "" = none
  std::string nohz_full;
  InfoSource isolation_source = InfoSource::kUnknown;
  int hz = 0;  // CONFIG_HZ; 0 = unknown
  InfoSource hz_source = InfoSource::kUnknown;
  std::string trace_clock;    // "mono", "local", "perf", ... ("" = unknown)
  bool ns_timestamps = true;  // false: the text printed microseconds (times are multiples of 1000)
  std::string recorder;       // "isolab record", "trace-cmd", "perf", ...

  // Kernel version as (major, minor), {0, 0} if unknown.
  std::array<int, 2> KernelVersion() const;
  // Notes a reader adds about what the file lacks or how it was read
  // ("timer flags misprinted: ...").  Printed by isolab replay.
  std::vector<std::string> notes;
};

// The recorded machine as a Topology (core/topology.h): the per-CPU ids if
// the file had them, else the synthetic string, else `num_cpus` CPUs of one
// package sharing one LLC (and `assumed`, if given, is set true).  Errors:
// ids inconsistent with num_cpus, a bad synthetic string, a CPU count that
// differs from the topology's.
absl::StatusOr<Topology> MachineTopology(const RecordingInfo& info, bool* assumed = nullptr);

// Per-pid task names (the latest comm seen for the pid).  Bounded by the
// number of distinct pids in the recording.
using Comms = absl::flat_hash_map<int32_t, std::string>;

// What a reader saw, besides the events it delivered.
struct ReadStats {
  int64_t lines = 0;    // text readers: lines read; trace.dat: records read
  int64_t events = 0;   // events delivered
  int64_t skipped = 0;  // records of events no mechanism needs
  std::array<int64_t, kNumEventKinds> per_kind{};
  int64_t lost_events = 0;  // the tracer's own "lost events" / "missed" records
  int64_t bad_lines = 0;    // text readers: malformed lines skipped (ReadOptions::max_bad_lines)
  int64_t reordered = 0;  // events older than their predecessor, within max_time_skew: time clamped
  absl::flat_hash_map<std::string, int64_t> skipped_names;  // tracepoint -> count (bounded)
};

// Receives a reader's stream.  OnInfo once, before the first event; OnEvent
// per event in order; a non-OK status from either stops the reader, which
// returns that status.
class EventSink {
 public:
  virtual ~EventSink() = default;
  virtual absl::Status OnInfo(const RecordingInfo& info) = 0;
  virtual absl::Status OnEvent(const Event& event) = 0;
  // A task's name, whenever a reader learns it (before the event naming it).
  virtual void OnComm(int32_t pid, std::string_view comm) {
    (void)pid;
    (void)comm;
  }
  // The text of an ftrace print event (trace_marker), with its event.
  virtual void OnMarker(const Event& event, std::string_view text) {
    (void)event;
    (void)text;
  }
};

// A whole recording in memory (ReadRecording, readers.h).
struct Recording {
  RecordingInfo info;
  std::vector<Event> events;
  Comms comms;
  std::vector<std::string> markers;  // kMarker events' texts, in order (event.value indexes it)
  ReadStats stats;

  // Number of events of `kind`.
  int64_t Count(EventKind kind) const { return stats.per_kind[static_cast<int>(kind)]; }
  // Feeds the stored stream to `sink` exactly as a reader would.
  absl::Status Play(EventSink& sink) const;
};

// The event kinds each mechanism's replay needs, and a message naming those
// a recording lacks ("" when it has them all): e.g. mm_cid needs
// rseq:rseq_update and sched:sched_switch.  `mechanism` is "mm_cid",
// "tmigr", "idle_select" or "vmstat".
std::vector<EventKind> RequiredEvents(std::string_view mechanism);
std::string MissingEventsMessage(std::string_view mechanism, const ReadStats& stats);

}  // namespace isolation::replay

#endif  // ISOLATION_REPLAY_RECORDING_H_
