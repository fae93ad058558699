// SPDX-License-Identifier: GPL-2.0-or-later
// Misuse of the mm_cid API, for every design (lazy,
// owner619, v63_mmlock): factories and non-hot entry points return an error
// naming the bad value and change nothing; observers return the documented
// "none" value; the hot entry points (ContextSwitch, Migrate, Tick,
// ReturnToUser) fail their contract check with the value in the message
// (death tests where the checks are compiled in).  Nothing may crash, read
// out of bounds, hang (owner619's rq-lock spin on an unknown task or CPU)
// or allocate absurd amounts.

#include <cctype>
#include <climits>
#include <memory>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "common/contract_death.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "isolation/core/isolation_config.h"
#include "isolation/core/topology.h"
#include "isolation/mm_cid/hooks.h"
#include "isolation/mm_cid/mm_cid.h"
#include "isolation/mm_cid/switcher.h"
#include "isolation/runtime/real_driver.h"
#include "isolation/runtime/sim.h"
#include "isolation/mm_cid/registry.h"
#include "isolation/testing/status_matchers.h"
#include "isolation/testing/violations.h"

namespace isolation::mm_cid {

// ctest's test names carry GetParam(): the variant's name, not its bytes
// (found by argument-dependent lookup, so outside the unnamed namespace).
void PrintTo(const MmCidVariant& v, std::ostream* os);
void PrintTo(const MmCidVariant& v, std::ostream* os) { *os << v.Name(); }

namespace {

using ::testing::HasSubstr;
using testing_internal::Opaque;

constexpr int kCpus = 4;

MmCidVariant Lazy(const std::string& placement) {
  MmCidVariant v;
  v.lazy.placement = placement;
  return v;
}

// Every registered design that is not a negative control (lazy with an
// inline and an offloaded placement).
std::vector<MmCidVariant> Designs() {
  std::vector<MmCidVariant> out = {Lazy("work_taskwork"), Lazy("work_unbound")};
  for (const std::string& d : DesignRegistry().Names()) {
    if (d == "lazy") continue;
    MmCidVariant v;
    v.design = d;
    out.push_back(v);
  }
  return out;
}

// A machine of kCpus with one mm, tasks 0 and 1 forked into it and task 0
// running on CPU 0.  Task 2 is never forked.
struct Fixture {
  std::unique_ptr<MmCid> m;
  MmId mm = kNoMm;
  explicit Fixture(const MmCidVariant& config, MmCid::Limits limits = {}) {
    auto created = MmCid::Create(kCpus, config, limits).value();
    m = std::move(created);
    mm = *m->CreateMm(CpuMask::Full(kCpus), 0);
    ISOLATION_EXPECT_OK(m->Fork(kNoTask, 0, mm, CpuMask::Full(kCpus), 0));
    ISOLATION_EXPECT_OK(m->Fork(0, 1, mm, CpuMask::Full(kCpus), 0));
    m->ContextSwitch(0, kNoTask, 0, 1);
  }
  // Nothing moved: the accounting the failed call must not have changed.
  void ExpectUnchanged() const {
    EXPECT_EQ(m->MmUsers(mm), 2);
    EXPECT_EQ(m->CurrentTask(0), 0);
    EXPECT_GE(m->TaskCid(0), 0);
    EXPECT_TRUE(m->TaskActive(1));
    ISOLATION_EXPECT_NO_VIOLATIONS(m->CheckAlways());
  }
};

class MmCidMisuse : public ::testing::TestWithParam<MmCidVariant> {};

// ---- factories ---------------------------------------------------------------------

TEST_P(MmCidMisuse, CreateRejectsCpuCountsNamingTheValue) {
  for (int n : {0, -1, kMaxCpus + 1, INT_MAX}) {
    auto m = MmCid::Create(n, GetParam());
    ASSERT_FALSE(m.ok()) << n;
    EXPECT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(m.status().message(), HasSubstr(std::to_string(n)));
  }
}

TEST_P(MmCidMisuse, CreateBoundsLimitsBeforeAllocating) {
  // INT_MAX task slots would be a 128 GiB allocation: refused up front.
  for (const MmCid::Limits limits :
       {MmCid::Limits{INT_MAX, 1024}, MmCid::Limits{4096, INT_MAX}, MmCid::Limits{kMaxTasks + 1, 1},
        MmCid::Limits{0, 1}, MmCid::Limits{1, -1}}) {
    auto m = MmCid::Create(kCpus, GetParam(), limits);
    ASSERT_FALSE(m.ok()) << limits.max_tasks << " " << limits.max_mms;
    EXPECT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument);
    const int bad =
        limits.max_tasks < 1 || limits.max_tasks > kMaxTasks ? limits.max_tasks : limits.max_mms;
    EXPECT_THAT(m.status().message(), HasSubstr(std::to_string(bad)));
  }
  auto at_bound = MmCid::Create(kCpus, GetParam(), MmCid::Limits{1, kMaxMms});
  ISOLATION_EXPECT_OK(at_bound);
}

TEST_P(MmCidMisuse, CreateRejectsUnknownStrategiesAndBadBatches) {
  MmCidVariant v = GetParam();
  v.design = "owner620";
  EXPECT_THAT(MmCid::Create(kCpus, v).status().message(), HasSubstr("owner620"));
  v = GetParam();
  v.lazy.granularity = "batch_0";
  auto m = MmCid::Create(kCpus, v);
  if (DescribeVariant(GetParam())->design.lazy_axes) {
    EXPECT_THAT(m.status().message(), HasSubstr("batch 0"));
    v.lazy.granularity = "batch_2147483647";
    EXPECT_THAT(MmCid::Create(kCpus, v).status().message(), HasSubstr("2147483647"));
    v = GetParam();
    v.lazy.placement = "work_elsewhere";
    EXPECT_THAT(MmCid::Create(kCpus, v).status().message(), HasSubstr("work_elsewhere"));
  } else {
    ISOLATION_EXPECT_OK(m) << "a design without lazy axes ignores them";
  }
}

// The deprecated flat configuration keeps its errors.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
TEST(MmCidMisuseCompat, CreateRejectsBadBatchAndEnums) {
  for (Design d : {Design::kLazy, Design::kOwner619, Design::kV63MmLock}) {
    MmCidConfig c;
    c.design = d;
    c.batch = -1;
    EXPECT_THAT(MmCid::Create(kCpus, c).status().message(), HasSubstr("batch -1"));
    c.batch = INT_MAX;
    EXPECT_THAT(MmCid::Create(kCpus, c).status().message(), HasSubstr("batch 2147483647"));
    c.batch = 0;
    c.design = static_cast<Design>(7);
    EXPECT_THAT(MmCid::Create(kCpus, c).status().message(), HasSubstr("design 7"));
    c.design = d;
    c.placement = static_cast<Placement>(-2);
    EXPECT_THAT(MmCid::Create(kCpus, c).status().message(), HasSubstr("placement -2"));
  }
}
#pragma GCC diagnostic pop

TEST_P(MmCidMisuse, CreateMmRejectsBadAffinity) {
  Fixture f(GetParam());
  EXPECT_THAT(f.m->CreateMm(CpuMask::Full(64), 0).status().message(), HasSubstr("not of 4 CPUs"));
  EXPECT_FALSE(f.m->CreateMm(CpuMask(kCpus), 0).ok());
  EXPECT_FALSE(f.m->CreateMm(CpuMask(), 0).ok());
}

TEST_P(MmCidMisuse, MmLimitIsAnErrorNotACrash) {
  Fixture f(GetParam(), MmCid::Limits{8, 2});
  ISOLATION_ASSERT_OK(f.m->CreateMm(CpuMask::Full(kCpus), 0));
  const auto third = f.m->CreateMm(CpuMask::Full(kCpus), 0);
  EXPECT_EQ(third.status().code(), absl::StatusCode::kResourceExhausted);
  const auto exec = f.m->Exec(0, 0, CpuMask::Full(kCpus), 5);
  EXPECT_EQ(exec.status().code(), absl::StatusCode::kResourceExhausted);
  f.ExpectUnchanged();
}

// ---- fork family -------------------------------------------------------------------

TEST_P(MmCidMisuse, ForkRejectsBadIdsMmsAndMasks) {
  Fixture f(GetParam(), MmCid::Limits{8, 4});
  const CpuMask all = CpuMask::Full(kCpus);
  EXPECT_THAT(f.m->Fork(0, -7, f.mm, all, 2).message(), HasSubstr("-7"));
  EXPECT_THAT(f.m->Fork(0, 8, f.mm, all, 2).message(), HasSubstr("id 8"));
  EXPECT_THAT(f.m->Fork(0, 1, f.mm, all, 2).message(), HasSubstr("reused"));
  EXPECT_THAT(f.m->Fork(INT_MAX, 3, f.mm, all, 2).message(), HasSubstr("2147483647"));
  EXPECT_THAT(f.m->Fork(0, 3, 99, all, 2).message(), HasSubstr("unknown mm 99"));
  EXPECT_FALSE(f.m->Fork(0, 3, kNoMm, all, 2).ok());
  EXPECT_FALSE(f.m->Fork(0, 3, f.mm, CpuMask::Full(8), 2).ok());
  EXPECT_FALSE(f.m->ForkVm(0, 3, f.mm, CpuMask(kCpus), 2).ok());
  EXPECT_FALSE(f.m->ForkVm(-3, 3, f.mm, all, 2).ok());
  f.ExpectUnchanged();
}

TEST_P(MmCidMisuse, ForkFailedRejectsUnknownAndRunTasks) {
  Fixture f(GetParam(), MmCid::Limits{8, 4});
  EXPECT_EQ(f.m->ForkFailed(2, 3).code(), absl::StatusCode::kInvalidArgument);  // never forked
  EXPECT_EQ(f.m->ForkFailed(-1, 3).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(f.m->ForkFailed(INT_MAX, 3).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(f.m->ForkFailed(0, 3).code(), absl::StatusCode::kFailedPrecondition);  // already ran
  f.ExpectUnchanged();
}

// ---- Exit / Exec / SetAffinity: validated always ----------------------------------

TEST_P(MmCidMisuse, ExitOfUnknownTaskIsAnErrorAndDoesNotHang) {
  Fixture f(GetParam(), MmCid::Limits{8, 4});
  for (TaskId t : {TaskId{2}, TaskId{-7}, TaskId{8}, TaskId{INT_MAX}, TaskId{INT_MIN}}) {
    const absl::Status s = f.m->Exit(0, t, 2);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << t;
    EXPECT_THAT(s.message(), HasSubstr(absl::StrCat("task ", t))) << t;
  }
  f.ExpectUnchanged();
}

TEST_P(MmCidMisuse, ExitOnCpuOutsideTheMachineIsAnErrorAndDoesNotHang) {
  Fixture f(GetParam());
  for (int cpu : {-1, kCpus, 1000, INT_MAX}) {
    const absl::Status s = f.m->Exit(cpu, 0, 2);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << cpu;
    EXPECT_THAT(s.message(), HasSubstr(absl::StrCat("cpu ", cpu))) << cpu;
  }
  f.ExpectUnchanged();
}

TEST_P(MmCidMisuse, SecondExitIsANoOp) {
  Fixture f(GetParam());
  ISOLATION_ASSERT_OK(f.m->Exit(0, 0, 2));
  EXPECT_EQ(f.m->MmUsers(f.mm), 1);
  ISOLATION_EXPECT_OK(f.m->Exit(0, 0, 3));
  EXPECT_EQ(f.m->MmUsers(f.mm), 1);
}

TEST_P(MmCidMisuse, ExecOfUnknownTaskOrOnBadCpuIsAnError) {
  Fixture f(GetParam(), MmCid::Limits{8, 4});
  const CpuMask all = CpuMask::Full(kCpus);
  EXPECT_THAT(f.m->Exec(0, 2, all, 2).status().message(), HasSubstr("task 2"));
  EXPECT_THAT(f.m->Exec(0, -7, all, 2).status().message(), HasSubstr("task -7"));
  EXPECT_THAT(f.m->Exec(1000, 0, all, 2).status().message(), HasSubstr("cpu 1000"));
  EXPECT_FALSE(f.m->Exec(0, 0, CpuMask::Full(2), 2).ok());  // affinity of the wrong size
  f.ExpectUnchanged();
}

TEST_P(MmCidMisuse, SetAffinityRejectsUnknownTasksAndBadMasks) {
  Fixture f(GetParam(), MmCid::Limits{8, 4});
  const int weight = f.m->MmAllowedWeight(f.mm);
  EXPECT_THAT(f.m->SetAffinity(2, CpuMask::Full(kCpus), 2).message(), HasSubstr("task 2"));
  EXPECT_THAT(f.m->SetAffinity(INT_MAX, CpuMask::Full(kCpus), 2).message(),
              HasSubstr("2147483647"));
  EXPECT_THAT(f.m->SetAffinity(0, CpuMask::Full(128), 2).message(), HasSubstr("128 bits"));
  EXPECT_FALSE(f.m->SetAffinity(0, CpuMask(kCpus), 2).ok());
  EXPECT_EQ(f.m->MmAllowedWeight(f.mm), weight);
  f.ExpectUnchanged();
}

// ---- observers ------------------------------------------------------------------------

TEST_P(MmCidMisuse, ObserversOfUnknownIdsGiveTheNoneValue) {
  Fixture f(GetParam(), MmCid::Limits{8, 4});
  for (TaskId t : {TaskId{2}, TaskId{-7}, TaskId{8}, TaskId{INT_MAX}}) {
    EXPECT_EQ(f.m->TaskCid(t), -1) << t;
    EXPECT_EQ(f.m->TaskMm(t), kNoMm) << t;
    EXPECT_FALSE(f.m->TaskActive(t)) << t;
  }
  for (int cpu : {-1, kCpus, 1000, INT_MAX}) {
    EXPECT_EQ(f.m->CurrentTask(cpu), kNoTask) << cpu;
    EXPECT_FALSE(f.m->SlotLazy(f.mm, cpu)) << cpu;
  }
  for (MmId mm : {kNoMm, MmId{1}, MmId{99}, MmId{INT_MAX}, MmId{INT_MIN}}) {
    EXPECT_EQ(f.m->MmUsers(mm), 0) << mm;
    EXPECT_EQ(f.m->MmAllowedWeight(mm), 0) << mm;
    EXPECT_EQ(f.m->CidmaskWeight(mm), 0) << mm;
    EXPECT_EQ(f.m->MmAllowed(mm), CpuMask(kCpus)) << mm;
    EXPECT_FALSE(f.m->SlotLazy(mm, 0)) << mm;
    EXPECT_FALSE(f.m->Scan(mm, 10 * kCidPeriodNs).ran) << mm;
    f.m->ScanRequestDone(mm);
  }
  f.ExpectUnchanged();
}

TEST_P(MmCidMisuse, NeverForkedTaskInRangeIsInactiveOnTheHotPath) {
  // An id in range that was never forked is part of the contract: it holds
  // no mm, so switching it in or ticking it does nothing.
  Fixture f(GetParam(), MmCid::Limits{8, 4});
  f.m->ContextSwitch(1, kNoTask, 2, 2);
  EXPECT_EQ(f.m->Tick(1, 2, 3 * kCidPeriodNs).mm, kNoMm);
  EXPECT_EQ(f.m->ReturnToUser(1, 2, 3 * kCidPeriodNs, nullptr).mm, kNoMm);
  f.m->Migrate(2, 1, 3, 4);
  EXPECT_EQ(f.m->TaskCid(2), -1);
  f.m->ContextSwitch(1, 2, kNoTask, 5);
  f.ExpectUnchanged();
}

// ---- hot entry points: contract checks (death tests) --------------------------------

TEST_P(MmCidMisuse, ContextSwitchOnCpuBeyondTheMachineViolatesContract) {
  Fixture f(GetParam());
  EXPECT_CONTRACT_DEATH(f.m->ContextSwitch(Opaque(kCpus), kNoTask, 1, 2),
                        "ContextSwitch: cpu 4 outside");
}

// Found by an outside probe: RunQueueLock(8) and (-1) read past the locks.
TEST_P(MmCidMisuse, RunQueueLockOfACpuOutsideTheMachineViolatesContract) {
  Fixture f(GetParam());
  (void)f.m->RunQueueLock(kCpus - 1);
  EXPECT_CONTRACT_DEATH((void)f.m->RunQueueLock(Opaque(kCpus)),
                        "RunQueueLock\\(4\\): a CPU outside");
  EXPECT_CONTRACT_DEATH((void)f.m->RunQueueLock(Opaque(-1)), "RunQueueLock\\(-1\\): a CPU outside");
}

TEST_P(MmCidMisuse, ContextSwitchOnNegativeCpuViolatesContract) {
  Fixture f(GetParam());
  EXPECT_CONTRACT_DEATH(f.m->ContextSwitch(Opaque(-1), kNoTask, 1, 2),
                        "ContextSwitch: cpu -1 outside");
}

TEST_P(MmCidMisuse, ContextSwitchToUnknownNextTaskViolatesContract) {
  Fixture f(GetParam(), MmCid::Limits{8, 4});
  EXPECT_CONTRACT_DEATH(f.m->ContextSwitch(1, kNoTask, Opaque(8), 2),
                        "ContextSwitch: task 8 outside");
}

TEST_P(MmCidMisuse, ContextSwitchFromUnknownPrevTaskViolatesContract) {
  Fixture f(GetParam(), MmCid::Limits{8, 4});
  EXPECT_CONTRACT_DEATH(f.m->ContextSwitch(0, Opaque(-7), kNoTask, 2),
                        "ContextSwitch: task -7 outside");
}

// The inline front end (switcher.h) checks the same contract in the
// caller's build, for every design (v63_mmlock's switcher forwards).
TEST_P(MmCidMisuse, SwitcherOnCpuBeyondTheMachineViolatesContract) {
  Fixture f(GetParam());
  EXPECT_CONTRACT_DEATH(f.m->Switcher().ContextSwitch(Opaque(kCpus), kNoTask, 1, 2),
                        "Switcher ContextSwitch: cpu 4 outside");
}

TEST_P(MmCidMisuse, SwitcherToUnknownNextTaskViolatesContract) {
  Fixture f(GetParam(), MmCid::Limits{8, 4});
  EXPECT_CONTRACT_DEATH(f.m->Switcher().ContextSwitch(1, kNoTask, Opaque(8), 2),
                        "Switcher ContextSwitch: next 8 outside");
}

TEST_P(MmCidMisuse, SwitcherFromUnknownPrevTaskViolatesContract) {
  Fixture f(GetParam(), MmCid::Limits{8, 4});
  EXPECT_CONTRACT_DEATH(f.m->Switcher().ContextSwitch(0, Opaque(-7), kNoTask, 2),
                        "Switcher ContextSwitch: prev -7 outside");
}

TEST_P(MmCidMisuse, MigrateToCpu1000ViolatesContract) {
  Fixture f(GetParam());
  EXPECT_CONTRACT_DEATH(f.m->Migrate(1, 0, Opaque(1000), 2), "Migrate: cpu 1000 outside");
}

TEST_P(MmCidMisuse, MigrateOfNoTaskViolatesContract) {
  Fixture f(GetParam());
  EXPECT_CONTRACT_DEATH(f.m->Migrate(Opaque(kNoTask), 0, 1, 2), "Migrate: task -1 outside");
}

TEST_P(MmCidMisuse, TickWithTaskMinus7ViolatesContract) {
  Fixture f(GetParam());
  EXPECT_CONTRACT_DEATH((void)f.m->Tick(0, Opaque(-7), 2), "Tick: task -7 outside");
}

TEST_P(MmCidMisuse, TickOnCpuBeyondTheMachineViolatesContract) {
  Fixture f(GetParam());
  EXPECT_CONTRACT_DEATH((void)f.m->Tick(Opaque(1000), 0, 2), "Tick: cpu 1000 outside");
}

TEST_P(MmCidMisuse, ReturnToUserOfUnknownTaskViolatesContract) {
  Fixture f(GetParam(), MmCid::Limits{8, 4});
  EXPECT_CONTRACT_DEATH((void)f.m->ReturnToUser(0, Opaque(77), 2, nullptr),
                        "ReturnToUser: task 77 outside");
}

TEST_P(MmCidMisuse, ReturnToUserOnCpuBeyondTheMachineViolatesContract) {
  Fixture f(GetParam());
  EXPECT_CONTRACT_DEATH((void)f.m->ReturnToUser(Opaque(77), 0, 2, nullptr),
                        "ReturnToUser: cpu 77 outside");
}

// ---- the driver adapter -----------------------------------------------------------------

TEST_P(MmCidMisuse, HooksDoNotForwardTasksBeyondTheLimitToTheHotPath) {
  // Six tasks on a mechanism that can hold four: the two extra forks are
  // errors, and the adapter keeps their ids off the hot entry points (whose
  // contract would otherwise abort, or read out of bounds without checks).
  auto t = Topology::FromSynthetic("core:4 pu:1");
  ISOLATION_ASSERT_OK(t);
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto sim, Simulator::Create(*t, IsolationConfig(*t)));
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto m, MmCid::Create(kCpus, GetParam(), MmCid::Limits{4, 8}));
  MmCidHooks hooks(*m);
  EXPECT_EQ(hooks.ScansOn(0), 0);  // before OnStart
  sim->AddHooks(&hooks);
  for (int i = 0; i < 6; ++i) {
    TaskSpec spec;
    spec.name = absl::StrCat("t", i);
    spec.cpu = i % kCpus;
    spec.body = MakeTaskBody([n = 0](TaskContext&) mutable {
      return ++n < 40 ? (n % 3 == 0 ? Step::Sleep(kNsPerMs) : Step::Run(2 * kNsPerMs))
                      : Step::Exit();
    });
    ISOLATION_ASSERT_OK(sim->Spawn(std::move(spec)));
  }
  ISOLATION_ASSERT_OK(sim->RunFor(300 * kNsPerMs));
  EXPECT_EQ(hooks.errors(), 2);
  EXPECT_EQ(hooks.violations(), 0)
      << (hooks.FirstViolations().empty() ? "" : hooks.FirstViolations()[0]);
  for (int cpu : {-1, kCpus, INT_MAX}) EXPECT_EQ(hooks.ScansOn(cpu), 0) << cpu;
}

TEST(MmCidHooksMisuse, RcuWorkerOnAnUnpinnableHostCpuIsAnError) {
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto t, Topology::FromSynthetic("core:2 pu:1"));
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto d, RealThreadDriver::Create(t, IsolationConfig(t)));
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto m, MmCid::Create(2, Lazy("work_rcu")));
  MmCidHooks::Options o;
  o.rcu_host_cpu = -1;  // CPU_SET(-1) wrote outside the cpu_set_t
  MmCidHooks hooks(*m, o);
  d->AddHooks(&hooks);
  ISOLATION_ASSERT_OK(d->RunFor(2 * kNsPerMs));
  hooks.Drain();
  EXPECT_EQ(hooks.errors(), 1);
}

std::string VariantTestName(const ::testing::TestParamInfo<MmCidVariant>& info) {
  std::string n = info.param.Name();
  for (char& c : n) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return n;
}

INSTANTIATE_TEST_SUITE_P(Designs, MmCidMisuse, ::testing::ValuesIn(Designs()), VariantTestName);

}  // namespace
}  // namespace isolation::mm_cid
