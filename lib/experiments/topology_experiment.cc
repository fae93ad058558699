// SPDX-License-Identifier: GPL-2.0-or-later
//
// `isolab topology`: prints the model machine and its isolation, and, as the
// first row of `isolab reproduce`, checks that the default model is the
// seeds' machine (128 CPUs, housekeeping 0,32,64,96).

#include "experiments/topology_experiment.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "isolation/core/isolation_config.h"
#include "core/status_macros.h"
#include "isolation/core/topology.h"

namespace isolation::experiments {
namespace {

constexpr HousekeepingType kAllTypes[] = {
    HousekeepingType::kDomain,  HousekeepingType::kTick,  HousekeepingType::kTimer,
    HousekeepingType::kRcu,     HousekeepingType::kMisc,  HousekeepingType::kWq,
    HousekeepingType::kKthread, HousekeepingType::kSched, HousekeepingType::kManagedIrq,
};

CpuMask IsolatedCpus(const IsolationConfig& config) {
  CpuMask isolated(config.num_cpus());
  for (int cpu = 0; cpu < config.num_cpus(); ++cpu) {
    if (config.CpuIsIsolated(cpu)) isolated.Set(cpu);
  }
  return isolated;
}

}  // namespace

absl::StatusOr<ExperimentReport> RunTopologyExperiment(const CommonOptions& common,
                                                       Progress& progress) {
  progress.Update("loading topology", 0.0);
  ISOLATION_ASSIGN_OR_RETURN(Topology topology, LoadTopology(common));
  ISOLATION_ASSIGN_OR_RETURN(IsolationConfig config, LoadIsolation(common, topology));
  // --trace_cpus out of this machine: refused as by every experiment.
  ISOLATION_RETURN_IF_ERROR(CheckTraceCpus(common.trace, topology));
  progress.Done();

  ExperimentReport report;
  nlohmann::json& j = report.json;
  j["description"] = topology.description();
  j["cpus"] = topology.num_cpus();
  j["cores"] = topology.num_cores();
  j["llcs"] = topology.num_llcs();
  j["numa_nodes"] = topology.num_nodes();
  j["packages"] = topology.num_packages();
  j["online"] = topology.online().ToString();
  const CpuMask isolated = IsolatedCpus(config);
  j["isolated"] = isolated.ToString();
  j["isolcpus_domain"] = config.isolcpus_domain().ToString();
  j["nohz_full"] = config.nohz_full().ToString();
  j["tick_cpu"] = config.tick_cpu();
  nlohmann::json hk = nlohmann::json::object();
  for (HousekeepingType t : kAllTypes) {
    hk[std::string(HousekeepingTypeName(t))] = config.housekeeping(t).ToString();
  }
  j["housekeeping"] = hk;
  nlohmann::json llcs = nlohmann::json::array();
  for (int l = 0; l < topology.num_llcs(); ++l) llcs.push_back(topology.llc_mask(l).ToString());
  j["llc_masks"] = llcs;
  nlohmann::json nodes = nlohmann::json::array();
  for (int n = 0; n < topology.num_nodes(); ++n) nodes.push_back(topology.node_mask(n).ToString());
  j["node_masks"] = nodes;
  nlohmann::json warnings = nlohmann::json::array();
  for (const auto& w : config.warnings()) {
    warnings.push_back({{"parameter", w.parameter}, {"message", w.message}});
  }
  j["warnings"] = warnings;
  j["cmdline"] = config.ToCmdline();

  std::string& t = report.text;
  absl::StrAppend(&t, "model machine: ", topology.Summary(), "\n");
  absl::StrAppend(&t, "  description: ", topology.description(), "\n");
  for (int l = 0; l < topology.num_llcs(); ++l) {
    absl::StrAppend(&t, absl::StrFormat("  llc %d: %s\n", l, topology.llc_mask(l).ToString()));
  }
  for (int n = 0; n < topology.num_nodes(); ++n) {
    absl::StrAppend(&t, absl::StrFormat("  node %d: %s\n", n, topology.node_mask(n).ToString()));
  }
  absl::StrAppend(&t, "isolation: ", config.ToCmdline().empty() ? "(none)" : config.ToCmdline(),
                  "\n");
  absl::StrAppend(&t, "  isolated (cpu_is_isolated): ",
                  isolated.Empty() ? "(none)" : isolated.ToString(), "\n");
  absl::StrAppend(&t, "  nohz_full: ",
                  config.nohz_full().Empty() ? "(none)" : config.nohz_full().ToString(), "\n");
  absl::StrAppend(&t, "  tick cpu: ", config.tick_cpu(), "\n");
  for (HousekeepingType type : kAllTypes) {
    absl::StrAppend(&t, absl::StrFormat("  housekeeping %-12s %s\n", HousekeepingTypeName(type),
                                        config.housekeeping(type).ToString()));
  }
  for (const auto& w : config.warnings()) {
    absl::StrAppend(&t, "  warning: ", w.parameter, ": ", w.message, "\n");
  }

  report.rows.push_back(
      {"topology", "model machine and isolation",
       "128 cores, isolcpus=1-31,33-63,65-95,97-127: 4 housekeeping, 124 isolated (seeds)",
       absl::StrFormat("%d cpus in %d llcs; housekeeping domain %s; %d isolated",
                       topology.num_cpus(), topology.num_llcs(),
                       config.housekeeping(HousekeepingType::kDomain).ToString(),
                       isolated.Weight())});
  FinishReport(config.warnings(), report);
  return report;
}

}  // namespace isolation::experiments
