// SPDX-License-Identifier: GPL-2.0-or-later
// RealThreadDriver: pinning, the driver semantics on real threads (bounded
// runs of tens of milliseconds), pause/resume and hotplug between runs.
// No timing assertions: only "it happened" and "it happened on the right
// thread".

#include "absl/strings/str_cat.h"
#include "isolation/runtime/real_driver.h"

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "isolation/core/driver.h"
#include "isolation/testing/machine.h"
#include "isolation/testing/status_matchers.h"
#include "test_util.h"

namespace isolation {
namespace {

using ::isolation::testing::MachineBuilder;

int HostCpusAllowed() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return 1;
  return CPU_COUNT(&set);
}

using runtime_testing::Spec;

// Runs in 10 ms windows until `done` holds (checked while the CPU threads
// are parked) or `max` has passed: no test depends on how fast a loaded host
// schedules the CPU threads.
bool RunUntil(RealThreadDriver& d, const std::function<bool()>& done, Nanos max = kNsPerSec) {
  for (Nanos t = 0; t < max; t += 10 * kNsPerMs) {
    ISOLATION_EXPECT_OK(d.RunFor(10 * kNsPerMs));
    if (done()) return true;
  }
  return done();
}

int ModelCpus() { return std::clamp(HostCpusAllowed(), 1, 4); }

TEST(RealDriverPinning, EachCpuThreadRunsOnItsHostCpu) {
  const int n = ModelCpus();
  ISOLATION_ASSERT_OK_AND_ASSIGN(
      auto d, MachineBuilder().Topology(absl::StrCat("core:", n, " pu:1")).RealThreads());
  EXPECT_FALSE(d->oversubscribed());
  std::vector<std::atomic<int>> seen(static_cast<size_t>(n));
  std::vector<std::atomic<int>> wrong(static_cast<size_t>(n));
  for (int cpu = 0; cpu < n; ++cpu) {
    seen[static_cast<size_t>(cpu)] = -1;
    wrong[static_cast<size_t>(cpu)] = 0;
    const int host = d->HostCpu(cpu);
    ASSERT_GE(host, 0);
    ISOLATION_ASSERT_OK(d->Spawn(Spec("pinned", cpu, [&, cpu, host](TaskContext& ctx) {
      const int where = sched_getcpu();
      seen[static_cast<size_t>(cpu)] = where;
      if (where != host || ctx.cpu() != cpu) ++wrong[static_cast<size_t>(cpu)];
      return Step::Run(200 * kNsPerUs);
    })));
  }
  ASSERT_TRUE(RunUntil(*d, [&] {
    for (auto& s : seen) {
      if (s.load() < 0) return false;
    }
    return true;
  }));
  for (int cpu = 0; cpu < n; ++cpu) {
    EXPECT_EQ(d->ObservedHostCpu(cpu), d->HostCpu(cpu)) << cpu;
    EXPECT_EQ(seen[static_cast<size_t>(cpu)].load(), d->HostCpu(cpu)) << cpu;
    EXPECT_EQ(wrong[static_cast<size_t>(cpu)].load(), 0) << cpu;
  }
  // Distinct model CPUs get distinct host CPUs when they fit.
  std::vector<int> hosts;
  for (int cpu = 0; cpu < n; ++cpu) hosts.push_back(d->HostCpu(cpu));
  std::sort(hosts.begin(), hosts.end());
  EXPECT_EQ(std::unique(hosts.begin(), hosts.end()), hosts.end());
}

TEST(RealDriverPinning, OversubscribedModelStillRuns) {
  const int n = HostCpusAllowed() * 2 + 1;
  if (n > 64) GTEST_SKIP() << "large host";
  ISOLATION_ASSERT_OK_AND_ASSIGN(
      auto d, MachineBuilder().Topology(absl::StrCat("core:", n, " pu:1")).RealThreads());
  EXPECT_TRUE(d->oversubscribed());
  std::atomic<int> runs{0};
  for (int cpu = 0; cpu < n; ++cpu) {
    ISOLATION_ASSERT_OK(d->Spawn(Spec("t", cpu, [&](TaskContext&) {
      ++runs;
      return Step::Sleep(kNsPerMs);
    })));
  }
  EXPECT_TRUE(RunUntil(*d, [&] { return runs.load() >= n; }));
  for (int cpu = 0; cpu < n; ++cpu) {
    EXPECT_EQ(d->HostCpu(cpu), d->ObservedHostCpu(cpu)) << cpu;
  }
}

TEST(RealDriverPinning, BadHostCpuMapIsAnError) {
  ISOLATION_ASSERT_OK_AND_ASSIGN(Topology t, Topology::FromSynthetic("core:2 pu:1"));
  RealDriverOptions opts;
  opts.host_cpu_map = {0, 100000};
  auto d = RealThreadDriver::Create(t, IsolationConfig(t), opts);
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(d.status().message()).find("100000"), std::string::npos);
  opts.host_cpu_map = {0};
  EXPECT_FALSE(RealThreadDriver::Create(t, IsolationConfig(t), opts).ok());
  opts = {};
  opts.hz = 0;
  EXPECT_FALSE(RealThreadDriver::Create(t, IsolationConfig(t), opts).ok());
}

