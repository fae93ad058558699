// SPDX-License-Identifier: GPL-2.0-or-later
// The run-queue harness on the deterministic simulator: every variant runs
// hackbench-like groups, pipe ping-pong and a schbench-like batch wake to
// completion (no lost wakeup), honours affinity, and is deterministic.

#include <cstdio>
#include <memory>
#include <string>

#include "absl/status/statusor.h"

#include "gtest/gtest.h"
#include "isolation/idle_select.h"
#include "isolation/idle_select_hooks.h"
#include "isolation/sim.h"

namespace isolation::idle_select {
namespace {

struct Rig {
  std::unique_ptr<IdleState> state;
  std::unique_ptr<IdleSelector> selector;
  std::unique_ptr<IdleSelectHooks> hooks;
  std::unique_ptr<Simulator> sim;
};

Rig MakeRig(Variant v, const std::string& synthetic, const std::string& isolcpus = "", uint64_t seed = 1) {
  Rig r;
  auto topo = Topology::FromSynthetic(synthetic);
  EXPECT_TRUE(topo.ok()) << topo.status();
  auto iso = IsolationConfig::FromFlags(*topo, isolcpus, "");
  EXPECT_TRUE(iso.ok()) << iso.status();
  Options o;
  o.variant = v;
  auto st = IdleState::Create(IdleTopology::From(*topo, *iso), o);
  EXPECT_TRUE(st.ok()) << st.status();
  r.state = std::move(*st);
  r.selector = MakeSelector(*r.state);
  r.hooks = std::make_unique<IdleSelectHooks>(*r.state, *r.selector);
  SimOptions so;
  so.seed = seed;
  so.hz = 250;
  auto sim = Simulator::Create(*topo, *iso, so);
  EXPECT_TRUE(sim.ok()) << sim.status();
  r.sim = std::move(*sim);
  r.sim->AddHooks(r.hooks.get());
  return r;
}

class IdleSelectHarness : public ::testing::TestWithParam<Variant> {};

TEST_P(IdleSelectHarness, NoLostWakeup_AllWorkloadsComplete) {
  Rig r = MakeRig(GetParam(), "package:1 l3cache:2 core:4 pu:2");
  HackbenchParams hb;
  hb.groups = 2;
  hb.senders = 4;
  hb.messages = 20;
  auto h = RunHackbench(*r.sim, r.hooks.get(), hb, 2 * kNsPerSec);
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_TRUE(h->completed) << "hackbench: a task was left blocked (lost wakeup)";
  EXPECT_EQ(h->operations, 2 * 4 * 4 * 20);
  PipeParams pp;
  pp.round_trips = 500;
  auto p = RunPipe(*r.sim, r.hooks.get(), pp, 2 * kNsPerSec);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_TRUE(p->completed);
  EXPECT_EQ(p->operations, 500);
  SchbenchParams sp;
  sp.message_tasks = 2;
  sp.workers_per_message = 4;
  sp.rounds = 30;
  auto s = RunSchbench(*r.sim, r.hooks.get(), sp, 2 * kNsPerSec);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_TRUE(s->completed);
  EXPECT_EQ(static_cast<int>(s->latencies.size()), 2 * 4 * 30);
  const HarnessCounters c = r.hooks->counters();
  EXPECT_GT(c.selections, 0);
  EXPECT_EQ(c.invariant_violations, 0);
  EXPECT_EQ(r.state->CheckSubsetInvariant(), "");
}

TEST_P(IdleSelectHarness, I3_AffinityUnderDriver) {
  Rig r = MakeRig(GetParam(), "package:1 l3cache:2 core:8 pu:1");
  CpuMask aff = CpuMask::Range(16, 2, 5);
  HackbenchParams hb;
  hb.groups = 1;
  hb.senders = 3;
  hb.messages = 20;
  auto h = RunHackbench(*r.sim, r.hooks.get(), hb, 2 * kNsPerSec, aff);
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_TRUE(h->completed);
  EXPECT_EQ(r.hooks->counters().invariant_violations, 0);
}

TEST_P(IdleSelectHarness, Deterministic) {
  auto run = [&] {
    Rig r = MakeRig(GetParam(), "package:1 l3cache:1 core:8 pu:1", "", 7);
    PipeParams pp;
    pp.round_trips = 200;
    auto p = RunPipe(*r.sim, r.hooks.get(), pp, kNsPerSec);
    EXPECT_TRUE(p.ok());
    const HarnessCounters c = r.hooks->counters();
    return std::make_pair(p.ok() ? p->duration_ns : -1, c.probes * 1000003 + c.selections);
  };
  EXPECT_EQ(run(), run());
}

INSTANTIATE_TEST_SUITE_P(AllVariants, IdleSelectHarness, ::testing::ValuesIn(AllVariants()),
                         [](const ::testing::TestParamInfo<Variant>& info) {
                           std::string n(VariantName(info.param));
                           for (char& ch : n) {
                             if (ch == '-') ch = '_';
                           }
                           return n;
                         });

// S7 under the driver: isolcpus=domain CPUs never receive a housekeeping
// task through wakeup selection.
TEST(IdleSelectHarnessIsolation, S7_HousekeepingTasksStayOffIsolatedCpus) {
  Rig r = MakeRig(Variant::kV0, "package:1 l3cache:1 core:16 pu:1", "domain,8-15");
  CpuMask hk = CpuMask::Range(16, 0, 7);
  HackbenchParams hb;
  hb.groups = 1;
  hb.senders = 6;
  hb.messages = 20;
  auto h = RunHackbench(*r.sim, r.hooks.get(), hb, 2 * kNsPerSec, hk);
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_TRUE(h->completed);
  for (int c = 8; c < 16; ++c) EXPECT_EQ(r.sim->Stats(c).context_switches, 0) << "cpu " << c;
}

// S11: pipe ping-pong saturation -- every CPU idles for microseconds between
// messages, so the V1 mask stays close to the span and V1 probes about as
// many CPUs as V0 (Mel Gorman's finding).  Counts, not timing.
TEST(IdleSelectHarnessScenarios, S11_PingPongSaturatesV1Mask) {
  auto probes_per_wakeup = [](Variant v) {
    Rig r = MakeRig(v, "package:1 l3cache:1 core:16 pu:1");
    // 8 pairs of ping-pong tasks on 16 CPUs.
    // 8 pairs of ping-pong tasks on 16 CPUs, all spawned first (timeout 0:
    // RunPipe only spawns), then driven together.
    for (int pair = 0; pair < 8; ++pair) {
      PipeParams pp;
      pp.round_trips = 1000000;
      auto p = RunPipe(*r.sim, r.hooks.get(), pp, 0);
      EXPECT_TRUE(p.ok());
    }
    double weight_sum = 0;
    for (int i = 0; i < 20; ++i) {
      EXPECT_TRUE(r.sim->RunFor(1 * kNsPerMs + 37 * kNsPerUs).ok());
      weight_sum += r.state->llc(0).idle_cpus.Weight();
    }
    const HarnessCounters c = r.hooks->counters();
    return std::make_pair(static_cast<double>(c.probes) / std::max<int64_t>(1, c.selections), weight_sum / 20);
  };
  const auto v0 = probes_per_wakeup(Variant::kV0);
  const auto v1 = probes_per_wakeup(Variant::kV1);
  std::printf("S11: probes/wakeup V0 %.3f V1 %.3f, mean V1 mask weight %.2f of 16\n", v0.first, v1.first,
              v1.second);
  EXPECT_GE(v1.second, 12) << "mask stays close to the span (16)";
  EXPECT_LE(v1.first, v0.first * 1.5 + 0.5);
  EXPECT_GE(v1.first, v0.first * 0.5 - 0.5);
}

// S12 / S22: request/response pairs at 200 % load (32 ping-pong pairs on 16
// CPUs).  The spec expects V1-unbounded's stacking and migrations to rise
// against V0/V3 (the -84 % TCP_RR case).  The simulator has no load
// balancer and no real idle time at this load, so we only print the counts
// and assert what the model determines: V1-unbounded probes at least as many
// CPUs per wakeup as V3, V3 stays within K = 4, and I3 holds.
TEST(IdleSelectHarnessScenarios, S12_UnboundedTrustAt200PctLoad) {
  struct Out {
    double probes, stacked, migrations;
  };
  auto run = [](Variant v) {
    Rig r = MakeRig(v, "package:1 l3cache:1 core:16 pu:1");
    for (int pair = 0; pair < 32; ++pair) {
      PipeParams pp;
      pp.round_trips = 1000000;
      pp.work_per_message = 5 * kNsPerUs;
      EXPECT_TRUE(RunPipe(*r.sim, r.hooks.get(), pp, 0).ok());
    }
    EXPECT_TRUE(r.sim->RunFor(30 * kNsPerMs).ok());
    const HarnessCounters c = r.hooks->counters();
    EXPECT_EQ(c.invariant_violations, 0);
    const double n = static_cast<double>(std::max<int64_t>(1, c.selections));
    return Out{static_cast<double>(c.probes) / n, 100.0 * static_cast<double>(c.placed_on_busy) / n,
               100.0 * static_cast<double>(c.migrations) / n};
  };
  const Out v0 = run(Variant::kV0), v3 = run(Variant::kV3), v1u = run(Variant::kV1Unbounded);
  std::printf("S12 (probes/wakeup, stacked %%, migrations %%): V0 %.2f %.1f %.1f | V3 %.2f %.1f %.1f | "
              "V1-unbounded %.2f %.1f %.1f\n",
              v0.probes, v0.stacked, v0.migrations, v3.probes, v3.stacked, v3.migrations, v1u.probes,
              v1u.stacked, v1u.migrations);
  EXPECT_GE(v1u.probes, v3.probes);
  EXPECT_LE(v3.probes, 4.0);
}

// S19 (seed: hackbench) and S20 (seed: pipe), scaled down, on the
// simulator: every run completes, and in modelled time V1 stays close to V0
// (the seed: -1.07..-0.54 % hackbench, +1.05 % pipe, not significant).
// Modelled time is deterministic, so the bound is not a host-timing check.
double MeanDuration(Variant v, bool pipe) {
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
  const double v0 = MeanDuration(Variant::kV0, false);
  const double v1 = MeanDuration(Variant::kV1, false);
  std::printf("S19: hackbench-2 modelled mean V0 %.0f ns, V1 %.0f ns (%+.2f %%)\n", v0, v1, 100 * (v1 - v0) / v0);
  EXPECT_NEAR(v1 / v0, 1.0, 0.05);
}

TEST(IdleSelectHarnessScenarios, S20_PipeV1CloseToV0) {
  const double v0 = MeanDuration(Variant::kV0, true);
  const double v1 = MeanDuration(Variant::kV1, true);
  EXPECT_NEAR(v1 / v0, 1.0, 0.02);
}

// S21: schbench-like batch wake: every worker wakeup is measured (wake ->
// run) for V0, V1-tickstop and V4, and every run completes.
TEST(IdleSelectHarnessScenarios, S21_BatchWakeLatencyRecorded) {
  for (Variant v : {Variant::kV0, Variant::kV1TickStop, Variant::kV4Global}) {
    Rig r = MakeRig(v, "package:1 l3cache:2 core:4 pu:1");
    SchbenchParams sp;
    sp.message_tasks = 2;
    sp.workers_per_message = 4;
    sp.rounds = 50;
    auto s = RunSchbench(*r.sim, r.hooks.get(), sp, 2 * kNsPerSec);
    ASSERT_TRUE(s.ok()) << s.status();
    EXPECT_TRUE(s->completed) << VariantName(v);
    ASSERT_EQ(s->latencies.size(), 2u * 4u * 50u);
    for (Nanos l : s->latencies) ASSERT_GE(l, 0);
  }
}

}  // namespace
}  // namespace isolation::idle_select
