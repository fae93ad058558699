// SPDX-License-Identifier: GPL-2.0-or-later
// Simulator: determinism, scale and the driver semantics of driver.h.

#include "absl/strings/str_cat.h"
#include "isolation/runtime/sim.h"

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "isolation/core/driver.h"
#include "isolation/testing/churn.h"
#include "isolation/testing/machine.h"
#include "isolation/testing/status_matchers.h"
#include "test_util.h"

namespace isolation {
namespace {

using ::isolation::testing::MachineBuilder;

using runtime_testing::Spec;
using ::testing::HasSubstr;

// A task that runs forever in chunks.
TaskSpec Busy(int cpu, Nanos chunk = 10 * kNsPerMs) {
  return Spec("busy", cpu, [chunk](TaskContext&) { return Step::Run(chunk); });
}

// Counts every hook per kind and CPU, and keeps a few ordered logs.
class RecordingHooks : public Hooks {
 public:
  void OnStart(Driver&) override { ++starts; }
  void OnTick(CpuContext& ctx, TaskId) override { ++count["tick"][ctx.cpu()]; }
  void OnIdleEnter(int cpu, Nanos) override { ++count["idle_enter"][cpu]; }
  void OnIdleExit(int cpu, Nanos) override { ++count["idle_exit"][cpu]; }
  void OnTickStop(CpuContext& ctx) override { ++count["tick_stop"][ctx.cpu()]; }
  void OnTickRestart(CpuContext& ctx) override { ++count["tick_restart"][ctx.cpu()]; }
  void OnContextSwitch(int cpu, TaskId prev, TaskId next, Nanos) override {
    ++count["switch"][cpu];
    switches.push_back({cpu, prev, next});
  }
  void OnReturnToUser(CpuContext& ctx, TaskId task) override {
    ++count["rtu"][ctx.cpu()];
    rtu_log.push_back(task);
  }
  void OnTaskFork(TaskId, TaskId, int, Nanos) override { ++count["fork"][0]; }
  void OnTaskExit(int cpu, TaskId task, Nanos) override {
    ++count["exit"][cpu];
    exited.push_back(task);
  }
  void OnMigrate(TaskId task, int from, int to, Nanos) override {
    migrations.push_back({task, from, to});
  }
  void OnAffinityChange(TaskId, const CpuMask&, Nanos) override { ++count["affinity"][0]; }
  void OnCpuOnline(int cpu, Nanos) override { ++count["online"][cpu]; }
  void OnCpuOffline(int cpu, Nanos) override { ++count["offline"][cpu]; }

  int Get(const std::string& kind, int cpu) { return count[kind][cpu]; }

