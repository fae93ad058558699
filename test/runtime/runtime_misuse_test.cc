// SPDX-License-Identifier: GPL-2.0-or-later
// Misuse of the runtime (Simulator, RealThreadDriver, NoiseMeter):
// bad options and arguments are errors naming the value or the
// documented safe value; virtual time saturates at kNanosMax ("never")
// instead of wrapping; nothing crashes or hangs.

#include <atomic>
#include <climits>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/contract_death.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "isolation/core/driver.h"
#include "isolation/runtime/noise_meter.h"
#include "isolation/runtime/real_driver.h"
#include "isolation/runtime/sim.h"
#include "isolation/testing/machine.h"
#include "isolation/testing/status_matchers.h"
#include "test_util.h"

namespace isolation {
namespace {

using ::isolation::testing::MachineBuilder;

using runtime_testing::Spec;
using ::testing::HasSubstr;

// ---- Simulator::Create -------------------------------------------------------------

TEST(SimulatorMisuse, CreateRejectsBadOptionsNamingTheValue) {
  ISOLATION_ASSERT_OK_AND_ASSIGN(const Topology t, Topology::FromSynthetic("core:4 pu:1"));
  struct Case {
    const char* what;
    SimOptions options;
    const char* named;
  };
  std::vector<Case> cases;
  cases.push_back({"hz 0", SimOptions{}, "got 0"});
  cases.back().options.hz = 0;
  cases.push_back({"hz -1", SimOptions{}, "got -1"});
  cases.back().options.hz = -1;
  cases.push_back({"hz INT_MAX", SimOptions{}, "got 2147483647"});
  cases.back().options.hz = INT_MAX;
  cases.push_back({"timeslice 0", SimOptions{}, "got 0"});
  cases.back().options.timeslice = 0;
  cases.push_back({"negative tick cost", SimOptions{}, "tick -5"});
  cases.back().options.tick_cost = -5;
  cases.push_back({"huge migration cost", SimOptions{}, "newidle_migration 9223372036854775807"});
  cases.back().options.newidle_migration_cost = kNanosMax;
  for (const Case& c : cases) {
    auto sim = Simulator::Create(t, IsolationConfig(t), c.options);
    ASSERT_FALSE(sim.ok()) << c.what;
    EXPECT_EQ(sim.status().code(), absl::StatusCode::kInvalidArgument) << c.what;
    EXPECT_THAT(sim.status().message(), HasSubstr(c.named)) << c.what;
  }
}

TEST(SimulatorMisuse, CreateRejectsIsolationOfAnotherMachine) {
  ISOLATION_ASSERT_OK_AND_ASSIGN(const Topology small, Topology::FromSynthetic("core:4 pu:1"));
  ISOLATION_ASSERT_OK_AND_ASSIGN(const Topology big, Topology::FromSynthetic("core:8 pu:1"));
  auto sim = Simulator::Create(small, IsolationConfig(big));
  ASSERT_FALSE(sim.ok());
  EXPECT_THAT(sim.status().message(), HasSubstr("8 CPUs"));
}

// ---- virtual time -------------------------------------------------------------------

TEST(SimulatorMisuse, RunForInt64MaxIsAnErrorAndLeavesTheClock) {
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto sim, MachineBuilder().Topology("core:4 pu:1").Simulator());
  ISOLATION_ASSERT_OK(sim->RunFor(5 * kNsPerMs));
  const absl::Status s = sim->RunFor(kNanosMax);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("9223372036854775807"));
  EXPECT_EQ(sim->Now(), 5 * kNsPerMs);
  // A window that would end exactly at "never" is refused too; one ending
  // before it is not (checked without running it: a negative one is).
  EXPECT_FALSE(sim->RunFor(kNanosMax - 5 * kNsPerMs).ok());
  EXPECT_EQ(sim->RunFor(-1).code(), absl::StatusCode::kInvalidArgument);
  ISOLATION_EXPECT_OK(sim->RunFor(kNsPerMs));
  EXPECT_EQ(sim->Now(), 6 * kNsPerMs);
}

