// SPDX-License-Identifier: GPL-2.0-or-later
// Misuse of the idle_select API: topology factories and
// IdleState::Create validate (a hand-built IdleTopology too) and return an
// error naming the value; the domain-level calls return absl::Status; the
// per-CPU entry points, the predicates, the inspection accessors and
// Select() fail their contract check naming the value (death tests where the
// checks are compiled in); the harness and the workloads reject bad setups.

#include <climits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/contract_death.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "isolation/core/isolation_config.h"
#include "isolation/core/topology.h"
#include "isolation/idle_select/idle_select.h"
#include "isolation/idle_select/sis_selector.h"
#include "isolation/idle_select/workload.h"
#include "isolation/runtime/sim.h"
#include "isolation/testing/status_matchers.h"

namespace isolation::idle_select {
namespace {

using ::testing::HasSubstr;
using testing_internal::Opaque;

Options Of(const std::string& v) {
  Options o;
  o.variant = v;
  return o;
}

std::unique_ptr<IdleState> State(const std::string& v = "V1", int llcs = 2, int cores = 4) {
  auto st = IdleState::Create(IdleTopology::Uniform(llcs, cores), Of(v)).value();
  return st;
}

// ---- topology factories ----------------------------------------------------------

TEST(IdleSelectMisuse, UniformRejectsEmptyAndNegativeShapesNamingThem) {
  struct Case {
    int llcs, cores, smt, nodes;
  };
  for (const Case& c :
       {Case{0, 0, 1, 1}, Case{-1, 4, 1, 1}, Case{1, 0, 1, 1}, Case{1, 4, 0, 1}, Case{1, 4, 1, 0},
        Case{2, 4, 1, 3}, Case{65536, 65536, 1, 1}, Case{INT_MAX, INT_MAX, INT_MAX, 1}}) {
    const auto t = IdleTopology::Uniform(c.llcs, c.cores, c.smt, c.nodes);
    ASSERT_FALSE(t.ok()) << c.llcs << " " << c.cores;
    EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(t.status().message(),
                HasSubstr(absl::StrCat("llcs=", c.llcs, ", cores_per_llc=", c.cores)));
    // IdleState::Create passes the factory's error through.
    EXPECT_EQ(IdleState::Create(t, Options()).status(), t.status());
  }
  ISOLATION_EXPECT_OK(IdleTopology::Uniform(2, 4, 2, 2));
}

TEST(IdleSelectMisuse, FromIdsRejectsIdsBeyondTheCpuCountBeforeAllocating) {
  const auto t = IdleTopology::FromIds({0, INT_MAX}, {0, 1}, {0, 0});
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(t.status().message(), HasSubstr("llc id 2147483647"));
  EXPECT_THAT(IdleTopology::FromIds({0, 0}, {0, -4}, {0, 0}).status().message(),
              HasSubstr("core id -4"));
  EXPECT_FALSE(IdleTopology::FromIds({0, 1}, {0}, {0, 0}).ok());
  EXPECT_FALSE(IdleTopology::FromIds({}, {}, {}).ok());
}

// An isolation mask of the wrong size dropped the isolation silently.
TEST(IdleSelectMisuse, FromIdsRejectsAnIsolationMaskOfAnotherSize) {
  const std::vector<int> llc(8, 0), node(8, 0);
  std::vector<int> core(8);
  for (int c = 0; c < 8; ++c) core[static_cast<size_t>(c)] = c;
  const auto wrong = IdleTopology::FromIds(llc, core, node, CpuMask::Of(16, 3));
  ASSERT_FALSE(wrong.ok());
  EXPECT_THAT(wrong.status().message(), HasSubstr("domain_isolated mask of 16 bits for 8 CPUs"));
  const auto boot = IdleTopology::FromIds(llc, core, node, CpuMask(), CpuMask::Of(4, 1));
  ASSERT_FALSE(boot.ok());
  EXPECT_THAT(boot.status().message(), HasSubstr("boot_domain_isolated mask of 4 bits"));
  ISOLATION_ASSERT_OK_AND_ASSIGN(const auto right,
                                 IdleTopology::FromIds(llc, core, node, CpuMask::Of(8, 3)));
  EXPECT_TRUE(right.domain_isolated.Test(3));
  ISOLATION_EXPECT_OK(IdleTopology::FromIds(llc, core, node));  // empty masks: none
}

TEST(IdleSelectMisuse, CreateValidatesAHandBuiltTopology) {
  IdleTopology t;
  t.num_cpus = 4;  // and nothing else filled in
  auto st = IdleState::Create(t, Options());
  ASSERT_FALSE(st.ok());
  EXPECT_THAT(st.status().message(), HasSubstr("hw_llc_of has 0 entries for 4 cpus"));

  IdleTopology good = *IdleTopology::Uniform(1, 4);
  IdleTopology bad_llc = good;
  bad_llc.llc_of[2] = 5;
  EXPECT_THAT(IdleState::Create(bad_llc, Options()).status().message(),
              HasSubstr("cpu 2 has llc id 5"));
  IdleTopology bad_mask = good;
  bad_mask.online = CpuMask::Full(64);
  EXPECT_THAT(IdleState::Create(bad_mask, Options()).status().message(), HasSubstr("64 bits"));
  IdleTopology too_big = good;
  too_big.num_cpus = kMaxCpus + 1;
  EXPECT_THAT(IdleState::Create(too_big, Options()).status().message(), HasSubstr("num_cpus 8193"));
  IdleTopology zero;
  EXPECT_FALSE(IdleState::Create(zero, Options()).ok());
}

TEST(IdleSelectMisuse, CreateRejectsUnknownSelectorAndProbeLimit) {
  Options o;
  o.variant = "V9";
  const auto unknown = IdleState::Create(IdleTopology::Uniform(1, 4), o);
  EXPECT_EQ(unknown.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(unknown.status().message(), HasSubstr("'V9'"));
  EXPECT_THAT(unknown.status().message(), HasSubstr("registered: V0, V1"));
  o.variant = "";
  EXPECT_THAT(IdleState::Create(IdleTopology::Uniform(1, 4), o).status().message(),
              HasSubstr("''"));
  Options p;
  p.v3_max_probes = 0;
  EXPECT_THAT(IdleState::Create(IdleTopology::Uniform(1, 4), p).status().message(),
              HasSubstr("v3_max_probes 0"));
}

TEST(IdleSelectMisuse, SisUtilBudgetOfExtremeInputsDoesNotOverflow) {
  EXPECT_EQ(SisUtilBudget(INT64_MAX, 8), 0);  // x^2 * pct^2 overflowed int64
  EXPECT_EQ(SisUtilBudget(INT64_MAX, 1, INT_MAX), 0);
  EXPECT_EQ(SisUtilBudget(-1, 8), 0);
  EXPECT_EQ(SisUtilBudget(100, 0), 0);
  EXPECT_EQ(SisUtilBudget(0, 8), 8);
}

// ---- domain-level calls: absl::Status ------------------------------------------------

TEST(IdleSelectMisuse, UpdateIdleCpuScanOfUnknownLlcIsAnError) {
  auto st = State();
  for (int l : {-1, 2, 1000, INT_MAX}) {
    const absl::Status s = st->UpdateIdleCpuScan(l, 1024);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << l;
    EXPECT_THAT(s.message(), HasSubstr(absl::StrCat("llc ", l))) << l;
  }
  EXPECT_EQ(st->TotalSharedWrites(), 0);
  ISOLATION_EXPECT_OK(st->UpdateIdleCpuScan(1, 1024));
}

TEST(IdleSelectMisuse, SetBudgetRejectsUnknownLlcAndNegativeBudget) {
  auto st = State();
  EXPECT_THAT(st->SetBudget(7, 2).message(), HasSubstr("llc 7"));
  EXPECT_THAT(st->SetBudget(0, -3).message(), HasSubstr("nr_idle_scan -3"));
  EXPECT_EQ(st->llc(0).nr_idle_scan, 4);
}

TEST(IdleSelectMisuse, SetIdleCoresHintRejectsUnknownLlc) {
  auto st = State();
  EXPECT_THAT(st->SetIdleCoresHint(2, true).message(), HasSubstr("llc 2"));
  EXPECT_THAT(st->SetIdleCoresHint(-1, false).message(), HasSubstr("llc -1"));
  ISOLATION_EXPECT_OK(st->SetIdleCoresHint(1, true));
}

TEST(IdleSelectMisuse, SelectorFactoryErrorsArePassedThrough) {
  const auto refused =
      IdleState::Create(*IdleTopology::Uniform(1, 4), Options(),
                        [](IdleState&) -> absl::StatusOr<std::unique_ptr<IdleSelector>> {
                          return absl::UnavailableError("my selector needs 8 CPUs");
                        });
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(refused.status().message(), HasSubstr("needs 8 CPUs"));
  const auto null =
      IdleState::Create(*IdleTopology::Uniform(1, 4), Options(),
                        [](IdleState&) -> absl::StatusOr<std::unique_ptr<IdleSelector>> {
                          return std::unique_ptr<IdleSelector>();
                        });
  EXPECT_EQ(null.status().code(), absl::StatusCode::kInternal);
  EXPECT_FALSE(IdleState::Create(*IdleTopology::Uniform(1, 4), Options(), nullptr).ok());
}

TEST(IdleSelectMisuse, RegisterSelectorRejectsBadNamesNamingThem) {
  EXPECT_THAT(RegisterSelector(SelectorEntryOf<SisSelector>("bad name", "x")).message(),
              HasSubstr("'bad name'"));
  EXPECT_THAT(RegisterSelector(SelectorEntryOf<SisSelector>("v0", "x")).message(),
              HasSubstr("'v0'"));
  EXPECT_FALSE(RegisterSelector(SelectorEntry{"no-factory", "x", false, nullptr}).ok());
}

TEST(IdleSelectMisuse, RebuildWithMaskOfWrongSizeIsAnErrorAndChangesNothing) {
  auto st = State();
  const std::vector<int> llc_of = st->topology().llc_of;
  const absl::Status s = st->Rebuild(CpuMask::Full(64));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("64 bits"));
  EXPECT_EQ(st->topology().llc_of, llc_of);
  ISOLATION_EXPECT_OK(st->Rebuild(CpuMask()));  // 0 bits: no isolation
  EXPECT_TRUE(st->CheckSubsetInvariant().empty());
}

// ---- per-CPU entry points, predicates, inspection: contracts ------------------------

TEST(IdleSelectMisuse, IdleEnterOnCpuBeyondTheMachineViolatesContract) {
  auto st = State();
  EXPECT_CONTRACT_DEATH(st->IdleEnter(Opaque(8)), "idle_select: cpu 8 outside");
}

// Found by an outside probe: SharesCache(-1, 100000) read past the tables.
TEST(IdleSelectMisuse, SharesCacheAndSiblingsOfACpuOutsideTheMachineViolateContract) {
  ISOLATION_ASSERT_OK_AND_ASSIGN(IdleTopology t, IdleTopology::Uniform(2, 4));
  EXPECT_TRUE(t.SharesCache(0, 3));
  EXPECT_FALSE(t.SharesCache(0, 4));
  EXPECT_CONTRACT_DEATH((void)t.SharesCache(Opaque(-1), 100000),
                        "SharesCache\\(-1, 100000\\): a CPU outside");
  EXPECT_CONTRACT_DEATH((void)t.siblings(Opaque(8)), "siblings\\(8\\): a CPU outside");
}

TEST(IdleSelectMisuse, EnqueueOnNegativeCpuViolatesContract) {
  auto st = State();
  EXPECT_CONTRACT_DEATH(st->Enqueue(Opaque(-1)), "idle_select: cpu -1 outside");
}

TEST(IdleSelectMisuse, TickAndTickStopOnCpu1000ViolateContract) {
  auto st = State("V0");  // V0's tick touches nothing: the check is explicit
  EXPECT_CONTRACT_DEATH(st->Tick(Opaque(1000)), "idle_select: cpu 1000 outside");
  EXPECT_CONTRACT_DEATH(st->TickStop(Opaque(1000)), "idle_select: cpu 1000 outside");
  EXPECT_CONTRACT_DEATH(st->IdleRefresh(Opaque(1000)), "idle_select: cpu 1000 outside");
}

TEST(IdleSelectMisuse, PredicateOnCpuBeyondTheMachineViolatesContract) {
  auto st = State();
  EXPECT_CONTRACT_DEATH((void)st->IdleCpu(Opaque(8)), "idle_select: cpu 8 outside");
}

TEST(IdleSelectMisuse, InspectionOfUnknownIdsViolatesContract) {
  auto st = State("V4n");
  EXPECT_CONTRACT_DEATH((void)st->llc(Opaque(99)), "idle_select: llc 99 outside");
  EXPECT_CONTRACT_DEATH((void)st->nr_idle_scan(Opaque(5)), "idle_select: llc 5 outside");
  EXPECT_CONTRACT_DEATH((void)st->llc_span(Opaque(-2)), "idle_select: llc -2 outside");
  EXPECT_CONTRACT_DEATH((void)st->cpu(Opaque(8)), "idle_select: cpu 8 outside");
  EXPECT_CONTRACT_DEATH((void)st->llc_of(Opaque(-1)), "idle_select: cpu -1 outside");
}

TEST(IdleSelectMisuse, SelectWithPrevCpuBeyondTheMachineViolatesContract) {
  auto st = State();
  WakeTask task;
  task.prev_cpu = Opaque(8);
  EXPECT_CONTRACT_DEATH((void)st->Select(task, WakeContext()), "Select: prev_cpu 8 outside");
}

TEST(IdleSelectMisuse, SelectWithTargetOrWakerBeyondTheMachineViolatesContract) {
  auto st = State("V4g");
  WakeTask task;
  WakeContext far_target;
  far_target.target = Opaque(1000);
  EXPECT_CONTRACT_DEATH((void)st->Select(task, far_target), "Select: target 1000 outside");
  WakeContext bad_waker;
  bad_waker.waker_cpu = Opaque(-5);
  EXPECT_CONTRACT_DEATH((void)st->Select(task, bad_waker), "Select: waker_cpu -5 outside");
}

TEST(IdleSelectMisuse, SelectWithAffinityOfWrongSizeViolatesContract) {
  auto st = State();
  const CpuMask wide = CpuMask::Full(64);
  WakeTask task;
  task.affinity = &wide;
  EXPECT_CONTRACT_DEATH((void)st->Select(task, WakeContext()),
                        "Select: affinity of 64 bits for 8 cpus");
  WakeTask recent;
  recent.recent_used_cpu = Opaque(99);
  EXPECT_CONTRACT_DEATH((void)st->Select(recent, WakeContext()),
                        "Select: recent_used_cpu 99 outside");
}

// An empty affinity allows no CPU: every built-in answers "none" (cpu -1,
// not idle, nothing claimed).  V0, V1, V3 and V5 once returned CPU 0 as an
// idle CPU found; V4 already returned -1.
TEST(IdleSelectMisuse, SelectWithEmptyAffinityFindsNoCpu) {
  for (const std::string& v : SelectorNames(/*include_negative_controls=*/true)) {
    SCOPED_TRACE(v);
    auto st = State(v);  // every CPU idle
    const CpuMask none(st->num_cpus());
    for (int prev : {0, 3, 7}) {
      WakeTask task;
      task.prev_cpu = prev;
      task.affinity = &none;
      WakeContext ctx;
      ctx.target = prev == 3 ? -1 : 0;
      ctx.waker_cpu = 5;
      ctx.sync = prev == 7;
      const Selection s = st->Select(task, ctx);
      EXPECT_EQ(s.cpu, -1) << "prev " << prev;
      EXPECT_FALSE(s.idle_found()) << "prev " << prev;
      EXPECT_FALSE(s.claimed) << "prev " << prev;
    }
  }
}

// ---- the harness ------------------------------------------------------------------------

TEST(IdleSelectHarnessMisuse, HugeMaxTasksViolatesContract) {
  auto st = State();
  HarnessOptions o;
  o.max_tasks = Opaque(INT_MAX);
  EXPECT_CONTRACT_DEATH(IdleSelectHooks h(*st, o), "max_tasks 2147483647 outside");
}

TEST(IdleSelectHarnessMisuse, RegisterTaskOutsideMaxTasksIsAnError) {
  auto st = State();
  IdleSelectHooks hooks(*st, HarnessOptions());
  ISOLATION_EXPECT_OK(hooks.status());
  for (TaskId t : {-1, 1024, INT_MAX}) {
    EXPECT_THAT(hooks.RegisterTask(t, CpuMask::Full(8)).message(),
                HasSubstr(absl::StrCat("task id ", t)))
        << t;
  }
}

TEST(IdleSelectHarnessMisuse, DriverOfAnotherSizeIsReportedAndIgnored) {
  auto st = State("V1", 1, 4);  // 4 CPUs
  IdleSelectHooks hooks(*st, HarnessOptions());
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto topo, Topology::FromSynthetic("core:8 pu:1"));
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto sim, Simulator::Create(topo, IsolationConfig(topo)));
  sim->AddHooks(&hooks);
  PipeParams p;
  p.round_trips = 50;
  p.pairs = 3;
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto r, RunPipe(*sim, &hooks, p, 200 * kNsPerMs));
  EXPECT_TRUE(r.completed);
  EXPECT_THAT(hooks.status().message(), HasSubstr("the driver has 8 cpus, the state 4"));
  EXPECT_EQ(hooks.counters().selections, 0);
}

