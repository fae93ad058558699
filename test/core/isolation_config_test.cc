// SPDX-License-Identifier: GPL-2.0-or-later
// Boot-parameter rules of kernel/sched/isolation.c: housekeeping masks, the
// boot-CPU fallback, the match rule, HK-ENFORCE (tmigr.md S23), isolcpus
// flags, cpuset partitions, the tick CPU.

#include "isolation/core/isolation_config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "isolation/testing/status_matchers.h"

namespace isolation {
namespace {

using ::testing::HasSubstr;
using HK = HousekeepingType;

Topology Machine(const char* description) {
  Topology t = Topology::FromSynthetic(description).value();
  return t;
}

bool HasWarning(const IsolationConfig& c, const std::string& text) {
  for (const IsolationWarning& w : c.warnings()) {
    if (w.message.find(text) != std::string::npos) return true;
  }
  return false;
}

constexpr HK kNoiseTypes[] = {HK::kTick, HK::kTimer,   HK::kRcu,  HK::kMisc,
                              HK::kWq,   HK::kKthread, HK::kSched};

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
  ISOLATION_ASSERT_OK_AND_ASSIGN(
      IsolationConfig c, IsolationConfig::FromFlags(t, "domain,1-31,33-63,65-95,97-127", ""));
  EXPECT_EQ(c.num_cpus(), 128);
  EXPECT_EQ(c.housekeeping(HK::kDomain).ToString(), "0,32,64,96");
  EXPECT_EQ(c.isolcpus_domain().ToString(), "1-31,33-63,65-95,97-127");
  EXPECT_EQ(c.housekeeping(HK::kTick), CpuMask::Full(128));  // domain only
  EXPECT_EQ(c.housekeeping(HK::kManagedIrq), CpuMask::Full(128));
  EXPECT_FALSE(c.nohz_full_enabled());
  EXPECT_TRUE(c.CpuIsIsolated(1));
  EXPECT_FALSE(c.CpuIsIsolated(32));
  EXPECT_EQ(c.ToCmdline(), "isolcpus=domain,1-31,33-63,65-95,97-127");
  EXPECT_TRUE(c.warnings().empty());
}

TEST(IsolationConfig, BareListMeansDomain) {
  const Topology t = Machine("core:8 pu:1");
  ISOLATION_ASSERT_OK_AND_ASSIGN(IsolationConfig c,
                                 IsolationConfig::FromBootParams(t, "quiet isolcpus=1-3 ro"));
  EXPECT_EQ(c.isolcpus_domain().ToString(), "1-3");
  EXPECT_EQ(c.housekeeping(HK::kDomain).ToString(), "0,4-7");
  EXPECT_EQ(c.ToCmdline(), "isolcpus=domain,1-3");
}

TEST(IsolationConfig, CommandLineWordsAndQuotes) {
  const Topology t = Machine("core:8 pu:1");
  ISOLATION_ASSERT_OK_AND_ASSIGN(
      IsolationConfig c,
      IsolationConfig::FromBootParams(t,
                                      "BOOT_IMAGE=/vmlinuz root=UUID=x isolcpus=\"domain,4-5\" "
                                      "xisolcpus=1 \"nohz_full=6-7\" quiet\n"));
  EXPECT_EQ(c.isolcpus_domain().ToString(), "4-5");
  EXPECT_EQ(c.nohz_full().ToString(), "6-7");
  EXPECT_EQ(c.ToCmdline(), "isolcpus=domain,4-5 nohz_full=6-7");
}

TEST(IsolationConfig, NohzFullIsolatesEveryKernelNoiseType) {
  const Topology t = Machine("core:8 pu:1");
  ISOLATION_ASSERT_OK_AND_ASSIGN(IsolationConfig c,
                                 IsolationConfig::FromBootParams(t, "nohz_full=2-7\n"));
  for (HK type : kNoiseTypes)
    EXPECT_EQ(c.housekeeping(type).ToString(), "0-1") << HousekeepingTypeName(type);
  EXPECT_EQ(c.housekeeping(HK::kDomain), CpuMask::Full(8));
  EXPECT_EQ(c.nohz_full().ToString(), "2-7");
  EXPECT_EQ(c.tick_cpu(), 0);
  EXPECT_TRUE(c.CpuIsIsolated(2));  // !hk(TICK)
  EXPECT_FALSE(c.CpuIsIsolated(1));
}

TEST(IsolationConfig, IsolcpusNohzEqualsNohzFull) {
  const Topology t = Machine("core:8 pu:1");
  ISOLATION_ASSERT_OK_AND_ASSIGN(IsolationConfig a, IsolationConfig::FromBootParams(
                                                        t, "isolcpus=nohz,domain,managed_irq,4-7"));
  EXPECT_EQ(a.nohz_full().ToString(), "4-7");
  EXPECT_EQ(a.isolcpus_domain().ToString(), "4-7");
  EXPECT_EQ(a.housekeeping(HK::kManagedIrq).ToString(), "0-3");
  EXPECT_EQ(a.ToCmdline(), "isolcpus=nohz,domain,managed_irq,4-7");
  // Only nohz: domain untouched.
  absl::StatusOr<IsolationConfig> b = IsolationConfig::FromBootParams(t, "isolcpus=nohz,4-7");
  ISOLATION_ASSERT_OK(b);
  EXPECT_EQ(b->housekeeping(HK::kDomain), CpuMask::Full(8));
  EXPECT_EQ(b->housekeeping(HK::kRcu).ToString(), "0-3");
}

TEST(IsolationConfig, BootCpuFallbackWarns) {
  const Topology t = Machine("core:8 pu:1");
  ISOLATION_ASSERT_OK_AND_ASSIGN(IsolationConfig c,
                                 IsolationConfig::FromBootParams(t, "nohz_full=0-7"));
  EXPECT_TRUE(HasWarning(c, "Housekeeping: must include one present CPU, using boot CPU:0"));
  EXPECT_EQ(c.housekeeping(HK::kTick).ToString(), "0");
  EXPECT_EQ(c.nohz_full().ToString(), "1-7");
  EXPECT_EQ(c.tick_cpu(), 0);
  EXPECT_EQ(c.ToCmdline(), "nohz_full=1-7");
}

TEST(IsolationConfig, OnlyBootCpuIsolatedIsIgnoredWithWarning) {
  const Topology t = Machine("core:1 pu:1");
  ISOLATION_ASSERT_OK_AND_ASSIGN(IsolationConfig c,
                                 IsolationConfig::FromBootParams(t, "isolcpus=0"));
  EXPECT_TRUE(c.isolcpus_domain().Empty());
  EXPECT_TRUE(HasWarning(c, "using boot CPU:0"));
  EXPECT_TRUE(HasWarning(c, "setting ignored"));
  EXPECT_EQ(c.ToCmdline(), "");
}

TEST(IsolationConfig, EmptyListIsIgnoredWithWarning) {
  const Topology t = Machine("core:8 pu:1");
  ISOLATION_ASSERT_OK_AND_ASSIGN(IsolationConfig c,
                                 IsolationConfig::FromBootParams(t, "isolcpus= nohz_full=,"));
  EXPECT_EQ(c.warnings().size(), 2u);
  EXPECT_TRUE(HasWarning(c, "setting ignored"));
  EXPECT_EQ(c.ToCmdline(), "");
  EXPECT_FALSE(c.nohz_full_enabled());
}

TEST(IsolationConfig, SecondSettingMustMatch) {
  const Topology t = Machine("core:8 pu:1");
  // isolcpus=nohz sets the kernel-noise types; nohz_full= differs -> dropped.
  absl::StatusOr<IsolationConfig> c =
      IsolationConfig::FromBootParams(t, "isolcpus=nohz,2-7 nohz_full=3-7");
  ISOLATION_ASSERT_OK(c);
  EXPECT_TRUE(HasWarning(*c, "nohz_full= must match isolcpus="));
  EXPECT_EQ(c->nohz_full().ToString(), "2-7");
  // Same set: accepted (nothing new, but no warning either).
  absl::StatusOr<IsolationConfig> d =
      IsolationConfig::FromBootParams(t, "isolcpus=nohz,2-7 nohz_full=2-7");
  ISOLATION_ASSERT_OK(d);
  EXPECT_FALSE(HasWarning(*d, "must match"));
  EXPECT_EQ(d->nohz_full().ToString(), "2-7");
}

// tmigr.md S23 (8 present CPUs).
TEST(IsolationConfig, S23_HousekeepingEnforcement) {
  const Topology t = Machine("core:8 pu:1");
  const char* kRule = "must include one present CPU neither in nohz_full= nor in isolcpus=domain";
  {
    ISOLATION_ASSERT_OK_AND_ASSIGN(
        IsolationConfig c, IsolationConfig::FromBootParams(t, "nohz_full=1-7 isolcpus=domain,0"));
    EXPECT_TRUE(HasWarning(c, kRule));
    EXPECT_TRUE(c.isolcpus_domain().Empty());  // isolcpus dropped
    EXPECT_EQ(c.nohz_full().ToString(), "1-7");
    EXPECT_EQ(c.ToCmdline(), "nohz_full=1-7");
  }
  {
    ISOLATION_ASSERT_OK_AND_ASSIGN(
        IsolationConfig c,
        IsolationConfig::FromBootParams(t, "nohz_full=1-3 isolcpus=domain,0,4-7"));
    EXPECT_TRUE(HasWarning(c, kRule));
    EXPECT_TRUE(c.isolcpus_domain().Empty());
  }
  {
    ISOLATION_ASSERT_OK_AND_ASSIGN(
        IsolationConfig c, IsolationConfig::FromBootParams(t, "nohz_full=1-3 isolcpus=domain,4-7"));
    EXPECT_FALSE(HasWarning(c, kRule));
    EXPECT_EQ(c.isolcpus_domain().ToString(), "4-7");
    EXPECT_EQ(c.nohz_full().ToString(), "1-3");
    EXPECT_EQ(c.ToCmdline(), "nohz_full=1-3 isolcpus=domain,4-7");
  }
  {  // swapped order: the nohz_full setting is the one dropped
    ISOLATION_ASSERT_OK_AND_ASSIGN(
        IsolationConfig c, IsolationConfig::FromBootParams(t, "isolcpus=domain,0 nohz_full=1-7"));
    EXPECT_TRUE(HasWarning(c, kRule));
    EXPECT_EQ(c.isolcpus_domain().ToString(), "0");
    EXPECT_FALSE(c.nohz_full_enabled());
    EXPECT_EQ(c.tick_cpu(), -1);
  }
  {  // managed_irq is not considered by the rule
    ISOLATION_ASSERT_OK_AND_ASSIGN(
        IsolationConfig c,
        IsolationConfig::FromBootParams(t, "isolcpus=managed_irq,1-7 nohz_full=1-7"));
    EXPECT_FALSE(HasWarning(c, kRule));
    EXPECT_EQ(c.nohz_full().ToString(), "1-7");
    EXPECT_EQ(c.housekeeping(HK::kManagedIrq).ToString(), "0");
  }
}

TEST(IsolationConfig, UnknownFlagSkippedWithWarning) {
  const Topology t = Machine("core:8 pu:1");
  ISOLATION_ASSERT_OK_AND_ASSIGN(IsolationConfig c,
                                 IsolationConfig::FromBootParams(t, "isolcpus=foo_bar,domain,1-3"));
  EXPECT_TRUE(HasWarning(c, "Skipped unknown flag foo_bar"));
  EXPECT_EQ(c.isolcpus_domain().ToString(), "1-3");
  // "domain" without the comma is not the flag: it is skipped like any unknown word.
  absl::StatusOr<IsolationConfig> d = IsolationConfig::FromBootParams(t, "isolcpus=domain");
  ISOLATION_ASSERT_OK(d);
  EXPECT_TRUE(HasWarning(*d, "Skipped unknown flag domain"));
  EXPECT_TRUE(d->isolcpus_domain().Empty());
}

TEST(IsolationConfig, IllegalFlagRejectsTheParameter) {
  const Topology t = Machine("core:8 pu:1");
  ISOLATION_ASSERT_OK_AND_ASSIGN(
      IsolationConfig c, IsolationConfig::FromBootParams(t, "isolcpus=dom4in,1-3 nohz_full=5-7"));
  EXPECT_TRUE(HasWarning(c, "Invalid flag dom4in"));
  EXPECT_TRUE(c.isolcpus_domain().Empty());
  EXPECT_EQ(c.nohz_full().ToString(), "5-7");  // later parameters still apply
}

// isolab's --isolcpus / --nohz_full (FromFlags) stay strict.
TEST(IsolationConfig, FlagsRejectMalformedListNamingValueAndPosition) {
  const Topology t = Machine("core:8 pu:1");
  absl::StatusOr<IsolationConfig> c = IsolationConfig::FromFlags(t, "domain,1-x", "");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(c.status().message()), HasSubstr("isolcpus=domain,1-x"));
  EXPECT_THAT(std::string(c.status().message()), HasSubstr("position 2"));
  absl::StatusOr<IsolationConfig> r = IsolationConfig::FromFlags(t, "", "8");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("nohz_full=8"));
  EXPECT_EQ(IsolationConfig(t).ApplyIsolcpus("nohz,1-").code(), absl::StatusCode::kInvalidArgument);
}

