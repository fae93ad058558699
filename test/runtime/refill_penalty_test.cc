// SPDX-License-Identifier: GPL-2.0-or-later
// Simulator: the cache-refill penalty of placement (SimOptions::refill_penalty)
// -- its size per topology distance, nothing when off, and
// traces unchanged while it is off.

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "isolation/core/driver.h"
#include "isolation/runtime/sim.h"
#include "isolation/testing/machine.h"
#include "isolation/testing/status_matchers.h"
#include "test_util.h"

namespace isolation {
namespace {

using ::isolation::testing::MachineBuilder;

using runtime_testing::Spec;

// 2 nodes x 2 LLCs x 2 cores x 2 SMT threads: from CPU 0, CPU 1 is its SMT
// sibling, 2 another core of its LLC, 4 another LLC of its node, 8 another
// node.
constexpr char kTopo[] = "numa:2 l3cache:2 core:2 pu:2";

CacheRefillPenalty DistinctPenalty(bool enabled) {
  CacheRefillPenalty p;
  p.enabled = enabled;
  p.smt_sibling = 1 * kNsPerUs;
  p.cross_core_same_llc = 3 * kNsPerUs;
  p.cross_llc = 7 * kNsPerUs;
  p.cross_node = 13 * kNsPerUs;
  return p;
}

TEST(RefillPenalty, DistanceFollowsTheTopologyLevels) {
  ISOLATION_ASSERT_OK_AND_ASSIGN(Topology t, Topology::FromSynthetic(kTopo));
  ASSERT_EQ(t.num_cpus(), 16);
  EXPECT_EQ(CacheDistanceBetween(t, 0, 0), CacheDistance::kSameCpu);
  EXPECT_EQ(CacheDistanceBetween(t, 0, 1), CacheDistance::kSmtSibling);
  EXPECT_EQ(CacheDistanceBetween(t, 0, 2), CacheDistance::kCrossCoreSameLlc);
  EXPECT_EQ(CacheDistanceBetween(t, 0, 4), CacheDistance::kCrossLlc);
  EXPECT_EQ(CacheDistanceBetween(t, 0, 8), CacheDistance::kCrossNode);
  EXPECT_EQ(CacheDistanceBetween(t, 15, 3), CacheDistance::kCrossNode);
  EXPECT_STREQ(CacheDistanceName(CacheDistance::kCrossLlc), "cross_llc");
  const CacheRefillPenalty on = DistinctPenalty(true);
  EXPECT_EQ(on.For(CacheDistance::kSameCpu), 0);
  EXPECT_EQ(on.For(CacheDistance::kSmtSibling), 1 * kNsPerUs);
  EXPECT_EQ(on.For(CacheDistance::kCrossNode), 13 * kNsPerUs);
  EXPECT_EQ(DistinctPenalty(false).For(CacheDistance::kCrossNode), 0);
  // The stated defaults, off.
  const CacheRefillPenalty def;
  EXPECT_FALSE(def.enabled);
  EXPECT_EQ(def.smt_sibling, 0);
  EXPECT_EQ(def.cross_core_same_llc, 5 * kNsPerUs);
  EXPECT_EQ(def.cross_llc, 16 * kNsPerUs);
  EXPECT_EQ(def.cross_node, 25 * kNsPerUs);
  EXPECT_FALSE(SimOptions{}.refill_penalty.enabled);
}

struct MoveResult {
  Nanos second_run = 0;  // how long the work after the move lasted
  SimPlacementStats stats;
};

// A task runs `kWork` on CPU 0, sleeps, is woken onto `to` by a placement
// hook and runs `kWork` again; every modelled cost but the penalty is 0.
// A failed set-up is a fatal failure (callers: ASSERT_NO_FATAL_FAILURE).
constexpr Nanos kWork = 100 * kNsPerUs;
void RunOneMove(int to, const CacheRefillPenalty& penalty, MoveResult* out) {
  SimOptions o = ZeroCostSimOptions(1000);
  o.refill_penalty = penalty;
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto sim, MachineBuilder().Topology(kTopo).Simulator(o));
  struct Placer : Hooks {
    int SelectTaskCpu(TaskId, int, int, Nanos) override { return to; }
    int to = 0;
  } placer;
  placer.to = to;
  sim->AddHooks(&placer);
  std::vector<Nanos> calls;
  ISOLATION_EXPECT_OK(sim->Spawn(Spec("mover", 0, [&](TaskContext& ctx) {
    calls.push_back(ctx.now());
    switch (calls.size()) {
      case 1:
        return Step::Run(kWork);
      case 2:
        return Step::Sleep(kNsPerMs);
      case 3:
        return Step::Run(kWork);
      default:
        return Step::Exit();
    }
  })));
  ISOLATION_EXPECT_OK(sim->RunFor(10 * kNsPerMs));
  EXPECT_EQ(calls.size(), 4u);
  EXPECT_EQ(sim->TaskCpu(0), to);
  MoveResult r;
  if (calls.size() == 4) {
    EXPECT_EQ(calls[1] - calls[0], kWork);  // the first run pays nothing (no warm CPU yet)
    r.second_run = calls[3] - calls[2];
  }
  r.stats = sim->placement_stats();
  *out = r;
}

TEST(RefillPenalty, ChargedAsExtraRunTimeSizedByDistance) {
  const struct {
    int to;
    CacheDistance d;
    Nanos cost;
  } cases[] = {{0, CacheDistance::kSameCpu, 0},
               {1, CacheDistance::kSmtSibling, 1 * kNsPerUs},
               {2, CacheDistance::kCrossCoreSameLlc, 3 * kNsPerUs},
               {4, CacheDistance::kCrossLlc, 7 * kNsPerUs},
               {8, CacheDistance::kCrossNode, 13 * kNsPerUs}};
  for (const auto& c : cases) {
    SCOPED_TRACE(absl::StrCat("to cpu ", c.to, " (", CacheDistanceName(c.d), ")"));
    MoveResult on;
    ASSERT_NO_FATAL_FAILURE(RunOneMove(c.to, DistinctPenalty(true), &on));
    EXPECT_EQ(on.second_run, kWork + c.cost);
    for (int d = 0; d < kNumCacheDistances; ++d) {
      EXPECT_EQ(on.stats.moves[static_cast<size_t>(d)],
                d == static_cast<int>(c.d) && c.to != 0 ? 1 : 0)
          << d;
    }
    EXPECT_EQ(on.stats.penalties, c.cost > 0 ? 1 : 0);
    EXPECT_EQ(on.stats.penalty_ns, c.cost);
  }
}

TEST(RefillPenalty, ZeroWhenOffButMovesStillCounted) {
  for (int to : {1, 2, 4, 8}) {
    SCOPED_TRACE(absl::StrCat("to cpu ", to));
    MoveResult off;
    ASSERT_NO_FATAL_FAILURE(RunOneMove(to, DistinctPenalty(false), &off));
    EXPECT_EQ(off.second_run, kWork);
    int64_t moves = 0;
    for (int64_t m : off.stats.moves) moves += m;
    EXPECT_EQ(moves, 1);
    EXPECT_EQ(off.stats.penalties, 0);
    EXPECT_EQ(off.stats.penalty_ns, 0);
  }
}

// A run evicted mid-way (its CPU's affinity is taken away) pays on its new
// CPU for the rest; one interrupted by ticks on its own CPU pays nothing.
TEST(RefillPenalty, EvictedMidRunPaysOnceOnTheNewCpu) {
  SimOptions o = ZeroCostSimOptions(1000);
  o.refill_penalty = DistinctPenalty(true);
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto sim, MachineBuilder().Topology(kTopo).Simulator(o));
  std::vector<Nanos> calls;
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto id, sim->Spawn(Spec("long", 0, [&](TaskContext& ctx) {
    calls.push_back(ctx.now());
    return calls.size() == 1 ? Step::Run(5 * kNsPerMs) : Step::Exit();
  })));
  sim->At(2 * kNsPerMs, [&] { ISOLATION_EXPECT_OK(sim->SetAffinity(id, CpuMask::Of(16, 8))); });
  ISOLATION_ASSERT_OK(sim->RunFor(20 * kNsPerMs));
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(sim->TaskCpu(id), 8);
  EXPECT_EQ(calls[1] - calls[0], 5 * kNsPerMs + 13 * kNsPerUs);
  EXPECT_EQ(sim->placement_stats().penalties, 1);
  EXPECT_EQ(sim->placement_stats().moves[static_cast<size_t>(CacheDistance::kCrossNode)], 1);
}

