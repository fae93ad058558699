// SPDX-License-Identifier: GPL-2.0-or-later
// Every negative control shipped with vmstat fails the conformance kit:
// the C-plain fold policy (C's remote fold over a plain
// load/store writer) and the s32-plain slot under C's policy lose or
// double-count updates when a remote fold lands between the writer's load
// and its store (spec I7) -- deterministically under the kit's forced
// interleavings, and on real threads within a bounded number of attempts.

#include <cstdio>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "isolation/testing/vmstat.h"
#include "isolation/vmstat/vmstat.h"

namespace isolation::vmstat {
namespace {

using ::testing::HasSubstr;

// The negative controls of both axes, as kit variant names.
std::vector<std::string> NegativeControls() {
  std::vector<std::string> out;
  for (const FoldPolicyEntry* e : FoldPolicyRegistry().All()) {
    if (e->negative_control) out.push_back(e->name);
  }
  for (const auto* e : SlotRegistry().All()) {
    if (e->negative_control) out.push_back("C:" + e->name);
  }
  return out;
}

TEST(VmstatNegativeControl, EveryControlIsListed) {
  EXPECT_EQ(NegativeControls(), (std::vector<std::string>{"C-plain", "C:s32-plain"}));
}

TEST(VmstatNegativeControl, FailsTheKitsForcedInterleavings) {
  for (const std::string& v : NegativeControls()) {
    const testing::Violations found = testing::CheckVmstatRemoteFoldInterleavings(v);
    ASSERT_FALSE(found.empty()) << v << " passed the I7 interleavings: the check cannot fail";
    EXPECT_THAT(found.front(), HasSubstr("I7")) << v;
    for (const std::string& m : found) std::printf("%s\n", m.c_str());
  }
}

TEST(VmstatNegativeControl, FailsTheKitsRealThreadCheck) {
  // Each attempt races a writer against a remote folder for 150 ms; the
  // plain writer's load-store window is hit within milliseconds in practice.
  for (const std::string& v : NegativeControls()) {
    bool failed = false;
    for (int attempt = 0; attempt < 13 && !failed; ++attempt) {
      failed = !testing::CheckVmstatRemoteFoldRealThreads(v).empty();
    }
    EXPECT_TRUE(failed) << v << " never lost an update in 13 x 150 ms of racing";
  }
}

// Through the inline writer front end: the negative control's plain slot has
// no inline form, so its writer forwards to the same losing virtual path, and
// the writer-path check sees it lose.
TEST(VmstatNegativeControl, FailsTheKitsRealThreadCheckThroughWriter) {
  for (const std::string& v : NegativeControls()) {
    bool failed = false;
    for (int attempt = 0; attempt < 13 && !failed; ++attempt) {
      failed = !testing::CheckVmstatRemoteFoldRealThreadsThroughWriter(v).empty();
    }
    EXPECT_TRUE(failed) << v << " never lost an update through the writer in 13 x 150 ms of racing";
  }
}

// The same checks pass for the correct policies over the same layout.
TEST(VmstatNegativeControl, TheCorrectPairsPass) {
  for (const char* v : {"C", "D", "C.xadd", "C.addo", "C:s64-watermark", "D:s32-atomic",
                        "D:s32-xadd", "C:s32-scaled"}) {
    EXPECT_THAT(testing::CheckVmstatRemoteFoldInterleavings(v), ::testing::IsEmpty()) << v;
  }
}

}  // namespace
}  // namespace isolation::vmstat
