// SPDX-License-Identifier: GPL-2.0-or-later
// Every negative control registered for mm_cid (registry.h: an entry with
// negative_control = true, on any axis) fails the conformance kit's checks
// (include/isolation/testing/mm_cid.h) -- the suites can fail:
//   scan_cidmask           I7 idle reclaim, I8 convergence, S4 compaction
//                          (and keeps I1-I6: why the seed's stress runs passed);
//   lazy_no_dekker_fences  I4 in every-schedule exploration under the
//                          store-buffer model, for the remote clear and the
//                          migration steal (the sequentially consistent
//                          schedules alone cannot tell);
//   owner619_direct        S8: the mode flip racing a migrating schedin
//                          exhausts the IDs (I14);
//   owner619_split_mode    S9: the same race under the store-buffer model
//                          (I14);
//   owner619_walk619       S10: the fixup walk misses a vfork sharer and a
//                          concurrently forked child (I11).
//   work_delayed_v1        I9: one pass, then none (the work is never
//                          re-armed; every other check passes).
// A control registered without an entry in kExpectedFailures fails
// EveryRegisteredControlIsShownFailing, so a new one must be added here.

#include <algorithm>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "isolation/core/interleave.h"
#include "isolation/mm_cid/registry.h"
#include "isolation/testing/mm_cid.h"
#include "isolation/testing/status_matchers.h"

