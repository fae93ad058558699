// SPDX-License-Identifier: GPL-2.0-or-later
// Pinned simulator traces: for one fixed, seeded workload per mechanism
// (mm_cid, tmigr, idle_select, vmstat, each through its Hooks adapter) and
// for a bare mixed workload, the exact Simulator::TraceHash() and event count
// recorded on main before the scheduler model was shared between the drivers.
// A refactor of lib/runtime that keeps these values kept
// every scheduling decision, tick-stop, fallback CPU and random draw of the
// simulator -- the "same seed, same TraceHash, before and after" proof.
//
// The oslat workload of tmigr (tmigr_workload.cc) is pinned by its figures
// (timers per CPU, on isolated CPUs, lost, lateness, remote expiries,
// re-arms, the latest timer): recorded when it ran on a private event loop,
// they must not change now that it runs on the simulator.
//
// A value here changes only with a deliberate change of the simulator's
// model (a new event, another order); then re-record it and say why in the
// commit.  The hash function itself changed once (2026-12-07: byte-wise
// FNV-1a to one word per record, for speed); the new values were recorded
// from the same runs in a build that computed both hashes, with every old
// value still passing.

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "isolation/core/isolation_config.h"
#include "isolation/core/topology.h"
#include "isolation/idle_select/idle_select.h"
#include "isolation/idle_select/workload.h"
#include "isolation/mm_cid/hooks.h"
#include "isolation/mm_cid/mm_cid.h"
#include "isolation/runtime/sim.h"
#include "isolation/testing/churn.h"
#include "isolation/testing/machine.h"
#include "isolation/testing/status_matchers.h"
#include "isolation/tmigr/hooks.h"
#include "isolation/tmigr/timers.h"
#include "isolation/tmigr/workload.h"
#include "isolation/vmstat/hooks.h"
#include "isolation/vmstat/vmstat.h"