// housekeeping_setup(): cpulist_parse() < 0 -> pr_warn("Housekeeping:
// nohz_full= or isolcpus= incorrect CPU range") and the parameter is ignored
// (-EINVAL and -ERANGE alike); the kernel boots on with the next parameter.
TEST(IsolationConfig, BootParamsIgnoreMalformedListLikeHousekeepingSetup) {
  const Topology t = Machine("core:8 pu:1");
  ISOLATION_ASSERT_OK_AND_ASSIGN(
      IsolationConfig c, IsolationConfig::FromBootParams(t, "isolcpus=domain,1-x nohz_full=5-7"));
  EXPECT_TRUE(c.isolcpus_domain().Empty());
  EXPECT_EQ(c.nohz_full().ToString(), "5-7");
  EXPECT_TRUE(HasWarning(c, "Housekeeping: nohz_full= or isolcpus= incorrect CPU range"));
  EXPECT_TRUE(HasWarning(c, "invalid at position 2"));  // our diagnosis rides along
  ISOLATION_ASSERT_OK_AND_ASSIGN(IsolationConfig range,
                                 IsolationConfig::FromBootParams(t, "nohz_full=8 isolcpus=3"));
  EXPECT_FALSE(range.nohz_full_enabled());
  EXPECT_EQ(range.isolcpus_domain().ToString(), "3");
  EXPECT_TRUE(HasWarning(range, "incorrect CPU range"));
  EXPECT_TRUE(HasWarning(range, "out of range"));
}

