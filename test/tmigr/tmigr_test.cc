// SPDX-License-Identifier: GPL-2.0-or-later
// Tests of the timer-migration hierarchy: spec tmigr.md scenarios S* and
// invariants I*, the bug-switch regressions, and forced races.

#include "isolation/tmigr/tmigr.h"

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "isolation/core/interleave.h"
#include "isolation/core/isolation_config.h"
#include "isolation/tmigr/timers.h"
#include "isolation/core/topology.h"

namespace isolation::tmigr {
namespace {

// A backend that records remote expiries and serves per-CPU next global
// expiries from a table (an expired CPU's entry becomes KTIME_MAX).
class RecordingBackend : public TimerBackend {
 public:
  explicit RecordingBackend(int ncpus) : next_global(static_cast<size_t>(ncpus), kNanosMax) {}
  void ExpireRemote(int owner, int runner, Nanos now) override {
    expired.push_back({owner, runner});
    if (next_global[static_cast<size_t>(owner)] <= now) next_global[static_cast<size_t>(owner)] = kNanosMax;
  }
  void LockBases(int) override {}
  void UnlockBases(int) override {}
  Nanos NextGlobalLocked(int cpu, Nanos) override { return next_global[static_cast<size_t>(cpu)]; }
  bool BaseIsIdle(int) override { return false; }
  void KickCpu(int cpu) override { kicked.push_back(cpu); }
  std::vector<Nanos> next_global;
  std::vector<std::pair<int, int>> expired;  // (owner, runner)
  std::vector<int> kicked;
};

struct Fixture {
  std::unique_ptr<RecordingBackend> backend;
  std::unique_ptr<TimerMigration> tm;
};

Fixture Make(std::vector<int> node_of, Options opt = {}) {
  Fixture f;
  f.backend = std::make_unique<RecordingBackend>(static_cast<int>(node_of.size()));
  auto tm = TimerMigration::Create(std::move(node_of), opt, f.backend.get());
  EXPECT_TRUE(tm.ok()) << tm.status();
  f.tm = std::move(*tm);
  return f;
}

Fixture MakeUp(int ncpus, Options opt = {}, int nnodes = 1) {
  std::vector<int> node_of(static_cast<size_t>(ncpus));
  const int per = (ncpus + nnodes - 1) / nnodes;
  for (int c = 0; c < ncpus; ++c) node_of[static_cast<size_t>(c)] = c / per;
  Fixture f = Make(node_of, opt);
  for (int c = 0; c < ncpus; ++c) EXPECT_TRUE(f.tm->BringUpCpu(c).ok());
  return f;
}

Options WithCpg(int cpg) {
  Options o;
  o.children_per_group = cpg;
  return o;
}

std::string Violations(const TimerMigration& tm) { return absl::StrJoin(tm.CheckInvariants(), "\n"); }

GroupState StateOf(const Group* g) { return g->state(); }

// ---------------------------------------------------------------------------
// S1 Sizing: the golden table of spec §2.7 and built trees.
// ---------------------------------------------------------------------------
TEST(TmigrSizing, S1_GoldenTable) {
  struct Row { int cpus, nodes, per_node, cpulvl, nodelvl, levels, cross; };
  const Row rows[] = {
      {8, 1, 8, 1, 0, 1, 1},     {9, 1, 9, 2, 0, 2, 2},     {64, 1, 64, 2, 0, 2, 2},
      {65, 1, 65, 3, 0, 3, 3},   {128, 1, 128, 3, 0, 3, 3}, {512, 1, 512, 3, 0, 3, 3},
      {513, 1, 513, 4, 0, 4, 4}, {48, 2, 24, 2, 1, 3, 2},   {128, 2, 64, 2, 1, 3, 2},
      {128, 4, 32, 2, 1, 3, 2},  {256, 16, 16, 2, 2, 4, 2},
  };
  for (const Row& r : rows) {
    const Sizing s = ComputeSizing(r.cpus, r.nodes);
    EXPECT_EQ(s.cpus_per_node, r.per_node) << r.cpus << "/" << r.nodes;
    EXPECT_EQ(s.cpu_levels, r.cpulvl) << r.cpus << "/" << r.nodes;
    EXPECT_EQ(s.node_levels, r.nodelvl) << r.cpus << "/" << r.nodes;
    EXPECT_EQ(s.levels, r.levels) << r.cpus << "/" << r.nodes;
    EXPECT_EQ(s.crossnode_level, r.cross) << r.cpus << "/" << r.nodes;
  }
  EXPECT_EQ(ComputeSizing(1, 1).levels, 0);
}

TEST(TmigrSizing, S1_Trees) {
  Fixture f48 = MakeUp(48, {}, 2);
  EXPECT_EQ(f48.tm->groups_at(0).size(), 6u);
  EXPECT_EQ(f48.tm->groups_at(1).size(), 2u);
  EXPECT_EQ(f48.tm->groups_at(2).size(), 1u);
  EXPECT_EQ(f48.tm->root()->level, 2);
  for (const Group* g : f48.tm->groups_at(1)) EXPECT_EQ(g->num_children, 3);
  EXPECT_EQ(Violations(*f48.tm), "");

  Fixture f8 = MakeUp(8);
  EXPECT_EQ(f8.tm->num_groups(), 1);
  EXPECT_EQ(f8.tm->root(), f8.tm->groups_at(0)[0]);

  Fixture f9 = MakeUp(9);
  EXPECT_EQ(f9.tm->root()->level, 1);
  EXPECT_EQ(f9.tm->root()->num_children, 2);
  EXPECT_EQ(Violations(*f9.tm), "");
}

TEST(TmigrSizing, RejectsBadChildrenPerGroup) {
  NullBackend b;
  for (int cpg : {0, 1, 3, 6, 16}) {
    auto tm = TimerMigration::Create(std::vector<int>(4, 0), WithCpg(cpg), &b);
    EXPECT_FALSE(tm.ok()) << cpg;
  }
}

// ---------------------------------------------------------------------------
// S2 Growing the top; S3 NUMA mismatch (5eb579dfd46b).
// ---------------------------------------------------------------------------
TEST(TmigrSetup, S2_GrowingTop) {
  Fixture f = Make(std::vector<int>(9, 0));
  for (int c = 0; c < 8; ++c) ASSERT_TRUE(f.tm->BringUpCpu(c).ok());
  for (int c = 1; c < 8; ++c) f.tm->Deactivate(c, kNanosMax);
  const Group* old_root = f.tm->root();
  ASSERT_TRUE(f.tm->PrepareCpu(8).ok());
  const Group* root = f.tm->root();
  ASSERT_NE(root, old_root);
  EXPECT_EQ(old_root->parent.load(), root);
  EXPECT_EQ(old_root->groupmask, 0x01);
  const Group* grp01 = f.tm->cpu_state(8).tmgroup;
  EXPECT_EQ(grp01->groupmask, 0x02);
  const GroupState s = StateOf(root);
  EXPECT_EQ(s.active, 0x01);
  EXPECT_EQ(s.migrator, 0x01);
  EXPECT_EQ(Violations(*f.tm), "");
}

TEST(TmigrSetup, S3_NumaMismatch) {
  std::vector<int> node_of(128);
  for (int c = 0; c < 128; ++c) node_of[static_cast<size_t>(c)] = c < 64 ? 0 : 1;
  Fixture f = Make(node_of);
  ASSERT_EQ(f.tm->sizing().levels, 3);
  ASSERT_EQ(f.tm->sizing().crossnode_level, 2);
  ASSERT_TRUE(f.tm->BringUpCpu(0).ok());
  ASSERT_TRUE(f.tm->BringUpCpu(64).ok());
  ASSERT_EQ(f.tm->groups_at(1).size(), 2u);
  for (const Group* g : f.tm->groups_at(1)) EXPECT_EQ(g->num_children, 1) << g->Name();
  const Group* g0 = f.tm->cpu_state(0).tmgroup;
  const Group* g64 = f.tm->cpu_state(64).tmgroup;
  EXPECT_NE(g0->parent.load(), g64->parent.load());
  EXPECT_EQ(g0->parent.load()->numa_node, 0);
  EXPECT_EQ(g64->parent.load()->numa_node, 1);
  EXPECT_EQ(f.tm->root()->level, 2);
  // CPU 0 is active: its activity reached the new root.
  EXPECT_NE(StateOf(f.tm->root()).migrator, kMigratorNone);
  EXPECT_EQ(Violations(*f.tm), "");
}

// ---------------------------------------------------------------------------
// S4-S8: activation, hand-over, idle entry, last CPU, idle puller.
// ---------------------------------------------------------------------------
TEST(TmigrOps, S4_FirstActivation) {
  Fixture f = MakeUp(16);
  for (int c = 0; c < 16; ++c) f.tm->Deactivate(c, kNanosMax);
  EXPECT_EQ(StateOf(f.tm->root()).migrator, kMigratorNone);
  f.tm->Activate(3);
  const Group* g0 = f.tm->cpu_state(3).tmgroup;
  EXPECT_EQ(StateOf(g0).migrator, 0x08);
  EXPECT_EQ(StateOf(f.tm->root()).migrator, g0->groupmask);
  const uint16_t root_seq = StateOf(f.tm->root()).seq;
  f.tm->Activate(5);
  EXPECT_EQ(StateOf(g0).active, 0x28);
  EXPECT_EQ(StateOf(g0).migrator, 0x08);
  EXPECT_EQ(StateOf(f.tm->root()).seq, root_seq);  // walk stopped at level 0
  EXPECT_EQ(Violations(*f.tm), "");
}

TEST(TmigrOps, S5_HandOver) {
  Fixture f = MakeUp(16);
  for (int c = 0; c < 16; ++c) f.tm->Deactivate(c, kNanosMax);
  f.tm->Activate(0);
  f.tm->Activate(2);
  f.tm->Activate(5);
  const Group* g0 = f.tm->cpu_state(0).tmgroup;
  const uint32_t root_word = f.tm->root()->migr_state.load();
  EXPECT_EQ(StateOf(g0).migrator, 0x01);
  f.tm->Deactivate(0, kNanosMax);
  EXPECT_EQ(StateOf(g0).migrator, 0x04);
  EXPECT_EQ(f.tm->root()->migr_state.load(), root_word);  // parent untouched
  f.tm->Deactivate(2, kNanosMax);
  EXPECT_EQ(StateOf(g0).migrator, 0x20);
  f.tm->Deactivate(5, kNanosMax);
  EXPECT_EQ(StateOf(g0).migrator, kMigratorNone);
  EXPECT_EQ(StateOf(f.tm->root()).migrator, kMigratorNone);
  EXPECT_EQ(Violations(*f.tm), "");
}

TEST(TmigrOps, S6_LocalTimerFirst) {
  Fixture f = MakeUp(16);
  EXPECT_EQ(f.tm->Deactivate(4, kNanosMax), kNanosMax);
  const Group* g0 = f.tm->cpu_state(4).tmgroup;
  EXPECT_EQ(g0->events.size(), 0);
  EXPECT_TRUE(f.tm->cpu_state(4).cpuevt.ignore.load());
}

// S7 then S8 (and I12 return contract).
TEST(TmigrOps, S7_LastCpuIdles_S8_IdlePuller) {
  Fixture f = MakeUp(16);
  for (int c = 2; c < 16; ++c) {
    if (c != 9) f.tm->Deactivate(c, kNanosMax);
  }
  f.backend->next_global[9] = 50;
  EXPECT_EQ(f.tm->Deactivate(9, 50), kNanosMax);  // I12: other CPUs take care
  f.backend->next_global[1] = 100;
  EXPECT_EQ(f.tm->Deactivate(1, 100), kNanosMax);
  EXPECT_EQ(f.tm->Deactivate(0, kNanosMax), 50);  // last CPU gets the global first expiry
  EXPECT_EQ(f.tm->cpu_state(0).wakeup.load(), 50);
  const Group* root = f.tm->root();
  EXPECT_EQ(StateOf(root).migrator, kMigratorNone);
  ASSERT_EQ(root->events.size(), 2);
  EXPECT_EQ(root->events.at(0)->expires, 50);
  EXPECT_EQ(root->events.at(0)->cpu, 9);
  EXPECT_EQ(root->events.at(1)->expires, 100);
  EXPECT_EQ(root->events.at(1)->cpu, 1);
  EXPECT_EQ(Violations(*f.tm), "");
  // S8: at 50 CPU 0's tick sees now >= wakeup and pulls CPU 9's timers.
  EXPECT_FALSE(f.tm->RequiresHandleRemote(0, 49));
  EXPECT_TRUE(f.tm->RequiresHandleRemote(0, 50));
  f.tm->HandleRemote(0, 50);
  ASSERT_EQ(f.backend->expired.size(), 1u);
  EXPECT_EQ(f.backend->expired[0], std::make_pair(9, 0));
  EXPECT_EQ(f.tm->cpu_state(0).wakeup.load(), 100);
  EXPECT_EQ(Violations(*f.tm), "");
  // I12: activation resets wakeup.
  f.tm->Activate(0);
  EXPECT_EQ(f.tm->cpu_state(0).wakeup.load(), kNanosMax);
}

// Spec 3.0/3.8: after a remote expiry the owner's next global expiry is
// fetched with fetch_next_timer_interrupt_remote(), which hands it over only if
// it precedes the owner's next local timer.  Here CPU 1's next global (50 us)
// is behind its local timer (30 us): the hierarchy must not carry it; CPU 1
// wakes for its local timer and re-hands the global one, which CPU 0 then pulls.
TEST(TmigrTimers, RemoteExpiryHandsNoGlobalBehindAnEarlierLocal) {
  auto ts_or = TimerSystem::Create(std::vector<int>(2, 0), Options{}, TimerSystem::Config{1000});
  ASSERT_TRUE(ts_or.ok());
  TimerSystem& ts = **ts_or;
  ASSERT_TRUE(ts.BootAll().ok());
  const int64_t g1 = ts.AddTimer(1, 10'000, /*global=*/true, 0);
  const int64_t l1 = ts.AddTimer(1, 30'000, /*global=*/false, 0);
  const int64_t g2 = ts.AddTimer(1, 50'000, /*global=*/true, 0);
  ASSERT_TRUE(ts.EnterIdle(1, 0));
  ts.Tick(0, 10'000);  // CPU 0, the active migrator, pulls CPU 1's first global timer
  EXPECT_EQ(ts.timers()[static_cast<size_t>(g1)].run_cpu, 0);
  const Event& evt = ts.tmigr().cpu_state(1).cpuevt;
  EXPECT_TRUE(evt.ignore.load() || evt.expires == kNanosMax) << evt.expires;
  EXPECT_EQ(ts.CheckInvariants(10'000), std::vector<std::string>{});
  ASSERT_EQ(ts.ProgrammedWakeup(1), 30'000);
  ts.IdleWakeup(1, 30'000);  // runs the local timer, re-hands 50 us
  EXPECT_EQ(ts.timers()[static_cast<size_t>(l1)].run_cpu, 1);
  EXPECT_EQ(ts.tmigr().cpu_state(1).cpuevt.expires, 50'000);
  ts.Tick(0, 50'000);
  EXPECT_EQ(ts.timers()[static_cast<size_t>(g2)].run_cpu, 0);
  EXPECT_EQ(ts.CheckInvariants(50'000), std::vector<std::string>{});
}

// Design-comment drawings: children-per-group 2, CPUs 0-3, GRP0:0 {0,1}, GRP0:1 {2,3}.
TEST(TmigrOps, S9_ActivePull) {
  Fixture f = MakeUp(4, WithCpg(2));
  ASSERT_EQ(f.tm->root()->level, 1);
  f.tm->Deactivate(3, kNanosMax);
  f.backend->next_global[0] = 100;
  f.backend->next_global[1] = 100;
  f.tm->Deactivate(0, 100);
  f.tm->Deactivate(1, 100);
  EXPECT_FALSE(f.tm->RequiresHandleRemote(2, 99));
  EXPECT_TRUE(f.tm->RequiresHandleRemote(2, 100));
  f.tm->HandleRemote(2, 100);
  ASSERT_EQ(f.backend->expired.size(), 2u);
  EXPECT_EQ(f.backend->expired[0], std::make_pair(0, 2));
  EXPECT_EQ(f.backend->expired[1], std::make_pair(1, 2));
  for (int l = 0; l < 2; ++l) {
    for (const Group* g : f.tm->groups_at(l)) {
      for (int i = 0; i < g->events.size(); ++i) {
        const Event* e = g->events.at(i);
        EXPECT_TRUE(e->ignore.load() || e->expires == kNanosMax) << g->Name();
      }
    }
  }
  EXPECT_EQ(Violations(*f.tm), "");
}

// S10 (61f7fdf8fd00): 3 levels, CPUs 0 and 1 with equal expiries in a remote branch.
void RunS10(bool bug, std::vector<std::pair<int, int>>* expired) {
  Options o = WithCpg(2);
  o.bugs.no_cpu_refresh = bug;
  Fixture f = MakeUp(8, o);
  ASSERT_EQ(f.tm->root()->level, 2);
  for (int c : {2, 3, 5, 6, 7}) f.tm->Deactivate(c, kNanosMax);
  f.backend->next_global[0] = 100;
  f.backend->next_global[1] = 100;
  f.tm->Deactivate(0, 100);
  f.tm->Deactivate(1, 100);
  ASSERT_TRUE(f.tm->RequiresHandleRemote(4, 100));
  f.tm->HandleRemote(4, 100);
  *expired = f.backend->expired;
}

TEST(TmigrRegression, S10_SameExpiryOtherCpu) {
  std::vector<std::pair<int, int>> expired;
  RunS10(false, &expired);
  ASSERT_EQ(expired.size(), 2u);
  EXPECT_EQ(expired[1], std::make_pair(1, 4));
}

TEST(TmigrRegression, S10_BugSwitchMissesCpu1) {
  std::vector<std::pair<int, int>> expired;
  RunS10(true, &expired);
  EXPECT_EQ(expired.size(), 1u);  // CPU 1's timer is late: not run in this pass
}

// S11 ghost timer (f55acb1e44f3).
Nanos RunS11(bool bug) {
  Options o;
  o.bugs.ghost_timer = bug;
  Fixture f = MakeUp(2, o);
  f.tm->Deactivate(1, 100);
  EXPECT_EQ(f.tm->Deactivate(0, kNanosMax), 100);
  f.tm->Activate(1);  // CPU 1 wakes and handles its timer itself
  EXPECT_TRUE(f.tm->RequiresHandleRemote(0, 100));
  f.tm->HandleRemote(0, 100);
  // Back in the idle path: no new timer, the CPU re-arms what NewTimer returns.
  return f.tm->NewTimer(0, kNanosMax);
}

TEST(TmigrRegression, S11_GhostTimer) { EXPECT_EQ(RunS11(false), kNanosMax); }
TEST(TmigrRegression, S11_BugSwitchRearmsForever) { EXPECT_EQ(RunS11(true), 100); }

// S14 quick check (8ca1836769d7).
TEST(TmigrOps, S14_QuickCheck) {
  for (bool bug : {false, true}) {
    Options o;
    o.bugs.quick_check_top_only = bug;
    Fixture f = MakeUp(16, o);
    for (int c = 1; c < 16; ++c) {
      if (c == 8) continue;
      f.tm->Deactivate(c, c == 1 ? 30 : kNanosMax);
    }
    f.tm->Deactivate(8, 70);  // GRP0:1 idle: its event (70) reaches the root
    // CPU 0 alone: level-0 next_expiry 30 < top 70.
    EXPECT_EQ(f.tm->QuickCheck(0, kNanosMax), bug ? 70 : 30) << bug;
    EXPECT_EQ(f.tm->QuickCheck(0, 20), 20);
    f.tm->Activate(2);  // two active children at level 0
    EXPECT_EQ(f.tm->QuickCheck(0, 20), kNanosMax);
  }
}

// S15 single-level early return (7a96a84bfbee / 4b6f4c5a67c0).
TEST(TmigrRegression, S15_SingleLevelEarlyReturn) {
  for (bool bug : {false, true}) {
    Options o;
    o.bugs.early_return = bug;
    Fixture f = MakeUp(2, o);
    f.tm->Deactivate(1, 40);
    EXPECT_EQ(f.tm->Deactivate(0, kNanosMax), bug ? kNanosMax : 40) << bug;
  }
}

// S16 offline of the last active CPU with events pending.
TEST(TmigrHotplug, S16_OfflineLastActive) {
  Fixture f = MakeUp(16);
  for (int c = 1; c < 16; ++c) f.tm->Deactivate(c, c == 9 ? 50 : kNanosMax);
  f.tm->TakeDownCpu(0);
  ASSERT_EQ(f.backend->kicked.size(), 1u);
  const int woken = f.backend->kicked[0];
  EXPECT_NE(woken, 0);
  f.tm->Activate(woken);  // the no-op work item makes it active
  EXPECT_NE(StateOf(f.tm->root()).migrator, kMigratorNone);
  EXPECT_EQ(StateOf(f.tm->cpu_state(0).tmgroup).active & f.tm->cpu_state(0).groupmask, 0);
  EXPECT_FALSE(f.tm->IsAvailable(0));
  EXPECT_EQ(Violations(*f.tm), "");
  // Back online: available again and active.
  ASSERT_TRUE(f.tm->BringUpCpu(0).ok());
  EXPECT_TRUE(f.tm->IsAvailable(0));
  EXPECT_EQ(Violations(*f.tm), "");
}

// ---------------------------------------------------------------------------
// Forced races (Interleaver).
// ---------------------------------------------------------------------------
// S12 race R1: seq protects the CAS in GRP1:0.
std::string RunS12(bool no_seq) {
  Options o = WithCpg(2);
  o.bugs.no_seq_increment = no_seq;
  Fixture f = MakeUp(4, o);
  f.tm->Deactivate(1, kNanosMax);
  f.tm->Deactivate(3, kNanosMax);
  f.tm->Deactivate(0, kNanosMax);  // GRP1:0 migrator moves to GRP0:1
  f.tm->Activate(0);
  const Group* root = f.tm->root();
  EXPECT_EQ(StateOf(root).active, 0x03);
  EXPECT_EQ(StateOf(root).migrator, 0x02);
  Interleaver il;
  il.Add("cpu0_idle", [&] { f.tm->Deactivate(0, kNanosMax); });
  il.Add("cpu1_active", [&] { f.tm->Activate(1); });
  const absl::Status s = il.Run({{"cpu0_idle", "tmigr.inactive_up.before_cas.l1"},
                                 {"cpu1_active", ""},
                                 {"cpu0_idle", ""}});
  EXPECT_TRUE(s.ok()) << s;
  return Violations(*f.tm);
}

TEST(TmigrRace, S12_RaceR1) { EXPECT_EQ(RunS12(false), ""); }
TEST(TmigrRace, S12_NoSeqIncrementLosesActiveChild) {
  EXPECT_NE(RunS12(true).find("I3 GRP0:0"), std::string::npos);
}

// S13 race R2: idle CPU 2's last walk vs idle CPU 0 queuing TIMER0.
struct R2Result { Nanos cpu2 = 0, cpu0 = 0; std::string violations; };
R2Result RunS13(bool lockless, const std::vector<Interleaver::Slice>& script) {
  Options o = WithCpg(2);
  o.bugs.lockless_update_reads = lockless;
  Fixture f = MakeUp(4, o);
  for (int c : {0, 1, 3}) f.tm->Deactivate(c, kNanosMax);
  R2Result r;
  Interleaver il;
  il.Add("cpu2_idle", [&] { r.cpu2 = f.tm->Deactivate(2, kNanosMax); });
  il.Add("cpu0_timer", [&] { r.cpu0 = f.tm->NewTimer(0, 100); });
  const absl::Status s = il.Run(script);
  EXPECT_TRUE(s.ok()) << s;
  r.violations = Violations(*f.tm);
  return r;
}

TEST(TmigrRace, S13_RaceR2EveryInterleaving) {
  const std::vector<std::vector<Interleaver::Slice>> scripts = {
      {{"cpu2_idle", ""}, {"cpu0_timer", ""}},
      {{"cpu0_timer", ""}, {"cpu2_idle", ""}},
      {{"cpu2_idle", "tmigr.inactive_up.before_cas.l1"}, {"cpu0_timer", ""}, {"cpu2_idle", ""}},
      {{"cpu2_idle", "tmigr.inactive_up.after_cas.l1"}, {"cpu0_timer", ""}, {"cpu2_idle", ""}},
      {{"cpu2_idle", "tmigr.update_events.enter.l1"}, {"cpu0_timer", ""}, {"cpu2_idle", ""}},
      {{"cpu0_timer", "tmigr.update_events.enter.l1"}, {"cpu2_idle", ""}, {"cpu0_timer", ""}},
      {{"cpu0_timer", "tmigr.update_events.enter.l1"}, {"cpu2_idle", "tmigr.inactive_up.after_cas.l1"},
       {"cpu0_timer", ""}, {"cpu2_idle", ""}},
  };
  for (size_t i = 0; i < scripts.size(); ++i) {
    const R2Result r = RunS13(false, scripts[i]);
    EXPECT_TRUE(r.cpu2 <= 100 || r.cpu0 <= 100) << "script " << i;
    EXPECT_EQ(r.violations, "") << "script " << i;
  }
}

TEST(TmigrRace, S13_LocklessReadsLoseTheTimer) {
  const R2Result r = RunS13(true, {{"cpu0_timer", "tmigr.update_events.lockless_read.l1"},
                                   {"cpu2_idle", ""},
                                   {"cpu0_timer", ""}});
  EXPECT_EQ(r.cpu2, kNanosMax);
  EXPECT_EQ(r.cpu0, kNanosMax);  // nobody wakes up for TIMER0
}

// tmigr_handle_remote_up() re-checks the migrator before every pop (`goto
// again`): CPU 0, the idle puller of an all-idle hierarchy, expires CPU 1's
// timers; meanwhile CPU 1 activates and becomes migrator of GRP0:0 and of the
// root.  CPU 0 must stop there and leave CPU 3's expired event to CPU 1, the
// new migrator, which pulls it at its own tick.
TEST(TmigrRace, HandleRemoteStopsWhenChildBecameMigrator) {
  Fixture f = MakeUp(4, WithCpg(2));
  ASSERT_EQ(f.tm->root()->level, 1);
  f.tm->Deactivate(2, kNanosMax);
  f.backend->next_global[3] = 100;
  f.tm->Deactivate(3, 100);
  f.backend->next_global[1] = 100;
  f.tm->Deactivate(1, 100);
  ASSERT_EQ(f.tm->Deactivate(0, kNanosMax), 100);
  Interleaver il;
  il.Add("cpu0_remote", [&] { f.tm->HandleRemote(0, 100); });
  il.Add("cpu1_active", [&] { f.tm->Activate(1); });
  ASSERT_TRUE(il.Run({{"cpu0_remote", "tmigr.handle_remote_cpu.after_expire"},
                      {"cpu1_active", ""},
                      {"cpu0_remote", ""}})
                  .ok());
  ASSERT_EQ(f.backend->expired.size(), 1u);
  EXPECT_EQ(f.backend->expired[0], std::make_pair(1, 0));
  EXPECT_EQ(f.tm->cpu_state(0).wakeup.load(), kNanosMax);
  EXPECT_EQ(Violations(*f.tm), "");
  // The new migrator takes over: CPU 3's timer is not lost.
  ASSERT_TRUE(f.tm->RequiresHandleRemote(1, 100));
  f.tm->HandleRemote(1, 100);
  ASSERT_EQ(f.backend->expired.size(), 2u);
  EXPECT_EQ(f.backend->expired[1], std::make_pair(3, 1));
  EXPECT_EQ(Violations(*f.tm), "");
}

// I2 single puller per event: two CPUs service NONE groups at once.  With
// children-per-group 2, GRP0:0 {0,1} and GRP0:1 {2,3}, the whole hierarchy
// idle and CPU 3 holding the only global timer (100): CPU 0 went idle last
// and wakes at 100 for the root's first expiry; CPU 2's softirq runs at 100
// too (say for a local timer) and, its level-0 group being NONE, walks it.
// CPU 2 pops CPU 3's event from GRP0:1 while CPU 0 pops GRP0:1's group event
// (cpu 3) from the root: both reach tmigr_handle_remote_cpu(3).  The group
// locks and `remote` must let exactly one of them run CPU 3's timers, in
// every interleaving, and leave no expired event queued nor a stale wake-up.
// Fails if the `remote` check is dropped (CPU 3 expired by both CPUs), if a
// pop were not atomic under the group lock, or if the second servicer
// dropped the event for good (I5 / expired events left queued).
TEST(TmigrRace, I2_NoneGroupServicedByTwoCpusExpiresOnce) {
  const std::vector<std::vector<Interleaver::Slice>> scripts = {
      {{"cpu0_softirq", ""}, {"cpu2_softirq", ""}},
      {{"cpu2_softirq", ""}, {"cpu0_softirq", ""}},
      // CPU 2 runs CPU 3's timers; CPU 0 pops the root's event for CPU 3 meanwhile.
      {{"cpu2_softirq", "tmigr.handle_remote_cpu.after_expire"}, {"cpu0_softirq", ""}, {"cpu2_softirq", ""}},
      // CPU 0 runs CPU 3's timers; CPU 2 pops CPU 3's event from GRP0:1 meanwhile.
      {{"cpu0_softirq", "tmigr.handle_remote_cpu.after_expire"}, {"cpu2_softirq", ""}, {"cpu0_softirq", ""}},
  };
  for (size_t i = 0; i < scripts.size(); ++i) {
    SCOPED_TRACE(absl::StrCat("script ", i));
    Fixture f = MakeUp(4, WithCpg(2));
    ASSERT_EQ(f.tm->root()->level, 1);
    f.backend->next_global[3] = 100;
    ASSERT_EQ(f.tm->Deactivate(3, 100), kNanosMax);
    ASSERT_EQ(f.tm->Deactivate(1, kNanosMax), kNanosMax);
    ASSERT_EQ(f.tm->Deactivate(2, kNanosMax), kNanosMax);
    ASSERT_EQ(f.tm->Deactivate(0, kNanosMax), 100);  // last CPU: wakes for CPU 3's timer
    ASSERT_EQ(StateOf(f.tm->root()).migrator, kMigratorNone);
    ASSERT_EQ(StateOf(f.tm->groups_at(0)[1]).migrator, kMigratorNone);
    ASSERT_TRUE(f.tm->RequiresHandleRemote(0, 100));
    Interleaver il;
    il.Add("cpu0_softirq", [&] { f.tm->HandleRemote(0, 100); });
    il.Add("cpu2_softirq", [&] { f.tm->HandleRemote(2, 100); });
    const absl::Status s = il.Run(scripts[i]);
    ASSERT_TRUE(s.ok()) << s;
    // Exactly one CPU ran CPU 3's timers, once.
    EXPECT_EQ(f.backend->expired.size(), 1u) << absl::StrJoin(il.log(), " ");
    for (const auto& [owner, runner] : f.backend->expired) EXPECT_EQ(owner, 3) << "runner " << runner;
    EXPECT_EQ(f.tm->counters().remote_expiries.load(), 1);
    EXPECT_FALSE(f.tm->cpu_state(3).remote.load());
    // Nothing expired is left queued, and nobody keeps a wake-up for it.
    for (int l = 0; l < 2; ++l) {
      for (const Group* g : f.tm->groups_at(l)) {
        for (int e = 0; e < g->events.size(); ++e) {
          const Event* evt = g->events.at(e);
          EXPECT_TRUE(evt->ignore.load() || evt->expires > 100) << g->Name() << " " << evt->expires;
        }
        EXPECT_GT(g->next_expiry.load(), 100) << g->Name();
      }
    }
    for (int c = 0; c < 4; ++c) EXPECT_EQ(f.tm->cpu_state(c).wakeup.load(), kNanosMax) << "cpu " << c;
    EXPECT_EQ(Violations(*f.tm), "");
    // A later pass by either CPU at the same time expires nothing more.
    f.tm->HandleRemote(0, 100);
    f.tm->HandleRemote(2, 100);
    EXPECT_EQ(f.backend->expired.size(), 1u);
  }
}

// S17 hotplug prepare creating a new root vs the old root's last CPU idling.
TEST(TmigrRace, S17_HotplugVsIdle) {
  const std::vector<std::vector<Interleaver::Slice>> scripts = {
      {{"prepare8", "tmigr.setup.before_old_root_read"}, {"cpu0_idle", ""}, {"prepare8", ""}},
      {{"cpu0_idle", "tmigr.inactive_up.before_cas.l0"}, {"prepare8", ""}, {"cpu0_idle", ""}},
      {{"cpu0_idle", "tmigr.inactive_up.after_cas.l0"}, {"prepare8", ""}, {"cpu0_idle", ""}},
      {{"prepare8", ""}, {"cpu0_idle", ""}},
  };
  for (size_t i = 0; i < scripts.size(); ++i) {
    Fixture f = Make(std::vector<int>(9, 0));
    for (int c = 0; c < 8; ++c) ASSERT_TRUE(f.tm->BringUpCpu(c).ok());
    for (int c = 1; c < 8; ++c) f.tm->Deactivate(c, kNanosMax);
    Interleaver il;
    il.Add("prepare8", [&] { EXPECT_TRUE(f.tm->PrepareCpu(8).ok()); });
    il.Add("cpu0_idle", [&] { f.tm->Deactivate(0, kNanosMax); });
    ASSERT_TRUE(il.Run(scripts[i]).ok()) << i;
    const GroupState root = StateOf(f.tm->root());
    EXPECT_NE(root.migrator, 0) << i;
    EXPECT_EQ(root.active, 0) << i;  // no active bit for an idle subtree
    EXPECT_EQ(Violations(*f.tm), "") << i;
  }
}

// ---------------------------------------------------------------------------
// TM-ISOL: S18-S22, I8, I9.
// ---------------------------------------------------------------------------
Fixture MakeIsol(int ncpus, const std::string& cmdline, bool init = true, Options o = {}) {
  o.variant = Variant::kIsolation;
  Fixture f = MakeUp(ncpus, o);
  auto topo = Topology::FromSynthetic(absl::StrCat("pu:", ncpus));
  EXPECT_TRUE(topo.ok());
  auto iso = IsolationConfig::FromBootParams(*topo, cmdline);
  EXPECT_TRUE(iso.ok()) << iso.status();
  f.tm->SetIsolation(*iso);
  if (init) f.tm->InitIsolation();
  return f;
}

TEST(TmigrIsolation, S18_BootIsolation) {
  Fixture before = MakeIsol(8, "isolcpus=domain,1-3", /*init=*/false);
  EXPECT_EQ(before.tm->AvailableMask().ToString(), "0-7");  // S18a
  Fixture f = MakeIsol(8, "isolcpus=domain,1-3");
  EXPECT_EQ(f.tm->AvailableMask().ToString(), "0,4-7");
  EXPECT_EQ(f.tm->Deactivate(2, 77), 77);  // handles its own timer
  EXPECT_EQ(f.tm->NewTimer(2, 66), 66);
  EXPECT_EQ(f.tm->QuickCheck(1, 55), 55);
  EXPECT_FALSE(f.tm->RequiresHandleRemote(1, 1000));
  for (const Group* g : f.tm->groups_at(0)) {
    for (int c : {1, 2, 3}) EXPECT_EQ(StateOf(g).active & f.tm->cpu_state(c).groupmask & (g == f.tm->cpu_state(c).tmgroup ? 0xFF : 0), 0);
  }
  EXPECT_EQ(Violations(*f.tm), "");
}

TEST(TmigrIsolation, S19_NohzFullStaysAvailable) {
  Fixture f = MakeIsol(8, "isolcpus=domain,1-3 nohz_full=1-3");
  EXPECT_EQ(f.tm->AvailableMask().ToString(), "0-7");
  for (int c = 3; c < 8; ++c) f.tm->Deactivate(c, kNanosMax);
  f.tm->Deactivate(1, kNanosMax);
  f.backend->next_global[2] = 100;
  f.tm->Deactivate(2, 100);  // tick stopped: idle in the hierarchy
  EXPECT_TRUE(f.tm->RequiresHandleRemote(0, 100));
  f.tm->HandleRemote(0, 100);
  ASSERT_EQ(f.backend->expired.size(), 1u);
  EXPECT_EQ(f.backend->expired[0], std::make_pair(2, 0));
}

TEST(TmigrIsolation, S20_TickCpuStays) {
  Fixture f = MakeIsol(8, "nohz_full=2-7");
  ASSERT_TRUE(f.tm->SetCpusetIsolated(CpuMask::Range(8, 0, 1)).ok());
  EXPECT_TRUE(f.tm->IsAvailable(0));   // tick CPU
  EXPECT_FALSE(f.tm->IsAvailable(1));  // excluded
  EXPECT_EQ(Violations(*f.tm), "");
}

TEST(TmigrIsolation, S21_CpusetChange) {
  for (bool v15 : {false, true}) {
    Options o;
    o.v15_exclude_order = v15;
    Fixture f = MakeIsol(8, "", true, o);
    ASSERT_TRUE(f.tm->SetCpusetIsolated(CpuMask::Range(8, 2, 3)).ok());
    EXPECT_EQ(f.tm->AvailableMask().ToString(), "0-1,4-7");
    ASSERT_TRUE(f.tm->SetCpusetIsolated(CpuMask::Range(8, 3, 4)).ok());
    EXPECT_EQ(f.tm->AvailableMask().ToString(), "0-2,5-7");
    EXPECT_EQ(Violations(*f.tm), "") << v15;
  }
}

TEST(TmigrIsolation, S21_BootIsolatedStayOutOnCpusetChange) {
  Fixture f = MakeIsol(8, "isolcpus=domain,1-3");
  ASSERT_TRUE(f.tm->SetCpusetIsolated(CpuMask::Range(8, 5, 5)).ok());
  EXPECT_EQ(f.tm->AvailableMask().ToString(), "0,4,6-7");
  EXPECT_EQ(Violations(*f.tm), "");
}

TEST(TmigrIsolation, S22_OfflineOnlineIsolated) {
  Fixture f = MakeIsol(8, "isolcpus=domain,1-3");
  f.tm->TakeDownCpu(2);
  ASSERT_TRUE(f.tm->BringUpCpu(2).ok());
  EXPECT_FALSE(f.tm->IsAvailable(2));
  EXPECT_EQ(Violations(*f.tm), "");
}

TEST(TmigrIsolation, V69IgnoresIsolation) {
  Fixture f = MakeUp(8);
  auto topo = Topology::FromSynthetic("pu:8");
  ASSERT_TRUE(topo.ok());
  auto iso = IsolationConfig::FromBootParams(*topo, "isolcpus=domain,1-3");
  ASSERT_TRUE(iso.ok());
  f.tm->SetIsolation(*iso);
  f.tm->InitIsolation();
  EXPECT_EQ(f.tm->AvailableMask().ToString(), "0-7");
}

// S23 (HK-ENFORCE) lives in IsolationConfig (core); check the outcome here.
TEST(TmigrIsolation, S23_HousekeepingRuleLeavesAnAvailableCpu) {
  Fixture f = MakeIsol(8, "nohz_full=1-7 isolcpus=domain,0");
  EXPECT_FALSE(f.tm->AvailableMask().Empty());
  EXPECT_EQ(Violations(*f.tm), "");
}

// ---------------------------------------------------------------------------
// I11 lock order and random schedules over every variant (I1-I12).
// ---------------------------------------------------------------------------
class TmigrVariantTest : public ::testing::TestWithParam<std::tuple<Variant, int>> {};

std::string DumpTimers(const TimerSystem& ts, Nanos now) {
  std::string out = absl::StrCat("now=", now, "\n");
  for (int c = 0; c < ts.num_cpus(); ++c) {
    absl::StrAppend(&out, "cpu", c, " idle=", ts.BaseIdle(c), " avail=", ts.tmigr().IsAvailable(c),
                    " tmidle=", ts.tmigr().cpu_state(c).idle.load(), " prog=", ts.ProgrammedWakeup(c),
                    " local=", ts.NextLocal(c), " global=", ts.NextGlobal(c), "\n");
  }
  return out;
}

// Seeded random schedule over TimerSystem: idle/exit, timers, ticks, wake-ups,
// hotplug and (TM-ISOL) cpuset churn; invariants after every step; at the end
// no timer that expired more than 2 jiffies before is still pending and no
// timer ran twice.
void RandomSchedule(Variant variant, int cpg, uint64_t seed, int steps) {
  const int ncpus = 20;
  Options o;
  o.variant = variant;
  o.children_per_group = cpg;
  o.record_lock_order = true;
  std::vector<int> node_of(ncpus);
  for (int c = 0; c < ncpus; ++c) node_of[static_cast<size_t>(c)] = c < 10 ? 0 : 1;
  auto ts_or = TimerSystem::Create(node_of, o, TimerSystem::Config{1000});
  ASSERT_TRUE(ts_or.ok());
  TimerSystem& ts = **ts_or;
  auto topo = Topology::FromSynthetic("package:2 pu:10");
  ASSERT_TRUE(topo.ok());
  auto iso = IsolationConfig::FromBootParams(*topo, "isolcpus=domain,3-5,13 nohz_full=5");
  ASSERT_TRUE(iso.ok());
  ts.tmigr().SetIsolation(*iso);
  ASSERT_TRUE(ts.BootAll().ok());
  ts.tmigr().InitIsolation();
  std::mt19937_64 rng(seed);
  std::vector<bool> online(ncpus, true);
  std::vector<Nanos> next_tick(ncpus, 1000);
  Nanos now = 0;
  for (int step = 0; step < steps; ++step) {
    now += static_cast<Nanos>(rng() % 700);
    // Due wake-ups and ticks first (the kernel would have taken them).
    for (int c = 0; c < ncpus; ++c) {
      if (!online[static_cast<size_t>(c)]) continue;
      if (ts.BaseIdle(c)) {
        int guard = 0;
        while (ts.BaseIdle(c) && ts.ProgrammedWakeup(c) <= now && guard++ < 100) ts.IdleWakeup(c, ts.ProgrammedWakeup(c));
        ASSERT_LT(guard, 100) << "endless re-arm on cpu " << c;
        next_tick[static_cast<size_t>(c)] = (now / 1000 + 1) * 1000;
      } else {
        while (next_tick[static_cast<size_t>(c)] <= now) {
          ts.Tick(c, next_tick[static_cast<size_t>(c)]);
          next_tick[static_cast<size_t>(c)] += 1000;
        }
      }
    }
    const int cpu = static_cast<int>(rng() % ncpus);
    const int op = static_cast<int>(rng() % 100);
    if (!online[static_cast<size_t>(cpu)]) {
      if (op < 10) {
        ASSERT_TRUE(ts.Online(cpu, now).ok());
        online[static_cast<size_t>(cpu)] = true;
        next_tick[static_cast<size_t>(cpu)] = (now / 1000 + 1) * 1000;
      }
    } else if (op < 35) {
      ts.EnterIdle(cpu, now);
    } else if (op < 60) {
      ts.ExitIdle(cpu, now);
      next_tick[static_cast<size_t>(cpu)] = (now / 1000 + 1) * 1000;
    } else if (op < 85) {
      ts.AddTimer(cpu, now + 500 + static_cast<Nanos>(rng() % 20000), rng() % 4 != 0, now);
    } else if (op < 90 && !ts.BaseIdle(cpu)) {
      const Nanos q = ts.tmigr().QuickCheck(cpu, kNanosMax);
      (void)q;
    } else if (op < 93) {
      int count = 0;
      for (bool b : online) count += b;
      int target = -1;
      for (int t = 0; t < ncpus; ++t) {
        if (t != cpu && online[static_cast<size_t>(t)]) { target = t; break; }
      }
      if (count > 2 && target >= 0) {
        ASSERT_TRUE(ts.Offline(cpu, target, now).ok());
        online[static_cast<size_t>(cpu)] = false;
      }
    } else if (op < 95 && variant == Variant::kIsolation) {
      CpuMask m(ncpus);
      for (int c = 0; c < ncpus; ++c) {
        if (rng() % 5 == 0) m.Set(c);
      }
      m.Clear(0);  // keep one housekeeping CPU
      ASSERT_TRUE(ts.tmigr().SetCpusetIsolated(m).ok());
    }
    const std::vector<std::string> v = ts.CheckInvariants(now);
    ASSERT_TRUE(v.empty()) << "seed " << seed << " step " << step << " op " << op << " cpu " << cpu << "\n"
                           << absl::StrJoin(v, "\n") << "\n" << ts.tmigr().DebugString() << DumpTimers(ts, now);
  }
  // No timer left behind: everything that expired two jiffies ago has run.
  EXPECT_EQ(ts.CountLost(now - 2000), 0) << "seed " << seed;
  for (const TimerRecord& t : ts.timers()) EXPECT_LE(t.runs.load(), 1);
  EXPECT_EQ(ts.runtime_violations(), 0);
  EXPECT_EQ(ts.tmigr().counters().lock_order_violations.load(), 0);
}

TEST_P(TmigrVariantTest, I1_to_I12_RandomSchedules) {
  const auto [variant, cpg] = GetParam();
  for (uint64_t seed = 1; seed <= 12; ++seed) {
    RandomSchedule(variant, cpg, seed, 1500);
    if (HasFatalFailure()) return;
  }
}

INSTANTIATE_TEST_SUITE_P(AllVariants, TmigrVariantTest,
                         ::testing::Combine(::testing::Values(Variant::kV69, Variant::kIsolation),
                                            ::testing::Values(2, 8)),
                         [](const auto& info) {
                           return absl::StrCat(std::get<0>(info.param) == Variant::kV69 ? "v69" : "isolation",
                                               "_cpg", std::get<1>(info.param));
                         });

// Negative control for the I5 checker: the early-return bug of S15 leaves a
// global timer with nobody waking up for it, and the checker must say so.
TEST(TmigrInvariantChecker, I5_DetectsEarlyReturnBug) {
  for (bool bug : {false, true}) {
    Options o;
    o.bugs.early_return = bug;
    auto ts = TimerSystem::Create(std::vector<int>(2, 0), o, TimerSystem::Config{1000});
    ASSERT_TRUE(ts.ok());
    ASSERT_TRUE((*ts)->BootAll().ok());
    (*ts)->AddTimer(1, 50'000, /*global=*/true, 0);
    ASSERT_TRUE((*ts)->EnterIdle(1, 0));
    ASSERT_TRUE((*ts)->EnterIdle(0, 0));
    const std::string v = absl::StrJoin((*ts)->CheckInvariants(0), "\n");
    if (bug) {
      EXPECT_NE(v.find("I5 cpu1"), std::string::npos) << v;
    } else {
      EXPECT_EQ(v, "");
    }
  }
}

// Negative control for I3/I4: a CPU marked active without its walk.
TEST(TmigrInvariantChecker, I3_I4_DetectMissingActivation) {
  Fixture f = MakeUp(16);
  for (int c = 0; c < 16; ++c) f.tm->Deactivate(c, kNanosMax);
  EXPECT_EQ(Violations(*f.tm), "");
  // Mark CPU 3 non-idle behind the hierarchy's back (what a lost activation
  // walk would leave).
  const_cast<CpuState&>(f.tm->cpu_state(3)).idle.store(false);
  const std::string v = Violations(*f.tm);
  EXPECT_NE(v.find("I3 cpu3"), std::string::npos) << v;
  EXPECT_NE(v.find("I4"), std::string::npos) << v;
}

TEST(TmigrVariantNames, RoundTrip) {
  for (Variant v : kAllVariants) EXPECT_EQ(*ParseVariant(VariantName(v)), v);
  EXPECT_FALSE(ParseVariant("v7").ok());
}

}  // namespace
}  // namespace isolation::tmigr
