// SPDX-License-Identifier: GPL-2.0-or-later
// Spec scenarios S1-S18 of shared/spec/idle_select.md, driven directly through
// the entry points (no driver).

#include <array>
#include <atomic>
#include <vector>

#include "gtest/gtest.h"
#include "isolation/idle_select/idle_select.h"
#include "test_util.h"

namespace isolation::idle_select {
namespace {

using testing::MakeBusy;
using testing::MakeBusySettled;
using testing::MakeIdle;
using testing::MustCreate;
using testing::OptionsFor;

// ---------------------------------------------------------------------------
// S1: the SIS_UTIL golden table (spec 2.5).
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
      EXPECT_EQ(SisUtilBudget(sum_util, r.llc), r.want[i]) << "llc " << r.llc << " util " << pcts[i] << "%";
    }
    // >= 86 %: 0 all the way to 100 %.
    for (int p = 86; p <= 100; ++p) EXPECT_EQ(SisUtilBudget(int64_t{r.llc} * 1024 * p / 100, r.llc), 0);
  }
  // "first 0 at x" column.
  const std::vector<std::pair<int, int>> first_zero = {{4, 759}, {8, 820}, {16, 848}, {32, 862},
                                                       {64, 869}, {112, 872}, {128, 873}};
  for (auto [llc, x] : first_zero) {
    EXPECT_EQ(SisUtilBudget(int64_t{x} * llc, llc), 0) << llc;
    EXPECT_GT(SisUtilBudget(int64_t{x - 1} * llc, llc), 0) << llc;
  }
  EXPECT_EQ(SisUtilBudget(27 * 16, 16), 16);
  EXPECT_EQ(SisUtilBudget(28 * 16, 16), 15);

  // Stored only on change: 100 identical updates -> 1 store.
  auto st = MustCreate(IdleTopology::Uniform(1, 16), OptionsFor(Variant::kV0));
  for (int i = 0; i < 100; ++i) EXPECT_TRUE(st->UpdateIdleCpuScan(0, 16 * 1024 * 50 / 100).ok());
  EXPECT_EQ(st->llc(0).budget_stores.load(), 1);
  EXPECT_EQ(st->llc(0).nr_idle_scan.load(), SisUtilBudget(16 * 1024 * 50 / 100, 16));
}

// One LLC of 16 CPUs, all busy except `idle`.
std::unique_ptr<IdleState> Llc16(Variant v, std::vector<int> idle) {
  auto st = MustCreate(IdleTopology::Uniform(1, 16), OptionsFor(v));
  for (int c = 0; c < 16; ++c) MakeBusySettled(*st, c);
  for (int c : idle) MakeIdle(*st, c);
  return st;
}

// ---------------------------------------------------------------------------
// S2 / S3: scan order and budget cut.
// ---------------------------------------------------------------------------
TEST(IdleSelectScenarios, S2_ScanOrder) {
  auto st = Llc16(Variant::kV0, {3, 12});
  EXPECT_TRUE(st->SetBudget(0, 16).ok());
  auto sel = MakeSelector(*st);
  WakeTask t{.prev_cpu = 9};
  Selection s = sel->Select(t, {.target = 9});
  EXPECT_EQ(s.cpu, 12);
  EXPECT_EQ(s.probes, 3);  // 10, 11, 12
  t = {.prev_cpu = 13};
  s = sel->Select(t, {.target = 13});
  EXPECT_EQ(s.cpu, 3);
  EXPECT_EQ(s.probes, 6);  // 14, 15, 0, 1, 2, 3

  auto only9 = Llc16(Variant::kV0, {9});
  auto sel9 = MakeSelector(*only9);
  t = {.prev_cpu = 9};
  s = sel9->Select(t, {.target = 9});
  EXPECT_EQ(s.cpu, 9);
  EXPECT_TRUE(s.idle_found());
  EXPECT_EQ(s.probes, 0);
}

TEST(IdleSelectScenarios, S3_BudgetCut) {
  auto st = Llc16(Variant::kV0, {3, 12});
  EXPECT_TRUE(st->SetBudget(0, 2).ok());
  auto sel = MakeSelector(*st);
  WakeTask t{.prev_cpu = 0};
  Selection s = sel->Select(t, {.target = 0});
  EXPECT_EQ(s.cpu, 0);
  EXPECT_EQ(s.outcome, Outcome::kFallback);
  EXPECT_EQ(s.probes, 2);  // 1, 2
}

