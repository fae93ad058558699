// SPDX-License-Identifier: GPL-2.0-or-later
// The directed probes behind isolab's negative controls:
// on every machine where a probe finds a placement, the bug's hierarchy is
// caught and mainline is clean; where none exists the probe says why.  The
// oslat workload alone reported the four tmigr bug switches clean on the
// default machine and the idle control V1-trusting clean on --quick.

#include <string>
#include <tuple>

#include "experiments/idle_probe.h"
#include "experiments/tmigr_bug_probe.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "isolation/core/isolation_config.h"
#include "isolation/core/topology.h"
#include "isolation/idle_select/selector.h"
#include "isolation/testing/status_matchers.h"

namespace isolation::experiments {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

struct Machine {
  const char* topology;
  const char* isolcpus;
};

// The default machine of isolab (the seeds' box with their isolcpus=), small
// and single-level ones, and a 8192-CPU one.
constexpr Machine kMachines[] = {
    {"package:2 l3cache:4 core:16 pu:1", "1-31,33-63,65-95,97-127"},
    {"package:2 l3cache:4 core:16 pu:1", ""},
    {"pu:2", ""},
    {"pu:8", ""},
    {"pu:16", ""},
    {"pu:72", "1-7"},
    {"package:2 core:4096 pu:1", "1-8191"},
    {"package:2 core:4096 pu:1", ""},
};

class TmigrProbe : public ::testing::TestWithParam<std::tuple<std::string, std::string, int>> {};

TEST_P(TmigrProbe, CaughtWhereShownMainlineCleanElseSaysWhy) {
  const auto& [bug, participation, machine_index] = GetParam();
  const Machine& m = kMachines[machine_index];
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto topo, Topology::FromSynthetic(m.topology));
  ISOLATION_ASSERT_OK_AND_ASSIGN(
      auto iso, IsolationConfig::FromBootParams(topo, std::string("isolcpus=") + m.isolcpus));
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto probe, ProbeTmigrBug(bug, participation, topo, iso));
  SCOPED_TRACE(probe.placement);
  if (!probe.applicable) {
    EXPECT_THAT(probe.reason, HasSubstr("this machine has"));
    EXPECT_THAT(probe.violations, IsEmpty());
    return;
  }
  EXPECT_THAT(probe.violations, Not(IsEmpty())) << bug << " not caught on " << m.topology;
  EXPECT_THAT(probe.mainline_violations, IsEmpty());
}

INSTANTIATE_TEST_SUITE_P(
    AllBugs, TmigrProbe,
    ::testing::Combine(::testing::ValuesIn(TmigrProbedBugs()),
                       ::testing::Values("v6.9", "isolation"),
                       ::testing::Range(0, static_cast<int>(std::size(kMachines)))));

// On the default machine each bug is shown by at least one default
// participation, except early_return, which needs a single-level hierarchy.
TEST(TmigrProbe, DefaultMachineShowsEveryBugButTheSingleLevelOne) {
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto topo, Topology::FromSynthetic(kMachines[0].topology));
  ISOLATION_ASSERT_OK_AND_ASSIGN(
      auto iso,
      IsolationConfig::FromBootParams(topo, std::string("isolcpus=") + kMachines[0].isolcpus));
  for (const std::string& bug : TmigrProbedBugs()) {
    ISOLATION_ASSERT_OK_AND_ASSIGN(auto probe, ProbeTmigrBug(bug, "v6.9", topo, iso));
    EXPECT_EQ(probe.applicable, bug != "early_return") << bug << ": " << probe.reason;
  }
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto topo8, Topology::FromSynthetic("pu:8"));
  ISOLATION_ASSERT_OK_AND_ASSIGN(
      auto probe, ProbeTmigrBug("early_return", "v6.9", topo8, IsolationConfig(topo8)));
  EXPECT_TRUE(probe.applicable);
  EXPECT_THAT(probe.violations, Not(IsEmpty()));
}

TEST(TmigrProbe, UnknownBugIsAnErrorNamingIt) {
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto topo, Topology::FromSynthetic("pu:8"));
  auto probe = ProbeTmigrBug("frob\n", "v6.9", topo, IsolationConfig(topo));
  ASSERT_FALSE(probe.ok());
  EXPECT_THAT(probe.status().message(), HasSubstr("'frob\\n'"));
}

// Every registered scan-style selector passes the stale-hint probe; every
// negative control that trusts a stale hint fails it.
TEST(StaleHintProbe, HonestSelectorsPassTrustingControlFails) {
  for (const idle_select::SelectorEntry* e : idle_select::SelectorRegistry().All()) {
    SCOPED_TRACE(e->name);
    ISOLATION_ASSERT_OK_AND_ASSIGN(auto probe, ProbeStaleIdleHint(e->name, 64));
    if (e->name == "V1-trusting") {
      EXPECT_TRUE(probe.applicable);
      EXPECT_GT(probe.violation_count, 0);
    } else if (!e->negative_control) {
      EXPECT_EQ(probe.violation_count, 0)
          << (probe.violations.empty() ? "" : probe.violations.front());
    }
  }
}

}  // namespace
}  // namespace isolation::experiments