// Counts hooks; callable from several CPU threads.
class CountingHooks : public Hooks {
 public:
  void OnTick(CpuContext& ctx, TaskId) override { Bump(ticks, ctx.cpu()); }
  void OnIdleEnter(int cpu, Nanos) override { Bump(idle_enter, cpu); }
  void OnContextSwitch(int cpu, TaskId, TaskId, Nanos) override { Bump(switches, cpu); }
  void OnReturnToUser(CpuContext& ctx, TaskId) override { Bump(rtu, ctx.cpu()); }
  void OnTaskExit(int cpu, TaskId, Nanos) override { Bump(exits, cpu); }
  void OnMigrate(TaskId, int, int to, Nanos) override { Bump(migrate_to, to); }
  void OnCpuOffline(int cpu, Nanos) override { Bump(offline, cpu); }

  static void Bump(std::atomic<int>* a, int cpu) {
    if (cpu >= 0 && cpu < kMax) a[cpu].fetch_add(1, std::memory_order_relaxed);
  }
  static constexpr int kMax = 16;
  std::atomic<int> ticks[kMax] = {}, idle_enter[kMax] = {}, switches[kMax] = {}, rtu[kMax] = {},
                   exits[kMax] = {}, migrate_to[kMax] = {}, offline[kMax] = {};
};

TEST(RealDriverSemantics, TicksWorkTimersRunOnTheRightThread) {
  RealDriverOptions opts;
  opts.hz = 1000;
  opts.default_tick_mode = TickMode::kPeriodic;
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto d,
                                 MachineBuilder().Topology("core:2 pu:1").RealThreads(opts));
  CountingHooks hooks;
  d->AddHooks(&hooks);
  ISOLATION_ASSERT_OK(d->Spawn(Spec("busy", 0, [](TaskContext&) { return Step::Run(kNsPerMs); })));
  std::atomic<int> work_cpu{-1}, work_host{-1}, timer_cpu{-1}, timer_host{-1};
  std::atomic<int> cancelled_ran{0};
  d->QueueWorkOn(1, kNsPerMs, [&](CpuContext& ctx) {
    work_cpu = ctx.cpu();
    work_host = sched_getcpu();
  });
  d->ArmTimer(1, d->Now() + 2 * kNsPerMs, [&](CpuContext& ctx) {
    timer_cpu = ctx.cpu();
    timer_host = sched_getcpu();
  });
  const TimerId doomed =
      d->ArmTimer(0, d->Now() + kNsPerSec, [&](CpuContext&) { ++cancelled_ran; });
  EXPECT_TRUE(d->CancelTimer(doomed));
  EXPECT_FALSE(d->CancelTimer(doomed));
  ASSERT_TRUE(RunUntil(*d, [&] {
    return work_cpu.load() >= 0 && timer_cpu.load() >= 0 && d->Stats(0).interruptions > 0;
  }));
  EXPECT_GT(d->Stats(0).ticks, 0);
  EXPECT_GT(hooks.ticks[0].load(), 0);
  EXPECT_GT(d->Stats(0).interruptions, 0);  // ticks interrupted the busy task
  EXPECT_GT(d->Stats(0).max_stall_ns, 0);
  EXPECT_EQ(work_cpu.load(), 1);
  EXPECT_EQ(work_host.load(), d->HostCpu(1));
  EXPECT_EQ(d->Stats(1).work_items, 1);
  EXPECT_EQ(timer_cpu.load(), 1);
  EXPECT_EQ(timer_host.load(), d->HostCpu(1));
  EXPECT_EQ(d->Stats(1).timer_callbacks, 1);
  EXPECT_EQ(cancelled_ran.load(), 0);
  EXPECT_EQ(d->CurrentTask(0), 0);
  EXPECT_GE(hooks.rtu[0].load(), hooks.ticks[0].load());
}