// 8 cores x 2 threads, one LLC, all busy.
std::unique_ptr<IdleState> Smt16(Variant v) {
  auto st = MustCreate(IdleTopology::Uniform(1, 8, 2), OptionsFor(v));
  for (int c = 0; c < 16; ++c) MakeBusySettled(*st, c);
  return st;
}

TEST(IdleSelectScenarios, S4_BudgetZeroWithHint) {
  auto st = Smt16(Variant::kV0);
  MakeIdle(*st, 10);
  MakeIdle(*st, 11);
  st->llc(0).has_idle_cores.store(1);
  EXPECT_TRUE(st->SetBudget(0, 0).ok());
  auto sel = MakeSelector(*st);
  WakeTask t{.prev_cpu = 0};
  Selection s = sel->Select(t, {.target = 0});
  EXPECT_EQ(s.cpu, 0);
  EXPECT_EQ(s.outcome, Outcome::kFallback);
  EXPECT_EQ(s.probes, 0);
  EXPECT_EQ(st->llc(0).has_idle_cores.load(), 1) << "budget-0 return must not clear the hint (I9)";
}

TEST(IdleSelectScenarios, S5_IdleCoreMode) {
  auto st = Smt16(Variant::kV0);
  MakeIdle(*st, 10);  // core 5 fully idle
  MakeIdle(*st, 11);
  MakeIdle(*st, 4);   // core 2 half idle
  EXPECT_EQ(st->llc(0).has_idle_cores.load(), 1) << "__update_idle_core sets the hint";
  EXPECT_TRUE(st->SetBudget(0, 1).ok());
  auto sel = MakeSelector(*st);
  WakeTask t{.prev_cpu = 0};
  Selection s = sel->Select(t, {.target = 0});
  EXPECT_TRUE(s.cpu == 10 || s.cpu == 11) << s.cpu;
  EXPECT_TRUE(s.idle_found());
  // No fully idle core: the remembered half-idle sibling, hint cleared.
  MakeBusySettled(*st, 10);
  MakeBusySettled(*st, 11);
  st->llc(0).has_idle_cores.store(1);
  t = {.prev_cpu = 0};
  s = sel->Select(t, {.target = 0});
  EXPECT_EQ(s.cpu, 4);
  EXPECT_EQ(st->llc(0).has_idle_cores.load(), 0);
}

TEST(IdleSelectScenarios, S6_IdleSiblingOfPrev) {
  auto st = Smt16(Variant::kV0);
  MakeIdle(*st, 7);  // sibling of prev 6
  st->llc(0).has_idle_cores.store(0);
  EXPECT_TRUE(st->SetBudget(0, 0).ok());  // so only select_idle_smt can find it
  auto sel = MakeSelector(*st);
  WakeTask t{.prev_cpu = 6};
  Selection s = sel->Select(t, {.target = 0});
  EXPECT_EQ(s.cpu, 7);
  EXPECT_EQ(s.probes, 1);

  // The sibling is domain-isolated: skipped.
  CpuMask iso(16);
  iso.Set(7);
  EXPECT_TRUE(st->Rebuild(iso).ok());
  t = {.prev_cpu = 6};
  s = sel->Select(t, {.target = 0});
  EXPECT_NE(s.cpu, 7);
  EXPECT_EQ(s.cpu, 0);
}