TEST(SimulatorMisuse, StepRunNeverRunsForeverWithoutHanging) {
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto sim, MachineBuilder().Topology("core:4 pu:1").Simulator());
  int steps = 0;
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto id, sim->Spawn(Spec("forever", 1, [&](TaskContext&) {
    ++steps;
    return Step::Run(kNanosMax);
  })));
  ISOLATION_ASSERT_OK(sim->RunFor(50 * kNsPerMs));
  EXPECT_EQ(sim->Now(), 50 * kNsPerMs);
  EXPECT_EQ(steps, 1) << "Run(never) must not end (it wrapped to the past before)";
  EXPECT_EQ(sim->CurrentTask(1), id);
  EXPECT_GT(sim->Stats(1).ticks, 0);  // ticks still interrupt it
}

TEST(SimulatorMisuse, StepSleepNeverNeverWakes) {
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto sim, MachineBuilder().Topology("core:4 pu:1").Simulator());
  int steps = 0;
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto id, sim->Spawn(Spec("sleeper", 2, [&](TaskContext&) {
    ++steps;
    return steps == 1 ? Step::Sleep(kNanosMax) : Step::Exit();
  })));
  ISOLATION_ASSERT_OK(sim->RunFor(50 * kNsPerMs));
  EXPECT_EQ(steps, 1) << "Sleep(never) woke up (it wrapped to 'now' before)";
  EXPECT_EQ(sim->CurrentTask(2), kIdleTask);
  sim->Wake(id, 0);  // a sleep is not ended by Wake (driver.h)
  ISOLATION_ASSERT_OK(sim->RunFor(10 * kNsPerMs));
  EXPECT_EQ(steps, 1);
}

TEST(SimulatorMisuse, WorkWithNeverDelayNeverRuns) {
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto sim, MachineBuilder().Topology("core:4 pu:1").Simulator());
  int runs = 0;
  sim->QueueWorkOn(1, kNanosMax, [&](CpuContext&) { ++runs; });
  sim->QueueWorkOn(1, -kNsPerMs, [&](CpuContext&) { ++runs; });  // negative delay = now
  ISOLATION_ASSERT_OK(sim->RunFor(20 * kNsPerMs));
  EXPECT_EQ(runs, 1);
}

TEST(SimulatorMisuse, ChargingNeverFromAHookSaturates) {
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto sim, MachineBuilder().Topology("core:4 pu:1").Simulator());
  sim->QueueWorkOn(3, 0, [](CpuContext& ctx) {
    ctx.Charge(kNanosMax);
    ctx.Charge(kNanosMax);
  });
  ISOLATION_ASSERT_OK(sim->RunFor(20 * kNsPerMs));
  EXPECT_EQ(sim->Now(), 20 * kNsPerMs);
  EXPECT_EQ(sim->Stats(3).kernel_ns, kNanosMax);  // saturated, not wrapped negative
}

TEST(SimulatorMisuse, WorkAndTimersOnCpusOutsideTheMachineRunOnHousekeeping) {
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto sim, MachineBuilder().Topology("core:4 pu:1").Simulator());
  std::vector<int> ran_on;
  sim->QueueWorkOn(1000, 0, [&](CpuContext& ctx) { ran_on.push_back(ctx.cpu()); });
  sim->QueueWorkOn(-1, 0, [&](CpuContext& ctx) { ran_on.push_back(ctx.cpu()); });
  sim->ArmTimer(INT_MAX, kNsPerMs, [&](CpuContext& ctx) { ran_on.push_back(ctx.cpu()); });
  const TimerId never =
      sim->ArmTimer(0, kNanosMax, [&](CpuContext& ctx) { ran_on.push_back(ctx.cpu()); });
  ISOLATION_ASSERT_OK(sim->RunFor(10 * kNsPerMs));
  ASSERT_EQ(ran_on.size(), 3u);
  for (int cpu : ran_on) EXPECT_TRUE(cpu >= 0 && cpu < 4) << cpu;
  EXPECT_TRUE(sim->CancelTimer(never));
}

// ---- tasks and CPUs by id ------------------------------------------------------------