// housekeeping_isolcpus_setup(): after an unknown flag it does `str++`,
// whether the flag ended at ',' or at the parameter's NUL -- which
// next_arg() (lib/cmdline.c) wrote over the space before the next word.  So
// the kernel goes on reading the next word as more flags and a cpulist, and
// the cpulist runs to the end of the whole command line.
TEST(IsolationConfig, UnknownLastIsolcpusFlagReadsOnIntoNextWordLikeTheKernel) {
  const Topology t = Machine("core:8 pu:1");
  // The next word is taken as flags + list: managed_irq and domain, CPUs 2-3.
  absl::StatusOr<IsolationConfig> c =
      IsolationConfig::FromBootParams(t, "quiet isolcpus=managed_irq,foo domain,2-3");
  ISOLATION_ASSERT_OK(c);
  EXPECT_EQ(c->isolcpus_domain().ToString(), "2-3");
  EXPECT_EQ(c->housekeeping(HK::kManagedIrq).ToString(), "0-1,4-7");
  EXPECT_TRUE(HasWarning(*c, "Skipped unknown flag foo"));
  EXPECT_TRUE(HasWarning(*c, "kernel quirk"));
  EXPECT_TRUE(HasWarning(*c, "str++"));
  EXPECT_TRUE(HasWarning(*c, "\"domain,2-3\""));
  EXPECT_EQ(c->ToCmdline(), "isolcpus=domain,managed_irq,2-3");
  // A bare list after the flag: isolcpus=nohz applies to it.
  absl::StatusOr<IsolationConfig> nohz =
      IsolationConfig::FromBootParams(t, "isolcpus=nohz,foo 1-3");
  ISOLATION_ASSERT_OK(nohz);
  EXPECT_EQ(nohz->nohz_full().ToString(), "1-3");
  EXPECT_TRUE(nohz->isolcpus_domain().Empty());
  // The list runs on over later words, so any further word breaks it.
  absl::StatusOr<IsolationConfig> more =
      IsolationConfig::FromBootParams(t, "isolcpus=nohz,foo 1-3 quiet");
  ISOLATION_ASSERT_OK(more);
  EXPECT_FALSE(more->nohz_full_enabled());
  EXPECT_TRUE(HasWarning(*more, "incorrect CPU range"));
  // A next word that is another parameter is an illegal flag ('='): the
  // whole isolcpus= is dropped, and that parameter is then parsed normally.
  absl::StatusOr<IsolationConfig> param =
      IsolationConfig::FromBootParams(t, "isolcpus=foo nohz_full=2-3");
  ISOLATION_ASSERT_OK(param);
  EXPECT_TRUE(param->isolcpus_domain().Empty());
  EXPECT_EQ(param->nohz_full().ToString(), "2-3");
  EXPECT_TRUE(HasWarning(*param, "Invalid flag nohz_full=2-3"));
  // Quotes shield it: repair_env_string() leaves two NULs after "foo".
  absl::StatusOr<IsolationConfig> quoted =
      IsolationConfig::FromBootParams(t, "isolcpus=\"foo\" 2-3");
  ISOLATION_ASSERT_OK(quoted);
  EXPECT_TRUE(quoted->isolcpus_domain().Empty());
  ISOLATION_ASSERT_OK_AND_ASSIGN(IsolationConfig unquoted,
                                 IsolationConfig::FromBootParams(t, "isolcpus=foo 2-3"));
  EXPECT_EQ(unquoted.isolcpus_domain().ToString(), "2-3");
  // The last word: the kernel reads past the command line (modelled as NUL).
  absl::StatusOr<IsolationConfig> last = IsolationConfig::FromBootParams(t, "isolcpus=domain,foo");
  ISOLATION_ASSERT_OK(last);
  EXPECT_TRUE(last->isolcpus_domain().Empty());
  EXPECT_TRUE(HasWarning(*last, "past the end of the command line"));
  // isolab's flag has no next word: no quirk there.
  absl::StatusOr<IsolationConfig> flag = IsolationConfig::FromFlags(t, "managed_irq,foo", "");
  ISOLATION_ASSERT_OK(flag);
  EXPECT_FALSE(HasWarning(*flag, "kernel quirk"));
}

