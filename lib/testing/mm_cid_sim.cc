// SPDX-License-Identifier: GPL-2.0-or-later
// MmCidSimConformance (testing/mm_cid.h): mm_cid on the simulator through
// MmCidHooks (CheckAlways after every event, incrementally): random
// workloads (I1-I6), the placement of scans relative to isolated CPUs (I10),
// and S13's never-preempted thread on an isolated CPU whose tick runs.

#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "isolation/core/isolation_config.h"
#include "isolation/core/topology.h"
#include "isolation/mm_cid/hooks.h"
#include "isolation/runtime/sim.h"
#include "isolation/testing/churn.h"
#include "isolation/testing/mm_cid.h"
#include "mm_cid_internal.h"

namespace isolation::testing::mm_cid {

using isolation::mm_cid::kNoTask;
using isolation::mm_cid::kScanDelayNs;
using isolation::mm_cid::MmCidHooks;

namespace {

absl::StatusOr<std::unique_ptr<Simulator>> MakeSim(const std::string& topo,
                                                   const std::string& isolcpus, uint64_t seed) {
  absl::StatusOr<Topology> t = Topology::FromSynthetic(topo);
  if (!t.ok()) return t.status();
  absl::StatusOr<IsolationConfig> iso = IsolationConfig::FromFlags(*t, isolcpus, "");
  if (!iso.ok()) return iso.status();
  SimOptions so;
  so.seed = seed;
  return Simulator::Create(*t, *iso, so);
}

void AddHooksFindings(Violations& out, const MmCidHooks& hooks, const std::string& where) {
  if (hooks.violations() != 0) {
    const std::vector<std::string> first = hooks.FirstViolations();
    out.push_back(absl::StrCat(where, ": ", hooks.violations(), " violations after events, first: ",
                               first.empty() ? std::string("?") : first.front()));
  }
  if (hooks.errors() != 0)
    out.push_back(absl::StrCat(where, ": ", hooks.errors(), " adapter errors"));
}

}  // namespace

// Several tasks per CPU, tasks of several mms, random run/sleep/yield bodies,
// random affinity changes (migrations) and exits on 8 CPUs for 400 ms.
Violations CheckSimRandomWorkload(const MmCidVariant& v, uint64_t seed) {
  auto sim = MakeSim("core:8 pu:1", "", seed);
  if (!sim.ok()) return {sim.status().ToString()};
  auto created = MmCid::Create(8, v);
  if (!created.ok()) return {created.status().ToString()};
  MmCid& m = **created;
  auto traits = isolation::mm_cid::DescribeVariant(v);
  if (!traits.ok()) return {traits.status().ToString()};
  internal::AllocationWatchHooks bound(m, *traits);
  MmCidHooks hooks(m);
  (*sim)->AddHooks(bound.before());
  (*sim)->AddHooks(&hooks);
  (*sim)->AddHooks(bound.after());
  auto spawned = SpawnChurnTasks(
      **sim, {.count = 20, .num_cpus = 8, .groups = 3, .first_steps = 50, .step_increment = 7});
  if (!spawned.ok()) return {spawned.status().ToString()};
  const std::vector<TaskId>& ids = *spawned;
  std::mt19937_64 rng(seed);
  Simulator* s = sim->get();
  for (int k = 0; k < 30; ++k) {
    const TaskId t = ids[rng() % ids.size()];
    CpuMask mask(8);
    mask.Set(static_cast<int>(rng() % 8));
    mask.Set(static_cast<int>(rng() % 8));
    s->At(static_cast<Nanos>(k) * 10 * kNsPerMs + 1,
          [s, t, mask] { (void)s->SetAffinity(t, mask); });
  }
  if (absl::Status st = s->RunFor(400 * kNsPerMs); !st.ok()) return {st.ToString()};
  Violations out;
  const std::string where = absl::StrCat("seed ", seed);
  AddHooksFindings(out, hooks, where);
  if (bound.violations() != 0) {
    out.push_back(absl::StrCat(where, ": ", bound.violations(),
                               " allocations above their bound, first: ", bound.first()[0]));
  }
  for (const std::string& q : m.CheckQuiescent()) out.push_back(absl::StrCat(where, " end: ", q));
  if (m.Stats().context_switches <= 100)
    out.push_back(absl::StrCat(where, ": too few context switches"));
  return out;
}

// I10: 16 CPUs, 1-7 and 9-15 isolated; on each CPU a hog of its own mm and a
// short periodic thread of a shared mm (two tasks, so the tick runs).
// Scans on isolated CPUs: none for offloaded placements (workers on
// housekeeping CPUs), some for placements that run on the triggering CPU;
// none at all for designs without a scan.
Violations CheckSimPlacement(const MmCidVariant& v) {
  auto traits = isolation::mm_cid::DescribeVariant(v);
  if (!traits.ok()) return {traits.status().ToString()};
  auto sim = MakeSim("core:16 pu:1", "1-7,9-15", 7);
  if (!sim.ok()) return {sim.status().ToString()};
  auto created = MmCid::Create(16, v);
  if (!created.ok()) return {created.status().ToString()};
  MmCidHooks hooks(**created);
  (*sim)->AddHooks(&hooks);
  for (int cpu = 0; cpu < 16; ++cpu) {
    for (int k = 0; k < 2; ++k) {
      TaskSpec t;
      t.name = "t";
      t.cpu = cpu;
      t.affinity = CpuMask::Of(16, cpu);
      t.group = k == 0 ? 100 + cpu : 1;  // a hog in its own mm + a thread of a shared mm
      t.body = MakeTaskBody([n = 0, k](TaskContext&) mutable {
        if (k == 0) return (n++ % 2 == 0) ? Step::Run(8 * kNsPerMs) : Step::Sleep(2 * kNsPerMs);
        return (n++ % 2 == 0) ? Step::Run(300 * kNsPerUs) : Step::Sleep(700 * kNsPerUs);
      });
      if (auto id = (*sim)->Spawn(std::move(t)); !id.ok()) return {id.status().ToString()};
    }
  }
  if (absl::Status st = (*sim)->RunFor(600 * kNsPerMs); !st.ok()) return {st.ToString()};
  Violations out;
  AddHooksFindings(out, hooks, "I10");
  if (!traits->design.lazy_axes) {
    if (hooks.TotalScans() != 0) out.push_back("I10: a design without background work scanned");
    if (hooks.IsolatedMaxStallNs() != 0)
      out.push_back("I10: a design without background work stalled a CPU");
    return out;
  }
  if (hooks.TotalScans() <= 0) out.push_back("I10: no scan ran in 600 ms");
  if (traits->placement.runs_on_trigger_cpu) {
    if (hooks.ScansOnIsolatedCpus() <= 0)
      out.push_back("I10: scans run where the task runs, yet none on isolated CPUs");
    if (hooks.IsolatedMaxStallNs() <= 0) out.push_back("I10: no stall recorded on an isolated CPU");
  } else {
    if (hooks.ScansOnIsolatedCpus() != 0) {
      out.push_back(absl::StrCat("I10: ", hooks.ScansOnIsolatedCpus(),
                                 " offloaded scans ran on isolated CPUs"));
    }
    if (hooks.IsolatedMaxStallNs() != 0)
      out.push_back("I10: an offloaded placement stalled an isolated CPU");
  }
  return out;
}

// S13 on the simulator: 8 CPUs, isolcpus 1-7 without nohz_full (the tick
// keeps running), HZ 1000.  Seven siblings, one per other CPU, run 5 ms and
// exit; the survivor starts at 1 ms on CPU 1 (when the siblings hold 0-6:
// it gets 7, a CPU number and an ID that differ), busy-loops 1 s, sleeps
// 2 ms, runs 10 ms, exits.  Sampled every ms of the busy phase.
NeverPreemptedSimRun RunNeverPreemptedSim(const MmCidVariant& v) {
  constexpr int kCpus = 8;
  constexpr int kSurvivorCpu = 1;
  constexpr int kGroup = 1;
  constexpr Nanos kBusy = 1000 * kNsPerMs;
  NeverPreemptedSimRun r;
  auto sim_or = MakeSim("core:8 pu:1", "1-7", 13);
  if (!sim_or.ok()) {
    r.invariants.push_back(sim_or.status().ToString());
    return r;
  }
  Simulator& sim = **sim_or;
  auto created = MmCid::Create(kCpus, v);
  if (!created.ok()) {
    r.invariants.push_back(created.status().ToString());
    return r;
  }
  MmCid& m = **created;
  MmCidHooks hooks(m);
  sim.AddHooks(&hooks);
  for (int cpu = 0; cpu < kCpus; ++cpu) {
    if (cpu == kSurvivorCpu) continue;
    TaskSpec t;
    t.name = absl::StrCat("sibling", cpu);
    t.cpu = cpu;
    t.affinity = CpuMask::Of(kCpus, cpu);
    t.group = kGroup;
    t.body = MakeTaskBody([n = 0](TaskContext&) mutable {
      return n++ == 0 ? Step::Run(5 * kNsPerMs) : Step::Exit();
    });
    if (!sim.Spawn(std::move(t)).ok()) r.invariants.push_back("spawn");
  }
  TaskId survivor = kNoTask;
  sim.At(kNsPerMs, [&] {
    TaskSpec t;
    t.name = "survivor";
    t.cpu = kSurvivorCpu;
    t.affinity = CpuMask::Of(kCpus, kSurvivorCpu);
    t.group = kGroup;
    t.body = MakeTaskBody([n = 0](TaskContext&) mutable {
      switch (n++) {
        case 0:
          return Step::Run(kBusy);
        case 1:
          return Step::Sleep(2 * kNsPerMs);
        case 2:
          return Step::Run(10 * kNsPerMs);
        default:
          return Step::Exit();
      }
    });
    auto id = sim.Spawn(std::move(t));
    if (id.ok()) survivor = *id;
  });
  int64_t switches_at_start = 0;
  Nanos last_exit = -1;
  for (Nanos t = 3 * kNsPerMs; t <= kBusy - kNsPerMs; t += kNsPerMs) {
    sim.At(t, [&, t] {
      if (survivor == kNoTask || sim.CurrentTask(kSurvivorCpu) != survivor) return;
      const MmId mm = hooks.GroupMm(kGroup);
      const int32_t id = m.TaskCid(survivor);
      if (r.start_id < 0) {
        r.start_id = id;
        switches_at_start = sim.Stats(kSurvivorCpu).context_switches;
      }
      if (last_exit < 0 && m.MmUsers(mm) == 1) last_exit = t;
      if (r.changed_after_last_exit < 0 && id != r.start_id) {
        r.changed_after_last_exit = last_exit >= 0 ? t - last_exit : 0;
        r.id_at_change = id;
      }
      r.id_end_of_busy = id;
      r.saw_lazy = r.saw_lazy || m.SlotLazy(mm, kSurvivorCpu);
    });
  }
  sim.At(kBusy - kNsPerMs / 2, [&] {
    r.switches_during_busy = sim.Stats(kSurvivorCpu).context_switches - switches_at_start;
  });
  sim.At(kBusy + 8 * kNsPerMs, [&] {
    if (survivor != kNoTask && sim.CurrentTask(kSurvivorCpu) == survivor)
      r.id_after_schedin = m.TaskCid(survivor);
  });
  if (absl::Status st = sim.RunFor(kBusy + 30 * kNsPerMs); !st.ok())
    r.invariants.push_back(st.ToString());
  AddHooksFindings(r.invariants, hooks, "S13");
  if (last_exit <= 0) r.invariants.push_back("S13 setup: the siblings never all exited");
  if (r.switches_during_busy != 0)
    r.invariants.push_back("S13 setup: the survivor switched while busy");
  r.kick_retakes = m.Stats().tick_kick_retakes;
  r.scans = m.Stats().scans;
  return r;
}

namespace {
Violations NeverPreemptedSimExpectations(const VariantTraits& t, const NeverPreemptedSimRun& r) {
  Violations out = internal::NeverPreemptedExpectations(
      t, r.start_id, r.id_end_of_busy, r.changed_after_last_exit, r.id_after_schedin, r.scans,
      r.kick_retakes,
      // one scan delay until a scan marks the slot, one more
      // for the unpreempted threshold, a tick and a sample
      2 * kScanDelayNs + 2 * kNsPerMs);
  if (t.tick_kick && (t.design.converges_at_schedin || t.allocator.compacts) &&
      r.changed_after_last_exit >= 0 && r.id_at_change != 0) {
    out.push_back(
        absl::StrCat("S13 kick: re-taken to ", r.id_at_change, ", not to the lowest free ID 0"));
  }
  // Without the kick, the scan must at least announce the reclaim on the
  // running survivor's slot (it resolves LAZY at its switch-out).
  if (t.design.lazy_axes && !t.tick_kick && !r.saw_lazy) {
    out.push_back("S13: no scan set LAZY on the running survivor's slot");
  }
  return out;
}
}  // namespace

Violations CheckNeverPreemptedSim(const MmCidVariant& v) {
  auto t = isolation::mm_cid::DescribeVariant(v);
  if (!t.ok()) return {t.status().ToString()};
  const NeverPreemptedSimRun r = RunNeverPreemptedSim(v);
  Violations out = r.invariants;
  const Violations e = NeverPreemptedSimExpectations(*t, r);
  out.insert(out.end(), e.begin(), e.end());
  return out;
}

// ---- the suite -----------------------------------------------------------------

TEST_P(MmCidSimConformance, I1_I6_RandomWorkload) { RunAsTest("I1_I6_RandomWorkload", GetParam()); }

TEST_P(MmCidSimConformance, I10_Placement) { RunAsTest("I10_Placement", GetParam()); }

TEST_P(MmCidSimConformance, S13_NeverPreemptedThread) {
  RunAsTest("S13_NeverPreemptedThread", GetParam());
}

// A binary that links the kit without instantiating this suite is not an error.
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(MmCidSimConformance);

namespace internal {
int MmCidSimConformanceAnchor() { return 0; }
}  // namespace internal

}  // namespace isolation::testing::mm_cid
