// SPDX-License-Identifier: GPL-2.0-or-later
// The conformance kit's tmigr suites (isolation/testing/tmigr.h) for every
// built-in variant that is not a negative control: the invariant and
// scenario tests of the hierarchy live in the kit, so an outside project
// runs exactly these on its own variant.

#include <map>
#include <set>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "isolation/testing/status_matchers.h"
#include "isolation/testing/tmigr.h"

ISOLATION_TMIGR_CONFORMANCE_VALUES(
    BuiltIn, ::testing::ValuesIn(isolation::testing::RegisteredTmigrVariants()));

// ---- the check list -----------------------------------------------------------------------

namespace {

namespace tc = ::isolation::testing::tmigr_conformance;

TEST(TmigrCheckList, NamesEqualTheTestNames) {
  std::map<std::string, std::set<std::string>> registered;  // suite -> test names
  const ::testing::UnitTest& u = *::testing::UnitTest::GetInstance();
  for (int i = 0; i < u.total_test_suite_count(); ++i) {
    const ::testing::TestSuite& s = *u.GetTestSuite(i);
    const std::string suite = s.name();  // "BuiltIn/TmigrScenarios"
    if (suite.rfind("BuiltIn/", 0) != 0) continue;
    for (int j = 0; j < s.total_test_count(); ++j) {
      const std::string test = s.GetTestInfo(j)->name();
      registered[suite.substr(suite.find('/') + 1)].insert(test.substr(0, test.find('/')));
    }
  }
  std::map<std::string, std::set<std::string>> listed;
  for (const tc::Check& c : tc::AllChecks()) {
    EXPECT_TRUE(listed[c.suite].insert(c.name).second) << "listed twice: " << c.name;
    EXPECT_FALSE(c.size.empty()) << c.name;
    EXPECT_FALSE(c.applies_when.empty()) << c.name;
  }
  EXPECT_EQ(listed, registered);
}

TEST(TmigrCheckList, NotApplicableAndRun) {
  EXPECT_EQ(*tc::NotApplicable("S11_GhostTimer", "v6.9"), "");
  EXPECT_EQ(tc::NotApplicable("GhostTimer", "v6.9").status().code(), absl::StatusCode::kNotFound);
  EXPECT_FALSE(tc::NotApplicable("S11_GhostTimer", "no-such-participation").ok());
  EXPECT_THAT(tc::Run("S11_GhostTimer", "v6.9"), ::testing::IsEmpty());
  EXPECT_THAT(tc::Run("S11_GhostTimer", "v6.9/ghost_timer"), ::testing::Not(::testing::IsEmpty()));
  // A composition with a negative-control hierarchy is a negative control.
  auto control = isolation::testing::IsTmigrNegativeControl({"isolation", "ghost_timer"});
  ISOLATION_ASSERT_OK(control);
  EXPECT_TRUE(*control);
  control = isolation::testing::IsTmigrNegativeControl({"isolation", "mainline"});
  ISOLATION_ASSERT_OK(control);
  EXPECT_FALSE(*control);
  for (const auto& v : isolation::testing::RegisteredTmigrVariants()) {
    EXPECT_FALSE(*isolation::testing::IsTmigrNegativeControl(v)) << v.ToString();
  }
}

}  // namespace
