// SPDX-License-Identifier: GPL-2.0-or-later
// Boot-parameter rules of kernel/sched/isolation.c: housekeeping masks, the
// boot-CPU fallback, the match rule, HK-ENFORCE (tmigr.md S23), isolcpus
// flags, cpuset partitions, the tick CPU.

#include "isolation/core/isolation_config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

namespace isolation {
namespace {

using ::testing::HasSubstr;
using HK = HousekeepingType;

Topology Machine(const char* description) {
  absl::StatusOr<Topology> t = Topology::FromSynthetic(description);
  EXPECT_TRUE(t.ok()) << t.status();
  return *std::move(t);
}

bool HasWarning(const IsolationConfig& c, const std::string& text) {
  for (const IsolationWarning& w : c.warnings()) {
    if (w.message.find(text) != std::string::npos) return true;
  }
  return false;
}

constexpr HK kNoiseTypes[] = {HK::kTick, HK::kTimer, HK::kRcu, HK::kMisc, HK::kWq, HK::kKthread, HK::kSched};

TEST(IsolationConfig, NoIsolationByDefault) {
  const Topology t = Machine("core:8 pu:1");
  IsolationConfig c(t);
  for (int type = 0; type < kNumHousekeepingTypes; ++type) {
    EXPECT_EQ(c.housekeeping(static_cast<HK>(type)), CpuMask::Full(8));
  }
  EXPECT_FALSE(c.nohz_full_enabled());
  EXPECT_EQ(c.tick_cpu(), -1);
  EXPECT_EQ(c.ToCmdline(), "");
  for (int cpu = 0; cpu < 8; ++cpu) EXPECT_FALSE(c.CpuIsIsolated(cpu));
  EXPECT_TRUE(c.warnings().empty());
}

TEST(IsolationConfig, SeedExample128Cpus) {
  const Topology t = Machine("package:2 l3cache:4 core:16 pu:1");
  absl::StatusOr<IsolationConfig> c = IsolationConfig::FromFlags(t, "domain,1-31,33-63,65-95,97-127", "");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->num_cpus(), 128);
  EXPECT_EQ(c->housekeeping(HK::kDomain).ToString(), "0,32,64,96");
  EXPECT_EQ(c->isolcpus_domain().ToString(), "1-31,33-63,65-95,97-127");
  EXPECT_EQ(c->housekeeping(HK::kTick), CpuMask::Full(128));  // domain only
  EXPECT_EQ(c->housekeeping(HK::kManagedIrq), CpuMask::Full(128));
  EXPECT_FALSE(c->nohz_full_enabled());
  EXPECT_TRUE(c->CpuIsIsolated(1));
  EXPECT_FALSE(c->CpuIsIsolated(32));
  EXPECT_EQ(c->ToCmdline(), "isolcpus=domain,1-31,33-63,65-95,97-127");
  EXPECT_TRUE(c->warnings().empty());
}

TEST(IsolationConfig, BareListMeansDomain) {
  const Topology t = Machine("core:8 pu:1");
  absl::StatusOr<IsolationConfig> c = IsolationConfig::FromBootParams(t, "quiet isolcpus=1-3 ro");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->isolcpus_domain().ToString(), "1-3");
  EXPECT_EQ(c->housekeeping(HK::kDomain).ToString(), "0,4-7");
  EXPECT_EQ(c->ToCmdline(), "isolcpus=domain,1-3");
}

TEST(IsolationConfig, CommandLineWordsAndQuotes) {
  const Topology t = Machine("core:8 pu:1");
  absl::StatusOr<IsolationConfig> c = IsolationConfig::FromBootParams(
      t, "BOOT_IMAGE=/vmlinuz root=UUID=x isolcpus=\"domain,4-5\" xisolcpus=1 \"nohz_full=6-7\" quiet\n");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->isolcpus_domain().ToString(), "4-5");
  EXPECT_EQ(c->nohz_full().ToString(), "6-7");
  EXPECT_EQ(c->ToCmdline(), "isolcpus=domain,4-5 nohz_full=6-7");
}

