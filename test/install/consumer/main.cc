// SPDX-License-Identifier: GPL-2.0-or-later
// Outside consumer: parses a cpulist, builds the seeds' model machine and its
// isolation, and checks the housekeeping domain.
#include <cstdio>

#include "isolation/core/cpumask.h"
#include "isolation/core/isolation_config.h"
#include "isolation/core/topology.h"

int main() {
  auto topology = isolation::Topology::FromSynthetic("package:2 l3cache:4 core:16 pu:1");
  if (!topology.ok()) {
    std::fprintf(stderr, "%s\n", topology.status().ToString().c_str());
    return 1;
  }
  auto config = isolation::IsolationConfig::FromFlags(*topology, "domain,1-31,33-63,65-95,97-127", "");
  if (!config.ok()) {
    std::fprintf(stderr, "%s\n", config.status().ToString().c_str());
    return 1;
  }
  const std::string hk = config->housekeeping(isolation::HousekeepingType::kDomain).ToString();
  std::printf("%s; housekeeping domain %s\n", topology->Summary().c_str(), hk.c_str());
  return hk == "0,32,64,96" ? 0 : 1;
}