// ---- workloads ---------------------------------------------------------------------------

struct WorkloadRig {
  std::unique_ptr<IdleState> state = State("V0", 1, 4);
  IdleSelectHooks hooks{*state, HarnessOptions()};
  std::unique_ptr<Simulator> sim;
  WorkloadRig() {
    auto topo = Topology::FromSynthetic("core:4 pu:1").value();
    auto created = Simulator::Create(topo, IsolationConfig(topo)).value();
    sim = std::move(created);
    sim->AddHooks(&hooks);
  }
};

TEST(IdleSelectWorkloadMisuse, TaskCountsThatOverflowAreErrors) {
  WorkloadRig rig;
  HackbenchParams hb;
  hb.groups = INT_MAX;
  hb.senders = INT_MAX;
  auto r = RunHackbench(*rig.sim, &rig.hooks, hb, kNsPerMs);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("9223372028264841218 tasks"));
  PipeParams pipe;
  pipe.pairs = INT_MAX;
  EXPECT_THAT(RunPipe(*rig.sim, &rig.hooks, pipe, kNsPerMs).status().message(),
              HasSubstr("4294967294 tasks"));
  SchbenchParams sb;
  sb.message_tasks = 100000;
  sb.workers_per_message = 100000;
  EXPECT_FALSE(RunSchbench(*rig.sim, &rig.hooks, sb, kNsPerMs).ok());
}