namespace isolation {
namespace {

using ::isolation::testing::MachineBuilder;

struct Pin {
  uint64_t hash;
  int64_t events;
};

std::string Hex(uint64_t v) { return absl::StrCat("0x", absl::Hex(v, absl::kZeroPad16)); }

// The Run* workloads below write their pin to `out`; a failed set-up is a
// fatal failure (callers: ASSERT_NO_FATAL_FAILURE).
void ExpectPin(const Pin& got, const Pin& want) {
  EXPECT_EQ(Hex(got.hash), Hex(want.hash)) << "events " << got.events;
  EXPECT_EQ(got.events, want.events);
}

// Runs one of the Run* workloads below with `args` and expects its pin `want`.
template <typename Workload, typename... Args>
void ExpectRunPin(const Pin& want, Workload run, const Args&... args) {
  Pin got;
  ASSERT_NO_FATAL_FAILURE(run(args..., &got));
  ExpectPin(got, want);
}

// Scripted disturbances shared by the workloads: affinity changes (moves of
// queued and running tasks), a CPU going offline and back (fallback CPUs,
// housekeeping fallback of work and timers), a tick-mode change.
void Disturb(Simulator& sim, const std::vector<TaskId>& ids, uint64_t seed, int offline_cpu) {
  std::mt19937_64 rng(seed);
  const int n = sim.num_cpus();
  for (int k = 0; k < 20; ++k) {
    const TaskId t = ids[rng() % ids.size()];
    CpuMask mask(n);
    mask.Set(static_cast<int>(rng() % static_cast<uint64_t>(n)));
    mask.Set(static_cast<int>(rng() % static_cast<uint64_t>(n)));
    sim.At(static_cast<Nanos>(k) * 9 * kNsPerMs + 3,
           [&sim, t, mask] { (void)sim.SetAffinity(t, mask); });
  }
  sim.At(60 * kNsPerMs + 7, [&sim, offline_cpu] { (void)sim.SetCpuOnline(offline_cpu, false); });
  sim.At(110 * kNsPerMs + 11, [&sim, offline_cpu] { (void)sim.SetCpuOnline(offline_cpu, true); });
  sim.At(130 * kNsPerMs, [&sim] { sim.SetTickMode(1, TickMode::kPeriodic); });
}

// --- a bare mixed workload (no mechanism) ------------------------------------

TEST(TracePin, BareMixedWorkload) {
  SimOptions so;
  so.seed = 11;
  so.newidle_balance = true;
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto sim, MachineBuilder()
                                               .Topology("package:1 l3cache:2 core:8 pu:1")
                                               .Isolcpus("4-7")
                                               .NohzFull("6-7")
                                               .Simulator(so));
  testing::RandomWakeupPlacer placer(*sim, 8);
  sim->AddHooks(&placer);
  std::vector<TaskId> ids;
  for (int i = 0; i < 20; ++i) {
    TaskSpec spec;
    spec.name = absl::StrCat("m", i);
    spec.cpu = i % 8;
    spec.group = i % 3;
    spec.body = MakeTaskBody([&sim, &ids, n = 0](TaskContext& ctx) mutable {
      if (++n > 400) return Step::Exit();
      std::mt19937_64& rng = ctx.rng();
      switch (rng() % 8) {
        case 0:
          return Step::Sleep(static_cast<Nanos>(rng() % (2 * kNsPerMs)));
        case 1:
          ctx.Syscall([](CpuContext& k) { k.Charge(3 * kNsPerUs); }, 1 * kNsPerUs);
          return Step::Run(static_cast<Nanos>(rng() % (200 * kNsPerUs)));
        // Draws sequenced into locals: the order in which a compiler evaluates
        // function arguments is unspecified (g++ went right to left, clang++
        // left to right, and the pins were recorded with g++'s order).
        case 2: {
          const auto delay = static_cast<Nanos>(rng() % kNsPerMs);
          const auto cpu = static_cast<int>(rng() % 8);
          ctx.driver().QueueWorkOn(cpu, delay, [](CpuContext& k) { k.Charge(5 * kNsPerUs); });
          return Step::Run(50 * kNsPerUs);
        }
        case 3: {
          const TaskId other = ids[rng() % ids.size()];
          const Nanos when = ctx.now() + static_cast<Nanos>(rng() % kNsPerMs);
          const auto cpu = static_cast<int>(rng() % 8);
          ctx.driver().ArmTimer(cpu, when,
                                [&sim, other](CpuContext& k) { sim->Wake(other, k.cpu()); });
          return Step::Run(20 * kNsPerUs);
        }
        case 4:
          return Step::Yield();
        case 5:
          return Step::Block();
        default:
          (void)ctx.driver().QueueHousekeepingWork(static_cast<Nanos>(rng() % kNsPerMs),
                                                   [](CpuContext&) {});
          return Step::Run(static_cast<Nanos>(rng() % kNsPerMs) + 1);
      }
    });
    ISOLATION_ASSERT_OK_AND_ASSIGN(auto id, sim->Spawn(std::move(spec)));
    ids.push_back(id);
  }
  for (int k = 1; k <= 30; ++k) {
    sim->At(k * 5 * kNsPerMs, [&sim, &ids] {
      for (TaskId id : ids) sim->Wake(id, static_cast<int>(id % 9) - 1);
    });
  }
  Disturb(*sim, ids, 5, 3);
  ISOLATION_ASSERT_OK(sim->RunFor(160 * kNsPerMs));
  ExpectPin(Pin{sim->TraceHash(), sim->events_processed()}, Pin{0x0514609374ae17b8, 13215});
}

// --- mm_cid -------------------------------------------------------------------

void RunMmCid(const std::string& placement, Pin* out) {
  SimOptions so;
  so.seed = 3;
  ISOLATION_ASSERT_OK_AND_ASSIGN(
      auto sim,
      MachineBuilder().Topology("core:8 pu:1").Isolcpus("2-7").NohzFull("4-7").Simulator(so));
  mm_cid::MmCidVariant c;
  c.lazy.placement = placement;
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto m, mm_cid::MmCid::Create(8, c));
  mm_cid::MmCidHooks hooks(*m);
  sim->AddHooks(&hooks);
  ISOLATION_ASSERT_OK_AND_ASSIGN(
      const std::vector<TaskId> ids,
      testing::SpawnChurnTasks(
          *sim, {.count = 20, .num_cpus = 8, .groups = 3, .first_steps = 60, .step_increment = 9}));
  Disturb(*sim, ids, 17, 5);
  ISOLATION_EXPECT_OK(sim->RunFor(220 * kNsPerMs));
  EXPECT_EQ(hooks.violations(), 0);
  EXPECT_GT(hooks.TotalScans(), 0);
  *out = Pin{sim->TraceHash(), sim->events_processed()};
}

