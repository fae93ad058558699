// SPDX-License-Identifier: GPL-2.0-or-later
// Tests of the timer-migration hierarchy that are not conformance checks of
// a variant (those are the kit's suites, instantiated for every built-in in
// tmigr_conformance_test.cc): the invariant checker on damaged snapshots
// (each invariant can be reported), the I11 lock-order recorder, the
// registries and the compatibility names.

#include "isolation/testing/status_matchers.h"
#include "isolation/tmigr/tmigr.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "isolation/core/isolation_config.h"
#include "isolation/core/topology.h"
#include "isolation/tmigr/timers.h"
#include "isolation/tmigr/variants.h"
#include "tmigr/hierarchy.h"

namespace isolation::tmigr {
namespace {

using ::testing::HasSubstr;

std::unique_ptr<TimerMigration> MakeUp(int ncpus, TimerBackend* backend, Options o = {}) {
  auto tm =
      TimerMigration::Create(std::vector<int>(static_cast<size_t>(ncpus), 0), o, backend).value();
  for (int c = 0; c < ncpus; ++c) ISOLATION_EXPECT_OK(tm->BringUpCpu(c));
  return tm;
}

std::string Check(const HierarchySnapshot& s) {
  return absl::StrJoin(CheckHierarchyInvariants(s), "\n");
}

TEST(TmigrSizing, RejectsBadChildrenPerGroup) {
  NullBackend b;
  for (int cpg : {0, 1, 3, 6, 16}) {
    Options o;
    o.children_per_group = cpg;
    auto tm = TimerMigration::Create(std::vector<int>(4, 0), o, &b);
    EXPECT_FALSE(tm.ok()) << cpg;
  }
}

// ---------------------------------------------------------------------------
// The invariant checker reports each invariant (a damaged snapshot of a
// healthy hierarchy; the healthy one is clean).
// ---------------------------------------------------------------------------
class TmigrInvariantChecker : public ::testing::Test {
 protected:
  void SetUp() override {
    tm_ = MakeUp(16, &backend_);
    for (int c = 1; c < 16; ++c) tm_->Deactivate(c, c == 9 ? 50 : kNanosMax);
    snap_ = tm_->Snapshot();
    ASSERT_EQ(Check(snap_), "");
  }
  GroupSnapshot& GroupOf(int cpu) {
    return snap_.levels[static_cast<size_t>(snap_.cpus[static_cast<size_t>(cpu)].group.level)]
                       [static_cast<size_t>(snap_.cpus[static_cast<size_t>(cpu)].group.index)];
  }
  NullBackend backend_;
  std::unique_ptr<TimerMigration> tm_;
  HierarchySnapshot snap_;
};

TEST_F(TmigrInvariantChecker, I1_MigratorNotAnActiveBit) {
  GroupOf(0).state.migrator = 0x02;  // cpu 1 is idle
  EXPECT_THAT(Check(snap_), HasSubstr("I1 GRP0:0"));
}

TEST_F(TmigrInvariantChecker, I2_RemoteLeftSet) {
  snap_.cpus[3].remote = true;
  EXPECT_THAT(Check(snap_), HasSubstr("I2 cpu3"));
}

// What a lost activation walk would leave: CPU 3 non-idle, its bit clear.
TEST_F(TmigrInvariantChecker, I3_I4_MissingActivation) {
  tm_->Deactivate(0, kNanosMax);  // the last active CPU: all idle
  snap_ = tm_->Snapshot();
  ASSERT_EQ(Check(snap_), "");
  snap_.cpus[3].idle = false;
  const std::string v = Check(snap_);
  EXPECT_THAT(v, HasSubstr("I3 cpu3"));
  EXPECT_THAT(v, HasSubstr("I4"));
}

TEST_F(TmigrInvariantChecker, I3_ParentBitOfAnIdleGroup) {
  // GRP0:1 (CPUs 8-15) is idle; set its bit in the root.
  snap_.levels[1][0].state.active |= GroupOf(8).groupmask;
  EXPECT_THAT(Check(snap_), HasSubstr("I3 GRP0:1"));
}

TEST_F(TmigrInvariantChecker, I6_GroupEventNamesAnotherCpu) {
  // GRP0:1's event in the root stands for CPU 9's timer.
  ASSERT_TRUE(GroupOf(9).groupevt.queued);
  GroupOf(9).groupevt.cpu = 8;
  EXPECT_THAT(Check(snap_), HasSubstr("I6 GRP0:1"));
}

TEST_F(TmigrInvariantChecker, I7_NextExpiryAfterTheFirstEvent) {
  GroupOf(9).next_expiry = 60;
  EXPECT_THAT(Check(snap_), HasSubstr("I7 GRP0:1"));
}

TEST_F(TmigrInvariantChecker, I8_MaskDisagreesAndUnavailableActive) {
  snap_.available_mask.Clear(5);
  EXPECT_THAT(Check(snap_), HasSubstr("I8 available mask"));
  snap_ = tm_->Snapshot();
  snap_.cpus[0].available = false;  // CPU 0 active in GRP0:0
  EXPECT_THAT(Check(snap_), HasSubstr("I8 cpu0"));
}

TEST_F(TmigrInvariantChecker, I9_TickCpuUnavailable) {
  snap_.isolation_enabled = true;
  snap_.nohz_full = CpuMask::Range(16, 1, 15);
  snap_.tick_cpu = 0;
  EXPECT_EQ(Check(snap_), "");
  snap_.cpus[0].online = true;
  snap_.cpus[0].available = false;
  snap_.available_mask.Clear(0);
  EXPECT_THAT(Check(snap_), HasSubstr("I9 tick cpu 0"));
}

TEST_F(TmigrInvariantChecker, I10_DuplicateMaskAndMissingParent) {
  snap_.cpus[2].groupmask = snap_.cpus[1].groupmask;
  EXPECT_THAT(Check(snap_), HasSubstr("I10 cpu2: duplicate mask"));
  snap_ = tm_->Snapshot();
  GroupOf(8).parent = GroupId{};
  EXPECT_THAT(Check(snap_), HasSubstr("I10 GRP0:1: no parent but not the root"));
}

// ---------------------------------------------------------------------------
// I11: the lock-order recorder flags an inversion.
// ---------------------------------------------------------------------------
TEST(TmigrLockOrder, RecorderFlagsInversionsAndNestedSameRank) {
  ASSERT_EQ(RecordedLocksHeld(), 0);
  // timer base -> tmc -> child group -> parent group: in order.
  EXPECT_TRUE(RecordLockAcquire(kBaseLockRank));
  EXPECT_TRUE(RecordLockAcquire(kCpuLockRank));
  EXPECT_TRUE(RecordLockAcquire(GroupLockRank(0)));
  EXPECT_TRUE(RecordLockAcquire(GroupLockRank(1)));
  RecordLockRelease(GroupLockRank(0));  // released in any order
  RecordLockRelease(GroupLockRank(1));
  // A parent group before its child: inverted.
  EXPECT_TRUE(RecordLockAcquire(GroupLockRank(1)));
  EXPECT_FALSE(RecordLockAcquire(GroupLockRank(0)));
  RecordLockRelease(GroupLockRank(0));
  RecordLockRelease(GroupLockRank(1));
  // Two tmc locks nested: a potential ABBA deadlock.
  EXPECT_FALSE(RecordLockAcquire(kCpuLockRank));
  RecordLockRelease(kCpuLockRank);
  RecordLockRelease(kCpuLockRank);
  RecordLockRelease(kBaseLockRank);
  EXPECT_EQ(RecordedLocksHeld(), 0);
}

// A timer backend that calls back into the hierarchy from
// timer_base_is_idle(), which runs under the CPU's tmc lock: the nested
// tmigr_cpu_new_timer() of another CPU takes a second tmc lock.
class ReenteringBackend : public NullBackend {
 public:
  TimerMigration* tm = nullptr;
  bool reenter = false;
  bool BaseIsIdle(int) override {
    if (reenter && tm != nullptr) (void)tm->NewTimer(2, 500);
    return false;
  }
};

int64_t InversionsOfReenteringBackend(bool record) {
  ReenteringBackend backend;
  Options o;
  o.record_lock_order = record;
  std::unique_ptr<TimerMigration> tm = MakeUp(4, &backend, o);
  backend.tm = tm.get();
  tm->Deactivate(2, kNanosMax);
  tm->TakeDownCpu(1);
  EXPECT_EQ(tm->counters().lock_order_violations.load(), 0);
  backend.reenter = true;
  ISOLATION_EXPECT_OK(
      tm->BringUpCpu(1));  // tmigr_set_cpu_available(): tmc(1) -> BaseIsIdle -> tmc(2)
  EXPECT_EQ(RecordedLocksHeld(), 0);
  return tm->counters().lock_order_violations.load();
}

TEST(TmigrLockOrder, I11_NestedCpuLocksThroughTheBackendAreFlagged) {
  EXPECT_GE(InversionsOfReenteringBackend(/*record=*/true), 1);
  EXPECT_EQ(InversionsOfReenteringBackend(/*record=*/false), 0);  // recorder off: nothing counted
}

// TimerSystem::CheckInvariants reports the recorder's count as I11.
TEST(TmigrLockOrder, TimerSystemReportsI11) {
  Options o;
  o.record_lock_order = true;
  ISOLATION_ASSERT_OK_AND_ASSIGN(
      auto ts, TimerSystem::Create(std::vector<int>(4, 0), o, TimerSystem::Config{1000}));
  ISOLATION_ASSERT_OK(ts->BootAll());
  EXPECT_EQ(absl::StrJoin(ts->CheckInvariants(0), "\n"), "");
  ts->tmigr().counters().lock_order_violations.fetch_add(1);
  EXPECT_THAT(absl::StrJoin(ts->CheckInvariants(0), "\n"),
              HasSubstr("I11 lock-order inversions: 1"));
}

// ---------------------------------------------------------------------------
// Registries.
// ---------------------------------------------------------------------------
TEST(TmigrVariants, EveryBuiltInIsListedWithDescriptionAndFlag) {
  std::vector<std::string> rows;
  for (const VariantInfo& v : ListVariants()) {
    EXPECT_EQ(v.mechanism, "tmigr");
    EXPECT_FALSE(v.description.empty()) << v.name;
    rows.push_back(absl::StrCat(v.axis, ":", v.name, v.negative_control ? " (control)" : ""));
  }
  EXPECT_THAT(rows, ::testing::IsSupersetOf({
                        "participation:v6.9",
                        "participation:isolation",
                        "participation:isolation-v15",
                        "participation:isolation-no-cpuset-term (control)",
                        "hierarchy:mainline",
                        "hierarchy:ghost_timer (control)",
                        "hierarchy:no_cpu_refresh (control)",
                        "hierarchy:early_return (control)",
                        "hierarchy:quick_check_top_only (control)",
                        "hierarchy:no_seq_increment (control)",
                        "hierarchy:lockless_update_reads (control)",
                        "hierarchy:kernel_r4 (control)",
                    }));
}

TEST(TmigrVariants, CreateResolvesNamesOnce) {
  NullBackend b;
  Options o;
  o.participation = "ISOLATION-v15";  // case-insensitive
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto tm, TimerMigration::Create(std::vector<int>(4, 0), o, &b));
  EXPECT_EQ(tm->options().participation, "isolation-v15");
  EXPECT_EQ(tm->options().hierarchy, "mainline");
  o.participation = "v7";
  EXPECT_THAT(std::string(TimerMigration::Create(std::vector<int>(4, 0), o, &b).status().message()),
              HasSubstr("unknown tmigr participation 'v7' (registered: v6.9, isolation"));
  o.participation = "v6.9";
  o.hierarchy = "frob";
  EXPECT_THAT(std::string(TimerMigration::Create(std::vector<int>(4, 0), o, &b).status().message()),
              HasSubstr("unknown tmigr hierarchy 'frob'"));
}

// Options name registry entries in any case; the instance keeps the
// registered spellings.  The defaults are mainline v6.9.
TEST(TmigrVariants, OptionsNameRegistryEntries) {
  NullBackend b;
  Options o;
  EXPECT_EQ(o.participation, "v6.9");
  EXPECT_EQ(o.hierarchy, "mainline");
  o.participation = "ISOLATION";
  o.hierarchy = "Ghost_Timer";
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto tm, TimerMigration::Create(std::vector<int>(4, 0), o, &b));
  EXPECT_EQ(tm->options().participation, "isolation");
  EXPECT_EQ(tm->options().hierarchy, "ghost_timer");
  ISOLATION_ASSERT_OK_AND_ASSIGN(const ParticipationEntry* entry,
                                 ParticipationRegistry().Find("isolation-v15"));
  EXPECT_TRUE(entry->is_builtin());
  EXPECT_FALSE(entry->is_default_row());  // run by name only
  o.participation.clear();
  EXPECT_THAT(std::string(TimerMigration::Create(std::vector<int>(4, 0), o, &b).status().message()),
              HasSubstr("unknown tmigr participation ''"));
}

TEST(TmigrVariants, RegistrationErrorsNameTheValue) {
  EXPECT_THAT(std::string(RegisterParticipation({"v6.9", "again", false,
                                                 [] { return std::unique_ptr<Participation>(); }})
                              .message()),
              HasSubstr("'v6.9' is already registered"));
  EXPECT_THAT(std::string(RegisterHierarchy(
                              {"bad name", "x", false,
                               [](HierarchyArgs) { return std::unique_ptr<TimerMigration>(); }})
                              .message()),
              HasSubstr("'bad name'"));
  // A factory returning null is an error at Create, naming the variant.
  ASSERT_TRUE(RegisterParticipation({"test-null-participation", "returns null", true,
                                     [] { return std::unique_ptr<Participation>(); }})
                  .ok());
  NullBackend b;
  Options o;
  o.participation = "test-null-participation";
  EXPECT_THAT(std::string(TimerMigration::Create(std::vector<int>(4, 0), o, &b).status().message()),
              HasSubstr("'test-null-participation': factory returned null"));
}

}  // namespace
}  // namespace isolation::tmigr
