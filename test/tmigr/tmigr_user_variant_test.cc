// SPDX-License-Identifier: GPL-2.0-or-later
// An outside project's view: a participation variant of its own, registered
// with one call, gets every conformance suite with one macro (and, through
// the registries, the benchmark helpers and isolab's rows).  The variant
// here keeps TM-ISOL's predicate and order but counts its exclusions, so it
// must pass everything the built-in "isolation" passes.

#include <atomic>
#include <memory>

#include "gtest/gtest.h"
#include "isolation/testing/tmigr.h"
#include "isolation/tmigr/variants.h"

namespace {

std::atomic<int> g_exclusions{0};

class CountingIsolation final : public isolation::tmigr::IsolationAwareParticipation {
 public:
  void Exclude(const isolation::CpuMask& exclude,
               isolation::tmigr::ExclusionOps& ops) const override {
    g_exclusions.fetch_add(1, std::memory_order_relaxed);
    IsolationAwareParticipation::Exclude(exclude, ops);
  }
};

const bool kRegistered =
    isolation::tmigr::RegisterParticipation(
        {"user-counting-isolation", "TM-ISOL that counts its exclusions (a user's variant)", false,
         [] { return std::make_unique<CountingIsolation>(); }})
        .ok();

TEST(TmigrUserVariant, RegisteredOnceAndListed) {
  EXPECT_TRUE(kRegistered);
  bool listed = false;
  for (const isolation::VariantInfo& v : isolation::tmigr::ListVariants()) {
    listed |=
        v.name == "user-counting-isolation" && v.axis == "participation" && !v.negative_control;
  }
  EXPECT_TRUE(listed);
  bool in_suites = false;
  for (const auto& v : isolation::testing::RegisteredTmigrVariants())
    in_suites |= v.participation == "user-counting-isolation";
  EXPECT_TRUE(in_suites);
}

// The isolation suite did call the user's code.
TEST(TmigrUserVariant, ItsStrategyRuns) {
  const auto v = isolation::testing::CheckS21CpusetChange({"user-counting-isolation", "mainline"});
  EXPECT_TRUE(v.empty());
  EXPECT_GT(g_exclusions.load(), 0);
}

}  // namespace

ISOLATION_TMIGR_CONFORMANCE(User, "user-counting-isolation");
