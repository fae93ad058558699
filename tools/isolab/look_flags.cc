// SPDX-License-Identifier: GPL-2.0-or-later
#include "isolab/look_flags.h"

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <set>
#include <string>
#include <utility>

#include "absl/flags/flag.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "isolation/core/cpumask.h"
#include "isolation/runtime/noise_meter.h"
#include "isolation/runtime/trace.h"
#include "isolab/flag_parser.h"

ABSL_FLAG(
    std::string, trace, "",
    "Write a timeline trace (Chrome trace-event JSON: ui.perfetto.dev, chrome://tracing) of the "
    "experiment's runs to this file");
ABSL_FLAG(int64_t, trace_max_events, 1000000,
          "Bound on the events of the --trace file (1..100000000); a run that hits its share is "
          "truncated "
          "and says so in the file");
ABSL_FLAG(std::string, trace_cpus, "", "Trace only these CPUs (cpulist, e.g. 0-7); '' = every CPU");
ABSL_FLAG(
    std::string, plot, "",
    "Draw the experiment's figures (PNG and SVG, tools/plot with python3-matplotlib) into this "
    "directory, next to the JSON they come from");
ABSL_FLAG(std::string, plot_format, "png,svg",
          "Figure formats for --plot: png, svg, pdf (comma-separated)");
ABSL_FLAG(bool, hist, false,
          "Print the noise meter's gaps as an `rtla osnoise hist`-style table (always in --json)");
ABSL_FLAG(int32_t, bucket_size, 1, "Histogram bucket size in us (rtla --bucket-size), 1..999999");
ABSL_FLAG(int32_t, entries, 256,
          "Histogram buckets (rtla --entries), 10..1000000; larger gaps count as 'over'");
ABSL_FLAG(bool, oslat, false,
          "Print the noise meter's result per measuring CPU in oslat's own format (its bucket "
          "lines without the empty ones, as oslat -z; Minimum, Average, Maximum, Max-Min, "
          "Duration); needs --bucket_size=1");
ABSL_FLAG(bool, no_zero_lines, false,
          "Leave out histogram rows where no CPU has a sample (rtla's default; rtla --with-zeros "
          "prints them)");

// Documented ranges, checked by the flag parser for every subcommand (flag_parser.h).
ISOLAB_FLAG_RANGE(trace_max_events, 1, 100000000);
ISOLAB_FLAG_RANGE(bucket_size, 1, 999999);
ISOLAB_FLAG_RANGE(entries, 10, 1000000);

namespace isolation::isolab {
namespace {

using experiments::LookOptions;

const std::set<std::string> kPlotFormats = {"png", "svg", "pdf"};
const std::set<std::string> kPlotSubcommands = {"mmcid",  "tmigr",     "idle",
                                                "vmstat", "reproduce", "replay"};

}  // namespace

absl::StatusOr<LookOptions> LookOptionsFromFlags() {
  LookOptions o;
  o.trace.path = absl::GetFlag(FLAGS_trace);
  o.trace.max_events = absl::GetFlag(FLAGS_trace_max_events);
  if (o.trace.max_events < 1 || o.trace.max_events > kMaxTraceEvents) {
    return absl::InvalidArgumentError(
        absl::StrCat("--trace_max_events=", o.trace.max_events, ": want 1..", kMaxTraceEvents));
  }
  o.trace.cpus_text = absl::GetFlag(FLAGS_trace_cpus);
  if (!o.trace.cpus_text.empty()) {
    absl::StatusOr<CpuMask> m = CpuMask::Parse(o.trace.cpus_text, kMaxCpus);
    if (!m.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--trace_cpus='", o.trace.cpus_text, "': ", m.status().message()));
    }
    if (m->Empty())
      return absl::InvalidArgumentError(
          absl::StrCat("--trace_cpus='", o.trace.cpus_text, "' is empty"));
    o.trace.cpus = *std::move(m);
  }
  o.plot.dir = absl::GetFlag(FLAGS_plot);
  const std::string formats = absl::GetFlag(FLAGS_plot_format);
  for (absl::string_view f : absl::StrSplit(formats, ',', absl::SkipWhitespace())) {
    const std::string fmt(absl::StripAsciiWhitespace(f));
    if (!kPlotFormats.count(fmt)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--plot_format=", formats, ": unknown format '", fmt, "' (want png, svg, pdf)"));
    }
    if (std::find(o.plot.formats.begin(), o.plot.formats.end(), fmt) == o.plot.formats.end()) {
      o.plot.formats.push_back(fmt);
    }
  }
  if (o.plot.formats.empty())
    return absl::InvalidArgumentError(absl::StrCat("--plot_format='", formats, "' is empty"));
  if (!o.plot.dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(o.plot.dir, ec);
    if (ec || !std::filesystem::is_directory(o.plot.dir) || access(o.plot.dir.c_str(), W_OK) != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("--plot=", o.plot.dir, ": not a writable directory",
                       ec ? absl::StrCat(" (", ec.message(), ")") : ""));
    }
  }
  o.hist.print = absl::GetFlag(FLAGS_hist);
  o.hist.shape.bucket_size_us = absl::GetFlag(FLAGS_bucket_size);
  o.hist.shape.entries = absl::GetFlag(FLAGS_entries);
  o.hist.no_zero_lines = absl::GetFlag(FLAGS_no_zero_lines);
  o.hist.oslat = absl::GetFlag(FLAGS_oslat);
  if (o.hist.oslat && o.hist.shape.bucket_size_us != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("--oslat with --bucket_size=", o.hist.shape.bucket_size_us,
                     ": oslat's format has 1 us buckets"));
  }
  if (absl::Status s = ValidateNoiseHistogram(o.hist.shape); !s.ok()) return s;
  return o;
}

std::vector<std::string> LookFlagNames(std::string_view subcommand) {
  std::vector<std::string> names = {"trace", "trace_max_events", "trace_cpus"};
  if (kPlotSubcommands.count(std::string(subcommand))) {
    names.push_back("plot");
    names.push_back("plot_format");
  }
  return names;
}

std::vector<std::string> HistFlagNames() {
  return {"hist", "bucket_size", "entries", "no_zero_lines", "oslat"};
}

}  // namespace isolation::isolab