TEST(SimulatorMisuse, SpawnRejectsBadSpecsNamingTheValue) {
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto sim, MachineBuilder().Topology("core:4 pu:1").Simulator());
  auto bad_cpu = sim->Spawn(Spec("t", 1000, [](TaskContext&) { return Step::Exit(); }));
  ASSERT_FALSE(bad_cpu.ok());
  EXPECT_THAT(bad_cpu.status().message(), HasSubstr("cpu 1000"));
  EXPECT_FALSE(sim->Spawn(Spec("t", -1, [](TaskContext&) { return Step::Exit(); })).ok());
  TaskSpec wide = Spec("wide", 0, [](TaskContext&) { return Step::Exit(); });
  wide.affinity = CpuMask::Full(128);
  auto w = sim->Spawn(std::move(wide));
  ASSERT_FALSE(w.ok());
  EXPECT_THAT(w.status().message(), HasSubstr("128 bits"));
  TaskSpec no_body;
  no_body.name = "nobody";
  EXPECT_FALSE(sim->Spawn(std::move(no_body)).ok());
}

TEST(SimulatorMisuse, UnknownTasksAndCpusGiveTheDocumentedValues) {
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto sim, MachineBuilder().Topology("core:4 pu:1").Simulator());
  for (TaskId t : {-7, 0, 1000, INT_MAX}) {
    EXPECT_EQ(sim->TaskCpu(t), -1) << t;
    EXPECT_EQ(sim->TaskGroup(t), -1) << t;
    sim->Wake(t, 0);  // ignored
    EXPECT_EQ(sim->SetAffinity(t, CpuMask::Full(4)).code(), absl::StatusCode::kInvalidArgument)
        << t;
  }
  for (int cpu : {-1, 4, INT_MAX}) {
    EXPECT_EQ(sim->CurrentTask(cpu), kIdleTask) << cpu;
    EXPECT_EQ(sim->NumRunnable(cpu), 0) << cpu;
    EXPECT_FALSE(sim->IsIdle(cpu)) << cpu;
    EXPECT_TRUE(sim->TickStopped(cpu)) << cpu;
    EXPECT_EQ(sim->GetTickMode(cpu), TickMode::kPeriodic) << cpu;
    EXPECT_EQ(sim->Stats(cpu).ticks, 0) << cpu;
    sim->SetTickMode(cpu, TickMode::kNohzFull);  // ignored
    const absl::Status s = sim->SetCpuOnline(cpu, false);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << cpu;
    EXPECT_THAT(s.message(), HasSubstr(absl::StrCat("cpu ", cpu))) << cpu;
  }
  for (TimerId id : {TimerId{-1}, TimerId{0}, TimerId{12345678901}})
    EXPECT_FALSE(sim->CancelTimer(id)) << id;
  ISOLATION_ASSERT_OK(sim->RunFor(kNsPerMs));
}

TEST(SimulatorMisuse, WakerCpuOutsideTheMachineReachesHooksAsRemote) {
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto sim, MachineBuilder().Topology("core:4 pu:1").Simulator());
  struct WakerHooks : Hooks {
    std::vector<int> wakers;
    int SelectTaskCpu(TaskId, int, int waker_cpu, Nanos) override {
      wakers.push_back(waker_cpu);
      return -1;
    }
  } hooks;
  sim->AddHooks(&hooks);
  ISOLATION_ASSERT_OK_AND_ASSIGN(
      auto id, sim->Spawn(Spec("blocker", 1, [](TaskContext&) { return Step::Block(); })));
  ISOLATION_ASSERT_OK(sim->RunFor(kNsPerMs));
  sim->Wake(id, 1000);
  sim->Wake(id, -5);
  ISOLATION_ASSERT_OK(sim->RunFor(kNsPerMs));
  ASSERT_FALSE(hooks.wakers.empty());
  for (int w : hooks.wakers) EXPECT_EQ(w, -1);
}

TEST(SimulatorMisuse, SetAffinityRejectsWrongSizeAndOfflineMasks) {
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto sim, MachineBuilder().Topology("core:4 pu:1").Simulator());
  ISOLATION_ASSERT_OK_AND_ASSIGN(
      auto id, sim->Spawn(Spec("t", 1, [](TaskContext&) { return Step::Run(kNsPerMs); })));
  const absl::Status wide = sim->SetAffinity(id, CpuMask::Full(64));
  EXPECT_THAT(wide.message(), HasSubstr("64 bits"));
  EXPECT_FALSE(sim->SetAffinity(id, CpuMask(4)).ok());  // no CPU at all
  EXPECT_EQ(sim->TaskCpu(id), 1);
}

