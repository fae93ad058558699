// SPDX-License-Identifier: GPL-2.0-or-later
// Scenarios of docs/idle_select.md that are about particular built-in
// selectors (V0's scan order and budget, V1's staleness, V4's claims, V5's
// filter, the options of each), driven directly through IdleState's entry
// points.  What holds for any selector is in the kit's conformance suites
// (conformance_test.cc).

#include <algorithm>
#include <array>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "idle_select/idle_mask_selector.h"
#include "isolation/idle_select/idle_select.h"
#include "isolation/idle_select/selector.h"
#include "isolation/testing/idle_select.h"
#include "isolation/testing/status_matchers.h"

namespace isolation::idle_select {
namespace {

using ::isolation::testing::MakeBusy;
using ::isolation::testing::MakeBusySettled;
using ::isolation::testing::MakeIdle;

std::unique_ptr<IdleState> MustCreate(const std::string& selector,
                                      absl::StatusOr<IdleTopology> topo, Options o = {}) {
  o.variant = selector;
  auto st = IdleState::Create(std::move(topo), o);
  ISOLATION_EXPECT_OK(st);
  return st.ok() ? std::move(*st) : nullptr;
}

// A short idle: the CPU enters the idle loop but keeps its tick.
void ShortIdle(IdleState& st, int cpu) {
  st.SetNrRunning(cpu, 0);
  st.SetWakePending(cpu, false);
  st.IdleEnter(cpu);
}

CpuMask IdleMask(const IdleState& st, int llc = 0) { return st.SelectorMask("idle_cpus", llc); }

// ---------------------------------------------------------------------------
// S1: the SIS_UTIL golden table.
// ---------------------------------------------------------------------------
TEST(IdleSelectScenarios, S1_BudgetGolden) {
  const std::array<int, 12> pcts = {0, 5, 15, 25, 35, 45, 55, 65, 75, 80, 85, 86};
  struct Row {
    int llc;
    std::array<int, 12> want;
  };
  const std::vector<Row> rows = {
      {4, {4, 3, 3, 3, 3, 2, 2, 1, 0, 0, 0, 0}},
      {8, {8, 7, 7, 7, 6, 5, 4, 3, 1, 1, 0, 0}},
      {16, {16, 15, 15, 14, 13, 11, 9, 6, 3, 2, 0, 0}},
      {32, {32, 31, 31, 29, 26, 23, 18, 13, 7, 4, 0, 0}},
      {64, {64, 63, 62, 58, 53, 46, 37, 27, 14, 8, 0, 0}},
      {112, {112, 111, 108, 102, 93, 81, 65, 47, 25, 14, 1, 0}},
      {128, {128, 127, 124, 117, 106, 92, 75, 54, 29, 16, 1, 0}},
  };
  for (const Row& r : rows) {
    for (size_t i = 0; i < pcts.size(); ++i) {
      const int64_t sum_util = int64_t{r.llc} * 1024 * pcts[i] / 100;
      EXPECT_EQ(SisUtilBudget(sum_util, r.llc), r.want[i])
          << "llc " << r.llc << " util " << pcts[i] << "%";
    }
    // >= 86 %: 0 all the way to 100 %.
    for (int p = 86; p <= 100; ++p)
      EXPECT_EQ(SisUtilBudget(int64_t{r.llc} * 1024 * p / 100, r.llc), 0);
  }
  // "first 0 at x" column.
  const std::vector<std::pair<int, int>> first_zero = {{4, 759},  {8, 820},   {16, 848}, {32, 862},
                                                       {64, 869}, {112, 872}, {128, 873}};
  for (auto [llc, x] : first_zero) {
    EXPECT_EQ(SisUtilBudget(int64_t{x} * llc, llc), 0) << llc;
    EXPECT_GT(SisUtilBudget(int64_t{x - 1} * llc, llc), 0) << llc;
  }
  EXPECT_EQ(SisUtilBudget(27 * 16, 16), 16);
  EXPECT_EQ(SisUtilBudget(28 * 16, 16), 15);

  // Stored only on change: 100 identical updates -> 1 store.
  auto st = MustCreate("V0", IdleTopology::Uniform(1, 16));
  for (int i = 0; i < 100; ++i) ISOLATION_EXPECT_OK(st->UpdateIdleCpuScan(0, 16 * 1024 * 50 / 100));
  EXPECT_EQ(st->llc(0).budget_stores, 1);
  EXPECT_EQ(st->llc(0).nr_idle_scan, SisUtilBudget(16 * 1024 * 50 / 100, 16));
}

// One LLC of 16 CPUs, all busy except `idle`.
std::unique_ptr<IdleState> Llc16(const std::string& v, std::vector<int> idle, Options o = {}) {
  auto st = MustCreate(v, IdleTopology::Uniform(1, 16), o);
  for (int c = 0; c < 16; ++c) MakeBusySettled(*st, c);
  for (int c : idle) MakeIdle(*st, c);
  return st;
}

// ---------------------------------------------------------------------------
// S2 / S3: scan order and budget cut (V0), and where the scan starts.
// ---------------------------------------------------------------------------
TEST(IdleSelectScenarios, S2_ScanOrder) {
  auto st = Llc16("V0", {3, 12});
  ISOLATION_EXPECT_OK(st->SetBudget(0, 16));
  WakeTask t{.prev_cpu = 9};
  Selection s = st->Select(t, {.target = 9});
  EXPECT_EQ(s.cpu, 12);
  EXPECT_EQ(s.probes, 3);  // 10, 11, 12
  t = {.prev_cpu = 13};
  s = st->Select(t, {.target = 13});
  EXPECT_EQ(s.cpu, 3);
  EXPECT_EQ(s.probes, 6);  // 14, 15, 0, 1, 2, 3

  auto only9 = Llc16("V0", {9});
  t = {.prev_cpu = 9};
  s = only9->Select(t, {.target = 9});
  EXPECT_EQ(s.cpu, 9);
  EXPECT_TRUE(s.idle_found());
  EXPECT_EQ(s.probes, 0);
}

// scan_from_target_plus_one = false: the 5.10 scan starts at target itself
// (already found busy at step 1), one probe more than mainline's.
TEST(IdleSelectScenarios, S2_ScanFromTargetOption) {
  Options o;
  o.scan_from_target_plus_one = false;
  auto st = Llc16("V0", {3, 12}, o);
  ISOLATION_EXPECT_OK(st->SetBudget(0, 16));
  WakeTask t{.prev_cpu = 9};
  Selection s = st->Select(t, {.target = 9});
  EXPECT_EQ(s.cpu, 12);
  EXPECT_EQ(s.probes, 4);  // 9, 10, 11, 12
  t = {.prev_cpu = 13};
  s = st->Select(t, {.target = 13});
  EXPECT_EQ(s.cpu, 3);
  EXPECT_EQ(s.probes, 7);  // 13, 14, 15, 0, 1, 2, 3
  // A budget of 1 from target 2 reaches 3 only when the scan starts at 2+1:
  // from 2 the one probe goes to 2 itself.
  ISOLATION_EXPECT_OK(st->SetBudget(0, 1));
  t = {.prev_cpu = 2};
  EXPECT_EQ(st->Select(t, {.target = 2}).cpu, 2);
  auto mainline = Llc16("V0", {3, 12});
  ISOLATION_EXPECT_OK(mainline->SetBudget(0, 1));
  t = {.prev_cpu = 2};
  EXPECT_EQ(mainline->Select(t, {.target = 2}).cpu, 3);
}

TEST(IdleSelectScenarios, S3_BudgetCut) {
  auto st = Llc16("V0", {3, 12});
  ISOLATION_EXPECT_OK(st->SetBudget(0, 2));
  WakeTask t{.prev_cpu = 0};
  Selection s = st->Select(t, {.target = 0});
  EXPECT_EQ(s.cpu, 0);
  EXPECT_EQ(s.outcome, Outcome::kFallback);
  EXPECT_EQ(s.probes, 2);  // 1, 2
}

// 8 cores x 2 threads, one LLC, all busy.
std::unique_ptr<IdleState> Smt16(const std::string& v, Options o = {}) {
  auto st = MustCreate(v, IdleTopology::Uniform(1, 8, 2), o);
  for (int c = 0; c < 16; ++c) MakeBusySettled(*st, c);
  return st;
}

TEST(IdleSelectScenarios, S4_BudgetZeroWithHint) {
  auto st = Smt16("V0");
  MakeIdle(*st, 10);
  MakeIdle(*st, 11);
  ISOLATION_EXPECT_OK(st->SetIdleCoresHint(0, true));
  ISOLATION_EXPECT_OK(st->SetBudget(0, 0));
  WakeTask t{.prev_cpu = 0};
  Selection s = st->Select(t, {.target = 0});
  EXPECT_EQ(s.cpu, 0);
  EXPECT_EQ(s.outcome, Outcome::kFallback);
  EXPECT_EQ(s.probes, 0);
  EXPECT_TRUE(st->llc(0).has_idle_cores) << "budget-0 return must not clear the hint (I9)";
}

// S6, and smt_preference = false (no sched_smt_active(): no sibling step).
TEST(IdleSelectScenarios, S6_IdleSiblingOfPrev) {
  auto st = Smt16("V0");
  MakeIdle(*st, 7);  // sibling of prev 6
  EXPECT_FALSE(st->llc(0).has_idle_cores);
  ISOLATION_EXPECT_OK(st->SetBudget(0, 0));  // so only select_idle_smt can find it
  WakeTask t{.prev_cpu = 6};
  Selection s = st->Select(t, {.target = 0});
  EXPECT_EQ(s.cpu, 7);
  EXPECT_EQ(s.probes, 1);

  // The sibling is domain-isolated: skipped.
  CpuMask iso(16);
  iso.Set(7);
  ISOLATION_EXPECT_OK(st->Rebuild(iso));
  t = {.prev_cpu = 6};
  s = st->Select(t, {.target = 0});
  EXPECT_EQ(s.cpu, 0);

  Options off;
  off.smt_preference = false;
  auto plain = Smt16("V0", off);
  MakeIdle(*plain, 7);
  ISOLATION_EXPECT_OK(plain->SetBudget(0, 0));
  t = {.prev_cpu = 6};
  s = plain->Select(t, {.target = 0});
  EXPECT_EQ(s.cpu, 0) << "smt_preference off: no idle-sibling step";
  EXPECT_EQ(s.probes, 0);
}

// ---------------------------------------------------------------------------
// S7 for sched_ext (the scan-style part of S7 is the kit's S7_Isolation*).
// ---------------------------------------------------------------------------
TEST(IdleSelectScenarios, S7_IsolationScx) {
  const CpuMask iso = CpuMask::Range(16, 8, 15);
  const std::vector<int> cores = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
  for (const char* v : {"V4g", "V4n"}) {
    SCOPED_TRACE(v);
    // Boot-time isolcpus=domain: refused, as scx_enable() does.
    auto boot = IdleTopology::FromIds(std::vector<int>(16, 0), cores, std::vector<int>(16, 0),
                                      CpuMask(), iso);
    ISOLATION_ASSERT_OK(boot);
    Options o;
    o.variant = v;
    auto refused = IdleState::Create(*boot, o);
    EXPECT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition);
    // Cpuset partition: 8-15 stay in the masks; only affinity keeps tasks away.
    auto part = IdleTopology::FromIds(std::vector<int>(16, 0), cores, std::vector<int>(16, 0), iso,
                                      CpuMask());
    ISOLATION_ASSERT_OK(part);
    auto st = MustCreate(v, *part);
    for (int c = 0; c < 8; ++c) MakeBusy(*st, c);
    EXPECT_TRUE(iso.IsSubsetOf(st->SelectorMask("cpu", 0)));
    CpuMask outside = CpuMask::Range(16, 0, 7);  // effective affinity outside the partition
    WakeTask t{.prev_cpu = 3, .affinity = &outside};
    EXPECT_EQ(st->Select(t, {.target = 3}).cpu, -1);
    CpuMask all = CpuMask::Full(16);
    t = {.prev_cpu = 3, .affinity = &all};
    EXPECT_GE(st->Select(t, {.target = 3}).cpu, 8)
        << "without the affinity, V4 would use the partition";
  }
}

// ---------------------------------------------------------------------------
// S8-S10: V1 staleness.
// ---------------------------------------------------------------------------
TEST(IdleSelectScenarios, S8_V1Staleness) {
  auto st = Llc16("V1", {4});
  EXPECT_TRUE(IdleMask(*st).Test(4));
  MakeBusy(*st, 4);  // a task starts at t = 0.3 ms
  EXPECT_TRUE(IdleMask(*st).Test(4)) << "V1 clears only at the tick";
  WakeTask t{.prev_cpu = 0};
  Selection s = st->Select(t, {.target = 0});
  EXPECT_EQ(s.cpu, 0);
  EXPECT_EQ(s.probes, 1);
  EXPECT_EQ(s.stale_hits, 1);
  st->Tick(4);
  EXPECT_FALSE(IdleMask(*st).Test(4));

  auto eager = Llc16("V1-eager", {4});
  MakeBusy(*eager, 4);
  EXPECT_FALSE(IdleMask(*eager).Test(4)) << "V1-eager clears on idle exit";
}

TEST(IdleSelectScenarios, S9_V1TicklessBusyCpu) {
  for (const char* v : {"V1", "V1-eager", "V4g"}) {
    SCOPED_TRACE(v);
    auto st = Llc16(v, {5});
    MakeBusy(*st, 5);  // nohz_full: busy with the tick stopped -> no Tick(5)
    for (int c = 0; c < 16; ++c) {
      if (c != 5) st->Tick(c);
    }
    int stale = 0;
    for (int i = 0; i < 10; ++i) {
      WakeTask t{.prev_cpu = 0};
      Selection s = st->Select(t, {.target = 0});
      EXPECT_NE(s.cpu, 5);
      stale += s.stale_hits;
    }
    if (std::string(v) == "V1") {
      EXPECT_TRUE(IdleMask(*st).Test(5));
      EXPECT_EQ(stale, 10) << "every wakeup probes the stale CPU 5";
    } else {
      EXPECT_EQ(stale, 0);
    }
  }
}

TEST(IdleSelectScenarios, S10_V1RebuildStaleness) {
  for (bool fix : {false, true}) {
    Options o;
    o.v1_reset_state_on_rebuild = fix;
    auto st = MustCreate("V1", IdleTopology::Uniform(1, 16), o);
    MakeBusySettled(*st, 6);
    EXPECT_FALSE(IdleMask(*st).Test(6));
    ISOLATION_EXPECT_OK(st->Rebuild(CpuMask(16)));
    EXPECT_TRUE(IdleMask(*st).Test(6)) << "rebuild re-initialises the mask to the span";
    for (int i = 0; i < 5; ++i) st->Tick(6);
    EXPECT_EQ(IdleMask(*st).Test(6), !fix)
        << (fix ? "fix: the tick clears it" : "last_idle_state 0 keeps the stale bit");
    MakeIdle(*st, 6);
    MakeBusySettled(*st, 6);
    EXPECT_FALSE(IdleMask(*st).Test(6)) << "idle then busy again repairs it";
  }
}

// I8 for the RFC's V1 in CPU mode at budget 0 (above ~85 % busy): V0 and the
// literal "same budget" V1 (v1_min_nr <= 1) probe nothing; the faithful V1
// keeps the SIS_PROP floor and finds a masked idle CPU within 3 probes.
TEST(IdleSelectScenarios, I8_BudgetZeroV1KeepsSisPropFloor) {
  for (const char* v : {"V1", "V1-eager", "V1-tickstop"}) {
    for (int min_nr : {4, 1}) {
      SCOPED_TRACE(std::string(v) + " v1_min_nr " + std::to_string(min_nr));
      Options o;
      o.v1_min_nr = min_nr;
      auto st = MustCreate(v, IdleTopology::Uniform(1, 64), o);
      EXPECT_EQ(st->selector().MaxScanProbes(0), min_nr == 4 ? 3 : 0);
      for (int c = 0; c < 64; ++c) MakeBusySettled(*st, c);
      // 61 of 64 busy (95 %): three idle CPUs with their tick stopped, none
      // of them target or prev.
      for (int c : {20, 40, 60}) MakeIdle(*st, c);
      ISOLATION_EXPECT_OK(st->UpdateIdleCpuScan(0, int64_t{61} * kSchedCapacityScale));
      ASSERT_EQ(st->llc(0).nr_idle_scan, 0);
      WakeTask t{.prev_cpu = 5};
      Selection s = st->Select(t, {.target = 30});
      if (min_nr == 4) {
        EXPECT_EQ(s.outcome, Outcome::kIdleFound);
        EXPECT_EQ(s.cpu, 40) << "first masked CPU after target 30";
        EXPECT_EQ(s.probes, 1);
        // Stale bits: at most 3 probes, then "none".
        for (int c : {40, 60, 20}) MakeBusy(*st, c);  // bits stay set until the tick
        t = {.prev_cpu = 5};
        Selection cut = st->Select(t, {.target = 30});
        if (std::string(v) == "V1-eager") {
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
}

// With the hint set and budget 0, the V1 family still scans the mask for a
// whole idle core (SIS_PROP never cut the idle-core scan).
TEST(IdleSelectScenarios, I8_V1IdleCoreScanAtBudgetZero) {
  for (const char* v : {"V1", "V1-eager", "V1-tickstop"}) {
    SCOPED_TRACE(v);
    auto st = Smt16(v);
    MakeIdle(*st, 8);
    MakeIdle(*st, 9);
    ISOLATION_EXPECT_OK(st->SetIdleCoresHint(0, true));
    ISOLATION_EXPECT_OK(st->SetBudget(0, 0));
    WakeTask t{.prev_cpu = 0};
    Selection s = st->Select(t, {.target = 0});
    EXPECT_EQ(s.outcome, Outcome::kIdleFound);
    EXPECT_TRUE(s.cpu == 8 || s.cpu == 9) << s.cpu;
    EXPECT_GT(s.probes, 0);
    EXPECT_TRUE(st->llc(0).has_idle_cores);
  }
}

// ---------------------------------------------------------------------------
// S13: tick-stop gating hides short-idle CPUs; V2 finds them in pass 2.
// V2 here keeps its mask the V1-tickstop way (the two-pass remedy for the
// gated mask): the built-in V2 sets its mask on every idle entry.
// ---------------------------------------------------------------------------
TEST(IdleSelectScenarios, S13_TickStopGating) {
  auto gated = MustCreate("V1-tickstop", IdleTopology::Uniform(1, 16));
  Options o;
  o.variant = "V2 with the V1-tickstop upkeep";
  ISOLATION_ASSERT_OK_AND_ASSIGN(
      auto two_pass,
      IdleState::Create(*IdleTopology::Uniform(1, 16), o,
                        [](IdleState& s) -> absl::StatusOr<std::unique_ptr<IdleSelector>> {
                          return std::unique_ptr<IdleSelector>(
                              std::make_unique<SetAtTickStop<V2Selector>>(s));
                        }));
  for (IdleState* st : {gated.get(), two_pass.get()}) {
    for (int c = 0; c < 16; ++c) MakeBusySettled(*st, c);
    ShortIdle(*st, 2);  // idles briefly: the tick keeps running
    EXPECT_FALSE(IdleMask(*st).Test(2));
  }
  WakeTask t{.prev_cpu = 0};
  EXPECT_EQ(gated->Select(t, {.target = 0}).cpu, 0) << "invisible to the mask scan";
  t = {.prev_cpu = 0};
  EXPECT_EQ(two_pass->Select(t, {.target = 0}).cpu, 2) << "V2 pass 2 scans the rest of the span";
  gated->TickStop(2);
  EXPECT_TRUE(IdleMask(*gated).Test(2));
  t = {.prev_cpu = 0};
  EXPECT_EQ(gated->Select(t, {.target = 0}).cpu, 2);
  // The built-in V1 (every idle entry) sees the short idle at once.
  auto v1 = MustCreate("V1", IdleTopology::Uniform(1, 16));
  for (int c = 0; c < 16; ++c) MakeBusySettled(*v1, c);
  ShortIdle(*v1, 2);
  EXPECT_TRUE(IdleMask(*v1).Test(2));
}

// ---------------------------------------------------------------------------
// S14: stacking race, V0 (the kit checks every interleaving; this is the
// spec's observation that V0 does stack).
// ---------------------------------------------------------------------------
TEST(IdleSelectScenarios, S14_StackingRaceV0) {
  auto st = Llc16("V0", {7});
  WakeTask a{.prev_cpu = 0}, b{.prev_cpu = 1};
  const int c1 = st->Select(a, {.target = 0}).cpu;
  const int c2 = st->Select(b, {.target = 1}).cpu;
  EXPECT_EQ(c1, 7);
  EXPECT_EQ(c2, 7) << "V0 stacks: ttwu_pending not yet set";
  // enqueue1 before probe2 -> the second waker sees c busy.
  WakeTask a2{.prev_cpu = 0}, b2{.prev_cpu = 1};
  const int d1 = st->Select(a2, {.target = 0}).cpu;
  st->SetWakePending(d1, true);
  const int d2 = st->Select(b2, {.target = 1}).cpu;
  EXPECT_EQ(d1, 7);
  EXPECT_NE(d2, 7);
  for (const char* v : {"V4g", "V4n"}) {
    auto scx = Llc16(v, {7});
    WakeTask x{.prev_cpu = 0}, y{.prev_cpu = 1};
    const Selection s1 = scx->Select(x, {.target = 0});
    const Selection s2 = scx->Select(y, {.target = 1});
    EXPECT_EQ(s1.cpu, 7);
    EXPECT_TRUE(s1.claimed);
    EXPECT_EQ(s2.cpu, -1) << v;
  }
}

// ---------------------------------------------------------------------------
// S15: claim bubble and the idle->idle refresh.
// ---------------------------------------------------------------------------
TEST(IdleSelectScenarios, S15_ClaimBubble) {
  for (bool refresh : {false, true}) {
    Options o;
    o.scx_idle_refresh = refresh;
    auto st = MustCreate("V4g", IdleTopology::Uniform(1, 8), o);
    for (int c = 0; c < 8; ++c) MakeBusy(*st, c);
    MakeIdle(*st, 3);
    WakeTask t{.prev_cpu = 0};
    Selection s = st->Select(t, {.target = 0});
    ASSERT_EQ(s.cpu, 3);
    ASSERT_TRUE(s.claimed);
    // Kicked but never dispatched: CPU 3 passes through its idle loop again.
    st->IdleRefresh(3);
    EXPECT_EQ(st->SelectorMask("cpu", 0).Test(3), refresh);
    t = {.prev_cpu = 0};
    EXPECT_EQ(st->Select(t, {.target = 0}).cpu, refresh ? 3 : -1);
  }
}

// ---------------------------------------------------------------------------
// S16: the lost-wakeup handshake of V4 users, on the library's own claim
// masks under the store-buffer model (kit: LostWakeupReachable).  Without
// either fence a lost wakeup is reachable; with both it is not (the kit's
// S16_HandshakeWithFences checks the latter for every claim-style selector).
// ---------------------------------------------------------------------------
TEST(IdleSelectScenarios, S16_LostWakeupNeedsBothFences) {
  namespace conformance = ::isolation::testing::idle_select_conformance;
  for (const char* v : {"V4g", "V4n"}) {
    SCOPED_TRACE(v);
    for (bool idle_fence : {false, true}) {
      for (bool waker_fence : {false, true}) {
        ISOLATION_ASSERT_OK_AND_ASSIGN(
            auto lost, conformance::LostWakeupReachable(v, idle_fence, waker_fence));
        EXPECT_EQ(lost, !(idle_fence && waker_fence))
            << "idle fence " << idle_fence << ", waker fence " << waker_fence;
      }
    }
  }
}

// ---------------------------------------------------------------------------
// S17: scx sync wakeup.
// ---------------------------------------------------------------------------
TEST(IdleSelectScenarios, S17_ScxSyncWakeup) {
  auto st = MustCreate("V4g", IdleTopology::Uniform(2, 8));
  for (int c = 0; c < 16; ++c) MakeBusy(*st, c);
  MakeIdle(*st, 12);
  // Waker CPU 2 busy with a non-empty local queue -> not the waker CPU.
  st->SetNrRunning(2, 3);
  WakeTask t{.prev_cpu = 9};
  Selection s = st->Select(t, {.target = 2, .waker_cpu = 2, .sync = true});
  EXPECT_NE(s.cpu, 2);
  EXPECT_EQ(s.cpu, 12);
  // Empty local queue (only the waker) -> the waker CPU, unclaimed.
  MakeIdle(*st, 12);
  st->SetNrRunning(2, 1);
  t = {.prev_cpu = 9};
  s = st->Select(t, {.target = 2, .waker_cpu = 2, .sync = true});
  EXPECT_EQ(s.cpu, 2);
  EXPECT_FALSE(s.claimed);
  EXPECT_TRUE(st->SelectorMask("cpu", 0).Test(12)) << "nothing claimed";
}

// ---------------------------------------------------------------------------
// S18: per-node order.
// ---------------------------------------------------------------------------
TEST(IdleSelectScenarios, S18_PerNodeOrder) {
  auto st = MustCreate("V4n", IdleTopology::Uniform(2, 8, 1, 2));
  EXPECT_EQ(st->SelectorMask("cpu", 1).nbits(), 16) << "one mask pair per node";
  for (int c = 0; c < 16; ++c) MakeBusy(*st, c);
  MakeIdle(*st, 13);
  WakeTask t{.prev_cpu = 2};
  Selection s = st->Select(t, {.target = 2, .node_restricted = true});
  EXPECT_EQ(s.cpu, -1) << "restricted to prev's node";
  t = {.prev_cpu = 2};
  s = st->Select(t, {.target = 2});
  EXPECT_EQ(s.cpu, 13);
  EXPECT_TRUE(s.claimed);
}

// V4 with smt_preference off: no whole-idle-core step, the idle sibling of
// prev comes first (step 4 before 5).
TEST(IdleSelectScenarios, V4SmtPreferenceOption) {
  for (bool pref : {true, false}) {
    SCOPED_TRACE(pref);
    Options o;
    o.smt_preference = pref;
    auto st = MustCreate("V4g", IdleTopology::Uniform(1, 2, 2), o);  // cores {0,1}, {2,3}
    for (int c = 0; c < 4; ++c) MakeBusy(*st, c);
    MakeIdle(*st, 1);  // prev's core half idle
    MakeIdle(*st, 2);  // core 1 fully idle
    MakeIdle(*st, 3);
    EXPECT_EQ(st->SelectorMask("smt", 0).Test(2), pref) << "smt mask kept only with the preference";
    WakeTask t{.prev_cpu = 0};
    const Selection s = st->Select(t, {.target = 0});
    ASSERT_TRUE(s.claimed);
    if (pref) {
      EXPECT_TRUE(s.cpu == 2 || s.cpu == 3) << s.cpu;
    } else {
      EXPECT_EQ(s.cpu, 1);
    }
  }
}

// A CPU running only SCHED_IDLE tasks counts as idle for the
// scan; the 2026 rule (<20260203184939.2138022-1-christian.loehle@arm.com>)
// stops that for SCHED_IDLE wakees (option).
TEST(IdleSelectScenarios, SchedIdleCpuAndWakeeRule) {
  for (bool rule : {false, true}) {
    Options o;
    o.sched_idle_wakee_rule = rule;
    auto st = MustCreate("V0", IdleTopology::Uniform(1, 8), o);
    for (int c = 0; c < 8; ++c) MakeBusySettled(*st, c);
    st->SetNrSchedIdle(5, 1);  // CPU 5 runs only a SCHED_IDLE task
    EXPECT_TRUE(st->SchedIdleCpu(5));
    WakeTask normal{.prev_cpu = 0};
    EXPECT_EQ(st->Select(normal, {.target = 0}).cpu, 5);
    WakeTask idle_wakee{.prev_cpu = 0, .sched_idle = true};
    EXPECT_EQ(st->Select(idle_wakee, {.target = 0}).cpu, rule ? 0 : 5);
  }
}

// ---------------------------------------------------------------------------
// V5: the overloaded mask (tick, test before write), the filter, Abel's rule.
// ---------------------------------------------------------------------------
TEST(IdleSelectScenarios, V5_OverloadedMaskUpkeep) {
  auto st = Llc16("V5", {});
  auto over = [&] { return st->SelectorMask("overloaded", 0); };
  EXPECT_TRUE(over().Empty());
  st->SetNrRunning(7, 3);
  const int64_t w0 = st->TotalSharedWrites();
  st->Tick(7);
  EXPECT_TRUE(over().Test(7)) << ">= 2 runnable non-SCHED_IDLE tasks";
  EXPECT_EQ(st->TotalSharedWrites(), w0 + 1);
  st->Tick(7);
  EXPECT_EQ(st->TotalSharedWrites(), w0 + 1) << "test before write (I12)";
  st->SetNrSchedIdle(7, 2);  // 3 runnable, 2 of them SCHED_IDLE
  st->Tick(7);
  EXPECT_FALSE(over().Test(7));
  ISOLATION_EXPECT_OK(st->Rebuild(CpuMask()));
  EXPECT_TRUE(over().Empty()) << "sd_init(): empty";
}

// CPU 7 was overloaded at its last tick, then drained and went idle: its
// bit is stale until its next tick.  Below the LLC size the filter hides it
// (V0 finds it); at a full budget Abel's rule turns the filter off; with the
// rule off the filter applies at any budget; idle-core mode ignores it.
TEST(IdleSelectScenarios, V5_FilterAndAbelsRule) {
  for (bool abel : {true, false}) {
    SCOPED_TRACE(abel);
    Options o;
    o.v5_only_when_budget_short = abel;
    auto st = Llc16("V5", {}, o);
    auto v0 = Llc16("V0", {});
    for (IdleState* s : {st.get(), v0.get()}) {
      s->SetNrRunning(7, 3);
      s->Tick(7);
      MakeIdle(*s, 7);  // no tick: the overloaded bit stays
    }
    ASSERT_TRUE(st->SelectorMask("overloaded", 0).Test(7));
    for (IdleState* s : {st.get(), v0.get()}) ISOLATION_ASSERT_OK(s->SetBudget(0, 8));
    WakeTask t{.prev_cpu = 0};
    Selection s = st->Select(t, {.target = 0});
    EXPECT_EQ(s.cpu, 0) << "budget 8 < 16: the filter hides CPU 7";
    EXPECT_EQ(s.probes, 8) << "1-6, 8, 9: 7 is not probed";
    t = {.prev_cpu = 0};
    EXPECT_EQ(v0->Select(t, {.target = 0}).cpu, 7);
    ISOLATION_ASSERT_OK(st->SetBudget(0, 16));
    t = {.prev_cpu = 0};
    s = st->Select(t, {.target = 0});
    EXPECT_EQ(s.cpu, abel ? 7 : 0) << "budget = LLC size: filtered only without Abel's rule";
  }
  // Idle-core mode ignores the filter: core 3 (CPUs 6, 7) overloaded at its
  // last ticks, now fully idle.
  auto smt = Smt16("V5");
  for (int c : {6, 7}) {
    smt->SetNrRunning(c, 2);
    smt->Tick(c);
  }
  MakeIdle(*smt, 6);
  MakeIdle(*smt, 7);
  ASSERT_TRUE(smt->llc(0).has_idle_cores);
  ISOLATION_ASSERT_OK(smt->SetBudget(0, 4));
  WakeTask t{.prev_cpu = 0};
  const Selection s = smt->Select(t, {.target = 0});
  EXPECT_TRUE(s.cpu == 6 || s.cpu == 7) << s.cpu;
}

// ---------------------------------------------------------------------------
// The registry.
// ---------------------------------------------------------------------------
TEST(IdleSelectRegistry, BuiltinsInOrderWithDescriptions) {
  const std::vector<std::string> want = {
      "V0",  "V1",  "V1-eager", "V1-tickstop",    "V1-unbounded", "V2",          "V3",
      "V4g", "V4n", "V5",       "V0-from-target", "V1-trusting",  "V0-norecheck"};
  std::vector<std::string> names = SelectorNames(/*include_negative_controls=*/true);
  ASSERT_GE(names.size(), want.size());
  names.resize(want.size());  // other tests of this binary may register more
  EXPECT_EQ(names, want);
  for (const SelectorEntry* e : SelectorRegistry().All()) {
    EXPECT_FALSE(e->description.empty()) << e->name;
    EXPECT_EQ(e->negative_control, e->name == "V1-trusting" || e->name == "V0-norecheck")
        << e->name;
  }
  std::vector<std::string> listed;
  for (const VariantInfo& row : ListVariants()) {
    EXPECT_EQ(row.mechanism, "idle_select");
    EXPECT_EQ(row.axis, "selector");
    EXPECT_FALSE(row.description.empty());
    listed.push_back(row.name);
  }
  listed.resize(want.size());
  EXPECT_EQ(listed, want);
}

TEST(IdleSelectRegistry, FindIsCaseInsensitiveWithTheV4Alias) {
  auto e = FindSelector("v1-EAGER");
  ISOLATION_ASSERT_OK(e);
  EXPECT_EQ((*e)->name, "V1-eager");
  e = FindSelector("V4");
  ISOLATION_ASSERT_OK(e);
  EXPECT_EQ((*e)->name, "V4g");
  Options o;
  o.variant = "v4";
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto st, IdleState::Create(IdleTopology::Uniform(1, 4), o));
  EXPECT_EQ(st->selector_name(), "V4g");
  const auto missing = FindSelector("V9");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("'V9'"), std::string::npos) << missing.status();
  EXPECT_NE(missing.status().message().find("V1-tickstop"), std::string::npos) << missing.status();
}

// Every built-in is registered as such, with the seeds' label and old
// spelling where it has one; the default rows are the correct built-ins.
TEST(IdleSelectRegistry, BuiltinsCarryOriginLabelAndAliases) {
  std::vector<std::string> defaults, others;
  for (const SelectorEntry* e : SelectorRegistry().All()) {
    if (e->is_builtin() && e->is_default_row()) defaults.push_back(e->name);
    if (e->is_builtin() && !e->is_default_row()) others.push_back(e->name);
    // A negative control is never a default row.
    if (e->negative_control) {
      EXPECT_FALSE(e->is_default_row()) << e->name;
    }
  }
  EXPECT_EQ(defaults, (std::vector<std::string>{"V0", "V1", "V1-eager", "V1-tickstop",
                                                "V1-unbounded", "V2", "V3", "V4g", "V4n", "V5"}));
  // The built-ins run only by name: the controls, and V0-from-target, a step
  // of kernel history rather than a row of the seeds' tables.
  for (const std::string& name : others) {
    ISOLATION_ASSERT_OK_AND_ASSIGN(const SelectorEntry* e, FindSelector(name));
    EXPECT_TRUE(e->negative_control || name == "V0-from-target") << name;
  }
  ISOLATION_ASSERT_OK_AND_ASSIGN(const SelectorEntry* v4, FindSelector("v4"));
  EXPECT_EQ(v4->name, "V4g");
  EXPECT_EQ(v4->row_label(), "V4");
  EXPECT_EQ(SelectorName("V1").str(), "V1");
}

// A selector registered from outside with one call is a selector like the
// built-ins: created by name, listed, checked by the kit.
class SecondIdleSibling final : public SisSelector {
 public:
  using SisSelector::SisSelector;
};

TEST(IdleSelectRegistry, OutsideRegistrationAppearsEverywhere) {
  ISOLATION_ASSERT_OK(
      RegisterSelector(SelectorEntryOf<SecondIdleSibling>("test-sis-copy", "a copy of V0 (test)")));
  const auto dup = RegisterSelector(SelectorEntryOf<SecondIdleSibling>("TEST-sis-copy", "again"));
  EXPECT_EQ(dup.code(), absl::StatusCode::kAlreadyExists);
  const std::vector<std::string> names = SelectorNames();
  EXPECT_NE(std::find(names.begin(), names.end(), "test-sis-copy"), names.end());
  bool listed = false;
  for (const VariantInfo& row : ListVariants()) listed = listed || row.name == "test-sis-copy";
  EXPECT_TRUE(listed);
  auto st = MustCreate("test-sis-copy", IdleTopology::Uniform(1, 8));
  for (int c = 0; c < 8; ++c) MakeBusySettled(*st, c);
  MakeIdle(*st, 6);
  WakeTask t{.prev_cpu = 0};
  EXPECT_EQ(st->Select(t, {.target = 0}).cpu, 6);
  EXPECT_TRUE(
      ::isolation::testing::idle_select_conformance::Run("I3_Affinity_I6_Totality", "test-sis-copy")
          .empty());
}

}  // namespace
}  // namespace isolation::idle_select
