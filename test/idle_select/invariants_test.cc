// SPDX-License-Identifier: GPL-2.0-or-later
// Invariants I1-I13 of shared/spec/idle_select.md, parameterized over every
// variant (a new variant gets every test), with seeded random schedules.

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "isolation/idle_select/idle_select.h"
#include "test_util.h"

namespace isolation::idle_select {
namespace {

using testing::MakeBusy;
using testing::MakeIdle;
using testing::MustCreate;
using testing::OptionsFor;

class IdleSelectInvariants : public ::testing::TestWithParam<Variant> {
 protected:
  Variant v() const { return GetParam(); }
  bool cfs() const { return !IsScxVariant(v()); }
};

// Random transitions on every CPU: idle entry/exit, ticks (some CPUs never
// tick: nohz_full), tick stops, SCHED_IDLE tasks, pending wakeups.
void RandomStep(IdleState& st, std::mt19937_64& rng, bool allow_sched_idle = true) {
  const int n = st.num_cpus();
  const int cpu = static_cast<int>(rng() % static_cast<uint64_t>(n));
  switch (rng() % 7) {
    case 0:
    case 1:
      MakeBusy(st, cpu);
      break;
    case 2:
    case 3:
      MakeIdle(st, cpu);
      break;
    case 4:
      st.Tick(cpu);
      break;
    case 5:
      if (st.cpu_state(cpu).curr_is_idle.load()) st.TickStop(cpu);
      break;
    case 6:
      if (allow_sched_idle && !st.cpu_state(cpu).curr_is_idle.load()) {
        st.cpu_state(cpu).nr_sched_idle.store(st.cpu_state(cpu).nr_running.load());
      } else {
        st.SetWakePending(cpu, (rng() & 1) != 0);
      }
      break;
  }
}

CpuMask RandomAffinity(int n, std::mt19937_64& rng) {
  CpuMask m(n);
  const int mode = static_cast<int>(rng() % 3);
  if (mode == 0) return CpuMask::Full(n);
  for (int c = 0; c < n; ++c) {
    if (rng() % (mode == 1 ? 2 : 8) == 0) m.Set(c);
  }
  if (m.Empty()) m.Set(static_cast<int>(rng() % static_cast<uint64_t>(n)));
  return m;
}

// I3 Affinity + I6 Totality, over topologies with SMT, several LLCs and nodes.
TEST_P(IdleSelectInvariants, I3_Affinity_I6_Totality) {
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    std::mt19937_64 rng(seed);
    const int smt = seed % 2 == 0 ? 2 : 1;
    auto st = MustCreate(IdleTopology::Uniform(4, 8 / smt * 2, smt, 2), OptionsFor(v()));
    ASSERT_NE(st, nullptr);
    auto sel = MakeSelector(*st);
    const int n = st->num_cpus();
    for (int i = 0; i < 2000; ++i) {
      RandomStep(*st, rng);
      if (i % 5 == 0) {
        EXPECT_TRUE(st->SetBudget(static_cast<int>(rng() % 4), static_cast<int>(rng() % 17)).ok());
      }
      if (i % 3 != 0) continue;
      CpuMask aff = RandomAffinity(n, rng);
      WakeTask t{.prev_cpu = static_cast<int>(rng() % static_cast<uint64_t>(n)),
                 .recent_used_cpu = static_cast<int>(rng() % static_cast<uint64_t>(n + 1)) - 1,
                 .affinity = &aff};
      WakeContext ctx{.target = static_cast<int>(rng() % static_cast<uint64_t>(n)),
                      .waker_cpu = static_cast<int>(rng() % static_cast<uint64_t>(n)),
                      .sync = (rng() & 1) != 0};
      Selection s = sel->Select(t, ctx);
      if (cfs()) {
        ASSERT_GE(s.cpu, 0) << "I6: CFS selection always returns a CPU";
        ASSERT_LT(s.cpu, n);
        ASSERT_TRUE(aff.Test(s.cpu)) << "I3: cpu " << s.cpu << " not in " << aff.ToString();
      } else {
        ASSERT_TRUE(s.cpu == -1 || aff.Test(s.cpu)) << "I3: cpu " << s.cpu << " not in " << aff.ToString();
        if (s.claimed) MakeBusy(*st, s.cpu);  // the task runs there
      }
    }
  }
}

// I4 Hint only: with injected false idle bits, no authoritatively busy CPU
// is returned as idle (CFS variants re-check every mask candidate).
TEST_P(IdleSelectInvariants, I4_StaleBitsNeverReturnedWithoutRecheck) {
  if (!cfs()) GTEST_SKIP() << "V4 owns the idle period by claim; I4 is for V0-V3, V5";
  for (uint64_t seed = 1; seed <= 10; ++seed) {
    std::mt19937_64 rng(seed * 7919);
    auto st = MustCreate(IdleTopology::Uniform(2, 16, seed % 2 == 0 ? 2 : 1), OptionsFor(v()));
    auto sel = MakeSelector(*st);
    const int n = st->num_cpus();
    int stale_seen = 0;
    for (int i = 0; i < 3000; ++i) {
      RandomStep(*st, rng);
      // Inject false idle bits on busy CPUs (and false hints).
      const int c = static_cast<int>(rng() % static_cast<uint64_t>(n));
      if (st->llc_of(c) >= 0 && !st->IdleCpu(c)) st->llc(st->llc_of(c)).idle_cpus.Set(c);
      if (rng() % 4 == 0) st->llc(static_cast<int>(rng() % 2)).has_idle_cores.store(1);
      WakeTask t{.prev_cpu = static_cast<int>(rng() % static_cast<uint64_t>(n))};
      Selection s = sel->Select(t, {.target = static_cast<int>(rng() % static_cast<uint64_t>(n))});
      stale_seen += s.stale_hits;
      if (s.idle_found()) {
        ASSERT_TRUE(st->AvailableIdleCpu(s.cpu) || st->SchedIdleCpu(s.cpu))
            << "I4: returned busy CPU " << s.cpu << " as idle";
      }
    }
    if (UsesIdleMask(v())) { EXPECT_GT(stale_seen, 0) << "the injection must have been exercised"; }
  }
}

// I8 Budget: CPU-mode scans probe at most nr_idle_scan CPUs (V3: K; V1 with
// the RFC's SIS_PROP floor: max(nr_idle_scan, v1_min_nr - 1)); budget 0 =>
// zero probes and "none" even with the hint set (V1: no budget-0 cut, the
// idle-core scan runs and finds the idle core).
TEST_P(IdleSelectInvariants, I8_ProbesWithinBudget) {
  if (!cfs() || v() == Variant::kV1Unbounded) GTEST_SKIP() << "no probe budget in this variant";
  for (uint64_t seed = 1; seed <= 10; ++seed) {
    std::mt19937_64 rng(seed);
    auto st = MustCreate(IdleTopology::Uniform(1, 64), OptionsFor(v()));
    auto sel = MakeSelector(*st);
    for (int i = 0; i < 3000; ++i) {
      RandomStep(*st, rng);
      const int budget = static_cast<int>(rng() % 65);
      EXPECT_TRUE(st->SetBudget(0, budget).ok());
      int limit = v() == Variant::kV3 ? st->options().v3_max_probes : budget;
      if (HasV1ScanFloor(v())) limit = std::max(budget, st->options().v1_min_nr - 1);
      WakeTask t{.prev_cpu = static_cast<int>(rng() % 64)};
      Selection s = sel->Select(t, {.target = static_cast<int>(rng() % 64)});
      ASSERT_LE(s.probes, limit) << "I8: budget " << budget;
    }
  }
  // Budget 0 with the hint set (SMT): zero probes, hint kept.
  if (v() != Variant::kV3) {
    auto st = MustCreate(IdleTopology::Uniform(1, 8, 2), OptionsFor(v()));
    for (int c = 0; c < 16; ++c) MakeBusy(*st, c);
    for (int c = 0; c < 16; ++c) st->Tick(c);
    MakeIdle(*st, 8);
    MakeIdle(*st, 9);
    st->TickStop(8);  // V1-tickstop publishes the bits at tick stop
    st->TickStop(9);
    st->llc(0).has_idle_cores.store(1);
    EXPECT_TRUE(st->SetBudget(0, 0).ok());
    auto sel = MakeSelector(*st);
    WakeTask t{.prev_cpu = 0};
    Selection s = sel->Select(t, {.target = 0});
    if (HasV1ScanFloor(v())) {
      // SIS_PROP never cut the idle-core scan: the idle core 4 is found.
      EXPECT_EQ(s.outcome, Outcome::kIdleFound);
      EXPECT_TRUE(s.cpu == 8 || s.cpu == 9) << s.cpu;
      EXPECT_GT(s.probes, 0);
    } else {
      EXPECT_EQ(s.probes, 0);
      EXPECT_EQ(s.outcome, Outcome::kFallback);
    }
    EXPECT_EQ(st->llc(0).has_idle_cores.load(), 1);
  }
}

// I8 for the RFC's V1 in CPU mode at budget 0 (above ~85 % busy): V0 and the
// literal "same budget" V1 (v1_min_nr <= 1) probe nothing; the faithful V1
// keeps the SIS_PROP floor and finds a masked idle CPU within 3 probes.
TEST_P(IdleSelectInvariants, I8_BudgetZeroV1KeepsSisPropFloor) {
  if (!HasV1ScanFloor(v())) GTEST_SKIP() << "only V1, V1-eager, V1-tickstop have the SIS_PROP floor";
  for (int min_nr : {4, 1}) {
    Options o = OptionsFor(v());
    o.v1_min_nr = min_nr;
    auto st = MustCreate(IdleTopology::Uniform(1, 64), o);
    for (int c = 0; c < 64; ++c) MakeBusy(*st, c);
    for (int c = 0; c < 64; ++c) st->Tick(c);
    // 61 of 64 busy (95 %): three idle CPUs, tick stopped (V1-tickstop sets
    // the bit there), none of them target or prev.
    for (int c : {20, 40, 60}) {
      MakeIdle(*st, c);
      st->TickStop(c);
    }
    EXPECT_TRUE(st->UpdateIdleCpuScan(0, int64_t{61} * kSchedCapacityScale).ok());
    ASSERT_EQ(st->llc(0).nr_idle_scan.load(), 0);
    auto sel = MakeSelector(*st);
    WakeTask t{.prev_cpu = 5};
    Selection s = sel->Select(t, {.target = 30});
    if (min_nr == 4) {
      EXPECT_EQ(s.outcome, Outcome::kIdleFound);
      EXPECT_EQ(s.cpu, 40) << "first masked CPU after target 30";
      EXPECT_EQ(s.probes, 1);
      // Stale bits: at most 3 probes, then "none".
      for (int c : {40, 60, 20}) MakeBusy(*st, c);  // bits stay set until the tick
      Selection cut = sel->Select(t, {.target = 30});
      if (v() == Variant::kV1Eager) {
        EXPECT_EQ(cut.probes, 0) << "V1-eager cleared the bits on idle exit";
      } else {
        EXPECT_EQ(cut.probes, 3);
        EXPECT_EQ(cut.stale_hits, 3);
      }
      EXPECT_EQ(cut.outcome, Outcome::kFallback);
    } else {
      EXPECT_EQ(s.outcome, Outcome::kFallback) << "literal spec V1: cut like V0";
      EXPECT_EQ(s.probes, 0);
    }
  }
}

// I9: the hint is cleared after a complete idle-core scan that found none.
TEST_P(IdleSelectInvariants, I9_IdleCoreHintClearedAfterFailedScan) {
  if (!cfs()) GTEST_SKIP() << "scx has no has_idle_cores hint";
  auto st = MustCreate(IdleTopology::Uniform(1, 8, 2), OptionsFor(v()));
  for (int c = 0; c < 16; ++c) MakeBusy(*st, c);
  for (int c = 0; c < 16; ++c) st->Tick(c);
  MakeIdle(*st, 5);  // half-idle core only
  st->llc(0).has_idle_cores.store(1);
  EXPECT_TRUE(st->SetBudget(0, 16).ok());
  auto sel = MakeSelector(*st);
  WakeTask t{.prev_cpu = 0};
  Selection s = sel->Select(t, {.target = 0});
  EXPECT_EQ(st->llc(0).has_idle_cores.load(), 0) << "I9";
  EXPECT_EQ(s.cpu, UsesIdleMask(v()) && v() != Variant::kV2 && !st->llc(0).idle_cpus.Test(5) ? 0 : 5);
  // Set only when all siblings are idle.
  MakeIdle(*st, 6);
  EXPECT_EQ(st->llc(0).has_idle_cores.load(), 0) << "sibling 7 busy";
  MakeIdle(*st, 7);
  EXPECT_EQ(st->llc(0).has_idle_cores.load(), 1);
}

// I1 Subset (quiescent) after random schedules, with rebuilds.
TEST_P(IdleSelectInvariants, I1_SubsetQuiescent) {
  for (uint64_t seed = 1; seed <= 10; ++seed) {
    std::mt19937_64 rng(seed);
    auto st = MustCreate(IdleTopology::Uniform(2, 8, 2, 2), OptionsFor(v()));
    auto sel = MakeSelector(*st);
    for (int i = 0; i < 2000; ++i) {
      RandomStep(*st, rng, /*allow_sched_idle=*/true);
      if (i % 97 == 0 && cfs()) {
        CpuMask iso(st->num_cpus());
        for (int c = 0; c < st->num_cpus(); ++c) {
          if (rng() % 4 == 0) iso.Set(c);
        }
        EXPECT_TRUE(st->Rebuild(iso).ok());
      }
      if (i % 4 == 0) {
        WakeTask t{.prev_cpu = static_cast<int>(rng() % 32)};
        Selection s = sel->Select(t, {.target = static_cast<int>(rng() % 32)});
        if (s.claimed) MakeBusy(*st, s.cpu);
      }
      ASSERT_EQ(st->CheckSubsetInvariant(), "") << "step " << i;
    }
  }
}

// I2 Isolation: a domain-isolated CPU is returned only as the target itself.
TEST_P(IdleSelectInvariants, I2_IsolatedOnlyAsTarget) {
  if (!cfs()) GTEST_SKIP() << "V4 has no domains (I2 is for CFS variants); see S7_IsolationScx";
  std::mt19937_64 rng(42);
  auto st = MustCreate(IdleTopology::Uniform(2, 8, 2), OptionsFor(v()));
  CpuMask iso(32);
  for (int c : {1, 5, 6, 7, 20, 21, 30}) iso.Set(c);
  EXPECT_TRUE(st->Rebuild(iso).ok());
  auto sel = MakeSelector(*st);
  for (int i = 0; i < 5000; ++i) {
    RandomStep(*st, rng);
    WakeTask t{.prev_cpu = static_cast<int>(rng() % 32), .recent_used_cpu = static_cast<int>(rng() % 32)};
    const int target = static_cast<int>(rng() % 32);
    Selection s = sel->Select(t, {.target = target});
    if (iso.Test(s.cpu)) { ASSERT_EQ(s.cpu, target) << "I2"; }
    if (!iso.Test(target)) { ASSERT_FALSE(iso.Test(s.cpu)); }
  }
}

// I7 Order: target first, then prev (same LLC), then recent_used_cpu.
TEST_P(IdleSelectInvariants, I7_OrderTargetPrevRecent) {
  if (!cfs()) GTEST_SKIP() << "scx order is S17/S18 and V4 tests";
  auto st = MustCreate(IdleTopology::Uniform(1, 16), OptionsFor(v()));
  for (int c = 0; c < 16; ++c) MakeBusy(*st, c);
  for (int c = 0; c < 16; ++c) st->Tick(c);
  auto sel = MakeSelector(*st);
  MakeIdle(*st, 4);
  MakeIdle(*st, 9);
  MakeIdle(*st, 12);
  WakeTask t{.prev_cpu = 9, .recent_used_cpu = 12};
  EXPECT_EQ(sel->Select(t, {.target = 4}).cpu, 4);
  t = {.prev_cpu = 9, .recent_used_cpu = 12};
  EXPECT_EQ(sel->Select(t, {.target = 3}).cpu, 9);
  EXPECT_EQ(t.recent_used_cpu, 12) << "recent_used_cpu is only rewritten at step 4";
  t = {.prev_cpu = 8, .recent_used_cpu = 12};
  EXPECT_EQ(sel->Select(t, {.target = 3}).cpu, 12);
  EXPECT_EQ(t.recent_used_cpu, 8);
}

// I10 Staleness bounds.
TEST_P(IdleSelectInvariants, I10_StalenessBounds) {
  auto st = MustCreate(IdleTopology::Uniform(1, 8), OptionsFor(v()));
  MakeIdle(*st, 3);
  st->TickStop(3);
  MakeBusy(*st, 3);
  const bool after_exit = UsesIdleMask(v()) ? st->llc(0).idle_cpus.Test(3)
                                            : (IsScxVariant(v()) ? st->scx(0).cpu.Test(3) : false);
  if (v() == Variant::kV1Eager || IsScxVariant(v())) { EXPECT_FALSE(after_exit) << "eager: no stale window"; }
  st->TickRestart(3);
  st->Tick(3);
  if (UsesIdleMask(v())) { EXPECT_FALSE(st->llc(0).idle_cpus.Test(3)) << "cleared within one tick"; }
  if (IsScxVariant(v())) {
    // A claimed CPU without a task is visible again after its idle loop.
    MakeIdle(*st, 3);
    auto sel = MakeSelector(*st);
    for (int c = 0; c < 8; ++c) {
      if (c != 3) MakeBusy(*st, c);
    }
    WakeTask t{.prev_cpu = 0};
    ASSERT_EQ(sel->Select(t, {.target = 0}).cpu, 3);
    EXPECT_FALSE(st->scx(0).cpu.Test(3));
    st->IdleRefresh(3);
    EXPECT_TRUE(st->scx(0).cpu.Test(3));
  }
}

// I12 Write economy: updates that do not change state write nothing.
TEST_P(IdleSelectInvariants, I12_WriteEconomy) {
  auto st = MustCreate(IdleTopology::Uniform(1, 8, 2), OptionsFor(v()));
  for (int c = 0; c < 16; ++c) MakeBusy(*st, c);
  for (int c = 0; c < 16; ++c) st->Tick(c);
  const int64_t before = st->TotalSharedWrites();
  for (int i = 0; i < 100; ++i) {
    for (int c = 0; c < 16; ++c) st->Tick(c);  // still busy
  }
  EXPECT_EQ(st->TotalSharedWrites(), before) << "busy ticks";
  MakeIdle(*st, 2);
  st->TickStop(2);
  const int64_t after_idle = st->TotalSharedWrites();
  for (int i = 0; i < 100; ++i) {
    st->IdleEnter(2);  // idle -> idle
    st->Tick(2);
    st->TickStop(2);
  }
  EXPECT_EQ(st->TotalSharedWrites(), after_idle) << "idle re-entries";
  for (int i = 0; i < 100; ++i) EXPECT_TRUE(st->UpdateIdleCpuScan(0, 5000).ok());
  EXPECT_LE(st->llc(0).budget_stores.load(), 1);
}

// I13: a CPU without an LLC domain performs no shared write.
TEST_P(IdleSelectInvariants, I13_NoWritesWithoutDomain) {
  auto st = MustCreate(IdleTopology::Uniform(1, 8), OptionsFor(v()));
  if (IsScxVariant(v())) GTEST_SKIP() << "scx masks ignore domains (spec 3.8); covered by S7_IsolationScx";
  CpuMask iso(8);
  iso.Set(5);
  EXPECT_TRUE(st->Rebuild(iso).ok());
  const int64_t before = st->TotalSharedWrites();
  for (int i = 0; i < 50; ++i) {
    MakeBusy(*st, 5);
    st->Tick(5);
    st->cpu_state(5).nr_running.store(3);
    st->Tick(5);
    MakeIdle(*st, 5);
    st->TickStop(5);
  }
  EXPECT_EQ(st->TotalSharedWrites(), before);
  EXPECT_FALSE(st->llc(0).idle_cpus.Test(5));
}

// I5 Unique claim with concurrent real threads: one idle CPU, N claimers,
// exactly one winner per idle period.
TEST_P(IdleSelectInvariants, I5_UniqueClaimConcurrentThreads) {
  if (cfs()) GTEST_SKIP() << "CFS variants claim nothing (stacking is S14)";
  auto st = MustCreate(IdleTopology::Uniform(2, 4, 1, 2), OptionsFor(v()));
  for (int c = 0; c < 8; ++c) MakeBusy(*st, c);
  constexpr int kThreads = 4;
  constexpr int kEpochs = 400;
  std::mutex mu;
  std::condition_variable cv;
  int epoch = -1;
  int arrived = 0;
  std::atomic<int> winners{0};
  std::vector<int> per_epoch(kEpochs, 0);
  std::atomic<int> idle_cpu{0};
  auto worker = [&](int id) {
    auto sel = MakeSelector(*st);
    for (int e = 0; e < kEpochs; ++e) {
      {
        std::unique_lock<std::mutex> lock(mu);
        cv.wait(lock, [&] { return epoch >= e; });
      }
      WakeTask t{.prev_cpu = id % 8};
      Selection s = sel->Select(t, {.target = id % 8});
      if (s.claimed) {
        winners.fetch_add(1, std::memory_order_relaxed);
        if (s.cpu != idle_cpu.load()) ADD_FAILURE() << "claimed a busy CPU " << s.cpu;
      }
      {
        std::lock_guard<std::mutex> lock(mu);
        if (s.claimed) ++per_epoch[static_cast<size_t>(e)];
        ++arrived;
      }
      cv.notify_all();
    }
  };
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) threads.emplace_back(worker, i);
  for (int e = 0; e < kEpochs; ++e) {
    const int c = e % 8;
    idle_cpu.store(c);
    MakeIdle(*st, c);  // a new idle period on CPU c
    {
      std::lock_guard<std::mutex> lock(mu);
      arrived = 0;
      epoch = e;
    }
    cv.notify_all();
    {
      std::unique_lock<std::mutex> lock(mu);
      cv.wait(lock, [&] { return arrived == kThreads; });
    }
    MakeBusy(*st, c);  // the winner's task runs there
  }
  for (auto& t : threads) t.join();
  for (int e = 0; e < kEpochs; ++e) ASSERT_EQ(per_epoch[static_cast<size_t>(e)], 1) << "I5 epoch " << e;
  EXPECT_EQ(winners.load(), kEpochs);
}

