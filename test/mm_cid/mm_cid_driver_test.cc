// SPDX-License-Identifier: GPL-2.0-or-later
// mm_cid under the drivers through MmCidHooks, for particular built-ins:
// the S11 stall model of batch_full vs batch_8, and v63_mmlock's lock
// accounting on real threads.  What holds for every variant -- random
// workloads on the simulator (I1-I6 after every event), placement (I10),
// S2's per-ID counters on real threads -- is in the conformance kit
// (include/isolation/testing/mm_cid.h, mm_cid_conformance_test.cc).

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "isolation/core/isolation_config.h"
#include "isolation/mm_cid/mm_cid.h"
#include "isolation/mm_cid/hooks.h"
#include "isolation/runtime/real_driver.h"
#include "isolation/runtime/sim.h"
#include "isolation/core/topology.h"
#include "isolation/testing/status_matchers.h"
#include "isolation/testing/violations.h"

namespace isolation::mm_cid {

namespace {

std::unique_ptr<Simulator> MakeSim(const std::string& topo, const std::string& isolcpus,
                                   uint64_t seed) {
  auto t = Topology::FromSynthetic(topo).value();
  auto iso = IsolationConfig::FromFlags(t, isolcpus, "").value();
  SimOptions so;
  so.seed = seed;
  auto sim = Simulator::Create(t, iso, so).value();
  return sim;
}

// S11 stall model: task work stalls an isolated CPU by a full scan (2P
// visits x 130 ns); batch_8 by at most 2*8 visits.
TEST(MmCidSim, S11_BatchBoundsIsolatedStall) {
  for (int batch : {0, 8}) {
    auto sim = MakeSim("core:32 pu:1", "1-31", 3);
    auto m = *MmCid::Create(32, batch == 0 ? "lazy" : "lazy+batch_8");
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
        ISOLATION_ASSERT_OK(sim->Spawn(std::move(t)));
      }
    }
    ISOLATION_ASSERT_OK(sim->RunFor(500 * kNsPerMs));
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
// Real threads (bounded), v63_mmlock: 2 model CPUs on the host, 3 tasks per
// CPU of two mms; every cid_lock round trip is exactly one first-zero/set or
// one clear (the S2 counters themselves are the kit's
// CheckRealThreadCounters, run for every variant).
// ---------------------------------------------------------------------------
TEST(MmCidReal, V63MmLock_LockRoundTripsAreBitmapOps) {
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto topo, Topology::FromSynthetic("core:2 pu:1"));
  RealDriverOptions opts;
  opts.hz = 1000;
  opts.timeslice = 500 * kNsPerUs;
  auto d = RealThreadDriver::Create(topo, IsolationConfig(topo), opts);
  if (!d.ok()) GTEST_SKIP() << "RealThreadDriver unavailable: " << d.status();
  auto m = *MmCid::Create(2, "v63_mmlock");
  MmCidHooks::Options ho;
  ho.worker_cpus = CpuMask::Of(2, 0);
  MmCidHooks hooks(*m, ho);
  (*d)->AddHooks(&hooks);
  for (int i = 0; i < 6; ++i) {
    TaskSpec t;
    t.name = absl::StrCat("t", i);  // "t" + std::to_string(i) trips GCC 12 -O3 -Wrestrict
    t.cpu = i % 2;
    t.group = i % 2 == 0 ? 0 : 1;
    t.body = MakeTaskBody([n = 0](TaskContext&) mutable {
      if (++n % 3 == 0) return Step::Yield();
      return Step::Run(50 * kNsPerUs);
    });
    ISOLATION_ASSERT_OK((*d)->Spawn(std::move(t)));
  }
  ISOLATION_ASSERT_OK((*d)->RunFor(250 * kNsPerMs));
  hooks.Drain();
  EXPECT_EQ(hooks.errors(), 0);
  EXPECT_EQ(hooks.violations(), 0);
  EXPECT_EQ(hooks.TotalScans(), 0) << "v63_mmlock has no background work";
  const MmCidStats s = m->Stats();
  EXPECT_GT(s.mm_lock_acquisitions, 0);
  EXPECT_EQ(s.mm_lock_acquisitions, s.allocations + s.frees);
  const auto a = m->CheckAlways();
  ISOLATION_EXPECT_NO_VIOLATIONS(a);
  const auto q = m->CheckQuiescent();
  ISOLATION_EXPECT_NO_VIOLATIONS(q);
}

// The run-queue lock contract (mm_cid.h): on the real-thread driver the
// adapter makes the driver's per-CPU lock -- the one held around
// OnContextSwitch -- the mechanism's RunQueueLock, so owner619's switch takes
// no lock and its fixups (which take RunQueueLock) exclude the switch.  On
// the simulator (hooks on one thread) the instance keeps its own locks.
TEST(MmCidReal, Owner619_RunQueueLocksAreTheDriversOnRealThreads) {
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto topo, Topology::FromSynthetic("core:2 pu:1"));
  auto d = RealThreadDriver::Create(topo, IsolationConfig(topo), RealDriverOptions{});
  if (!d.ok()) GTEST_SKIP() << "RealThreadDriver unavailable: " << d.status();
  auto m = *MmCid::Create(2, "owner619");
  Mutex* own0 = &m->RunQueueLock(0);
  MmCidHooks hooks(*m);
  (*d)->AddHooks(&hooks);
  // Six threads of one mm on 2 CPUs: users > max_cids flips to per-CPU
  // mode, whose tasks->CPUs fixup takes the CPUs' rq locks while they switch.
  for (int i = 0; i < 6; ++i) {
    TaskSpec t;
    t.name = absl::StrCat("t", i);
    t.cpu = i % 2;
    t.group = 0;
    t.body = MakeTaskBody([n = 0](TaskContext&) mutable {
      if (++n % 3 == 0) return Step::Yield();
      if (n > 200) return Step::Exit();
      return Step::Run(20 * kNsPerUs);
    });
    ISOLATION_ASSERT_OK((*d)->Spawn(std::move(t)));
  }
  ISOLATION_ASSERT_OK((*d)->RunFor(100 * kNsPerMs));
  hooks.Drain();
  for (int c = 0; c < 2; ++c) {
    ASSERT_NE((*d)->RunQueueLock(c), nullptr);
    EXPECT_EQ(&m->RunQueueLock(c), (*d)->RunQueueLock(c)) << "CPU " << c;
  }
  EXPECT_NE(&m->RunQueueLock(0), own0);
  EXPECT_EQ(hooks.errors(), 0);
  EXPECT_EQ(hooks.violations(), 0);
  EXPECT_GT(m->Stats().remote_lock_acquisitions, 0) << "no fixup took a CPU's rq lock";
  const auto a = m->CheckAlways();
  ISOLATION_EXPECT_NO_VIOLATIONS(a);

