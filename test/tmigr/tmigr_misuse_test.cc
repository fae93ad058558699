// SPDX-License-Identifier: GPL-2.0-or-later
// Misuse of the timer-migration API: TimerMigration,
// TimerSystem, TmigrHooks and the oslat workload.  Factories and setup
// calls return an error naming the bad value (sizes bounded before
// allocating); observers give the documented safe value; the per-CPU entry
// points fail their contract check with the value in the message (death
// tests where the checks are compiled in).

#include <climits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/contract_death.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "isolation/core/isolation_config.h"
#include "isolation/core/topology.h"
#include "isolation/runtime/sim.h"
#include "isolation/testing/status_matchers.h"
#include "isolation/testing/violations.h"
#include "isolation/tmigr/hooks.h"
#include "isolation/tmigr/timers.h"
#include "isolation/tmigr/tmigr.h"
#include "isolation/tmigr/workload.h"
#include "tmigr/oslat_on_sim.h"

namespace isolation::tmigr {
namespace {

using ::testing::HasSubstr;
using testing_internal::Opaque;

constexpr int kCpus = 8;

Options Isolation() {
  Options o;
  o.participation = "isolation";
  return o;
}

// A booted hierarchy of kCpus on one node, no timers.
struct Booted {
  NullBackend backend;
  std::unique_ptr<TimerMigration> tm;
  explicit Booted(Options options = Isolation()) {
    auto created = TimerMigration::Create(std::vector<int>(kCpus, 0), options, &backend).value();
    tm = std::move(created);
    for (int c = 0; c < kCpus; ++c) ISOLATION_EXPECT_OK(tm->BringUpCpu(c));
  }
};

// ---- TimerMigration::Create ----------------------------------------------------------

TEST(TmigrMisuse, CreateRejectsAnIntMaxNodeBeforeAllocating) {
  NullBackend backend;
  auto tm = TimerMigration::Create({0, INT_MAX}, Options{}, &backend);
  ASSERT_FALSE(tm.ok());
  EXPECT_EQ(tm.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(tm.status().message(), HasSubstr("node 2147483647"));
  EXPECT_THAT(TimerMigration::Create({0, -1}, Options{}, &backend).status().message(),
              HasSubstr("node -1"));
  EXPECT_FALSE(TimerMigration::Create({0, kMaxNumaNodes}, Options{}, &backend).ok());
  ISOLATION_EXPECT_OK(TimerMigration::Create({0, kMaxNumaNodes - 1}, Options{}, &backend));
}

TEST(TmigrMisuse, CreateRejectsBadSizesOptionsAndBackend) {
  NullBackend backend;
  EXPECT_THAT(TimerMigration::Create(std::vector<int>{}, Options{}, &backend).status().message(),
              HasSubstr("CPU count 0"));
  EXPECT_THAT(TimerMigration::Create(std::vector<int>(kMaxCpus + 1, 0), Options{}, &backend)
                  .status()
                  .message(),
              HasSubstr("8193"));
  for (int cpg : {0, 1, 3, 16, -8, INT_MAX}) {
    Options o;
    o.children_per_group = cpg;
    EXPECT_THAT(TimerMigration::Create({0, 0}, o, &backend).status().message(),
                HasSubstr(std::to_string(cpg)))
        << cpg;
  }
  Options bad_variant;
  bad_variant.participation = "v9";
  EXPECT_THAT(TimerMigration::Create({0, 0}, bad_variant, &backend).status().message(),
              HasSubstr("'v9'"));
  EXPECT_FALSE(TimerMigration::Create({0, 0}, Options{}, nullptr).ok());
}

TEST(TmigrMisuse, ComputeSizingOutsideItsRangeViolatesContract) {
  EXPECT_CONTRACT_DEATH((void)ComputeSizing(Opaque(0), 1), "ComputeSizing.ncpus 0");
}

// ---- setup and observers: validated always -------------------------------------------

TEST(TmigrMisuse, IsIsolatedOfAMillionIsFalse) {
  Booted b;
  IsolationConfig iso(*Topology::FromSynthetic("core:8 pu:1"));
  ISOLATION_ASSERT_OK(iso.ApplyIsolcpus("domain,1-7"));
  ISOLATION_ASSERT_OK(b.tm->SetIsolation(iso));
  b.tm->InitIsolation();
  EXPECT_TRUE(b.tm->IsIsolated(5));
  for (int cpu : {1000000, kCpus, -1, INT_MAX, INT_MIN}) EXPECT_FALSE(b.tm->IsIsolated(cpu)) << cpu;
  for (int cpu : {kCpus, -1, INT_MAX}) EXPECT_FALSE(b.tm->IsAvailable(cpu)) << cpu;
}

// It accepted a configuration of another CPU count and read what fitted
// (the simulator refuses the same); now an error and nothing changed.
TEST(TmigrMisuse, SetIsolationOfAnotherCpuCountIsAnErrorAndChangesNothing) {
  Booted b;
  for (const char* machine : {"core:16 pu:1", "core:4 pu:1"}) {
    IsolationConfig iso(*Topology::FromSynthetic(machine));
    ISOLATION_ASSERT_OK(iso.ApplyIsolcpus("domain,1-3"));
    const absl::Status s = b.tm->SetIsolation(iso);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << machine;
    EXPECT_THAT(s.message(),
                HasSubstr(absl::StrCat(iso.num_cpus(), " CPUs for a hierarchy of 8 CPUs")));
  }
  b.tm->InitIsolation();
  for (int cpu = 0; cpu < kCpus; ++cpu) EXPECT_FALSE(b.tm->IsIsolated(cpu)) << cpu;
}

TEST(TmigrMisuse, IsolatedExcludeWithAMaskWiderThanTheMachineIsAnError) {
  Booted b;
  b.tm->InitIsolation();
  const CpuMask before = b.tm->AvailableMask();
  for (int nbits : {64, 4, 0}) {
    const absl::Status s = b.tm->IsolatedExclude(CpuMask::Full(nbits));
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << nbits;
    EXPECT_THAT(s.message(), HasSubstr(absl::StrCat(nbits, " bits"))) << nbits;
  }
  EXPECT_EQ(b.tm->AvailableMask(), before);
  EXPECT_THAT(b.tm->SetCpusetIsolated(CpuMask::Full(9)).message(), HasSubstr("9 bits"));
  ISOLATION_EXPECT_NO_VIOLATIONS(b.tm->CheckInvariants());
}

TEST(TmigrMisuse, HotplugOfCpusOutsideTheMachine) {
  Booted b;
  for (int cpu : {-1, kCpus, 1000, INT_MAX}) {
    EXPECT_THAT(b.tm->PrepareCpu(cpu).message(), HasSubstr(absl::StrCat("cpu ", cpu))) << cpu;
    EXPECT_THAT(b.tm->SetCpuAvailable(cpu).message(), HasSubstr(absl::StrCat("cpu ", cpu))) << cpu;
    EXPECT_THAT(b.tm->BringUpCpu(cpu).message(), HasSubstr(absl::StrCat("cpu ", cpu))) << cpu;
    b.tm->ClearCpuAvailable(cpu);  // documented no-op
    b.tm->TakeDownCpu(cpu);        // documented no-op
    const auto cov = b.tm->CoverageOf(cpu, 5);
    EXPECT_EQ(cov.min_expiry_on_path, kNanosMax) << cpu;
    EXPECT_FALSE(cov.reaches_idle_root) << cpu;
  }
  EXPECT_EQ(b.tm->AvailableMask().Weight(), kCpus);
  ISOLATION_EXPECT_NO_VIOLATIONS(b.tm->CheckInvariants());
}

// ---- per-CPU entry points: contract checks ---------------------------------------------

TEST(TmigrMisuse, ActivateOnCpuOutsideTheMachineViolatesContract) {
  Booted b;
  EXPECT_CONTRACT_DEATH(b.tm->Activate(Opaque(kCpus)), "tmigr: cpu 8 outside");
}

TEST(TmigrMisuse, DeactivateOnNegativeCpuViolatesContract) {
  Booted b;
  EXPECT_CONTRACT_DEATH((void)b.tm->Deactivate(Opaque(-1), 5), "tmigr: cpu -1 outside");
}

TEST(TmigrMisuse, NewTimerQuickCheckAndRemoteHandlingCheckTheirCpu) {
  Booted b;
  EXPECT_CONTRACT_DEATH((void)b.tm->NewTimer(Opaque(1000), 5), "tmigr: cpu 1000 outside");
  EXPECT_CONTRACT_DEATH((void)b.tm->QuickCheck(Opaque(1000), 5), "tmigr: cpu 1000 outside");
  EXPECT_CONTRACT_DEATH((void)b.tm->RequiresHandleRemote(Opaque(1000), 5),
                        "tmigr: cpu 1000 outside");
  EXPECT_CONTRACT_DEATH(b.tm->HandleRemote(Opaque(1000), 5), "tmigr: cpu 1000 outside");
}

TEST(TmigrMisuse, SnapshotLookupsOutsideTheHierarchyViolateContract) {
  Booted b;
  const HierarchySnapshot s = b.tm->Snapshot();
  EXPECT_CONTRACT_DEATH((void)s.cpu(Opaque(kCpus)), "tmigr: cpu 8 outside");
  EXPECT_CONTRACT_DEATH((void)s.group_of(Opaque(-1)), "tmigr: cpu -1 outside");
  EXPECT_CONTRACT_DEATH((void)s.group(GroupId{Opaque(99), 0}), "tmigr: no group GRP99:0");
}

// ---- TimerSystem -----------------------------------------------------------------------

std::unique_ptr<TimerSystem> MakeSystem(int cpus = kCpus) {
  auto ts = TimerSystem::Create(std::vector<int>(static_cast<size_t>(cpus), 0), Isolation(),
                                TimerSystem::Config{})
                .value();
  ISOLATION_EXPECT_OK(ts->BootAll());
  return ts;
}

TEST(TimerSystemMisuse, CreateRejectsBadJiffyAndNodes) {
  TimerSystem::Config zero;
  zero.jiffy = 0;
  EXPECT_THAT(TimerSystem::Create({0, 0}, Options{}, zero).status().message(),
              HasSubstr("jiffy 0"));
  EXPECT_THAT(
      TimerSystem::Create({0, INT_MAX}, Options{}, TimerSystem::Config{}).status().message(),
      HasSubstr("2147483647"));
}

TEST(TimerSystemMisuse, ObserversOfCpusOutsideTheMachineGiveSafeValues) {
  auto ts = MakeSystem();
  for (int cpu : {-1, kCpus, 1000, INT_MAX}) {
    EXPECT_EQ(ts->ProgrammedWakeup(cpu), kNanosMax) << cpu;
    EXPECT_FALSE(ts->BaseIdle(cpu)) << cpu;
    EXPECT_EQ(ts->NextLocal(cpu), kNanosMax) << cpu;
    EXPECT_EQ(ts->NextGlobal(cpu), kNanosMax) << cpu;
    EXPECT_EQ(ts->runs_on(cpu), 0) << cpu;
    EXPECT_THAT(ts->Offline(cpu, 0, 5).message(), HasSubstr(absl::StrCat("cpu ", cpu))) << cpu;
    EXPECT_THAT(ts->Online(cpu, 5).message(), HasSubstr(absl::StrCat("cpu ", cpu))) << cpu;
    EXPECT_FALSE(ts->Offline(1, cpu, 5).ok()) << cpu;  // bad target
  }
  EXPECT_FALSE(ts->Offline(1, 1, 5).ok());  // target == cpu
  ISOLATION_EXPECT_NO_VIOLATIONS(ts->CheckInvariants(5));
}

TEST(TimerSystemMisuse, AddTimerOnCpuOutsideTheMachineViolatesContract) {
  auto ts = MakeSystem();
  EXPECT_CONTRACT_DEATH((void)ts->AddTimer(Opaque(1000), 5, true, 0),
                        "tmigr timers: cpu 1000 outside");
}

TEST(TimerSystemMisuse, IdleEntryOnNegativeCpuViolatesContract) {
  auto ts = MakeSystem();
  EXPECT_CONTRACT_DEATH((void)ts->EnterIdle(Opaque(-1), 5), "tmigr timers: cpu -1 outside");
}

TEST(TimerSystemMisuse, TimersAtNeverAndInThePastAreHandled) {
  auto ts = MakeSystem();
  ts->AddTimer(1, kNanosMax, true, 0);      // never expires
  ts->AddTimer(1, kNanosMax - 1, true, 0);  // the jiffy rounding of it overflowed
  ts->AddTimer(2, -5, false, 0);            // already due
  ts->AddTimer(3, INT64_MIN, false, 0);     // lateness now - expires overflowed
  EXPECT_TRUE(ts->EnterIdle(1, 0));
  ts->Tick(2, 10 * kNsPerMs);
  ts->Tick(3, 10 * kNsPerMs);
  EXPECT_EQ(ts->timers_run(), 2);
  EXPECT_EQ(ts->max_lateness(), kNanosMax);
  EXPECT_EQ(ts->CountLost(20 * kNsPerMs), 0);
  ISOLATION_EXPECT_NO_VIOLATIONS(ts->CheckInvariants(10 * kNsPerMs));
}

// ---- TmigrHooks ------------------------------------------------------------------------

TEST(TmigrHooksMisuse, DriverOfAnotherSizeIsReportedAndIgnored) {
  auto ts = MakeSystem(2);
  TmigrHooks hooks(*ts, TmigrHooks::Config{});
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto t, Topology::FromSynthetic("core:4 pu:1"));
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto sim, Simulator::Create(t, IsolationConfig(t)));
  sim->AddHooks(&hooks);
  TaskSpec spec;
  spec.name = "busy";
  spec.cpu = 3;
  spec.body = MakeTaskBody([](TaskContext&) { return Step::Run(kNsPerMs); });
  ISOLATION_ASSERT_OK(sim->Spawn(std::move(spec)));
  ISOLATION_ASSERT_OK(sim->SetCpuOnline(3, false));
  ISOLATION_ASSERT_OK(sim->RunFor(20 * kNsPerMs));
  EXPECT_THAT(hooks.status().message(), HasSubstr("the driver has 4 cpus, the timer system 2"));
  EXPECT_EQ(ts->timers_run(), 0);
}

TEST(TmigrHooksMisuse, CountersAndTaskBodiesOfCpusOutsideTheMachine) {
  auto ts = MakeSystem();
  TmigrHooks hooks(*ts, TmigrHooks::Config{});
  ISOLATION_EXPECT_OK(hooks.status());
  for (int cpu : {-1, kCpus, INT_MAX}) {
    EXPECT_EQ(hooks.callbacks_on(cpu), 0) << cpu;
    EXPECT_EQ(hooks.remote_callbacks_on(cpu), 0) << cpu;
    EXPECT_EQ(hooks.MakeHousekeepingTask(cpu, kNsPerMs, 10, kNsPerMs), nullptr) << cpu;
  }
  EXPECT_EQ(hooks.MakeHousekeepingTask(0, 0, 10, kNsPerMs), nullptr);
  EXPECT_EQ(hooks.MakeHousekeepingTask(0, kNsPerMs, -1, kNsPerMs), nullptr);
  EXPECT_NE(hooks.MakeHousekeepingTask(0, kNsPerMs, 10, kNsPerMs), nullptr);
}

// ---- the oslat workload -----------------------------------------------------------------

using test::RunOslatOnFreshSim;

TEST(OslatWorkloadMisuse, ForeverDurationIsAnErrorNotAHang) {
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto t, Topology::FromSynthetic("core:4 pu:1"));
  const IsolationConfig iso(t);
  OslatWorkloadConfig cfg;
  cfg.duration = kNanosMax;
  auto r = RunOslatOnFreshSim(t, iso, Options{}, cfg);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("duration 9223372036854775807"));
  cfg = OslatWorkloadConfig{};
  cfg.jiffy = 1;  // 62 s of 1 ns jiffies: 6.2e10 ticks per CPU
  r = RunOslatOnFreshSim(t, iso, Options{}, cfg);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("jiffy 1 ns"));
  cfg = OslatWorkloadConfig{};
  cfg.check_every = 1;
  EXPECT_THAT(RunOslatOnFreshSim(t, iso, Options{}, cfg).status().message(),
              HasSubstr("check_every 1 ns"));
}

