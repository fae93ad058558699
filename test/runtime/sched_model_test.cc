// SPDX-License-Identifier: GPL-2.0-or-later
// The scheduler model shared by both drivers (lib/runtime/sched_model.h):
// its rules on their own, and the kernel-time service of each driver
// (charged in the simulator, measured on real threads).

#include "runtime/sched_model.h"

#include <atomic>
#include <memory>
#include <vector>

#include "gtest/gtest.h"
#include "isolation/runtime/real_driver.h"
#include "isolation/runtime/sim.h"
#include "isolation/testing/machine.h"
#include "isolation/testing/status_matchers.h"
#include "test_util.h"

namespace isolation {
namespace {

using ::isolation::testing::MachineBuilder;

using runtime_testing::Spec;

TEST(SchedModel, TickStopPolicy) {
  using sched::WantTickStopped;
  EXPECT_TRUE(WantTickStopped(/*online=*/false, TickMode::kPeriodic, 3));
  EXPECT_FALSE(WantTickStopped(true, TickMode::kPeriodic, 0));
  EXPECT_TRUE(WantTickStopped(true, TickMode::kNohzIdle, 0));
  EXPECT_FALSE(WantTickStopped(true, TickMode::kNohzIdle, 1));
  EXPECT_TRUE(WantTickStopped(true, TickMode::kNohzFull, 1));
  EXPECT_FALSE(WantTickStopped(true, TickMode::kNohzFull, 2));
  int stops = 0, restarts = 0;
  auto stop = [&] { ++stops; };
  auto restart = [&] { ++restarts; };
  sched::UpdateTick(true, false, stop, restart);
  sched::UpdateTick(true, true, stop, restart);
  sched::UpdateTick(false, false, stop, restart);
  sched::UpdateTick(false, true, stop, restart);
  EXPECT_EQ(stops, 1);
  EXPECT_EQ(restarts, 1);
  EXPECT_EQ(sched::NextTickAfter(0, kNsPerMs), kNsPerMs);
  EXPECT_EQ(sched::NextTickAfter(kNsPerMs, kNsPerMs), 2 * kNsPerMs);
  EXPECT_EQ(sched::NextTickAfter(kNanosMax - 1, kNsPerMs), kNanosMax);  // saturates: never
}

TEST(SchedModel, PlacementFallsBackToOnlineCpus) {
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto topo, Topology::FromSynthetic("pu:8"));
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto iso, IsolationConfig::FromFlags(topo, "2-7", "2-7"));
  std::vector<bool> online(8, true);
  const sched::Placement place(
      iso, 8, [&](int c) { return static_cast<bool>(online[static_cast<size_t>(c)]); });
  const CpuMask aff = CpuMask::Of(8, 5);
  EXPECT_TRUE(place.Allowed(aff, 5));
  EXPECT_FALSE(place.Allowed(aff, 4));
  EXPECT_FALSE(place.Allowed(aff, 8));
  EXPECT_FALSE(place.Allowed(aff, -1));
  EXPECT_EQ(place.Fallback(aff), 5);
  online[5] = false;
  EXPECT_FALSE(place.Allowed(aff, 5));
  EXPECT_EQ(place.Fallback(aff), 0);  // no allowed CPU online: the first online one
  // Housekeeping CPUs of every type are 0-1 (nohz_full=2-7; isolcpus=domain alone
  // leaves unbound work everywhere): round-robin over them, fallback when both are down.
  EXPECT_EQ(place.Housekeeping(HousekeepingType::kWq), 0);
  EXPECT_EQ(place.NextHousekeeping(-1), 0);
  EXPECT_EQ(place.NextHousekeeping(0), 1);
  EXPECT_EQ(place.NextHousekeeping(1), 0);
  online[0] = online[1] = false;
  EXPECT_EQ(place.Housekeeping(HousekeepingType::kTimer), 2);
  EXPECT_EQ(place.NextHousekeeping(1), 2);
}

// The select step: the first hook that places decides; a disallowed choice
// falls back to prev (if allowed), else to the fallback CPU.
TEST(SchedModel, SelectWakeCpu) {
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto topo, Topology::FromSynthetic("pu:4"));
  const IsolationConfig iso(topo);
  std::vector<bool> online(4, true);
  const sched::Placement place(
      iso, 4, [&](int c) { return static_cast<bool>(online[static_cast<size_t>(c)]); });
  struct Fixed : Hooks {
    explicit Fixed(int cpu) : cpu(cpu) {}
    int SelectTaskCpu(TaskId, int, int, Nanos) override { return cpu; }
    int cpu;
  };
  Fixed none(-1), three(3), two(2);
  const CpuMask aff = CpuMask::Of(4, 1) | CpuMask::Of(4, 3);
  EXPECT_EQ(sched::SelectWakeCpu({&none, &three, &two}, 7, 1, -1, 0, place, aff), 3);
  EXPECT_EQ(sched::SelectWakeCpu({&two, &three}, 7, 1, -1, 0, place, aff),
            1);  // 2 not allowed: prev
  EXPECT_EQ(sched::SelectWakeCpu({&none}, 7, 1, -1, 0, place, aff), 1);
  online[1] = false;
  EXPECT_EQ(sched::SelectWakeCpu({&none}, 7, 1, -1, 0, place, aff), 3);  // prev offline: fallback
}

