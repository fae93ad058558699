// SPDX-License-Identifier: GPL-2.0-or-later
// look_options.h (internal): the options and helpers for looking at a run --
// timeline traces (--trace, --trace_max_events, --trace_cpus), figures
// (--plot, --plot_format) and rtla-style noise histograms (--hist,
// --bucket_size, --entries, --no_zero_lines).  isolab defines those flags
// and validates them into these structs (tools/isolab/look_flags.cc);
// experiments see only the structs.

#ifndef ISOLATION_LIB_EXPERIMENTS_LOOK_OPTIONS_H_
#define ISOLATION_LIB_EXPERIMENTS_LOOK_OPTIONS_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "isolation/core/isolation_config.h"
#include "isolation/core/topology.h"
#include "isolation/runtime/noise_meter.h"
#include "isolation/runtime/trace.h"

namespace isolation::experiments {

struct TraceOptions {
  std::string path;                // --trace ('' = off)
  int64_t max_events = 1'000'000;  // --trace_max_events
  CpuMask cpus;                    // --trace_cpus (nbits 0 = every CPU)
  std::string cpus_text;           // as given
};

struct PlotOptions {
  std::string dir;                   // --plot ('' = off)
  std::vector<std::string> formats;  // --plot_format: png, svg, pdf
};

struct HistOptions {
  bool print = false;           // --hist: print the table in the text output
  NoiseHistogramOptions shape;  // --bucket_size, --entries
  bool no_zero_lines = false;   // --no_zero_lines
  bool oslat = false;           // --oslat: each measuring CPU in oslat's own format
};

struct LookOptions {
  TraceOptions trace;
  PlotOptions plot;
  HistOptions hist;
};

// The trace file of --trace, nullptr when tracing is off.  Errors: the path
// cannot be written (InvalidArgument naming it).
absl::StatusOr<std::unique_ptr<TraceFile>> OpenTrace(const TraceOptions& options);

// --trace_cpus must name CPUs of the experiment's machine.
absl::Status CheckTraceCpus(const TraceFile* file, const Topology& topology);

// A run of `file` (nullptr when tracing is off) with the CPU roles of
// `isolation`.
absl::StatusOr<std::unique_ptr<TraceRun>> StartTraceRun(TraceFile* file, std::string name,
                                                        const Topology& topology,
                                                        const IsolationConfig& isolation);

// Writes `json` to <dir>/<stem>.json and draws its figures there with
// tools/plot (python3-matplotlib).  Errors: FailedPrecondition when python3
// or matplotlib is missing (the message says what to install), InvalidArgument
// when the plot script rejects its input, Internal otherwise.
absl::Status DrawFigures(const PlotOptions& options, const std::string& stem,
                         const nlohmann::json& json);

// The histogram of per-CPU noise-meter results as JSON: {"unit": "us",
// "bucket_size", "entries", "cpus": [{"cpu", "count", "min", "avg", "max",
// "over", "buckets": [[index_us, count], ...]}]}; zero buckets are left out
// with no_zero_lines.  The bucket counts plus "over" add up to "count".
nlohmann::json NoiseHistogramJson(const std::vector<std::pair<int, NoiseResult>>& per_cpu,
                                  bool no_zero_lines);

}  // namespace isolation::experiments

#endif  // ISOLATION_LIB_EXPERIMENTS_LOOK_OPTIONS_H_
