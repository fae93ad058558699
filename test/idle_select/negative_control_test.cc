// SPDX-License-Identifier: GPL-2.0-or-later
// The suites can fail: every negative control the library ships fails the
// kit's conformance suite.  Controls are found in the
// registry by their flag, so a control added later is held to this too.

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "isolation/idle_select/selector.h"
#include "isolation/testing/idle_select.h"
#include "isolation/testing/status_matchers.h"

namespace isolation::idle_select {
namespace {

using ::testing::IsEmpty;
using ::testing::Not;
namespace conformance = ::isolation::testing::idle_select_conformance;

std::vector<std::string> NegativeControls() {
  std::vector<std::string> out;
  for (const SelectorEntry* e : SelectorRegistry().All()) {
    if (e->negative_control) out.push_back(e->name);
  }
  return out;
}

TEST(IdleSelectNegativeControls, AtLeastOneIsShipped) {
  EXPECT_THAT(NegativeControls(), Not(IsEmpty()));
  // Controls are kept out of the lists the suites and benchmarks use.
  for (const std::string& n : NegativeControls()) {
    for (const std::string& listed : SelectorNames()) EXPECT_NE(listed, n);
  }
}

TEST(IdleSelectNegativeControls, EveryControlFailsTheConformanceSuite) {
  for (const std::string& control : NegativeControls()) {
    SCOPED_TRACE(control);
    const auto failed = conformance::RunAll(control);
    EXPECT_THAT(failed, Not(IsEmpty()))
        << "negative control " << control << " passes every applicable check";
    for (const auto& [check, violations] : failed) {
      std::printf("%s fails %s (%zu violations), e.g. %s\n", control.c_str(), check.c_str(),
                  violations.size(), violations.front().c_str());
    }
  }
}

// The shipped control skips the fresh per-CPU check of __select_idle_cpu():
// the check that must catch it is I4, and I4 applies to it (it declares
// itself scan-style).
TEST(IdleSelectNegativeControls, V1TrustingFailsI4HintOnly) {
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto applies,
                                 conformance::NotApplicable("I4_HintOnly", "V1-trusting"));
  EXPECT_EQ(applies, "");
  EXPECT_THAT(conformance::Run("I4_HintOnly", "V1-trusting"), Not(IsEmpty()));
  // Its honest sibling passes the same check.
  EXPECT_THAT(conformance::Run("I4_HintOnly", "V1"), IsEmpty());
}

}  // namespace
}  // namespace isolation::idle_select