TEST(TracePin, MmCidTaskWork) {
  ExpectRunPin(Pin{0x13497bb3ffc9e1c4, 4421}, RunMmCid, "work_taskwork");
}

TEST(TracePin, MmCidUnbound) {
  ExpectRunPin(Pin{0x2d5343a02186e755, 4441}, RunMmCid, "work_unbound");
}

TEST(TracePin, MmCidRcu) { ExpectRunPin(Pin{0x1668e847b11729ce, 4445}, RunMmCid, "work_rcu"); }

// --- tmigr (through TmigrHooks) -------------------------------------------------

void RunTmigr(const std::string& participation, Pin* out) {
  SimOptions so;
  so.seed = 5;
  ISOLATION_ASSERT_OK_AND_ASSIGN(
      auto sim, MachineBuilder().Topology("pu:8").Isolcpus("2-7").NohzFull("6-7").Simulator(so));
  tmigr::Options o;
  o.participation = participation;
  ISOLATION_ASSERT_OK_AND_ASSIGN(
      auto ts, tmigr::TimerSystem::Create(sim->topology(), o,
                                          tmigr::TimerSystem::Config{sim->tick_period()}));
  ISOLATION_EXPECT_OK(ts->tmigr().SetIsolation(sim->isolation()));
  ISOLATION_EXPECT_OK(ts->BootAll());
  ts->tmigr().InitIsolation();
  tmigr::TmigrHooks hooks(*ts, tmigr::TmigrHooks::Config{5 * kNsPerUs});
  sim->AddHooks(&hooks);
  for (int c = 2; c < 6; ++c) sim->SetTickMode(c, TickMode::kPeriodic);
  std::vector<TaskId> ids;
  for (int c = 0; c < 2; ++c) {
    TaskSpec hk;
    hk.name = "hk";
    hk.cpu = c;
    hk.affinity = CpuMask::Of(8, c);
    hk.body = hooks.MakeHousekeepingTask(c, (7 + 3 * c) * kNsPerMs, 100 * kNsPerUs, 4 * kNsPerMs);
    ISOLATION_ASSERT_OK_AND_ASSIGN(auto id, sim->Spawn(std::move(hk)));
    ids.push_back(id);
  }
  for (int c = 2; c < 8; ++c) {
    TaskSpec busy;
    busy.name = "busy";
    busy.cpu = c;
    busy.body = MakeTaskBody([](TaskContext& ctx) {
      return ctx.rng()() % 5 == 0 ? Step::Sleep(3 * kNsPerMs) : Step::Run(kNsPerMs);
    });
    ISOLATION_ASSERT_OK_AND_ASSIGN(auto id, sim->Spawn(std::move(busy)));
    ids.push_back(id);
  }
  Disturb(*sim, ids, 23, 4);
  ISOLATION_EXPECT_OK(sim->RunFor(200 * kNsPerMs));
  ISOLATION_EXPECT_OK(hooks.status());
  EXPECT_GT(ts->timers_run(), 0);
  *out = Pin{sim->TraceHash(), sim->events_processed()};
}

TEST(TracePin, TmigrV69) { ExpectRunPin(Pin{0x1c4b8c59c5f0fdc1, 2572}, RunTmigr, "v6.9"); }

TEST(TracePin, TmigrIsolation) {
  ExpectRunPin(Pin{0x082674d98c59a116, 2602}, RunTmigr, "isolation");
}