TEST(IsolationConfig, NohzFullIsolatesEveryKernelNoiseType) {
  const Topology t = Machine("core:8 pu:1");
  absl::StatusOr<IsolationConfig> c = IsolationConfig::FromBootParams(t, "nohz_full=2-7\n");
  ASSERT_TRUE(c.ok()) << c.status();
  for (HK type : kNoiseTypes) EXPECT_EQ(c->housekeeping(type).ToString(), "0-1") << HousekeepingTypeName(type);
  EXPECT_EQ(c->housekeeping(HK::kDomain), CpuMask::Full(8));
  EXPECT_EQ(c->nohz_full().ToString(), "2-7");
  EXPECT_EQ(c->tick_cpu(), 0);
  EXPECT_TRUE(c->CpuIsIsolated(2));   // !hk(TICK)
  EXPECT_FALSE(c->CpuIsIsolated(1));
}

TEST(IsolationConfig, IsolcpusNohzEqualsNohzFull) {
  const Topology t = Machine("core:8 pu:1");
  absl::StatusOr<IsolationConfig> a = IsolationConfig::FromBootParams(t, "isolcpus=nohz,domain,managed_irq,4-7");
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->nohz_full().ToString(), "4-7");
  EXPECT_EQ(a->isolcpus_domain().ToString(), "4-7");
  EXPECT_EQ(a->housekeeping(HK::kManagedIrq).ToString(), "0-3");
  EXPECT_EQ(a->ToCmdline(), "isolcpus=nohz,domain,managed_irq,4-7");
  // Only nohz: domain untouched.
  absl::StatusOr<IsolationConfig> b = IsolationConfig::FromBootParams(t, "isolcpus=nohz,4-7");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->housekeeping(HK::kDomain), CpuMask::Full(8));
  EXPECT_EQ(b->housekeeping(HK::kRcu).ToString(), "0-3");
}

TEST(IsolationConfig, BootCpuFallbackWarns) {
  const Topology t = Machine("core:8 pu:1");
  absl::StatusOr<IsolationConfig> c = IsolationConfig::FromBootParams(t, "nohz_full=0-7");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_TRUE(HasWarning(*c, "Housekeeping: must include one present CPU, using boot CPU:0"));
  EXPECT_EQ(c->housekeeping(HK::kTick).ToString(), "0");
  EXPECT_EQ(c->nohz_full().ToString(), "1-7");
  EXPECT_EQ(c->tick_cpu(), 0);
  EXPECT_EQ(c->ToCmdline(), "nohz_full=1-7");
}

TEST(IsolationConfig, OnlyBootCpuIsolatedIsIgnoredWithWarning) {
  const Topology t = Machine("core:1 pu:1");
  absl::StatusOr<IsolationConfig> c = IsolationConfig::FromBootParams(t, "isolcpus=0");
  ASSERT_TRUE(c.ok());
  EXPECT_TRUE(c->isolcpus_domain().Empty());
  EXPECT_TRUE(HasWarning(*c, "using boot CPU:0"));
  EXPECT_TRUE(HasWarning(*c, "setting ignored"));
  EXPECT_EQ(c->ToCmdline(), "");
}

TEST(IsolationConfig, EmptyListIsIgnoredWithWarning) {
  const Topology t = Machine("core:8 pu:1");
  absl::StatusOr<IsolationConfig> c = IsolationConfig::FromBootParams(t, "isolcpus= nohz_full=,");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->warnings().size(), 2u);
  EXPECT_TRUE(HasWarning(*c, "setting ignored"));
  EXPECT_EQ(c->ToCmdline(), "");
  EXPECT_FALSE(c->nohz_full_enabled());
}

TEST(IsolationConfig, SecondSettingMustMatch) {
  const Topology t = Machine("core:8 pu:1");
  // isolcpus=nohz sets the kernel-noise types; nohz_full= differs -> dropped.
  absl::StatusOr<IsolationConfig> c = IsolationConfig::FromBootParams(t, "isolcpus=nohz,2-7 nohz_full=3-7");
  ASSERT_TRUE(c.ok());
  EXPECT_TRUE(HasWarning(*c, "nohz_full= must match isolcpus="));
  EXPECT_EQ(c->nohz_full().ToString(), "2-7");
  // Same set: accepted (nothing new, but no warning either).
  absl::StatusOr<IsolationConfig> d = IsolationConfig::FromBootParams(t, "isolcpus=nohz,2-7 nohz_full=2-7");
  ASSERT_TRUE(d.ok());
  EXPECT_FALSE(HasWarning(*d, "must match"));
  EXPECT_EQ(d->nohz_full().ToString(), "2-7");
}

