// SPDX-License-Identifier: GPL-2.0-or-later
// MmCidStressConformance (testing/mm_cid.h): the long runs -- S7's
// thread-pool churn at full size (P = 256, 8 x 8 and 32 x 32) on the
// simulator -- and the bounded real-thread runs: S2's per-ID counters with
// tasks of one mm on both CPUs at once (MmCidHooks's real-thread I1 check
// asserted), and a scanner racing two switching CPUs.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "isolation/core/fence.h"
#include "isolation/core/clock.h"
#include "isolation/core/isolation_config.h"
#include "isolation/core/topology.h"
#include "isolation/mm_cid/hooks.h"
#include "isolation/runtime/real_driver.h"
#include "isolation/runtime/sim.h"
#include "isolation/mm_cid/switcher.h"
#include "isolation/testing/mm_cid.h"
#include "mm_cid_internal.h"

namespace isolation::testing::mm_cid {

using isolation::mm_cid::kNoTask;
using isolation::mm_cid::kScanDelayNs;
using isolation::mm_cid::MmCidHooks;
using isolation::mm_cid::MmCidStats;

namespace {

// CheckQuiescent() after each fork and exit (the events that change users,
// and owner619's mode) -- every simulator event is a quiescent point.
class QuiescentAfterForkExit final : public Hooks {
 public:
  explicit QuiescentAfterForkExit(const MmCid& m) : m_(m) {}
  void OnTaskFork(TaskId, TaskId, int, Nanos) override { Check("fork"); }
  void OnTaskExit(int, TaskId, Nanos) override { Check("exit"); }
  Violations first;
  int64_t count = 0;

