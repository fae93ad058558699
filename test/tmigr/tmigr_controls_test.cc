// SPDX-License-Identifier: GPL-2.0-or-later
// The conformance suites can fail: every shipped negative
// control -- each hierarchy that re-creates a fixed bug, and the
// participation without the cpuset term -- fails the kit's checks, each the
// check of its spec scenario; a user's decorator that never handles remote
// timers fails the stress checks (S27 included); the S21 check tells the
// merged and [V15] exclude orders apart.

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "isolation/testing/status_matchers.h"
#include "isolation/testing/tmigr.h"
#include "isolation/tmigr/variants.h"

namespace isolation::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

std::string Joined(const std::vector<std::string>& v) { return absl::StrJoin(v, "\n"); }

// The fast checks (all but the stress suite) that report a variant.
std::vector<std::string> FailingFastChecks(const TmigrVariant& v) {
  std::vector<std::string> failing;
  for (const TmigrCheck& check : TmigrChecks()) {
    if (!check.slow && !check.fn(v).empty()) failing.push_back(check.name);
  }
  return failing;
}

// Every negative control in the registries, whatever it is, fails some
// check of the kit: new controls are covered without touching this test.
TEST(TmigrNegativeControls, EveryShippedControlFailsTheKit) {
  int controls = 0;
  for (const auto* e : tmigr::HierarchyRegistry().All()) {
    if (!e->negative_control || e->name.rfind("test-", 0) == 0) continue;
    ++controls;
    for (const char* participation : {"v6.9", "isolation"}) {
      const TmigrVariant v{participation, e->name};
      EXPECT_THAT(FailingFastChecks(v), Not(IsEmpty()))
          << v.ToString() << " passes every fast check";
    }
  }
  for (const auto* e : tmigr::ParticipationRegistry().All()) {
    if (!e->negative_control || e->name.rfind("test-", 0) == 0) continue;
    ++controls;
    const TmigrVariant v{e->name, "mainline"};
    EXPECT_THAT(FailingFastChecks(v), Not(IsEmpty())) << v.ToString() << " passes every fast check";
  }
  EXPECT_EQ(controls, 8);
}

// Each control fails the check of the scenario it re-creates, and that
// check passes on mainline (also run by the conformance suites).
struct Expected {
  TmigrVariant variant;
  TmigrCheckFn check;
  const char* says;
};

TEST(TmigrNegativeControls, EachFailsItsScenario) {
  const Expected cases[] = {
      {{"v6.9", "ghost_timer"}, CheckS11GhostTimer, "re-arms nothing"},
      {{"isolation", "ghost_timer"}, CheckS11GhostTimer, "re-arms nothing"},
      {{"v6.9", "no_cpu_refresh"}, CheckS10SameExpiryOtherCpu, "must not be late"},
      {{"v6.9", "early_return"}, CheckS15SingleLevelEarlyReturn, "not KTIME_MAX"},
      {{"v6.9", "early_return"}, CheckI5LastIdleCpuWakesForTheFirstTimer, "I5 cpu1"},
      {{"v6.9", "quick_check_top_only"}, CheckS14QuickCheck, "level-0 expiry 30"},
      {{"v6.9", "no_seq_increment"}, CheckS12RaceR1AllSchedules, "I3 GRP0:0"},
      {{"v6.9", "lockless_update_reads"}, CheckS13RaceR2AllSchedules, "nobody wakes for TIMER0"},
      {{"v6.9", "kernel_r4"},
       CheckS28RaceR4AllSchedules,
       "4 cpus, schedule 0: I5 cpu 1's timer 100 not covered"},
      {{"v6.9", "kernel_r4"},
       CheckS28RaceR4AllSchedules,
       "8 cpus, schedule 0: I5 cpu 2's timer 100 not covered"},
      {{"isolation-no-cpuset-term", "mainline"},
       CheckS22CpusetIsolatedStaysOutOnHotplug,
       "cpu 5 available after coming back"},
  };
  for (const Expected& c : cases) {
    EXPECT_THAT(Joined(c.check(c.variant)), HasSubstr(c.says)) << c.variant.ToString();
    const TmigrVariant mainline{c.variant.participation == "isolation-no-cpuset-term"
                                    ? "isolation"
                                    : c.variant.participation,
                                "mainline"};
    EXPECT_EQ(Joined(c.check(mainline)), "") << mainline.ToString();
  }
}

// A user's hierarchy decorator that never handles remote timers (a negative
// control registered from outside the library): the stress checks catch it,
// S27 on real threads among them (lost timers, nothing pulled).
class NoRemoteHandling final : public tmigr::ForwardingTimerMigration {
 public:
  using ForwardingTimerMigration::ForwardingTimerMigration;
  void HandleRemote(int, Nanos) override {}
};

