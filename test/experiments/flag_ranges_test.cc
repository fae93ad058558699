// SPDX-License-Identifier: GPL-2.0-or-later
// Every input bounded: every numeric flag of every isolab
// subcommand has a documented range (flag_parser.h: ISOLAB_FLAG_RANGE) that
// the flag parser applies, and every subcommand states its cost before it
// runs (subcommands.h: Subcommand::estimate; experiment.h: RunCost).

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "absl/flags/commandlineflag.h"
#include "absl/flags/reflection.h"
#include "absl/strings/numbers.h"
#include "isolation/testing/status_matchers.h"
#include "experiments/experiment.h"
#include "isolab/common_flags.h"
#include "isolab/flag_parser.h"
#include "isolab/look_flags.h"
#include "isolab/subcommands.h"

namespace isolation::isolab {
namespace {

using ::testing::HasSubstr;

std::vector<Subcommand> Everything() {
  std::vector<Subcommand> all = AllSubcommands();
  all.push_back(ReplaySubcommand());
  return all;
}

bool IsNumeric(const absl::CommandLineFlag& f) {
  return f.IsOfType<int32_t>() || f.IsOfType<int64_t>() || f.IsOfType<double>() ||
         f.IsOfType<uint32_t>();
}

TEST(FlagRanges, EveryNumericFlagOfEverySubcommandHasOne) {
  // The common flags' object (--topology, --real_cpus, ...) is linked only
  // when something refers to it, as isolab's Main does.
  (void)CommonOptionsFromFlags();
  int numeric = 0;
  for (const Subcommand& s : Everything()) {
    std::vector<std::string> flags = s.flags;
    for (const std::string& f : LookFlagNames(s.name))
      flags.push_back(f);  // --trace*, --hist*, --plot*
    for (const std::string& name : flags) {
      const absl::CommandLineFlag* flag = absl::FindCommandLineFlag(name);
      ASSERT_NE(flag, nullptr) << s.name << ": --" << name;
      // --seed (uint64) takes any value: every seed is a valid run.
      if (!IsNumeric(*flag)) continue;
      ++numeric;
      const FlagRange* range = FindFlagRange(name);
      ASSERT_NE(range, nullptr) << "isolab " << s.name << ": --" << name
                                << " has no documented range";
      EXPECT_LE(range->min, range->max) << name;
      double v = 0;
      ASSERT_TRUE(absl::SimpleAtod(flag->DefaultValue(), &v)) << name;
      EXPECT_GE(v, range->min) << "--" << name << "'s default is outside its range";
      EXPECT_LE(v, range->max) << "--" << name << "'s default is outside its range";
    }
  }
  EXPECT_GE(numeric, 20);  // the experiments' own numeric flags (plus the common ones)
}

TEST(FlagRanges, TheParserAppliesThem) {
  absl::FlagSaver saver;
  const std::vector<std::string> allowed = MmCidSubcommand().flags;
  bool help = false;
  EXPECT_THAT(ParseSubcommandFlags({"--mmcid_scan_reps=2147483647"}, allowed, &help),
              HasSubstr("--mmcid_scan_reps=2147483647: out of range (want 1..1000000)"));
  EXPECT_THAT(ParseSubcommandFlags({"--mmcid_scan_reps", "0"}, allowed, &help),
              HasSubstr("out of range"));
  EXPECT_EQ(ParseSubcommandFlags({"--mmcid_scan_reps=1000000"}, allowed, &help), "");
  EXPECT_EQ(ParseSubcommandFlags({"--mmcid_scan_reps=1"}, allowed, &help), "");
}

TEST(RunCosts, EverySubcommandEstimatesWithinTheBudgetAtItsDefaults) {
  for (const Subcommand& s : AllSubcommands()) {
    ASSERT_NE(s.estimate, nullptr) << s.name;
    for (bool quick : {false, true}) {
      experiments::CommonOptions common;
      common.quick = quick;
      absl::StatusOr<experiments::RunCost> cost = s.estimate(common);
      ISOLATION_ASSERT_OK(cost) << s.name;
      EXPECT_GT(cost->seconds, 0) << s.name;
      EXPECT_GT(cost->bytes, 0) << s.name;
      EXPECT_FALSE(experiments::OverBudget(*cost))
          << s.name << ": " << experiments::FormatCost(*cost);
    }
  }
}

TEST(RunCosts, TheWorstCasesOfTheRangesArePastTheBudget) {
  absl::FlagSaver saver;
  experiments::CommonOptions big;
  big.topology = "package:2 core:4096 pu:1";
  big.isolcpus = "1-8191";
  struct Case {
    Subcommand subcommand;
    std::vector<std::string> args;
  };
  const std::vector<Case> cases = {
      {MmCidSubcommand(), {"--mmcid_scan_reps=1000000", "--mmcid_duration_ms=3600000"}},
      {TmigrSubcommand(), {"--tmigr_duration_ms=3600000"}},
      {IdleSubcommand(), {"--idle_samples=10000000", "--idle_llc_cpus=4096"}},
      {IdleSubcommand(), {"--idle_iterations=100000"}},
      {VmstatSubcommand(), {"--vmstat_host_iterations=100000000"}},
      {VmstatSubcommand(), {"--vmstat_syscalls=10000000"}},
  };
  for (const Case& c : cases) {
    bool help = false;
    ASSERT_EQ(ParseSubcommandFlags(c.args, c.subcommand.flags, &help), "") << c.subcommand.name;
    ISOLATION_ASSERT_OK_AND_ASSIGN(experiments::RunCost cost, c.subcommand.estimate(big));
    EXPECT_TRUE(experiments::OverBudget(cost))
        << c.subcommand.name << " " << c.args[0] << ": " << experiments::FormatCost(cost);
    ASSERT_EQ(ParseSubcommandFlags({}, c.subcommand.flags, &help), "");
    // Reset what the case set (the saver restores at the end only).
    for (const std::string& a : c.args) {
      absl::CommandLineFlag* f = absl::FindCommandLineFlag(a.substr(2, a.find('=') - 2));
      std::string err;
      ASSERT_TRUE(f->ParseFrom(f->DefaultValue(), &err));
    }
  }
}

// 8192 spinning model CPUs on 2 host CPUs: hand-offs grow as the cube of
// the share (measured: 1000 on 2 took 27 s; 8192 did not end in 10 min).
TEST(RunCosts, AnOversubscribedRealThreadModelIsCostedByItsShare) {
  absl::FlagSaver saver;
  experiments::CommonOptions common;
  common.topology = "package:2 core:4096 pu:1";
  common.isolcpus = "1-8191";
  common.quick = true;
  common.allow_oversubscribed = true;
  common.host_cpus = 2;
  bool help = false;
  ASSERT_EQ(ParseSubcommandFlags({}, TmigrSubcommand().flags, &help), "");
  for (int real_cpus : {2, 300, 8192}) {
    common.real_cpus = real_cpus;
    ISOLATION_ASSERT_OK_AND_ASSIGN(experiments::RunCost cost, TmigrSubcommand().estimate(common));
    EXPECT_EQ(experiments::OverBudget(cost), real_cpus == 8192)
        << real_cpus << ": " << experiments::FormatCost(cost);
  }
  common.host_cpus = 8192;  // the same model on a host that has the CPUs
  ISOLATION_ASSERT_OK_AND_ASSIGN(experiments::RunCost cost, TmigrSubcommand().estimate(common));
  EXPECT_FALSE(experiments::OverBudget(cost)) << experiments::FormatCost(cost);
}

TEST(RunCosts, FormatAndAdd) {
  experiments::RunCost total;
  experiments::AddCost(total, {2, 1024.0 * 1024, "small"});
  experiments::AddCost(total, {7200, 3.0 * 1024 * 1024 * 1024, "big"});
  EXPECT_DOUBLE_EQ(total.seconds, 7202);
  EXPECT_DOUBLE_EQ(total.bytes, 3.0 * 1024 * 1024 * 1024);  // parts run one after the other
  EXPECT_EQ(experiments::FormatCost(total), "~2 h, ~3 GiB (big; small)");
  EXPECT_TRUE(experiments::OverBudget(total));
  EXPECT_FALSE(experiments::OverBudget({60, 1e9, ""}));
  EXPECT_TRUE(experiments::OverBudget({60, 9.0 * 1024 * 1024 * 1024, ""}));
}

}  // namespace
}  // namespace isolation::isolab
