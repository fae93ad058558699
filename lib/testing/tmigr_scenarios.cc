// SPDX-License-Identifier: GPL-2.0-or-later
// TmigrScenarios: the scenarios of docs/tmigr.md on the direct API (testing/tmigr.h).
// Fixed CPUs and expiries on a recording backend; every check ends with the
// hierarchy invariants (CheckHierarchyInvariants).

#include <limits>

#include "absl/strings/str_cat.h"
#include "testing/tmigr_common.h"

namespace isolation::testing {

using tmigr::kMigratorNone;
using tmigr_internal::Fixture;
using tmigr_internal::Report;

// Set-ups that fail are violations too (an unknown variant name, a
// hierarchy that does not come up).
#define TMIGR_SETUP_OR_RETURN(report, lhs, expr)                           \
  auto lhs##_or = (expr);                                                  \
  if (!lhs##_or.ok()) {                                                    \
    (report).Fail(absl::StrCat("set-up: ", lhs##_or.status().ToString())); \
    return (report).Take();                                                \
  }                                                                        \
  auto& lhs = *lhs##_or

// ---------------------------------------------------------------------------
// S1 sizing: the kernel's group sizing (tmigr_init(): CPUs per node, CPU and
// node levels) on a table of machines, and the trees it builds.
// ---------------------------------------------------------------------------
std::vector<std::string> CheckS1Trees(const TmigrVariant& v) {
  Report r("S1");
  struct Row {
    int cpus, nodes, per_node, cpulvl, nodelvl, levels, cross;
  };
  const Row rows[] = {
      {8, 1, 8, 1, 0, 1, 1},     {9, 1, 9, 2, 0, 2, 2},     {64, 1, 64, 2, 0, 2, 2},
      {65, 1, 65, 3, 0, 3, 3},   {128, 1, 128, 3, 0, 3, 3}, {512, 1, 512, 3, 0, 3, 3},
      {513, 1, 513, 4, 0, 4, 4}, {48, 2, 24, 2, 1, 3, 2},   {128, 2, 64, 2, 1, 3, 2},
      {128, 4, 32, 2, 1, 3, 2},  {256, 16, 16, 2, 2, 4, 2},
  };
  for (const Row& row : rows) {
    const tmigr::Sizing s = tmigr::ComputeSizing(row.cpus, row.nodes);
    const std::string at = absl::StrCat(row.cpus, " cpus / ", row.nodes, " nodes");
    r.Eq(s.cpus_per_node, row.per_node, at + " cpus_per_node");
    r.Eq(s.cpu_levels, row.cpulvl, at + " cpu_levels");
    r.Eq(s.node_levels, row.nodelvl, at + " node_levels");
    r.Eq(s.levels, row.levels, at + " levels");
    r.Eq(s.crossnode_level, row.cross, at + " crossnode_level");
  }
  {
    TMIGR_SETUP_OR_RETURN(r, f, tmigr_internal::MakeUp(v, 48, 8, 2));
    const auto s = f.snap();
    r.Eq(s.levels.size() >= 3 ? s.levels[0].size() : 0u, 6u, "48/2: level-0 groups");
    if (s.levels.size() >= 3) {
      r.Eq(s.levels[1].size(), 2u, "48/2: level-1 groups");
      r.Eq(s.levels[2].size(), 1u, "48/2: level-2 groups");
      for (const auto& g : s.levels[1]) r.Eq(g.num_children, 3, "48/2: children of " + g.Name());
    }
    r.Eq(s.root.level, 2, "48/2: root level");
    r.Add(CheckHierarchyInvariants(s), "48/2");
  }
  {
    TMIGR_SETUP_OR_RETURN(r, f, tmigr_internal::MakeUp(v, 8));
    const auto s = f.snap();
    r.Eq(s.num_groups(), 1, "8 cpus: groups");
    r.True(s.root == (tmigr::GroupId{0, 0}), "8 cpus: the single group is the root");
  }
  {
    TMIGR_SETUP_OR_RETURN(r, f, tmigr_internal::MakeUp(v, 9));
    const auto s = f.snap();
    r.Eq(s.root.level, 1, "9 cpus: root level");
    if (s.root.valid()) r.Eq(s.root_group().num_children, 2, "9 cpus: root children");
    r.Add(CheckHierarchyInvariants(s), "9 cpus");
  }
  return r.Take();
}

// ---------------------------------------------------------------------------
// S2 growing the top; S3 NUMA mismatch (5eb579dfd46b).
// ---------------------------------------------------------------------------
std::vector<std::string> CheckS2GrowingTop(const TmigrVariant& v) {
  Report r("S2");
  TMIGR_SETUP_OR_RETURN(r, f, tmigr_internal::Make(v, std::vector<int>(9, 0)));
  for (int c = 0; c < 8; ++c) r.Ok(f.tm->BringUpCpu(c), absl::StrCat("bring up cpu ", c));
  for (int c = 1; c < 8; ++c) f.tm->Deactivate(c, kNanosMax);
  const tmigr::GroupId old_root = f.snap().root;
  r.Ok(f.tm->PrepareCpu(8), "prepare cpu 8");
  const auto s = f.snap();
  if (!r.ok() || !s.root.valid() || !old_root.valid()) return r.Take();
  r.True(!(s.root == old_root), "a new root");
  r.True(s.group(old_root).parent == s.root, "old root under the new root");
  r.Eq(static_cast<int>(s.group(old_root).groupmask), 0x01, "old root's mask (slot 0 reserved)");
  r.Eq(static_cast<int>(s.group_of(8).groupmask), 0x02, "GRP0:1's mask");
  r.Eq(static_cast<int>(s.root_group().state.active), 0x01, "new root: GRP0:0 active");
  r.Eq(static_cast<int>(s.root_group().state.migrator), 0x01, "new root: GRP0:0 migrator");
  r.Add(CheckHierarchyInvariants(s), "after the new top");
  return r.Take();
}

std::vector<std::string> CheckS3NumaMismatch(const TmigrVariant& v) {
  Report r("S3");
  std::vector<int> node_of(128);
  for (int c = 0; c < 128; ++c) node_of[static_cast<size_t>(c)] = c < 64 ? 0 : 1;
  TMIGR_SETUP_OR_RETURN(r, f, tmigr_internal::Make(v, node_of));
  r.Eq(f.tm->sizing().levels, 3, "levels");
  r.Eq(f.tm->sizing().crossnode_level, 2, "crossnode level");
  r.Ok(f.tm->BringUpCpu(0), "bring up cpu 0");
  r.Ok(f.tm->BringUpCpu(64), "bring up cpu 64");
  const auto s = f.snap();
  if (!r.ok() || s.levels.size() < 3) return r.Take();
  r.Eq(s.levels[1].size(), 2u, "level-1 groups (one per node)");
  for (const auto& g : s.levels[1]) r.Eq(g.num_children, 1, "children of " + g.Name());
  const auto& g0 = s.group_of(0);
  const auto& g64 = s.group_of(64);
  r.True(!(g0.parent == g64.parent), "cpus 0 and 64 under different level-1 groups");
  if (g0.parent.valid()) r.Eq(s.group(g0.parent).numa_node, 0, "cpu 0's level-1 node");
  if (g64.parent.valid()) r.Eq(s.group(g64.parent).numa_node, 1, "cpu 64's level-1 node");
  r.Eq(s.root.level, 2, "root level");
  // CPU 0 is active: its activity reached the new root.
  r.True(s.root.valid() && s.root_group().state.migrator != kMigratorNone, "root has a migrator");
  r.Add(CheckHierarchyInvariants(s), "after cpu 64");
  return r.Take();
}

// ---------------------------------------------------------------------------
// S4-S8: activation, hand-over, idle entry, last CPU, idle puller.
// ---------------------------------------------------------------------------
std::vector<std::string> CheckS4FirstActivation(const TmigrVariant& v) {
  Report r("S4");
  TMIGR_SETUP_OR_RETURN(r, f, tmigr_internal::MakeUp(v, 16));
  for (int c = 0; c < 16; ++c) f.tm->Deactivate(c, kNanosMax);
  r.Eq(static_cast<int>(f.snap().root_group().state.migrator), static_cast<int>(kMigratorNone),
       "all idle: root migrator");
  f.tm->Activate(3);
  auto s = f.snap();
  r.Eq(static_cast<int>(s.group_of(3).state.migrator), 0x08, "cpu 3 migrator of its group");
  r.Eq(static_cast<int>(s.root_group().state.migrator), static_cast<int>(s.group_of(3).groupmask),
       "cpu 3's group migrator of the root");
  const uint16_t root_seq = s.root_group().state.seq;
  f.tm->Activate(5);
  s = f.snap();
  r.Eq(static_cast<int>(s.group_of(3).state.active), 0x28, "cpus 3 and 5 active");
  r.Eq(static_cast<int>(s.group_of(3).state.migrator), 0x08, "cpu 3 still migrator");
  r.Eq(s.root_group().state.seq, root_seq, "cpu 5's walk stopped at level 0 (root seq)");
  r.Add(CheckHierarchyInvariants(s), "end");
  return r.Take();
}

std::vector<std::string> CheckS5HandOver(const TmigrVariant& v) {
  Report r("S5");
  TMIGR_SETUP_OR_RETURN(r, f, tmigr_internal::MakeUp(v, 16));
  for (int c = 0; c < 16; ++c) f.tm->Deactivate(c, kNanosMax);
  f.tm->Activate(0);
  f.tm->Activate(2);
  f.tm->Activate(5);
  auto s = f.snap();
  const uint32_t root_word = s.root_group().state.Pack();
  r.Eq(static_cast<int>(s.group_of(0).state.migrator), 0x01, "cpu 0 migrator");
  f.tm->Deactivate(0, kNanosMax);
  s = f.snap();
  r.Eq(static_cast<int>(s.group_of(0).state.migrator), 0x04, "cpu 0 idles: migrator cpu 2");
  r.Eq(s.root_group().state.Pack(), root_word, "parent untouched");
  f.tm->Deactivate(2, kNanosMax);
  r.Eq(static_cast<int>(f.snap().group_of(0).state.migrator), 0x20, "cpu 2 idles: migrator cpu 5");
  f.tm->Deactivate(5, kNanosMax);
  s = f.snap();
  r.Eq(static_cast<int>(s.group_of(0).state.migrator), static_cast<int>(kMigratorNone),
       "cpu 5 idles: group NONE");
  r.Eq(static_cast<int>(s.root_group().state.migrator), static_cast<int>(kMigratorNone),
       "NONE propagated to the root");
  r.Add(CheckHierarchyInvariants(s), "end");
  return r.Take();
}

std::vector<std::string> CheckS6LocalTimerFirst(const TmigrVariant& v) {
  Report r("S6");
  TMIGR_SETUP_OR_RETURN(r, f, tmigr_internal::MakeUp(v, 16));
  r.Eq(f.tm->Deactivate(4, kNanosMax), kNanosMax, "deactivate returns");
  const auto s = f.snap();
  r.Eq(s.group_of(4).events.size(), 0u, "nothing queued");
  r.True(s.cpu(4).cpuevt.ignore, "cpu event stays ignored");
  r.Add(CheckHierarchyInvariants(s), "end");
  return r.Take();
}

// S7 then S8, and the I12 return contract.
std::vector<std::string> CheckS7S8LastCpuIdlesAndIdlePuller(const TmigrVariant& v) {
  Report r("S7/S8");
  TMIGR_SETUP_OR_RETURN(r, f, tmigr_internal::MakeUp(v, 16));
  for (int c = 2; c < 16; ++c) {
    if (c != 9) f.tm->Deactivate(c, kNanosMax);
  }
  f.backend->next_global[9] = 50;
  r.Eq(f.tm->Deactivate(9, 50), kNanosMax, "I12: cpu 9 idles, other CPUs take care");
  f.backend->next_global[1] = 100;
  r.Eq(f.tm->Deactivate(1, 100), kNanosMax, "I12: cpu 1 idles");
  r.Eq(f.tm->Deactivate(0, kNanosMax), Nanos{50}, "the last CPU gets the global first expiry");
  auto s = f.snap();
  r.Eq(s.cpu(0).wakeup, Nanos{50}, "cpu 0 wakeup");
  r.Eq(static_cast<int>(s.root_group().state.migrator), static_cast<int>(kMigratorNone),
       "root NONE");
  const auto& events = s.root_group().events;
  r.Eq(events.size(), 2u, "root events");
  if (events.size() == 2) {
    r.True(events[0].expires == 50 && events[0].cpu == 9, "root's first event (50, cpu 9)");
    r.True(events[1].expires == 100 && events[1].cpu == 1, "root's second event (100, cpu 1)");
  }
  r.Add(CheckHierarchyInvariants(s), "S7");
  // S8: at 50 CPU 0's tick sees now >= wakeup and pulls CPU 9's timers.
  r.True(!f.tm->RequiresHandleRemote(0, 49), "no remote handling required at 49");
  r.True(f.tm->RequiresHandleRemote(0, 50), "remote handling required at 50");
  f.tm->HandleRemote(0, 50);
  r.Eq(f.backend->expired.size(), 1u, "remote expiries at 50");
  if (!f.backend->expired.empty()) {
    r.True(f.backend->expired[0] == std::make_pair(9, 0), "cpu 0 ran cpu 9's timers");
  }
  s = f.snap();
  r.Eq(s.cpu(0).wakeup, Nanos{100}, "cpu 0 wakeup after the pass");
  r.Add(CheckHierarchyInvariants(s), "S8");
  // I12: activation resets wakeup.
  f.tm->Activate(0);
  r.Eq(f.snap().cpu(0).wakeup, kNanosMax, "I12: wakeup after activation");
  return r.Take();
}

// Design-comment drawings: children-per-group 2, CPUs 0-3, GRP0:0 {0,1}, GRP0:1 {2,3}.
std::vector<std::string> CheckS9ActivePull(const TmigrVariant& v) {
  Report r("S9");
  TMIGR_SETUP_OR_RETURN(r, f, tmigr_internal::MakeUp(v, 4, 2));
  r.Eq(f.snap().root.level, 1, "root level");
  f.tm->Deactivate(3, kNanosMax);
  f.backend->next_global[0] = 100;
  f.backend->next_global[1] = 100;
  f.tm->Deactivate(0, 100);
  f.tm->Deactivate(1, 100);
  r.True(!f.tm->RequiresHandleRemote(2, 99), "not required at 99");
  r.True(f.tm->RequiresHandleRemote(2, 100), "required at 100");
  f.tm->HandleRemote(2, 100);
  const auto& ex = f.backend->expired;
  r.Eq(ex.size(), 2u, "remote expiries");
  if (ex.size() == 2) {
    r.True(ex[0] == std::make_pair(0, 2) && ex[1] == std::make_pair(1, 2),
           "cpu 2 expired cpu 0 then cpu 1");
  }
  const auto s = f.snap();
  for (const auto& level : s.levels) {
    for (const auto& g : level) {
      for (const auto& e : g.events) {
        r.True(e.ignore || e.expires == kNanosMax, absl::StrCat("finite event left in ", g.Name()));
      }
    }
  }
  r.Add(CheckHierarchyInvariants(s), "end");
  return r.Take();
}

// S10 (61f7fdf8fd00): 3 levels, CPUs 0 and 1 with equal expiries in a remote branch.
std::vector<std::string> CheckS10SameExpiryOtherCpu(const TmigrVariant& v) {
  Report r("S10");
  TMIGR_SETUP_OR_RETURN(r, f, tmigr_internal::MakeUp(v, 8, 2));
  r.Eq(f.snap().root.level, 2, "root level");
  for (int c : {2, 3, 5, 6, 7}) f.tm->Deactivate(c, kNanosMax);
  f.backend->next_global[0] = 100;
  f.backend->next_global[1] = 100;
  f.tm->Deactivate(0, 100);
  f.tm->Deactivate(1, 100);
  r.True(f.tm->RequiresHandleRemote(4, 100), "cpu 4 required at 100");
  f.tm->HandleRemote(4, 100);
  const auto& ex = f.backend->expired;
  r.Eq(ex.size(), 2u, "remote expiries in the pass (cpu 1's timer must not be late)");
  if (ex.size() == 2) r.True(ex[1] == std::make_pair(1, 4), "cpu 4 ran cpu 1's timer");
  r.Add(CheckHierarchyInvariants(f.snap()), "end");
  return r.Take();
}

// S11 ghost timer (f55acb1e44f3).
std::vector<std::string> CheckS11GhostTimer(const TmigrVariant& v) {
  Report r("S11");
  TMIGR_SETUP_OR_RETURN(r, f, tmigr_internal::MakeUp(v, 2));
  f.tm->Deactivate(1, 100);
  r.Eq(f.tm->Deactivate(0, kNanosMax), Nanos{100}, "cpu 0 idles last");
  f.tm->Activate(1);  // CPU 1 wakes and handles its timer itself
  r.True(f.tm->RequiresHandleRemote(0, 100), "cpu 0 woken at 100");
  f.tm->HandleRemote(0, 100);
  // Back in the idle path: no new timer, the CPU re-arms what NewTimer returns.
  r.Eq(f.tm->NewTimer(0, kNanosMax), kNanosMax, "cpu 0 re-arms nothing (no ghost timer)");
  r.Add(CheckHierarchyInvariants(f.snap()), "end");
  return r.Take();
}

// S14 quick check (8ca1836769d7).
std::vector<std::string> CheckS14QuickCheck(const TmigrVariant& v) {
  Report r("S14");
  TMIGR_SETUP_OR_RETURN(r, f, tmigr_internal::MakeUp(v, 16));
  for (int c = 1; c < 16; ++c) {
    if (c == 8) continue;
    f.tm->Deactivate(c, c == 1 ? 30 : kNanosMax);
  }
  f.tm->Deactivate(8, 70);  // GRP0:1 idle: its event (70) reaches the root
  r.Eq(f.tm->QuickCheck(0, kNanosMax), Nanos{30}, "level-0 expiry 30 before the top's 70");
  r.Eq(f.tm->QuickCheck(0, 20), Nanos{20}, "own expiry first");
  f.tm->Activate(2);  // two active children at level 0
  r.Eq(f.tm->QuickCheck(0, 20), kNanosMax, "two active children: other CPUs take care");
  r.Add(CheckHierarchyInvariants(f.snap()), "end");
  return r.Take();
}

// S15 single-level early return (7a96a84bfbee / 4b6f4c5a67c0).
std::vector<std::string> CheckS15SingleLevelEarlyReturn(const TmigrVariant& v) {
  Report r("S15");
  TMIGR_SETUP_OR_RETURN(r, f, tmigr_internal::MakeUp(v, 2));
  f.tm->Deactivate(1, 40);
  r.Eq(f.tm->Deactivate(0, kNanosMax), Nanos{40},
       "the last CPU gets cpu 1's expiry, not KTIME_MAX");
  r.Add(CheckHierarchyInvariants(f.snap()), "end");
  return r.Take();
}

// S16 offline of the last active CPU with events pending.
std::vector<std::string> CheckS16OfflineLastActive(const TmigrVariant& v) {
  Report r("S16");
  TMIGR_SETUP_OR_RETURN(r, f, tmigr_internal::MakeUp(v, 16));
  for (int c = 1; c < 16; ++c) f.tm->Deactivate(c, c == 9 ? 50 : kNanosMax);
  f.tm->TakeDownCpu(0);
  r.Eq(f.backend->kicked.size(), 1u, "one CPU woken");
  if (f.backend->kicked.size() != 1) return r.Take();
  const int woken = f.backend->kicked[0];
  r.True(woken != 0, "another CPU is woken");
  f.tm->Activate(woken);  // the no-op work item makes it active
  auto s = f.snap();
  r.True(s.root_group().state.migrator != kMigratorNone, "the woken CPU makes the root active");
  r.Eq(s.group_of(0).state.active & s.cpu(0).groupmask, 0, "cpu 0's bit is gone");
  r.True(!f.tm->IsAvailable(0), "cpu 0 unavailable");
  r.Add(CheckHierarchyInvariants(s), "after offline");
  r.Ok(f.tm->BringUpCpu(0), "bring cpu 0 back");
  r.True(f.tm->IsAvailable(0), "cpu 0 available again");
  r.Add(CheckHierarchyInvariants(f.snap()), "after online");
  return r.Take();
}

// After a remote expiry (tmigr_handle_remote_cpu()) the owner's next global expiry is
// fetched with fetch_next_timer_interrupt_remote(), which hands it over only
// if it precedes the owner's next local timer.  CPU 1's next global (50 us)
// is behind its local timer (30 us): the hierarchy must not carry it; CPU 1
// wakes for its local timer and re-hands the global one, which CPU 0 pulls.
std::vector<std::string> CheckRemoteExpiryHandsNoGlobalBehindLocal(const TmigrVariant& v) {
  Report r("§3.8");
  TMIGR_SETUP_OR_RETURN(r, ts, tmigr_internal::MakeTimerSystem(v, std::vector<int>(2, 0)));
  r.Ok(ts->BootAll(), "boot");
  const int64_t g1 = ts->AddTimer(1, 10'000, /*global=*/true, 0);
  const int64_t l1 = ts->AddTimer(1, 30'000, /*global=*/false, 0);
  const int64_t g2 = ts->AddTimer(1, 50'000, /*global=*/true, 0);
  r.True(ts->EnterIdle(1, 0), "cpu 1 idles");
  ts->Tick(0, 10'000);  // CPU 0, the active migrator, pulls CPU 1's first global timer
  r.Eq(ts->timers()[static_cast<size_t>(g1)].run_cpu, 0, "cpu 0 ran cpu 1's first global timer");
  const auto evt = ts->tmigr().Snapshot().cpu(1).cpuevt;
  r.True(evt.ignore || evt.expires == kNanosMax,
         absl::StrCat("cpu 1's event carries ", evt.expires));
  r.Add(ts->CheckInvariants(10'000), "at 10 us");
  r.Eq(ts->ProgrammedWakeup(1), Nanos{30'000}, "cpu 1 wakes for its local timer");
  ts->IdleWakeup(1, 30'000);  // runs the local timer, re-hands 50 us
  r.Eq(ts->timers()[static_cast<size_t>(l1)].run_cpu, 1, "cpu 1 ran its local timer");
  r.Eq(ts->tmigr().Snapshot().cpu(1).cpuevt.expires, Nanos{50'000}, "cpu 1 re-handed 50 us");
  ts->Tick(0, 50'000);
  r.Eq(ts->timers()[static_cast<size_t>(g2)].run_cpu, 0, "cpu 0 pulled the second global timer");
  r.Add(ts->CheckInvariants(50'000), "at 50 us");
  return r.Take();
}

// I5 on the timer bases: two CPUs go idle, CPU 1 with a global timer; the
// last one to idle (CPU 0) must wake for it (the single-level rule of
// 7a96a84bfbee).
std::vector<std::string> CheckI5LastIdleCpuWakesForTheFirstTimer(const TmigrVariant& v) {
  Report r("I5");
  TMIGR_SETUP_OR_RETURN(r, ts, tmigr_internal::MakeTimerSystem(v, std::vector<int>(2, 0)));
  r.Ok(ts->BootAll(), "boot");
  ts->AddTimer(1, 50'000, /*global=*/true, 0);
  r.True(ts->EnterIdle(1, 0), "cpu 1 idles");
  r.True(ts->EnterIdle(0, 0), "cpu 0 idles");
  r.Add(ts->CheckInvariants(0), "both idle");
  r.Eq(ts->ProgrammedWakeup(0), Nanos{50'000}, "cpu 0 wakes for cpu 1's timer");
  return r.Take();
}

// ---------------------------------------------------------------------------
// The suite
// ---------------------------------------------------------------------------
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(TmigrScenarios);
TEST_P(TmigrScenarios, S1_Trees) { tmigr_conformance::RunAsTest(GetParam()); }
TEST_P(TmigrScenarios, S2_GrowingTop) { tmigr_conformance::RunAsTest(GetParam()); }
TEST_P(TmigrScenarios, S3_NumaMismatch) { tmigr_conformance::RunAsTest(GetParam()); }
TEST_P(TmigrScenarios, S4_FirstActivation) { tmigr_conformance::RunAsTest(GetParam()); }
TEST_P(TmigrScenarios, S5_HandOver) { tmigr_conformance::RunAsTest(GetParam()); }
TEST_P(TmigrScenarios, S6_LocalTimerFirst) { tmigr_conformance::RunAsTest(GetParam()); }
TEST_P(TmigrScenarios, S7_S8_LastCpuIdlesAndIdlePuller) {
  tmigr_conformance::RunAsTest(GetParam());
}
TEST_P(TmigrScenarios, S9_ActivePull) { tmigr_conformance::RunAsTest(GetParam()); }
TEST_P(TmigrScenarios, S10_SameExpiryOtherCpu) { tmigr_conformance::RunAsTest(GetParam()); }
TEST_P(TmigrScenarios, S11_GhostTimer) { tmigr_conformance::RunAsTest(GetParam()); }
TEST_P(TmigrScenarios, S14_QuickCheck) { tmigr_conformance::RunAsTest(GetParam()); }
TEST_P(TmigrScenarios, S15_SingleLevelEarlyReturn) { tmigr_conformance::RunAsTest(GetParam()); }
TEST_P(TmigrScenarios, S16_OfflineLastActive) { tmigr_conformance::RunAsTest(GetParam()); }
TEST_P(TmigrScenarios, RemoteExpiryHandsNoGlobalBehindLocal) {
  tmigr_conformance::RunAsTest(GetParam());
}
TEST_P(TmigrScenarios, I5_LastIdleCpuWakesForTheFirstTimer) {
  tmigr_conformance::RunAsTest(GetParam());
}

int TmigrRacesAnchor();
int TmigrIsolationAnchor();
int TmigrStressAnchor();

// Linking this member links the other suites' members too.
int TmigrConformanceAnchor() {
  return TmigrRacesAnchor() + TmigrIsolationAnchor() + TmigrStressAnchor();
}

}  // namespace isolation::testing
