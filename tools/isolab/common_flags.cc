// SPDX-License-Identifier: GPL-2.0-or-later
#include "isolab/common_flags.h"

#include <string>

#include "absl/flags/flag.h"

ABSL_FLAG(std::string, topology, isolation::experiments::CommonOptions{}.topology,
          "Model machine: 'seed' (the seeds' 128-CPU box, \"package:2 l3cache:4 core:16 pu:1\"), "
          "'host', or an hwloc synthetic description");
ABSL_FLAG(std::string, isolcpus, isolation::experiments::CommonOptions{}.isolcpus,
          "isolcpus= boot parameter value ('seed' = 1-31,33-63,65-95,97-127, or the host's own "
          "configuration with --topology=host; '' = none), e.g. domain,managed_irq,1-7");
ABSL_FLAG(std::string, nohz_full, isolation::experiments::CommonOptions{}.nohz_full,
          "nohz_full= boot parameter value (cpulist)");
ABSL_FLAG(uint64_t, seed, isolation::experiments::CommonOptions{}.seed, "Random seed of the simulator");
ABSL_FLAG(bool, quick, isolation::experiments::CommonOptions{}.quick,
          "Shorter runs (smoke tests); figures are labelled quick");
ABSL_FLAG(bool, json, false, "Print the result as JSON on stdout");

namespace isolation::isolab {

experiments::CommonOptions CommonOptionsFromFlags() {
  experiments::CommonOptions o;
  o.topology = absl::GetFlag(FLAGS_topology);
  o.isolcpus = absl::GetFlag(FLAGS_isolcpus);
  o.nohz_full = absl::GetFlag(FLAGS_nohz_full);
  o.seed = absl::GetFlag(FLAGS_seed);
  o.quick = absl::GetFlag(FLAGS_quick);
  return o;
}

}  // namespace isolation::isolab