  int starts = 0;
  std::map<std::string, std::map<int, int>> count;
  std::vector<std::vector<int>> switches;
  std::vector<TaskId> rtu_log;
  std::vector<TaskId> exited;
  std::vector<std::vector<int>> migrations;
};

// --- determinism and scale -----------------------------------------------------------

// A busy mixed workload on 16 CPUs: random runs, sleeps, syscalls, work items,
// timers, yields and block/wake pairs, all decided by the tasks' seeded rngs.
struct MixedRun {
  std::vector<SimTraceEvent> trace;
  uint64_t hash = 0;
  int64_t events = 0;
};

// Errors: the set-up's or the run's.
absl::StatusOr<MixedRun> RunMixedWorkload(uint64_t seed, SimOptions opts = {}) {
  opts.seed = seed;
  opts.record_trace = true;
  absl::StatusOr<std::unique_ptr<Simulator>> made =
      MachineBuilder().Topology("core:16 pu:1").Isolcpus("8-15").NohzFull("12-15").Simulator(opts);
  if (!made.ok()) return made.status();
  std::unique_ptr<Simulator> sim = *std::move(made);
  RecordingHooks hooks;
  sim->AddHooks(&hooks);
  // Wakeup placement: every third wakeup goes to a random CPU (exercises migration).
  testing::RandomWakeupPlacer placer(*sim, 16);
  sim->AddHooks(&placer);
  const int kTasks = 24;
  std::vector<TaskId> ids;
  for (int i = 0; i < kTasks; ++i) {
    TaskSpec spec = Spec(absl::StrCat("mixed", i), i % 16, [&sim, &ids](TaskContext& ctx) {
      std::mt19937_64& rng = ctx.rng();
      switch (rng() % 8) {
        case 0:
          return Step::Sleep(static_cast<Nanos>(rng() % (2 * kNsPerMs)));
        case 1:
          ctx.Syscall([](CpuContext& k) { k.Charge(3 * kNsPerUs); }, 1 * kNsPerUs);
          return Step::Run(static_cast<Nanos>(rng() % (200 * kNsPerUs)));
        case 2: {
          const int target = static_cast<int>(rng() % 16);
          ctx.driver().QueueWorkOn(target, static_cast<Nanos>(rng() % kNsPerMs),
                                   [](CpuContext& k) { k.Charge(5 * kNsPerUs); });
          return Step::Run(50 * kNsPerUs);
        }
        case 3: {
          const TaskId other = ids[rng() % ids.size()];
          const int target = static_cast<int>(rng() % 16);
          ctx.driver().ArmTimer(target, ctx.now() + static_cast<Nanos>(rng() % kNsPerMs),
                                [&sim, other](CpuContext& k) { sim->Wake(other, k.cpu()); });
          return Step::Run(20 * kNsPerUs);
        }
        case 4:
          return Step::Yield();
        case 5:
          return Step::Block();  // woken by some task's timer (case 3)
        default:
          return Step::Run(static_cast<Nanos>(rng() % kNsPerMs) + 1);
      }
    });
    spec.group = i % 3;
    absl::StatusOr<TaskId> id = sim->Spawn(std::move(spec));
    if (!id.ok()) return id.status();
    ids.push_back(*id);
  }
  // A watchdog wakes everything now and then so blocked tasks keep the run busy.
  for (int k = 1; k <= 40; ++k) {
    sim->At(k * 5 * kNsPerMs, [&sim, &ids] {
      for (TaskId id : ids) sim->Wake(id, -1);
    });
  }
  if (absl::Status run = sim->RunFor(200 * kNsPerMs); !run.ok()) return run;
  return MixedRun{sim->trace(), sim->TraceHash(), sim->events_processed()};
}

TEST(SimulatorDeterminism, SameSeedGivesIdenticalTrace) {
  ISOLATION_ASSERT_OK_AND_ASSIGN(const MixedRun a, RunMixedWorkload(42));
  ISOLATION_ASSERT_OK_AND_ASSIGN(const MixedRun b, RunMixedWorkload(42));
  ASSERT_GT(a.trace.size(), 10000u) << "the workload should be busy";
  EXPECT_EQ(a.trace.size(), b.trace.size());
  EXPECT_TRUE(a.trace == b.trace);
  EXPECT_EQ(a.hash, b.hash);
  EXPECT_EQ(a.events, b.events);
  // The workload really exercised every kind of event.
  std::map<std::string, int> kinds;
  for (const SimTraceEvent& e : a.trace) ++kinds[e.kind];
  for (const char* k : {"tick", "switch", "idle_enter", "idle_exit", "tick_stop", "tick_restart",
                        "work", "timer", "rtu", "fork", "migrate", "wake", "syscall"}) {
    EXPECT_GT(kinds[k], 0) << k;
  }
}

TEST(SimulatorDeterminism, DifferentSeedGivesDifferentTrace) {
  ISOLATION_ASSERT_OK_AND_ASSIGN(const MixedRun a, RunMixedWorkload(42));
  ISOLATION_ASSERT_OK_AND_ASSIGN(const MixedRun b, RunMixedWorkload(43));
  EXPECT_NE(a.hash, b.hash);
  EXPECT_FALSE(a.trace == b.trace);
}

// Concurrent wake-ups: the windows are off unless asked for,
// and a run with them on is still fixed by its seed -- and differs from the
// run without them (so the window is really in the trace).
TEST(SimulatorConcurrentWakeups, WindowsOffByDefaultDeterministicWhenOn) {
  EXPECT_EQ(SimOptions{}.wake_select_cost, 0);
  EXPECT_EQ(SimOptions{}.idle_entry_cost, 0);
  SimOptions on;
  on.wake_select_cost = 2 * kNsPerUs;
  on.idle_entry_cost = 5 * kNsPerUs;
  ISOLATION_ASSERT_OK_AND_ASSIGN(const MixedRun a, RunMixedWorkload(42, on));
  ISOLATION_ASSERT_OK_AND_ASSIGN(const MixedRun b, RunMixedWorkload(42, on));
  EXPECT_EQ(a.hash, b.hash);
  EXPECT_EQ(a.events, b.events);
  EXPECT_TRUE(a.trace == b.trace);
  ISOLATION_ASSERT_OK_AND_ASSIGN(const MixedRun off, RunMixedWorkload(42));
  EXPECT_NE(a.hash, off.hash);
  std::map<std::string, int> kinds;
  for (const SimTraceEvent& e : a.trace) ++kinds[e.kind];
  EXPECT_GT(kinds["enqueue"], 0) << "every wakeup's enqueue is its own event";
  EXPECT_EQ(kinds["lost_wakeup"], 0) << "the default re-check never loses one";
  for (const SimTraceEvent& e : off.trace) EXPECT_STRNE(e.kind, "enqueue");
}

TEST(SimulatorConcurrentWakeups, NegativeCostsAreRejected) {
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto topo, Topology::FromSynthetic("core:2 pu:1"));
  for (int which = 0; which < 2; ++which) {
    SimOptions o;
    (which == 0 ? o.wake_select_cost : o.idle_entry_cost) = -1;
    auto sim = Simulator::Create(topo, IsolationConfig(topo), o);
    ASSERT_FALSE(sim.ok());
    EXPECT_EQ(sim.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(sim.status().message().find(which == 0 ? "wake_select -1" : "idle_entry -1"),
              std::string::npos)
        << sim.status();
  }
}

// A wakeup whose enqueue lands inside the idle entry's window: the re-check
// at the window's end runs it; a hook that skips the re-check leaves the CPU
// asleep with the task queued (a lost wakeup, counted and traced).
TEST(SimulatorConcurrentWakeups, EnqueueInIdleEntryWindowNeedsTheRecheck) {
  for (bool recheck : {true, false}) {
    SCOPED_TRACE(recheck);
    SimOptions opts = ZeroCostSimOptions(1000);
    opts.idle_entry_cost = 5 * kNsPerUs;
    opts.record_trace = true;
    ISOLATION_ASSERT_OK_AND_ASSIGN(auto sim,
                                   MachineBuilder().Topology("core:2 pu:1").Simulator(opts));
    struct Handshake : Hooks {
      bool IdleRecheck(int, Nanos) override {
        ++asked;
        return recheck;
      }
      bool recheck = true;
      int asked = 0;
    } hs;
    hs.recheck = recheck;
    sim->AddHooks(&hs);
    int runs = 0;
    // Runs 10 us, blocks (CPU 1 goes idle at 10 us: window to 15 us), and
    // after the wakeup at 12 us it runs again.
    auto id = sim->Spawn(Spec("t", 1, [&](TaskContext&) {
      ++runs;
      return runs == 1 ? Step::Run(10 * kNsPerUs) : runs == 2 ? Step::Block() : Step::Exit();
    }));
    ISOLATION_ASSERT_OK(id);
    sim->At(12 * kNsPerUs, [&] { sim->Wake(*id, -1); });
    ISOLATION_ASSERT_OK(sim->RunFor(2 * kNsPerMs));
    EXPECT_GT(hs.asked, 0);
    int lost_traced = 0;
    for (const SimTraceEvent& e : sim->trace()) lost_traced += std::string(e.kind) == "lost_wakeup";
    if (recheck) {
      EXPECT_EQ(runs, 3) << "the re-check ran the task queued during the window";
      EXPECT_EQ(sim->lost_wakeups(), 0);
      EXPECT_EQ(lost_traced, 0);
    } else {
      EXPECT_EQ(runs, 2) << "asleep with the task queued: it never runs again";
      EXPECT_EQ(sim->lost_wakeups(), 1);
      EXPECT_EQ(lost_traced, 1);
      EXPECT_EQ(sim->NumRunnable(1), 1);
      // A later event on that CPU (a kick by another enqueue) recovers it.
      ISOLATION_ASSERT_OK(sim->Spawn(Spec("kick", 1, [](TaskContext&) { return Step::Exit(); })));
      ISOLATION_ASSERT_OK(sim->RunFor(kNsPerMs));
      EXPECT_EQ(runs, 3);
    }
  }
}

// The select->enqueue window: the enqueue (and OnWakeEnqueue) lands
// wake_select_cost plus up to as much jitter after the select.
TEST(SimulatorConcurrentWakeups, EnqueueLandsAfterTheSelectWindow) {
  SimOptions opts = ZeroCostSimOptions(1000);
  opts.wake_select_cost = 3 * kNsPerUs;
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto sim,
                                 MachineBuilder().Topology("core:2 pu:1").Simulator(opts));
  struct Times : Hooks {
    int SelectTaskCpu(TaskId, int, int, Nanos now) override {
      selected = now;
      return -1;
    }
    void OnWakeEnqueue(TaskId, int cpu, Nanos now) override {
      enqueued = now;
      enqueue_cpu = cpu;
    }
    Nanos selected = -1, enqueued = -1;
    int enqueue_cpu = -1;
  } times;
  sim->AddHooks(&times);
  ISOLATION_ASSERT_OK_AND_ASSIGN(
      auto id, sim->Spawn(Spec("t", 1, [](TaskContext&) { return Step::Block(); })));
  ISOLATION_ASSERT_OK(sim->RunFor(kNsPerMs));
  sim->Wake(id, -1);
  ISOLATION_ASSERT_OK(sim->RunFor(kNsPerUs));
  EXPECT_EQ(times.selected, kNsPerMs);
  EXPECT_EQ(times.enqueued, -1) << "not enqueued yet inside the window";
  EXPECT_EQ(sim->NumRunnable(1), 0);
  ISOLATION_ASSERT_OK(sim->RunFor(10 * kNsPerUs));
  EXPECT_GE(times.enqueued - times.selected, 3 * kNsPerUs);
  EXPECT_LT(times.enqueued - times.selected, 6 * kNsPerUs);
  EXPECT_EQ(times.enqueue_cpu, 1);
}

TEST(SimulatorDeterminism, HashComputedWithoutRecording) {
  uint64_t hashes[2];
  for (int rec = 0; rec < 2; ++rec) {
    SimOptions opts;
    opts.record_trace = rec == 1;
    ISOLATION_ASSERT_OK_AND_ASSIGN(auto sim,
                                   MachineBuilder().Topology("core:4 pu:1").Simulator(opts));
    ISOLATION_ASSERT_OK(sim->Spawn(Busy(1, 300 * kNsPerUs)));
    ISOLATION_ASSERT_OK(sim->RunFor(20 * kNsPerMs));
    hashes[rec] = sim->TraceHash();
    EXPECT_EQ(sim->trace().empty(), rec == 0);
  }
  EXPECT_EQ(hashes[0], hashes[1]);
}

TEST(SimulatorScale, Runs128CpusPeriodicAllBusy) {
  SimOptions opts;
  opts.default_tick_mode = TickMode::kPeriodic;
  ISOLATION_ASSERT_OK_AND_ASSIGN(
      auto sim, MachineBuilder().Topology("package:2 l3cache:4 core:16 pu:1").Simulator(opts));
  ASSERT_EQ(sim->num_cpus(), 128);
  for (int cpu = 0; cpu < 128; ++cpu) ISOLATION_ASSERT_OK(sim->Spawn(Busy(cpu)));
  ISOLATION_ASSERT_OK(sim->RunFor(kNsPerSec));
  for (int cpu = 0; cpu < 128; ++cpu) {
    EXPECT_GE(sim->Stats(cpu).ticks, 990) << cpu;
    EXPECT_LE(sim->Stats(cpu).ticks, 1000) << cpu;
  }
}

TEST(SimulatorScale, Runs4096CpusMostlyIdle) {
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto sim, MachineBuilder()
                                               .Topology("package:4 l3cache:8 core:128 pu:1")
                                               .Isolcpus("1-4095")
                                               .NohzFull("1-4095")
                                               .Simulator());
  ASSERT_EQ(sim->num_cpus(), 4096);
  // Housekeeping CPU 0 runs a periodic tick-bound task, a few isolated CPUs run one task each.
  ISOLATION_ASSERT_OK(sim->Spawn(Busy(0)));
  for (int cpu : {1, 100, 2048, 4095}) ISOLATION_ASSERT_OK(sim->Spawn(Busy(cpu)));
  ISOLATION_ASSERT_OK(sim->RunFor(kNsPerSec));
  EXPECT_GE(sim->Stats(0).ticks, 990);
  for (int cpu : {1, 100, 2048, 4095}) {
    EXPECT_TRUE(sim->TickStopped(cpu)) << cpu;
    EXPECT_LE(sim->Stats(cpu).ticks, 1) << cpu;
  }
  EXPECT_EQ(sim->Stats(3000).ticks, 0);
  EXPECT_LT(sim->events_processed(), 100000);
}