// --- idle_select (wakeup placement through the hooks) ---------------------------

void RunIdleSelect(const std::string& variant, const std::string& isolcpus, Pin* out) {
  SimOptions so;
  so.seed = 7;
  so.hz = 250;
  so.newidle_balance = true;
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto sim, MachineBuilder()
                                               .Topology("package:1 l3cache:2 core:4 pu:2")
                                               .Isolcpus(isolcpus)
                                               .Simulator(so));
  idle_select::Options o;
  o.variant = variant;
  ISOLATION_ASSERT_OK_AND_ASSIGN(
      auto st, idle_select::IdleState::Create(
                   idle_select::IdleTopology::From(sim->topology(), sim->isolation()), o));
  auto selector = idle_select::MakeSelector(*st);
  idle_select::IdleSelectHooks hooks(*st, *selector);
  sim->AddHooks(&hooks);
  idle_select::HackbenchParams hb;
  hb.groups = 3;
  hb.senders = 8;
  hb.messages = 10;
  hb.work_jitter_pct = 30;
  auto h = idle_select::RunHackbench(*sim, &hooks, hb, 2 * kNsPerSec);
  EXPECT_TRUE(h.ok() && h->completed);
  idle_select::SchbenchParams sp;
  sp.message_tasks = 3;
  sp.workers_per_message = 8;
  sp.rounds = 20;
  auto s = idle_select::RunSchbench(*sim, &hooks, sp, 2 * kNsPerSec);
  EXPECT_TRUE(s.ok() && s->completed);
  idle_select::RequestResponseParams rr;
  rr.pairs = 12;
  rr.transactions = 100;
  auto r = idle_select::RunRequestResponse(*sim, &hooks, rr, 2 * kNsPerSec);
  EXPECT_TRUE(r.ok() && r->completed);
  EXPECT_EQ(hooks.counters().invariant_violations, 0);
  EXPECT_GT(hooks.counters().migrations, 0);  // the placement decides something
  *out = Pin{sim->TraceHash(), sim->events_processed()};
}

TEST(TracePin, IdleSelectV0) {
  ExpectRunPin(Pin{0x55ffcaace001a2ee, 19511}, RunIdleSelect, "V0", "");
}

TEST(TracePin, IdleSelectV2) {
  ExpectRunPin(Pin{0xca0cf4a84e3a710e, 17508}, RunIdleSelect, "V2", "5-7");
}

// --- vmstat ---------------------------------------------------------------------

void RunVmstat(const std::string& fold_policy, Pin* out) {
  SimOptions so;
  so.seed = 9;
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto sim, MachineBuilder()
                                               .Topology("package:1 core:8 pu:1")
                                               .Isolcpus("1-7")
                                               .NohzFull("1-7")
                                               .Simulator(so));
  vmstat::VmstatConfig c;
  c.fold_policy = fold_policy;
  c.num_cpus = 8;
  c.zones = {vmstat::ZoneSpec{"Normal", 0, 16 * 262144, 8192, 10240, 12288}};
  c.stat_interval = 20 * kNsPerMs;
  c.isolated = sim->isolation().DomainIsolated();
  c.nohz_full = sim->isolation().nohz_full();
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto vm, vmstat::Vmstat::Create(c));
  vmstat::VmstatHooks hooks(*vm);
  sim->AddHooks(&hooks);
  std::vector<TaskId> ids;
  for (int cpu = 0; cpu < 8; ++cpu) {
    TaskSpec t;
    t.name = "v";
    t.cpu = cpu;
    t.affinity = CpuMask::Of(8, cpu);
    vmstat::Vmstat* v = vm.get();
    t.body = MakeTaskBody([v, cpu, n = 0](TaskContext& ctx) mutable {
      ++n;
      const uint64_t r = ctx.rng()();
      if (cpu == 0 || n % 7 == 0) {
        ctx.Syscall(
            [v, r](CpuContext& k) {
              v->Mod(k.cpu(), vmstat::StatKind::kNode, 0, static_cast<int>(r % 4),
                     static_cast<int64_t>(r % 7) - 3);
            },
            2 * kNsPerUs);
      }
      if (cpu == 0) return Step::Sleep(200 * kNsPerUs + static_cast<Nanos>(r % kNsPerMs));
      return r % 9 == 0 ? Step::Sleep(5 * kNsPerMs) : Step::Run(3 * kNsPerMs);
    });
    ISOLATION_ASSERT_OK_AND_ASSIGN(auto id, sim->Spawn(std::move(t)));
    ids.push_back(id);
  }
  sim->At(80 * kNsPerMs, [&sim, &hooks] { (void)hooks.StatRefresh(*sim); });
  sim->At(60 * kNsPerMs + 7, [&sim] { (void)sim->SetCpuOnline(5, false); });
  sim->At(110 * kNsPerMs + 11, [&sim] { (void)sim->SetCpuOnline(5, true); });
  ISOLATION_EXPECT_OK(sim->RunFor(200 * kNsPerMs));
  EXPECT_GT(hooks.shepherd_runs(), 0);
  *out = Pin{sim->TraceHash(), sim->events_processed()};
}

