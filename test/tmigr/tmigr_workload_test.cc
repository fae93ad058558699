// SPDX-License-Identifier: GPL-2.0-or-later
// Spec S24 (oslat seed), S25 (rtla seed) and S26 (nohz_full) on the
// discrete-event workload, both variants.

#include "isolation/tmigr/workload.h"

#include <string>

#include "absl/strings/str_join.h"
#include "gtest/gtest.h"

namespace isolation::tmigr {
namespace {

OslatWorkloadResult RunSeed(const std::string& topo_desc, const std::string& isolcpus, const std::string& nohz,
                        Variant variant, Nanos duration, bool tick_stopped = false) {
  auto topo = Topology::FromSynthetic(topo_desc);
  EXPECT_TRUE(topo.ok()) << topo.status();
  auto iso = IsolationConfig::FromFlags(*topo, isolcpus, nohz);
  EXPECT_TRUE(iso.ok()) << iso.status();
  Options o;
  o.variant = variant;
  OslatWorkloadConfig cfg;
  cfg.duration = duration;
  cfg.isolated_tick_stopped = tick_stopped;
  auto r = RunOslatWorkload(*topo, *iso, o, cfg);
  EXPECT_TRUE(r.ok()) << r.status();
  return *r;
}

constexpr char kSeedTopo[] = "package:2 l3cache:4 core:16 pu:1";
constexpr char kSeedIsol[] = "1-31,33-63,65-95,97-127";

TEST(TmigrWorkload, S24_V69PullersAreLowestBusyCpus) {
  const OslatWorkloadResult r = RunSeed(kSeedTopo, kSeedIsol, "", Variant::kV69, 2 * kNsPerSec);
  EXPECT_EQ(r.invariant_violations, 0) << absl::StrJoin(r.first_violations, "\n");
  EXPECT_EQ(r.timers_lost, 0);
  EXPECT_GT(r.timers_on_isolated, 0);
  // The published run names CPUs 1 and 65; no puller outside {1,33,65,97}.
  EXPECT_GT(r.remote_by_runner.count(1), 0u);
  EXPECT_GT(r.remote_by_runner.count(65), 0u);
  for (const auto& [cpu, n] : r.remote_by_runner) {
    EXPECT_TRUE(cpu == 1 || cpu == 33 || cpu == 65 || cpu == 97 || cpu == 0 || cpu == 32 || cpu == 64 ||
                cpu == 96)
        << "unexpected puller " << cpu;
  }
}

TEST(TmigrWorkload, S24_IsolationNoTimersOnIsolated) {
  const OslatWorkloadResult r = RunSeed(kSeedTopo, kSeedIsol, "", Variant::kIsolation, 2 * kNsPerSec);
  EXPECT_EQ(r.invariant_violations, 0) << absl::StrJoin(r.first_violations, "\n");
  EXPECT_EQ(r.timers_lost, 0);
  EXPECT_EQ(r.timers_on_isolated, 0);
  EXPECT_EQ(r.available, "0,32,64,96");
  EXPECT_GT(r.timers_total, 0);
  for (const auto& [cpu, n] : r.per_cpu_timers) {
    EXPECT_TRUE(cpu == 0 || cpu == 32 || cpu == 64 || cpu == 96) << cpu;
  }
}

TEST(TmigrWorkload, S25_RtlaSeed) {
  const OslatWorkloadResult v69 = RunSeed("pu:40", "1-9,11-39", "", Variant::kV69, kNsPerSec);
  EXPECT_EQ(v69.invariant_violations, 0) << absl::StrJoin(v69.first_violations, "\n");
  EXPECT_GT(v69.remote_by_runner.count(1), 0u);  // pulls for CPU 0
  EXPECT_GT(v69.remote_by_runner.count(8), 0u);  // lowest busy CPU of 8-15 pulls for CPU 10
  const OslatWorkloadResult isol = RunSeed("pu:40", "1-9,11-39", "", Variant::kIsolation, kNsPerSec);
  EXPECT_EQ(isol.invariant_violations, 0);
  EXPECT_EQ(isol.timers_on_isolated, 0);
  for (const auto& [cpu, n] : isol.remote_by_runner) EXPECT_TRUE(cpu == 0 || cpu == 10) << cpu;
}

TEST(TmigrWorkload, S26_NohzFullIsolatedNeverPull) {
  for (Variant v : kAllVariants) {
    const OslatWorkloadResult r = RunSeed(kSeedTopo, kSeedIsol, kSeedIsol, v, kNsPerSec, /*tick_stopped=*/true);
    EXPECT_EQ(r.invariant_violations, 0) << absl::StrJoin(r.first_violations, "\n");
    EXPECT_EQ(r.timers_on_isolated, 0) << VariantName(v);
    EXPECT_EQ(r.timers_lost, 0);
    if (v == Variant::kIsolation) {
      EXPECT_EQ(r.available, "0-127");
    }
  }
}

TEST(TmigrWorkload, RejectsBadConfig) {
  auto topo = Topology::FromSynthetic("pu:8");
  ASSERT_TRUE(topo.ok());
  IsolationConfig iso(*topo);
  OslatWorkloadConfig cfg;
  cfg.hk_burst = cfg.hk_period;
  EXPECT_FALSE(RunOslatWorkload(*topo, iso, Options{}, cfg).ok());
}

}  // namespace
}  // namespace isolation::tmigr