TEST(SimulatorScale, Runs4096CpusPeriodicTick) {
  SimOptions opts;
  opts.default_tick_mode = TickMode::kPeriodic;
  ISOLATION_ASSERT_OK_AND_ASSIGN(
      auto sim, MachineBuilder().Topology("package:4 l3cache:8 core:128 pu:1").Simulator(opts));
  ISOLATION_ASSERT_OK(sim->RunFor(200 * kNsPerMs));
  for (int cpu : {0, 1, 4095}) EXPECT_EQ(sim->Stats(cpu).ticks, 199) << cpu;
}

// --- tick semantics ------------------------------------------------------------------

TEST(SimulatorTick, PeriodicBusyCpuTicksAtHz) {
  SimOptions opts;
  opts.default_tick_mode = TickMode::kPeriodic;
  opts.hz = 1000;
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto sim,
                                 MachineBuilder().Topology("core:2 pu:1").Simulator(opts));
  ISOLATION_ASSERT_OK(sim->Spawn(Busy(0)));
  ISOLATION_ASSERT_OK(sim->RunFor(kNsPerSec));
  // Ticks at 1 ms, 2 ms, ... 999 ms (the one at 1000 ms is not before the end).
  EXPECT_EQ(sim->Stats(0).ticks, 999);
  EXPECT_EQ(sim->Stats(0).interruptions, 999);
  EXPECT_EQ(sim->Stats(0).max_stall_ns, opts.tick_cost);
  EXPECT_EQ(sim->Stats(0).stalled_ns, 999 * opts.tick_cost);  // every tick stalled the task
  EXPECT_EQ(sim->Stats(0).tick_stops, 0);
  EXPECT_EQ(sim->Stats(1).ticks, 999);  // periodic: idle ticks too
  EXPECT_EQ(sim->Stats(1).interruptions, 0);
  EXPECT_EQ(sim->Stats(1).stalled_ns, 0);
}

