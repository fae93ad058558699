// SPDX-License-Identifier: GPL-2.0-or-later
// The hierarchy under both drivers through TmigrHooks: what v6.9 does on the
// simulator (the isolated busy CPU pulls), the real-thread driver (bounded,
// a few hundred ms: timers run, exactly once, none lost), and the hooks'
// offline fixes.  What every variant must do on the simulator is the kit's
// TmigrStress.SimulatorHousekeepingTimers / S26_*; S27 (real threads on the
// direct API) is TmigrStress.S27_RealThreads.

#include <memory>
#include <string>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "isolation/runtime/real_driver.h"
#include "isolation/runtime/sim.h"
#include "isolation/testing/status_matchers.h"
#include "isolation/tmigr/hooks.h"
#include "isolation/tmigr/timers.h"
#include "isolation/tmigr/variants.h"

namespace isolation::tmigr {
namespace {

struct DriverRun {
  int64_t on_isolated = 0;
  int64_t pulled_by_isolated = 0;
  int64_t timers_run = 0;
  int64_t twice = 0;
  int64_t lost = 0;  // expired by the end of the run, not run after a drain
  int64_t runtime_violations = 0;
};

// 4 model CPUs: 0 housekeeping (nohz idle, delayed work), 1-3 isolated busy.
DriverRun RunOn(bool simulated, const std::string& participation, uint64_t seed, Nanos duration) {
  DriverRun out;
  auto topo = Topology::FromSynthetic("pu:4").value();
  auto iso = IsolationConfig::FromFlags(topo, "1-3", "").value();
  std::unique_ptr<Driver> driver;
  if (simulated) {
    SimOptions so;
    so.seed = seed;
    auto d = Simulator::Create(topo, iso, so).value();
    driver = std::move(d);
  } else {
    RealDriverOptions ro;
    ro.hz = 1000;
    auto d = RealThreadDriver::Create(topo, iso, ro).value();
    driver = std::move(d);
  }
  Options o;
  o.participation = participation;
  auto ts = TimerSystem::Create(topo, o, TimerSystem::Config{driver->tick_period()}).value();
  ISOLATION_EXPECT_OK(ts->tmigr().SetIsolation(iso));
  ISOLATION_EXPECT_OK(ts->BootAll());
  ts->tmigr().InitIsolation();
  TmigrHooks hooks(*ts, TmigrHooks::Config{5 * kNsPerUs});
  driver->AddHooks(&hooks);
  driver->SetTickMode(0, TickMode::kNohzIdle);
  for (int c = 1; c < 4; ++c) driver->SetTickMode(c, TickMode::kPeriodic);
  TaskSpec hk;
  hk.name = "hk";
  hk.cpu = 0;
  hk.affinity = CpuMask::Of(4, 0);
  hk.body = hooks.MakeHousekeepingTask(0, 10 * kNsPerMs, 100 * kNsPerUs, 4 * kNsPerMs);
  ISOLATION_EXPECT_OK(driver->Spawn(std::move(hk)));
  for (int c = 1; c < 4; ++c) {
    TaskSpec busy;
    busy.name = "busy";
    busy.cpu = c;
    busy.affinity = CpuMask::Of(4, c);
    busy.body = MakeTaskBody([](TaskContext&) { return Step::Run(kNsPerMs); });
    ISOLATION_EXPECT_OK(driver->Spawn(std::move(busy)));
  }
  ISOLATION_EXPECT_OK(driver->RunFor(duration));
  const Nanos end = driver->Now();
  for (int c = 1; c < 4; ++c) {
    out.on_isolated += hooks.callbacks_on(c);
    out.pulled_by_isolated += hooks.remote_callbacks_on(c);
  }
  out.timers_run = ts->timers_run();
  driver.reset();  // joins the CPU threads before the hooks go away
  // Drain (quiescent now): every CPU wakes or ticks well after the end, so a
  // timer that expired during the run and still has not run is lost, not late.
  for (int pass = 1; pass <= 3; ++pass) {
    const Nanos t = end + pass * kNsPerSec;
    for (int c = 0; c < 4; ++c) ts->BaseIdle(c) ? ts->IdleWakeup(c, t) : ts->Tick(c, t);
  }
  out.lost = ts->CountLost(end);
  for (const TimerRecord& t : ts->timers()) out.twice += t.runs.load() > 1;
  out.runtime_violations = ts->runtime_violations();
  return out;
}

// Under v6.9 the busy isolated CPU 1 is the migrator of GRP0:0 and pulls.
TEST(TmigrDriver, SimulatorV69IsolatedBusyCpuPulls) {
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    const DriverRun v69 = RunOn(true, "v6.9", seed, 300 * kNsPerMs);
    EXPECT_GT(v69.timers_run, 0);
    EXPECT_GT(v69.pulled_by_isolated, 0) << seed;
    EXPECT_EQ(v69.twice, 0);
    EXPECT_EQ(v69.lost, 0);
    EXPECT_EQ(v69.runtime_violations, 0);
  }
}

// The real-thread driver, bounded (200 ms per variant): housekeeping timers
// run (a run that runs none proves nothing), each once, none lost; a variant
// that excludes isolated CPUs runs none there.  No timing is asserted: how
// late a timer ran depends on the host.
TEST(TmigrDriver, RealThreadDriverBounded) {
  for (const std::string& v : ParticipationRegistry().Names()) {
    const DriverRun r = RunOn(false, v, 1, 200 * kNsPerMs);
    EXPECT_GT(r.timers_run, 0) << v;
    EXPECT_EQ(r.twice, 0) << v;
    EXPECT_EQ(r.lost, 0) << v;
    EXPECT_EQ(r.runtime_violations, 0) << v;
    std::unique_ptr<Participation> p = (*ParticipationRegistry().Find(v))->factory();
    if (p->excludes_isolated_cpus()) {
      EXPECT_EQ(r.on_isolated, 0) << v;
    }
  }
}

// The hooks' offline fix (fc51689): a CPU that goes down while idle leaves
// its programmed wake-up armed; the simulator then runs that one-shot timer
// on a housekeeping (HK_TYPE_TIMER) CPU, as hrtimers migrate at CPU-down.
// The kernel tears a dead CPU's tick down instead, so the hook must do
// nothing there.  Set-up: CPU 0 nohz_full (idle, target of timers_dead_cpu),
// CPU 1 the housekeeping CPU that receives the dead CPU's timer, idle with
// its own wake-up at 8 ms for a local timer, CPU 2 idle with a wake-up at
// 5 ms, CPU 3 busy (keeps the hierarchy active).  CPU 2 goes down at 2 ms.
// Acting as CPU 1's wake-up at 5 ms, the stale timer would run an idle
// wake-up of CPU 1 that nothing programmed and arm a second wake-up chain
// for it, so CPU 1 would take two wake-up interrupts at 8 ms (one wake-up
// armed per CPU at a time is the hooks' contract).
struct DeadCpuWakeRun {
  int64_t cpu1_timer_irqs_at_8ms = 0;
  int64_t cpu1_timer_irqs = 0;
  int cpu1_timer_runs = 0;
  int cpu1_timer_run_cpu = -1;
  int cpu2_timer_runs = 0;  // the dead CPU's timer, moved by timers_dead_cpu()
  int cpu2_timer_run_cpu = -1;
  Nanos cpu2_timer_run_at = -1;
  int64_t runtime_violations = 0;
};

DeadCpuWakeRun RunDeadCpuWake(bool take_cpu2_down) {
  DeadCpuWakeRun out;
  auto topo = Topology::FromSynthetic("pu:4").value();
  auto iso = IsolationConfig::FromFlags(topo, "", "0").value();
  SimOptions so;
  so.record_trace = true;
  auto sim_or = Simulator::Create(topo, iso, so).value();
  Simulator& sim = *sim_or;
  auto ts_or = TimerSystem::Create(topo, Options{}, TimerSystem::Config{sim.tick_period()}).value();
  TimerSystem& ts = *ts_or;
  ISOLATION_EXPECT_OK(ts.BootAll());
  TmigrHooks hooks(ts, TmigrHooks::Config{0});
  sim.AddHooks(&hooks);
  constexpr Nanos kCpu1Timer = 8 * kNsPerMs;
  constexpr Nanos kCpu2Timer = 5 * kNsPerMs;
  int64_t cpu1_timer = -1;
  int64_t cpu2_timer = -1;
  // A pinned task: arm one local timer on its CPU, then exit.
  auto arm_local_and_exit = [&ts](Nanos at, int64_t* id) {
    return MakeTaskBody([&ts, at, id](TaskContext& ctx) {
      ctx.Syscall([&](CpuContext& k) {
        const int64_t t = ts.AddTimer(k.cpu(), at, /*global=*/false, k.now());
        if (id != nullptr) *id = t;
      });
      return Step::Exit();
    });
  };
  for (int c : {1, 2, 3}) {
    TaskSpec t;
    t.name = absl::StrCat("cpu", c);
    t.cpu = c;
    t.affinity = CpuMask::Of(4, c);
    if (c == 1) t.body = arm_local_and_exit(kCpu1Timer, &cpu1_timer);
    if (c == 2) t.body = arm_local_and_exit(kCpu2Timer, &cpu2_timer);
    if (c == 3) t.body = MakeTaskBody([](TaskContext&) { return Step::Run(kNsPerMs); });
    ISOLATION_EXPECT_OK(sim.Spawn(std::move(t)));
  }
  if (take_cpu2_down) {
    sim.At(2 * kNsPerMs, [&] {
      EXPECT_TRUE(sim.TickStopped(2));
      EXPECT_EQ(ts.ProgrammedWakeup(2), kCpu2Timer);  // its wake-up is armed
      ISOLATION_EXPECT_OK(sim.SetCpuOnline(2, false));
    });
  }
  ISOLATION_EXPECT_OK(sim.RunFor(20 * kNsPerMs));
  for (const SimTraceEvent& e : sim.trace()) {
    if (e.cpu != 1 || std::string_view(e.kind) != "timer") continue;
    ++out.cpu1_timer_irqs;
    if (e.time >= kCpu1Timer && e.time < kCpu1Timer + 100 * kNsPerUs) ++out.cpu1_timer_irqs_at_8ms;
  }
  EXPECT_GE(cpu1_timer, 0);
  if (cpu1_timer >= 0) {
    const TimerRecord& r = ts.timers()[static_cast<size_t>(cpu1_timer)];
    out.cpu1_timer_runs = r.runs.load();
    out.cpu1_timer_run_cpu = r.run_cpu;
  }
  EXPECT_GE(cpu2_timer, 0);
  if (cpu2_timer >= 0) {
    const TimerRecord& r = ts.timers()[static_cast<size_t>(cpu2_timer)];
    out.cpu2_timer_runs = r.runs.load();
    out.cpu2_timer_run_cpu = r.run_cpu;
    out.cpu2_timer_run_at = r.run_at;
  }
  out.runtime_violations = ts.runtime_violations();
  return out;
}

TEST(TmigrDriver, DeadCpuWakeTimerDoesNotActAsTheHousekeepingCpus) {
  const DeadCpuWakeRun baseline = RunDeadCpuWake(false);
  EXPECT_EQ(baseline.cpu1_timer_irqs, 1);  // only its own wake-up
  EXPECT_EQ(baseline.cpu1_timer_irqs_at_8ms, 1);
  const DeadCpuWakeRun r = RunDeadCpuWake(true);
  // The dead CPU's wake-up is delivered to CPU 1 at 5 ms (driver contract) ...
  EXPECT_EQ(r.cpu1_timer_irqs, 2);
  // ... but does not start a second wake-up chain for CPU 1.
  EXPECT_EQ(r.cpu1_timer_irqs_at_8ms, 1);
  EXPECT_EQ(r.cpu1_timer_runs, 1);
  EXPECT_EQ(r.cpu1_timer_run_cpu, 1);
  EXPECT_EQ(r.runtime_violations, 0);
}

// timers_dead_cpu() moves CPU 2's 5 ms timer to CPU 0, idle with its tick
// stopped and nothing of its own to wake for: the hooks must re-arm CPU 0's
// wake-up, or the moved timer waits past the end of the run (it had not run
// at 20 ms before OnCpuOffline re-armed the target).
TEST(TmigrDriver, DeadCpuTimersMovedToAnIdleCpuRunOnTime) {
  const DeadCpuWakeRun r = RunDeadCpuWake(true);
  EXPECT_EQ(r.cpu2_timer_runs, 1);
  EXPECT_EQ(r.cpu2_timer_run_cpu, 0);
  EXPECT_GE(r.cpu2_timer_run_at, 5 * kNsPerMs);
  EXPECT_LT(r.cpu2_timer_run_at, 6 * kNsPerMs);  // modelled time: one jiffy of slack
  EXPECT_EQ(r.runtime_violations, 0);
}

}  // namespace
}  // namespace isolation::tmigr