TEST(TracePin, VmstatA0) { ExpectRunPin(Pin{0x1c257c5487f9d2ed, 1347}, RunVmstat, "A0"); }

TEST(TracePin, VmstatStrategyB) { ExpectRunPin(Pin{0x86afbdb65f9d2665, 1235}, RunVmstat, "B"); }

// --- tmigr's oslat workload: its figures ---------------------------------------------

void OslatFigures(const std::string& topo, const std::string& isolcpus, const std::string& nohz,
                  const std::string& participation, Nanos duration, Nanos hk_period,
                  std::string* out) {
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto t, Topology::FromSynthetic(topo));
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto iso, IsolationConfig::FromFlags(t, isolcpus, nohz));
  tmigr::Options o;
  o.participation = participation;
  tmigr::OslatWorkloadConfig cfg;
  cfg.duration = duration;
  cfg.hk_period = hk_period;
  cfg.isolated_tick_stopped = !nohz.empty();
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto sim, Simulator::Create(t, iso, ZeroCostSimOptions(1000)));
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto r, tmigr::RunOslatWorkload(*sim, o, cfg));
  std::string per_cpu, remote;
  for (const auto& [cpu, k] : r.per_cpu_timers) absl::StrAppend(&per_cpu, cpu, ":", k, " ");
  for (const auto& [cpu, k] : r.remote_by_runner) absl::StrAppend(&remote, cpu, ":", k, " ");
  *out =
      absl::StrCat("total ", r.timers_total, " on_isolated ", r.timers_on_isolated,
                   " remote_on_isolated ", r.remote_on_isolated, " global ", r.global_timers,
                   " global_on_isolated ", r.global_on_isolated, " lost ", r.timers_lost,
                   " max_lateness ", r.max_lateness_ns, " isolated_cb_ns ", r.isolated_callback_ns,
                   " violations ", r.invariant_violations, " rearms ", r.immediate_rearms, "/",
                   r.immediate_rearms_after_wake, " ghosts ", r.ghost_timers, " available ",
                   r.available, " per_cpu ", per_cpu, "remote ", remote, "latest ", r.latest_timer);
}

constexpr char kSeedTopo[] = "package:2 l3cache:4 core:16 pu:1";
constexpr char kSeedIsol[] = "1-31,33-63,65-95,97-127";

TEST(TracePin, OslatSeedV69) {
  {
    std::string got;
    ASSERT_NO_FATAL_FAILURE(
        OslatFigures(kSeedTopo, kSeedIsol, "", "v6.9", 3 * kNsPerSec, 10 * kNsPerMs, &got));
    EXPECT_EQ(
        got,
        "total 1315 on_isolated 1199 remote_on_isolated 1199 global 1199 global_on_isolated 1199 "
        "lost 0 max_lateness 999474 isolated_cb_ns 23980000 violations 0 rearms 0/0 ghosts 0 "
        "available 0-127 per_cpu 0:29 1:299 32:29 33:300 64:29 65:300 96:29 97:300 remote 1:299 "
        "33:300 65:300 97:300 latest owner 64 global expires 2608000526 ran on 65 at 2609000000");
  }
}

