// SPDX-License-Identifier: GPL-2.0-or-later
// `isolab record -o FILE [--duration=S] [--record_events=...] [-- COMMAND ...]`:
// the host's events into a trace.dat (replay/recorder.h).  Not an experiment:
// it reports on stderr and its exit status is 0 on success, 2 on bad input or
// missing privileges, 1 when the recording fails.

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "isolab/flag_parser.h"
#include "isolab/subcommands.h"
#include "isolation/replay/recorder.h"

ABSL_FLAG(std::string, output, "", "The trace.dat to write (also -o FILE)");
ABSL_FLAG(double, duration, 0, "Seconds to record when no command is given after --");
ABSL_FLAG(std::string, record_events, absl::StrJoin(isolation::replay::DefaultRecordEvents(), ","),
          "Events to record, system:event (system:* for all of a system)");
ABSL_FLAG(int32_t, record_buffer_kb, isolation::replay::RecordOptions{}.buffer_kb_per_cpu,
          "Per-CPU ring buffer of the recording's tracefs instance, KiB");

// Documented ranges, checked by the flag parser for every subcommand (flag_parser.h).
ISOLAB_FLAG_RANGE(duration, 0, 3600);
ISOLAB_FLAG_RANGE(record_buffer_kb, 64, 1048576);

namespace isolation::isolab {

int RecordMain(const std::vector<std::string>& raw) {
  const std::vector<std::string> allowed = {"output", "duration", "record_events",
                                            "record_buffer_kb"};
  std::vector<std::string> args;
  for (size_t i = 0; i < raw.size(); ++i) {
    if (raw[i] == "-o" && i + 1 < raw.size()) {
      args.push_back(absl::StrCat("--output=", raw[++i]));
    } else {
      args.push_back(raw[i]);
    }
  }
  std::vector<std::string> positional, command;
  args = SplitPositional(args, allowed, &positional, &command);
  bool help = false;
  const std::string error = ParseSubcommandFlags(args, allowed, &help);
  if (help) {
    std::printf(
        "usage: isolab record -o FILE [--duration=S] [--record_events=LIST] [--record_buffer_kb=N] "
        "[-- COMMAND ...]\n\n"
        "Records the host's scheduler, rseq, timer, timer-migration and workqueue events (root) "
        "into a trace.dat\n"
        "that isolab replay and trace-cmd report read.  Its own tracefs instance, events only; "
        "every tracing\n"
        "setting is restored, also when interrupted (Ctrl-C ends the recording and keeps the "
        "file).\n");
    return 0;
  }
  if (!error.empty()) {
    std::fprintf(stderr, "isolab record: %s\n", error.c_str());
    return 2;
  }
  if (!positional.empty()) {
    std::fprintf(stderr, "isolab record: unexpected argument '%s' (a command goes after --)\n",
                 absl::CHexEscape(positional[0]).c_str());
    return 2;
  }
  replay::RecordOptions o;
  o.output_path = absl::GetFlag(FLAGS_output);
  const double seconds = absl::GetFlag(FLAGS_duration);
  if (!std::isfinite(seconds) || seconds < 0 || seconds > 3600) {
    std::fprintf(stderr, "isolab record: --duration=%g outside [0, 3600] seconds\n", seconds);
    return 2;
  }
  o.duration = static_cast<Nanos>(seconds * 1e9);
  o.command = command;
  absl::StatusOr<std::vector<std::string>> events =
      ParseNameListFlag("record_events", absl::GetFlag(FLAGS_record_events), /*allow_empty=*/true);
  if (!events.ok()) {
    std::fprintf(stderr, "isolab record: %s\n", std::string(events.status().message()).c_str());
    return 2;
  }
  o.events = *std::move(events);
  o.buffer_kb_per_cpu = absl::GetFlag(FLAGS_record_buffer_kb);
  absl::StatusOr<replay::RecordSummary> s = replay::RecordHost(o);
  if (!s.ok()) {
    std::fprintf(stderr, "isolab record: %s\n", std::string(s.status().message()).c_str());
    const bool bad_input = absl::IsInvalidArgument(s.status()) ||
                           absl::IsPermissionDenied(s.status()) || absl::IsNotFound(s.status());
    return bad_input ? 2 : 1;
  }
  std::fprintf(
      stderr, "isolab record: %s: %lld bytes, %d CPUs, %.3f s%s%s%s%s\n", o.output_path.c_str(),
      static_cast<long long>(s->bytes_written), s->cpus, static_cast<double>(s->duration) / 1e9,
      s->command_exit_status >= 0
          ? absl::StrCat(", command exit status ", s->command_exit_status).c_str()
          : "",
      s->events_lost > 0
          ? absl::StrCat(", ", s->events_lost, " events LOST (a larger --record_buffer_kb)").c_str()
          : "",
      s->interrupted ? ", interrupted" : "", s->stopped_at_bound ? ", stopped at its bound" : "");
  if (!s->events_missing.empty()) {
    std::fprintf(stderr, "isolab record: not on this kernel: %s\n",
                 absl::StrJoin(s->events_missing, ", ").c_str());
  }
  return 0;
}

}  // namespace isolation::isolab
