// SPDX-License-Identifier: GPL-2.0-or-later
// TmigrStress: the invariants over many steps (testing/tmigr.h) -- seeded
// random schedules, S27 on real threads, the hierarchy under the simulator
// (TmigrHooks) and the S24/S25/S26 seeds on the oslat workload.

#include <algorithm>
#include <barrier>
#include <memory>
#include <random>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "isolation/core/isolation_config.h"
#include "isolation/core/topology.h"
#include "isolation/runtime/real_driver.h"
#include "isolation/runtime/sim.h"
#include "isolation/tmigr/hooks.h"
#include "isolation/tmigr/workload.h"
#include "testing/tmigr_common.h"

namespace isolation::testing {

using tmigr::TimerRecord;
using tmigr::TimerSystem;
using tmigr_internal::Report;

namespace {

constexpr Nanos kJiffy = 1000;  // the direct-API schedules' jiffy (abstract ns)

// Lateness bound of the schedules below, in virtual time: a global timer is
// handed to the hierarchy at least a jiffy ahead; the responsible CPU sees
// it at its first tick (or programmed wake-up) at or after the expiry, or
// one step later when the hand-over raced with that tick.
constexpr Nanos kLateBound = 3 * kJiffy;

std::string Dump(const TimerSystem& ts, Nanos now) {
  std::string out = absl::StrCat("now=", now, "\n", ts.tmigr().DebugString());
  const auto s = ts.tmigr().Snapshot();
  for (int c = 0; c < ts.num_cpus(); ++c) {
    absl::StrAppend(&out, "cpu", c, " idle=", ts.BaseIdle(c), " avail=", s.cpu(c).available,
                    " tmidle=", s.cpu(c).idle, " prog=", ts.ProgrammedWakeup(c),
                    " local=", ts.NextLocal(c), " global=", ts.NextGlobal(c), "\n");
  }
  return out;
}

// Checks the run-time and end properties shared by the schedules.
void CheckTimers(Report& r, const TimerSystem& ts, absl::string_view where) {
  int64_t twice = 0;
  for (const TimerRecord& t : ts.timers()) twice += t.runs.load() > 1;
  r.Eq(twice, int64_t{0}, absl::StrCat(where, ": timers run more than once"));
  r.Eq(ts.runtime_violations(), int64_t{0}, absl::StrCat(where, ": I2/I8 run-time violations"));
  r.Eq(ts.tmigr().counters().lock_order_violations.load(), int64_t{0},
       absl::StrCat(where, ": I11 inversions"));
}

// The machine of a random schedule.
struct Machine {
  int ncpus;
  int per_node;             // consecutive CPUs per node
  const char* topology;     // Topology::FromSynthetic
  const char* cmdline;      // the isolation at boot
  std::vector<int> domain;  // its isolcpus=domain CPUs (the spec predicate below)
  bool idle_heavy;          // two in three idle exits become idle entries: the last-idler paths;
                            // CPU 0 never goes offline
};

// 20 CPUs on 2 nodes: every level of a 2- or 8-children tree.
const Machine kWide{
    20, 10, "package:2 pu:10", "isolcpus=domain,3-5,13 nohz_full=5", {3, 4, 5, 13}, false};
// 4 CPUs, mostly idle: the last CPU to idle, its returned wake-up and the
// new timers of idle CPUs come up tens of thousands of times.
const Machine kSmallIdle{4, 2, "package:2 pu:2", "isolcpus=domain,2-3 nohz_full=3", {2, 3}, true};

// Seeded random schedule over TimerSystem: idle entry/exit, timers, ticks,
// wake-ups, quick checks, hotplug and cpuset churn; the invariants (I1-I11)
// and "no timer older than two jiffies pending" after every step, and at
// every step the participation's result against TM-ISOL's predicate (docs/tmigr.md).
void RandomSchedule(Report& r, const TmigrVariant& v, const Machine& m, int cpg, uint64_t seed,
                    int steps, int64_t* handovers) {
  std::vector<uint8_t> migrators;  // last seen migrator of each group, by level * 1024 + index
  const int ncpus = m.ncpus;
  std::vector<int> node_of(ncpus);
  for (int c = 0; c < ncpus; ++c) node_of[static_cast<size_t>(c)] = c / m.per_node;
  auto traits = TraitsOf(v);
  if (!traits.ok()) {
    r.Fail(absl::StrCat("traits: ", traits.status().ToString()));
    return;
  }
  auto ts_or = tmigr_internal::MakeTimerSystem(v, node_of, cpg, /*record_lock_order=*/true, kJiffy);
  if (!ts_or.ok()) {
    r.Fail(absl::StrCat("set-up: ", ts_or.status().ToString()));
    return;
  }
  TimerSystem& ts = **ts_or;
  auto topo = Topology::FromSynthetic(m.topology);
  auto iso = topo.ok() ? IsolationConfig::FromBootParams(*topo, m.cmdline)
                       : absl::StatusOr<IsolationConfig>(topo.status());
  if (!iso.ok()) {
    r.Fail(absl::StrCat("set-up: ", iso.status().ToString()));
    return;
  }
  CpuMask cpuset(ncpus);  // the isolated cpuset partitions, as last set
  r.Ok(ts.tmigr().SetIsolation(*iso), "isolation");
  r.Ok(ts.BootAll(), "boot");
  ts.tmigr().InitIsolation();
  std::mt19937_64 rng(seed);
  std::vector<bool> online(ncpus, true);
  std::vector<Nanos> next_tick(ncpus, kJiffy);
  Nanos now = 0;
  const std::string at_seed = absl::StrCat("seed ", seed, " cpg ", cpg);
  for (int step = 0; step < steps; ++step) {
    now += static_cast<Nanos>(rng() % 700);
    // Due wake-ups and ticks first (the kernel would have taken them).
    for (int c = 0; c < ncpus; ++c) {
      if (!online[static_cast<size_t>(c)]) continue;
      if (ts.BaseIdle(c)) {
        int guard = 0;
        while (ts.BaseIdle(c) && ts.ProgrammedWakeup(c) <= now && guard++ < 100) {
          ts.IdleWakeup(c, ts.ProgrammedWakeup(c));
        }
        if (guard >= 100) {
          r.Fail(absl::StrCat(at_seed, " step ", step, ": endless re-arm on cpu ", c));
          return;
        }
        next_tick[static_cast<size_t>(c)] = (now / kJiffy + 1) * kJiffy;
      } else {
        while (next_tick[static_cast<size_t>(c)] <= now) {
          ts.Tick(c, next_tick[static_cast<size_t>(c)]);
          next_tick[static_cast<size_t>(c)] += kJiffy;
        }
      }
    }
    const int cpu = static_cast<int>(rng() % ncpus);
    const int op = static_cast<int>(rng() % 100);
    if (!online[static_cast<size_t>(cpu)]) {
      if (op < 10) {
        r.Ok(ts.Online(cpu, now), "online");
        online[static_cast<size_t>(cpu)] = true;
        next_tick[static_cast<size_t>(cpu)] = (now / kJiffy + 1) * kJiffy;
      }
    } else if (op < 35 || (m.idle_heavy && op < 60 && rng() % 3 != 0)) {
      ts.EnterIdle(cpu, now);
    } else if (op < 60) {
      ts.ExitIdle(cpu, now);
      next_tick[static_cast<size_t>(cpu)] = (now / kJiffy + 1) * kJiffy;
    } else if (op < 85) {
      ts.AddTimer(cpu, now + 500 + static_cast<Nanos>(rng() % 20000), rng() % 4 != 0, now);
    } else if (op < 90 && !ts.BaseIdle(cpu)) {
      (void)ts.tmigr().QuickCheck(cpu, kNanosMax);
    } else if (op < 93) {
      int count = 0;
      for (bool b : online) count += b;
      int target = -1;
      for (int t = 0; t < ncpus; ++t) {
        if (t != cpu && online[static_cast<size_t>(t)]) {
          target = t;
          break;
        }
      }
      // The small machine keeps CPU 0 (its one housekeeping CPU outside
      // every isolated set) online, as the kernel keeps a housekeeping CPU.
      if (count > 2 && target >= 0 && !(m.idle_heavy && cpu == 0)) {
        r.Ok(ts.Offline(cpu, target, now), "offline");
        online[static_cast<size_t>(cpu)] = false;
      }
    } else if (op < 95) {
      // Cpuset churn: a variant that does not exclude CPUs ignores it.
      CpuMask set(ncpus);
      for (int c = 0; c < ncpus; ++c) {
        if (rng() % 5 == 0) set.Set(c);
      }
      set.Clear(0);  // keep one housekeeping CPU
      r.Ok(ts.tmigr().SetCpusetIsolated(set), "cpuset");
      cpuset = set;
    }
    std::vector<std::string> v2 = ts.CheckInvariants(now);
    const int64_t late = ts.CountLost(now - 2 * kJiffy);
    if (late != 0)
      v2.push_back(absl::StrCat(late, " timers expired two jiffies ago still pending"));
    // At every step, so at the hand-over that just happened if one did: the
    // hierarchy and the timer bases agree on who is idle (a CPU the hierarchy
    // counts as active -- possibly the migrator owning every group timer of
    // its path -- must really be awake), and an idle CPU is programmed to
    // wake no later than the hierarchy expects it to (the owner of the
    // group's first timer does wake for it).
    const tmigr::HierarchySnapshot snap = ts.tmigr().Snapshot();
    for (int c = 0; c < ncpus; ++c) {
      const tmigr::CpuSnapshot& cs = snap.cpu(c);
      if (!online[static_cast<size_t>(c)] || !cs.available) continue;
      if (cs.idle != ts.BaseIdle(c)) {
        v2.push_back(absl::StrCat("hand-over: cpu", c, " is ", cs.idle ? "idle" : "active",
                                  " in the hierarchy but its timer base is ",
                                  ts.BaseIdle(c) ? "idle" : "active"));
      }
      if (cs.idle && ts.BaseIdle(c) && cs.wakeup != kNanosMax &&
          ts.ProgrammedWakeup(c) > std::max(now, cs.wakeup)) {
        v2.push_back(absl::StrCat("hand-over: cpu", c, " programmed to wake at ",
                                  ts.ProgrammedWakeup(c), " after the hierarchy's wake-up ",
                                  cs.wakeup));
      }
    }
    // Who takes part, after every hotplug and cpuset change: an excluding
    // variant keeps exactly TM-ISOL's isolated CPUs out ((domain or cpuset)
    // and not nohz_full, and not the tick CPU while nohz_full runs); any
    // other keeps every online CPU in.
    for (int c = 0; c < ncpus; ++c) {
      if (!online[static_cast<size_t>(c)]) continue;
      bool isolated = false;
      if (traits->excludes_isolated_cpus && snap.isolation_enabled) {
        const bool domain =
            std::find(m.domain.begin(), m.domain.end(), c) != m.domain.end() || cpuset.Test(c);
        isolated =
            domain && !snap.nohz_full.Test(c) && !(!snap.nohz_full.Empty() && c == snap.tick_cpu);
      }
      if (snap.cpu(c).available == isolated) {
        v2.push_back(
            absl::StrCat("isolation: online cpu", c,
                         isolated ? " isolated but available" : " not isolated but unavailable"));
      }
    }
    for (const auto& level : snap.levels) {
      for (const tmigr::GroupSnapshot& g : level) {
        const size_t key = static_cast<size_t>(g.id.level) * 1024 + static_cast<size_t>(g.id.index);
        if (key >= migrators.size()) migrators.resize(key + 1, tmigr::kMigratorNone);
        if (migrators[key] != g.state.migrator) ++*handovers;
        migrators[key] = g.state.migrator;
      }
    }
    if (!v2.empty()) {
      r.Fail(absl::StrCat(at_seed, " step ", step, " op ", op, " cpu ", cpu, ":\n",
                          absl::StrJoin(v2, "\n"), "\n", Dump(ts, now)));
      return;
    }
  }
  CheckTimers(r, ts, at_seed);
}

std::vector<std::string> RandomSchedules(const TmigrVariant& v, const Machine& m, int cpg,
                                         int seeds, int steps, const char* label) {
  Report r(label);
  int64_t handovers = 0;
  for (uint64_t seed = 1; seed <= static_cast<uint64_t>(seeds) && r.ok(); ++seed) {
    RandomSchedule(r, v, m, cpg, seed, steps, &handovers);
  }
  // A schedule that never moves a migrator checks no hand-over.
  const int64_t want = static_cast<int64_t>(seeds) * steps / 20;
  if (r.ok()) {
    r.True(handovers >= want, absl::StrCat("only ", handovers, " migrator hand-overs in ", seeds,
                                           " x ", steps, " steps (want ", want, ")"));
  }
  return r.Take();
}

}  // namespace

std::vector<std::string> CheckRandomSchedulesCpg2(const TmigrVariant& v) {
  return RandomSchedules(v, kWide, 2, 12, 1500, "I1-I12 random (cpg 2)");
}
std::vector<std::string> CheckRandomSchedulesCpg8(const TmigrVariant& v) {
  return RandomSchedules(v, kWide, 8, 12, 1500, "I1-I12 random (cpg 8)");
}
std::vector<std::string> CheckRandomSchedulesIdleHeavy(const TmigrVariant& v) {
  return RandomSchedules(v, kSmallIdle, 2, 40, 3000, "I1-I12 random, idle-heavy (4 CPUs)");
}

// ---------------------------------------------------------------------------
// S27: N real threads, one per model CPU, doing random activate / deactivate
// / new timer / tick / remote handling on a shared virtual clock advanced in
// rounds; at the barrier between rounds (quiescent) the invariants hold, and
// no global timer is pending longer than kLateBound of virtual time.  At the
// end every timer ran exactly once and none is lost; the run must have run
// timers and pulled some remotely (a run that does nothing proves nothing).
// ---------------------------------------------------------------------------
std::vector<std::string> CheckS27RealThreads(const TmigrVariant& v) {
  Report r("S27");
  constexpr int kCpus = 8;
  constexpr int kRounds = 400;
  constexpr Nanos kStep = 300;
  for (uint64_t seed = 1; seed <= 3 && r.ok(); ++seed) {
    const std::string at = absl::StrCat("seed ", seed);
    auto ts_or = tmigr_internal::MakeTimerSystem(v, std::vector<int>(kCpus, 0), 2,
                                                 /*record_lock_order=*/true, kJiffy);
    if (!ts_or.ok()) {
      r.Fail(absl::StrCat("set-up: ", ts_or.status().ToString()));
      break;
    }
    TimerSystem& ts = **ts_or;
    auto topo = Topology::FromSynthetic(absl::StrCat("pu:", kCpus));
    auto iso = topo.ok() ? IsolationConfig::FromBootParams(*topo, "isolcpus=domain,6-7")
                         : absl::StatusOr<IsolationConfig>(topo.status());
    if (!iso.ok()) {
      r.Fail(absl::StrCat("set-up: ", iso.status().ToString()));
      break;
    }
    r.Ok(ts.tmigr().SetIsolation(*iso), "isolation");
    r.Ok(ts.BootAll(), "boot");
    ts.tmigr().InitIsolation();
    std::vector<std::string> violations;
    int round = 0;
    Nanos now = 0;
    auto on_round_end = [&]() noexcept {
      // Quiescent: every CPU thread waits at the barrier.
      if (violations.empty()) {
        std::vector<std::string> vv = ts.CheckInvariants(now);
        const int64_t late = ts.CountLost(now - kLateBound);
        if (late != 0)
          vv.push_back(
              absl::StrCat(late, " global timers pending longer than ", kLateBound, " ns"));
        for (std::string& s : vv) violations.push_back(absl::StrCat(at, " round ", round, ": ", s));
      }
      ++round;
      now = static_cast<Nanos>(round) * kStep;
    };
    std::barrier sync(kCpus, on_round_end);
    std::vector<std::thread> threads;
    for (int c = 0; c < kCpus; ++c) {
      threads.emplace_back([&, c] {
        std::mt19937_64 rng(seed * 1000 + static_cast<uint64_t>(c));
        Nanos next_tick = kJiffy;
        for (int k = 0; k < kRounds; ++k) {
          const Nanos t = now;  // written only in the barrier's completion
          if (ts.BaseIdle(c)) {
            for (int guard = 0; guard < 100 && ts.BaseIdle(c) && ts.ProgrammedWakeup(c) <= t;
                 ++guard) {
              ts.IdleWakeup(c, ts.ProgrammedWakeup(c));
            }
            next_tick = (t / kJiffy + 1) * kJiffy;
          } else {
            for (; next_tick <= t; next_tick += kJiffy) ts.Tick(c, next_tick);
          }
          const int op = static_cast<int>(rng() % 100);
          if (op < 35) {
            ts.EnterIdle(c, t);
          } else if (op < 60) {
            ts.ExitIdle(c, t);
            next_tick = (t / kJiffy + 1) * kJiffy;
          } else if (op < 85) {
            ts.AddTimer(c, t + 500 + static_cast<Nanos>(rng() % 20000), rng() % 4 != 0, t);
          } else if (op < 90 && !ts.BaseIdle(c)) {
            (void)ts.tmigr().QuickCheck(c, kNanosMax);
          }
          sync.arrive_and_wait();
        }
      });
    }
    for (std::thread& th : threads) th.join();
    for (std::string& s : violations) r.Fail(s);
    if (!r.ok()) break;
    // Lateness is bounded while the rounds run; the drain below jumps far
    // ahead on purpose, so what it runs is late by construction.
    const Nanos max_late_in_rounds = ts.max_lateness();
    // Drain: every CPU wakes or ticks well after the last expiry.
    const Nanos end = now;
    for (int pass = 1; pass <= 3; ++pass) {
      const Nanos t = end + pass * 100 * kJiffy;
      for (int c = 0; c < kCpus; ++c) ts.BaseIdle(c) ? ts.IdleWakeup(c, t) : ts.Tick(c, t);
    }
    r.Eq(ts.CountLost(end), int64_t{0}, at + ": timers lost");
    r.True(ts.timers_run() > 0, at + ": no timer ran");
    r.True(ts.tmigr().counters().remote_expiries.load() > 0, at + ": no timer was pulled remotely");
    r.True(max_late_in_rounds <= kLateBound,
           absl::StrCat(at, ": a timer ran ", max_late_in_rounds, " ns late"));
    CheckTimers(r, ts, at);
  }
  return r.Take();
}

// ---------------------------------------------------------------------------
// The hierarchy under the simulator, through TmigrHooks.
// ---------------------------------------------------------------------------
namespace {

// Runs every CPU's pending work well after `end` (quiescent, driver stopped).
void Drain(TimerSystem& ts, Nanos end) {
  for (int pass = 1; pass <= 3; ++pass) {
    const Nanos t = end + pass * kNsPerSec;
    for (int c = 0; c < ts.num_cpus(); ++c) ts.BaseIdle(c) ? ts.IdleWakeup(c, t) : ts.Tick(c, t);
  }
}

}  // namespace

// 4 model CPUs: 0 housekeeping (nohz idle, a delayed-work analogue), 1-3
// domain-isolated and busy with their tick on.  Housekeeping timers run
// exactly once, at most two ticks late, none is lost, nothing runs on an
// unavailable CPU for another; a variant that excludes isolated CPUs runs
// none there.
std::vector<std::string> CheckSimulatorHousekeepingTimers(const TmigrVariant& v) {
  Report r("simulator");
  auto traits = TraitsOf(v);
  if (!traits.ok()) {
    r.Fail(traits.status().ToString());
    return r.Take();
  }
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    const std::string at = absl::StrCat("seed ", seed);
    auto topo = Topology::FromSynthetic("pu:4");
    auto iso = topo.ok() ? IsolationConfig::FromFlags(*topo, "1-3", "")
                         : absl::StatusOr<IsolationConfig>(topo.status());
    if (!iso.ok()) {
      r.Fail(iso.status().ToString());
      break;
    }
    SimOptions so;
    so.seed = seed;
    auto sim = Simulator::Create(*topo, *iso, so);
    if (!sim.ok()) {
      r.Fail(sim.status().ToString());
      break;
    }
    auto ts = TimerSystem::Create(*topo, tmigr_internal::OptionsOf(v),
                                  TimerSystem::Config{(*sim)->tick_period()});
    if (!ts.ok()) {
      r.Fail(absl::StrCat("set-up: ", ts.status().ToString()));
      break;
    }
    r.Ok((*ts)->tmigr().SetIsolation(*iso), "isolation");
    r.Ok((*ts)->BootAll(), "boot");
    (*ts)->tmigr().InitIsolation();
    tmigr::TmigrHooks hooks(**ts, tmigr::TmigrHooks::Config{5 * kNsPerUs});
    (*sim)->AddHooks(&hooks);
    (*sim)->SetTickMode(0, TickMode::kNohzIdle);
    for (int c = 1; c < 4; ++c) (*sim)->SetTickMode(c, TickMode::kPeriodic);
    TaskSpec hk;
    hk.name = "hk";
    hk.cpu = 0;
    hk.affinity = CpuMask::Of(4, 0);
    hk.body = hooks.MakeHousekeepingTask(0, 10 * kNsPerMs, 100 * kNsPerUs, 4 * kNsPerMs);
    r.Ok((*sim)->Spawn(std::move(hk)).status(), "spawn hk");
    for (int c = 1; c < 4; ++c) {
      TaskSpec busy;
      busy.name = "busy";
      busy.cpu = c;
      busy.affinity = CpuMask::Of(4, c);
      busy.body = MakeTaskBody([](TaskContext&) { return Step::Run(kNsPerMs); });
      r.Ok((*sim)->Spawn(std::move(busy)).status(), "spawn busy");
    }
    const Nanos duration = 300 * kNsPerMs;
    r.Ok((*sim)->RunFor(duration), "run");
    int64_t on_isolated = 0;
    for (int c = 1; c < 4; ++c) on_isolated += hooks.callbacks_on(c);
    r.True((*ts)->timers_run() > 0, at + ": no timer ran");
    if (traits->excludes_isolated_cpus)
      r.Eq(on_isolated, int64_t{0}, at + ": timers run on isolated CPUs");
    r.Add((*ts)->CheckInvariants((*sim)->Now()), at + " end");
    // In the run (before the drain jumps ahead): the migrator sees an idle
    // CPU's expired timer at its first tick after the expiry, or CPU 0
    // wakes for it itself; two ticks leave room for the hooks' latency.
    const Nanos late_bound = 2 * (*sim)->tick_period();
    r.True((*ts)->max_lateness() <= late_bound,
           absl::StrCat(at, ": a timer ran ", (*ts)->max_lateness(), " ns late (bound ", late_bound,
                        ")"));
    Drain(**ts, (*sim)->Now());
    r.Eq((*ts)->CountLost(duration), int64_t{0}, at + ": timers lost");
    CheckTimers(r, **ts, at);
  }
  return r.Take();
}

