// SPDX-License-Identifier: GPL-2.0-or-later
// Builds the timer-migration hierarchy for a topology and an isolation
// setting, makes the isolated CPUs busy and the housekeeping CPUs idle with a
// pending global timer each, and prints who handles whose timers under every
// registered participation that is not a negative control (v6.9,
// isolation-aware in the merged and [V15] exclude orders).
//
//   example_tmigr_example ["package:2 l3cache:4 core:16 pu:1"] ["1-31,33-63,65-95,97-127"]
//   [nohz_full]

#include <cstdio>
#include <map>
#include <string>

#include "isolation/core/isolation_config.h"
#include "isolation/tmigr/tmigr.h"
#include "isolation/tmigr/timers.h"
#include "isolation/tmigr/variants.h"
#include "isolation/core/topology.h"

using namespace isolation;

int main(int argc, char** argv) {
  const std::string topo_desc = argc > 1 ? argv[1] : "package:2 l3cache:4 core:16 pu:1";
  const std::string isolcpus = argc > 2 ? argv[2] : "1-31,33-63,65-95,97-127";
  const std::string nohz_full = argc > 3 ? argv[3] : "";
  auto topo = Topology::FromSynthetic(topo_desc);
  if (!topo.ok()) {
    std::fprintf(stderr, "topology: %s\n", std::string(topo.status().message()).c_str());
    return 2;
  }
  auto iso = IsolationConfig::FromFlags(*topo, isolcpus, nohz_full);
  if (!iso.ok()) {
    std::fprintf(stderr, "isolation: %s\n", std::string(iso.status().message()).c_str());
    return 2;
  }
  const CpuMask isolated = iso->DomainIsolated();
  std::printf("%s, isolcpus=%s\n", topo->Summary().c_str(), isolated.ToString().c_str());
  for (const auto* entry : tmigr::ParticipationRegistry().All()) {
    if (entry->negative_control) continue;
    tmigr::Options options;
    options.participation = entry->name;
    auto ts = tmigr::TimerSystem::Create(*topo, options, tmigr::TimerSystem::Config{});
    if (!ts.ok()) return 1;
    tmigr::TimerSystem& sys = **ts;
    if (!sys.tmigr().SetIsolation(*iso).ok()) return 1;
    if (!sys.BootAll().ok()) return 1;
    sys.tmigr().InitIsolation();
    const auto& s = sys.tmigr().sizing();
    std::printf("\n== %s: %d levels (crossnode %d), %d groups, available %s\n", entry->name.c_str(),
                s.levels, s.crossnode_level, sys.tmigr().Snapshot().num_groups(),
                sys.tmigr().AvailableMask().ToString().c_str());
    // Housekeeping CPUs: one global timer 5 ms ahead, then idle.
    const Nanos expiry = 5 * kNsPerMs;
    for (int c = 0; c < topo->num_cpus(); ++c) {
      if (isolated.Test(c)) continue;
      sys.AddTimer(c, expiry, /*global=*/true, 0);
      sys.EnterIdle(c, 0);
    }
    // Every CPU's tick at the expiry (isolated ones are busy: tick on), and
    // idle CPUs whose wake-up fired.
    for (int c = 0; c < topo->num_cpus(); ++c) {
      if (sys.BaseIdle(c)) {
        if (sys.ProgrammedWakeup(c) <= expiry) sys.IdleWakeup(c, expiry);
      } else {
        sys.Tick(c, expiry);
      }
    }
    std::map<int, std::string> handled;  // runner -> owners
    for (const tmigr::TimerRecord& t : sys.timers()) {
      if (t.run_cpu < 0) continue;
      std::string& list = handled[t.run_cpu];
      if (!list.empty()) list += ',';
      list += std::to_string(t.owner);
    }
    for (const auto& [runner, owners] : handled) {
      std::printf("  cpu %3d%s runs the global timers of cpu %s\n", runner,
                  isolated.Test(runner) ? " (isolated)" : "", owners.c_str());
    }
    const auto v = sys.CheckInvariants(expiry);
    std::printf("  invariant violations: %zu\n", v.size());
  }
  return 0;
}
