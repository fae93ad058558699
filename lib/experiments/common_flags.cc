// SPDX-License-Identifier: GPL-2.0-or-later
#include "experiments/common_flags.h"

#include <optional>
#include <string>
#include <utility>

#include "absl/flags/flag.h"
#include "absl/synchronization/mutex.h"

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
  // The last topology loaded is kept: isolab loads it once for the warnings
  // and once in the experiment, and a large synthetic one takes seconds.
  static absl::Mutex mu(absl::kConstInit);
  static auto* cache = new std::pair<std::string, std::optional<Topology>>();  // guarded by mu
  absl::MutexLock lock(&mu);
  if (cache->second.has_value() && cache->first == spec) return *cache->second;
  absl::StatusOr<Topology> topology = Topology::FromFlag(spec);
  if (!topology.ok()) return topology;
  *cache = {spec, *topology};
  return topology;
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