INSTANTIATE_TEST_SUITE_P(AllVariants, IdleSelectInvariants, ::testing::ValuesIn(AllVariants()),
                         [](const ::testing::TestParamInfo<Variant>& info) {
                           std::string n(VariantName(info.param));
                           for (char& ch : n) {
                             if (ch == '-') ch = '_';
                           }
                           return n;
                         });

// Negative control: a deliberately broken selector that trusts the mask
// without re-checking must be caught by the I4 check used above.
TEST(IdleSelectNegativeControl, I4_TrustingSelectorIsDetected) {
  auto st = MustCreate(IdleTopology::Uniform(1, 8), OptionsFor(Variant::kV1));
  for (int c = 0; c < 8; ++c) testing::MakeBusySettled(*st, c);
  st->llc(0).idle_cpus.Set(6);  // injected stale bit
  // The broken strategy: first mask bit, no per-CPU check.
  class Trusting final : public IdleSelector {
   public:
    explicit Trusting(IdleState& s) : s_(s) {}
    Variant variant() const override { return Variant::kV1; }
    Selection Select(WakeTask& t, const WakeContext& ctx) override {
      (void)t;
      Selection sel;
      const int c = s_.llc(0).idle_cpus.First();
      sel.cpu = c < s_.num_cpus() ? c : ctx.target;
      sel.outcome = c < s_.num_cpus() ? Outcome::kIdleFound : Outcome::kFallback;
      return sel;
    }

   private:
    IdleState& s_;
  } broken(*st);
  WakeTask t{.prev_cpu = 0};
  Selection s = broken.Select(t, {.target = 0});
  const bool i4_holds = !s.idle_found() || st->AvailableIdleCpu(s.cpu) || st->SchedIdleCpu(s.cpu);
  EXPECT_FALSE(i4_holds) << "the I4 check must flag the trusting selector";
  auto good = MakeSelector(*st);
  t = {.prev_cpu = 0};
  s = good->Select(t, {.target = 0});
  EXPECT_FALSE(s.idle_found());
  EXPECT_EQ(s.stale_hits, 1);
}

}  // namespace
}  // namespace isolation::idle_select
