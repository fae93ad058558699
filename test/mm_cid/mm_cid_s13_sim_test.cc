// SPDX-License-Identifier: GPL-2.0-or-later
// S13 never-preempted thread, on the simulator through MmCidHooks: a thread
// busy-loops for 1 s on an isolated CPU whose tick runs (isolcpus without
// nohz_full), never switching, while its seven siblings exit.  Expectations
// (spec S13), one named test each:
//   - lazy without the [WQ] tick kick (work_taskwork, work_delayed, work_rcu):
//     the scan sets LAZY on its slot but its ID stays high until it switches
//     out (scan_cidmask never even reaches its slot: it visits the CPU whose
//     number is the ID);
//   - lazy with the kick (always for work_unbound / work_resume, the
//     tick_kick option for the others): the ID is re-taken in place within
//     ~200 ms of the last exit (alloc_v6_4 / alloc_v6_14 with a correct scope;
//     alloc_v6_13 re-grants its recent ID, scan_cidmask never marks the slot);
//   - owner619: keeps it until the next schedin, which converges it to 0.
// The survivor runs on CPU 1 with ID 7, so a CPU number and an ID differ.

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "isolation/core/isolation_config.h"
#include "isolation/mm_cid/mm_cid.h"
#include "isolation/mm_cid/hooks.h"
#include "isolation/runtime/sim.h"
#include "isolation/core/topology.h"
#include "test_variants.h"