// ---------------------------------------------------------------------------
// S7: isolation (isolcpus=domain,8-15 / isolated cpuset partition 8-15).
// ---------------------------------------------------------------------------
TEST(IdleSelectScenarios, S7_IsolationCfsVariants) {
  for (Variant v : AllVariants()) {
    if (IsScxVariant(v)) continue;
    SCOPED_TRACE(std::string(VariantName(v)));
    CpuMask iso = CpuMask::Range(16, 8, 15);
    auto topo = IdleTopology::FromIds(std::vector<int>(16, 0), [] {
      std::vector<int> c(16);
      for (int i = 0; i < 16; ++i) c[static_cast<size_t>(i)] = i;
      return c;
    }(), std::vector<int>(16, 0), CpuMask(), iso);
    ASSERT_TRUE(topo.ok()) << topo.status();
    auto st = MustCreate(*topo, OptionsFor(v));
    EXPECT_EQ(st->llc(0).span, CpuMask::Range(16, 0, 7));
    for (int c = 0; c < 8; ++c) MakeBusySettled(*st, c);
    const int64_t writes_before = st->TotalSharedWrites();
    for (int c = 8; c < 16; ++c) {
      MakeBusy(*st, c);
      st->Tick(c);
      MakeIdle(*st, c);
      st->TickStop(c);
    }
    EXPECT_EQ(st->TotalSharedWrites(), writes_before) << "isolated CPUs wrote a shared line (I13)";
    EXPECT_FALSE(st->llc(0).idle_cpus.Snapshot().Intersects(iso));
    EXPECT_FALSE(st->llc(0).overloaded.Snapshot().Intersects(iso));
    auto sel = MakeSelector(*st);
    CpuMask all = CpuMask::Full(16);
    for (int prev : {0, 5, 9, 14}) {
      WakeTask t{.prev_cpu = prev, .affinity = &all};
      Selection s = sel->Select(t, {.target = 3});
      EXPECT_EQ(s.cpu, 3) << "prev " << prev;
    }
    WakeTask t{.prev_cpu = 12, .affinity = &all};
    EXPECT_EQ(sel->Select(t, {.target = 12}).cpu, 12);
    EXPECT_EQ(st->CheckSubsetInvariant(), "");
  }
}

TEST(IdleSelectScenarios, S7_IsolationScx) {
  CpuMask iso = CpuMask::Range(16, 8, 15);
  for (Variant v : {Variant::kV4Global, Variant::kV4Node}) {
    SCOPED_TRACE(std::string(VariantName(v)));
    // Boot-time isolcpus=domain: refused, as scx_enable() does.
    auto boot = IdleTopology::FromIds(std::vector<int>(16, 0), std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9,
                                                                                10, 11, 12, 13, 14, 15},
                                      std::vector<int>(16, 0), CpuMask(), iso);
    ASSERT_TRUE(boot.ok());
    auto refused = IdleState::Create(*boot, OptionsFor(v));
    EXPECT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition);
    // Cpuset partition: 8-15 stay in the masks; only affinity keeps tasks away.
    auto part = IdleTopology::FromIds(std::vector<int>(16, 0), std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9,
                                                                                10, 11, 12, 13, 14, 15},
                                      std::vector<int>(16, 0), iso, CpuMask());
    ASSERT_TRUE(part.ok());
    auto st = MustCreate(*part, OptionsFor(v));
    for (int c = 0; c < 8; ++c) MakeBusy(*st, c);
    EXPECT_TRUE(iso.IsSubsetOf(st->scx(0).cpu.Snapshot()));
    auto sel = MakeSelector(*st);
    CpuMask outside = CpuMask::Range(16, 0, 7);  // effective affinity outside the partition
    WakeTask t{.prev_cpu = 3, .affinity = &outside};
    Selection s = sel->Select(t, {.target = 3});
    EXPECT_EQ(s.cpu, -1);
    CpuMask all = CpuMask::Full(16);
    t = {.prev_cpu = 3, .affinity = &all};
    s = sel->Select(t, {.target = 3});
    EXPECT_GE(s.cpu, 8) << "without the affinity, V4 would use the partition";
  }
}

// ---------------------------------------------------------------------------
// S8-S10: V1 staleness.
// ---------------------------------------------------------------------------
TEST(IdleSelectScenarios, S8_V1Staleness) {
  auto st = Llc16(Variant::kV1, {4});
  EXPECT_TRUE(st->llc(0).idle_cpus.Test(4));
  MakeBusy(*st, 4);  // a task starts at t = 0.3 ms
  EXPECT_TRUE(st->llc(0).idle_cpus.Test(4)) << "V1 clears only at the tick";
  auto sel = MakeSelector(*st);
  WakeTask t{.prev_cpu = 0};
  Selection s = sel->Select(t, {.target = 0});
  EXPECT_EQ(s.cpu, 0);
  EXPECT_EQ(s.probes, 1);
  EXPECT_EQ(s.stale_hits, 1);
  st->Tick(4);
  EXPECT_FALSE(st->llc(0).idle_cpus.Test(4));

  auto eager = Llc16(Variant::kV1Eager, {4});
  MakeBusy(*eager, 4);
  EXPECT_FALSE(eager->llc(0).idle_cpus.Test(4)) << "V1-eager clears on idle exit";
}