TEST(SimulatorTick, HzChangesTickPeriod) {
  SimOptions opts;
  opts.default_tick_mode = TickMode::kPeriodic;
  opts.hz = 250;
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto sim,
                                 MachineBuilder().Topology("core:1 pu:1").Simulator(opts));
  EXPECT_EQ(sim->tick_period(), 4 * kNsPerMs);
  EXPECT_EQ(sim->hz(), 250);
  ISOLATION_ASSERT_OK(sim->RunFor(kNsPerSec));
  EXPECT_EQ(sim->Stats(0).ticks, 249);
}

TEST(SimulatorTick, NohzIdleIdleCpuGetsNoTicks) {
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto sim, MachineBuilder().Topology("core:2 pu:1").Simulator());
  RecordingHooks hooks;
  sim->AddHooks(&hooks);
  ISOLATION_ASSERT_OK(sim->Spawn(Busy(0)));
  ISOLATION_ASSERT_OK(sim->RunFor(500 * kNsPerMs));
  EXPECT_EQ(sim->GetTickMode(1), TickMode::kNohzIdle);
  EXPECT_EQ(sim->Stats(1).ticks, 0);
  EXPECT_TRUE(sim->TickStopped(1));
  EXPECT_TRUE(sim->IsIdle(1));
  EXPECT_EQ(hooks.Get("tick_stop", 1), 1);
  EXPECT_EQ(hooks.Get("idle_enter", 1), 1);
  EXPECT_EQ(sim->Stats(1).idle_ns, 500 * kNsPerMs);
  EXPECT_GE(sim->Stats(0).ticks, 499);  // the busy CPU keeps ticking
}

TEST(SimulatorTick, NohzFullSingleTaskStopsTickSecondTaskRestartsIt) {
  ISOLATION_ASSERT_OK_AND_ASSIGN(
      auto sim, MachineBuilder().Topology("core:2 pu:1").Isolcpus("1").NohzFull("1").Simulator());
  RecordingHooks hooks;
  sim->AddHooks(&hooks);
  EXPECT_EQ(sim->GetTickMode(1), TickMode::kNohzFull);
  EXPECT_EQ(sim->GetTickMode(0), TickMode::kNohzIdle);
  ISOLATION_ASSERT_OK(sim->Spawn(Busy(1)));
  ISOLATION_ASSERT_OK(sim->RunFor(200 * kNsPerMs));
  EXPECT_TRUE(sim->TickStopped(1));
  EXPECT_EQ(sim->Stats(1).ticks, 0);
  EXPECT_EQ(sim->Stats(1).interruptions, 0);
  EXPECT_EQ(sim->CurrentTask(1), 0);
  // A second runnable task needs the tick for round-robin.
  ISOLATION_ASSERT_OK(sim->Spawn(Busy(1)));
  ISOLATION_ASSERT_OK(sim->RunFor(200 * kNsPerMs));
  EXPECT_FALSE(sim->TickStopped(1));
  EXPECT_GE(sim->Stats(1).ticks, 199);
  EXPECT_GE(hooks.Get("tick_restart", 1), 1);
}

TEST(SimulatorTick, SetTickModeAppliesAtOnce) {
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto sim, MachineBuilder().Topology("core:2 pu:1").Simulator());
  ISOLATION_ASSERT_OK(sim->RunFor(10 * kNsPerMs));
  EXPECT_TRUE(sim->TickStopped(1));
  sim->SetTickMode(1, TickMode::kPeriodic);
  EXPECT_FALSE(sim->TickStopped(1));
  ISOLATION_ASSERT_OK(sim->RunFor(10 * kNsPerMs));
  EXPECT_EQ(sim->Stats(1).ticks, 9);  // 11 ms .. 19 ms
  sim->SetTickMode(1, TickMode::kNohzIdle);
  EXPECT_TRUE(sim->TickStopped(1));
  ISOLATION_ASSERT_OK(sim->RunFor(10 * kNsPerMs));
  EXPECT_EQ(sim->Stats(1).ticks, 9);
}