// The workload's times are the scripted ones only on a fresh simulator at
// the jiffy whose kernel activities cost nothing.
TEST(OslatWorkloadMisuse, DriverMustBeAFreshZeroCostSimulatorAtTheJiffy) {
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto t, Topology::FromSynthetic("core:4 pu:1"));
  const IsolationConfig iso(t);
  OslatWorkloadConfig cfg;
  cfg.duration = 50 * kNsPerMs;
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto hz250, Simulator::Create(t, iso, ZeroCostSimOptions(250)));
  EXPECT_THAT(tmigr::RunOslatWorkload(*hz250, Options{}, cfg).status().message(),
              HasSubstr("tick period 4000000"));
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto ran, Simulator::Create(t, iso, ZeroCostSimOptions(1000)));
  ISOLATION_ASSERT_OK(ran->RunFor(kNsPerMs));
  EXPECT_EQ(tmigr::RunOslatWorkload(*ran, Options{}, cfg).status().code(),
            absl::StatusCode::kFailedPrecondition);
  auto costly =
      Simulator::Create(t, iso, SimOptions{});  // default costs: a context switch takes 1 us
  ISOLATION_ASSERT_OK(costly);
  EXPECT_THAT(tmigr::RunOslatWorkload(**costly, Options{}, cfg).status().message(),
              HasSubstr("zero base costs"));
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto fine, Simulator::Create(t, iso, ZeroCostSimOptions(1000)));
  ISOLATION_EXPECT_OK(tmigr::RunOslatWorkload(*fine, Options{}, cfg));
}

TEST(OslatWorkloadMisuse, IsolationOfAnotherMachineIsAnError) {
  auto t = Topology::FromSynthetic("core:4 pu:1");
  auto other = Topology::FromSynthetic("core:8 pu:1");
  ISOLATION_ASSERT_OK(t);
  ISOLATION_ASSERT_OK(other);
  OslatWorkloadConfig cfg;
  cfg.duration = 10 * kNsPerMs;
  // The simulator the workload runs on refuses the pair.
  const auto r = RunOslatOnFreshSim(*t, IsolationConfig(*other), Options{}, cfg);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("8 CPUs"));
}

}  // namespace
}  // namespace isolation::tmigr
