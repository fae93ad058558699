// SPDX-License-Identifier: GPL-2.0-or-later
#include "experiments/experiment.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"

namespace isolation::experiments {

absl::StatusOr<Topology> LoadTopology(const CommonOptions& options) {
  std::string spec = options.topology;
  if (spec == "seed") spec = kSeedTopology;
  static absl::Mutex mu(absl::kConstInit);
  static auto* cache = new std::pair<std::string, std::optional<Topology>>();  // guarded by mu
  absl::MutexLock lock(&mu);
  if (cache->second.has_value() && cache->first == spec) return *cache->second;
  absl::StatusOr<Topology> topology = Topology::FromFlag(spec);
  if (!topology.ok()) return topology;
  *cache = {spec, *topology};
  return topology;
}

absl::StatusOr<IsolationConfig> LoadIsolation(const CommonOptions& options,
                                              const Topology& topology) {
  std::string isol = options.isolcpus;
  if (isol == "seed") {
    // The seeds' isolation only makes sense on the seeds' machine; on the
    // host, the default is the host's own boot configuration.
    if (topology.description() == "host") return IsolationConfig::FromHost(topology);
    isol = kSeedIsolcpus;
  }
  return IsolationConfig::FromFlags(topology, isol, options.nohz_full);
}

std::vector<IsolationWarning> ConfigurationWarnings(const CommonOptions& options) {
  absl::StatusOr<Topology> topology = LoadTopology(options);
  if (!topology.ok()) return {};
  absl::StatusOr<IsolationConfig> config = LoadIsolation(options, *topology);
  if (!config.ok()) return {};
  return config->warnings();
}

void FinishReport(std::vector<IsolationWarning> config_warnings, ExperimentReport& report) {
  std::vector<IsolationWarning> warnings = std::move(config_warnings);
  for (IsolationWarning& w : report.warnings) {
    const bool seen = std::any_of(warnings.begin(), warnings.end(), [&](const IsolationWarning& x) {
      return x.parameter == w.parameter && x.message == w.message;
    });
    if (!seen) warnings.push_back(std::move(w));
  }
  nlohmann::json list = nlohmann::json::array();
  for (const IsolationWarning& w : warnings)
    list.push_back({{"parameter", w.parameter}, {"message", w.message}});
  report.json["warnings"] = list;
  report.json["invariant_violations"] = report.invariant_violations;
  report.warnings = std::move(warnings);
}

std::string FormatCost(const RunCost& cost) {
  auto time = [](double s) {
    if (s < 60) return absl::StrFormat("%.3g s", s);
    if (s < 3600) return absl::StrFormat("%.3g min", s / 60);
    if (s < 86400 * 2) return absl::StrFormat("%.3g h", s / 3600);
    return absl::StrFormat("%.3g days", s / 86400);
  };
  auto size = [](double b) {
    if (b < 1024.0 * 1024 * 1024) return absl::StrFormat("%.3g MiB", b / (1024.0 * 1024));
    return absl::StrFormat("%.3g GiB", b / (1024.0 * 1024 * 1024));
  };
  return absl::StrCat("~", time(cost.seconds), ", ~", size(cost.bytes),
                      cost.basis.empty() ? "" : absl::StrCat(" (", cost.basis, ")"));
}

bool OverBudget(const RunCost& cost) {
  return !(cost.seconds <= kRunBudgetSeconds) || !(cost.bytes <= kRunBudgetBytes);
}

void AddCost(RunCost& total, const RunCost& part) {
  const bool part_dominates = part.seconds > total.seconds;
  total.seconds += part.seconds;
  total.bytes = std::max(total.bytes, part.bytes);  // the parts run one after the other
  if (part.basis.empty()) return;
  if (total.basis.empty()) {
    total.basis = part.basis;
  } else {
    total.basis = part_dominates ? absl::StrCat(part.basis, "; ", total.basis)
                                 : absl::StrCat(total.basis, "; ", part.basis);
  }
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
