// SPDX-License-Identifier: GPL-2.0-or-later
#include "experiments/experiment.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <set>
#include <utility>

#include "experiments/common_flags.h"
#include "experiments/registry.h"

namespace isolation::experiments {
namespace {

struct Entry {
  int order;
  std::function<std::unique_ptr<Experiment>()> factory;
};

std::vector<Entry>& Registry() {
  static auto* entries = new std::vector<Entry>();
  return *entries;
}

}  // namespace

ExperimentRegistrar::ExperimentRegistrar(int order,
                                         std::function<std::unique_ptr<Experiment>()> factory) {
  Registry().push_back({order, std::move(factory)});
}

std::vector<std::unique_ptr<Experiment>> AllExperiments() {
  std::vector<Entry> entries = Registry();
  std::stable_sort(entries.begin(), entries.end(),
                   [](const Entry& a, const Entry& b) { return a.order < b.order; });
  std::vector<std::unique_ptr<Experiment>> out;
  for (auto& e : entries) out.push_back(e.factory());
  return out;
}

std::vector<std::string> MissingExperiments() {
  std::set<std::string> have;
  for (const auto& e : AllExperiments()) have.insert(std::string(e->name()));
  std::vector<std::string> missing;
  for (const char* want : {"topology", "mmcid", "tmigr", "idle", "vmstat"}) {
    if (!have.count(want)) missing.push_back(want);
  }
  return missing;
}

absl::StatusOr<ExperimentReport> RunExperiment(Experiment& experiment, const RunOptions& options,
                                               Progress& progress, std::FILE* warn) {
  const std::string name(experiment.name());
  std::vector<IsolationWarning> warnings;
  auto print = [&](const IsolationWarning& w) {
    std::fprintf(warn, "isolab %s: warning: %s: %s\n", name.c_str(), w.parameter.c_str(), w.message.c_str());
  };
  const std::vector<std::string> flags = experiment.flag_names();
  if (std::find(flags.begin(), flags.end(), "isolcpus") != flags.end()) {
    // Bad values are left to the experiment, which reports them as errors.
    absl::StatusOr<Topology> topology = TopologyFromFlags();
    if (topology.ok()) {
      absl::StatusOr<IsolationConfig> config = IsolationFromFlags(*topology);
      if (config.ok()) warnings = config->warnings();
    }
  }
  for (const IsolationWarning& w : warnings) print(w);
  std::fflush(warn);
  absl::StatusOr<ExperimentReport> report = experiment.Run(options, progress);
  if (!report.ok()) return report;
  for (const IsolationWarning& w : report->warnings) {
    const bool seen = std::any_of(warnings.begin(), warnings.end(), [&](const IsolationWarning& x) {
      return x.parameter == w.parameter && x.message == w.message;
    });
    if (seen) continue;
    print(w);
    warnings.push_back(w);
  }
  nlohmann::json list = nlohmann::json::array();
  for (const IsolationWarning& w : warnings) list.push_back({{"parameter", w.parameter}, {"message", w.message}});
  report->json["warnings"] = list;
  report->json["invariant_violations"] = report->invariant_violations;
  report->warnings = std::move(warnings);
  return report;
}

Progress::Progress(std::string_view experiment)
    : experiment_(experiment), enabled_(isatty(STDERR_FILENO) != 0) {}

void Progress::Update(std::string_view what, double fraction) {
  if (!enabled_) return;
  std::fprintf(stderr, "\r[%s] %-40.*s %3d%%", experiment_.c_str(), static_cast<int>(what.size()),
               what.data(), static_cast<int>(fraction * 100.0));
  std::fflush(stderr);
}

void Progress::Done() {
  if (!enabled_) return;
  std::fprintf(stderr, "\r%*s\r", 60 + static_cast<int>(experiment_.size()), "");
  std::fflush(stderr);
}

}  // namespace isolation::experiments