// tmigr.md S23 (8 present CPUs).
TEST(IsolationConfig, S23_HousekeepingEnforcement) {
  const Topology t = Machine("core:8 pu:1");
  const char* kRule = "must include one present CPU neither in nohz_full= nor in isolcpus=domain";
  {
    absl::StatusOr<IsolationConfig> c = IsolationConfig::FromBootParams(t, "nohz_full=1-7 isolcpus=domain,0");
    ASSERT_TRUE(c.ok());
    EXPECT_TRUE(HasWarning(*c, kRule));
    EXPECT_TRUE(c->isolcpus_domain().Empty());  // isolcpus dropped
    EXPECT_EQ(c->nohz_full().ToString(), "1-7");
    EXPECT_EQ(c->ToCmdline(), "nohz_full=1-7");
  }
  {
    absl::StatusOr<IsolationConfig> c = IsolationConfig::FromBootParams(t, "nohz_full=1-3 isolcpus=domain,0,4-7");
    ASSERT_TRUE(c.ok());
    EXPECT_TRUE(HasWarning(*c, kRule));
    EXPECT_TRUE(c->isolcpus_domain().Empty());
  }
  {
    absl::StatusOr<IsolationConfig> c = IsolationConfig::FromBootParams(t, "nohz_full=1-3 isolcpus=domain,4-7");
    ASSERT_TRUE(c.ok());
    EXPECT_FALSE(HasWarning(*c, kRule));
    EXPECT_EQ(c->isolcpus_domain().ToString(), "4-7");
    EXPECT_EQ(c->nohz_full().ToString(), "1-3");
    EXPECT_EQ(c->ToCmdline(), "nohz_full=1-3 isolcpus=domain,4-7");
  }
  {  // swapped order: the nohz_full setting is the one dropped
    absl::StatusOr<IsolationConfig> c = IsolationConfig::FromBootParams(t, "isolcpus=domain,0 nohz_full=1-7");
    ASSERT_TRUE(c.ok());
    EXPECT_TRUE(HasWarning(*c, kRule));
    EXPECT_EQ(c->isolcpus_domain().ToString(), "0");
    EXPECT_FALSE(c->nohz_full_enabled());
    EXPECT_EQ(c->tick_cpu(), -1);
  }
  {  // managed_irq is not considered by the rule
    absl::StatusOr<IsolationConfig> c = IsolationConfig::FromBootParams(t, "isolcpus=managed_irq,1-7 nohz_full=1-7");
    ASSERT_TRUE(c.ok());
    EXPECT_FALSE(HasWarning(*c, kRule));
    EXPECT_EQ(c->nohz_full().ToString(), "1-7");
    EXPECT_EQ(c->housekeeping(HK::kManagedIrq).ToString(), "0");
  }
}

TEST(IsolationConfig, UnknownFlagSkippedWithWarning) {
  const Topology t = Machine("core:8 pu:1");
  absl::StatusOr<IsolationConfig> c = IsolationConfig::FromBootParams(t, "isolcpus=foo_bar,domain,1-3");
  ASSERT_TRUE(c.ok());
  EXPECT_TRUE(HasWarning(*c, "Skipped unknown flag foo_bar"));
  EXPECT_EQ(c->isolcpus_domain().ToString(), "1-3");
  // "domain" without the comma is not the flag: it is skipped like any unknown word.
  absl::StatusOr<IsolationConfig> d = IsolationConfig::FromBootParams(t, "isolcpus=domain");
  ASSERT_TRUE(d.ok());
  EXPECT_TRUE(HasWarning(*d, "Skipped unknown flag domain"));
  EXPECT_TRUE(d->isolcpus_domain().Empty());
}