TEST(SimulatorSched, RoundRobinAtTickAfterTimeslice) {
  SimOptions opts;
  opts.default_tick_mode = TickMode::kPeriodic;
  opts.timeslice = 3 * kNsPerMs;
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto sim,
                                 MachineBuilder().Topology("core:1 pu:1").Simulator(opts));
  Nanos ran[2] = {0, 0};
  for (int i = 0; i < 2; ++i) {
    ISOLATION_ASSERT_OK(sim->Spawn(Spec("rr", 0, [&ran, i](TaskContext&) {
      ran[i] += 100 * kNsPerUs;
      return Step::Run(100 * kNsPerUs);
    })));
  }
  ISOLATION_ASSERT_OK(sim->RunFor(kNsPerSec));
  // Both make progress, each slice is ~3 ms, so ~330 switches.
  EXPECT_GT(ran[0], 400 * kNsPerMs);
  EXPECT_GT(ran[1], 400 * kNsPerMs);
  EXPECT_GE(sim->Stats(0).context_switches, 300);
  EXPECT_LE(sim->Stats(0).context_switches, 340);
}

// --- kernel activity -----------------------------------------------------------------

TEST(SimulatorWork, WorkItemInterruptsAndStallIsItsCost) {
  SimOptions opts;
  ISOLATION_ASSERT_OK_AND_ASSIGN(
      auto sim,
      MachineBuilder().Topology("core:2 pu:1").Isolcpus("1").NohzFull("1").Simulator(opts));
  ISOLATION_ASSERT_OK(sim->Spawn(Busy(1)));
  ISOLATION_ASSERT_OK(sim->RunFor(5 * kNsPerMs));
  EXPECT_EQ(sim->Stats(1).interruptions, 0);
  Nanos seen_at = -1;
  int seen_cpu = -1;
  sim->QueueWorkOn(1, kNsPerMs, [&](CpuContext& ctx) {
    seen_at = ctx.now();
    seen_cpu = ctx.cpu();
    ctx.Charge(7 * kNsPerUs);
  });
  ISOLATION_ASSERT_OK(sim->RunFor(5 * kNsPerMs));
  EXPECT_EQ(seen_cpu, 1);
  EXPECT_EQ(seen_at, 6 * kNsPerMs + opts.work_cost);
  const CpuStats st = sim->Stats(1);
  EXPECT_EQ(st.work_items, 1);
  EXPECT_EQ(st.interruptions, 1);
  EXPECT_EQ(st.max_stall_ns, opts.work_cost + 7 * kNsPerUs);
  EXPECT_EQ(sim->Stats(0).work_items, 0);
}

TEST(SimulatorWork, InterruptedRunIsExtendedByTheStall) {
  SimOptions opts;
  ISOLATION_ASSERT_OK_AND_ASSIGN(
      auto sim,
      MachineBuilder().Topology("core:2 pu:1").Isolcpus("1").NohzFull("1").Simulator(opts));
  std::vector<Nanos> step_times;
  ISOLATION_ASSERT_OK(sim->Spawn(Spec("t", 1, [&](TaskContext& ctx) {
    step_times.push_back(ctx.now());
    return step_times.size() < 3 ? Step::Run(kNsPerMs) : Step::Block();
  })));
  sim->QueueWorkOn(1, 1500 * kNsPerUs, [](CpuContext& ctx) { ctx.Charge(10 * kNsPerUs); });
  ISOLATION_ASSERT_OK(sim->RunFor(10 * kNsPerMs));
  ASSERT_EQ(step_times.size(), 3u);
  const Nanos start = step_times[0];
  EXPECT_EQ(step_times[1] - start, kNsPerMs);
  EXPECT_EQ(step_times[2] - step_times[1], kNsPerMs + opts.work_cost + 10 * kNsPerUs);
}

TEST(SimulatorWork, HousekeepingWorkAvoidsIsolatedCpus) {
  ISOLATION_ASSERT_OK_AND_ASSIGN(
      auto sim,
      MachineBuilder().Topology("core:8 pu:1").Isolcpus("2-7").NohzFull("2-7").Simulator());
  std::vector<int> ran_on;
  for (int i = 0; i < 20; ++i) {
    const int chosen = sim->QueueHousekeepingWork(
        i * kNsPerUs, [&ran_on](CpuContext& ctx) { ran_on.push_back(ctx.cpu()); });
    EXPECT_TRUE(chosen == 0 || chosen == 1) << chosen;
  }
  ISOLATION_ASSERT_OK(sim->RunFor(kNsPerMs));
  ASSERT_EQ(ran_on.size(), 20u);
  EXPECT_EQ(std::count(ran_on.begin(), ran_on.end(), 0), 10);  // round-robin
  EXPECT_EQ(std::count(ran_on.begin(), ran_on.end(), 1), 10);
}