TEST(IdleSelectScenarios, S9_V1TicklessBusyCpu) {
  for (Variant v : {Variant::kV1, Variant::kV1Eager, Variant::kV4Global}) {
    SCOPED_TRACE(std::string(VariantName(v)));
    auto st = Llc16(v, {5});
    MakeBusy(*st, 5);  // nohz_full: busy with the tick stopped -> no Tick(5)
    for (int c = 0; c < 16; ++c) {
      if (c != 5) st->Tick(c);
    }
    auto sel = MakeSelector(*st);
    int stale = 0;
    for (int i = 0; i < 10; ++i) {
      WakeTask t{.prev_cpu = 0};
      Selection s = sel->Select(t, {.target = 0});
      EXPECT_NE(s.cpu, 5);
      stale += s.stale_hits;
    }
    if (v == Variant::kV1) {
      EXPECT_TRUE(st->llc(0).idle_cpus.Test(5));
      EXPECT_EQ(stale, 10) << "every wakeup probes the stale CPU 5";
    } else {
      EXPECT_EQ(stale, 0);
    }
  }
}

TEST(IdleSelectScenarios, S10_V1RebuildStaleness) {
  for (bool fix : {false, true}) {
    Options o = OptionsFor(Variant::kV1);
    o.v1_reset_state_on_rebuild = fix;
    auto st = MustCreate(IdleTopology::Uniform(1, 16), o);
    MakeBusySettled(*st, 6);
    EXPECT_FALSE(st->llc(0).idle_cpus.Test(6));
    EXPECT_TRUE(st->Rebuild(CpuMask(16)).ok());
    EXPECT_TRUE(st->llc(0).idle_cpus.Test(6)) << "rebuild re-initialises the mask to the span";
    for (int i = 0; i < 5; ++i) st->Tick(6);
    EXPECT_EQ(st->llc(0).idle_cpus.Test(6), !fix) << (fix ? "fix: the tick clears it"
                                                           : "last_idle_state 0 keeps the stale bit");
    MakeIdle(*st, 6);
    MakeBusySettled(*st, 6);
    EXPECT_FALSE(st->llc(0).idle_cpus.Test(6)) << "idle then busy again repairs it";
  }
}

// ---------------------------------------------------------------------------
// S13: tick-stop gating hides short-idle CPUs; V2 finds them in pass 2.
// ---------------------------------------------------------------------------
TEST(IdleSelectScenarios, S13_TickStopGating) {
  // V1-tickstop state: CPU 2 idles briefly (tick not stopped) -> not in mask.
  auto st = Llc16(Variant::kV1TickStop, {});
  MakeIdle(*st, 2);
  EXPECT_FALSE(st->llc(0).idle_cpus.Test(2));
  auto v1 = MakeSelector(*st, Variant::kV1TickStop);
  auto v2 = MakeSelector(*st, Variant::kV2);
  WakeTask t{.prev_cpu = 0};
  EXPECT_EQ(v1->Select(t, {.target = 0}).cpu, 0) << "invisible to the mask scan";
  t = {.prev_cpu = 0};
  Selection s = v2->Select(t, {.target = 0});
  EXPECT_EQ(s.cpu, 2) << "V2 pass 2 scans the rest of the span";
  st->TickStop(2);
  EXPECT_TRUE(st->llc(0).idle_cpus.Test(2));
  t = {.prev_cpu = 0};
  EXPECT_EQ(v1->Select(t, {.target = 0}).cpu, 2);
}