 private:
  void Check(const char* where) {
    for (std::string& v : m_.CheckQuiescent()) {
      ++count;
      if (first.size() < 8) first.push_back(absl::StrCat(where, ": ", v));
    }
  }
  const MmCid& m_;
};

struct Pool {
  int ran = 0;
  int exited = 0;
  bool released = false;
};

}  // namespace

// S7 ([REWRITE]'s program): `pools` manager threads of one process, each
// repeatedly creating `threads` threads, waiting until all of them run,
// releasing them and waiting until they exited -- `rounds` times.
PoolChurnRun RunThreadPoolChurn(const MmCidVariant& v, int pools, int threads, int rounds) {
  constexpr int kP = 256;
  constexpr int kGroup = 1;
  PoolChurnRun r;
  absl::StatusOr<Topology> topo = Topology::FromSynthetic("core:256 pu:1");
  if (!topo.ok()) {
    r.invariants.push_back(topo.status().ToString());
    return r;
  }
  SimOptions so;
  so.seed = 7;
  auto sim_or = Simulator::Create(*topo, IsolationConfig(*topo), so);
  if (!sim_or.ok()) {
    r.invariants.push_back(sim_or.status().ToString());
    return r;
  }
  Simulator& sim = **sim_or;
  const int max_tasks = pools + pools * threads * rounds + 8;
  auto created = MmCid::Create(kP, v, MmCid::Limits{max_tasks, 4});
  if (!created.ok()) {
    r.invariants.push_back(created.status().ToString());
    return r;
  }
  MmCid& m = **created;
  auto traits = isolation::mm_cid::DescribeVariant(v);
  if (!traits.ok()) {
    r.invariants.push_back(traits.status().ToString());
    return r;
  }
  internal::AllocationWatchHooks bound(m, *traits);  // the ID bound at every allocation
  MmCidHooks hooks(m);                               // CheckAlways (I1, I2, I14) after every event
  QuiescentAfterForkExit quiescent(m);
  sim.AddHooks(bound.before());
  sim.AddHooks(&hooks);
  sim.AddHooks(bound.after());
  sim.AddHooks(&quiescent);
  auto state = std::make_shared<std::vector<Pool>>(static_cast<size_t>(pools));
  auto created_threads = std::make_shared<int64_t>(0);
  auto done_at = std::make_shared<Nanos>(0);
  for (int pool = 0; pool < pools; ++pool) {
    TaskSpec manager;
    manager.name = absl::StrCat("pool", pool);
    const int manager_cpu = (pool * kP / pools) % kP;
    manager.cpu = manager_cpu;
    manager.group = kGroup;
    manager.body = MakeTaskBody([=, phase = 0, round = 0](TaskContext& ctx) mutable -> Step {
      Pool& me = (*state)[static_cast<size_t>(pool)];
      for (;;) {
        if (phase == 0) {  // create the pool's threads
          if (round == rounds) {
            *done_at = std::max(*done_at, ctx.now());
            return Step::Exit();
          }
          me = Pool{};
          for (int i = 0; i < threads; ++i) {
            TaskSpec w;
            w.name = "worker";
            w.cpu = (manager_cpu + 1 + i) % kP;
            w.group = kGroup;
            w.parent = ctx.task();
            w.body = MakeTaskBody([state, pool, n = 0](TaskContext&) mutable -> Step {
              Pool& p = (*state)[static_cast<size_t>(pool)];
              if (n++ == 0) {
                ++p.ran;
                return Step::Run(20 * kNsPerUs);
              }
              if (!p.released) return Step::Sleep(50 * kNsPerUs);
              ++p.exited;
              return Step::Exit();
            });
            if (ctx.driver().Spawn(std::move(w)).ok()) ++*created_threads;
          }
          phase = 1;
          return Step::Sleep(50 * kNsPerUs);
        }
        if (phase == 1) {  // wait until all run, then release them
          if (me.ran < threads) return Step::Sleep(50 * kNsPerUs);
          me.released = true;
          phase = 2;
        }
        if (me.exited < threads) return Step::Sleep(50 * kNsPerUs);  // wait until all exited
        ++round;
        phase = 0;
      }
    });
    if (!sim.Spawn(std::move(manager)).ok()) r.invariants.push_back("spawn of a manager");
  }
  if (absl::Status st = sim.RunFor(2 * kNsPerSec); !st.ok()) r.invariants.push_back(st.ToString());
  if (hooks.violations() != 0) {
    r.invariants.push_back(
        absl::StrCat("S7: ", hooks.violations(), " violations after events, first: ",
                     hooks.FirstViolations().empty() ? "?" : hooks.FirstViolations().front()));
  }
  if (hooks.errors() != 0)
    r.invariants.push_back(absl::StrCat("S7: ", hooks.errors(), " adapter errors"));
  if (bound.violations() != 0) {
    r.invariants.push_back(absl::StrCat(
        "S7: ", bound.violations(), " allocations above their bound, first: ", bound.first()[0]));
  }
  if (quiescent.count != 0) {
    r.invariants.push_back(
        absl::StrCat("S7: ", quiescent.count,
                     " quiescent violations after forks/exits, first: ", quiescent.first.front()));
  }
  for (const std::string& q : m.CheckQuiescent())
    r.invariants.push_back(absl::StrCat("S7 end: ", q));
  r.threads_created = *created_threads;
  r.simulated = *done_at;
  if (*done_at <= 0)
    r.invariants.push_back("S7: the pools did not finish within 2 simulated seconds");
  const MmCidStats s = m.Stats();
  r.creations_per_sim_second = r.simulated > 0 ? static_cast<double>(r.threads_created) *
                                                     kNsPerSec / static_cast<double>(r.simulated)
                                               : 0;
  r.bitmap_ops_per_switch = static_cast<double>(s.bitmap_ops) /
                            static_cast<double>(std::max<int64_t>(s.context_switches, 1));
  r.mode_changes = s.mode_changes;
  r.remote_lock_acquisitions = s.remote_lock_acquisitions;
  if (r.threads_created != static_cast<int64_t>(pools) * threads * rounds) {
    r.invariants.push_back(absl::StrCat("S7: ", r.threads_created, " threads created"));
  }
  if (s.alloc_failures != 0) r.invariants.push_back("I14: an allocation gave up");
  return r;
}

Violations CheckThreadPoolChurn(const MmCidVariant& v) {
  auto traits = isolation::mm_cid::DescribeVariant(v);
  if (!traits.ok()) return {traits.status().ToString()};
  Violations out;
  for (auto [pools, threads] : {std::pair{8, 8}, std::pair{32, 32}}) {
    const int rounds = 2;
    const PoolChurnRun r = RunThreadPoolChurn(v, pools, threads, rounds);
    const std::string where = absl::StrCat("S7 ", pools, "x", threads);
    for (const std::string& s : r.invariants) out.push_back(absl::StrCat(where, ": ", s));
    if (traits->design.ownership_modes && pools * threads > 256) {
      if (r.mode_changes < 2 * rounds) {
        out.push_back(absl::StrCat(where, ": ", r.mode_changes,
                                   " mode changes (both directions each round expected)"));
      }
      if (r.remote_lock_acquisitions <= 0)
        out.push_back(absl::StrCat(where, ": no fixup took a remote rq lock"));
    }
  }
  return out;
}

// S2 on real threads: two model CPUs; tasks of two mms, each mm with tasks on
// both CPUs; each step does counter[mm][cid] = counter[mm][cid] + 1 with a
// separate relaxed load and store (a window in between) while the task runs.
Violations CheckRealThreadCounters(const MmCidVariant& v) {
  auto traits = isolation::mm_cid::DescribeVariant(v);
  if (!traits.ok()) return {traits.status().ToString()};
  absl::StatusOr<Topology> topo = Topology::FromSynthetic("core:2 pu:1");
  if (!topo.ok()) return {topo.status().ToString()};
  RealDriverOptions opts;
  opts.hz = 1000;
  opts.timeslice = 500 * kNsPerUs;
  auto d = RealThreadDriver::Create(*topo, IsolationConfig(*topo), opts);
  if (!d.ok()) return {absl::StrCat("RealThreadDriver unavailable: ", d.status().ToString())};
  auto created = MmCid::Create(2, v);
  if (!created.ok()) return {created.status().ToString()};
  MmCid& m = **created;
  MmCidHooks::Options ho;
  ho.worker_cpus = CpuMask::Of(2, 0);
  MmCidHooks hooks(m, ho);
  (*d)->AddHooks(&hooks);
  struct Counters {
    std::atomic<int64_t> cell[2][2] = {};
    std::atomic<int64_t> expected{0};
  };
  auto counters = std::make_shared<Counters>();
  MmCid* mp = &m;
  for (int i = 0; i < 6; ++i) {
    TaskSpec t;
    t.name = absl::StrCat("t", i);
    t.group = i % 2;
    t.cpu = (i / 2) % 2;  // each mm has tasks on both CPUs
    const int mm = t.group;
    t.body = MakeTaskBody([mp, counters, mm, n = 0](TaskContext& ctx) mutable {
      const int32_t id = mp->TaskCid(ctx.task());
      if (id >= 0 && id < 2) {
        auto& cell = counters->cell[mm][id];
        const int64_t before = cell.load(std::memory_order_relaxed);
        for (int spin = 0; spin < 200; ++spin) asm volatile("" ::: "memory");  // widen the window
        cell.store(before + 1, std::memory_order_relaxed);
        counters->expected.fetch_add(1, std::memory_order_relaxed);
      }
      if (++n % 3 == 0) return Step::Yield();
      return Step::Run(50 * kNsPerUs);
    });
    if (auto id = (*d)->Spawn(std::move(t)); !id.ok()) return {id.status().ToString()};
  }
  if (absl::Status st = (*d)->RunFor(200 * kNsPerMs); !st.ok()) return {st.ToString()};
  hooks.Drain();
  Violations out;
  int64_t sum = 0;
  for (auto& row : counters->cell) {
    for (auto& x : row) sum += x.load();
  }
  if (counters->expected.load() <= 100)
    out.push_back("S2 real threads: fewer than 100 increments ran");
  if (sum != counters->expected.load()) {
    out.push_back(absl::StrCat("S2 real threads: counters sum to ", sum, " after ",
                               counters->expected.load(), " increments (lost updates: I1)"));
  }
  if (hooks.violations() != 0) {
    out.push_back(absl::StrCat(
        "S2 real threads: the adapter's I1 check found ", hooks.violations(),
        ", first: ", hooks.FirstViolations().empty() ? "?" : hooks.FirstViolations().front()));
  }
  if (hooks.errors() != 0)
    out.push_back(absl::StrCat("S2 real threads: ", hooks.errors(), " adapter errors"));
  if (traits->design.lazy_axes && hooks.TotalScans() <= 0)
    out.push_back("S2 real threads: no compaction scan ran");
  if (!traits->design.lazy_axes && hooks.TotalScans() != 0)
    out.push_back("S2 real threads: background scans ran");
  for (const std::string& s : AllViolations(m, true))
    out.push_back(absl::StrCat("S2 real threads end: ", s));
  return out;
}

// Two CPUs switch tasks of one mm (each its own three tasks, idle every
// fourth switch) while a third thread scans continuously on its own clock
// (200 ms per call: every call is a pass racing the switches); bounded.
Violations CheckConcurrentSwitchAndScan(const MmCidVariant& v) {
  auto traits = isolation::mm_cid::DescribeVariant(v);
  if (!traits.ok()) return {traits.status().ToString()};
  auto created = MmCid::Create(4, v);
  if (!created.ok()) return {created.status().ToString()};
  MmCid& m = **created;
  const MmId mm = *m.CreateMm(CpuMask::Full(4), 0);
  for (int t = 0; t < 6; ++t) (void)m.Fork(kNoTask, t, mm, CpuMask::Full(4), 0);
  std::atomic<bool> stop{false};
  std::atomic<int64_t> dup{0};
  // running_cid[c]: the ID CPU c's current task holds, published only while
  // c owns it -- set after the switch that took it, cleared to -1 before
  // every switch that may put it (the final switch-out too: a CPU that left
  // its loop still showing an ID the scanner then stole from its idle slot
  // made the other CPU count a duplicate, a false positive).  Each CPU stores
  // its own entry, fences, then loads the other's (the SB/Dekker pattern with
  // seq_cst fences): if two CPUs' ownership of one ID overlapped, at least one
  // of them sees the other's entry.
  std::atomic<int32_t> running_cid[2] = {-1, -1};
  // CPU 0 switches through the inline front end (MmCid::Switcher()), CPU 1
  // through the virtual ContextSwitch: both against the scanner.
  auto cpu_loop = [&](int cpu) {
    TaskId cur = kNoTask;
    isolation::mm_cid::MmCidSwitcher switcher = m.Switcher();
    auto switch_to = [&](TaskId next) {
      running_cid[cpu].store(-1, std::memory_order_relaxed);
      // Orders the -1 before the switch's relaxed store of rq->curr: a scanner
      // that reads the new `curr`, steals the ID and frees it (release) to the
      // other CPU (acquire) then puts that CPU's fence below after this one,
      // so its load sees the -1 -- in the C++ model, not just on x86-TSO.
      SeqCstFence();
      {
        MutexLock rq(m.RunQueueLock(cpu));  // the caller's rq lock (mm_cid.h contract)
        if (cpu == 0) {
          switcher.ContextSwitch(cpu, cur, next, MonotonicNanos());
        } else {
          m.ContextSwitch(cpu, cur, next, MonotonicNanos());
        }
      }
      cur = next;
    };
    int i = 0;
    while (!stop.load(std::memory_order_relaxed)) {
      const int k = i++;
      switch_to(k % 4 == 3 ? kNoTask : static_cast<TaskId>(cpu * 3 + k % 3));
      const int32_t id = cur == kNoTask ? -1 : m.TaskCid(cur);
      running_cid[cpu].store(id, std::memory_order_relaxed);
      SeqCstFence();  // the Dekker pair; after switch_to's fence
      if (id >= 0 && id == running_cid[1 - cpu].load(std::memory_order_relaxed)) dup.fetch_add(1);
    }
    switch_to(kNoTask);
  };
  std::atomic<int64_t> scans_run{0};
  std::thread scanner([&] {
    Nanos now = MonotonicNanos() + 10 * kNsPerSec;  // ahead of every slot time the switches stamp
    while (!stop.load(std::memory_order_relaxed)) {
      now += 2 * kScanDelayNs;
      if (m.Scan(mm, now).ran) scans_run.fetch_add(1, std::memory_order_relaxed);
    }
  });
  std::thread a(cpu_loop, 0), b(cpu_loop, 1);
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  // On a loaded box the scanner may have been starved: up to ~1 s more to
  // reach a few hundred racing scans (a bound, not an assertion).
  for (int i = 0; i < 100 && traits->design.lazy_axes && scans_run.load() < 300; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  stop = true;
  a.join();
  b.join();
  scanner.join();
  Violations out;
  if (dup.load() != 0)
    out.push_back(absl::StrCat("I1: ", dup.load(), " times both CPUs ran with one ID"));
  if (traits->design.lazy_axes && scans_run.load() < 1)
    out.push_back("the scanner never passed the rate limit");
  for (const std::string& s : AllViolations(m, true))
    out.push_back(absl::StrCat("stress end: ", s));
  return out;
}

// ---- the suite -----------------------------------------------------------------

TEST_P(MmCidStressConformance, S7_ThreadPoolChurn_P256) {
  RunAsTest("S7_ThreadPoolChurn_P256", GetParam());
}

TEST_P(MmCidStressConformance, S2_PerIdCounters_RealThreads) {
  RunAsTest("S2_PerIdCounters_RealThreads", GetParam());
}

TEST_P(MmCidStressConformance, I1_ConcurrentSwitchAndScan_RealThreads) {
  RunAsTest("I1_ConcurrentSwitchAndScan_RealThreads", GetParam());
}

// A binary that links the kit without instantiating this suite is not an error.
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(MmCidStressConformance);

namespace internal {
int MmCidStressConformanceAnchor() { return 0; }
}  // namespace internal

}  // namespace isolation::testing::mm_cid