TEST(IdleSelectWorkloadMisuse, CpuMasksOfWrongSizeOrOfflineAreErrors) {
  WorkloadRig rig;
  HackbenchParams hb;
  auto wide = RunHackbench(*rig.sim, &rig.hooks, hb, kNsPerMs, CpuMask::Full(64));
  ASSERT_FALSE(wide.ok());
  EXPECT_THAT(wide.status().message(), HasSubstr("64 bits"));
  ISOLATION_ASSERT_OK(rig.sim->SetCpuOnline(3, false));
  auto offline = RunPipe(*rig.sim, &rig.hooks, PipeParams(), kNsPerMs, CpuMask::Of(4, 3));
  ASSERT_FALSE(offline.ok());
  EXPECT_THAT(offline.status().message(), HasSubstr("'3' has no online cpu"));
}

TEST(IdleSelectWorkloadMisuse, JitterAndTimeoutOutOfRangeAreErrors) {
  WorkloadRig rig;
  RequestResponseParams rr;
  rr.work_jitter_pct = 500;
  EXPECT_THAT(RunRequestResponse(*rig.sim, &rig.hooks, rr, kNsPerMs).status().message(),
              HasSubstr("work_jitter_pct 500"));
  EXPECT_THAT(RunPipe(*rig.sim, &rig.hooks, PipeParams(), -1).status().message(),
              HasSubstr("timeout -1"));
  EXPECT_FALSE(RunLoadPoint(*rig.sim, rig.hooks, LoadWorkload::kPipe, 0, kNsPerMs).ok());
  EXPECT_FALSE(RunLoadPoint(*rig.sim, rig.hooks, LoadWorkload::kPipe, 50, 0).ok());
}

TEST(IdleSelectWorkloadMisuse, HugeWorkPerMessageDoesNotOverflowTheJitter) {
  WorkloadRig rig;
  PipeParams p;
  p.round_trips = 2;
  p.work_per_message = kNanosMax;
  p.work_jitter_pct = 100;
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto r, RunPipe(*rig.sim, &rig.hooks, p, 20 * kNsPerMs));
  EXPECT_FALSE(r.completed);  // each step runs "forever"
}

TEST(IdleSelectWorkloadMisuse, MeasureSelectRejectsBadParameters) {
  SweepParams p;
  p.llc_cpus = INT_MAX;
  EXPECT_THAT(MeasureSelect(p).status().message(), HasSubstr("llc_cpus=2147483647"));
  p = SweepParams();
  p.busy_pct = -1;
  EXPECT_FALSE(MeasureSelect(p).ok());
}

}  // namespace
}  // namespace isolation::idle_select