// parse_args() (kernel/params.c) stops at "--": the rest goes to init.
TEST(IsolationConfig, DoubleDashEndsTheKernelParametersLikeParseArgs) {
  const Topology t = Machine("core:8 pu:1");
  ISOLATION_ASSERT_OK_AND_ASSIGN(IsolationConfig c,
                                 IsolationConfig::FromBootParams(t, "isolcpus=1 -- nohz_full=2-3"));
  EXPECT_EQ(c.isolcpus_domain().ToString(), "1");
  EXPECT_FALSE(c.nohz_full_enabled());
}

// obsolete_checksetup() (init/main.c) matches __setup("nohz_full=") with
// parameqn(), for which '-' and '_' are the same.
TEST(IsolationConfig, DashedParameterNameMatchesLikeObsoleteChecksetup) {
  const Topology t = Machine("core:8 pu:1");
  ISOLATION_ASSERT_OK_AND_ASSIGN(IsolationConfig c,
                                 IsolationConfig::FromBootParams(t, "nohz-full=2-3"));
  EXPECT_EQ(c.nohz_full().ToString(), "2-3");
  EXPECT_EQ(c.ToCmdline(), "nohz_full=2-3");
}

// The kernel's command line is a C string; and lib/ctype.c is Latin-1, so
// housekeeping_isolcpus_setup()'s isalpha() takes 0xE9 as a letter.
TEST(IsolationConfig, CommandLineEndsAtNulAndFlagsUseKernelCtype) {
  const Topology t = Machine("core:8 pu:1");
  absl::StatusOr<IsolationConfig> c =
      IsolationConfig::FromBootParams(t, std::string_view("isolcpus=1\0 nohz_full=2-3", 25));
  ISOLATION_ASSERT_OK(c);
  EXPECT_EQ(c->isolcpus_domain().ToString(), "1");
  EXPECT_FALSE(c->nohz_full_enabled());
  EXPECT_TRUE(HasWarning(*c, "NUL byte at position 10"));
  ISOLATION_ASSERT_OK_AND_ASSIGN(
      IsolationConfig latin1, IsolationConfig::FromBootParams(t, "isolcpus=\xe9t\xe9,1-3\tquiet"));
  EXPECT_EQ(latin1.isolcpus_domain().ToString(), "1-3");
  EXPECT_TRUE(HasWarning(latin1, "Skipped unknown flag \xe9t\xe9"));
}