const bool kDecoratorRegistered =
    tmigr::RegisterHierarchy(
        {"test-no-remote-handling", "drops tmigr_handle_remote() (test control)", true,
         [](tmigr::HierarchyArgs a) -> std::unique_ptr<tmigr::TimerMigration> {
           auto inner = (*tmigr::HierarchyRegistry().Find("mainline"))->factory(std::move(a));
           return std::make_unique<NoRemoteHandling>(std::move(inner));
         }})
        .ok();

TEST(TmigrNegativeControls, UserDecoratorWithoutRemoteHandlingFailsS27AndTheStress) {
  ASSERT_TRUE(kDecoratorRegistered);
  const TmigrVariant v{"v6.9", "test-no-remote-handling"};
  const std::string s27 = Joined(CheckS27RealThreads(v));
  EXPECT_THAT(s27, HasSubstr("pending longer than"));
  EXPECT_THAT(Joined(CheckRandomSchedulesCpg8(v)), HasSubstr("still pending"));
  EXPECT_THAT(Joined(CheckS7S8LastCpuIdlesAndIdlePuller(v)),
              HasSubstr("remote expiries at 50: got 0, want 1"));
  // Late, not lost: CPU 0 runs its own timers when it next wakes.
  EXPECT_THAT(Joined(CheckSimulatorHousekeepingTimers(v)), HasSubstr("ns late (bound"));
}

// S21: the merged order flushes CPU 2's un-isolation before CPU 4 is
// queued; [V15] queues both and flushes once.  The S21 check, given the
// property "flushes un-isolation first", accepts the first log and rejects
// the second.
TEST(TmigrExcludeOrder, S21LogsOfMergedAndV15Differ) {
  const std::vector<std::string> merged = S21ExclusionLog({"isolation", "mainline"});
  const std::vector<std::string> v15 = S21ExclusionLog({"isolation-v15", "mainline"});
  EXPECT_THAT(merged, ElementsAre("set 2", "flush", "clear 4", "flush"));
  EXPECT_THAT(v15, ElementsAre("set 2", "clear 4", "flush"));
  EXPECT_THAT(CheckS21Order(merged, /*flushes_unisolation_first=*/true), IsEmpty());
  EXPECT_THAT(Joined(CheckS21Order(v15, /*flushes_unisolation_first=*/true)),
              HasSubstr("'clear 4' queued before the un-isolation was flushed"));
  EXPECT_THAT(CheckS21Order(v15, /*flushes_unisolation_first=*/false), IsEmpty());
}

// A participation that claims the merged order but queues like [V15]: the
// S21 check catches the claim (log order, and CPU 4 leaving while CPU 2 is
// not yet back when the backend runs the batch in another order).
class V15ClaimingMerged final : public tmigr::IsolationAwareParticipation {
 public:
  void Exclude(const CpuMask& exclude, tmigr::ExclusionOps& ops) const override {
    const CpuMask available = ops.AvailableMask();
    CpuMask unisolate = ops.OnlineMask();
    unisolate.AndNot(exclude);
    unisolate.AndNot(available);
    for (int c : unisolate) ops.QueueSetAvailable(c);
    for (int c : IsolateSet(exclude, available, ops.inputs())) ops.QueueClearAvailable(c);
    ops.Flush();
  }
};

TEST(TmigrExcludeOrder, S21CatchesAWrongOrderClaim) {
  ASSERT_TRUE(tmigr::RegisterParticipation({"test-v15-claiming-merged",
                                            "claims the merged order (test control)", true,
                                            [] { return std::make_unique<V15ClaimingMerged>(); }})
                  .ok());
  const std::string v = Joined(CheckS21CpusetChange({"test-v15-claiming-merged", "mainline"}));
  EXPECT_THAT(v, HasSubstr("queued before the un-isolation was flushed"));
  EXPECT_THAT(v, HasSubstr("CPU 2 not available before CPU 4 left"));
  EXPECT_EQ(Joined(CheckS21CpusetChange({"isolation-v15", "mainline"})), "");  // claims nothing
}

TEST(TmigrKitNames, ParseAndPrint) {
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto v, ParseTmigrVariant("ISOLATION/Ghost_Timer"));
  EXPECT_EQ(v.ToString(), "isolation/ghost_timer");
  EXPECT_EQ(ParseTmigrVariant("v6.9")->ToString(), "v6.9");
  EXPECT_THAT(std::string(ParseTmigrVariant("v7").status().message()),
              HasSubstr("unknown tmigr participation 'v7'"));
  EXPECT_FALSE(ParseTmigrVariant("a/b/c").ok());
  EXPECT_FALSE(ParseTmigrVariant("").ok());
  // An unknown name in a macro fails each check with the registry's message.
  EXPECT_THAT(Joined(CheckS4FirstActivation(TmigrVariantFromSpec("nope"))),
              HasSubstr("unknown tmigr participation 'nope'"));
}

}  // namespace
}  // namespace isolation::testing
