// SPDX-License-Identifier: GPL-2.0-or-later
// vmstat under the deterministic simulator through VmstatHooks: what each
// built-in fold policy does in spec scenarios S7 (RT-init pattern), S12
// (interrupt dirtying), S13 (never returns to user), S14 (stat_refresh vs a
// spinning task) and S9 (quiet_vmstat per idle stop attempt) -- the outcomes
// that differ between the policies (A0 interrupts, A1 keeps the residue, ...)
// -- plus two hotplug regressions of the driver adapter.  What every variant
// must satisfy in these scenarios is the conformance kit's
// (VmstatSimConformance, run by vmstat_conformance_test).

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "gtest/gtest.h"
#include "isolation/core/isolation_config.h"
#include "isolation/runtime/sim.h"
#include "isolation/core/topology.h"
#include "isolation/testing/status_matchers.h"
#include "isolation/vmstat/vmstat.h"
#include "isolation/vmstat/hooks.h"

namespace isolation::vmstat {
namespace {

constexpr Nanos kP = 10 * kNsPerMs;  // stat interval, shortened for the model

struct Machine {
  std::unique_ptr<Simulator> sim;
  std::unique_ptr<Vmstat> vm;
  std::unique_ptr<VmstatHooks> hooks;
  std::map<std::tuple<int, int, int>, int64_t> truth;
  void Apply(int cpu, StatKind k, int inst, int item, int64_t d) {
    vm->Mod(cpu, k, inst, item, d);
    truth[{static_cast<int>(k), inst, item}] += d;
  }
  int64_t ConservationError() const {
    int64_t err = 0;
    for (StatKind k : {StatKind::kZone, StatKind::kNode}) {
      for (int inst = 0; inst < vm->num_instances(k); ++inst) {
        for (int item = 0; item < vm->num_items(k); ++item) {
          int64_t x = vm->SharedRaw(k, inst, item);
          for (int cpu = 0; cpu < vm->num_cpus(); ++cpu) {
            if (vm->IsOnline(cpu)) x += vm->Diff(cpu, k, inst, item);
          }
          auto it = truth.find({static_cast<int>(k), inst, item});
          err += std::abs(x - (it == truth.end() ? 0 : it->second));
        }
      }
    }
    return err;
  }
};

// 8 CPUs, CPUs 1-7 isolated and nohz_full, housekeeping CPU 0.
Machine MakeMachine(const std::string& s, uint64_t seed = 1) {
  Machine m;
  auto topo = Topology::FromSynthetic("package:1 core:8 pu:1").value();
  auto iso = IsolationConfig::FromFlags(topo, "1-7", "1-7").value();
  VmstatConfig c;
  c.fold_policy = s;
  c.num_cpus = topo.num_cpus();
  c.zones = {ZoneSpec{"Normal", 0, 16 * 262144, 8192, 10240, 12288}};
  c.stat_interval = kP;
  c.isolated = CpuMask(c.num_cpus);
  for (int cpu = 0; cpu < c.num_cpus; ++cpu) {
    if (iso.CpuIsIsolated(cpu)) c.isolated.Set(cpu);
  }
  c.nohz_full = iso.nohz_full();
  auto vm = Vmstat::Create(c).value();
  m.vm = std::move(vm);
  m.hooks = std::make_unique<VmstatHooks>(*m.vm);
  SimOptions o;
  o.seed = seed;
  auto sim = Simulator::Create(topo, iso, o).value();
  m.sim = std::move(sim);
  m.sim->AddHooks(m.hooks.get());
  return m;
}

int64_t IsolatedWorkRuns(const Machine& m) {
  int64_t n = 0;
  for (int cpu = 0; cpu < m.vm->num_cpus(); ++cpu) {
    if (m.vm->IsIsolated(cpu)) n += m.vm->Counters(cpu).work_runs;
  }
  return n;
}

// Housekeeping CPU 0: a task that keeps dirtying counters and sleeping.
void SpawnHousekeeper(Machine& m) {
  auto rng = std::make_shared<std::mt19937_64>(99);
  TaskSpec t;
  t.name = "hk";
  t.cpu = 0;
  t.affinity = CpuMask::Of(m.vm->num_cpus(), 0);
  t.body = MakeTaskBody([&m, rng](TaskContext& ctx) {
    ctx.Syscall([&m, rng](CpuContext& k) {
      m.Apply(k.cpu(), StatKind::kNode, 0, static_cast<int>((*rng)() % 4),
              static_cast<int64_t>((*rng)() % 7) - 3);
    });
    return Step::Sleep(200 * kNsPerUs);
  });
  ISOLATION_ASSERT_OK(m.sim->Spawn(std::move(t)));
}

struct RtResult {
  int64_t residue_after_spin = -1;
  int64_t work_runs_in_spin = 0;
};

// S7: each isolated CPU runs `syscalls` mlock/munlock-like syscalls (NR_MLOCK
// +1 / -1), then one mlock-like burst (< t on several items) and a user spin
// of `spin` with the tick stopped; the residue is read at the end of the spin.
void SpawnRtInit(Machine& m, int cpu, int syscalls, Nanos spin, RtResult* out) {
  auto state = std::make_shared<int>(0);
  auto work_at_spin = std::make_shared<int64_t>(0);
  TaskSpec t;
  t.name = "rt";
  t.cpu = cpu;
  t.affinity = CpuMask::Of(m.vm->num_cpus(), cpu);
  t.body = MakeTaskBody([&m, state, work_at_spin, syscalls, spin, out](TaskContext& ctx) {
    const int i = (*state)++;
    if (i < syscalls) {
      ctx.Syscall(
          [&m, i](CpuContext& k) {
            m.Apply(k.cpu(), StatKind::kZone, 0, kZoneMlock, i % 2 == 0 ? 1 : -1);
          },
          2 * kNsPerUs);
      return Step::Run(3 * kNsPerUs);
    }
    if (i == syscalls) {
      ctx.Syscall([&m](CpuContext& k) {
        m.Apply(k.cpu(), StatKind::kZone, 0, kZoneMlock, 5);
        m.Apply(k.cpu(), StatKind::kNode, 0, 1, 3);   // NR_ACTIVE_ANON
        m.Apply(k.cpu(), StatKind::kNode, 0, 13, 2);  // NR_ANON_MAPPED
      });
      *work_at_spin = m.vm->Counters(ctx.cpu()).work_runs;
      return Step::Run(spin);
    }
    out->residue_after_spin = m.vm->MaxAbsDiff(ctx.cpu());
    out->work_runs_in_spin = m.vm->Counters(ctx.cpu()).work_runs - *work_at_spin;
    return Step::Block();  // stays on the CPU's runqueue, off the CPU
  });
  ISOLATION_ASSERT_OK(m.sim->Spawn(std::move(t)));
}

// SpawnRtInit on each isolated CPU (1-7); element cpu receives CPU cpu's
// result (the tasks keep pointers into the buffer, which moving the returned
// vector does not reallocate).
std::vector<RtResult> SpawnRtInitOnIsolatedCpus(Machine& m, int syscalls, Nanos spin) {
  std::vector<RtResult> res(8);
  for (int cpu = 1; cpu < 8; ++cpu)
    SpawnRtInit(m, cpu, syscalls, spin, &res[static_cast<size_t>(cpu)]);
  return res;
}

class VmstatSimP : public ::testing::TestWithParam<std::string> {};

std::string ParamName(const ::testing::TestParamInfo<std::string>& info) {
  std::string n = info.param;
  for (char& ch : n) {
    if (ch == '.') ch = '_';  // "B.local" -> B_local (gtest names)
  }
  return n;
}

TEST_P(VmstatSimP, S7_RtInitPattern_I8_I9_I1) {
  const std::string s = GetParam();
  Machine m = MakeMachine(s);
  SpawnHousekeeper(m);
  std::vector<RtResult> res = SpawnRtInitOnIsolatedCpus(m, 2000, 4 * kP);
  ISOLATION_ASSERT_OK(m.sim->RunFor(8 * kP));
  int64_t residue_max = 0, spin_work = 0;
  for (int cpu = 1; cpu < 8; ++cpu) {
    ASSERT_GE(res[static_cast<size_t>(cpu)].residue_after_spin, 0)
        << "spin did not finish on cpu " << cpu;
    residue_max = std::max(residue_max, res[static_cast<size_t>(cpu)].residue_after_spin);
    spin_work += res[static_cast<size_t>(cpu)].work_runs_in_spin;
  }
  EXPECT_GT(m.hooks->shepherd_runs(), 0);
  EXPECT_EQ(m.hooks->last_shepherd_cpu(), 0);  // housekeeping only
  const int64_t isolated_work = IsolatedWorkRuns(m);
  if (s == "A0") {
    EXPECT_GT(isolated_work, 0);
    EXPECT_GE(spin_work, 7) << "A0 interrupts every isolated CPU during its spin";
    EXPECT_EQ(residue_max, 0);
  } else if (s == "A1") {
    EXPECT_EQ(isolated_work, 0);
    EXPECT_GT(residue_max, 0) << "A1 leaves the burst in the differentials";
  } else if (s == "B") {
    EXPECT_EQ(isolated_work, 0);
    EXPECT_EQ(residue_max, 0);
    EXPECT_GT(m.vm->Counters(1).return_to_user_folds, 0);
  } else if (s == "B.local") {
    // Every syscall arms the CPU's own work and its return to user folds
    // and cancels it (the timer is cancelled: no stale item runs either).
    EXPECT_EQ(isolated_work, 0);
    EXPECT_EQ(residue_max, 0);
    for (int cpu = 1; cpu < 8; ++cpu) {
      EXPECT_GT(m.vm->Counters(cpu).return_to_user_folds, 0) << "cpu " << cpu;
      EXPECT_GT(m.vm->Counters(cpu).local_work_arms, 0) << "cpu " << cpu;
      EXPECT_EQ(m.vm->Counters(cpu).cancelled_work_runs, 0) << "cpu " << cpu;
    }
  } else {
    EXPECT_EQ(isolated_work, 0);
    EXPECT_EQ(residue_max, 0);
    EXPECT_GT(m.vm->Counters(1).remote_folds, 0);
  }
  EXPECT_EQ(m.ConservationError(), 0);
}

// S12: a pure user loop on an isolated CPU takes an I/O-completion interrupt
// that decrements writeback counters.
TEST_P(VmstatSimP, S12_InterruptDirtying) {
  const std::string s = GetParam();
  Machine m = MakeMachine(s);
  SpawnHousekeeper(m);
  TaskSpec t;
  t.name = "vcpu";
  t.cpu = 3;
  t.affinity = CpuMask::Of(8, 3);
  t.body = MakeTaskBody([](TaskContext&) { return Step::Run(100 * kNsPerUs); });
  ISOLATION_ASSERT_OK(m.sim->Spawn(std::move(t)));
  m.sim->ArmTimer(3, kP / 2, [&m](CpuContext& k) {
    m.Apply(k.cpu(), StatKind::kNode, 0, kNodeWriteback, -3);
    m.Apply(k.cpu(), StatKind::kZone, 0, kZoneWritePending, -3);
  });
  ISOLATION_ASSERT_OK(m.sim->RunFor(5 * kP));
  const int64_t residue = m.vm->MaxAbsDiff(3);
  const int64_t work = m.vm->Counters(3).work_runs;
  if (s == "A0") {
    EXPECT_GT(work, 0);
    EXPECT_EQ(residue, 0);
  } else if (s == "A1") {
    EXPECT_EQ(work, 0);
    EXPECT_EQ(residue, 3);
  } else if (s == "B" || s == "B.local") {
    EXPECT_EQ(work, 0);
    EXPECT_EQ(residue, 0);  // folded on the interrupt's return to user
    EXPECT_EQ(m.vm->Counters(3).return_to_user_folds, 1);
  } else {
    EXPECT_EQ(work, 0);
    EXPECT_EQ(residue, 0);
  }
  EXPECT_EQ(m.ConservationError(), 0);
}

// S13: an isolated CPU that stays in kernel context (interrupt-driven work,
// no user task, so no return to user) dirties counters.
TEST_P(VmstatSimP, S13_NeverReturnsToUser) {
  const std::string s = GetParam();
  Machine m = MakeMachine(s);
  SpawnHousekeeper(m);
  for (int k = 1; k <= 3; ++k) {
    m.sim->ArmTimer(5, k * kP / 3,
                    [&m](CpuContext& c) { m.Apply(c.cpu(), StatKind::kNode, 0, 9, 2); });
  }
  ISOLATION_ASSERT_OK(m.sim->RunFor(5 * kP));
  const int64_t residue = m.vm->MaxAbsDiff(5);
  if (s == "A0") {
    EXPECT_GT(m.vm->Counters(5).work_runs, 0);
    EXPECT_EQ(residue, 0);
  } else if (s == "A1" || s == "B") {
    EXPECT_EQ(m.vm->Counters(5).work_runs, 0);
    EXPECT_EQ(residue, 6) << "no return to user, shepherd skips the CPU: residue stays";
  } else if (s == "B.local") {
    // The first write (P/3) armed the CPU's own work for 4P/3: it folds all
    // three writes (one interference), re-arms once because it moved
    // something, and the re-armed run at 7P/3 finds nothing and dies.
    EXPECT_EQ(m.vm->Counters(5).local_work_arms, 1);
    EXPECT_EQ(m.vm->Counters(5).work_runs, 2);
    EXPECT_EQ(residue, 0);
    EXPECT_FALSE(m.vm->WorkPending(5));
  } else {
    EXPECT_EQ(residue, 0);  // remote fold
  }
  EXPECT_EQ(m.ConservationError(), 0);
}

// S9: idle-entry cost, counted.  Isolated CPU 6 stays idle with its tick
// stopped and takes 50 interrupts (timers); every second one dirties a node
// counter (+1).  Each interrupt exit in idle is a tick-stop attempt with the
// tick already stopped (tick_nohz_irq_exit -> tick_nohz_idle_stop_tick).
// The driver delivers OnTickStop only on a running->stopped transition, so
// the adapter's quiet_vmstat runs on the first attempt only (mainline); the
// seed's v8 5/5 form (quiet_vmstat on every attempt) is played by the timer
// callback itself.  Counted per mode: quiet_vmstat gate checks (== real tick
// stops, vs one more per interrupt) and folds (B: the dirtied counters stay
// behind with first-only and are folded per attempt with every-attempt).
TEST_P(VmstatSimP, S9_IdleEntryQuietEveryAttemptVsFirst) {
  const std::string s = GetParam();
  constexpr int kCpu = 6;
  constexpr int kIrqs = 50;
  for (const bool every_attempt : {false, true}) {
    SCOPED_TRACE(every_attempt ? "every attempt" : "first only");
    Machine m = MakeMachine(s);
    SpawnHousekeeper(m);
    ISOLATION_ASSERT_OK(m.sim->RunFor(kP / 20));
    ASSERT_TRUE(m.sim->IsIdle(kCpu));
    ASSERT_TRUE(m.sim->TickStopped(kCpu));
    const CpuCounters before = m.vm->Counters(kCpu);
    const int64_t stops_before = m.sim->Stats(kCpu).tick_stops;
    for (int k = 1; k <= kIrqs; ++k) {
      m.sim->ArmTimer(kCpu, kP / 20 + k * kP / 10, [&m, k, every_attempt](CpuContext& c) {
        if (k % 2 == 0) m.Apply(c.cpu(), StatKind::kNode, 0, 3, 1);
        if (every_attempt) (void)m.vm->QuietVmstat(c.cpu(), c.driver().TickStopped(c.cpu()));
      });
    }
    ISOLATION_ASSERT_OK(m.sim->RunFor(kIrqs * kP / 10 + kP / 20));
    const CpuCounters after = m.vm->Counters(kCpu);
    const int64_t stops = m.sim->Stats(kCpu).tick_stops - stops_before;
    const int64_t gate_checks = after.quiet_calls - before.quiet_calls;
    const int64_t folds = after.quiet_folds - before.quiet_folds;
    EXPECT_EQ(gate_checks, stops + (every_attempt ? kIrqs : 0)) << "stops " << stops;
    if (s == "A0") {
      EXPECT_LT(stops, kIrqs) << "the interrupts themselves must not be tick stops";
    } else {
      EXPECT_EQ(stops, 0) << "the CPU stays idle with its tick stopped";
    }
    if (s == "A1") {
      EXPECT_EQ(folds, 0) << "A1's gate needs pending work, never queued on an isolated CPU";
      EXPECT_EQ(m.vm->MaxAbsDiff(kCpu), kIrqs / 2);
    } else if (s == "B") {
      EXPECT_EQ(folds, every_attempt ? kIrqs / 2 : 0);
      EXPECT_EQ(m.vm->MaxAbsDiff(kCpu), every_attempt ? 0 : kIrqs / 2);
    } else if (s == "B.local") {
      // Idle entry only folds.  Every attempt: as B.  First stop only: the
      // CPU's own work, armed by the first dirtying interrupt of each
      // episode, folds after P instead (it wakes the idle CPU: the model's
      // timer is not deferrable), so the residue stays below one period's
      // worth of interrupts (P / (P/5) = 5) instead of growing to 25.
      const int64_t work = after.work_runs - before.work_runs;
      EXPECT_EQ(folds, every_attempt ? kIrqs / 2 : 0);
      if (every_attempt) {
        EXPECT_EQ(m.vm->MaxAbsDiff(kCpu), 0);
      } else {
        EXPECT_GT(work, 0);
        EXPECT_LE(m.vm->MaxAbsDiff(kCpu), 5);
      }
      EXPECT_GT(after.local_work_arms, before.local_work_arms);
    } else if (s == "C" || s == "D" || s == "C.xadd" || s == "C.addo") {
      EXPECT_EQ(folds, 0) << "quiet_vmstat does nothing; the shepherd folds remotely";
      // Only the last interrupt's +1 came after the last shepherd pass (5 P).
      EXPECT_LE(m.vm->MaxAbsDiff(kCpu), 1);
    }  // A0: the shepherd's vmstat_update wakes the CPU; counted above
    EXPECT_EQ(m.ConservationError(), 0);
  }
}

// S14: stat_refresh (vmstat_refresh) while isolated CPU 3 runs a task that
// never yields (SCHED_FIFO busy loop; modelled by VmstatHooks::SetNeverYields,
// which keeps the CPU's kworker from running).  A0/A1/B wait for a work item
// on every CPU: within a bounded wait (10 P) the refresh has not completed and
// only CPU 3 is missing; it completes once the spinner yields.  C/D fold
// remotely: complete at once, every isolated CPU folded.
TEST_P(VmstatSimP, S14_StatRefreshVsSpinningTask) {
  const std::string s = GetParam();
  const bool remote = s == "C" || s == "D" || s == "C.xadd" || s == "C.addo";
  constexpr int kSpinCpu = 3;
  Machine m = MakeMachine(s);
  SpawnHousekeeper(m);
  TaskSpec t;
  t.name = "fifo-spinner";
  t.cpu = kSpinCpu;
  t.affinity = CpuMask::Of(m.vm->num_cpus(), kSpinCpu);
  t.body = MakeTaskBody([](TaskContext&) { return Step::Run(1000 * kP); });
  ISOLATION_ASSERT_OK(m.sim->Spawn(std::move(t)));
  m.hooks->SetNeverYields(kSpinCpu, true);
  ISOLATION_ASSERT_OK(m.sim->RunFor(kP / 2));
  // Interrupt-like dirtying of every isolated CPU (no return to user follows).
  for (int cpu = 1; cpu < 8; ++cpu) m.Apply(cpu, StatKind::kNode, 0, 2, 2);
  ASSERT_TRUE(m.hooks->StatRefresh(*m.sim));
  if (remote) {
    EXPECT_EQ(m.hooks->stat_refreshes_completed(), 1);
    EXPECT_EQ(m.hooks->stat_refresh_waiting(), 0);
    for (int cpu = 1; cpu < 8; ++cpu) EXPECT_EQ(m.vm->MaxAbsDiff(cpu), 0) << "cpu " << cpu;
  }
  ISOLATION_ASSERT_OK(m.sim->RunFor(10 * kP));  // the bounded wait
  if (remote) {
    EXPECT_EQ(m.hooks->stat_refreshes_completed(), 1);
    EXPECT_EQ(m.vm->Counters(kSpinCpu).work_runs, 0);
  } else {
    EXPECT_EQ(m.hooks->stat_refreshes_completed(), 0)
        << "timeout: stat_refresh still waiting for CPU " << kSpinCpu;
    EXPECT_EQ(m.hooks->stat_refresh_waiting(), 1);
    // B may fold CPU 3 when an interrupt (the parked item's wake-up) returns
    // to user with the tick stopped, B.local on any return to user, but that
    // does not finish the refresh.
    if (s != "B" && s != "B.local") {
      EXPECT_EQ(m.vm->MaxAbsDiff(kSpinCpu), 2) << "the spinning CPU was never refreshed";
    }
    for (int cpu = 1; cpu < 8; ++cpu) {
      if (cpu != kSpinCpu) {
        EXPECT_EQ(m.vm->MaxAbsDiff(cpu), 0) << "cpu " << cpu;
      }
    }
    EXPECT_FALSE(m.hooks->StatRefresh(*m.sim)) << "a second refresh must not start while one waits";
    // The spinner yields (e.g. RT throttling): the parked item runs.
    m.hooks->SetNeverYields(kSpinCpu, false);
    ISOLATION_ASSERT_OK(m.sim->RunFor(kP));
    EXPECT_EQ(m.hooks->stat_refreshes_completed(), 1);
    EXPECT_EQ(m.hooks->stat_refresh_waiting(), 0);
    EXPECT_EQ(m.vm->MaxAbsDiff(kSpinCpu), 0);
  }
  EXPECT_EQ(m.ConservationError(), 0);
}

// I10 (A0): CPU 6's vmstat_update re-queued itself for ~2P; the CPU goes
// down at 1.5P and the driver moves its pending items to housekeeping CPU 0.
// vmstat_cpu_down_prep cancelled that work, so it must not run there as CPU
// 0's own vmstat_update: CPU 0's work runs are the same as in the identical
// run without the hotplug, and none of CPU 0's items is found cancelled.
int64_t HousekeepingWorkRunsWithCpu6(bool take_cpu6_down) {
  Machine m = MakeMachine("A0");
  SpawnHousekeeper(m);
  TaskSpec t;
  t.name = "dirtier";
  t.cpu = 6;
  t.affinity = CpuMask::Of(m.vm->num_cpus(), 6);
  auto n = std::make_shared<int>(0);
  t.body = MakeTaskBody([&m, n](TaskContext& ctx) {
    if ((*n)++ == 60) return Step::Exit();  // ~1.2P: gone before the hotplug
    ctx.Syscall([&m](CpuContext& k) { m.Apply(k.cpu(), StatKind::kZone, 0, kZoneMlock, 1); });
    return Step::Sleep(200 * kNsPerUs);
  });
  ISOLATION_EXPECT_OK(m.sim->Spawn(std::move(t)));
  m.sim->At(kP + kP / 2, [&] {
    EXPECT_TRUE(m.vm->WorkPending(6));  // its item is queued, due at ~2P
    EXPECT_TRUE(m.vm->WorkPending(0));
    if (take_cpu6_down) {
      ISOLATION_EXPECT_OK(m.sim->SetCpuOnline(6, false));
    }
  });
  ISOLATION_EXPECT_OK(m.sim->RunFor(10 * kP));
  EXPECT_EQ(m.vm->Counters(6).work_runs, take_cpu6_down ? 1 : 2);  // ~P (and ~2P if up)
  EXPECT_EQ(m.ConservationError(), 0);
  // Run as CPU 0's work, the moved item (due just after CPU 0's own run at
  // ~2P) would find nothing to fold and clear CPU 0's pending bit, so CPU
  // 0's real item would later be discarded as cancelled.
  EXPECT_EQ(m.vm->Counters(0).cancelled_work_runs, 0);
  return m.vm->Counters(0).work_runs;
}

TEST(VmstatSimHotplug, I10_DeadCpuWorkDoesNotRunAsAnotherCpusWork) {
  const int64_t baseline = HousekeepingWorkRunsWithCpu6(false);
  EXPECT_GT(baseline, 0);
  EXPECT_EQ(HousekeepingWorkRunsWithCpu6(true), baseline);
}

// S15 / I10 (B.local, the v9 race): an interrupt dirties idle nohz_full CPU
// 6 at P/2, which arms its own work for 3P/2; the CPU goes down at P.  The
// armed work must be cancelled, not run elsewhere (nor as CPU 0's work) and
// not re-armed; after CPU 6 comes back a new dirty episode arms it again
// and its work folds it (the pending bit was not left set).
TEST(VmstatSimHotplug, S15_BLocalArmedWorkDoesNotRunElsewhere) {
  Machine m = MakeMachine("B.local");
  SpawnHousekeeper(m);
  m.sim->ArmTimer(6, kP / 2, [&m](CpuContext& k) { m.Apply(k.cpu(), StatKind::kNode, 0, 9, 4); });
  m.sim->At(kP, [&] {
    EXPECT_TRUE(m.vm->WorkPending(6));  // armed, due at 3P/2
    EXPECT_EQ(m.vm->Counters(6).local_work_arms, 1);
    ISOLATION_ASSERT_OK(m.sim->SetCpuOnline(6, false));
    EXPECT_FALSE(m.vm->WorkPending(6));
    EXPECT_EQ(m.vm->MaxAbsDiff(6), 0);  // folded by the dead-CPU fold
  });
  ISOLATION_ASSERT_OK(m.sim->RunFor(4 * kP));
  EXPECT_EQ(m.vm->Counters(6).work_runs, 0);
  EXPECT_EQ(m.vm->Counters(6).cancelled_work_runs, 0) << "the cancelled item still fired";
  EXPECT_EQ(m.vm->Counters(0).cancelled_work_runs, 0);
  EXPECT_EQ(m.vm->Counters(6).local_work_arms, 1);
  int64_t timer_irqs = 0;
  for (int cpu = 0; cpu < 8; ++cpu) timer_irqs += m.sim->Stats(cpu).timer_callbacks;
  EXPECT_EQ(timer_irqs, 1)
      << "only the dirtying interrupt: the cancelled work's timer must not fire anywhere";
  EXPECT_EQ(m.ConservationError(), 0);
  // Back online: the next dirty episode arms and the fallback folds.
  ISOLATION_ASSERT_OK(m.sim->SetCpuOnline(6, true));
  m.sim->ArmTimer(6, 4 * kP + kP / 2,
                  [&m](CpuContext& k) { m.Apply(k.cpu(), StatKind::kNode, 0, 9, 3); });
  ISOLATION_ASSERT_OK(m.sim->RunFor(4 * kP));
  EXPECT_EQ(m.vm->Counters(6).local_work_arms, 2);
  EXPECT_GT(m.vm->Counters(6).work_runs, 0);
  EXPECT_EQ(m.vm->MaxAbsDiff(6), 0);
  EXPECT_EQ(m.ConservationError(), 0);
}

INSTANTIATE_TEST_SUITE_P(BuiltIns, VmstatSimP,
                         ::testing::Values("A0", "A1", "B", "B.local", "C", "D", "C.xadd",
                                           "C.addo"),
                         ParamName);

}  // namespace
}  // namespace isolation::vmstat
