// SPDX-License-Identifier: GPL-2.0-or-later
#include "isolab/common_flags.h"

#include <string>

#include "absl/flags/flag.h"
#include "isolab/flag_parser.h"
#include "isolation/core/topology.h"

ABSL_FLAG(std::string, topology, isolation::experiments::CommonOptions{}.topology,
          "Model machine: 'seed' (the seeds' 128-CPU box, \"package:2 l3cache:4 core:16 pu:1\"), "
          "'host', or an hwloc synthetic description");
ABSL_FLAG(std::string, isolcpus, isolation::experiments::CommonOptions{}.isolcpus,
          "isolcpus= boot parameter value ('seed' = 1-31,33-63,65-95,97-127, or the host's own "
          "configuration with --topology=host; '' = none), e.g. domain,managed_irq,1-7");
ABSL_FLAG(std::string, nohz_full, isolation::experiments::CommonOptions{}.nohz_full,
          "nohz_full= boot parameter value (cpulist)");
ABSL_FLAG(uint64_t, seed, isolation::experiments::CommonOptions{}.seed,
          "Random seed of the simulator");
ABSL_FLAG(bool, quick, isolation::experiments::CommonOptions{}.quick,
          "Shorter runs (smoke tests); figures are labelled quick");
ABSL_FLAG(bool, json, false, "Print the result as JSON on stdout");
ABSL_FLAG(int32_t, real_cpus, isolation::experiments::CommonOptions{}.real_cpus,
          "CPUs of the real-thread model (0 = sized to the host: min(host CPUs, modelled CPUs), "
          "the modelled "
          "machine's housekeeping/isolated roles, 1:1 pinning); more than the host offers needs "
          "--allow_oversubscribed");
ABSL_FLAG(
    bool, allow_oversubscribed, isolation::experiments::CommonOptions{}.allow_oversubscribed,
    "Run a real-thread model larger than the host (model CPUs share host CPUs); its figures are "
    "labelled OVERSUBSCRIBED");
ABSL_FLAG(bool, force, false,
          "Run even when the cost estimate printed before the run passes the budget (30 min or 8 "
          "GiB on the "
          "reference host; README.md, isolab)");

// Documented ranges, checked by the flag parser for every subcommand (flag_parser.h).
ISOLAB_FLAG_RANGE(real_cpus, 0, isolation::kMaxCpus);

namespace isolation::isolab {

experiments::CommonOptions CommonOptionsFromFlags() {
  experiments::CommonOptions o;
  o.topology = absl::GetFlag(FLAGS_topology);
  o.isolcpus = absl::GetFlag(FLAGS_isolcpus);
  o.nohz_full = absl::GetFlag(FLAGS_nohz_full);
  o.seed = absl::GetFlag(FLAGS_seed);
  o.quick = absl::GetFlag(FLAGS_quick);
  o.real_cpus = absl::GetFlag(FLAGS_real_cpus);
  o.allow_oversubscribed = absl::GetFlag(FLAGS_allow_oversubscribed);
  return o;
}

}  // namespace isolation::isolab