// S26 on the simulator: CPUs 1-3 are domain-isolated AND nohz_full, busy
// with their tick stopped (idle in the hierarchy), and arm global timers of
// their own; CPU 0 is housekeeping.  In every variant they stay available
// (TM-ISOL keeps a nohz_full CPU in, domain-isolated or not: docs/tmigr.md)
// and housekeeping CPU 0 pulls their timers; each runs exactly once, none
// is lost.
std::vector<std::string> CheckS26IsolatedTimersPulledByHousekeeping(const TmigrVariant& v) {
  Report r("S26");
  auto topo = Topology::FromSynthetic("pu:4");
  auto iso = topo.ok() ? IsolationConfig::FromFlags(*topo, "1-3", "1-3")
                       : absl::StatusOr<IsolationConfig>(topo.status());
  if (!iso.ok()) {
    r.Fail(iso.status().ToString());
    return r.Take();
  }
  auto sim = Simulator::Create(*topo, *iso, SimOptions{});
  if (!sim.ok()) {
    r.Fail(sim.status().ToString());
    return r.Take();
  }
  auto ts_or = TimerSystem::Create(*topo, tmigr_internal::OptionsOf(v),
                                   TimerSystem::Config{(*sim)->tick_period()});
  if (!ts_or.ok()) {
    r.Fail(absl::StrCat("set-up: ", ts_or.status().ToString()));
    return r.Take();
  }
  TimerSystem& ts = **ts_or;
  r.Ok(ts.tmigr().SetIsolation(*iso), "isolation");
  r.Ok(ts.BootAll(), "boot");
  ts.tmigr().InitIsolation();
  r.Eq(ts.tmigr().AvailableMask().ToString(), std::string("0-3"),
       "nohz_full isolated CPUs stay available");
  tmigr::TmigrHooks hooks(ts, tmigr::TmigrHooks::Config{5 * kNsPerUs});
  (*sim)->AddHooks(&hooks);
  (*sim)->SetTickMode(0, TickMode::kNohzIdle);
  for (int c = 1; c < 4; ++c) (*sim)->SetTickMode(c, TickMode::kNohzFull);
  // CPU 0 busy half the time, so it is often the active migrator.
  TaskSpec hk;
  hk.name = "hk";
  hk.cpu = 0;
  hk.affinity = CpuMask::Of(4, 0);
  hk.body = hooks.MakeHousekeepingTask(0, 4 * kNsPerMs, 2 * kNsPerMs, 3 * kNsPerMs);
  r.Ok((*sim)->Spawn(std::move(hk)).status(), "spawn hk");
  std::vector<std::vector<int64_t>> armed(4);
  for (int c = 1; c < 4; ++c) {
    TaskSpec busy;
    busy.name = "isolated";
    busy.cpu = c;
    busy.affinity = CpuMask::Of(4, c);
    // Every 5 ms: arm one global timer 3.5 ms ahead (a delayed-work analogue
    // of the isolated CPU itself), then keep computing.
    busy.body = MakeTaskBody([&ts, &armed, c](TaskContext& ctx) {
      ctx.Syscall([&](CpuContext& k) {
        armed[static_cast<size_t>(c)].push_back(
            ts.AddTimer(k.cpu(), k.now() + 3500 * kNsPerUs, true, k.now()));
      });
      return Step::Run(5 * kNsPerMs);
    });
    r.Ok((*sim)->Spawn(std::move(busy)).status(), "spawn isolated");
  }
  const Nanos duration = 300 * kNsPerMs;
  r.Ok((*sim)->RunFor(duration), "run");
  r.Add(ts.CheckInvariants((*sim)->Now()), "end");
  Drain(ts, (*sim)->Now());
  int64_t pulled_by_hk = 0;
  for (int c = 1; c < 4; ++c) {
    r.True(!armed[static_cast<size_t>(c)].empty(), absl::StrCat("cpu ", c, " armed no timer"));
    for (int64_t id : armed[static_cast<size_t>(c)]) {
      const TimerRecord& t = ts.timers()[static_cast<size_t>(id)];
      r.Eq(t.runs.load(), 1,
           absl::StrCat("runs of cpu ", c, "'s timer ", id, " (expires ", t.expires, ")"));
      if (t.run_cpu == 0) ++pulled_by_hk;
    }
  }
  r.True(pulled_by_hk > 0, "housekeeping cpu 0 pulled no isolated CPU's timer");
  CheckTimers(r, ts, "end");
  return r.Take();
}