TEST(SchedModel, RunQueueAndLastRun) {
  sched::RunQueue rq;
  EXPECT_EQ(rq.PickNext(), kIdleTask);
  for (TaskId t : {4, 5, 6, 7}) rq.PushBack(t);
  EXPECT_TRUE(rq.Remove(5));
  EXPECT_FALSE(rq.Remove(5));
  std::vector<TaskId> left;
  rq.Partition([](TaskId t) { return t != 6; }, [&](TaskId t) { left.push_back(t); });
  EXPECT_EQ(left, std::vector<TaskId>{6});
  EXPECT_EQ(rq.TakeFirst([](TaskId t) { return t == 7; }), 7);
  EXPECT_EQ(rq.PickNext(), 4);
  EXPECT_TRUE(rq.empty());
  sched::LastRun last;
  EXPECT_FALSE(last.Hot(0, 500 * kNsPerUs));
  last.Note(3, 10 * kNsPerMs);
  EXPECT_EQ(last.cpu, 3);
  EXPECT_TRUE(last.Hot(10 * kNsPerMs + 499 * kNsPerUs, 500 * kNsPerUs));
  EXPECT_FALSE(last.Hot(10 * kNsPerMs + 500 * kNsPerUs, 500 * kNsPerUs));
  EXPECT_TRUE(sched::PreemptAtTick(1, 0, 3 * kNsPerMs, 3 * kNsPerMs, true));
  EXPECT_FALSE(sched::PreemptAtTick(1, 0, 3 * kNsPerMs, 3 * kNsPerMs, false));
  EXPECT_FALSE(sched::PreemptAtTick(kIdleTask, 0, 3 * kNsPerMs, 3 * kNsPerMs, true));
  EXPECT_FALSE(sched::PreemptAtTick(1, 1, 3 * kNsPerMs, 3 * kNsPerMs, true));
}

// Both drivers refuse a bad spawn with the same message.
TEST(SchedModel, SpawnChecksNameTheValueOnBothDrivers) {
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto sim, MachineBuilder().Topology("pu:4").Simulator());
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto real, MachineBuilder().Topology("pu:4").RealThreads());
  for (Driver* d : std::vector<Driver*>{sim.get(), real.get()}) {
    TaskSpec spec = Spec("x", 2, [](TaskContext&) { return Step::Exit(); });
    spec.affinity = CpuMask::Of(4, 1);
    EXPECT_EQ(d->Spawn(std::move(spec)).status().message(), "Spawn(x): affinity 1 excludes cpu 2");
    TaskSpec wide = Spec("w", 0, [](TaskContext&) { return Step::Exit(); });
    wide.affinity = CpuMask::Of(8, 0);
    EXPECT_EQ(d->Spawn(std::move(wide)).status().message(),
              "Spawn(w): affinity has 8 bits, machine has 4");
  }
}

// Kernel time on the simulator is the modelled cost, charged to the CPU.
TEST(KernelTimeService, SimulatorChargesTheModel) {
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto sim, MachineBuilder().Topology("pu:2").Simulator());
  EXPECT_FALSE(sim->hooks_run_concurrently());
  Nanos took = -1, advanced = -1;
  ASSERT_TRUE(sim->Spawn(Spec("k", 1,
                              [&](TaskContext& ctx) {
                                if (took >= 0) return Step::Exit();
                                ctx.Syscall([&](CpuContext& k) {
                                  const Nanos before = k.now();
                                  const Driver::KernelSpan span = k.driver().BeginKernelSpan();
                                  took = k.driver().EndKernelSpan(span, &k, 5 * kNsPerUs);
                                  k.driver().SpendKernelTime(k, 3 * kNsPerUs);
                                  advanced = k.now() - before;
                                });
                                return Step::Run(kNsPerUs);
                              }))
                  .ok());
  ISOLATION_ASSERT_OK(sim->RunFor(10 * kNsPerMs));
  EXPECT_EQ(took, 5 * kNsPerUs);
  EXPECT_EQ(advanced, 8 * kNsPerUs);
  EXPECT_GE(sim->Stats(1).kernel_ns, 8 * kNsPerUs);
  // Outside any model CPU (no context): reported, charged nowhere.
  EXPECT_EQ(sim->EndKernelSpan(sim->BeginKernelSpan(), nullptr, 7), 7);
}

// Kernel time on real threads is measured on the host clock; the model is
// ignored, and SpendKernelTime keeps the CPU busy at least that long.
TEST(KernelTimeService, RealThreadsMeasureTheHostClock) {
  RealDriverOptions o;
  o.hz = 1000;
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto real, MachineBuilder().Topology("pu:1").RealThreads(o));
  EXPECT_TRUE(real->hooks_run_concurrently());
  std::atomic<Nanos> took{-1};
  real->QueueWorkOn(0, 0, [&](CpuContext& ctx) {
    const Driver::KernelSpan span = ctx.driver().BeginKernelSpan();
    ctx.driver().SpendKernelTime(ctx, 2 * kNsPerMs);
    took.store(ctx.driver().EndKernelSpan(span, &ctx, /*modelled_ns=*/7));
  });
  ISOLATION_ASSERT_OK(real->RunFor(50 * kNsPerMs));
  EXPECT_GE(took.load(), 2 * kNsPerMs);  // the busy wait's own bound, not a timing guess
}

}  // namespace
}  // namespace isolation
