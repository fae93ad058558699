// SPDX-License-Identifier: GPL-2.0-or-later
// mm_cid under the drivers through MmCidHooks: random workloads on the
// simulator for every lazy variant (I1-I6 after every event), placement
// (I10), the S11 stall model, and bounded real-thread runs (S2 per-ID
// counters, liburcu call_rcu placement).

#include <atomic>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "isolation/core/isolation_config.h"
#include "isolation/mm_cid/mm_cid.h"
#include "test_variants.h"
#include "isolation/mm_cid/hooks.h"
#include "isolation/runtime/real_driver.h"
#include "isolation/runtime/sim.h"
#include "isolation/core/topology.h"

namespace isolation::mm_cid {

namespace {

using testing_variants::AllCorrectConfigs;
using testing_variants::AllLazyConfigs;
using testing_variants::ConfigTestName;


std::unique_ptr<Simulator> MakeSim(const std::string& topo, const std::string& isolcpus, uint64_t seed) {
  auto t = Topology::FromSynthetic(topo);
  EXPECT_TRUE(t.ok()) << t.status();
  auto iso = IsolationConfig::FromFlags(*t, isolcpus, "");
  EXPECT_TRUE(iso.ok()) << iso.status();
  SimOptions so;
  so.seed = seed;
  auto sim = Simulator::Create(*t, *iso, so);
  EXPECT_TRUE(sim.ok()) << sim.status();
  return std::move(*sim);
}

class MmCidSimTest : public testing::TestWithParam<MmCidConfig> {};

// Several tasks per CPU, tasks of several mms, random run/sleep/yield
// bodies, random affinity changes (migrations) and exits: I1, I2, I3, I4 and
// the allocation progress after every simulated event, I5/I6 at the end.
TEST_P(MmCidSimTest, RandomWorkload_I1_I6) {
  for (uint64_t seed : {1u, 2u, 3u}) {
    auto sim = MakeSim("core:8 pu:1", "", seed);
    auto m = *MmCid::Create(8, GetParam());
    MmCidHooks hooks(*m);
    sim->AddHooks(&hooks);
    std::vector<TaskId> ids;
    for (int i = 0; i < 20; ++i) {
      TaskSpec t;
      t.name = absl::StrCat("t", i);  // "t" + std::to_string(i) trips GCC 12 -O3 -Wrestrict
      t.cpu = i % 8;
      t.group = i % 3;
      const int life = 50 + i * 7;
      t.body = MakeTaskBody([n = 0, life](TaskContext& ctx) mutable {
        if (++n > life) return Step::Exit();
        const uint64_t r = ctx.rng()();
        switch (r % 4) {
          case 0: return Step::Sleep(static_cast<Nanos>(r % (2 * kNsPerMs)));
          case 1: return Step::Yield();
          default: return Step::Run(static_cast<Nanos>(100 * kNsPerUs + r % (3 * kNsPerMs)));
        }
      });
      auto id = sim->Spawn(std::move(t));
      ASSERT_TRUE(id.ok()) << id.status();
      ids.push_back(*id);
    }
    std::mt19937_64 rng(seed);
    for (int k = 0; k < 30; ++k) {
      const TaskId t = ids[rng() % ids.size()];
      CpuMask mask(8);
      mask.Set(static_cast<int>(rng() % 8));
      mask.Set(static_cast<int>(rng() % 8));
      sim->At(static_cast<Nanos>(k) * 10 * kNsPerMs + 1, [&sim, t, mask] { (void)sim->SetAffinity(t, mask); });
    }
    ASSERT_TRUE(sim->RunFor(400 * kNsPerMs).ok());
    EXPECT_EQ(hooks.violations(), 0) << (hooks.FirstViolations().empty() ? "" : hooks.FirstViolations().front());
    EXPECT_EQ(hooks.errors(), 0);
    const auto q = m->CheckQuiescent();
    EXPECT_TRUE(q.empty()) << q.front();
    EXPECT_GT(m->Stats().context_switches, 100);
  }
}

// I10: scans on isolated CPUs are 0 for offloaded placements, > 0 for task
// work and work_resume when tasks of the mm run on isolated CPUs (two tasks
// per isolated CPU so the tick runs).
TEST_P(MmCidSimTest, I10_Placement) {
  auto sim = MakeSim("core:16 pu:1", "1-7,9-15", 7);
  auto m = *MmCid::Create(16, GetParam());
  MmCidHooks hooks(*m);
  sim->AddHooks(&hooks);
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
      ASSERT_TRUE(sim->Spawn(std::move(t)).ok());
    }
  }
  ASSERT_TRUE(sim->RunFor(600 * kNsPerMs).ok());
  EXPECT_EQ(hooks.violations(), 0) << (hooks.FirstViolations().empty() ? "" : hooks.FirstViolations().front());
  if (GetParam().design != Design::kLazy) {
    // I10 for owner619 (and v63_mmlock, which predates the scan): no
    // background work at all.
    EXPECT_EQ(hooks.TotalScans(), 0);
    EXPECT_EQ(hooks.IsolatedMaxStallNs(), 0);
    return;
  }
  EXPECT_GT(hooks.TotalScans(), 0);
  switch (GetParam().placement) {
    case Placement::kTaskWork:
    case Placement::kResume:
      EXPECT_GT(hooks.ScansOnIsolatedCpus(), 0) << "I10: task work runs where the task runs";
      EXPECT_GT(hooks.IsolatedMaxStallNs(), 0);
      break;
    case Placement::kUnbound:
    case Placement::kDelayed:
    case Placement::kRcu:
      EXPECT_EQ(hooks.ScansOnIsolatedCpus(), 0) << "I10: offloaded scans stay on housekeeping CPUs";
      EXPECT_EQ(hooks.IsolatedMaxStallNs(), 0);
      break;
  }
}