// ---------------------------------------------------------------------------
// S14: stacking race V0 vs V4.
// ---------------------------------------------------------------------------
TEST(IdleSelectScenarios, S14_StackingRace) {
  // V0: probe1, probe2, enqueue1, enqueue2 -> both on c.
  {
    auto st = Llc16(Variant::kV0, {7});
    auto sel = MakeSelector(*st);
    WakeTask a{.prev_cpu = 0}, b{.prev_cpu = 1};
    const int c1 = sel->Select(a, {.target = 0}).cpu;
    const int c2 = sel->Select(b, {.target = 1}).cpu;
    EXPECT_EQ(c1, 7);
    EXPECT_EQ(c2, 7) << "V0 stacks: ttwu_pending not yet set";
    // enqueue1 before probe2 -> the second waker sees c busy.
    WakeTask a2{.prev_cpu = 0}, b2{.prev_cpu = 1};
    const int d1 = sel->Select(a2, {.target = 0}).cpu;
    st->SetWakePending(d1, true);
    const int d2 = sel->Select(b2, {.target = 1}).cpu;
    EXPECT_EQ(d1, 7);
    EXPECT_NE(d2, 7);
  }
  // V4: in every order exactly one claim succeeds.
  for (Variant v : {Variant::kV4Global, Variant::kV4Node}) {
    auto st = Llc16(v, {7});
    auto sel = MakeSelector(*st);
    CpuMask not_prev = CpuMask::Full(16);
    WakeTask a{.prev_cpu = 0}, b{.prev_cpu = 1};
    Selection s1 = sel->Select(a, {.target = 0});
    Selection s2 = sel->Select(b, {.target = 1});
    EXPECT_EQ((s1.claimed ? 1 : 0) + (s2.claimed ? 1 : 0), 1);
    EXPECT_EQ(s1.cpu, 7);
    EXPECT_EQ(s2.cpu, -1);
  }
}

// ---------------------------------------------------------------------------
// S15: claim bubble and the idle->idle refresh.
// ---------------------------------------------------------------------------
TEST(IdleSelectScenarios, S15_ClaimBubble) {
  for (bool refresh : {false, true}) {
    Options o = OptionsFor(Variant::kV4Global);
    o.scx_idle_refresh = refresh;
    auto st = MustCreate(IdleTopology::Uniform(1, 8), o);
    for (int c = 0; c < 8; ++c) MakeBusy(*st, c);
    MakeIdle(*st, 3);
    auto sel = MakeSelector(*st);
    WakeTask t{.prev_cpu = 0};
    Selection s = sel->Select(t, {.target = 0});
    ASSERT_EQ(s.cpu, 3);
    ASSERT_TRUE(s.claimed);
    // Kicked but never dispatched: CPU 3 passes through its idle loop again.
    st->IdleRefresh(3);
    EXPECT_EQ(st->scx(0).cpu.Test(3), refresh);
    t = {.prev_cpu = 0};
    EXPECT_EQ(sel->Select(t, {.target = 0}).cpu, refresh ? 3 : -1);
  }
}

// ---------------------------------------------------------------------------
// S16: lost-wakeup handshake (model check of the protocol of spec 3.7).
// The idle side publishes its bit then reads the queue; the waker enqueues
// then reads the bit.  We enumerate every interleaving under a store-buffer
// (TSO) model: without a full fence a load may complete before the same
// side's store drains.  Lost wakeup = both loads see the old value.
// ---------------------------------------------------------------------------
bool LostWakeupReachable(bool fences) {
  // Events per side: S (store issued to buffer), D (drained), L (load).
  // With a fence, L waits for D.  Enumerate orders of {S0,D0,L0,S1,D1,L1}
  // with S before D on each side.
  std::array<int, 6> ev = {0, 1, 2, 3, 4, 5};  // 0=S0 1=D0 2=L0 3=S1 4=D1 5=L1
  std::sort(ev.begin(), ev.end());
  do {
    std::array<int, 6> pos{};
    for (int i = 0; i < 6; ++i) pos[static_cast<size_t>(ev[static_cast<size_t>(i)])] = i;
    if (pos[0] > pos[1] || pos[3] > pos[4]) continue;  // store issued before drained
    if (pos[0] > pos[2] || pos[3] > pos[5]) continue;  // program order: store then load
    if (fences && (pos[1] > pos[2] || pos[4] > pos[5])) continue;  // fence: drain first
    // Load sees the other side's value iff it drained before the load.
    const bool idle_sees_task = pos[4] < pos[2];
    const bool waker_sees_idle = pos[1] < pos[5];
    if (!idle_sees_task && !waker_sees_idle) return true;
  } while (std::next_permutation(ev.begin(), ev.end()));
  return false;
}

