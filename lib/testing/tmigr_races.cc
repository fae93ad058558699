// SPDX-License-Identifier: GPL-2.0-or-later
// TmigrRaces: the races of docs/tmigr.md as forced interleavings (testing/tmigr.h).
// Interleaver::Explore runs every schedule of the actors at the granularity
// of the hierarchy's interleave points (tmigr.inactive_up.before_cas.l1 and
// the like); each run starts from a fresh hierarchy and ends quiescent, so
// the invariants must hold after every one of them.

#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "isolation/core/interleave.h"
#include "testing/tmigr_common.h"

namespace isolation::testing {

using tmigr::kMigratorNone;
using tmigr_internal::Fixture;
using tmigr_internal::Report;

namespace {

// Runs Explore; `build` makes the fixture and adds the actors, `check`
// inspects one finished run (its log given for the message).
void ExploreAll(Report& r, const std::function<void(Interleaver&)>& build,
                const std::function<void(const std::vector<std::string>&)>& check) {
  auto runs = Interleaver::Explore(build, check);
  if (!runs.ok()) {
    r.Fail(absl::StrCat("explore: ", runs.status().ToString()));
  } else if (*runs < 2) {
    r.Fail(absl::StrCat("explore ran ", *runs, " schedules (no interleave points compiled in?)"));
  }
}

std::string LogOf(const std::vector<std::string>& log) {
  return absl::StrCat("[", absl::StrJoin(log, " "), "]");
}

}  // namespace

// S12 race R1 (seq protects the CAS in GRP1:0): CPU 0 idles while CPU 1 of
// the same level-0 group activates.  With the seq increment the late CAS of
// CPU 0 fails and it re-reads the child; without it, GRP1:0 loses GRP0:0
// while CPU 1 is active (I3).
std::vector<std::string> CheckS12RaceR1AllSchedules(const TmigrVariant& v) {
  Report r("S12");
  std::unique_ptr<Fixture> f;
  bool setup_failed = false;
  ExploreAll(
      r,
      [&](Interleaver& il) {
        auto made = tmigr_internal::MakeUp(v, 4, 2);
        if (!made.ok()) {
          if (!setup_failed) r.Fail(absl::StrCat("set-up: ", made.status().ToString()));
          setup_failed = true;
          il.Add("noop", [] {});
          return;
        }
        f = std::make_unique<Fixture>(std::move(*made));
        f->tm->Deactivate(1, kNanosMax);
        f->tm->Deactivate(3, kNanosMax);
        f->tm->Deactivate(0, kNanosMax);  // GRP1:0 migrator moves to GRP0:1
        f->tm->Activate(0);
        il.Add("cpu0_idle", [&] { f->tm->Deactivate(0, kNanosMax); });
        il.Add("cpu1_active", [&] { f->tm->Activate(1); });
      },
      [&](const std::vector<std::string>& log) {
        if (setup_failed) return;
        r.Add(f->tm->CheckInvariants(), LogOf(log));
      });
  return r.Take();
}

// S13 race R2: only CPU 2 active (GRP0:1); it idles without a timer while
// idle CPU 0 queues TIMER0 (100).  In every schedule at least one of them
// must end with a wake-up at or before TIMER0.
std::vector<std::string> CheckS13RaceR2AllSchedules(const TmigrVariant& v) {
  Report r("S13");
  std::unique_ptr<Fixture> f;
  bool setup_failed = false;
  bool ran2 = false, ran0 = false;
  Nanos ret2 = kNanosMax, ret0 = kNanosMax;
  ExploreAll(
      r,
      [&](Interleaver& il) {
        auto made = tmigr_internal::MakeUp(v, 4, 2);
        if (!made.ok()) {
          if (!setup_failed) r.Fail(absl::StrCat("set-up: ", made.status().ToString()));
          setup_failed = true;
          il.Add("noop", [] {});
          return;
        }
        f = std::make_unique<Fixture>(std::move(*made));
        for (int c : {0, 1, 3}) f->tm->Deactivate(c, kNanosMax);
        ran2 = ran0 = false;
        il.Add("cpu2_idle", [&] {
          ret2 = f->tm->Deactivate(2, kNanosMax);
          ran2 = true;
        });
        il.Add("cpu0_timer", [&] {
          ret0 = f->tm->NewTimer(0, 100);
          ran0 = true;
        });
      },
      [&](const std::vector<std::string>& log) {
        if (setup_failed) return;
        if (ran2 && ran0 && ret2 > 100 && ret0 > 100) {
          r.Fail(absl::StrCat(LogOf(log), ": nobody wakes for TIMER0 (cpu 2 gets ", ret2,
                              ", cpu 0 gets ", ret0, ")"));
        }
        r.Add(f->tm->CheckInvariants(), LogOf(log));
      });
  return r.Take();
}

// S28 race R4 (found by S27 on real threads): two CPUs idle at once, the one
// whose state CAS comes first ("early", not the last of the group, so its
// CAS says "walk done") holding a global timer (100), the other ("last")
// none.  When the last one propagates the group upward before the early
// one's event reaches the group, nothing carries that event further.  Three
// schedules: early parked right after its CAS while last runs (the race),
// and both sequential orders.  In each the timer must stay covered on its
// path (I5) and, the hierarchy being idle, someone must wake for it.  At
// level 0 (4 CPUs, GRP0:0 = {0, 1}) and at level 1 (8 CPUs: CPU 2 idles
// GRP0:1 while CPU 0 is still active in GRP1:0 and then idles it).  Not
// Interleaver::Explore: the 8-CPU walks have too many points to enumerate.
std::vector<std::string> CheckS28RaceR4AllSchedules(const TmigrVariant& v) {
  Report r("S28");
  struct Setup {
    int ncpus;
    std::vector<int> idle_first;  // idle before the race, no timer
    int early;                    // idles with the timer, not the last of its group
    int last;                     // idles without a timer, last everywhere
    const char* park;             // where the early CPU's walk is parked
  };
  const Setup setups[] = {{4, {2, 3}, 1, 0, "tmigr.inactive_up.after_cas.l0"},
                          {8, {1, 3, 4, 5, 6, 7}, 2, 0, "tmigr.inactive_up.after_cas.l1"}};
  constexpr Nanos kTimer = 100;
  for (const Setup& su : setups) {
    const std::vector<std::vector<Interleaver::Slice>> scripts = {
        {{"early_idle", su.park}, {"last_idle", ""}, {"early_idle", ""}},
        {{"early_idle", ""}, {"last_idle", ""}},
        {{"last_idle", ""}, {"early_idle", ""}},
    };
    for (size_t k = 0; k < scripts.size(); ++k) {
      const std::string at = absl::StrCat(su.ncpus, " cpus, schedule ", k, ": ");
      auto made = tmigr_internal::MakeUp(v, su.ncpus, 2);
      if (!made.ok()) {
        r.Fail(absl::StrCat(at, "set-up: ", made.status().ToString()));
        return r.Take();
      }
      Fixture& f = *made;
      for (int c : su.idle_first) f.tm->Deactivate(c, kNanosMax);
      Nanos ret_early = kNanosMax, ret_last = kNanosMax;
      Interleaver il;
      il.Add("early_idle", [&] { ret_early = f.tm->Deactivate(su.early, kTimer); });
      il.Add("last_idle", [&] { ret_last = f.tm->Deactivate(su.last, kNanosMax); });
      if (const absl::Status run = il.Run(scripts[k]); !run.ok()) {
        r.Fail(absl::StrCat(at, "interleaving: ", run.ToString()));
        continue;
      }
      const tmigr::HierarchySnapshot snap = f.tm->Snapshot();
      const tmigr::PathCoverage cov = tmigr::CoverageOf(snap, su.early, kTimer);
      if (cov.min_expiry_on_path > kTimer) {
        r.Fail(absl::StrCat(at, "I5 cpu ", su.early, "'s timer ", kTimer,
                            " not covered on its path up to an active group"));
      } else if (cov.reaches_idle_root && ret_early > kTimer && ret_last > kTimer) {
        r.Fail(absl::StrCat(at, "I5 nobody wakes for cpu ", su.early, "'s timer (cpu ", su.early,
                            " gets ", ret_early, ", cpu ", su.last, " gets ", ret_last, ")"));
      }
      r.Add(tmigr::CheckHierarchyInvariants(snap), at);
    }
  }
  return r.Take();
}

// S17: while the prepare of CPU 8 creates a new root, the last active CPU of
// the old root (CPU 0) goes idle.  The new root must never get migrator 0 or
// an active bit for an idle subtree (b729cc1ec21a, de3ced72a792).
std::vector<std::string> CheckS17HotplugVsIdleAllSchedules(const TmigrVariant& v) {
  Report r("S17");
  std::unique_ptr<Fixture> f;
  bool setup_failed = false;
  ExploreAll(
      r,
      [&](Interleaver& il) {
        auto made = tmigr_internal::Make(v, std::vector<int>(9, 0));
        bool ok = made.ok();
        if (ok) {
          f = std::make_unique<Fixture>(std::move(*made));
          for (int c = 0; c < 8 && ok; ++c) ok = f->tm->BringUpCpu(c).ok();
        }
        if (!ok) {
          if (!setup_failed) r.Fail("set-up failed");
          setup_failed = true;
          il.Add("noop", [] {});
          return;
        }
        for (int c = 1; c < 8; ++c) f->tm->Deactivate(c, kNanosMax);
        il.Add("prepare8", [&] { r.Ok(f->tm->PrepareCpu(8), "prepare cpu 8"); });
        il.Add("cpu0_idle", [&] { f->tm->Deactivate(0, kNanosMax); });
      },
      [&](const std::vector<std::string>& log) {
        if (setup_failed) return;
        const auto s = f->tm->Snapshot();
        if (s.root.valid() && s.root_group().state.migrator == 0)
          r.Fail(LogOf(log) + ": root migrator 0");
        r.Add(CheckHierarchyInvariants(s), LogOf(log));
      });
  return r.Take();
}

// I2 single puller per event: children-per-group 2, GRP0:0 {0,1}, GRP0:1
// {2,3}, the whole hierarchy idle, CPU 3 holding the only global timer
// (100).  CPU 0 went idle last and wakes at 100; CPU 2's softirq runs at 100
// too and, its level-0 group being NONE, walks it.  CPU 2 pops CPU 3's event
// from GRP0:1 while CPU 0 pops GRP0:1's group event (cpu 3) from the root:
// both reach tmigr_handle_remote_cpu(3).  The group locks and `remote` must
// let exactly one of them run CPU 3's timers, leave nothing expired queued
// and no stale wake-up.
std::vector<std::string> CheckI2TwoServicersExpireOnce(const TmigrVariant& v) {
  Report r("I2");
  // Not Interleaver::Explore: tmigr_handle_remote_cpu() walks the hierarchy
  // (tmigr.update_events.* points) holding the remote CPU's tmc lock, which
  // the other servicer takes next, so a schedule that parks one there and
  // runs the other deadlocks by construction (interleave.h).  The four
  // schedules below are every hand-over at a point where no tmigr lock is
  // held: either order run to completion, and each CPU parked right after
  // it ran CPU 3's timers while the other pops its copy of the event.
  const std::vector<std::vector<Interleaver::Slice>> scripts = {
      {{"cpu0_softirq", ""}, {"cpu2_softirq", ""}},
      {{"cpu2_softirq", ""}, {"cpu0_softirq", ""}},
      {{"cpu2_softirq", "tmigr.handle_remote_cpu.after_expire"},
       {"cpu0_softirq", ""},
       {"cpu2_softirq", ""}},
      {{"cpu0_softirq", "tmigr.handle_remote_cpu.after_expire"},
       {"cpu2_softirq", ""},
       {"cpu0_softirq", ""}},
  };
  for (size_t i = 0; i < scripts.size(); ++i) {
    const std::string at = absl::StrCat("script ", i);
    auto made = tmigr_internal::MakeUp(v, 4, 2);
    if (!made.ok()) {
      r.Fail(absl::StrCat("set-up: ", made.status().ToString()));
      break;
    }
    Fixture& f = *made;
    f.backend->next_global[3] = 100;
    f.tm->Deactivate(3, 100);
    f.tm->Deactivate(1, kNanosMax);
    f.tm->Deactivate(2, kNanosMax);
    if (f.tm->Deactivate(0, kNanosMax) != 100) {
      r.Fail("set-up: the last CPU does not wake for cpu 3's timer");
      break;
    }
    Interleaver il;
    il.Add("cpu0_softirq", [&] { f.tm->HandleRemote(0, 100); });
    il.Add("cpu2_softirq", [&] { f.tm->HandleRemote(2, 100); });
    r.Ok(il.Run(scripts[i]), at);
    const std::string log = absl::StrCat(at, " ", LogOf(il.log()));
    // Exactly one CPU ran CPU 3's timers, once.
    r.Eq(f.backend->expired.size(), 1u, log + ": remote expiries of cpu 3");
    for (const auto& [owner, runner] : f.backend->expired) {
      r.Eq(owner, 3, absl::StrCat(log, ": owner of the expiry run by cpu ", runner));
    }
    r.Eq(f.tm->counters().remote_expiries.load(), int64_t{1}, log + ": remote_expiries counter");
    const auto s = f.tm->Snapshot();
    r.True(!s.cpu(3).remote, log + ": cpu 3 left `remote` set");
    r.Add(CheckHierarchyInvariants(s), log);
    // Nothing expired is left queued, and nobody keeps a wake-up for it.
    for (const auto& level : s.levels) {
      for (const auto& g : level) {
        for (const auto& e : g.events) {
          r.True(e.ignore || e.expires > 100,
                 absl::StrCat(log, ": expired event left in ", g.Name()));
        }
        r.True(g.next_expiry > 100,
               absl::StrCat(log, ": ", g.Name(), " next_expiry ", g.next_expiry));
      }
    }
    for (int c = 0; c < 4; ++c)
      r.Eq(s.cpu(c).wakeup, kNanosMax, absl::StrCat(log, ": cpu ", c, " wakeup"));
    // A later pass by either CPU at the same time expires nothing more.
    f.tm->HandleRemote(0, 100);
    f.tm->HandleRemote(2, 100);
    r.Eq(f.backend->expired.size(), 1u, log + ": remote expiries after later passes");
  }
  return r.Take();
}

// tmigr_handle_remote_up() re-checks the migrator before every pop (`goto
// again`): CPU 0, the idle puller of an all-idle hierarchy, expires CPU 1's
// timers; meanwhile CPU 1 activates and becomes migrator of GRP0:0 and of the
// root.  CPU 0 must stop there and leave CPU 3's expired event to CPU 1, the
// new migrator, which pulls it at its own tick.
std::vector<std::string> CheckHandleRemoteStopsWhenChildBecameMigrator(const TmigrVariant& v) {
  Report r("§3.8 goto again");
  auto made = tmigr_internal::MakeUp(v, 4, 2);
  if (!made.ok()) {
    r.Fail(absl::StrCat("set-up: ", made.status().ToString()));
    return r.Take();
  }
  Fixture& f = *made;
  f.tm->Deactivate(2, kNanosMax);
  f.backend->next_global[3] = 100;
  f.tm->Deactivate(3, 100);
  f.backend->next_global[1] = 100;
  f.tm->Deactivate(1, 100);
  r.Eq(f.tm->Deactivate(0, kNanosMax), Nanos{100}, "cpu 0 idles last");
  Interleaver il;
  il.Add("cpu0_remote", [&] { f.tm->HandleRemote(0, 100); });
  il.Add("cpu1_active", [&] { f.tm->Activate(1); });
  r.Ok(il.Run({{"cpu0_remote", "tmigr.handle_remote_cpu.after_expire"},
               {"cpu1_active", ""},
               {"cpu0_remote", ""}}),
       "interleaving");
  r.Eq(f.backend->expired.size(), 1u, "cpu 0 expired one CPU");
  if (f.backend->expired.size() == 1)
    r.True(f.backend->expired[0] == std::make_pair(1, 0), "cpu 0 ran cpu 1's");
  r.Eq(f.tm->Snapshot().cpu(0).wakeup, kNanosMax, "cpu 0 keeps no wake-up");
  r.Add(f.tm->CheckInvariants(), "after the race");
  // The new migrator takes over: CPU 3's timer is not lost.
  r.True(f.tm->RequiresHandleRemote(1, 100), "cpu 1 required at 100");
  f.tm->HandleRemote(1, 100);
  r.Eq(f.backend->expired.size(), 2u, "remote expiries after cpu 1's pass");
  if (f.backend->expired.size() == 2)
    r.True(f.backend->expired[1] == std::make_pair(3, 1), "cpu 1 ran cpu 3's");
  r.Add(f.tm->CheckInvariants(), "end");
  return r.Take();
}

// ---------------------------------------------------------------------------
// The suite
// ---------------------------------------------------------------------------
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(TmigrRaces);
TEST_P(TmigrRaces, S12_RaceR1AllSchedules) { tmigr_conformance::RunAsTest(GetParam()); }
TEST_P(TmigrRaces, S13_RaceR2AllSchedules) { tmigr_conformance::RunAsTest(GetParam()); }
TEST_P(TmigrRaces, S28_RaceR4AllSchedules) { tmigr_conformance::RunAsTest(GetParam()); }
TEST_P(TmigrRaces, S17_HotplugVsIdleAllSchedules) { tmigr_conformance::RunAsTest(GetParam()); }
TEST_P(TmigrRaces, I2_TwoServicersExpireOnce) { tmigr_conformance::RunAsTest(GetParam()); }
TEST_P(TmigrRaces, HandleRemoteStopsWhenChildBecameMigrator) {
  tmigr_conformance::RunAsTest(GetParam());
}

int TmigrRacesAnchor() { return 1; }

}  // namespace isolation::testing