// ---- RealThreadDriver ---------------------------------------------------------------

TEST(RealDriverMisuse, CreateRejectsBadOptionsNamingTheValue) {
  ISOLATION_ASSERT_OK_AND_ASSIGN(const Topology t, Topology::FromSynthetic("core:2 pu:1"));
  RealDriverOptions hz;
  hz.hz = 0;
  auto a = RealThreadDriver::Create(t, IsolationConfig(t), hz);
  ASSERT_FALSE(a.ok());
  EXPECT_THAT(a.status().message(), HasSubstr("got 0"));
  RealDriverOptions slice;
  slice.slice = -3;
  auto b = RealThreadDriver::Create(t, IsolationConfig(t), slice);
  ASSERT_FALSE(b.ok());
  EXPECT_THAT(b.status().message(), HasSubstr("-3"));
  RealDriverOptions map;
  map.host_cpu_map = {0, 100000};
  auto c = RealThreadDriver::Create(t, IsolationConfig(t), map);
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(c.status().message(), HasSubstr("100000"));
  RealDriverOptions short_map;
  short_map.host_cpu_map = {0};
  EXPECT_FALSE(RealThreadDriver::Create(t, IsolationConfig(t), short_map).ok());
  ISOLATION_ASSERT_OK_AND_ASSIGN(const Topology other, Topology::FromSynthetic("core:4 pu:1"));
  EXPECT_FALSE(RealThreadDriver::Create(t, IsolationConfig(other)).ok());
}

TEST(RealDriverMisuse, RunForNeverIsAnErrorWithoutStartingThreads) {
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto d, MachineBuilder().Topology("core:2 pu:1").RealThreads());
  const absl::Status s = d->RunFor(kNanosMax);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("9223372036854775807"));
  EXPECT_EQ(d->RunFor(-1).code(), absl::StatusCode::kInvalidArgument);
}

TEST(RealDriverMisuse, UnknownTasksAndCpusGiveTheDocumentedValues) {
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto d, MachineBuilder().Topology("core:2 pu:1").RealThreads());
  for (TaskId t : {-7, 0, INT_MAX}) {
    EXPECT_EQ(d->TaskCpu(t), -1) << t;
    EXPECT_EQ(d->TaskGroup(t), -1) << t;
    d->Wake(t, 1000);
    EXPECT_FALSE(d->SetAffinity(t, CpuMask::Full(2)).ok()) << t;
  }
  for (int cpu : {-1, 2, INT_MAX}) {
    EXPECT_EQ(d->CurrentTask(cpu), kIdleTask) << cpu;
    EXPECT_EQ(d->NumRunnable(cpu), 0) << cpu;
    EXPECT_EQ(d->HostCpu(cpu), -1) << cpu;
    EXPECT_EQ(d->ObservedHostCpu(cpu), -1) << cpu;
    EXPECT_EQ(d->Stats(cpu).ticks, 0) << cpu;
    d->SetTickMode(cpu, TickMode::kNohzFull);
    EXPECT_FALSE(d->SetCpuOnline(cpu, false).ok()) << cpu;
  }
  EXPECT_FALSE(d->Spawn(Spec("t", 7, [](TaskContext&) { return Step::Exit(); })).ok());
}

TEST(RealDriverMisuse, SleepNeverAndRunNeverDoNotWrap) {
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto d, MachineBuilder().Topology("core:2 pu:1").RealThreads());
  std::atomic<int> sleeper_steps{0};
  std::atomic<int> runner_steps{0};
  ISOLATION_ASSERT_OK(d->Spawn(Spec("sleeper", 0, [&](TaskContext&) {
    return sleeper_steps.fetch_add(1) == 0 ? Step::Sleep(kNanosMax) : Step::Exit();
  })));
  ISOLATION_ASSERT_OK(d->Spawn(Spec("runner", 1, [&](TaskContext&) {
    runner_steps.fetch_add(1);
    return Step::Run(kNanosMax);
  })));
  d->QueueWorkOn(0, kNanosMax, [&](CpuContext&) { sleeper_steps.fetch_add(100); });
  ISOLATION_ASSERT_OK(d->RunFor(20 * kNsPerMs));
  EXPECT_EQ(sleeper_steps.load(), 1);
  EXPECT_EQ(runner_steps.load(), 1);
}