namespace isolation::mm_cid {
namespace {

using testing_variants::AllLazyConfigs;
using testing_variants::ConfigTestName;

constexpr int kCpus = 8;
constexpr int kSurvivorCpu = 1;
constexpr int kGroup = 1;
constexpr Nanos kBusy = 1000 * kNsPerMs;

struct S13Run {
  int32_t start_id = -1;          // survivor's ID right after it started
  Nanos last_exit = -1;           // first sample with the survivor as the only user
  Nanos changed_at = -1;          // first busy-phase sample with a different ID
  int32_t id_at_change = -1;
  int32_t id_end_of_busy = -1;    // last busy-phase sample
  bool saw_lazy = false;          // its slot carried LAZY during the busy phase
  int32_t id_after_schedin = -1;  // after the sleep that ends the busy phase
  int64_t violations = 0;
  std::string first_violation;
  int64_t errors = 0;
  int64_t kick_retakes = 0;
  int64_t scans = 0;
  int64_t switches_during_busy = -1;
};

S13Run RunS13(const MmCidConfig& c) {
  S13Run r;
  auto topo = Topology::FromSynthetic("core:8 pu:1");
  EXPECT_TRUE(topo.ok()) << topo.status();
  auto iso = IsolationConfig::FromFlags(*topo, "1-7", "");  // isolcpus only: the tick keeps running
  EXPECT_TRUE(iso.ok()) << iso.status();
  SimOptions so;
  so.seed = 13;
  auto sim_or = Simulator::Create(*topo, *iso, so);
  EXPECT_TRUE(sim_or.ok()) << sim_or.status();
  Simulator& sim = **sim_or;
  auto m = *MmCid::Create(kCpus, c);
  MmCidHooks hooks(*m);
  sim.AddHooks(&hooks);
  // Seven siblings, one per other CPU, run 5 ms and exit.
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
    EXPECT_TRUE(sim.Spawn(std::move(t)).ok());
  }
  // The survivor starts at 1 ms, when the siblings hold IDs 0-6: it gets 7.
  // Busy 1 s, then sleeps 2 ms (its next schedin), runs 10 ms, exits.
  TaskId survivor = kNoTask;
  sim.At(kNsPerMs, [&] {
    TaskSpec t;
    t.name = "survivor";
    t.cpu = kSurvivorCpu;
    t.affinity = CpuMask::Of(kCpus, kSurvivorCpu);
    t.group = kGroup;
    t.body = MakeTaskBody([n = 0](TaskContext&) mutable {
      switch (n++) {
        case 0: return Step::Run(kBusy);
        case 1: return Step::Sleep(2 * kNsPerMs);
        case 2: return Step::Run(10 * kNsPerMs);
        default: return Step::Exit();
      }
    });
    auto id = sim.Spawn(std::move(t));
    EXPECT_TRUE(id.ok()) << id.status();
    if (id.ok()) survivor = *id;
  });
  int64_t switches_at_start = 0;
  // Sample every millisecond of the busy phase (the survivor is current on
  // its CPU throughout; ticks and return-to-user happen in between).
  for (Nanos t = 3 * kNsPerMs; t <= kBusy - kNsPerMs; t += kNsPerMs) {
    sim.At(t, [&, t] {
      if (survivor == kNoTask || sim.CurrentTask(kSurvivorCpu) != survivor) return;
      const MmId mm = hooks.GroupMm(kGroup);
      const int32_t id = m->TaskCid(survivor);
      if (r.start_id < 0) {
        r.start_id = id;
        switches_at_start = sim.Stats(kSurvivorCpu).context_switches;
      }
      if (r.last_exit < 0 && m->MmUsers(mm) == 1) r.last_exit = t;
      if (r.changed_at < 0 && id != r.start_id) {
        r.changed_at = t;
        r.id_at_change = id;
      }
      r.id_end_of_busy = id;
      r.saw_lazy = r.saw_lazy || m->SlotLazy(mm, kSurvivorCpu);
    });
  }
  sim.At(kBusy - kNsPerMs / 2, [&] {
    r.switches_during_busy = sim.Stats(kSurvivorCpu).context_switches - switches_at_start;
  });
  // During the 10 ms run after the sleep.
  sim.At(kBusy + 8 * kNsPerMs, [&] {
    if (survivor != kNoTask && sim.CurrentTask(kSurvivorCpu) == survivor) r.id_after_schedin = m->TaskCid(survivor);
  });
  EXPECT_TRUE(sim.RunFor(kBusy + 30 * kNsPerMs).ok());
  r.violations = hooks.violations();
  if (!hooks.FirstViolations().empty()) r.first_violation = hooks.FirstViolations().front();
  r.errors = hooks.errors();
  r.kick_retakes = m->Stats().tick_kick_retakes;
  r.scans = m->Stats().scans;
  return r;
}

void ExpectSane(const S13Run& r, const MmCidConfig& c) {
  EXPECT_EQ(r.violations, 0) << c.Name() << ": " << r.first_violation;
  EXPECT_EQ(r.errors, 0);
  ASSERT_EQ(r.start_id, kCpus - 1) << "S13 setup: the survivor must start with the highest ID";
  ASSERT_GT(r.last_exit, 0) << "S13 setup: the siblings never all exited";
  ASSERT_EQ(r.switches_during_busy, 0) << "S13 setup: the survivor must never switch while busy";
}

// Lazy configurations without the kick (work_taskwork, work_delayed,
// work_rcu) and with it (tick_kick on those three, implied on work_unbound
// and work_resume).
std::vector<MmCidConfig> LazyWithoutKick() {
  std::vector<MmCidConfig> v;
  for (const MmCidConfig& c : AllLazyConfigs()) {
    if (!c.TickKickEnabled()) v.push_back(c);
  }
  return v;
}
std::vector<MmCidConfig> LazyWithKick() {
  std::vector<MmCidConfig> v;
  for (MmCidConfig c : AllLazyConfigs()) {
    if (!c.TickKickEnabled()) c.tick_kick = true;
    v.push_back(c);
  }
  return v;
}

class MmCidS13NoKickTest : public testing::TestWithParam<MmCidConfig> {};
class MmCidS13KickTest : public testing::TestWithParam<MmCidConfig> {};

TEST_P(MmCidS13NoKickTest, S13_LazySetOnSlotButIdStaysHighUntilSwitchOut) {
  const MmCidConfig& c = GetParam();
  ASSERT_FALSE(c.TickKickEnabled());
  const S13Run r = RunS13(c);
  ExpectSane(r, c);
  EXPECT_GT(r.scans, 0) << "S13: compaction must run during the busy loop";
  EXPECT_EQ(r.changed_at, -1) << "S13: the ID changed at " << r.changed_at / kNsPerMs << " ms without a switch";
  EXPECT_EQ(r.id_end_of_busy, kCpus - 1);
  EXPECT_EQ(r.kick_retakes, 0);
  if (c.scope == ScanScope::kCidmask) {
    // The negative control visits CPU 7 (ID bit 7), never CPU 1.
    EXPECT_FALSE(r.saw_lazy) << "scan_cidmask must not reach the survivor's slot";
    EXPECT_EQ(r.id_after_schedin, kCpus - 1) << "scan_cidmask: the parked ID survives the switch";
    return;
  }
  EXPECT_TRUE(r.saw_lazy) << "S13: the scan must set LAZY on the running survivor's slot";
  if (c.allocator == Allocator::kV6_13) {
    EXPECT_EQ(r.id_after_schedin, kCpus - 1) << "alloc_v6_13: the recent ID is re-granted at the schedin";
  } else {
    EXPECT_EQ(r.id_after_schedin, 0) << "S13: the switch-out frees the LAZY ID, the schedin takes 0";
  }
}

TEST_P(MmCidS13KickTest, S13_TickKickRetakesIdWithin200ms) {
  const MmCidConfig& c = GetParam();
  ASSERT_TRUE(c.TickKickEnabled());
  const S13Run r = RunS13(c);
  ExpectSane(r, c);
  EXPECT_GT(r.kick_retakes, 0) << "S13: the kick never re-took the ID (RSEQ_UNPREEMPTED_THRESHOLD passed)";
  if (c.scope == ScanScope::kCidmask || c.allocator == Allocator::kV6_13) {
    // The kick re-takes, but the scan never marked the slot (cidmask) or the
    // allocator hands back the recent ID (alloc_v6_13).
    EXPECT_EQ(r.changed_at, -1) << "S13: " << c.Name() << " must keep ID 7";
    EXPECT_EQ(r.id_end_of_busy, kCpus - 1);
    return;
  }
  ASSERT_GT(r.changed_at, 0) << "S13: the kick must re-take the ID while the thread is still busy";
  EXPECT_EQ(r.id_at_change, 0) << "S13: re-taken to the lowest free ID";
  EXPECT_EQ(r.id_end_of_busy, 0);
  // Within ~200 ms: <= one scan delay until a scan marks the slot, one more
  // for the unpreempted threshold / rate limit, plus a tick and a sample.
  EXPECT_LE(r.changed_at - r.last_exit, 2 * kScanDelayNs + 2 * kNsPerMs)
      << "S13: re-taken " << (r.changed_at - r.last_exit) / kNsPerMs << " ms after the last exit";
  RecordProperty("retake_ms_after_last_exit", static_cast<int>((r.changed_at - r.last_exit) / kNsPerMs));
  EXPECT_EQ(r.id_after_schedin, 0);
}

TEST(MmCidS13Owner619, S13_KeepsIdUntilNextSchedin) {
  MmCidConfig c;
  c.design = Design::kOwner619;
  const S13Run r = RunS13(c);
  ExpectSane(r, c);
  EXPECT_EQ(r.scans, 0) << "owner619 has no background work";
  EXPECT_EQ(r.changed_at, -1) << "S13 owner619: the ID must not change before the next schedin";
  EXPECT_EQ(r.id_end_of_busy, kCpus - 1);
  EXPECT_EQ(r.id_after_schedin, 0) << "S13 owner619: the schedin converges below max_cids (1)";
}

INSTANTIATE_TEST_SUITE_P(LazyNoKick, MmCidS13NoKickTest, testing::ValuesIn(LazyWithoutKick()), ConfigTestName);
INSTANTIATE_TEST_SUITE_P(LazyKick, MmCidS13KickTest, testing::ValuesIn(LazyWithKick()), ConfigTestName);

}  // namespace
}  // namespace isolation::mm_cid