INSTANTIATE_TEST_SUITE_P(AllDesigns, MmCidSimTest, testing::ValuesIn(AllCorrectConfigs()), ConfigTestName);

// S11 stall model: task work stalls an isolated CPU by a full scan (2P
// visits x 130 ns); batch_8 by at most 2*8 visits.
TEST(MmCidSim, S11_BatchBoundsIsolatedStall) {
  for (int batch : {0, 8}) {
    auto sim = MakeSim("core:32 pu:1", "1-31", 3);
    MmCidConfig c;
    c.batch = batch;
    auto m = *MmCid::Create(32, c);
    MmCidHooks hooks(*m);
    sim->AddHooks(&hooks);
    for (int cpu = 1; cpu < 32; ++cpu) {
      for (int k = 0; k < 2; ++k) {
        TaskSpec t;
        t.name = "t";
        t.cpu = cpu;
        t.affinity = CpuMask::Of(32, cpu);
        t.group = k == 0 ? 100 + cpu : 1;
        t.body = MakeTaskBody([n = 0, k](TaskContext&) mutable {
          if (k == 0) return (n++ % 2 == 0) ? Step::Run(8 * kNsPerMs) : Step::Sleep(2 * kNsPerMs);
          return (n++ % 2 == 0) ? Step::Run(20 * kNsPerUs) : Step::Sleep(980 * kNsPerUs);
        });
        ASSERT_TRUE(sim->Spawn(std::move(t)).ok());
      }
    }
    ASSERT_TRUE(sim->RunFor(500 * kNsPerMs).ok());
    EXPECT_EQ(hooks.violations(), 0);
    if (batch == 0) {
      EXPECT_EQ(hooks.IsolatedMaxStallNs(), 2 * 32 * kModelledVisitNs);
    } else {
      EXPECT_GT(hooks.IsolatedMaxStallNs(), 0);
      EXPECT_LE(hooks.IsolatedMaxStallNs(), 2 * batch * kModelledVisitNs);
    }
  }
}

