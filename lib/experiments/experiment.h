// SPDX-License-Identifier: GPL-2.0-or-later
// -----------------------------------------------------------------------------
// experiment.h  (internal: used by tools/isolab and tests, not installed)
// -----------------------------------------------------------------------------
//
// An experiment reproduces one kernel thread's measurement on the model
// machine and reports (a) a JSON document with the keys its issue defines and
// (b) rows for `isolab reproduce`: what the kernel thread reported next to
// what we measure.  Each mechanism adds one experiment; `AllExperiments()`
// (experiments.cc) lists them.
//
// Options come from absl flags declared in common_flags.h (--topology,
// --isolcpus, --nohz_full, --seed, --quick) plus each experiment's own flags
// (listed by flag_names() so `isolab <name> --help` can show them).
//
// Thread safety: Run() is called from one thread; an experiment may start
// drivers and threads internally but joins them before returning.

#ifndef ISOLATION_LIB_EXPERIMENTS_EXPERIMENT_H_
#define ISOLATION_LIB_EXPERIMENTS_EXPERIMENT_H_

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/status/statusor.h"
#include "isolation/core/isolation_config.h"
#include "experiments/look_options.h"

namespace isolation::experiments {

// Progress lines on stderr, only when stderr is a terminal (never in --json
// output, which goes to stdout).
class Progress {
 public:
  explicit Progress(std::string_view experiment);
  void Update(std::string_view what, double fraction);  // fraction in [0, 1]
  void Done();

 private:
  std::string experiment_;
  bool enabled_;
};

struct ReproduceRow {
  std::string experiment;       // "mmcid", "tmigr", "idle", "vmstat", "topology"
  std::string figure;           // what is compared, e.g. "task_mm_cid_work duration"
  std::string kernel_reported;  // the kernel thread's figure, with its source
  std::string measured;         // ours, with units and a "modelled"/"host" label
};

struct ExperimentReport {
  nlohmann::json json;                 // the subcommand's --json document
  std::vector<ReproduceRow> rows;      // rows for `isolab reproduce`
  int64_t invariant_violations = 0;    // must be 0 for correct variants
  std::string text;                    // human-readable table for the subcommand
  // Warnings about the configuration the experiment ran (an ignored or
  // dropped boot parameter, a check that did not apply).  RunExperiment adds
  // the --isolcpus / --nohz_full warnings; an experiment adds its own.
  std::vector<IsolationWarning> warnings;
};

struct RunOptions {
  bool quick = false;  // shorter runs (tests, CI smoke); figures labelled as such
  uint64_t seed = 1;
  // --trace: where the experiment records the runs it traces (nullptr: off).
  // An experiment calls trace->PlanRuns(n) and StartTraceRun() per run
  // (look_options.h); its file comment (and docs/looking.md) names them.
  TraceFile* trace = nullptr;
  HistOptions hist{};  // --hist, --bucket_size, --entries, --no_zero_lines
};

class Experiment {
 public:
  virtual ~Experiment() = default;
  virtual std::string_view name() const = 0;     // subcommand name, e.g. "mmcid"
  virtual std::string_view summary() const = 0;  // one line for --help
  // Names of the absl flags this experiment reads (for per-subcommand help).
  virtual std::vector<std::string> flag_names() const = 0;
  // Runs with the current flag values.  Errors: bad flag values (message names
  // the flag and value) -> isolab exits 2.
  virtual absl::StatusOr<ExperimentReport> Run(const RunOptions& options, Progress& progress) = 0;
};

// Runs `experiment` as isolab does.  Before the run, the warnings of the
// isolation configuration given by --topology / --isolcpus / --nohz_full go
// to `warn` (one line each: "isolab <name>: warning: <parameter>: <message>");
// after it, those the experiment added.  All of them are listed in
// report.warnings and in the JSON under "warnings" ([{parameter, message}]),
// and the JSON gets "invariant_violations".  Errors: the experiment's.
absl::StatusOr<ExperimentReport> RunExperiment(Experiment& experiment, const RunOptions& options,
                                               Progress& progress, std::FILE* warn);

// Every registered experiment, in `isolab reproduce` order.
std::vector<std::unique_ptr<Experiment>> AllExperiments();
// Names of experiments that the issues call for but that are not built yet.
std::vector<std::string> MissingExperiments();

}  // namespace isolation::experiments

#endif  // ISOLATION_LIB_EXPERIMENTS_EXPERIMENT_H_
