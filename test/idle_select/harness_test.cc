// SPDX-License-Identifier: GPL-2.0-or-later
// The run-queue harness on the deterministic simulator: the workload
// scenarios about particular built-in selectors (S11, S12, S14/S16 with the
// concurrent-wakeup windows, S19-S22).  What
// every selector must do under a driver (workloads complete, affinity,
// determinism, S7) is in the kit's IdleSelectSimConformance suite.

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

#include "gtest/gtest.h"
#include "isolation/idle_select/idle_select.h"
#include "isolation/idle_select/selector.h"
#include "isolation/idle_select/workload.h"
#include "isolation/runtime/sim.h"
#include "isolation/testing/status_matchers.h"

namespace isolation::idle_select {
namespace {

struct Rig {
  std::unique_ptr<IdleState> state;
  std::unique_ptr<IdleSelectHooks> hooks;
  std::unique_ptr<Simulator> sim;
};

// A simulator (HZ 250) running the harness with variant `v` on `synthetic`.
// `newidle_balance`: the simulator's gated newidle pull (sim.h).
Rig MakeRig(const std::string& v, const std::string& synthetic, const std::string& isolcpus = "",
            uint64_t seed = 1, const HarnessOptions& harness = HarnessOptions(),
            bool newidle_balance = false) {
  Rig r;
  auto topo = Topology::FromSynthetic(synthetic).value();
  auto iso = IsolationConfig::FromFlags(topo, isolcpus, "").value();
  Options o;
  o.variant = v;
  auto st = IdleState::Create(IdleTopology::From(topo, iso), o).value();
  r.state = std::move(st);
  r.hooks = std::make_unique<IdleSelectHooks>(*r.state, harness);
  SimOptions so;
  so.seed = seed;
  so.hz = 250;
  so.newidle_balance = newidle_balance;
  auto sim = Simulator::Create(topo, iso, so).value();
  r.sim = std::move(sim);
  r.sim->AddHooks(r.hooks.get());
  return r;
}

// S11: pipe ping-pong saturation -- every CPU idles for microseconds between
// messages, so the V1 mask stays close to the span and V1 probes about as
// many CPUs as V0 (Mel Gorman's finding).  Counts, not timing.
TEST(IdleSelectHarnessScenarios, S11_PingPongSaturatesV1Mask) {
  auto probes_per_wakeup = [](const std::string& v) {
    Rig r = MakeRig(v, "package:1 l3cache:1 core:16 pu:1");
    // 8 pairs of ping-pong tasks on 16 CPUs.
    // 8 pairs of ping-pong tasks on 16 CPUs, all spawned first (timeout 0:
    // RunPipe only spawns), then driven together.
    for (int pair = 0; pair < 8; ++pair) {
      PipeParams pp;
      pp.round_trips = 1000000;
      auto p = RunPipe(*r.sim, r.hooks.get(), pp, 0);
      ISOLATION_EXPECT_OK(p);
    }
    double weight_sum = 0;
    for (int i = 0; i < 20; ++i) {
      ISOLATION_EXPECT_OK(r.sim->RunFor(1 * kNsPerMs + 37 * kNsPerUs));
      weight_sum += r.state->SelectorMask("idle_cpus", 0).Weight();
    }
    const HarnessCounters c = r.hooks->counters();
    return std::make_pair(static_cast<double>(c.probes) / std::max<int64_t>(1, c.selections),
                          weight_sum / 20);
  };
  const auto v0 = probes_per_wakeup("V0");
  const auto v1 = probes_per_wakeup("V1");
  std::printf("S11: probes/wakeup V0 %.3f V1 %.3f, mean V1 mask weight %.2f of 16\n", v0.first,
              v1.first, v1.second);
  EXPECT_GE(v1.second, 12) << "mask stays close to the span (16)";
  EXPECT_LE(v1.first, v0.first * 1.5 + 0.5);
  EXPECT_GE(v1.first, v0.first * 0.5 - 0.5);
}

// S12: request/response pairs at 200 % load (the -84 % TCP_RR case of
// Aubrey Li's v9 2/2, which dropped the scan depth limit).
//
// Two things kept the effect from appearing before: the harness's
// simplified wake_affine() pulls a woken partner next to its waker whenever
// prev is busy, so at 200 % every ping-pong pair collapsed onto one CPU for
// good and no CPU ever idled (nothing for any scan to find); and a pure
// ping-pong has exactly one runnable task per pair, whereas netperf TCP_RR
// leaves CPUs idle (17.6 % in the report) while messages are in flight.
// The model now uses the kernel's wake_affine() decision
// (HarnessOptions::wake_affine_kernel) and RunRequestResponse() (a wire
// delay per message).  Then the CPUs idle for microseconds between
// transactions, the V1 mask (set on every idle entry, cleared only at the
// tick) stays close to the span, SIS_UTIL's budget is ~0, and:
//   - V1-unbounded probes every stale bit (probes and stale hits per wakeup
//     several times V3's) and migrates the wakee to whatever CPU is idle
//     at that instant far more often than V0, which trusts only
//     target/prev;
//   - V3 (K = 4) bounds the probes;
//   - at 100 % load (16 pairs) the V1-unbounded/V0 migration ratio is small:
//     the rise is a high-load effect.
// Not reproduced: V3 close to V0 in migrations (V3 also finds the
// short-idle CPUs with <= 4 probes) and deeper stacking (this test runs
// wakeups one at a time, so the probe->enqueue window of concurrent wakers
// (S14) never opens: S14_S16_ConcurrentWakeupsStackButLoseNothing opens it;
// and it has no load balancer to count pulls).
struct RrCounts {
  double probes, stale, stacked, migrations;
  int64_t max_queued_ahead, transactions, pulls;
};
RrCounts RunRr(const std::string& v, int pairs) {
  HarnessOptions ho;
  ho.wake_affine_kernel = true;
  Rig rig = MakeRig(v, "package:1 l3cache:1 core:16 pu:1", "", 1, ho, /*newidle_balance=*/true);
  RequestResponseParams rp;
  rp.pairs = pairs;
  rp.transactions = 1 << 30;
  auto r = RunRequestResponse(*rig.sim, rig.hooks.get(), rp, 30 * kNsPerMs);
  ISOLATION_EXPECT_OK(r);
  const HarnessCounters c = rig.hooks->counters();
  EXPECT_EQ(c.invariant_violations, 0);
  EXPECT_EQ(rig.state->CheckSubsetInvariant(), "");
  const double n = static_cast<double>(std::max<int64_t>(1, c.selections));
  return RrCounts{static_cast<double>(c.probes) / n,
                  static_cast<double>(c.stale_hits) / n,
                  100.0 * static_cast<double>(c.placed_on_busy) / n,
                  100.0 * static_cast<double>(c.migrations) / n,
                  c.max_queued_ahead,
                  r.ok() ? r->operations : 0,
                  c.migrate_events - c.migrations};
}

TEST(IdleSelectHarnessScenarios, S12_UnboundedTrustAt200PctLoad) {
  const RrCounts v0 = RunRr("V0", 32), v3 = RunRr("V3", 32), v1u = RunRr("V1-unbounded", 32);
  const RrCounts v0_100 = RunRr("V0", 16), v1u_100 = RunRr("V1-unbounded", 16);
  auto row = [](const char* name, const RrCounts& c) {
    std::printf(
        "  %-20s probes/wakeup %6.2f  stale/wakeup %6.2f  stacked %5.1f %%  migrations %5.1f %%  "
        "max queued ahead %ld  transactions %ld  newidle pulls %ld\n",
        name, c.probes, c.stale, c.stacked, c.migrations, static_cast<long>(c.max_queued_ahead),
        static_cast<long>(c.transactions), static_cast<long>(c.pulls));
  };
  std::printf("S12 request/response, 16 CPUs, 30 ms modelled:\n");
  row("V0 200 %", v0);
  row("V3 (K=4) 200 %", v3);
  row("V1-unbounded 200 %", v1u);
  row("V0 100 %", v0_100);
  row("V1-unbounded 100 %", v1u_100);
  // Unbounded trust: every stale bit is probed.
  EXPECT_GT(v1u.probes, 3 * v3.probes);
  EXPECT_GT(v1u.stale, 3 * v3.stale);
  EXPECT_LE(v3.probes, 4.0);
  // Migrations rise sharply against V0 at 200 %...
  EXPECT_GT(v1u.migrations, 4 * v0.migrations);
  // ...and V3 migrates less than V1-unbounded.
  EXPECT_LT(v3.migrations, v1u.migrations);
  // ...but hardly at 100 %: the effect grows with load.
  const double ratio_200 = v1u.migrations / std::max(0.1, v0.migrations);
  const double ratio_100 = v1u_100.migrations / std::max(0.1, v0_100.migrations);
  EXPECT_LT(ratio_100, 1.5);
  EXPECT_GT(ratio_200, 2 * ratio_100);
  // The gated newidle balance hardly ever pulls here: CPUs idle for
  // microseconds (avg_idle below the balance cost) and every queued task
  // ran within the migration cost (cache-hot) -- as the report's baseline
  // (24 621 migrations in the whole run) suggests.
  for (const RrCounts* c : {&v0, &v3, &v1u}) EXPECT_LT(c->pulls, c->transactions / 100);
}

// The simulator's newidle balance (SimOptions::newidle_balance) used above:
// a CPU going idle pulls a cache-cold queued task from the busiest CPU of
// its LLC, and only when enabled.
TEST(IdleSelectHarnessScenarios, S12_SimNewidleBalancePullsColdQueuedTask) {
  for (bool newidle : {false, true}) {
    ISOLATION_ASSERT_OK_AND_ASSIGN(auto topo,
                                   Topology::FromSynthetic("package:1 l3cache:1 core:2 pu:1"));
    SimOptions so;
    so.newidle_balance = newidle;
    ISOLATION_ASSERT_OK_AND_ASSIGN(auto sim, Simulator::Create(topo, IsolationConfig(topo), so));
    auto spawn = [&](int cpu, Nanos run) {
      TaskSpec spec;
      spec.cpu = cpu;
      spec.body = MakeTaskBody([run, done = false](TaskContext&) mutable -> Step {
        if (done) return Step::Exit();
        done = true;
        return Step::Run(run);
      });
      auto id = sim->Spawn(std::move(spec));
      ISOLATION_EXPECT_OK(id);
      return id.ok() ? *id : kIdleTask;
    };
    spawn(0, 10 * kNsPerMs);                       // runs on CPU 0
    const TaskId queued = spawn(0, 1 * kNsPerMs);  // waits behind it, never ran
    spawn(1, 1 * kNsPerMs);                        // CPU 1 goes newly idle at ~1 ms
    ISOLATION_ASSERT_OK(sim->RunFor(2 * kNsPerMs));
    EXPECT_EQ(sim->TaskCpu(queued), newidle ? 1 : 0) << "newidle_balance=" << newidle;
  }
}

// S19 (seed: hackbench) and S20 (seed: pipe), scaled down, on the
// simulator: every run completes, and in modelled time V1 stays close to V0
// (the seed: -1.07..-0.54 % hackbench, +1.05 % pipe, not significant).
// Modelled time is deterministic, so the bound is not a host-timing check.
double MeanDuration(const std::string& v, bool pipe) {
  double sum = 0;
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    Rig r = MakeRig(v, "package:1 l3cache:1 core:32 pu:1", "", seed);
    absl::StatusOr<WorkloadResult> res;
    if (pipe) {
      PipeParams pp;
      pp.round_trips = 500;
      pp.work_jitter_pct = 20;
      res = RunPipe(*r.sim, r.hooks.get(), pp, kNsPerSec);
    } else {
      HackbenchParams hb;
      hb.groups = 2;
      hb.messages = 10;
      hb.work_jitter_pct = 20;
      res = RunHackbench(*r.sim, r.hooks.get(), hb, 5 * kNsPerSec);
    }
    EXPECT_TRUE(res.ok() && res->completed);
    EXPECT_EQ(r.hooks->counters().invariant_violations, 0);
    sum += res.ok() ? static_cast<double>(res->duration_ns) : 0.0;
  }
  return sum / 3;
}

TEST(IdleSelectHarnessScenarios, S19_HackbenchV1CloseToV0) {
  const double v0 = MeanDuration("V0", false);
  const double v1 = MeanDuration("V1", false);
  std::printf("S19: hackbench-2 modelled mean V0 %.0f ns, V1 %.0f ns (%+.2f %%)\n", v0, v1,
              100 * (v1 - v0) / v0);
  EXPECT_NEAR(v1 / v0, 1.0, 0.05);
}

TEST(IdleSelectHarnessScenarios, S20_PipeV1CloseToV0) {
  const double v0 = MeanDuration("V0", true);
  const double v1 = MeanDuration("V1", true);
  EXPECT_NEAR(v1 / v0, 1.0, 0.02);
}

// S21: schbench-like batch wake: every worker wakeup is measured (wake ->
// run) for V0, V1-tickstop and V4, and every run completes.
TEST(IdleSelectHarnessScenarios, S21_BatchWakeLatencyRecorded) {
  for (const char* v : {"V0", "V1-tickstop", "V4g"}) {
    Rig r = MakeRig(v, "package:1 l3cache:2 core:4 pu:1");
    SchbenchParams sp;
    sp.message_tasks = 2;
    sp.workers_per_message = 4;
    sp.rounds = 50;
    ISOLATION_ASSERT_OK_AND_ASSIGN(auto s, RunSchbench(*r.sim, r.hooks.get(), sp, 2 * kNsPerSec));
    EXPECT_TRUE(s.completed) << v;
    ASSERT_EQ(s.latencies.size(), 2u * 4u * 50u);
    for (Nanos l : s.latencies) ASSERT_GE(l, 0);
  }
}

// S21 with these parameters: M = 2 message tasks x T = 16 workers
// (T = CPUs), 100 us think time, 2 LLCs x 8 CPUs, and the tick-stop
// gating rule of V1-tickstop as a harness parameter ("stop the tick only if
// the predicted idle exceeds 2 ms", as in S13).  What wake->run latency the
// simulator produces: a worker placed on an idle CPU runs after one context
// switch (1 us); one placed on a busy CPU waits in its queue behind the
// tasks there (no wakeup preemption; the tick preempts after a 3 ms slice).
// The tail is therefore stacking.  Workers idle their CPUs for far less
// than 2 ms, so under the rule no worker CPU ever enters the V1-tickstop
// mask: its scan finds nothing, wakeups fall back to the waker's CPU and
// queue there -> worse p90/p99 than V0 (the schbench regression that made
// v3 set the bit on every idle entry).  Without the rule (the simulator
// stops the tick on every idle entry) V1-tickstop behaves like V1.  V4
// claims: one wakee per idle CPU, the shallowest queues and lowest p99.
struct BatchWake {
  Nanos p90 = 0, p99 = 0;
  int64_t max_queued_ahead = 0, hidden = 0;
};
BatchWake RunBatchWake(const std::string& v, Nanos tick_stop_min_idle) {
  HarnessOptions ho;
  ho.tick_stop_min_predicted_idle = tick_stop_min_idle;
  Rig rig = MakeRig(v, "package:1 l3cache:2 core:8 pu:1", "", 1, ho);
  SchbenchParams sp;
  sp.message_tasks = 2;
  sp.workers_per_message = 16;
  sp.rounds = 100;
  sp.think_ns = 100 * kNsPerUs;
  auto r = RunSchbench(*rig.sim, rig.hooks.get(), sp, 5 * kNsPerSec);
  EXPECT_TRUE(r.ok() && r->completed) << v;
  BatchWake out;
  if (!r.ok() || r->latencies.empty()) return out;
  std::vector<Nanos> lat = r->latencies;
  EXPECT_EQ(lat.size(), 2u * 16u * 100u);
  std::sort(lat.begin(), lat.end());
  out.p90 = lat[lat.size() * 90 / 100];
  out.p99 = lat[lat.size() * 99 / 100];
  const HarnessCounters c = rig.hooks->counters();
  EXPECT_EQ(c.invariant_violations, 0);
  out.max_queued_ahead = c.max_queued_ahead;
  out.hidden = c.tick_stops_hidden;
  return out;
}

TEST(IdleSelectHarnessScenarios, S21_TickStopGatingWorsensBatchWakeTail) {
  const Nanos rule = 2 * kNsPerMs;
  const BatchWake v0 = RunBatchWake("V0", rule);
  const BatchWake v1 = RunBatchWake("V1", rule);
  const BatchWake ts = RunBatchWake("V1-tickstop", rule);
  const BatchWake ts_ungated = RunBatchWake("V1-tickstop", 0);
  const BatchWake v4 = RunBatchWake("V4g", rule);
  std::printf("S21 batch wake (2 x 16 workers, 16 CPUs, think 100 us), wake->run us:\n");
  auto row = [](const char* name, const BatchWake& b) {
    std::printf("  %-26s p90 %7.1f  p99 %7.1f  max queued ahead %2ld  tick stops hidden %ld\n",
                name, static_cast<double>(b.p90) / 1000, static_cast<double>(b.p99) / 1000,
                static_cast<long>(b.max_queued_ahead), static_cast<long>(b.hidden));
  };
  row("V0", v0);
  row("V1 (every idle entry)", v1);
  row("V1-tickstop (2 ms rule)", ts);
  row("V1-tickstop (no rule)", ts_ungated);
  row("V4g", v4);
  EXPECT_GT(ts.hidden, 0) << "workers idle < 2 ms: the rule keeps their ticks";
  EXPECT_EQ(ts_ungated.hidden, 0);
  // V1-tickstop worsens the tail against V0 ...
  EXPECT_GT(ts.p99, v0.p99);
  EXPECT_GT(ts.p90, v0.p90);
  // ... because of the gating rule: without it, or setting the bit on every
  // idle entry (v3), the tail is no worse than V0's.
  EXPECT_LT(ts_ungated.p99, ts.p99);
  EXPECT_LE(v1.p99, v0.p99);
  // V4: the stacking-induced tail is smallest.
  EXPECT_LT(v4.p99, v0.p99);
  EXPECT_LT(v4.p99, v1.p99);
  EXPECT_LT(v4.max_queued_ahead, v0.max_queued_ahead);
}

// S22: S19-S21 and the RR analogue at 25 / 50 / 100 / 200 % of 16 CPUs
// (scaled down: 20 hackbench loops, 10 ms windows for pipe and rr, 30
// schbench rounds).  The spec: the sign of the V1-vs-V0 effect flips with
// load in every published data set.  What the model determines: at 25 and
// 50 % every wakeup finds its target or prev idle, so V1 and V0 are
// identical (no scan runs); differences appear only once CPUs saturate.
// At 200 % SIS_UTIL's budget drops to 0 and V0 stops scanning, while V1
// keeps the SIS_PROP floor of the RFC (Options::v1_min_nr): its probes per
// wakeup exceed V0's, it migrates more, and RR throughput changes.  No
// cache or migration cost is modelled, so the sign of a throughput change
// is the model's, not the kernel's.
struct SweepCell {
  LoadPointResult r;
  double probes = 0, migrations_pct = 0;
};
SweepCell RunSweepCell(const std::string& v, LoadWorkload w, int load_pct) {
  HarnessOptions ho;
  ho.wake_affine_kernel = w == LoadWorkload::kRequestResponse;  // as in S12
  Rig rig = MakeRig(v, "package:1 l3cache:1 core:16 pu:1", "", 1, ho);
  auto r = RunLoadPoint(*rig.sim, *rig.hooks, w, load_pct, 10 * kNsPerMs);
  ISOLATION_EXPECT_OK(r);
  SweepCell c;
  if (!r.ok()) return c;
  c.r = *r;
  const double n = static_cast<double>(std::max<int64_t>(1, r->counters.selections));
  c.probes = static_cast<double>(r->counters.probes) / n;
  c.migrations_pct = 100.0 * static_cast<double>(r->counters.migrations) / n;
  EXPECT_EQ(r->counters.invariant_violations, 0) << LoadWorkloadName(w) << " " << load_pct;
  if (w == LoadWorkload::kHackbench || w == LoadWorkload::kSchbench) {
    EXPECT_TRUE(r->completed) << LoadWorkloadName(w) << " " << load_pct << " " << v;
  }
  return c;
}

TEST(IdleSelectHarnessScenarios, S22_LoadSweep) {
  const int loads[] = {25, 50, 100, 200};
  std::printf(
      "S22 load sweep, 16 CPUs (value: hackbench ms, pipe/rr round trips per ms, schbench p99 "
      "us)\n");
  std::printf("  %-9s %5s %5s | %10s %10s %8s | %7s %7s | %6s %6s\n", "workload", "load", "tasks",
              "V0", "V1", "V1-V0 %", "prb V0", "prb V1", "mig V0", "mig V1");
  for (LoadWorkload w : {LoadWorkload::kHackbench, LoadWorkload::kPipe, LoadWorkload::kSchbench,
                         LoadWorkload::kRequestResponse}) {
    std::vector<double> change;
    for (int load : loads) {
      const SweepCell v0 = RunSweepCell("V0", w, load);
      const SweepCell v1 = RunSweepCell("V1", w, load);
      const double pct = v0.r.value != 0 ? 100.0 * (v1.r.value - v0.r.value) / v0.r.value : 0.0;
      change.push_back(pct);
      std::printf("  %-9s %4d%% %5d | %10.2f %10.2f %+8.2f | %7.2f %7.2f | %6.1f %6.1f\n",
                  std::string(LoadWorkloadName(w)).c_str(), load, v0.r.tasks, v0.r.value,
                  v1.r.value, pct, v0.probes, v1.probes, v0.migrations_pct, v1.migrations_pct);
      EXPECT_GT(v0.r.value, 0);
      EXPECT_GT(v1.r.value, 0);
      if (load <= 50) {
        EXPECT_NEAR(pct, 0.0, 0.5) << LoadWorkloadName(w) << " at " << load << " %: no scan runs";
      }
      if (load == 200) {
        EXPECT_GE(v1.probes, v0.probes) << LoadWorkloadName(w) << ": V1 keeps its scan floor";
      }
      if (w == LoadWorkload::kRequestResponse && load == 200) {
        EXPECT_GT(v1.probes, v0.probes);
        EXPECT_GT(v1.migrations_pct, 1.5 * v0.migrations_pct);
      }
    }
    if (w == LoadWorkload::kRequestResponse) {
      // The V1-vs-V0 difference changes with load.
      EXPECT_GT(std::abs(change[3]), std::abs(change[0]) + 1.0);
    }
  }
}

// S14 + S16 with library code on the simulator: the RR
// analogue (kernel wake_affine, as S12) at 50 / 75 / 90 % of 16 CPUs for
// 5 ms, with the select->enqueue window (SimOptions::wake_select_cost) and
// the idle-entry window (idle_entry_cost) open.  Every registered selector
// that is not a negative control loses no wakeup (the simulator's count and
// the harness's); the broken-handshake control V0-norecheck loses some at
// every load.  S14: V0 stacks (two wakers place on one idle CPU inside the
// window), and without the windows nothing can stack.
struct WindowCell {
  int64_t stackings, lost_sim, lost_harness, selections;
};
WindowCell RunWindowCell(const std::string& v, int load, bool windows) {
  auto topo = Topology::FromSynthetic("package:1 l3cache:1 core:16 pu:1").value();
  IsolationConfig iso(topo);
  Options o;
  o.variant = v;
  auto st = IdleState::Create(IdleTopology::From(topo, iso), o).value();
  HarnessOptions ho;
  ho.wake_affine_kernel = true;
  IdleSelectHooks hooks(*st, ho);
  SimOptions so;
  so.seed = 1;
  so.hz = 250;
  if (windows) {
    so.wake_select_cost = kConcurrentWakeSelectCost;
    so.idle_entry_cost = kConcurrentIdleEntryCost;
  }
  auto sim = Simulator::Create(topo, iso, so).value();
  sim->AddHooks(&hooks);
  auto r = RunLoadPoint(*sim, hooks, LoadWorkload::kRequestResponse, load, 5 * kNsPerMs);
  ISOLATION_EXPECT_OK(r);
  if (!r.ok()) return {};
  EXPECT_GT(r->value, 0) << v << " " << load << " %: no round trip";
  return {r->counters.stackings, sim->lost_wakeups(), r->counters.lost_wakeups,
          r->counters.selections};
}

TEST(IdleSelectHarnessScenarios, S14_S16_ConcurrentWakeupsStackButLoseNothing) {
  std::vector<std::string> variants = SelectorNames();
  variants.push_back("V0-norecheck");
  std::printf(
      "concurrent wake-ups, rr on 16 CPUs, 5 ms: stackings / lost wakeups at 50 75 90 %%\n");
  for (const std::string& v : variants) {
    ISOLATION_ASSERT_OK_AND_ASSIGN(auto entry, FindSelector(v));
    const bool control = entry->negative_control;
    std::string line = absl::StrFormat("  %-14s", v);
    for (int load : {50, 75, 90}) {
      SCOPED_TRACE(absl::StrCat(v, " at ", load, " %"));
      const WindowCell c = RunWindowCell(v, load, /*windows=*/true);
      EXPECT_GT(c.selections, 0);
      EXPECT_EQ(c.lost_harness, c.lost_sim)
          << "the harness sees each lost wakeup its selector caused";
      if (control) {
        EXPECT_GT(c.lost_sim, 0) << "the broken handshake must lose a wakeup";
      } else {
        EXPECT_EQ(c.lost_sim, 0);
      }
      absl::StrAppend(&line, absl::StrFormat(" %6d / %-3d", c.stackings, c.lost_sim));
    }
    std::printf("%s%s\n", line.c_str(), control ? "  (negative control)" : "");
  }
  // S14: the window is what lets two wakers stack.
  int64_t v0_stackings = 0;
  for (int load : {50, 75, 90}) {
    v0_stackings += RunWindowCell("V0", load, true).stackings;
    const WindowCell off = RunWindowCell("V0", load, false);
    EXPECT_EQ(off.stackings, 0) << load
                                << " %: without the window no wakeup is in flight at a select";
    EXPECT_EQ(off.lost_sim, 0);
  }
  EXPECT_GT(v0_stackings, 0) << "V0 stacks inside the select->enqueue window";
}

}  // namespace
}  // namespace isolation::idle_select