// ---------------------------------------------------------------------------
// Real threads (bounded): 2 model CPUs on the host, 3 tasks per CPU of two
// mms.  S2: each step does counter[cid] = counter[cid] + 1 with a separate
// relaxed load and store while the task runs; IDs unique among running
// tasks of an mm (I1) means no update is lost.
// ---------------------------------------------------------------------------
void RunRealThreads(Design design, Placement placement) {
  auto topo = Topology::FromSynthetic("core:2 pu:1");
  ASSERT_TRUE(topo.ok());
  RealDriverOptions opts;
  opts.hz = 1000;
  opts.timeslice = 500 * kNsPerUs;
  auto d = RealThreadDriver::Create(*topo, IsolationConfig(*topo), opts);
  if (!d.ok()) GTEST_SKIP() << "RealThreadDriver unavailable: " << d.status();
  MmCidConfig c;
  c.design = design;
  c.placement = placement;
  auto m = *MmCid::Create(2, c);
  MmCidHooks::Options ho;
  ho.worker_cpus = CpuMask::Of(2, 0);
  MmCidHooks hooks(*m, ho);
  (*d)->AddHooks(&hooks);
  struct Counters {
    std::atomic<int64_t> cell[2][2] = {};
    std::atomic<int64_t> expected{0};
  };
  auto counters = std::make_shared<Counters>();
  for (int i = 0; i < 6; ++i) {
    TaskSpec t;
    t.name = absl::StrCat("t", i);  // "t" + std::to_string(i) trips GCC 12 -O3 -Wrestrict
    t.cpu = i % 2;
    t.group = i % 2 == 0 ? 0 : 1;
    const int mm = t.group;
    t.body = MakeTaskBody([&m, counters, mm, n = 0](TaskContext& ctx) mutable {
      const int32_t id = m->TaskCid(ctx.task());
      if (id >= 0 && id < 2) {
        auto& cell = counters->cell[mm][id];
        const int64_t v = cell.load(std::memory_order_relaxed);
        for (int spin = 0; spin < 200; ++spin) asm volatile("" ::: "memory");  // widen the window
        cell.store(v + 1, std::memory_order_relaxed);
        counters->expected.fetch_add(1, std::memory_order_relaxed);
      }
      if (++n % 3 == 0) return Step::Yield();
      return Step::Run(50 * kNsPerUs);
    });
    ASSERT_TRUE((*d)->Spawn(std::move(t)).ok());
  }
  ASSERT_TRUE((*d)->RunFor(250 * kNsPerMs).ok());
  hooks.Drain();
  int64_t sum = 0;
  for (auto& row : counters->cell) {
    for (auto& x : row) sum += x.load();
  }
  EXPECT_GT(counters->expected.load(), 100);
  EXPECT_EQ(sum, counters->expected.load()) << "S2 on real threads: lost per-ID updates";
  EXPECT_EQ(hooks.errors(), 0);
  if (design == Design::kLazy) {
    EXPECT_GT(hooks.TotalScans(), 0) << "the compaction scan must have run in this placement";
  } else {
    EXPECT_EQ(hooks.TotalScans(), 0) << "owner619 and v63_mmlock have no background work";
  }
  if (design == Design::kV63MmLock) {
    // Every cid_lock round trip is exactly one first-zero/set or one clear.
    const MmCidStats s = m->Stats();
    EXPECT_GT(s.mm_lock_acquisitions, 0);
    EXPECT_EQ(s.mm_lock_acquisitions, s.allocations + s.frees);
  }
  const auto a = m->CheckAlways();
  EXPECT_TRUE(a.empty()) << a.front();
  const auto q = m->CheckQuiescent();
  EXPECT_TRUE(q.empty()) << q.front();
}

TEST(MmCidReal, S2_PerIdCounters_TaskWork) { RunRealThreads(Design::kLazy, Placement::kTaskWork); }
TEST(MmCidReal, S2_PerIdCounters_Workqueue) { RunRealThreads(Design::kLazy, Placement::kUnbound); }
TEST(MmCidReal, S2_PerIdCounters_RcuCallback) { RunRealThreads(Design::kLazy, Placement::kRcu); }
TEST(MmCidReal, S2_PerIdCounters_Owner619) { RunRealThreads(Design::kOwner619, Placement::kTaskWork); }
TEST(MmCidReal, S2_PerIdCounters_V63MmLock) { RunRealThreads(Design::kV63MmLock, Placement::kTaskWork); }

}  // namespace
}  // namespace isolation::mm_cid
