// SPDX-License-Identifier: GPL-2.0-or-later
// -----------------------------------------------------------------------------
// experiment.h  (internal: used by tools/isolab and tests, not installed)
// -----------------------------------------------------------------------------
//
// An experiment reproduces one kernel thread's measurement on the model
// machine.  Each is a function (one header per experiment, e.g.
// idle_experiment.h):
//
//   absl::StatusOr<ExperimentReport> RunIdleExperiment(const CommonOptions&,
//                                                      const IdleExperimentOptions&,
//                                                      Progress&);
//
// taking the options every experiment shares (CommonOptions: the model
// machine, its isolation, seed, --quick, --trace, --hist) and its own options
// struct, whose defaults are the seeds' setup.  It validates its options
// itself (InvalidArgument naming the option in isolab's flag spelling, e.g.
// "--idle_samples=-5", so a library caller and an isolab user read the same
// message) and returns a report that renders as a table (`text`) and as
// JSON (`json`), plus the rows of `isolab reproduce`.  No experiment reads a
// flag: tools/isolab defines the flags and maps them to these structs.
//
// Thread safety: an experiment is called from one thread; it may start
// drivers and threads internally but joins them before returning.  Two
// experiments may run concurrently (the topology cache is locked).

#ifndef ISOLATION_LIB_EXPERIMENTS_EXPERIMENT_H_
#define ISOLATION_LIB_EXPERIMENTS_EXPERIMENT_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/status/statusor.h"
#include "experiments/look_options.h"
#include "isolation/core/isolation_config.h"
#include "isolation/core/topology.h"

namespace isolation::experiments {

// The seeds' machine: 128 CPUs, isolcpus=1-31,33-63,65-95,97-127.
inline constexpr char kSeedTopology[] = "package:2 l3cache:4 core:16 pu:1";
inline constexpr char kSeedIsolcpus[] = "1-31,33-63,65-95,97-127";

// Options every experiment takes (isolab: --topology, --isolcpus,
// --nohz_full, --seed, --quick, --trace*, --hist*, --real_cpus,
// --allow_oversubscribed).
struct CommonOptions {
  // Model machine: "seed" (kSeedTopology), "host", or an hwloc synthetic
  // description.
  std::string topology = "seed";
  // isolcpus= value: "seed" (kSeedIsolcpus; with topology "host", the host's
  // own boot configuration), "" for none, or a kernel isolcpus= value.
  std::string isolcpus = "seed";
  std::string nohz_full = "";  // nohz_full= value (cpulist), "" for none
  uint64_t seed = 1;           // random seed of the simulator
  bool quick = false;          // shorter runs (tests, CI smoke); figures labelled as such
  // Where the experiment records the runs it traces (nullptr: off).  An
  // experiment calls trace->PlanRuns(n) and StartTraceRun() per run
  // (look_options.h); its file comment (and docs/looking.md) names them.
  TraceFile* trace = nullptr;
  HistOptions hist{};  // noise histograms, for experiments that run the noise meter
  // The machine of the real-thread parts (real_model.h): sized to the host
  // by default.  real_cpus: its CPU count (--real_cpus; 0 = host-sized);
  // more than the host offers is refused unless allow_oversubscribed
  // (--allow_oversubscribed), and then labelled OVERSUBSCRIBED.
  int real_cpus = 0;
  bool allow_oversubscribed = false;
  // The host's usable CPU count; 0 = this process's (sched_getaffinity).
  // Tests inject a host size here; isolab has no flag for it.
  int host_cpus = 0;
};

// The model machine of `options.topology`.  The last topology loaded is kept
// (isolab loads it once for the warnings and once in the experiment, and a
// large synthetic one takes seconds).  Errors: the topology's parser's,
// naming the bad value.
absl::StatusOr<Topology> LoadTopology(const CommonOptions& options);
// The isolation of `options` (isolcpus, nohz_full) on `topology`.
absl::StatusOr<IsolationConfig> LoadIsolation(const CommonOptions& options,
                                              const Topology& topology);
// The warnings of the configuration `options` gives (an ignored or dropped
// boot parameter); empty when it does not load (the experiment reports that).
std::vector<IsolationWarning> ConfigurationWarnings(const CommonOptions& options);

// What a run is expected to cost, stated before it starts.  isolab refuses a
// run whose estimate passes the budget (kRunBudgetSeconds, kRunBudgetBytes)
// unless --force is given, prints the estimate once on stderr when stderr is
// not a terminal, and reports the time the run took beside it (JSON "cost").  The figures
// are estimates from per-unit costs measured on the reference host (a 2-vCPU
// KVM guest; README.md, "isolab"); their purpose is the order of
// magnitude, not a prediction.
struct RunCost {
  double seconds = 0;  // wall time
  double bytes = 0;    // peak resident memory
  std::string basis;   // what dominates, e.g. "scan: 6 strategies x 301 reps x 8192 CPUs"
};
// The budget: 30 minutes, 8 GiB (a third of the reference machine's memory).
inline constexpr double kRunBudgetSeconds = 30 * 60;
inline constexpr double kRunBudgetBytes = 8.0 * 1024 * 1024 * 1024;
// "~12 s, ~40 MiB (basis)".
std::string FormatCost(const RunCost& cost);
bool OverBudget(const RunCost& cost);
// Adds `part` (seconds and bytes; the larger part's basis first).
void AddCost(RunCost& total, const RunCost& part);

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
  nlohmann::json json;               // the report as JSON (isolab --json)
  std::vector<ReproduceRow> rows;    // rows for `isolab reproduce`
  int64_t invariant_violations = 0;  // must be 0 for correct variants
  std::string text;                  // the report as text tables
  // Warnings about the configuration the experiment ran: those of the
  // isolation configuration first, then the experiment's own (a check that
  // did not apply).  Also in `json` under "warnings" ([{parameter, message}]).
  std::vector<IsolationWarning> warnings;
};

// What an experiment does last: `config_warnings` (ConfigurationWarnings of
// its options; none for an experiment that does not model a machine) and
// the warnings it added, each once, into report.warnings and
// json["warnings"]; json["invariant_violations"].
void FinishReport(std::vector<IsolationWarning> config_warnings, ExperimentReport& report);

}  // namespace isolation::experiments

#endif  // ISOLATION_LIB_EXPERIMENTS_EXPERIMENT_H_
