// SPDX-License-Identifier: GPL-2.0-or-later
// -----------------------------------------------------------------------------
// readers.h
// -----------------------------------------------------------------------------
//
// Reads a recorded kernel trace into the recording model (recording.h), from
// any of the three forms a kernel engineer brings:
//
//   trace.dat         trace-cmd's binary file (v6 / v7, also what
//                     `isolab record` writes), read through libtracecmd
//                     (tracecmd_open, tracecmd_iterate_events: every CPU's
//                     records merged in time order).
//   trace-cmd report  the text `trace-cmd report [-t] [-N] [-R] FILE` prints:
//                     with or without the sched plugins' short forms
//                     ("bash:6465 [120] R ==> swapper/0:0 [120]"), raw
//                     fields (-R), microsecond or nanosecond (-t) times, one
//                     or several buffers ("probe:" prefixes).
//   perf script       the text `perf script [--ns] [--header [-I]]` prints for
//                     `perf sched record` or `perf record -e sched:... -e
//                     rseq:... -e timer_migration:...`.
//
// The machine (CPU count, topology), the kernel release, HZ and the isolation
// the kernel ran with come from the file where it holds them (an
// `isolab-recording` marker, the trace.dat header, `cpus=N`, perf's header),
// from ReadOptions otherwise; RecordingInfo says which (InfoSource).  Events
// no mechanism needs are counted and skipped.
//
// What a text form cannot carry: `timer:timer_start`'s flags are misprinted
// by libtraceevent's pretty printer (it shows D|P|I on every timer), so from
// pretty text only the timer's CPU, wheel index and MIGRATING bit are kept
// and the event says so (Event::aux == 0); `trace-cmd report -R` and
// trace.dat carry them exactly (aux == 1).  Microsecond text loses the
// nanoseconds (RecordingInfo::ns_timestamps false).
//
// Any of them may be gzip'ed (FILE.gz: detected by its magic bytes).
//
// Errors: a file that cannot be opened, is empty, truncated, corrupt or of
// another kind, a line that does not parse, an event whose fields are
// missing or out of range, a stream that goes back in time by more than
// ReadOptions::max_time_skew, more events or longer lines than the bounds
// below: InvalidArgument (or NotFound / ResourceExhausted / DataLoss), the
// message naming the file and the line (text) or record (trace.dat) and the
// escaped offending text.  `ReadOptions::max_bad_lines` > 0 lets a text
// reader skip that many malformed lines (counted in ReadStats) instead.
// Memory is bounded by the longest line and the per-pid name table, never by
// the number of events (except ReadRecording, bounded by max_events).
//
// Thread safety: each call is independent; a sink is called on the caller's
// thread.

#ifndef ISOLATION_REPLAY_READERS_H_
#define ISOLATION_REPLAY_READERS_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "isolation/core/clock.h"
#include "isolation/replay/recording.h"

namespace isolation::replay {

enum class TraceFormat : uint8_t {
  kAuto,  // decide from the file's first bytes (DetectFormat)
  kTraceDat,
  kTraceCmdReport,
  kPerfScript,
};
std::string_view TraceFormatName(TraceFormat format);
// "dat"/"trace.dat", "report"/"trace-cmd", "perf"/"perf-script", "auto".
absl::StatusOr<TraceFormat> ParseTraceFormat(std::string_view name);

struct ReadOptions {
  TraceFormat format = TraceFormat::kAuto;
  // Used when the file does not say (RecordingInfo::*_source kFlag); 0 / ""
  // = unknown.  A file that states a CPU count wins over num_cpus unless
  // override_file is set.
  int num_cpus = 0;
  std::string topology;        // hwloc synthetic string
  std::string kernel_release;  // e.g. "6.18"
  std::string isolcpus;        // the boot parameters the recorded kernel had
  std::string nohz_full;
  int hz = 0;
  bool override_file = false;
  // Bounds.  A text line longer than max_line_bytes, more events than
  // max_events (ReadRecording only; the streaming ReadTrace has no event
  // bound), a CPU number >= max_cpus: an error naming the bound.
  int64_t max_line_bytes = 1 << 16;
  int64_t max_events = 50'000'000;
  int max_cpus = 8192;
  // A gzip'ed trace.dat is decompressed into memory (libtracecmd reads
  // files): at most this many bytes.  gzip'ed text streams.
  int64_t max_decompressed_bytes = int64_t{4} << 30;
  // Malformed text lines tolerated (skipped and counted) before the reader
  // fails; 0 = the first one is an error.
  int64_t max_bad_lines = 0;
  // How far an event may be older than the one before it: such an event
  // gets its predecessor's time (ReadStats::reordered); a larger step back
  // is an error.  trace.dat's merge and trace-cmd report never step back;
  // perf script can, by a little, when its reordering buffer overflows.
  Nanos max_time_skew = kNsPerMs;
  // Which ring buffer of a file holding several (trace-cmd's instances,
  // "probe:" prefixes in report text): "" = the top-level one if it has
  // events, else the first instance that has (trace.dat); the buffer of the
  // first event line (text).
  std::string buffer;
};

// The format of `path` from its first bytes: trace.dat magic, perf script's
// "# ========" header or event lines, trace-cmd report's "cpus=" line or
// event lines.  Errors: cannot open, empty, none of the three.
absl::StatusOr<TraceFormat> DetectFormat(const std::string& path);

// Streams the recording in `path` to `sink` (OnInfo, then every event in
// order).  `stats`, if given, receives the reader's counts (also on error:
// what was read until then).
absl::Status ReadTrace(const std::string& path, const ReadOptions& options, EventSink& sink,
                       ReadStats* stats = nullptr);

// Text readers on a buffer (fuzzing, tests): `name` stands for the file name
// in messages.
absl::Status ReadTraceText(std::string_view text, std::string_view name, TraceFormat format,
                           const ReadOptions& options, EventSink& sink, ReadStats* stats = nullptr);

// The whole recording in memory (at most options.max_events events).
absl::StatusOr<Recording> ReadRecording(const std::string& path, const ReadOptions& options = {});

// Parses the JSON of `isolab-recording` markers into `info` (fields the
// marker has; InfoSource kFile).  `text` is the marker's text after
// "isolab-recording ".  Errors: not JSON, wrong types, values out of range.
absl::Status ApplyRecordingMarker(std::string_view text, RecordingInfo& info);

}  // namespace isolation::replay

#endif  // ISOLATION_REPLAY_READERS_H_