// S24 (oslat seed, 2 s modelled), S26 (the same with nohz_full = isolated,
// 1 s) and S25 (rtla seed, 1 s) on the oslat workload: no invariant
// violation, no lost timer; a variant that excludes isolated CPUs runs no
// timer on them and pulls only from housekeeping CPUs.
std::vector<std::string> CheckS24OslatSeed(const TmigrVariant& v) {
  Report r("S24/S25/S26");
  auto traits = TraitsOf(v);
  if (!traits.ok()) {
    r.Fail(traits.status().ToString());
    return r.Take();
  }
  struct Seed {
    const char* name;
    const char* topology;
    const char* isolated;
    bool nohz_full;
    Nanos duration;
    const char* available_if_excluded;
    std::vector<int> housekeeping;
  };
  const std::vector<Seed> seeds = {
      {"S24",
       "package:2 l3cache:4 core:16 pu:1",
       "1-31,33-63,65-95,97-127",
       false,
       2 * kNsPerSec,
       "0,32,64,96",
       {0, 32, 64, 96}},
      {"S26",
       "package:2 l3cache:4 core:16 pu:1",
       "1-31,33-63,65-95,97-127",
       true,
       kNsPerSec,
       "0-127",
       {}},
      {"S25", "pu:40", "1-9,11-39", false, kNsPerSec, "0,10", {0, 10}},
  };
  for (const Seed& seed : seeds) {
    auto topo = Topology::FromSynthetic(seed.topology);
    auto iso = topo.ok() ? IsolationConfig::FromFlags(*topo, seed.isolated,
                                                      seed.nohz_full ? seed.isolated : "")
                         : absl::StatusOr<IsolationConfig>(topo.status());
    if (!iso.ok()) {
      r.Fail(iso.status().ToString());
      continue;
    }
    tmigr::OslatWorkloadConfig cfg;
    cfg.duration = seed.duration;
    cfg.isolated_tick_stopped = seed.nohz_full;
    // A fresh zero-cost simulator ticking every jiffy (workload.h).
    auto sim =
        Simulator::Create(*topo, *iso, ZeroCostSimOptions(static_cast<int>(kNsPerSec / cfg.jiffy)));
    if (!sim.ok()) {
      r.Fail(absl::StrCat(seed.name, ": ", sim.status().ToString()));
      continue;
    }
    auto res = tmigr::RunOslatWorkload(**sim, tmigr_internal::OptionsOf(v), cfg);
    if (!res.ok()) {
      r.Fail(absl::StrCat(seed.name, ": ", res.status().ToString()));
      continue;
    }
    r.Eq(res->invariant_violations, int64_t{0},
         absl::StrCat(seed.name, ": invariant violations (",
                      absl::StrJoin(res->first_violations, "; "), ")"));
    r.Eq(res->timers_lost, int64_t{0}, absl::StrCat(seed.name, ": timers lost"));
    r.True(res->timers_total > 0, absl::StrCat(seed.name, ": no timer ran"));
    if (seed.nohz_full)
      r.Eq(res->timers_on_isolated, int64_t{0}, "S26: timers on tick-stopped isolated CPUs");
    if (traits->excludes_isolated_cpus) {
      r.Eq(res->timers_on_isolated, int64_t{0},
           absl::StrCat(seed.name, ": timers on isolated CPUs"));
      r.Eq(res->available, std::string(seed.available_if_excluded),
           absl::StrCat(seed.name, ": available CPUs"));
      if (!seed.housekeeping.empty()) {
        for (const auto& [cpu, n] : res->remote_by_runner) {
          r.True(std::find(seed.housekeeping.begin(), seed.housekeeping.end(), cpu) !=
                     seed.housekeeping.end(),
                 absl::StrCat(seed.name, ": cpu ", cpu, " pulled ", n, " timers"));
        }
      }
    }
  }
  return r.Take();
}

// ---------------------------------------------------------------------------
// The suite
// ---------------------------------------------------------------------------
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(TmigrStress);
TEST_P(TmigrStress, I1_I12_RandomSchedulesCpg2) { tmigr_conformance::RunAsTest(GetParam()); }
TEST_P(TmigrStress, I1_I12_RandomSchedulesCpg8) { tmigr_conformance::RunAsTest(GetParam()); }
TEST_P(TmigrStress, I1_I12_RandomSchedulesIdleHeavy) { tmigr_conformance::RunAsTest(GetParam()); }
TEST_P(TmigrStress, S27_RealThreads) { tmigr_conformance::RunAsTest(GetParam()); }
TEST_P(TmigrStress, SimulatorHousekeepingTimers) { tmigr_conformance::RunAsTest(GetParam()); }
TEST_P(TmigrStress, S26_IsolatedTimersPulledByHousekeeping) {
  tmigr_conformance::RunAsTest(GetParam());
}
TEST_P(TmigrStress, S24_S26_OslatSeed) { tmigr_conformance::RunAsTest(GetParam()); }

int TmigrStressAnchor() { return 1; }

}  // namespace isolation::testing