TEST(SimulatorTimer, TimersFireAtTheirTimeAndCancel) {
  SimOptions opts;
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto sim,
                                 MachineBuilder().Topology("core:2 pu:1").Simulator(opts));
  Nanos fired_at = -1;
  int fired_cpu = -1, cancelled_ran = 0;
  const Nanos expires = 1234567;
  sim->ArmTimer(1, expires, [&](CpuContext& ctx) {
    fired_at = ctx.now();
    fired_cpu = ctx.cpu();
  });
  const TimerId doomed = sim->ArmTimer(0, 2 * kNsPerMs, [&](CpuContext&) { ++cancelled_ran; });
  ISOLATION_ASSERT_OK(sim->RunFor(kNsPerMs));
  EXPECT_EQ(fired_at, -1);
  EXPECT_TRUE(sim->CancelTimer(doomed));
  EXPECT_FALSE(sim->CancelTimer(doomed));
  ISOLATION_ASSERT_OK(sim->RunFor(5 * kNsPerMs));
  EXPECT_EQ(fired_at, expires + opts.timer_cost);  // base cost is charged first
  EXPECT_EQ(fired_cpu, 1);
  EXPECT_EQ(cancelled_ran, 0);
  EXPECT_EQ(sim->Stats(1).timer_callbacks, 1);
  EXPECT_EQ(sim->Stats(1).interruptions, 0);  // the CPU was idle
  EXPECT_TRUE(sim->IsIdle(1));
  // A timer in the past fires at once; a fired timer cannot be cancelled.
  Nanos late = -1;
  const TimerId past = sim->ArmTimer(0, 0, [&](CpuContext& ctx) { late = ctx.now(); });
  ISOLATION_ASSERT_OK(sim->RunFor(kNsPerMs));
  EXPECT_EQ(late, 6 * kNsPerMs + opts.timer_cost);
  EXPECT_FALSE(sim->CancelTimer(past));
}

TEST(SimulatorTimer, TimerOnIdleCpuDoesNotLeaveIdle) {
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto sim, MachineBuilder().Topology("core:2 pu:1").Simulator());
  RecordingHooks hooks;
  sim->AddHooks(&hooks);
  for (int i = 1; i <= 5; ++i) sim->ArmTimer(1, i * kNsPerMs, [](CpuContext&) {});
  ISOLATION_ASSERT_OK(sim->RunFor(10 * kNsPerMs));
  EXPECT_EQ(sim->Stats(1).timer_callbacks, 5);
  EXPECT_EQ(hooks.Get("idle_exit", 1), 0);
  EXPECT_EQ(hooks.Get("switch", 1), 0);
}

// --- task life cycle ------------------------------------------------------------------

TEST(SimulatorTask, SleepWakesAfterItsDuration) {
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto sim, MachineBuilder().Topology("core:2 pu:1").Simulator());
  std::vector<Nanos> times;
  ISOLATION_ASSERT_OK(sim->Spawn(Spec("sleeper", 1, [&](TaskContext& ctx) {
    times.push_back(ctx.now());
    return times.size() < 3 ? Step::Sleep(5 * kNsPerMs) : Step::Exit();
  })));
  ISOLATION_ASSERT_OK(sim->RunFor(50 * kNsPerMs));
  ASSERT_EQ(times.size(), 3u);
  EXPECT_GE(times[1] - times[0], 5 * kNsPerMs);
  EXPECT_LT(times[1] - times[0], 5 * kNsPerMs + 20 * kNsPerUs);  // switch + tick restart costs
  EXPECT_TRUE(sim->IsIdle(1));
}

TEST(SimulatorTask, BlockUntilWake) {
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto sim, MachineBuilder().Topology("core:2 pu:1").Simulator());
  RecordingHooks hooks;
  sim->AddHooks(&hooks);
  int runs = 0;
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto id, sim->Spawn(Spec("blocker", 1, [&](TaskContext&) {
    ++runs;
    return Step::Block();
  })));
  ISOLATION_ASSERT_OK(sim->RunFor(10 * kNsPerMs));
  EXPECT_EQ(runs, 1);
  EXPECT_TRUE(sim->IsIdle(1));
  sim->ArmTimer(0, 20 * kNsPerMs, [&](CpuContext& ctx) { ctx.driver().Wake(id, ctx.cpu()); });
  ISOLATION_ASSERT_OK(sim->RunFor(20 * kNsPerMs));
  EXPECT_EQ(runs, 2);
  EXPECT_EQ(sim->TaskCpu(id), 1);  // prev cpu is allowed and online
  sim->Wake(id, -1);               // a wake from outside
  ISOLATION_ASSERT_OK(sim->RunFor(kNsPerMs));
  EXPECT_EQ(runs, 3);
}

TEST(SimulatorTask, SelectTaskCpuHookPlacesWakeups) {
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto sim, MachineBuilder().Topology("core:4 pu:1").Simulator());
  struct Placer : Hooks {
    int SelectTaskCpu(TaskId, int, int, Nanos) override { return choice; }
    int choice = 3;
  } placer;
  RecordingHooks rec;
  sim->AddHooks(&placer);
  sim->AddHooks(&rec);
  ISOLATION_ASSERT_OK(sim->Spawn(Spec("s", 0, [](TaskContext&) { return Step::Sleep(kNsPerMs); })));
  ISOLATION_ASSERT_OK(sim->RunFor(1500 * kNsPerUs));
  EXPECT_EQ(sim->TaskCpu(0), 3);
  ASSERT_FALSE(rec.migrations.empty());
  EXPECT_EQ(rec.migrations[0], (std::vector<int>{0, 0, 3}));
  // An invalid choice (out of range) is ignored: prev cpu stays.
  placer.choice = 99;
  ISOLATION_ASSERT_OK(sim->RunFor(5 * kNsPerMs));
  EXPECT_EQ(sim->TaskCpu(0), 3);
}

TEST(SimulatorTask, ExitCallsHookAndFreesCpu) {
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto sim, MachineBuilder().Topology("core:2 pu:1").Simulator());
  RecordingHooks hooks;
  sim->AddHooks(&hooks);
  int steps = 0;
  ISOLATION_ASSERT_OK(sim->Spawn(Spec(
      "short", 1, [&](TaskContext&) { return ++steps < 3 ? Step::Run(kNsPerMs) : Step::Exit(); })));
  ISOLATION_ASSERT_OK(sim->RunFor(10 * kNsPerMs));
  EXPECT_EQ(hooks.exited, std::vector<TaskId>{0});
  EXPECT_EQ(hooks.Get("exit", 1), 1);
  EXPECT_TRUE(sim->IsIdle(1));
  EXPECT_EQ(sim->NumRunnable(1), 0);
  ASSERT_FALSE(hooks.switches.empty());
  EXPECT_EQ(hooks.switches.back(), (std::vector<int>{1, 0, kIdleTask}));
}