// A workload whose tasks wander over the machine: its trace hash, or a fatal
// failure of the set-up (callers: ASSERT_NO_FATAL_FAILURE).
void WanderingTraceHash(const SimOptions& o, int64_t* penalties, uint64_t* hash) {
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto sim, MachineBuilder().Topology(kTopo).Simulator(o));
  struct Placer : Hooks {
    int SelectTaskCpu(TaskId task, int prev, int, Nanos) override { return (prev + 3 + task) % 16; }
  } placer;
  sim->AddHooks(&placer);
  for (int i = 0; i < 6; ++i) {
    ISOLATION_EXPECT_OK(sim->Spawn(Spec(absl::StrCat("w", i), i, [](TaskContext& ctx) {
      return ctx.rng()() % 2 == 0
                 ? Step::Run(30 * kNsPerUs + static_cast<Nanos>(ctx.rng()() % 1000))
                 : Step::Sleep(50 * kNsPerUs);
    })));
  }
  ISOLATION_EXPECT_OK(sim->RunFor(20 * kNsPerMs));
  *penalties = sim->placement_stats().penalties;
  *hash = sim->TraceHash();
}

TEST(RefillPenalty, OffLeavesTheTraceUnchanged) {
  SimOptions def;
  def.seed = 7;
  int64_t p_def = -1, p_off = -1, p_on = -1;
  uint64_t h_def = 0, h_off = 0, h_on = 0;
  ASSERT_NO_FATAL_FAILURE(WanderingTraceHash(def, &p_def, &h_def));
  SimOptions off = def;
  off.refill_penalty = DistinctPenalty(false);  // costs set, not enabled
  ASSERT_NO_FATAL_FAILURE(WanderingTraceHash(off, &p_off, &h_off));
  SimOptions on = def;
  on.refill_penalty = DistinctPenalty(true);
  ASSERT_NO_FATAL_FAILURE(WanderingTraceHash(on, &p_on, &h_on));
  EXPECT_EQ(h_def, h_off);
  EXPECT_EQ(p_def, 0);
  EXPECT_EQ(p_off, 0);
  // The same workload with the penalty on pays it, and its trace differs.
  EXPECT_GT(p_on, 0);
  EXPECT_NE(h_on, h_off);
}

TEST(RefillPenalty, NegativeCostIsAnErrorNamingIt) {
  ISOLATION_ASSERT_OK_AND_ASSIGN(Topology t, Topology::FromSynthetic(kTopo));
  SimOptions o;
  o.refill_penalty.cross_llc = -5;
  auto sim = Simulator::Create(t, IsolationConfig(t), o);
  ASSERT_EQ(sim.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(sim.status().message().find("cross_llc -5"), std::string::npos) << sim.status();
}

}  // namespace
}  // namespace isolation