  auto sim = MakeSim("core:2 pu:1", "", 1);
  EXPECT_EQ(sim->RunQueueLock(0), nullptr);
  auto m2 = *MmCid::Create(2, "owner619");
  Mutex* own = &m2->RunQueueLock(1);
  MmCidHooks hooks2(*m2);
  sim->AddHooks(&hooks2);
  ISOLATION_ASSERT_OK(sim->RunFor(kNsPerMs));
  EXPECT_EQ(&m2->RunQueueLock(1), own);
}

TEST(MmCidRunQueueLocks, BindValidates) {
  auto m = *MmCid::Create(2, "owner619");
  Mutex a, b;
  Mutex* own = &m->RunQueueLock(0);
  absl::Status st = m->BindRunQueueLocks({&a});
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("1 locks for 2 CPUs"), std::string::npos) << st;
  st = m->BindRunQueueLocks({&a, nullptr});
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("CPU 1"), std::string::npos) << st;
  EXPECT_EQ(&m->RunQueueLock(0), own) << "a refused bind changes nothing";
  ISOLATION_ASSERT_OK(m->BindRunQueueLocks({&a, &b}));
  EXPECT_EQ(&m->RunQueueLock(0), &a);
  EXPECT_EQ(&m->RunQueueLock(1), &b);
}

}  // namespace
}  // namespace isolation::mm_cid
