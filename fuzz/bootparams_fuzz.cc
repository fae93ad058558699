// SPDX-License-Identifier: GPL-2.0-or-later
// Fuzz IsolationConfig::FromBootParams.  The first byte picks a model
// machine; the rest is a kernel command line.  Properties: never crash;
// when accepted, every housekeeping mask keeps a present CPU, the derived
// masks agree with the housekeeping masks, and ToCmdline() re-parses to the
// same housekeeping masks.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "isolation/core/isolation_config.h"
#include "isolation/core/topology.h"

namespace {

const std::vector<isolation::Topology>& Machines() {
  static const std::vector<isolation::Topology>* machines = [] {
    auto* v = new std::vector<isolation::Topology>;
    for (const char* d : {"core:1 pu:1", "core:8 pu:1", "pack:2 core:4 pu:2(indexes=core:pack)",
                          "package:2 l3cache:4 core:16 pu:1"}) {
      absl::StatusOr<isolation::Topology> t = isolation::Topology::FromSynthetic(d);
      if (!t.ok()) __builtin_trap();
      v->push_back(*std::move(t));
    }
    return v;
  }();
  return *machines;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const auto& machines = Machines();
  const isolation::Topology& topo = machines[data[0] % machines.size()];
  const std::string_view cmdline(reinterpret_cast<const char*>(data + 1), size - 1);
  absl::StatusOr<isolation::IsolationConfig> c =
      isolation::IsolationConfig::FromBootParams(topo, cmdline);
  if (!c.ok()) return 0;
  using HK = isolation::HousekeepingType;
  for (int t = 0; t < isolation::kNumHousekeepingTypes; ++t) {
    const isolation::CpuMask& hk = c->housekeeping(static_cast<HK>(t));
    if (hk.nbits() != topo.num_cpus() || !hk.Intersects(topo.present())) __builtin_trap();
  }
  if (c->isolcpus_domain().Intersects(c->housekeeping(HK::kDomain))) __builtin_trap();
  if (c->nohz_full().Intersects(c->housekeeping(HK::kTick))) __builtin_trap();
  if (c->nohz_full_enabled() != (c->tick_cpu() >= 0)) __builtin_trap();
  if (c->tick_cpu() >= 0 && c->nohz_full().Test(c->tick_cpu())) __builtin_trap();
  for (int cpu = 0; cpu < topo.num_cpus(); ++cpu) (void)c->CpuIsIsolated(cpu);
  absl::StatusOr<isolation::IsolationConfig> again =
      isolation::IsolationConfig::FromBootParams(topo, c->ToCmdline());
  if (!again.ok()) __builtin_trap();
  for (int t = 0; t < isolation::kNumHousekeepingTypes; ++t) {
    if (!(again->housekeeping(static_cast<HK>(t)) == c->housekeeping(static_cast<HK>(t))))
      __builtin_trap();
  }
  return 0;
}