TEST(SimulatorTask, ReturnToUserAfterSyscallSwitchInAndTick) {
  SimOptions opts;
  opts.default_tick_mode = TickMode::kPeriodic;
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto sim,
                                 MachineBuilder().Topology("core:1 pu:1").Simulator(opts));
  struct Order : Hooks {
    void OnReturnToUser(CpuContext&, TaskId task) override {
      log.push_back(absl::StrCat("rtu", task));
    }
    void OnContextSwitch(int, TaskId, TaskId next, Nanos) override {
      log.push_back(absl::StrCat("switch", next));
    }
    void OnTick(CpuContext&, TaskId) override { log.push_back("tick"); }
    std::vector<std::string> log;
  } order;
  sim->AddHooks(&order);
  int step = 0;
  ISOLATION_ASSERT_OK(sim->Spawn(Spec("sys", 0, [&](TaskContext& ctx) {
    if (step++ == 0) {
      ctx.Syscall([&](CpuContext&) { order.log.push_back("syscall"); }, kNsPerUs);
      order.log.push_back("after");
    }
    return Step::Run(10 * kNsPerMs);
  })));
  ISOLATION_ASSERT_OK(sim->RunFor(1500 * kNsPerUs));
  const std::vector<std::string> want = {"switch0", "rtu0", "syscall", "rtu0",
                                         "after",   "tick", "rtu0"};
  EXPECT_EQ(order.log, want);
}

TEST(SimulatorTask, AffinityChangeMigratesRunningTask) {
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto sim, MachineBuilder().Topology("core:4 pu:1").Simulator());
  RecordingHooks hooks;
  sim->AddHooks(&hooks);
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto id, sim->Spawn(Busy(0)));
  ISOLATION_ASSERT_OK(sim->RunFor(kNsPerMs));
  EXPECT_EQ(sim->CurrentTask(0), id);
  sim->At(2 * kNsPerMs, [&] { ISOLATION_EXPECT_OK(sim->SetAffinity(id, CpuMask::Of(4, 2))); });
  ISOLATION_ASSERT_OK(sim->RunFor(2 * kNsPerMs));
  EXPECT_EQ(hooks.Get("affinity", 0), 1);
  EXPECT_EQ(sim->TaskCpu(id), 2);
  EXPECT_EQ(sim->CurrentTask(2), id);
  EXPECT_TRUE(sim->IsIdle(0));
  ASSERT_EQ(hooks.migrations.size(), 1u);
  EXPECT_EQ(hooks.migrations[0], (std::vector<int>{id, 0, 2}));
  // Errors name the bad value.
  absl::Status bad = sim->SetAffinity(id, CpuMask(4));
  EXPECT_EQ(bad.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(sim->SetAffinity(id, CpuMask::Of(8, 1)).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(sim->SetAffinity(77, CpuMask::Of(4, 1)).code(), absl::StatusCode::kInvalidArgument);
}

TEST(SimulatorTask, AffinityChangeFromOwnBody) {
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto sim, MachineBuilder().Topology("core:4 pu:1").Simulator());
  std::vector<int> cpus_seen;
  ISOLATION_ASSERT_OK(sim->Spawn(Spec("self", 0, [&](TaskContext& ctx) {
    cpus_seen.push_back(ctx.cpu());
    if (cpus_seen.size() == 2) {
      ISOLATION_EXPECT_OK(ctx.driver().SetAffinity(ctx.task(), CpuMask::Of(4, 3)));
    }
    return Step::Run(kNsPerMs);
  })));
  ISOLATION_ASSERT_OK(sim->RunFor(10 * kNsPerMs));
  ASSERT_GE(cpus_seen.size(), 4u);
  EXPECT_EQ(cpus_seen[0], 0);
  EXPECT_EQ(cpus_seen[1], 0);
  EXPECT_EQ(cpus_seen[2], 3);
  EXPECT_EQ(cpus_seen.back(), 3);
}

TEST(SimulatorHotplug, OfflineMovesTasksTimersAndWork) {
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto sim, MachineBuilder().Topology("core:4 pu:1").Simulator());
  RecordingHooks hooks;
  sim->AddHooks(&hooks);
  std::vector<TaskId> ids;
  for (int i = 0; i < 3; ++i) ids.push_back(*sim->Spawn(Busy(1)));
  CpuMask only_1_2(4);
  only_1_2.Set(1);
  only_1_2.Set(2);
  ISOLATION_ASSERT_OK(sim->SetAffinity(ids[2], only_1_2));
  ISOLATION_ASSERT_OK(sim->RunFor(kNsPerMs));
  int timer_cpu = -1, work_cpu = -1;
  sim->ArmTimer(1, 5 * kNsPerMs, [&](CpuContext& ctx) { timer_cpu = ctx.cpu(); });
  sim->QueueWorkOn(1, 5 * kNsPerMs, [&](CpuContext& ctx) { work_cpu = ctx.cpu(); });
  ISOLATION_ASSERT_OK(sim->SetCpuOnline(1, false));
  EXPECT_EQ(hooks.Get("offline", 1), 1);
  EXPECT_FALSE(sim->topology().IsOnline(1));
  for (TaskId id : ids) EXPECT_NE(sim->TaskCpu(id), 1);
  EXPECT_EQ(sim->TaskCpu(ids[2]), 2);  // within its affinity
  EXPECT_EQ(hooks.migrations.size(), 3u);
  ISOLATION_ASSERT_OK(sim->RunFor(10 * kNsPerMs));
  EXPECT_EQ(sim->NumRunnable(1), 0);
  EXPECT_TRUE(sim->TickStopped(1));
  EXPECT_NE(timer_cpu, -1);
  EXPECT_NE(timer_cpu, 1);
  EXPECT_NE(work_cpu, -1);
  EXPECT_NE(work_cpu, 1);
  const int64_t ticks = sim->Stats(1).ticks;
  ISOLATION_ASSERT_OK(sim->RunFor(10 * kNsPerMs));
  EXPECT_EQ(sim->Stats(1).ticks, ticks);
  // Spawn on an offline CPU is an error; online again works.
  EXPECT_EQ(sim->Spawn(Busy(1)).status().code(), absl::StatusCode::kInvalidArgument);
  ISOLATION_ASSERT_OK(sim->SetCpuOnline(1, true));
  EXPECT_EQ(hooks.Get("online", 1), 1);
  ISOLATION_EXPECT_OK(sim->Spawn(Busy(1)));
  ISOLATION_ASSERT_OK(sim->RunFor(kNsPerMs));
  EXPECT_EQ(sim->NumRunnable(1), 1);
}

