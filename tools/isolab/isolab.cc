// SPDX-License-Identifier: GPL-2.0-or-later
//
// isolab: reproduces the experiments of the kernel threads this library
// comes from and prints their figures next to ours.  This file is
// isolation::isolab::Main (isolation/isolab/isolab.h), in the installed
// library isolation::isolab with the experiments and the flags; main.cc
// only calls it.
//
//   isolab <subcommand> [--flag=value ...]
//   isolab help | isolab <subcommand> --help
//
// Subcommands: one per experiment (topology, mmcid, tmigr, idle, vmstat,
// hostcheck; subcommands.h), `reproduce`, which runs them all and prints
// one table, `variants`, the registered variants of every mechanism, and
// `replay FILE` / `record -o FILE [-- command]`, a recorded kernel trace
// against every variant (docs/replay.md).  The experiments are functions of options structs
// (lib/experiments); the flags are defined here, in tools/isolab.
// Exit status: 0 on success, 2 on bad input (message on stderr), 1 when an
// experiment fails at run time or reports an invariant violation.  The
// isolation configuration's warnings go to stderr and into the JSON.

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/flags/commandlineflag.h"
#include "absl/flags/flag.h"
#include "absl/flags/reflection.h"
#include "absl/strings/match.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "experiments/experiment.h"
#include "isolation/core/clock.h"
#include "experiments/look_options.h"
#include "experiments/variants.h"
#include "isolation/isolab/isolab.h"
#include "isolab/common_flags.h"
#include "isolab/flag_parser.h"
#include "isolab/look_flags.h"
#include "isolab/subcommands.h"

