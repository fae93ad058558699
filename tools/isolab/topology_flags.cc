// SPDX-License-Identifier: GPL-2.0-or-later
// `isolab topology`: no flags of its own.

#include "experiments/topology_experiment.h"
#include "isolab/subcommands.h"

namespace isolation::isolab {

Subcommand TopologySubcommand() {
  return {"topology",
          "Print the model machine (CPUs, cores, LLCs, NUMA nodes) and its isolation",
          {"topology", "isolcpus", "nohz_full", "json"},
          [](const experiments::CommonOptions& common, experiments::Progress& progress) {
            return experiments::RunTopologyExperiment(common, progress);
          },
          [](const experiments::CommonOptions&) -> absl::StatusOr<experiments::RunCost> {
            // Loading and printing a machine of at most kMaxCpus CPUs (0.02 s at 8192).
            return experiments::RunCost{1, 64e6, "loads and prints the machine"};
          }};
}

}  // namespace isolation::isolab
