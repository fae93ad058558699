// SPDX-License-Identifier: GPL-2.0-or-later
#include "experiments/common_flags.h"

#include "absl/flags/flag.h"

ABSL_FLAG(std::string, topology, "seed",
          "Model machine: 'seed' (the seeds' 128-CPU box, \"package:2 l3cache:4 core:16 pu:1\"), "
          "'host', or an hwloc synthetic description");
ABSL_FLAG(std::string, isolcpus, "seed",
          "isolcpus= boot parameter value ('seed' = 1-31,33-63,65-95,97-127, or the host's own "
          "configuration with --topology=host; '' = none), e.g. domain,managed_irq,1-7");
ABSL_FLAG(std::string, nohz_full, "", "nohz_full= boot parameter value (cpulist)");
ABSL_FLAG(uint64_t, seed, 1, "Random seed of the simulator");
ABSL_FLAG(bool, quick, false, "Shorter runs (smoke tests); figures are labelled quick");
ABSL_FLAG(bool, json, false, "Print the result as JSON on stdout");

namespace isolation::experiments {

absl::StatusOr<Topology> TopologyFromFlags() {
  std::string spec = absl::GetFlag(FLAGS_topology);
  if (spec == "seed") spec = kSeedTopology;
  return Topology::FromFlag(spec);
}

absl::StatusOr<IsolationConfig> IsolationFromFlags(const Topology& topology) {
  std::string isol = absl::GetFlag(FLAGS_isolcpus);
  if (isol == "seed") {
    // The seeds' isolation only makes sense on the seeds' machine; on the
    // host, the default is the host's own boot configuration.
    if (topology.description() == "host") return IsolationConfig::FromHost(topology);
    isol = kSeedIsolcpus;
  }
  return IsolationConfig::FromFlags(topology, isol, absl::GetFlag(FLAGS_nohz_full));
}

}  // namespace isolation::experiments