// housekeeping_setup() without CONFIG_NO_HZ_FULL: "Housekeeping: nohz
// unsupported. Build with CONFIG_NO_HZ_FULL", and the whole setting (even
// isolcpus=nohz,domain) is ignored.
TEST(IsolationConfig, NoHzFullUnsupportedIgnoresKernelNoiseSettings) {
  const Topology t = Machine("core:8 pu:1");
  IsolationConfig::BootOptions no_nohz;
  no_nohz.no_hz_full = false;
  absl::StatusOr<IsolationConfig> c = IsolationConfig::FromBootParams(
      t, "nohz_full=1-3 isolcpus=nohz,domain,1-3 isolcpus=domain,4-5", no_nohz);
  ISOLATION_ASSERT_OK(c);
  EXPECT_FALSE(c->nohz_full_enabled());
  EXPECT_EQ(c->isolcpus_domain().ToString(), "4-5");
  EXPECT_TRUE(HasWarning(*c, "Housekeeping: nohz unsupported. Build with CONFIG_NO_HZ_FULL"));
}

TEST(IsolationConfig, CpusetPartitionsCountAsIsolated) {
  const Topology t = Machine("core:8 pu:1");
  ISOLATION_ASSERT_OK_AND_ASSIGN(IsolationConfig c, IsolationConfig::FromFlags(t, "1", ""));
  ISOLATION_ASSERT_OK(c.SetCpusetIsolated(CpuMask::Range(8, 4, 5)));
  EXPECT_EQ(c.DomainIsolated().ToString(), "1,4-5");
  EXPECT_EQ(c.isolcpus_domain().ToString(), "1");  // boot-time set unchanged
  EXPECT_TRUE(c.CpuIsIsolated(4));
  EXPECT_FALSE(c.CpuIsIsolated(3));
  absl::Status bad = c.SetCpusetIsolated(CpuMask(16));
  EXPECT_EQ(bad.code(), absl::StatusCode::kInvalidArgument);
  ISOLATION_ASSERT_OK(c.SetCpusetIsolated(CpuMask(8)));
  EXPECT_FALSE(c.CpuIsIsolated(4));
}

