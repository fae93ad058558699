// SPDX-License-Identifier: GPL-2.0-or-later
// Outside consumer: parses a cpulist, builds the seeds' model machine and its
// isolation, and checks the housekeeping domain; counts through the inline
// vmstat writer and compiles the inline mm_cid switcher (their installed
// internal headers, vmstat/internal/ and mm_cid/internal/, included).
#include <cstdio>

#include "isolation/core/cpumask.h"
#include "isolation/core/isolation_config.h"
#include "isolation/core/topology.h"
#include "isolation/mm_cid/switcher.h"
#include "isolation/vmstat/vmstat.h"

static_assert(sizeof(isolation::mm_cid::MmCidSwitcher) > 0);

// One Inc through the inline writer of CPU 0: below the threshold, it stays
// in the CPU's differential, which the snapshot read adds.
static bool VmstatWriterCounts() {
  auto vm = isolation::vmstat::Vmstat::Create(isolation::vmstat::VmstatConfig{});
  if (!vm.ok()) return false;
  auto writer = (*vm)->Writer(0);
  if (!writer.ok()) return false;
  writer->Inc(isolation::vmstat::StatKind::kZone, 0, 0);
  return (*vm)->ReadSnapshot(isolation::vmstat::StatKind::kZone, 0, 0) == 1;
}

int main() {
  auto topology = isolation::Topology::FromSynthetic("package:2 l3cache:4 core:16 pu:1");
  if (!topology.ok()) {
    std::fprintf(stderr, "%s\n", topology.status().ToString().c_str());
    return 1;
  }
  auto config =
      isolation::IsolationConfig::FromFlags(*topology, "domain,1-31,33-63,65-95,97-127", "");
  if (!config.ok()) {
    std::fprintf(stderr, "%s\n", config.status().ToString().c_str());
    return 1;
  }
  const std::string hk = config->housekeeping(isolation::HousekeepingType::kDomain).ToString();
  std::printf("%s; housekeeping domain %s\n", topology->Summary().c_str(), hk.c_str());
  if (!VmstatWriterCounts()) {
    std::fprintf(stderr, "vmstat: one Inc through the inline writer did not count 1\n");
    return 1;
  }
  return hk == "0,32,64,96" ? 0 : 1;
}