TEST(RealDriverSemantics, NohzIdleAndNohzFullStopTheTick) {
  RealDriverOptions opts;
  opts.hz = 1000;
  ISOLATION_ASSERT_OK_AND_ASSIGN(
      auto d,
      MachineBuilder().Topology("core:2 pu:1").Isolcpus("1").NohzFull("1").RealThreads(opts));
  EXPECT_EQ(d->GetTickMode(1), TickMode::kNohzFull);
  ISOLATION_ASSERT_OK(d->Spawn(Spec("solo", 1, [](TaskContext&) { return Step::Run(kNsPerMs); })));
  ASSERT_TRUE(RunUntil(*d, [&] { return d->CurrentTask(1) == 0 && d->TickStopped(1); }));
  EXPECT_TRUE(d->TickStopped(1));  // one task on a nohz_full CPU
  EXPECT_TRUE(d->TickStopped(0));  // idle nohz-idle CPU
  EXPECT_GE(d->Stats(1).tick_stops, 1);
  // Stopped means no tick at all in a further window (a boot-time tick may
  // have slipped in before the first stop).
  const int64_t ticks0 = d->Stats(0).ticks, ticks1 = d->Stats(1).ticks;
  ISOLATION_ASSERT_OK(d->RunFor(30 * kNsPerMs));
  EXPECT_EQ(d->Stats(0).ticks, ticks0);
  EXPECT_EQ(d->Stats(1).ticks, ticks1);
  EXPECT_EQ(d->CurrentTask(1), 0);
  // A second task on the nohz_full CPU restarts its tick.
  ISOLATION_ASSERT_OK(
      d->Spawn(Spec("second", 1, [](TaskContext&) { return Step::Run(kNsPerMs); })));
  ASSERT_TRUE(RunUntil(*d, [&] { return d->Stats(1).ticks > ticks1; }));
  EXPECT_FALSE(d->TickStopped(1));
}

TEST(RealDriverSemantics, SleepBlockWakeAndExit) {
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto d, MachineBuilder().Topology("core:2 pu:1").RealThreads());
  CountingHooks hooks;
  d->AddHooks(&hooks);
  std::atomic<int> sleeps{0}, blocks{0};
  ISOLATION_ASSERT_OK(d->Spawn(Spec("sleeper", 1, [&](TaskContext&) {
    return ++sleeps <= 3 ? Step::Sleep(2 * kNsPerMs) : Step::Exit();
  })));
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto blocker, d->Spawn(Spec("blocker", 0, [&](TaskContext&) {
    ++blocks;
    return Step::Block();
  })));
  ASSERT_TRUE(RunUntil(*d, [&] { return sleeps.load() == 4 && blocks.load() == 1; }));
  EXPECT_EQ(sleeps.load(), 4);
  EXPECT_EQ(hooks.exits[1].load(), 1);
  EXPECT_EQ(blocks.load(), 1);
  EXPECT_TRUE(d->IsIdle(0));
  EXPECT_TRUE(d->IsIdle(1));
  d->Wake(blocker, -1);
  ASSERT_TRUE(RunUntil(*d, [&] { return blocks.load() == 2; }));
  // A wake from a timer callback on another CPU.
  d->ArmTimer(1, d->Now(), [&](CpuContext& ctx) { ctx.driver().Wake(blocker, ctx.cpu()); });
  ASSERT_TRUE(RunUntil(*d, [&] { return blocks.load() == 3; }));
}

TEST(RealDriverSemantics, RoundRobinSharesTheCpu) {
  RealDriverOptions opts;
  opts.hz = 1000;
  opts.timeslice = 2 * kNsPerMs;
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto d,
                                 MachineBuilder().Topology("core:1 pu:1").RealThreads(opts));
  std::atomic<int> steps[2] = {0, 0};
  for (int i = 0; i < 2; ++i) {
    ISOLATION_ASSERT_OK(d->Spawn(Spec("rr", 0, [&steps, i](TaskContext&) {
      ++steps[i];
      return Step::Run(200 * kNsPerUs);
    })));
  }
  ASSERT_TRUE(RunUntil(*d, [&] { return steps[0].load() > 50 && steps[1].load() > 50; }));
  EXPECT_GE(d->Stats(0).context_switches, 3);
}