TEST(IsolationConfig, TickCpuIsFirstTickHousekeepingCpu) {
  const Topology t = Machine("core:8 pu:1");
  ISOLATION_ASSERT_OK_AND_ASSIGN(IsolationConfig c,
                                 IsolationConfig::FromBootParams(t, "nohz_full=0-3"));
  EXPECT_EQ(c.tick_cpu(), 4);  // the boot CPU is nohz_full; timekeeping goes to housekeeping
  ISOLATION_ASSERT_OK_AND_ASSIGN(IsolationConfig none,
                                 IsolationConfig::FromBootParams(t, "isolcpus=0-3"));
  EXPECT_EQ(none.tick_cpu(), -1);
}

TEST(IsolationConfig, ToCmdlineRoundTrips) {
  const Topology t = Machine("core:16 pu:1");
  absl::StatusOr<IsolationConfig> c = IsolationConfig::FromBootParams(
      t, "isolcpus=managed_irq,domain,2-5,8 nohz_full=2,3,4,5,8,9-9");
  ISOLATION_ASSERT_OK(c);
  ISOLATION_ASSERT_OK_AND_ASSIGN(IsolationConfig d,
                                 IsolationConfig::FromBootParams(t, c->ToCmdline()));
  EXPECT_EQ(d.ToCmdline(), c->ToCmdline());
  for (int type = 0; type < kNumHousekeepingTypes; ++type) {
    EXPECT_EQ(d.housekeeping(static_cast<HK>(type)), c->housekeeping(static_cast<HK>(type)));
  }
}

