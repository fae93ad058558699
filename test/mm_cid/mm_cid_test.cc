// SPDX-License-Identifier: GPL-2.0-or-later
// mm_cid tests of what only some built-ins promise or contain, driven
// through the entry points directly: owner619's mode thresholds (I12), quiet
// hot path (I13) and the forced S8 live-lock schedule; forced interleavings
// of the lazy design's lazy-put race at its named interleave points; the
// registries' aliases of the old spellings.  The invariants and scenarios that
// apply to every variant are the conformance kit's
// (include/isolation/testing/mm_cid.h), run for every built-in by
// mm_cid_conformance_test.cc.

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "isolation/core/interleave.h"
#include "isolation/mm_cid/mm_cid.h"
#include "isolation/mm_cid/registry.h"
#include "isolation/testing/mm_cid.h"
#include "isolation/testing/status_matchers.h"
#include "isolation/testing/violations.h"

namespace isolation::mm_cid {

namespace {

using ::isolation::testing::mm_cid::AllViolations;

// ---------------------------------------------------------------------------
// owner619 (6.19 rewrite)
// ---------------------------------------------------------------------------
MmCidVariant Owner619(bool direct = false) {
  MmCidVariant v;
  v.design = direct ? "owner619_direct" : "owner619";
  return v;
}

// I12 mode rule, an example: a union of 8 CPUs on a 128-CPU box
// goes per-CPU at 11 users (max_cids 10) and back to per-task below 6.
TEST(MmCidOwner619, I12_ModeThresholds) {
  auto m = *MmCid::Create(128, Owner619());
  const CpuMask eight = CpuMask::Range(128, 0, 7);
  MmId mm = *m->CreateMm(eight, 0);
  Nanos now = 1;
  for (int t = 0; t < 12; ++t) {
    ISOLATION_ASSERT_OK(m->Fork(t == 0 ? kNoTask : 0, t, mm, eight, now));
    ISOLATION_EXPECT_NO_VIOLATIONS(AllViolations(*m, /*quiescent=*/true))
        << absl::StrCat("fork ", t);
    EXPECT_EQ(m->Stats().mode_changes, t + 1 >= 11 ? 1 : 0) << "users " << t + 1;
  }
  // Run everyone once (several per CPU), then exit down to 5 users.
  for (int t = 0; t < 12; ++t) {
    m->ContextSwitch(t % 8, kNoTask, t, ++now);
    EXPECT_GE(m->TaskCid(t), 0);
    ISOLATION_EXPECT_NO_VIOLATIONS(AllViolations(*m, /*quiescent=*/false)) << "schedin";
    m->ContextSwitch(t % 8, t, kNoTask, ++now);
  }
  ISOLATION_EXPECT_NO_VIOLATIONS(AllViolations(*m, /*quiescent=*/true)) << "per-CPU steady state";
  for (int t = 11; t >= 5; --t) {
    m->ContextSwitch(t % 8, kNoTask, t, ++now);
    ISOLATION_EXPECT_OK(m->Exit(t % 8, t, now));
    m->ContextSwitch(t % 8, t, kNoTask, ++now);
    ISOLATION_EXPECT_NO_VIOLATIONS(AllViolations(*m, /*quiescent=*/true))
        << absl::StrCat("exit ", t);
    // users = t after this exit: still per-CPU at 6 users, per-task at 5.
    EXPECT_EQ(m->Stats().mode_changes, t >= 6 ? 1 : 2) << "users " << t << ", pcpu_thrs = 6";
  }
  EXPECT_EQ(m->Stats().mode_changes, 2) << "back to per-task below pcpu_thrs = 6";
  for (int t = 0; t < 5; ++t) {
    m->ContextSwitch(t % 8, kNoTask, t, ++now);
    EXPECT_LT(m->TaskCid(t), 6) << "I3: below max_cids = 5 + 1";
  }
  ISOLATION_EXPECT_NO_VIOLATIONS(AllViolations(*m, /*quiescent=*/true)) << "per-task again";
}

// I13 quiet hot path: per-task mode, no transition: switches and migrations
// do no bitmap operation and no atomic RMW, and a task keeps its ID.
TEST(MmCidOwner619, I13_QuietHotPath) {
  auto m = *MmCid::Create(8, Owner619());
  MmId mm = *m->CreateMm(CpuMask::Full(8), 0);
  for (int t = 0; t < 4; ++t) ISOLATION_ASSERT_OK(m->Fork(kNoTask, t, mm, CpuMask::Full(8), 0));
  std::vector<int32_t> first(4, -1);
  std::vector<int> cpu_of = {0, 1, 2, 3};
  std::mt19937_64 rng(5);
  Nanos now = 0;
  for (int t = 0; t < 4; ++t) {
    m->ContextSwitch(cpu_of[static_cast<size_t>(t)], kNoTask, t, ++now);
    first[static_cast<size_t>(t)] = m->TaskCid(t);
    m->ContextSwitch(cpu_of[static_cast<size_t>(t)], t, kNoTask, ++now);
  }
  const MmCidStats before = m->Stats();
  for (int i = 0; i < 5000; ++i) {
    const int t = static_cast<int>(rng() % 4);
    const int to = static_cast<int>(rng() % 8);
    const int from = cpu_of[static_cast<size_t>(t)];
    if (m->CurrentTask(from) == t) m->ContextSwitch(from, t, kNoTask, ++now);
    m->Migrate(t, from, to, ++now);
    cpu_of[static_cast<size_t>(t)] = to;
    if (m->CurrentTask(to) != kNoTask) m->ContextSwitch(to, m->CurrentTask(to), kNoTask, ++now);
    m->ContextSwitch(to, kNoTask, t, ++now);
    ASSERT_EQ(m->TaskCid(t), first[static_cast<size_t>(t)]) << "I13: a task keeps its ID";
    ISOLATION_EXPECT_NO_VIOLATIONS(AllViolations(*m, /*quiescent=*/false)) << "I13";
  }
  const MmCidStats after = m->Stats();
  EXPECT_EQ(after.bitmap_ops, before.bitmap_ops) << "I13: no bitmap operation on the hot path";
  EXPECT_EQ(after.switch_rmw, before.switch_rmw) << "I13: no atomic RMW on the hot path";
}

// S8 transition live lock (4327fb13fa47): P = 4, four tasks in per-task
// mode; a fifth fork flips to per-CPU; before the fixup reaches task X, X
// switches in on CPU 1, migrates to CPU 2 and switches in there.  The direct
// transfer (negative control) exhausts the IDs: I14 must be violated; with
// TRANSIT the schedin completes.
void RunS8(bool direct, MmCidStats* stats, std::vector<std::string>* violations) {
  auto m = *MmCid::Create(4, Owner619(direct));
  MmId mm = *m->CreateMm(CpuMask::Full(4), 0);
  for (int t = 0; t < 4; ++t)
    ISOLATION_ASSERT_OK(m->Fork(t == 0 ? kNoTask : 0, t, mm, CpuMask::Full(4), 0));
  m->ContextSwitch(0, kNoTask, 0, 1);  // the forker runs on CPU 0
  Interleaver il;
  il.Add("fork", [&] { ISOLATION_ASSERT_OK(m->Fork(0, 4, mm, CpuMask::Full(4), 2)); });
  il.Add("x", [&] {
    m->ContextSwitch(1, kNoTask, 3, 3);
    m->ContextSwitch(1, 3, kNoTask, 4);
    m->Migrate(3, 1, 2, 5);
    m->ContextSwitch(2, kNoTask, 3, 6);
  });
  ISOLATION_ASSERT_OK(il.Run({{"fork", "mm_cid.owner619.fixup_task"}, {"x", ""}, {"fork", ""}}));
  *stats = m->Stats();
  *violations = m->CheckAlways();
}

TEST(MmCidOwner619, S8_TransitionLiveLock_TransitCompletes) {
  MmCidStats s;
  std::vector<std::string> v;
  RunS8(false, &s, &v);
  EXPECT_EQ(s.alloc_failures, 0);
  EXPECT_LE(s.max_alloc_attempts, 40);
  ISOLATION_EXPECT_NO_VIOLATIONS(v);
  EXPECT_EQ(s.mode_changes, 1);
}

TEST(MmCidOwner619, S8_TransitionLiveLock_DirectViolatesI14) {
  MmCidStats s;
  std::vector<std::string> v;
  RunS8(true, &s, &v);
  EXPECT_GT(s.alloc_failures, 0) << "owner619_direct must exhaust the ID space (the live lock)";
  bool i14 = false;
  for (const auto& x : v) i14 |= x.find("I14") != std::string::npos;
  EXPECT_TRUE(i14) << "I14 violation must be reported";
}

// ---------------------------------------------------------------------------
// Forced interleavings of the lazy-put race (remote clear vs context switch).
// ---------------------------------------------------------------------------
struct RaceFixture {
  std::unique_ptr<MmCid> m;
  MmId mm = kNoMm;
  explicit RaceFixture(const std::string& allocator) {
    MmCidVariant v;
    v.lazy.allocator = allocator;
    m = *MmCid::Create(4, v);
    mm = *m->CreateMm(CpuMask::Full(4), 0);
    ISOLATION_EXPECT_OK(m->Fork(kNoTask, 0, mm, CpuMask::Full(4), 0));
    ISOLATION_EXPECT_OK(m->Fork(0, 1, mm, CpuMask::Full(4), 0));
  }
};

// Remote clear announced LAZY on an idle CPU's parked ID, then a task of the
// mm switches in there before the clear verifies: the switch-in resolves the
// LAZY flag itself; the clear must back off (I4, I6).
TEST(MmCidRace, LazyPut_SwitchInBetweenAnnounceAndVerify) {
  for (const std::string& a : AllocatorRegistry().Names()) {
    RaceFixture f(a);
    f.m->ContextSwitch(1, kNoTask, 0, 1);
    f.m->ContextSwitch(1, 0, kNoTask, 2);  // CPU 1 parks ID 0
    Interleaver il;
    // 1 s later: slot is old, the scan's clear_old reclaims it.
    il.Add("scan", [&] {
      f.m->Scan(f.mm, 1);
      f.m->Scan(f.mm, 2 * kNsPerSec);
    });
    il.Add("switch", [&] { f.m->ContextSwitch(1, kNoTask, 1, 2 * kNsPerSec); });
    ISOLATION_ASSERT_OK(
        il.Run({{"scan", "mm_cid.remote_clear.after_lazy_cas"}, {"switch", ""}, {"scan", ""}}));
    ISOLATION_EXPECT_NO_VIOLATIONS(AllViolations(*f.m, /*quiescent=*/true))
        << "announce/verify race";
    EXPECT_GE(f.m->TaskCid(1), 0);
  }
}

// The clear verified "nobody current" and is about to commit when a task
// switches in, finds LAZY, frees and re-allocates: the commit CAS must fail
// (single free, I6) and the running task keeps a reserved ID (I4).
TEST(MmCidRace, LazyPut_SwitchInBetweenVerifyAndCommit) {
  for (const std::string& a : AllocatorRegistry().Names()) {
    RaceFixture f(a);
    f.m->ContextSwitch(1, kNoTask, 0, 1);
    f.m->ContextSwitch(1, 0, kNoTask, 2);
    Interleaver il;
    il.Add("scan", [&] {
      f.m->Scan(f.mm, 1);
      f.m->Scan(f.mm, 2 * kNsPerSec);
    });
    il.Add("switch", [&] { f.m->ContextSwitch(1, kNoTask, 1, 2 * kNsPerSec); });
    ISOLATION_ASSERT_OK(
        il.Run({{"scan", "mm_cid.remote_clear.before_commit"}, {"switch", ""}, {"scan", ""}}));
    ISOLATION_EXPECT_NO_VIOLATIONS(AllViolations(*f.m, /*quiescent=*/true)) << "verify/commit race";
    const MmCidStats s = f.m->Stats();
    EXPECT_EQ(s.allocations - s.frees, 1);
  }
}

// The owner is running when the clear announces LAZY; the clear sees it
// current and backs off; the owner's switch-out completes the lazy put.
TEST(MmCidRace, LazyPut_OwnerRunningSwitchesOut) {
  RaceFixture f("alloc_v6_14");
  f.m->ContextSwitch(2, kNoTask, 0, 1);
  // Only the weight pass can target a running task's slot: give it a high ID.
  f.m->ContextSwitch(3, kNoTask, 1, 1);
  f.m->ContextSwitch(3, 1, kNoTask, 2);
  f.m->ContextSwitch(2, 0, kNoTask, 3);
  f.m->ContextSwitch(2, kNoTask, 1, 4);  // task 1 now on CPU 2 with CPU 2's parked ID 0
  Interleaver il;
  il.Add("scan", [&] {
    f.m->Scan(f.mm, 5);
    f.m->Scan(f.mm, 2 * kNsPerSec);
  });
  il.Add("switch", [&] { f.m->ContextSwitch(2, 1, kNoTask, 2 * kNsPerSec); });
  // Run the scan to completion while task 1 runs on CPU 2 (it backs off
  // there), then the switch-out.
  ISOLATION_ASSERT_OK(il.Run({{"scan", ""}, {"switch", ""}}));
  ISOLATION_EXPECT_NO_VIOLATIONS(AllViolations(*f.m, /*quiescent=*/true)) << "owner running";
}

// Migration steal racing a switch-in on the source CPU (the Dekker pair of
// __sched_mm_cid_migrate_from_try_steal_cid).
TEST(MmCidRace, MigrateSteal_SourceSwitchIn) {
  RaceFixture f("alloc_v6_14");
  f.m->ContextSwitch(0, kNoTask, 0, 1);
  f.m->ContextSwitch(0, 0, kNoTask, 2);  // task 0 last ran on CPU 0 with its ID parked there
  Interleaver il;
  il.Add("migrate", [&] { f.m->Migrate(0, 0, 3, 3); });
  il.Add("switch", [&] { f.m->ContextSwitch(0, kNoTask, 1, 3); });
  ISOLATION_ASSERT_OK(il.Run(
      {{"migrate", "mm_cid.migrate_steal.after_lazy_cas"}, {"switch", ""}, {"migrate", ""}}));
  ISOLATION_EXPECT_NO_VIOLATIONS(AllViolations(*f.m, /*quiescent=*/true)) << "steal race";
  f.m->ContextSwitch(3, kNoTask, 0, 4);
  ISOLATION_EXPECT_NO_VIOLATIONS(AllViolations(*f.m, /*quiescent=*/false))
      << "steal race, task 0 runs";
  EXPECT_NE(f.m->TaskCid(0), f.m->TaskCid(1)) << "I1";
}

// The spellings of the flat configuration are the registries' aliases.
TEST(MmCidVariantNames, OldSpellingsAreAliases) {
  EXPECT_EQ((*PlacementRegistry().Find("workqueue"))->name, "work_unbound");
  EXPECT_EQ((*PlacementRegistry().Find("rcu"))->name, "work_rcu");
  EXPECT_EQ((*PlacementRegistry().Find("task"))->name, "work_taskwork");
  EXPECT_EQ((*ScopeRegistry().Find("cidmask"))->name, "scan_cidmask");
  EXPECT_FALSE(ScopeRegistry().Find("bogus").ok());
  EXPECT_NE(std::string(AllocatorRegistry().Find("v9").status().message()).find("v9"),
            std::string::npos);
  EXPECT_EQ(ParseVariant("lazy+v6_13+cidmask+rcu")->Name(),
            "lazy+alloc_v6_13+scan_cidmask+batch_full+work_rcu");
  MmCidVariant c;
  EXPECT_EQ(c.Name(), "lazy+alloc_v6_14+scan_possible+batch_full+work_taskwork");
  EXPECT_FALSE(MmCid::Create(0, c).ok());
  c.lazy.granularity = "batch_0";
  EXPECT_FALSE(MmCid::Create(8, c).ok());
}

}  // namespace
}  // namespace isolation::mm_cid
