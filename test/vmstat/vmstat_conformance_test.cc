// SPDX-License-Identifier: GPL-2.0-or-later
// The conformance kit (testing/vmstat.h) on every registered fold policy --
// the built-ins A0, A1, B, B.local, C, D, C.xadd, C.addo and the outside project's policy of
// examples/out_of_tree (one RegisterFoldPolicy call) -- and on two
// pairs that run a policy over another slot representation than its own.
// The negative controls are left out here; vmstat_negative_control_test
// shows that they fail.

#include <map>
#include <set>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "isolation/testing/vmstat.h"
#include "isolation/vmstat/fold_policy.h"

// B.half (B, folding on return to user only past t/2) is registered by
// examples/out_of_tree/half_threshold.cc, compiled into this test: the same
// file an outside project builds against the installed kit.

ISOLATION_VMSTAT_CONFORMANCE_IN(
    Registered, ::testing::ValuesIn(isolation::vmstat::FoldPolicyRegistry().Names()));
ISOLATION_VMSTAT_CONFORMANCE_IN(OtherSlot,
                                ::testing::Values("A1:s32-atomic", "B.local:s64-watermark"));

// ---- the check list -----------------------------------------------------------------------

namespace {

namespace vc = ::isolation::testing::vmstat_conformance;

// The list names exactly the TEST_Ps of the suites (as registered here), each
// in its own suite, each with a size and an applicability.
TEST(VmstatCheckList, NamesEqualTheTestNames) {
  std::map<std::string, std::set<std::string>> registered;  // suite -> test names
  const ::testing::UnitTest& u = *::testing::UnitTest::GetInstance();
  for (int i = 0; i < u.total_test_suite_count(); ++i) {
    const ::testing::TestSuite& s = *u.GetTestSuite(i);
    const std::string suite = s.name();  // "Registered/VmstatApiConformance"
    if (suite.rfind("Registered/", 0) != 0) continue;
    for (int j = 0; j < s.total_test_count(); ++j) {
      const std::string test = s.GetTestInfo(j)->name();  // "S2_Overstep/B_local"
      registered[suite.substr(suite.find('/') + 1)].insert(test.substr(0, test.find('/')));
    }
  }
  std::map<std::string, std::set<std::string>> listed;
  for (const vc::Check& c : vc::AllChecks()) {
    EXPECT_TRUE(listed[c.suite].insert(c.name).second) << "listed twice: " << c.name;
    EXPECT_FALSE(c.what.empty()) << c.name;
    EXPECT_FALSE(c.size.empty()) << c.name;
    EXPECT_FALSE(c.applies_when.empty()) << c.name;
  }
  EXPECT_EQ(listed, registered);
}

TEST(VmstatCheckList, NotApplicableFromTheTraits) {
  EXPECT_EQ(*vc::NotApplicable("S1_I11_Thresholds", "B"), "");
  EXPECT_THAT(*vc::NotApplicable("I7_I2_RemoteFoldInterleavings", "B"),
              ::testing::HasSubstr("folds_remotely"));
  EXPECT_EQ(*vc::NotApplicable("I7_I2_RemoteFoldInterleavings", "C"), "");
  EXPECT_THAT(*vc::NotApplicable("S11_QuietGate", "A1"), ::testing::HasSubstr("quiet_folds_dirty"));
  EXPECT_EQ(*vc::NotApplicable("S11_QuietGate", "B.local"), "");
  EXPECT_EQ(vc::NotApplicable("HookChain", "B").status().code(), absl::StatusCode::kNotFound);
  EXPECT_FALSE(vc::NotApplicable("S1_I11_Thresholds", "no-such-policy").ok());
  // The older names keep working.
  EXPECT_THAT(isolation::testing::VmstatNotApplicable("QuietGate", "A1"),
              ::testing::HasSubstr("quiet_folds_dirty"));
  EXPECT_THAT(vc::Run("HookChain", "B"),
              ::testing::ElementsAre(::testing::HasSubstr("no vmstat check")));
  EXPECT_THAT(vc::Run("S3_ModPath", "B"), ::testing::IsEmpty());
}

// A composition with a negative-control part is a negative control, and no
// default list holds one.
TEST(VmstatCheckList, NegativeControlParts) {
  EXPECT_TRUE(*isolation::testing::IsVmstatNegativeControl("C:s32-plain"));
  EXPECT_TRUE(*isolation::testing::IsVmstatNegativeControl("C-plain"));
  EXPECT_TRUE(*isolation::testing::IsVmstatNegativeControl("C-plain:s32-atomic"));
  EXPECT_FALSE(*isolation::testing::IsVmstatNegativeControl("C:s32-atomic"));
  EXPECT_FALSE(isolation::testing::IsVmstatNegativeControl("C:no-such-slot").ok());
  for (const std::string& v : isolation::vmstat::FoldPolicyRegistry().Names()) {
    EXPECT_FALSE(*isolation::testing::IsVmstatNegativeControl(v)) << v;
  }
}

}  // namespace
