// SPDX-License-Identifier: GPL-2.0-or-later
// -----------------------------------------------------------------------------
// recorder.h
// -----------------------------------------------------------------------------
//
// Records the running kernel's scheduler, rseq, timer, timer-migration and
// workqueue events into a trace.dat (trace-cmd's file format, version 6),
// the live half of `isolab record`.  It works through libtracefs in a tracefs
// instance of its own ("isolab-record-<pid>"): events only, no function
// tracer (which `trace-cmd record` insists on), nothing changed at the top
// level.  Each CPU's ring buffer is drained while recording into a
// temporary file beside the output; at the end the file is assembled: the
// ring buffer's headers, the formats of the recorded events and of
// ftrace:print, the kernel symbols the recorded function pointers name (so
// `trace-cmd report` prints function=vmstat_update), the saved comms, the
// uname and trace-clock options, and the CPUs' pages.  `trace-cmd report`,
// libtracecmd and this library's readers (readers.h) read it.
//
// The first event of the recording is an `isolab-recording` marker
// (ftrace:print): JSON with the kernel release, the CPU count, HZ (from
// /proc/config.gz or /boot/config-<release>, when readable), the trace
// clock, the isolation the kernel booted with (isolcpus, nohz_full, the
// command line), the topology (per-CPU core, LLC, node and package ids) and
// the recorded command, so that a replay needs no flags.
//
// Kernel / tool counterpart: trace-cmd record (lib/trace-cmd/trace-output.c
// writes the same layout) and the kernel's tracefs (instances/, per_cpu/
// cpuN/trace_pipe_raw, trace_marker).
//
// Bounds and restoration: recording stops at RecordOptions::max_duration or
// when the per-CPU data reaches max_bytes (RecordSummary says which).  The
// instance is removed, a tracefs mount the recorder made is unmounted and the
// temporary files are deleted on every path, errors included; SIGINT and
// SIGTERM during the recording are forwarded to the command, end the
// recording, and the file is still written (RecordSummary::interrupted).
// Stale instances of dead recorders (isolab-record-<pid> whose pid is gone)
// are removed first.
//
// Errors: PermissionDenied without root (CAP_SYS_ADMIN) or tracefs, naming
// what failed; InvalidArgument for bad options (an empty output path, a
// directory that is not writable, a duration that is not positive without a
// command, an event list without sched:sched_switch); NotFound when none of
// the events exist; Internal for an I/O error, naming the file.
//
// Thread safety: one recording per process at a time (it installs signal
// handlers); RecordHost is called from one thread and starts one drain
// thread per CPU, joined before it returns.

#ifndef ISOLATION_REPLAY_RECORDER_H_
#define ISOLATION_REPLAY_RECORDER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "isolation/core/clock.h"

namespace isolation::replay {

// The events `isolab record` enables by default, as "system:event" ("*" for
// every event of a system).
std::vector<std::string> DefaultRecordEvents();

struct RecordOptions {
  std::string output_path;           // the trace.dat to write
  std::vector<std::string> command;  // argv to run; the recording lasts until it exits
  Nanos duration = 0;                // without a command: how long to record (> 0)
  std::vector<std::string> events = DefaultRecordEvents();
  int buffer_kb_per_cpu = 8192;  // the instance's per-CPU ring buffer, [64, 1 << 20]
  std::string clock = "mono";    // trace_clock: mono keeps the tmigr times comparable
  Nanos max_duration = 3600 * kNsPerSec;
  int64_t max_bytes = int64_t{4} << 30;  // of per-CPU data, all CPUs together
};

struct RecordSummary {
  int cpus = 0;
  int64_t bytes_written = 0;
  int64_t events_lost = 0;  // ring-buffer overruns (per_cpu/cpuN/stats)
  Nanos duration = 0;
  int command_exit_status = -1;  // -1: no command; 128 + signal if it was killed
  std::string kernel_release;
  std::vector<std::string> events_missing;  // requested but not on this kernel
  bool interrupted = false;                 // SIGINT / SIGTERM ended it
  bool stopped_at_bound = false;            // max_duration or max_bytes ended it
};

absl::StatusOr<RecordSummary> RecordHost(const RecordOptions& options);

// What a trace.dat's header says (versions 6 and 7).
struct TraceDatHeader {
  int file_version = 0;
  int cpus = 0;
  int page_size = 0;
  bool compressed = false;  // v7 sections compressed (compression names the algorithm)
  std::string compression;
  std::string uname;  // the UNAME option, "" if absent
  std::string kernel_release;
  std::string trace_clock;  // the selected clock of the TRACECLOCK option, "" if absent
};
// Errors: InvalidArgument naming the file and the byte offset for a file that
// is not a trace.dat, truncated or corrupt; NotFound if it cannot be opened.
// Reads at most the header sections (bounded by the file's size).
absl::StatusOr<TraceDatHeader> ReadTraceDatHeader(const std::string& path);

}  // namespace isolation::replay

#endif  // ISOLATION_REPLAY_RECORDER_H_
