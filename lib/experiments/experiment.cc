// SPDX-License-Identifier: GPL-2.0-or-later
#include "experiments/experiment.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <set>
#include <utility>

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