namespace isolation::isolab {
namespace {

using experiments::CommonOptions;
using experiments::ExperimentReport;
using experiments::LookOptions;
using experiments::PlotOptions;
using experiments::Progress;
using experiments::ReproduceRow;

constexpr int kExitOk = 0;
constexpr int kExitRunFailure = 1;
constexpr int kExitBadInput = 2;

const std::vector<std::string> kReproduceFlags = {"json", "quick", "seed", "force"};
constexpr char kVariantsSummary[] =
    "List every registered variant of every mechanism (--json: as JSON)";

// `isolab variants`: the registries' rows (experiments/variants.h).
int ListVariants() {
  const std::vector<VariantInfo> variants = experiments::AllRegisteredVariants();
  if (absl::GetFlag(FLAGS_json)) {
    std::cout << experiments::VariantsJson(variants).dump(2) << std::endl;
  } else {
    std::cout << experiments::VariantsText(variants);
  }
  return kExitOk;
}

void PrintTopLevelHelp(const std::vector<Subcommand>& experiments) {
  std::printf(
      "isolab: the Linux CPU-isolation mechanisms of the isolation library, side by side.\n\n"
      "usage: isolab <subcommand> [--flag=value ...]\n"
      "       isolab <subcommand> --help\n\nsubcommands:\n");
  for (const Subcommand& e : experiments) {
    std::printf("  %-10s %s\n", e.name.c_str(), e.summary.c_str());
  }
  std::printf("  %-10s %s\n", "reproduce",
              "Run every experiment with the seeds' defaults and print one table");
  std::printf("  %-10s %s\n", "variants", kVariantsSummary);
  std::printf("  %-10s %s\n", "replay", ReplaySubcommand().summary.c_str());
  std::printf("  %-10s %s\n", "run", RunSubcommand().summary.c_str());
  std::printf("  %-10s %s\n", "noise", NoiseSubcommand().summary.c_str());
  std::printf("  %-10s %s\n", "record",
              "Record the host's scheduler, rseq, timer and workqueue events into a trace.dat "
              "(root; isolab record "
              "-o FILE [--duration=S] [-- command ...])");
}

void PrintFlagHelp(std::string_view subcommand, std::string_view summary,
                   const std::vector<std::string>& flags) {
  std::printf("usage: isolab %.*s [flags]\n\n%.*s\n\nflags:\n", static_cast<int>(subcommand.size()),
              subcommand.data(), static_cast<int>(summary.size()), summary.data());
  for (const auto& name : flags) {
    const absl::CommandLineFlag* flag = absl::FindCommandLineFlag(name);
    if (flag == nullptr) continue;
    const FlagRange* range = FindFlagRange(name);
    std::printf("  --%s (default: \"%s\"%s)\n      %s\n", name.c_str(),
                flag->DefaultValue().c_str(),
                range != nullptr ? absl::StrCat("; range ", FlagRangeText(*range)).c_str() : "",
                flag->Help().c_str());
  }
}

// Exit status for an error of --plot / --trace after the run.
int LookExit(const absl::Status& s) {
  return s.code() == absl::StatusCode::kInvalidArgument ? kExitBadInput : kExitRunFailure;
}

bool ModelsAMachine(const Subcommand& subcommand) {
  return std::find(subcommand.flags.begin(), subcommand.flags.end(), "isolcpus") !=
         subcommand.flags.end();
}

// Runs `subcommand` as isolab does: the warnings of the isolation
// configuration go to stderr before the run ("isolab <name>: warning:
// <parameter>: <message>"), those the experiment added after it.
absl::StatusOr<ExperimentReport> RunWithWarnings(const Subcommand& subcommand,
                                                 const CommonOptions& common, Progress& progress) {
  std::vector<IsolationWarning> printed;
  auto print = [&](const IsolationWarning& w) {
    std::fprintf(stderr, "isolab %s: warning: %s: %s\n", subcommand.name.c_str(),
                 w.parameter.c_str(),  // printable already (isolation_config.cc)
                 w.message.c_str());
  };
  // Bad values are left to the experiment, which reports them as errors.
  if (ModelsAMachine(subcommand)) printed = experiments::ConfigurationWarnings(common);
  for (const IsolationWarning& w : printed) print(w);
  std::fflush(stderr);
  absl::StatusOr<ExperimentReport> report = subcommand.run(common, progress);
  if (!report.ok()) return report;
  for (const IsolationWarning& w : report->warnings) {
    const bool seen = std::any_of(printed.begin(), printed.end(), [&](const IsolationWarning& x) {
      return x.parameter == w.parameter && x.message == w.message;
    });
    if (!seen) print(w);
  }
  return report;
}

// The cost estimate, before a run: printed once on stderr when stderr is not
// a terminal (a terminal gets the progress line instead); past the budget,
// the run is refused unless --force.  Returns the exit status to stop with,
// or -1 to go on.  *estimate receives the estimate (for the report).
int CheckCost(const std::string& name, const absl::StatusOr<experiments::RunCost>& cost,
              experiments::RunCost* estimate) {
  if (!cost.ok()) {
    std::fprintf(stderr, "isolab %s: %s\n", name.c_str(), cost.status().ToString().c_str());
    return cost.status().code() == absl::StatusCode::kInvalidArgument ||
                   cost.status().code() == absl::StatusCode::kOutOfRange
               ? kExitBadInput
               : kExitRunFailure;
  }
  *estimate = *cost;
  const std::string text = experiments::FormatCost(*cost);
  if (experiments::OverBudget(*cost)) {
    if (!absl::GetFlag(FLAGS_force)) {
      std::fprintf(stderr,
                   "isolab %s: estimated cost %s is over the budget (%s min or %s GiB); give "
                   "--force to run it "
                   "anyway\n",
                   name.c_str(), text.c_str(),
                   absl::StrCat(experiments::kRunBudgetSeconds / 60).c_str(),
                   absl::StrCat(experiments::kRunBudgetBytes / (1024.0 * 1024 * 1024)).c_str());
      return kExitBadInput;
    }
    std::fprintf(stderr, "isolab %s: estimated cost %s is over the budget; running it (--force)\n",
                 name.c_str(), text.c_str());
  } else if (isatty(STDERR_FILENO) == 0) {
    std::fprintf(stderr, "isolab %s: estimated cost %s\n", name.c_str(), text.c_str());
  }
  std::fflush(stderr);
  return -1;
}

// The estimate beside what the run took ("cost" in the JSON report).
nlohmann::json CostJson(const experiments::RunCost& estimate, double seconds) {
  struct rusage usage {};
  getrusage(RUSAGE_SELF, &usage);
  return {{"estimated_seconds", estimate.seconds},
          {"estimated_bytes", estimate.bytes},
          {"basis", estimate.basis},
          {"measured_seconds", seconds},
          {"peak_rss_bytes", static_cast<double>(usage.ru_maxrss) * 1024.0}};
}

int RunOne(const Subcommand& experiment, const CommonOptions& options, const PlotOptions& plot) {
  experiments::RunCost estimate;
  if (int rc = CheckCost(experiment.name, experiment.estimate(options), &estimate); rc >= 0)
    return rc;
  const Nanos start = MonotonicNanos();
  Progress progress(experiment.name);
  absl::StatusOr<ExperimentReport> report = RunWithWarnings(experiment, options, progress);
  progress.Done();
  if (!report.ok()) {
    std::fprintf(stderr, "isolab %s: %s\n", experiment.name.c_str(),
                 report.status().ToString().c_str());
    return report.status().code() == absl::StatusCode::kInvalidArgument ||
                   report.status().code() == absl::StatusCode::kOutOfRange
               ? kExitBadInput
               : kExitRunFailure;
  }
  report->json["cost"] = CostJson(estimate, static_cast<double>(MonotonicNanos() - start) / 1e9);
  if (absl::GetFlag(FLAGS_json)) {
    std::cout << report->json.dump(2) << std::endl;
  } else {
    std::cout << report->text;
    if (!report->text.empty() && report->text.back() != '\n') std::cout << '\n';
  }
  if (absl::Status s = experiments::DrawFigures(plot, experiment.name, report->json); !s.ok()) {
    std::fprintf(stderr, "isolab %s: %s\n", experiment.name.c_str(), s.ToString().c_str());
    return LookExit(s);
  }
  if (report->invariant_violations > 0) {
    std::fprintf(stderr, "isolab %s: %lld invariant violation(s)\n", experiment.name.c_str(),
                 static_cast<long long>(report->invariant_violations));
    return kExitRunFailure;
  }
  return kExitOk;
}

std::string Pad(const std::string& s, size_t width) {
  return s.size() >= width ? s : s + std::string(width - s.size(), ' ');
}

int Reproduce(const std::vector<Subcommand>& experiments, const CommonOptions& options,
              const PlotOptions& plot) {
  nlohmann::json out;
  out["experiments"] = nlohmann::json::object();
  out["rows"] = nlohmann::json::array();
  std::vector<ReproduceRow> rows;
  int64_t violations = 0;
  int exit_code = kExitOk;
  std::vector<std::string> failed;
  // One estimate for the whole sequence, checked before the first runs.
  {
    absl::StatusOr<experiments::RunCost> total = experiments::RunCost{};
    for (const auto& e : experiments) {
      absl::StatusOr<experiments::RunCost> part = e.estimate(options);
      if (!part.ok()) {
        total = part.status();
        break;
      }
      experiments::AddCost(*total, *part);
    }
    experiments::RunCost estimate;
    if (int rc = CheckCost("reproduce", total, &estimate); rc >= 0) return rc;
  }
  for (size_t i = 0; i < experiments.size(); ++i) {
    const auto& e = experiments[i];
    // --trace: each experiment gets an equal share of what is left.
    if (options.trace != nullptr)
      options.trace->BeginPhase(static_cast<int>(experiments.size() - i));
    Progress progress(e.name);
    absl::StatusOr<ExperimentReport> report = RunWithWarnings(e, options, progress);
    progress.Done();
    const std::string& name = e.name;
    if (!report.ok()) {
      std::fprintf(stderr, "isolab reproduce: %s failed: %s\n", name.c_str(),
                   report.status().ToString().c_str());
      failed.push_back(name);
      exit_code = kExitRunFailure;
      continue;
    }
    out["experiments"][name] = report->json;
    violations += report->invariant_violations;
    for (const auto& r : report->rows) {
      rows.push_back(r);
      out["rows"].push_back({{"experiment", r.experiment},
                             {"figure", r.figure},
                             {"kernel_reported", r.kernel_reported},
                             {"measured", r.measured}});
    }
  }
  out["missing"] = nlohmann::json::array();  // every experiment isolab lists is built
  out["failed"] = failed;
  out["invariant_violations"] = violations;
  out["quick"] = options.quick;
  if (absl::Status s = experiments::DrawFigures(plot, "reproduce", out); !s.ok()) {
    std::fprintf(stderr, "isolab reproduce: %s\n", s.ToString().c_str());
    exit_code = std::max(exit_code, LookExit(s));
  }
  if (violations > 0) {
    std::fprintf(stderr, "isolab reproduce: %lld invariant violation(s)\n",
                 static_cast<long long>(violations));
    exit_code = std::max(exit_code, kExitRunFailure);
  }
  if (absl::GetFlag(FLAGS_json)) {
    std::cout << out.dump(2) << std::endl;
    return exit_code;
  }
  size_t w0 = 10, w1 = 6, w2 = 15;
  for (const auto& r : rows) {
    w0 = std::max(w0, r.experiment.size());
    w1 = std::max(w1, r.figure.size());
    w2 = std::min<size_t>(std::max(w2, r.kernel_reported.size()), 60);
  }
  std::cout << Pad("experiment", w0) << " | " << Pad("figure", w1) << " | "
            << Pad("kernel thread reported", w2) << " | we measure\n";
  std::cout << std::string(w0, '-') << "-+-" << std::string(w1, '-') << "-+-"
            << std::string(w2, '-') << "-+-" << std::string(30, '-') << "\n";
  for (const auto& r : rows) {
    std::cout << Pad(r.experiment, w0) << " | " << Pad(r.figure, w1) << " | "
              << Pad(r.kernel_reported, w2) << " | " << r.measured << "\n";
  }
  std::cout << "\ninvariant violations (all experiments): " << violations << "\n";
  if (options.quick) std::cout << "(--quick: shortened runs, figures indicative only)\n";
  if (!failed.empty())
    std::cout << "experiments that failed: " << absl::StrJoin(failed, ", ") << "\n";
  return exit_code;
}

}  // namespace

// Main without the final check of stdout.
static int MainUnchecked(int argc, char** argv) {
  const std::vector<Subcommand> experiments = AllSubcommands();
  if (argc < 2) {
    std::fprintf(stderr, "isolab: missing subcommand\n");
    PrintTopLevelHelp(experiments);
    return kExitBadInput;
  }
  const std::string subcommand = argv[1];
  if (subcommand == "help" || subcommand == "--help" || subcommand == "-h") {
    PrintTopLevelHelp(experiments);
    return kExitOk;
  }
  if (subcommand == "record") return RecordMain(std::vector<std::string>(argv + 2, argv + argc));
  const Subcommand replay = ReplaySubcommand();
  const Subcommand run = RunSubcommand();
  const Subcommand noise = NoiseSubcommand();
  const Subcommand* selected = subcommand == "replay"  ? &replay
                               : subcommand == "run"   ? &run
                               : subcommand == "noise" ? &noise
                                                       : nullptr;
  for (const Subcommand& e : experiments) {
    if (e.name == subcommand) selected = &e;
  }
  std::vector<std::string> allowed;
  std::string summary;
  if (subcommand == "reproduce") {
    allowed = kReproduceFlags;
    for (const std::string& f : LookFlagNames(subcommand)) allowed.push_back(f);
    summary = "Run every experiment with the seeds' defaults and print one table.";
  } else if (subcommand == "variants") {
    allowed = {"json"};
    summary = kVariantsSummary;
  } else if (selected != nullptr) {
    allowed = selected->flags;
    // A mechanism's subcommand also takes a workload (run_flags.cc), and
    // with one, the flags of `isolab run`.
    const bool workload_given = std::any_of(argv + 2, argv + argc, [](const char* a) {
      return std::string_view(a) == "--workload" || absl::StartsWith(a, "--workload=");
    });
    if (!WorkloadMechanismOf(subcommand).empty()) allowed.push_back("workload");
    if (!WorkloadMechanismOf(subcommand).empty() && workload_given) {
      for (const char* f : {"run_duration_ms", "cpu_scale", "osnoise_top", "hist", "bucket_size",
                            "entries", "no_zero_lines", "mmcid_variants"}) {
        if (std::find(allowed.begin(), allowed.end(), f) == allowed.end()) allowed.push_back(f);
      }
    }
    for (const char* common : {"json", "quick", "seed", "force"}) {
      if (std::find(allowed.begin(), allowed.end(), common) == allowed.end())
        allowed.push_back(common);
    }
    for (const std::string& f : LookFlagNames(subcommand)) {
      if (std::find(allowed.begin(), allowed.end(), f) == allowed.end()) allowed.push_back(f);
    }
    summary = selected->summary;
  } else {
    std::fprintf(stderr, "isolab: unknown subcommand '%s' (try 'isolab help')\n",
                 absl::CHexEscape(subcommand).c_str());
    return kExitBadInput;
  }
  bool wants_help = false;
  std::vector<std::string> args(argv + 2, argv + argc);
  if (subcommand == "replay") {
    // isolab replay FILE [flags]: one positional argument.
    std::vector<std::string> positional, after_dashes;
    args = SplitPositional(args, allowed, &positional, &after_dashes);
    positional.insert(positional.end(), after_dashes.begin(), after_dashes.end());
    if (positional.size() > 1) {
      std::fprintf(stderr, "isolab replay: one recording at a time (got %zu: '%s', '%s', ...)\n",
                   positional.size(), absl::CHexEscape(positional[0]).c_str(),
                   absl::CHexEscape(positional[1]).c_str());
      return kExitBadInput;
    }
    if (!positional.empty()) SetReplayFile(positional[0]);
  }
  const std::string error = ParseSubcommandFlags(args, allowed, &wants_help);
  if (wants_help) {
    PrintFlagHelp(subcommand, summary, allowed);
    return kExitOk;
  }
  if (!error.empty()) {
    std::fprintf(stderr, "isolab %s: %s\n", subcommand.c_str(), error.c_str());
    return kExitBadInput;
  }
  if (subcommand == "variants") return ListVariants();
  absl::StatusOr<LookOptions> look = LookOptionsFromFlags();
  if (!look.ok()) {
    std::fprintf(stderr, "isolab %s: %s\n", subcommand.c_str(),
                 std::string(look.status().message()).c_str());
    return kExitBadInput;
  }
  absl::StatusOr<std::unique_ptr<TraceFile>> trace = experiments::OpenTrace(look->trace);
  if (!trace.ok()) {
    std::fprintf(stderr, "isolab %s: %s\n", subcommand.c_str(),
                 std::string(trace.status().message()).c_str());
    return kExitBadInput;
  }
  CommonOptions options = CommonOptionsFromFlags();
  options.trace = trace->get();
  options.hist = look->hist;
  // `isolab tmigr --workload=...`: the workload under that mechanism's rows,
  // as `isolab run --run_mechanisms=tmigr` runs it.
  if (subcommand != "reproduce" && !WorkloadMechanismOf(subcommand).empty() && WorkloadGiven()) {
    RestrictWorkloadTo(WorkloadMechanismOf(subcommand));
    selected = &run;
  }
  int rc = subcommand == "reproduce" ? Reproduce(experiments, options, look->plot)
                                     : RunOne(*selected, options, look->plot);
  if (*trace != nullptr) {
    // Closed even after a failed run, so the file is valid JSON.
    if (absl::Status s = (*trace)->Close(); !s.ok()) {
      std::fprintf(stderr, "isolab %s: %s\n", subcommand.c_str(), s.ToString().c_str());
      rc = std::max(rc, kExitRunFailure);
    } else {
      std::fprintf(stderr, "isolab %s: trace of %lld events written to %s%s\n", subcommand.c_str(),
                   static_cast<long long>((*trace)->events_written()), (*trace)->path().c_str(),
                   (*trace)->events_dropped() > 0
                       ? absl::StrCat(" (truncated: ", (*trace)->events_dropped(),
                                      " events over --trace_max_events dropped)")
                             .c_str()
                       : "");
    }
  }
  return rc;
}

int Main(int argc, char** argv) {
  int rc = MainUnchecked(argc, argv);
  // A report nobody could read is no success: stdout on a full device or a
  // closed pipe fails the run (checked once, after the last write).
  errno = 0;
  std::cout.flush();
  if (!std::cout.good()) {
    const int err = errno;
    std::fprintf(stderr, "isolab: writing the report to stdout failed: %s\n",
                 err != 0 ? std::strerror(err)
                          : "the stream refused a write (a full device or a closed pipe?)");
    rc = std::max(rc, kExitRunFailure);
  }
  return rc;
}

}  // namespace isolation::isolab