TEST(IsolationConfig, IllegalFlagRejectsTheParameter) {
  const Topology t = Machine("core:8 pu:1");
  absl::StatusOr<IsolationConfig> c = IsolationConfig::FromBootParams(t, "isolcpus=dom4in,1-3 nohz_full=5-7");
  ASSERT_TRUE(c.ok());
  EXPECT_TRUE(HasWarning(*c, "Invalid flag dom4in"));
  EXPECT_TRUE(c->isolcpus_domain().Empty());
  EXPECT_EQ(c->nohz_full().ToString(), "5-7");  // later parameters still apply
}

TEST(IsolationConfig, MalformedListIsAnErrorNamingValueAndPosition) {
  const Topology t = Machine("core:8 pu:1");
  absl::StatusOr<IsolationConfig> c = IsolationConfig::FromBootParams(t, "isolcpus=domain,1-x");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(c.status().message()), HasSubstr("isolcpus=domain,1-x"));
  EXPECT_THAT(std::string(c.status().message()), HasSubstr("position 2"));
  absl::StatusOr<IsolationConfig> r = IsolationConfig::FromFlags(t, "", "8");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("nohz_full=8"));
}

TEST(IsolationConfig, CpusetPartitionsCountAsIsolated) {
  const Topology t = Machine("core:8 pu:1");
  absl::StatusOr<IsolationConfig> c = IsolationConfig::FromFlags(t, "1", "");
  ASSERT_TRUE(c.ok());
  ASSERT_TRUE(c->SetCpusetIsolated(CpuMask::Range(8, 4, 5)).ok());
  EXPECT_EQ(c->DomainIsolated().ToString(), "1,4-5");
  EXPECT_EQ(c->isolcpus_domain().ToString(), "1");  // boot-time set unchanged
  EXPECT_TRUE(c->CpuIsIsolated(4));
  EXPECT_FALSE(c->CpuIsIsolated(3));
  absl::Status bad = c->SetCpusetIsolated(CpuMask(16));
  EXPECT_EQ(bad.code(), absl::StatusCode::kInvalidArgument);
  ASSERT_TRUE(c->SetCpusetIsolated(CpuMask(8)).ok());
  EXPECT_FALSE(c->CpuIsIsolated(4));
}

TEST(IsolationConfig, TickCpuIsFirstTickHousekeepingCpu) {
  const Topology t = Machine("core:8 pu:1");
  absl::StatusOr<IsolationConfig> c = IsolationConfig::FromBootParams(t, "nohz_full=0-3");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->tick_cpu(), 4);  // the boot CPU is nohz_full; timekeeping goes to housekeeping
  absl::StatusOr<IsolationConfig> none = IsolationConfig::FromBootParams(t, "isolcpus=0-3");
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->tick_cpu(), -1);
}

TEST(IsolationConfig, ToCmdlineRoundTrips) {
  const Topology t = Machine("core:16 pu:1");
  absl::StatusOr<IsolationConfig> c =
      IsolationConfig::FromBootParams(t, "isolcpus=managed_irq,domain,2-5,8 nohz_full=2,3,4,5,8,9-9");
  ASSERT_TRUE(c.ok());
  absl::StatusOr<IsolationConfig> d = IsolationConfig::FromBootParams(t, c->ToCmdline());
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->ToCmdline(), c->ToCmdline());
  for (int type = 0; type < kNumHousekeepingTypes; ++type) {
    EXPECT_EQ(d->housekeeping(static_cast<HK>(type)), c->housekeeping(static_cast<HK>(type)));
  }
}

TEST(IsolationConfig, HousekeepingTypeNames) {
  EXPECT_EQ(HousekeepingTypeName(HK::kDomain), "domain");
  EXPECT_EQ(HousekeepingTypeName(HK::kTick), "tick");
  EXPECT_EQ(HousekeepingTypeName(HK::kManagedIrq), "managed_irq");
  EXPECT_EQ(HousekeepingTypeName(HK::kSched), "sched");
}

TEST(IsolationConfig, FromHostLoads) {
  absl::StatusOr<Topology> host = Topology::FromHost();
  ASSERT_TRUE(host.ok()) << host.status();
  absl::StatusOr<IsolationConfig> c = IsolationConfig::FromHost(*host);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->num_cpus(), host->num_cpus());
}

}  // namespace
}  // namespace isolation