// ---- NoiseMeter --------------------------------------------------------------------

TEST(NoiseMeterMisuse, CreateRejectsBucketCountsNamingTheValue) {
  for (int buckets : {0, -1, NoiseMeter::kMaxBuckets + 1, INT_MAX}) {
    auto m = NoiseMeter::Create(buckets);
    ASSERT_FALSE(m.ok()) << buckets;
    EXPECT_THAT(m.status().message(), HasSubstr(std::to_string(buckets)));
  }
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto ok, NoiseMeter::Create(32));
  EXPECT_EQ(ok.Result().histogram_us.size(), 32u);
}

// The header promises invalid rtla shapes are clamped into
// NoiseHistogramOptions' range; entries 3 was kept (the range starts at 10).
TEST(NoiseMeterMisuse, RtlaShapeOutsideItsRangeIsClampedIntoIt) {
  const NoiseResult r = NoiseMeter(NoiseHistogramOptions{-4, 3}).Result();
  EXPECT_EQ(r.bucket_size_us, 1);
  EXPECT_EQ(r.entries, 10);
  EXPECT_EQ(r.histogram_us.size(), 11u);
  ISOLATION_EXPECT_OK(ValidateNoiseHistogram({r.bucket_size_us, r.entries}));
  const NoiseResult big = NoiseMeter(NoiseHistogramOptions{INT_MAX, INT_MAX}).Result();
  EXPECT_EQ(big.bucket_size_us, 999'999);
  EXPECT_EQ(big.entries, 1'000'000);
}

TEST(NoiseMeterMisuse, ConstructorWithZeroBucketsViolatesContract) {
  EXPECT_CONTRACT_DEATH(NoiseMeter m(0), "buckets 0 outside");
}

TEST(NoiseMeterMisuse, ConstructorWithHugeBucketCountViolatesContract) {
  EXPECT_CONTRACT_DEATH(NoiseMeter m(INT_MAX), "buckets 2147483647 outside");
}

TEST(NoiseMeterMisuse, HugeAndNegativeGapsSaturateInsteadOfOverflowing) {
  NoiseMeter m(4);
  m.Record(kNanosMax);
  m.Record(kNanosMax);
  m.Record(-50);
  m.AddDuration(kNanosMax);
  m.AddDuration(kNanosMax);
  m.AddDuration(-7);
  const NoiseResult r = m.Result();
  EXPECT_EQ(r.samples, 3);
  EXPECT_EQ(r.min_ns, 0);
  EXPECT_EQ(r.max_ns, kNanosMax);
  EXPECT_EQ(r.duration_ns, kNanosMax);
  EXPECT_GT(r.avg_ns, 0);
  EXPECT_EQ(r.histogram_us.back(), 2);
}

TEST(NoiseMeterMisuse, SpinWithNegativeDurationTakesOneSample) {
  NoiseMeter m;
  m.Spin(-5);
  m.Spin(std::numeric_limits<int64_t>::min());
  EXPECT_EQ(m.Result().samples, 2);
}

TEST(NoiseMeterMisuse, TaskBodyWithZeroSliceFinishes) {
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto sim, MachineBuilder().Topology("core:4 pu:1").Simulator());
  NoiseMeter m;
  TaskSpec spec;
  spec.name = "meter";
  spec.cpu = 1;
  spec.body = m.MakeTaskBody(20 * kNsPerUs, 0);  // slice < 1 counts as 1 ns
  ISOLATION_ASSERT_OK(sim->Spawn(std::move(spec)));
  ISOLATION_ASSERT_OK(sim->RunFor(kNsPerMs));
  EXPECT_EQ(sim->CurrentTask(1), kIdleTask);
  EXPECT_GT(m.Result().samples, 0);
}

}  // namespace
}  // namespace isolation