TEST(IdleSelectScenarios, S16_LostWakeupHandshakeModel) {
  EXPECT_TRUE(LostWakeupReachable(false)) << "without fences a lost wakeup must be reachable";
  EXPECT_FALSE(LostWakeupReachable(true));
}

// ---------------------------------------------------------------------------
// S17: scx sync wakeup.
// ---------------------------------------------------------------------------
TEST(IdleSelectScenarios, S17_ScxSyncWakeup) {
  auto st = MustCreate(IdleTopology::Uniform(2, 8), OptionsFor(Variant::kV4Global));
  for (int c = 0; c < 16; ++c) MakeBusy(*st, c);
  MakeIdle(*st, 12);
  auto sel = MakeSelector(*st);
  // Waker CPU 2 busy with a non-empty local queue -> not the waker CPU.
  st->cpu_state(2).nr_running.store(3);
  WakeTask t{.prev_cpu = 9};
  Selection s = sel->Select(t, {.target = 2, .waker_cpu = 2, .sync = true});
  EXPECT_NE(s.cpu, 2);
  EXPECT_EQ(s.cpu, 12);
  // Empty local queue (only the waker) -> the waker CPU, unclaimed.
  MakeIdle(*st, 12);
  st->cpu_state(2).nr_running.store(1);
  t = {.prev_cpu = 9};
  s = sel->Select(t, {.target = 2, .waker_cpu = 2, .sync = true});
  EXPECT_EQ(s.cpu, 2);
  EXPECT_FALSE(s.claimed);
  EXPECT_TRUE(st->scx(0).cpu.Test(12)) << "nothing claimed";
}

// ---------------------------------------------------------------------------
// S18: per-node order.
// ---------------------------------------------------------------------------
TEST(IdleSelectScenarios, S18_PerNodeOrder) {
  auto st = MustCreate(IdleTopology::Uniform(2, 8, 1, 2), OptionsFor(Variant::kV4Node));
  ASSERT_EQ(st->num_scx_scopes(), 2);
  for (int c = 0; c < 16; ++c) MakeBusy(*st, c);
  MakeIdle(*st, 13);
  auto sel = MakeSelector(*st);
  WakeTask t{.prev_cpu = 2};
  Selection s = sel->Select(t, {.target = 2, .node_restricted = true});
  EXPECT_EQ(s.cpu, -1) << "restricted to prev's node";
  t = {.prev_cpu = 2};
  s = sel->Select(t, {.target = 2});
  EXPECT_EQ(s.cpu, 13);
  EXPECT_TRUE(s.claimed);
}

// Spec 2.1: a CPU running only SCHED_IDLE tasks counts as idle for the
// scan; the 2026 rule (<20260203184939.2138022-1-christian.loehle@arm.com>)
// stops that for SCHED_IDLE wakees (option).
TEST(IdleSelectScenarios, SchedIdleCpuAndWakeeRule) {
  for (bool rule : {false, true}) {
    Options o = OptionsFor(Variant::kV0);
    o.sched_idle_wakee_rule = rule;
    auto st = MustCreate(IdleTopology::Uniform(1, 8), o);
    for (int c = 0; c < 8; ++c) MakeBusySettled(*st, c);
    st->cpu_state(5).nr_sched_idle.store(1);  // CPU 5 runs only a SCHED_IDLE task
    EXPECT_TRUE(st->SchedIdleCpu(5));
    auto sel = MakeSelector(*st);
    WakeTask normal{.prev_cpu = 0};
    EXPECT_EQ(sel->Select(normal, {.target = 0}).cpu, 5);
    WakeTask idle_wakee{.prev_cpu = 0, .sched_idle = true};
    EXPECT_EQ(sel->Select(idle_wakee, {.target = 0}).cpu, rule ? 0 : 5);
  }
}

}  // namespace
}  // namespace isolation::idle_select