TEST(IsolationConfig, HousekeepingTypeNames) {
  EXPECT_EQ(HousekeepingTypeName(HK::kDomain), "domain");
  EXPECT_EQ(HousekeepingTypeName(HK::kTick), "tick");
  EXPECT_EQ(HousekeepingTypeName(HK::kManagedIrq), "managed_irq");
  EXPECT_EQ(HousekeepingTypeName(HK::kSched), "sched");
}

TEST(IsolationConfig, FromHostLoads) {
  ISOLATION_ASSERT_OK_AND_ASSIGN(Topology host, Topology::FromHost());
  ISOLATION_ASSERT_OK_AND_ASSIGN(IsolationConfig c, IsolationConfig::FromHost(host));
  EXPECT_EQ(c.num_cpus(), host.num_cpus());
}

// Memory in proportion to the input: a parameter of thousands of unknown
// flag words gives one warning per word (as the kernel prints one each),
// each naming a bounded label of the parameter, not the whole of it.
TEST(IsolationConfig, ManyUnknownFlagsCostLinearMemory) {
  const Topology t = Machine("core:16 pu:1");
  std::string value;
  for (int i = 0; i < 8000; ++i) value += "foo,";
  value += "1-3";
  ISOLATION_ASSERT_OK_AND_ASSIGN(IsolationConfig c, IsolationConfig::FromFlags(t, value, ""));
  ASSERT_EQ(c.warnings().size(), 8000u);
  size_t bytes = 0;
  for (const IsolationWarning& w : c.warnings()) bytes += w.parameter.size() + w.message.size();
  EXPECT_LT(bytes, 8000u * 200u);
  EXPECT_THAT(c.warnings()[0].parameter, HasSubstr("(32012 bytes)"));
  EXPECT_EQ(c.isolcpus_domain().ToString(), "1-3");
}

// Control bytes of a parameter never reach a terminal raw.
TEST(IsolationConfig, WarningsArePrintable) {
  const Topology t = Machine("core:4 pu:1");
  absl::StatusOr<IsolationConfig> c = IsolationConfig::FromFlags(t, "fo\x1bo,1", "");
  ISOLATION_ASSERT_OK(c);
  ASSERT_FALSE(c->warnings().empty());
  for (const IsolationWarning& w : c->warnings()) {
    for (char ch : w.parameter + w.message)
      EXPECT_FALSE(static_cast<unsigned char>(ch) < 0x20) << w.message;
  }
  // The kernel-faithful leniencies of the list carry a note.
  c = IsolationConfig::FromFlags(t, "1\n2", "");
  ISOLATION_ASSERT_OK(c);
  ASSERT_EQ(c->warnings().size(), 1u);
  EXPECT_THAT(c->warnings()[0].message, HasSubstr("note: "));
  EXPECT_EQ(c->warnings()[0].parameter, "isolcpus=1\\n2");
}

}  // namespace
}  // namespace isolation
