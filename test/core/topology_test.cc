// SPDX-License-Identifier: GPL-2.0-or-later
// Topology from hwloc synthetic descriptions and from explicit ids.

#include "isolation/core/topology.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "isolation/testing/status_matchers.h"

namespace isolation {
namespace {

using ::testing::HasSubstr;

struct Expected {
  const char* description;
  int cpus, cores, llcs, nodes, packages, smt;
};

class SyntheticTopology : public ::testing::TestWithParam<Expected> {};

TEST_P(SyntheticTopology, CountsAndMaskInvariants) {
  const Expected& e = GetParam();
  ISOLATION_ASSERT_OK_AND_ASSIGN(Topology t, Topology::FromSynthetic(e.description));
  EXPECT_EQ(t.num_cpus(), e.cpus);
  EXPECT_EQ(t.num_cores(), e.cores);
  EXPECT_EQ(t.num_llcs(), e.llcs);
  EXPECT_EQ(t.num_nodes(), e.nodes);
  EXPECT_EQ(t.num_packages(), e.packages);
  EXPECT_EQ(t.smt_width(), e.smt);
  EXPECT_EQ(t.description(), e.description);
  EXPECT_EQ(t.possible(), CpuMask::Full(e.cpus));
  EXPECT_EQ(t.present(), CpuMask::Full(e.cpus));
  EXPECT_EQ(t.online(), CpuMask::Full(e.cpus));
  // Cores, LLCs and nodes each partition the CPUs; every CPU is in its own masks.
  for (const auto& [count, mask_of] : std::vector<std::pair<int, std::function<CpuMask(int)>>>{
           {t.num_cores(), [&](int i) { return t.core_mask(i); }},
           {t.num_llcs(), [&](int i) { return t.llc_mask(i); }},
           {t.num_nodes(), [&](int i) { return t.node_mask(i); }}}) {
    CpuMask all(e.cpus);
    int total = 0;
    for (int i = 0; i < count; ++i) {
      EXPECT_FALSE(mask_of(i).Empty());
      EXPECT_FALSE(all.Intersects(mask_of(i)));
      all.Or(mask_of(i));
      total += mask_of(i).Weight();
    }
    EXPECT_EQ(total, e.cpus);
    EXPECT_EQ(all, CpuMask::Full(e.cpus));
  }
  // A core's CPU list (the allocation-free form) is its mask, ascending.
  for (int k = 0; k < t.num_cores(); ++k) {
    CpuMask listed(e.cpus);
    int prev = -1;
    for (int cpu : t.core_cpus(k)) {
      EXPECT_GT(cpu, prev) << "core " << k;
      prev = cpu;
      EXPECT_EQ(t.core_of(cpu), k);
      listed.Set(cpu);
    }
    EXPECT_EQ(listed, t.core_mask(k)) << "core " << k;
  }
  for (int cpu = 0; cpu < e.cpus; ++cpu) {
    EXPECT_TRUE(t.smt_siblings(cpu).Test(cpu));
    EXPECT_TRUE(t.llc_mask(t.llc_of(cpu)).Test(cpu));
    EXPECT_TRUE(t.node_mask(t.node_of(cpu)).Test(cpu));
    EXPECT_TRUE(t.smt_siblings(cpu).IsSubsetOf(t.llc_mask(t.llc_of(cpu))));
    EXPECT_TRUE(t.SharesCache(cpu, t.llc_mask(t.llc_of(cpu)).First()));
    EXPECT_LT(t.package_of(cpu), t.num_packages());
  }
}

INSTANTIATE_TEST_SUITE_P(
    Descriptions, SyntheticTopology,
    ::testing::Values(Expected{"package:2 l3cache:4 core:16 pu:1", 128, 128, 8, 1, 2, 1},
                      Expected{"numa:2 l3:4 core:16 pu:2", 256, 128, 8, 2, 1, 2},
                      Expected{"pack:2 core:4 pu:2(indexes=core:pack)", 16, 8, 2, 1, 2, 2},
                      Expected{"pack:2 numa:1 l3:2 core:4 pu:2", 32, 16, 4, 2, 2, 2},
                      Expected{"core:8 pu:1", 8, 8, 1, 1, 1, 1}, Expected{"pu:4", 4, 4, 1, 1, 1, 1},
                      Expected{"pack:64 l3:2 core:32 pu:2", 8192, 4096, 128, 1, 64, 2}));

TEST(Topology, SeedMachineLayout) {
  ISOLATION_ASSERT_OK_AND_ASSIGN(Topology t,
                                 Topology::FromSynthetic("package:2 l3cache:4 core:16 pu:1"));
  EXPECT_EQ(t.llc_mask(0).ToString(), "0-15");
  EXPECT_EQ(t.llc_mask(1).ToString(), "16-31");
  EXPECT_EQ(t.package_of(63), 0);
  EXPECT_EQ(t.package_of(64), 1);
  EXPECT_EQ(t.Summary(), "128 cpus, 128 cores, 8 llcs, 1 numa node, 2 packages");
}

TEST(Topology, NumaAndSmtLayout) {
  ISOLATION_ASSERT_OK_AND_ASSIGN(Topology t, Topology::FromSynthetic("numa:2 l3:4 core:16 pu:2"));
  EXPECT_EQ(t.core_mask(1).ToString(), "2-3");
  EXPECT_EQ(t.smt_siblings(3).ToString(), "2-3");
  EXPECT_EQ(t.llc_mask(0).ToString(), "0-31");
  EXPECT_EQ(t.node_mask(0).ToString(), "0-127");
  EXPECT_EQ(t.node_mask(1).ToString(), "128-255");
  EXPECT_EQ(t.node_of(200), 1);
}

TEST(Topology, IntelStyleSiblingNumbering) {
  ISOLATION_ASSERT_OK_AND_ASSIGN(Topology t,
                                 Topology::FromSynthetic("pack:2 core:4 pu:2(indexes=core:pack)"));
  EXPECT_EQ(t.core_mask(0).ToString(), "0,8");
  EXPECT_EQ(t.smt_siblings(9).ToString(), "1,9");
  EXPECT_THAT(t.core_cpus(1), ::testing::ElementsAre(1, 9));
  EXPECT_EQ(t.llc_mask(t.llc_of(4)).ToString(), "4-7,12-15");  // no cache level: LLC = package
  EXPECT_FALSE(t.SharesCache(0, 4));
}

TEST(Topology, BadSyntheticStringsAreErrorsNamingTheString) {
  for (const char* bad :
       {"bogus:3", "core:", "core:0", "package:2 core:x", "", "pu:9000", "l3:2 core:2 pu:5000"}) {
    absl::StatusOr<Topology> t = Topology::FromSynthetic(bad);
    ASSERT_FALSE(t.ok()) << "accepted \"" << bad << "\": " << t->Summary();
    EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_THAT(std::string(t.status().message()), HasSubstr(std::string("\"") + bad + "\""))
        << t.status();
  }
}

TEST(Topology, FromFlagSelectsSyntheticOrHost) {
  ISOLATION_ASSERT_OK_AND_ASSIGN(Topology t, Topology::FromFlag("core:4 pu:1"));
  EXPECT_EQ(t.num_cpus(), 4);
  ISOLATION_ASSERT_OK_AND_ASSIGN(Topology host, Topology::FromFlag("host"));
  EXPECT_EQ(host.description(), "host");
  EXPECT_GE(host.num_cpus(), 1);
}

TEST(Topology, FromHostRefusesHwlocEnvironmentRedirect) {
  absl::StatusOr<Topology> plain = Topology::FromHost();
  ISOLATION_ASSERT_OK(plain);
  ASSERT_EQ(setenv("HWLOC_SYNTHETIC", "pack:2 core:12 pu:2", 1), 0);
  absl::StatusOr<Topology> with_env = Topology::FromHost();
  // Synthetic descriptions given explicitly are unaffected by the variable.
  absl::StatusOr<Topology> explicit_synthetic = Topology::FromSynthetic("core:3 pu:1");
  unsetenv("HWLOC_SYNTHETIC");
  ASSERT_FALSE(with_env.ok()) << "modelled " << with_env->Summary() << " instead of the host";
  EXPECT_EQ(with_env.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(with_env.status().message()),
              HasSubstr("HWLOC_SYNTHETIC=\"pack:2 core:12 pu:2\""));
  ISOLATION_ASSERT_OK(explicit_synthetic);
  EXPECT_EQ(explicit_synthetic->num_cpus(), 3);
}

TEST(Topology, SetOnlineErrorsAndMasks) {
  ISOLATION_ASSERT_OK_AND_ASSIGN(Topology t, Topology::FromSynthetic("core:4 pu:1"));
  EXPECT_EQ(t.SetOnline(-1, false).code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(t.SetOnline(4, true).code(), absl::StatusCode::kOutOfRange);
  EXPECT_THAT(std::string(t.SetOnline(4, true).message()), HasSubstr("cpu 4"));
  ISOLATION_ASSERT_OK(t.SetOnline(1, false));
  ISOLATION_ASSERT_OK(t.SetOnline(1, false));  // already offline: no-op
  ISOLATION_ASSERT_OK(t.SetOnline(2, false));
  ISOLATION_ASSERT_OK(t.SetOnline(3, false));
  EXPECT_EQ(t.online().ToString(), "0");
  EXPECT_FALSE(t.IsOnline(3));
  absl::Status last = t.SetOnline(0, false);
  EXPECT_EQ(last.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(last.message()), HasSubstr("last online"));
  EXPECT_TRUE(t.IsOnline(0));
  ISOLATION_ASSERT_OK(t.SetOnline(2, true));
  EXPECT_EQ(t.online().ToString(), "0,2");
  EXPECT_EQ(t.present(), CpuMask::Full(4));  // hotplug leaves present/possible alone
  EXPECT_EQ(t.possible(), CpuMask::Full(4));
}

TEST(Topology, FromIdsValidates) {
  ISOLATION_ASSERT_OK_AND_ASSIGN(Topology ok, Topology::FromIds({0, 0, 1, 1}, {0, 0, 0, 0},
                                                                {0, 0, 0, 0}, {0, 0, 0, 0}, "ids"));
  EXPECT_EQ(ok.smt_width(), 2);
  EXPECT_EQ(ok.Summary(), "4 cpus, 2 cores, 1 llc, 1 numa node, 1 package");
  // Length mismatch, negative id, gap in ids, a core split across LLCs, no cpus.
  EXPECT_FALSE(Topology::FromIds({0, 1}, {0}, {0, 0}, {0, 0}, "len").ok());
  EXPECT_FALSE(Topology::FromIds({0, -1}, {0, 0}, {0, 0}, {0, 0}, "neg").ok());
  absl::StatusOr<Topology> gap = Topology::FromIds({0, 2}, {0, 0}, {0, 0}, {0, 0}, "gap");
  ASSERT_FALSE(gap.ok());
  EXPECT_THAT(std::string(gap.status().message()), HasSubstr("\"gap\""));
  absl::StatusOr<Topology> split =
      Topology::FromIds({0, 1, 0}, {0, 0, 1}, {0, 0, 0}, {0, 0, 0}, "split");
  ASSERT_FALSE(split.ok());
  EXPECT_THAT(std::string(split.status().message()), HasSubstr("cpus 0 and 2 share core 0"));
  EXPECT_FALSE(Topology::FromIds({0, 0}, {0, 0}, {0, 1}, {0, 0}, "split node").ok());
  EXPECT_FALSE(Topology::FromIds({0, 0}, {0, 0}, {0, 0}, {0, 1}, "split package").ok());
  EXPECT_FALSE(Topology::FromIds({}, {}, {}, {}, "empty").ok());
}

}  // namespace
}  // namespace isolation