namespace isolation::mm_cid {
namespace {

namespace kit = ::isolation::testing::mm_cid;
using ::testing::IsEmpty;
using ::testing::Not;

MmCidVariant Parse(const std::string& name) {
  absl::StatusOr<MmCidVariant> v = ParseVariant(name);
  ISOLATION_EXPECT_OK(v);
  return v.ok() ? *v : MmCidVariant{};
}

// The check(s) each built-in control fails, by the registered name of the
// control (the strategy or design that is flagged).
using Check = std::function<kit::Violations(const MmCidVariant&)>;
const std::map<std::string, std::vector<std::pair<std::string, Check>>>& ExpectedFailures() {
  static const auto* table = new std::map<std::string, std::vector<std::pair<std::string, Check>>>{
      {"scan_cidmask",
       {{"I7 idle reclaim", kit::CheckIdleReclaim},
        {"I8 convergence", kit::CheckConvergence},
        {"S4 compaction", kit::CheckCompaction}}},
      {"lazy_no_dekker_fences",
       {{"I4 scan vs switch, every schedule", kit::CheckScanVsSwitchSchedules},
        {"I4 migration steal vs switch, every schedule", kit::CheckMigrateVsSwitchSchedules}}},
      {"owner619_direct", {{"S8 mode flip vs migrating schedin", kit::CheckModeFlipSchedules}}},
      {"owner619_split_mode", {{"S9 mode flip vs migrating schedin", kit::CheckModeFlipSchedules}}},
      {"owner619_walk619",
       {{"S10 vfork sharer at a mode flip", kit::CheckVforkSharerAtModeFlip},
        {"S10 fork vs fork, every schedule", kit::CheckForkRaceSchedules}}},
      {"work_delayed_v1", {{"I9 passes go on", kit::CheckRateLimit}}},
  };
  return *table;
}

// The registered name that makes a variant a control.
std::string ControlName(const MmCidVariant& v) {
  const MmCidVariant defaults;
  for (const DesignEntry* e : DesignRegistry().All()) {
    if (e->negative_control && e->name == v.design) return e->name;
  }
  if (v.lazy.allocator != defaults.lazy.allocator) return v.lazy.allocator;
  if (v.lazy.scope != defaults.lazy.scope) return v.lazy.scope;
  if (v.lazy.granularity != defaults.lazy.granularity) return v.lazy.granularity;
  if (v.lazy.placement != defaults.lazy.placement) return v.lazy.placement;
  return v.lazy.tick;
}

TEST(MmCidNegativeControls, EveryRegisteredControlIsShownFailing) {
  const std::vector<MmCidVariant> controls = NegativeControlVariants();
  ASSERT_EQ(controls.size(), 6u) << "the built-in controls";
  for (const MmCidVariant& v : controls) {
    EXPECT_TRUE(ExpectedFailures().count(ControlName(v)))
        << v.Name()
        << " is a registered negative control with no test showing which kit check it fails";
    ISOLATION_ASSERT_OK_AND_ASSIGN(auto t, DescribeVariant(v));
    EXPECT_TRUE(t.negative_control) << v.Name();
  }
}

class MmCidNegativeControl : public ::testing::TestWithParam<std::string> {};

TEST_P(MmCidNegativeControl, FailsTheKit) {
  const MmCidVariant v = Parse(GetParam());
  const auto it = ExpectedFailures().find(ControlName(v));
  ASSERT_NE(it, ExpectedFailures().end()) << GetParam();
  for (const auto& [what, check] : it->second) {
    const kit::Violations found = check(v);
    EXPECT_THAT(found, Not(IsEmpty())) << GetParam() << " must fail the kit's " << what;
    RecordProperty(what,
                   found.empty() ? std::string("passed (wrong)") : found.front().substr(0, 200));
  }
}

INSTANTIATE_TEST_SUITE_P(Registered, MmCidNegativeControl,
                         ::testing::ValuesIn(kit::Params(NegativeControlVariants())),
                         kit::ParamName);

// The same checks pass for the mainline each control departs from (so what
// fails is the control, not the scenario).
TEST(MmCidNegativeControls, TheMainlineCounterpartsPassTheSameChecks) {
  const MmCidVariant lazy = Parse("lazy");
  EXPECT_THAT(kit::CheckIdleReclaim(lazy), IsEmpty());
  EXPECT_THAT(kit::CheckConvergence(lazy), IsEmpty());
  EXPECT_THAT(kit::CheckCompaction(lazy), IsEmpty());
  EXPECT_THAT(kit::CheckScanVsSwitchSchedules(lazy), IsEmpty());
  EXPECT_THAT(kit::CheckMigrateVsSwitchSchedules(lazy), IsEmpty());
  const MmCidVariant owner = Parse("owner619");
  EXPECT_THAT(kit::CheckModeFlipSchedules(owner), IsEmpty());
  EXPECT_THAT(kit::CheckVforkSharerAtModeFlip(owner), IsEmpty());
  EXPECT_THAT(kit::CheckForkRaceSchedules(owner), IsEmpty());
}

// scan_cidmask keeps uniqueness (why the seed's stress runs passed): only
// the reclaim properties fail.
TEST(MmCidNegativeControls, ScanCidmaskKeepsI1ToI6) {
  const MmCidVariant v = Parse("lazy+scan_cidmask");
  EXPECT_THAT(kit::CheckRandomSchedule(v, 8, 1, 2000), IsEmpty());
  EXPECT_THAT(kit::CheckSimRandomWorkload(v, 1), IsEmpty());
}

// Without the store-buffer model the fence-less control passes every
// schedule: forced interleavings alone cannot show what the fences do.
TEST(MmCidNegativeControls, NoDekkerFencesPassesSequentiallyConsistentSchedules) {
  const MmCidVariant v = Parse("lazy_no_dekker_fences");
  std::unique_ptr<MmCid> m;
  MmId mm = 0;
  int violating = 0;
  ISOLATION_ASSERT_OK_AND_ASSIGN(
      auto n, Interleaver::Explore(
                  [&](Interleaver& il) {
                    m = *MmCid::Create(4, v, MmCid::Limits{8, 2});
                    mm = *m->CreateMm(CpuMask::Full(4), 0);
                    for (TaskId t = 0; t < 3; ++t)
                      (void)m->Fork(t == 0 ? kNoTask : 0, t, mm, CpuMask::Full(4), 0);
                    m->ContextSwitch(1, kNoTask, 0, 1);
                    m->ContextSwitch(1, 0, kNoTask, 2);
                    m->Scan(mm, 3);
                    il.Add("switch", [&] { m->ContextSwitch(1, kNoTask, 1, kNsPerSec); });
                    il.Add("scan", [&] { m->Scan(mm, 2 * kNsPerSec); });
                  },
                  [&](const std::vector<std::string>&) {
                    violating += kit::AllViolations(*m, true).empty() ? 0 : 1;
                  }));
  EXPECT_GT(n, 3);
  EXPECT_EQ(violating, 0);
}

}  // namespace
}  // namespace isolation::mm_cid