TEST(TracePin, OslatSeedIsolation) {
  {
    std::string got;
    ASSERT_NO_FATAL_FAILURE(
        OslatFigures(kSeedTopo, kSeedIsol, "", "isolation", 3 * kNsPerSec, 10 * kNsPerMs, &got));
    EXPECT_EQ(got,
              "total 1315 on_isolated 0 remote_on_isolated 0 global 1199 global_on_isolated 0 lost "
              "0 max_lateness 0 isolated_cb_ns 0 violations 0 rearms 0/0 ghosts 0 available "
              "0,32,64,96 per_cpu 0:250 32:780 64:130 96:155 remote 0:123 32:517 64:44 96:20 "
              "latest owner 32 global expires 4635867 ran on 32 at 4635867");
  }
}

TEST(TracePin, OslatNohzFullBothVariants) {
  {
    std::string got;
    ASSERT_NO_FATAL_FAILURE(
        OslatFigures(kSeedTopo, kSeedIsol, kSeedIsol, "v6.9", kNsPerSec, 10 * kNsPerMs, &got));
    EXPECT_EQ(got,
              "total 435 on_isolated 0 remote_on_isolated 0 global 399 global_on_isolated 0 lost 0 "
              "max_lateness 0 isolated_cb_ns 0 violations 0 rearms 0/0 ghosts 0 available 0-127 "
              "per_cpu 0:86 32:252 64:46 96:51 remote 0:44 32:166 64:16 96:6 latest owner 32 "
              "global expires 4635867 ran on 32 at 4635867");
  }
  {
    std::string got;
    ASSERT_NO_FATAL_FAILURE(
        OslatFigures(kSeedTopo, kSeedIsol, kSeedIsol, "isolation", kNsPerSec, 10 * kNsPerMs, &got));
    EXPECT_EQ(got,

              "total 435 on_isolated 0 remote_on_isolated 0 global 399 global_on_isolated 0 lost 0 "
              "max_lateness 0 isolated_cb_ns 0 violations 0 rearms 0/0 ghosts 0 available 0-127 "
              "per_cpu 0:86 32:252 64:46 96:51 remote 0:44 32:166 64:16 96:6 latest owner 32 "
              "global expires 4635867 ran on 32 at 4635867");
  }
}

TEST(TracePin, OslatShortPeriod) {
  {
    std::string got;
    ASSERT_NO_FATAL_FAILURE(
        OslatFigures("pu:40", "1-9,11-39", "", "v6.9", kNsPerSec, 2 * kNsPerMs, &got));
    EXPECT_EQ(got,
              "total 413 on_isolated 49 remote_on_isolated 49 global 395 global_on_isolated 49 "
              "lost 0 max_lateness 686610 isolated_cb_ns 980000 violations 0 rearms 0/0 ghosts 0 "
              "available 0-39 per_cpu 0:172 1:36 8:13 10:192 remote 1:36 8:13 latest owner 0 "
              "global expires 338313390 ran on 0 at 339000000");
  }
  {
    std::string got;
    ASSERT_NO_FATAL_FAILURE(
        OslatFigures("pu:40", "1-9,11-39", "", "isolation", kNsPerSec, 2 * kNsPerMs, &got));
    EXPECT_EQ(got,
              "total 413 on_isolated 0 remote_on_isolated 0 global 395 global_on_isolated 0 lost 0 "
              "max_lateness 686610 isolated_cb_ns 0 violations 0 rearms 2/0 ghosts 0 available "
              "0,10 per_cpu 0:279 10:134 remote 0:71 latest owner 0 global expires 338313390 ran "
              "on 0 at 339000000");
  }
}

}  // namespace
}  // namespace isolation