TEST(SimulatorHotplug, LastOnlineCpuCannotGoDown) {
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto sim, MachineBuilder().Topology("core:2 pu:1").Simulator());
  ISOLATION_ASSERT_OK(sim->SetCpuOnline(0, false));
  EXPECT_FALSE(sim->SetCpuOnline(1, false).ok());
  EXPECT_EQ(sim->SetCpuOnline(5, false).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(sim->topology().IsOnline(1));
}

// --- misc ------------------------------------------------------------------------------

TEST(SimulatorApi, InvalidOptionsAndSpecsAreErrors) {
  ISOLATION_ASSERT_OK_AND_ASSIGN(Topology t, Topology::FromSynthetic("core:2 pu:1"));
  SimOptions bad;
  bad.hz = 0;
  EXPECT_EQ(Simulator::Create(t, IsolationConfig(t), bad).status().code(),
            absl::StatusCode::kInvalidArgument);
  bad = {};
  bad.timeslice = 0;
  EXPECT_FALSE(Simulator::Create(t, IsolationConfig(t), bad).ok());
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto sim, MachineBuilder().Topology("core:2 pu:1").Simulator());
  EXPECT_EQ(sim->Spawn(Busy(2)).status().code(), absl::StatusCode::kInvalidArgument);
  TaskSpec spec = Busy(0);
  spec.affinity = CpuMask::Of(2, 1);
  EXPECT_EQ(sim->Spawn(std::move(spec)).status().code(), absl::StatusCode::kInvalidArgument);
  TaskSpec nobody;
  EXPECT_FALSE(sim->Spawn(std::move(nobody)).ok());
  EXPECT_FALSE(sim->RunFor(-1).ok());
}

TEST(SimulatorApi, AtRunsAtExactTimeAndStartHookOnce) {
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto sim, MachineBuilder().Topology("core:2 pu:1").Simulator());
  RecordingHooks hooks;
  sim->AddHooks(&hooks);
  Nanos at = -1;
  sim->At(3333, [&] { at = sim->Now(); });
  ISOLATION_ASSERT_OK(sim->RunFor(kNsPerMs));
  ISOLATION_ASSERT_OK(sim->RunFor(kNsPerMs));
  EXPECT_EQ(at, 3333);
  EXPECT_EQ(hooks.starts, 1);
  EXPECT_EQ(sim->Now(), 2 * kNsPerMs);
  EXPECT_EQ(hooks.Get("idle_enter", 0), 1);  // boot: every CPU starts idle
  EXPECT_EQ(hooks.Get("idle_enter", 1), 1);
}

TEST(SimulatorApi, ZeroTimeBodyDoesNotHang) {
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto sim, MachineBuilder().Topology("core:1 pu:1").Simulator());
  int64_t calls = 0;
  ISOLATION_ASSERT_OK(sim->Spawn(Spec("spinner", 0, [&](TaskContext&) {
    ++calls;
    return Step::Run(0);
  })));
  ISOLATION_ASSERT_OK(sim->RunFor(kNsPerUs));
  EXPECT_GT(calls, 0);
}

// RunFor(1 s) of a body that never advances time took 4096 steps per virtual
// nanosecond: it never returned.  Now an error naming the task, kept for
// later calls.
TEST(SimulatorApi, RunForWithNoVirtualProgressStopsNamingTheTask) {
  for (const bool yield : {false, true}) {
    SCOPED_TRACE(yield ? "only task yielding" : "Step::Run(0)");
    ISOLATION_ASSERT_OK_AND_ASSIGN(auto sim, MachineBuilder().Topology("core:2 pu:1").Simulator());
    ISOLATION_ASSERT_OK(sim->Spawn(Spec(
        "spinner", 1, [yield](TaskContext&) { return yield ? Step::Yield() : Step::Run(0); })));
    const absl::Status s = sim->RunFor(kNsPerSec);
    EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
    EXPECT_THAT(s.message(), HasSubstr("no progress in virtual time on cpu 1"));
    EXPECT_THAT(s.message(), HasSubstr("'spinner'"));
    EXPECT_LT(sim->Now(), kNsPerMs);
    EXPECT_EQ(sim->RunFor(kNsPerUs).code(), absl::StatusCode::kFailedPrecondition);
  }
}

// A body that mixes zero-time steps with work makes progress (two tasks
// yielding to each other do too: each switch costs modelled time).
TEST(SimulatorApi, ZeroTimeStepsBetweenWorkAreProgress) {
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto busy, MachineBuilder().Topology("core:1 pu:1").Simulator());
  int64_t n = 0;
  ISOLATION_ASSERT_OK(busy->Spawn(Spec(
      "mixed", 0, [&n](TaskContext&) { return ++n % 100000 == 0 ? Step::Run(1) : Step::Run(0); })));
  ISOLATION_EXPECT_OK(busy->RunFor(20 * kNsPerUs));
}

}  // namespace
}  // namespace isolation