TEST(RealDriverSemantics, AffinityChangeMigratesRunningTask) {
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto d, MachineBuilder().Topology("core:2 pu:1").RealThreads());
  CountingHooks hooks;
  d->AddHooks(&hooks);
  std::atomic<int> last_cpu{-1}, last_host{-1};
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto id, d->Spawn(Spec("mover", 0, [&](TaskContext& ctx) {
    last_cpu = ctx.cpu();
    last_host = sched_getcpu();
    return Step::Run(500 * kNsPerUs);
  })));
  ASSERT_TRUE(RunUntil(*d, [&] { return last_cpu.load() == 0; }));
  ISOLATION_ASSERT_OK(d->SetAffinity(id, CpuMask::Of(2, 1)));
  ASSERT_TRUE(RunUntil(*d, [&] { return last_cpu.load() == 1; }));
  EXPECT_EQ(d->TaskCpu(id), 1);
  EXPECT_EQ(last_cpu.load(), 1);
  EXPECT_EQ(last_host.load(), d->HostCpu(1));
  EXPECT_EQ(hooks.migrate_to[1].load(), 1);
  EXPECT_EQ(d->SetAffinity(id, CpuMask(2)).code(), absl::StatusCode::kInvalidArgument);
}

TEST(RealDriverSemantics, PausedBetweenRuns) {
  RealDriverOptions opts;
  opts.default_tick_mode = TickMode::kPeriodic;
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto d,
                                 MachineBuilder().Topology("core:2 pu:1").RealThreads(opts));
  std::atomic<int64_t> steps{0};
  ISOLATION_ASSERT_OK(d->Spawn(Spec("busy", 0, [&](TaskContext&) {
    ++steps;
    return Step::Run(100 * kNsPerUs);
  })));
  ASSERT_TRUE(RunUntil(*d, [&] { return steps.load() > 0; }));
  const int64_t after_run = steps.load();
  const CpuStats stats = d->Stats(0);
  EXPECT_GT(after_run, 0);
  // Nothing runs while paused.
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(steps.load(), after_run);
  EXPECT_EQ(d->Stats(0).ticks, stats.ticks);
  EXPECT_TRUE(RunUntil(*d, [&] { return steps.load() > after_run; }));
}

TEST(RealDriverHotplug, OfflineBetweenRunsMovesTasks) {
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto d, MachineBuilder().Topology("core:2 pu:1").RealThreads());
  CountingHooks hooks;
  d->AddHooks(&hooks);
  std::atomic<int> last_cpu{-1};
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto id, d->Spawn(Spec("t", 1, [&](TaskContext& ctx) {
    last_cpu = ctx.cpu();
    return Step::Run(300 * kNsPerUs);
  })));
  ASSERT_TRUE(RunUntil(*d, [&] { return last_cpu.load() == 1; }));
  // Queued while the threads are parked: still pending when the CPU goes down.
  std::atomic<int> work_cpu{-1};
  d->QueueWorkOn(1, 5 * kNsPerMs, [&](CpuContext& ctx) { work_cpu = ctx.cpu(); });
  ISOLATION_ASSERT_OK(d->SetCpuOnline(1, false));
  EXPECT_EQ(hooks.offline[1].load(), 1);
  EXPECT_EQ(d->TaskCpu(id), 0);
  EXPECT_FALSE(d->topology().IsOnline(1));
  EXPECT_FALSE(d->SetCpuOnline(0, false).ok());  // last online CPU
  ASSERT_TRUE(RunUntil(*d, [&] { return last_cpu.load() == 0 && work_cpu.load() >= 0; }));
  EXPECT_EQ(work_cpu.load(), 0);
  ISOLATION_ASSERT_OK(d->SetCpuOnline(1, true));
  ISOLATION_ASSERT_OK(d->Spawn(Spec("t2", 1, [](TaskContext&) { return Step::Run(kNsPerMs); })));
  EXPECT_TRUE(RunUntil(*d, [&] { return d->CurrentTask(1) == 1; }));
}

TEST(RealDriverSemantics, SyscallReturnsToUser) {
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto d, MachineBuilder().Topology("core:1 pu:1").RealThreads());
  CountingHooks hooks;
  d->AddHooks(&hooks);
  std::atomic<int> syscalls{0};
  std::atomic<int> rtu_after{-1};
  ISOLATION_ASSERT_OK(d->Spawn(Spec("sys", 0, [&](TaskContext& ctx) {
    if (syscalls.load() == 0) {
      const int before = hooks.rtu[0].load();
      ctx.Syscall([&](CpuContext&) { ++syscalls; });
      rtu_after = hooks.rtu[0].load() - before;
    }
    return Step::Block();
  })));
  ASSERT_TRUE(RunUntil(*d, [&] { return rtu_after.load() >= 0; }));
  EXPECT_EQ(syscalls.load(), 1);
  EXPECT_EQ(rtu_after.load(), 1);
}

}  // namespace
}  // namespace isolation
