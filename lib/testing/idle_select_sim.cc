// SPDX-License-Identifier: GPL-2.0-or-later
// The idle_select driver suite (IdleSelectSimConformance): the run-queue
// harness (IdleSelectHooks) placing every wakeup with the selector, on the
// deterministic simulator and (bounded) on real threads.  Labels are those of
// docs/idle_select.md.

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "isolation/core/isolation_config.h"
#include "isolation/core/topology.h"
#include "isolation/idle_select/workload.h"
#include "isolation/runtime/real_driver.h"
#include "isolation/runtime/sim.h"
#include "isolation/testing/idle_select.h"
#include "testing/idle_select_checks.h"

namespace isolation::testing::idle_select_conformance {
namespace {

struct Rig {
  std::unique_ptr<is::IdleState> state;
  std::unique_ptr<is::IdleSelectHooks> hooks;
  std::unique_ptr<Simulator> sim;
};

// A simulator (HZ 250) running the harness with `sel` on `synthetic`.
std::unique_ptr<Rig> MakeRig(const std::string& sel, const std::string& synthetic,
                             const std::string& isolcpus, uint64_t seed, Violations& v) {
  auto topo = Topology::FromSynthetic(synthetic);
  if (!topo.ok()) {
    v.push_back(topo.status().ToString());
    return nullptr;
  }
  auto iso = IsolationConfig::FromFlags(*topo, isolcpus, "");
  if (!iso.ok()) {
    v.push_back(iso.status().ToString());
    return nullptr;
  }
  auto rig = std::make_unique<Rig>();
  rig->state = StateOrViolation(sel, is::IdleTopology::From(*topo, *iso), {}, v);
  if (rig->state == nullptr) return nullptr;
  rig->hooks = std::make_unique<is::IdleSelectHooks>(*rig->state);
  SimOptions so;
  so.seed = seed;
  so.hz = 250;
  auto sim = Simulator::Create(*topo, *iso, so);
  if (!sim.ok()) {
    v.push_back(sim.status().ToString());
    return nullptr;
  }
  rig->sim = *std::move(sim);
  rig->sim->AddHooks(rig->hooks.get());
  return rig;
}

void ExpectClean(const Rig& r, const std::string& what, Violations& v) {
  const is::HarnessCounters c = r.hooks->counters();
  if (c.selections == 0) v.push_back(what + ": no wakeup went through the selector");
  if (c.invariant_violations != 0) {
    v.push_back(absl::StrCat(what, ": ", c.invariant_violations,
                             " placements outside the task's affinity (I3)"));
  }
  if (std::string e = r.state->CheckSubsetInvariant(); !e.empty()) v.push_back(what + ": " + e);
}

// I11 / no lost wakeup: hackbench groups, sched-pipe ping-pong and a
// schbench-like batch wake run to completion on 2 LLCs x 4 cores x 2 threads.
Violations CheckSimWorkloads(const std::string& sel) {
  Violations v;
  auto r = MakeRig(sel, "package:1 l3cache:2 core:4 pu:2", "", 1, v);
  if (r == nullptr) return v;
  is::HackbenchParams hb;
  hb.groups = 2;
  hb.senders = 4;
  hb.messages = 20;
  auto h = is::RunHackbench(*r->sim, r->hooks.get(), hb, 2 * kNsPerSec);
  if (!h.ok()) return {h.status().ToString()};
  if (!h->completed) v.push_back("hackbench: a task was left blocked (lost wakeup)");
  if (h->operations != 2 * 4 * 4 * 20)
    v.push_back(absl::StrCat("hackbench: ", h->operations, " messages of 640"));
  is::PipeParams pp;
  pp.round_trips = 500;
  auto p = is::RunPipe(*r->sim, r->hooks.get(), pp, 2 * kNsPerSec);
  if (!p.ok()) return {p.status().ToString()};
  if (!p->completed || p->operations != 500)
    v.push_back(absl::StrCat("pipe: ", p->operations, " of 500 round trips"));
  is::SchbenchParams sp;
  sp.message_tasks = 2;
  sp.workers_per_message = 4;
  sp.rounds = 30;
  auto s = is::RunSchbench(*r->sim, r->hooks.get(), sp, 2 * kNsPerSec);
  if (!s.ok()) return {s.status().ToString()};
  if (!s->completed || s->latencies.size() != 2u * 4u * 30u) {
    v.push_back(absl::StrCat("schbench: ", s->latencies.size(), " of 240 wakeups measured"));
  }
  ExpectClean(*r, "simulator workloads", v);
  return v;
}

// S14 / S16 on the simulator with the concurrent-wakeup windows open
// (SimOptions::wake_select_cost, idle_entry_cost): the RR analogue at 75 %
// of 16 CPUs (kernel wake_affine, as S12) for 10 ms.  No lost wakeup, seen
// by the simulator (a CPU asleep with a woken task queued) and by the
// harness; the run makes progress.
Violations CheckSimConcurrentWakeups(const std::string& sel) {
  Violations v;
  auto topo = Topology::FromSynthetic("package:1 l3cache:1 core:16 pu:1");
  if (!topo.ok()) return {topo.status().ToString()};
  IsolationConfig iso(*topo);
  auto st = StateOrViolation(sel, is::IdleTopology::From(*topo, iso), {}, v);
  if (st == nullptr) return v;
  is::HarnessOptions ho;
  ho.wake_affine_kernel = true;
  is::IdleSelectHooks hooks(*st, ho);
  SimOptions so;
  so.seed = 1;
  so.hz = 250;
  so.wake_select_cost = is::kConcurrentWakeSelectCost;
  so.idle_entry_cost = is::kConcurrentIdleEntryCost;
  auto sim = Simulator::Create(*topo, iso, so);
  if (!sim.ok()) return {sim.status().ToString()};
  (*sim)->AddHooks(&hooks);
  auto r = is::RunLoadPoint(**sim, hooks, is::LoadWorkload::kRequestResponse, 75, 10 * kNsPerMs);
  if (!r.ok()) return {r.status().ToString()};
  if ((*sim)->lost_wakeups() != 0) {
    v.push_back(
        absl::StrCat("S16: ", (*sim)->lost_wakeups(),
                     " CPUs slept with a woken task queued (the idle-entry re-check was skipped)"));
  }
  if (r->counters.lost_wakeups != 0) {
    v.push_back(
        absl::StrCat("S16: the harness counted ", r->counters.lost_wakeups, " lost wakeups"));
  }
  if (r->value <= 0) v.push_back("concurrent wakeups: no round trip completed");
  if (r->counters.invariant_violations != 0) {
    v.push_back(absl::StrCat("concurrent wakeups: ", r->counters.invariant_violations,
                             " placements outside the task's affinity (I3)"));
  }
  return v;
}

// I3 under the driver: every task of a hackbench group confined to CPUs 2-5.
Violations CheckSimAffinity(const std::string& sel) {
  Violations v;
  auto r = MakeRig(sel, "package:1 l3cache:2 core:8 pu:1", "", 1, v);
  if (r == nullptr) return v;
  is::HackbenchParams hb;
  hb.groups = 1;
  hb.senders = 3;
  hb.messages = 20;
  auto h = is::RunHackbench(*r->sim, r->hooks.get(), hb, 2 * kNsPerSec, CpuMask::Range(16, 2, 5));
  if (!h.ok()) return {h.status().ToString()};
  if (!h->completed) v.push_back("hackbench on CPUs 2-5 did not complete");
  for (int c = 0; c < 16; ++c) {
    if ((c < 2 || c > 5) && r->sim->Stats(c).context_switches != 0) {
      v.push_back(absl::StrCat("I3: cpu ", c, " outside the affinity 2-5 ran a task"));
    }
  }
  ExpectClean(*r, "affinity run", v);
  return v;
}

// The same seed gives the same run.
Violations CheckSimDeterministic(const std::string& sel) {
  Violations v;
  auto once = [&]() -> std::pair<Nanos, int64_t> {
    auto r = MakeRig(sel, "package:1 l3cache:1 core:8 pu:1", "", 7, v);
    if (r == nullptr) return {-1, -1};
    is::PipeParams pp;
    pp.round_trips = 200;
    pp.pairs = 2;
    auto p = is::RunPipe(*r->sim, r->hooks.get(), pp, kNsPerSec);
    if (!p.ok()) return {-2, -2};
    const is::HarnessCounters c = r->hooks->counters();
    return {p->duration_ns, c.probes * 1000003 + c.selections};
  };
  const auto a = once();
  const auto b = once();
  if (a != b) {
    v.push_back(absl::StrCat("two runs with seed 7 differ: duration ", a.first, " vs ", b.first,
                             ", counters ", a.second, " vs ", b.second));
  }
  return v;
}

// S7 under the driver: isolcpus=domain,8-15.  Twelve tasks start on the
// housekeeping CPUs 0-7 with no affinity restriction (all 16 CPUs allowed)
// and wake each other in a ring; wakeup selection alone must keep every one
// of them off 8-15, so no isolated CPU ever switches to a task.
Violations CheckSimIsolation(const std::string& sel) {
  Violations v;
  auto r = MakeRig(sel, "package:1 l3cache:1 core:16 pu:1", "domain,8-15", 1, v);
  if (r == nullptr) return v;
  constexpr int kTasks = 12;
  constexpr int kRounds = 200;
  auto ids = std::make_shared<std::vector<TaskId>>(kTasks, kIdleTask);
  auto done = std::make_shared<int>(0);
  for (int i = 0; i < kTasks; ++i) {
    struct State {
      int rounds = 0;
      bool woke_next = false;
    };
    auto body = MakeTaskBody([ids, done, i, st = State()](TaskContext& ctx) mutable -> Step {
      if (!st.woke_next) {
        st.woke_next = true;
        return Step::Run((10 + 7 * (i % 5)) * kNsPerUs);
      }
      st.woke_next = false;
      ctx.driver().Wake((*ids)[static_cast<size_t>((i + 1) % kTasks)], ctx.cpu());
      if (++st.rounds == kRounds) {
        ++*done;
        return Step::Exit();
      }
      return Step::Block();
    });
    TaskSpec spec;
    spec.name = absl::StrCat("ring-", i);
    spec.cpu = i % 8;  // housekeeping CPUs only; affinity: every CPU
    spec.body = std::move(body);
    auto id = r->sim->Spawn(std::move(spec));
    if (!id.ok()) return {id.status().ToString()};
    (*ids)[static_cast<size_t>(i)] = *id;
  }
  for (int step = 0; step < 400 && *done < kTasks; ++step) {
    if (absl::Status s = r->sim->RunFor(kNsPerMs); !s.ok()) return {s.ToString()};
  }
  if (*done == 0) v.push_back("S7: the ring made no progress");
  for (int c = 8; c < 16; ++c) {
    if (r->sim->Stats(c).context_switches != 0) {
      v.push_back(absl::StrCat("S7: isolated cpu ", c, " ran a housekeeping task (",
                               r->sim->Stats(c).context_switches, " context switches)"));
    }
  }
  ExpectClean(*r, "isolation run", v);
  return v;
}

// Bounded real threads (4 model CPUs): the workloads complete, affinity holds.
Violations CheckRealThreads(const std::string& sel) {
  Violations v;
  auto topo = Topology::FromSynthetic("package:1 l3cache:1 core:4 pu:1");
  if (!topo.ok()) return {topo.status().ToString()};
  IsolationConfig iso(*topo);
  auto st = StateOrViolation(sel, is::IdleTopology::From(*topo, iso), {}, v);
  if (st == nullptr) return v;
  is::IdleSelectHooks hooks(*st);
  RealDriverOptions ro;
  ro.hz = 250;
  auto d = RealThreadDriver::Create(*topo, iso, ro);
  if (!d.ok()) return {d.status().ToString()};
  (*d)->AddHooks(&hooks);
  is::HackbenchParams hb;
  hb.groups = 1;
  hb.senders = 3;
  hb.messages = 10;
  auto h = is::RunHackbench(**d, &hooks, hb, 3 * kNsPerSec, CpuMask::Range(4, 0, 2));
  if (!h.ok()) return {h.status().ToString()};
  if (!h->completed || h->operations != 90)
    v.push_back("real threads: hackbench left a task blocked");
  is::PipeParams pp;
  pp.round_trips = 200;
  auto p = is::RunPipe(**d, &hooks, pp, 3 * kNsPerSec);
  if (!p.ok()) return {p.status().ToString()};
  if (!p->completed) v.push_back("real threads: pipe did not complete");
  const is::HarnessCounters c = hooks.counters();
  if (c.invariant_violations != 0)
    v.push_back("real threads: placements outside the affinity (I3)");
  if (c.selections == 0) v.push_back("real threads: no wakeup went through the selector");
  d->reset();  // join the CPU threads before the quiescent check
  if (std::string e = st->CheckSubsetInvariant(); !e.empty()) v.push_back(e);
  return v;
}

}  // namespace

const std::vector<CheckImpl>& SimChecks() {
  static const auto* checks = new std::vector<CheckImpl>{
      {"Sim_NoLostWakeup_AllWorkloadsComplete", "IdleSelectSimConformance",
       "hackbench, pipe and batch-wake workloads complete on the simulator", &Always,
       &CheckSimWorkloads,
       "hackbench 2x4x20, pipe 500 round trips, schbench 2x4x30; 16-CPU 2-LLC SMT2 simulator"},
      {"Sim_ConcurrentWakeups_NoLostWakeup", "IdleSelectSimConformance",
       "S14/S16 on the simulator: with the select->enqueue and idle-entry windows open, no lost "
       "wakeup",
       &Always, &CheckSimConcurrentWakeups,
       "rr at 75 % for 10 ms virtual time, 16-CPU 1-LLC simulator, both windows open"},
      {"Sim_I3_AffinityUnderDriver", "IdleSelectSimConformance",
       "tasks confined by affinity stay there", &Always, &CheckSimAffinity,
       "hackbench 1x3x20 confined to CPUs 2-5, 16-CPU 2-LLC simulator"},
      {"Sim_Deterministic", "IdleSelectSimConformance", "a seed fixes the run", &Always,
       &CheckSimDeterministic, "2 runs of pipe 2 pairs x 200 round trips, 8-CPU simulator"},
      {"Sim_S7_HousekeepingStaysOffIsolatedCpus", "IdleSelectSimConformance",
       "wakeups alone keep unrestricted housekeeping tasks off isolcpus=domain CPUs",
       &ScanStyleOnly, &CheckSimIsolation,
       "12 tasks x 200 ring wakeups (<= 400 ms virtual), 16-CPU simulator, 8 isolated CPUs"},
      {"RealThreads_NoLostWakeup", "IdleSelectSimConformance",
       "bounded real-thread workloads complete", &Always, &CheckRealThreads,
       "hackbench 1x3x10 and pipe 200 round trips, 4 real CPU threads"},
  };
  return *checks;
}

int SimAnchor() { return 3; }

}  // namespace isolation::testing::idle_select_conformance

using ::isolation::testing::idle_select_conformance::RunAsTest;

GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(IdleSelectSimConformance);

TEST_P(IdleSelectSimConformance, Sim_NoLostWakeup_AllWorkloadsComplete) {
  RunAsTest("Sim_NoLostWakeup_AllWorkloadsComplete", GetParam());
}
TEST_P(IdleSelectSimConformance, Sim_ConcurrentWakeups_NoLostWakeup) {
  RunAsTest("Sim_ConcurrentWakeups_NoLostWakeup", GetParam());
}
TEST_P(IdleSelectSimConformance, Sim_I3_AffinityUnderDriver) {
  RunAsTest("Sim_I3_AffinityUnderDriver", GetParam());
}
TEST_P(IdleSelectSimConformance, Sim_Deterministic) { RunAsTest("Sim_Deterministic", GetParam()); }
TEST_P(IdleSelectSimConformance, Sim_S7_HousekeepingStaysOffIsolatedCpus) {
  RunAsTest("Sim_S7_HousekeepingStaysOffIsolatedCpus", GetParam());
}
TEST_P(IdleSelectSimConformance, RealThreads_NoLostWakeup) {
  RunAsTest("RealThreads_NoLostWakeup", GetParam());
}
