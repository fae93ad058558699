// SPDX-License-Identifier: GPL-2.0-or-later
// mm_cid scenarios that were missing from mm_cid_test.cc: S6 (intermittent
// bursts: per-CPU ID reuse and a modelled cache-miss cost), S13 (a
// never-preempted thread keeps its high ID while its siblings exit) and S10
// (exec gives the caller a fresh mm with ID 0; a rejected thread creation
// leaves users and IDs untouched).  Driven directly with seeded schedules.

#include <algorithm>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "isolation/mm_cid/mm_cid.h"
#include "test_util.h"
#include "test_variants.h"

namespace isolation::mm_cid {
namespace {

using testing_variants::AllCorrectConfigs;
using testing_variants::AllLazyConfigs;
using testing_variants::ConfigTestName;
using testing_util::AllViolations;

// Runs the scans the mechanism asks for (the same helper as mm_cid_test.cc's).
using GapsPlacement = testing_util::DirectPlacement;

class MmCidGapsLazyTest : public testing::TestWithParam<MmCidConfig> {};
class MmCidGapsAllTest : public testing::TestWithParam<MmCidConfig> {};

// ---------------------------------------------------------------------------
// S6 intermittent bursts ([LOC]): N tasks, task k pinned to CPU k, run one at
// a time in a seeded random order; each burst switches in, takes two ticks
// (1 ms apart, scan work where the placement puts it), switches out; then a
// gap.  Metric: fraction of bursts whose ID equals the ID that CPU used last
// time (first burst per CPU excluded), and a modelled cost: one cache-miss
// penalty each time the 16 KiB region of an ID is touched from an LLC other
// than the one that touched it last.
// ---------------------------------------------------------------------------
struct BurstResult {
  double reuse = 0;        // same ID as this CPU's previous burst
  int64_t llc_moves = 0;   // region moved between LLCs (modelled misses)
  int bursts_counted = 0;
  int distinct_ids = 0;    // IDs handed to bursts over the run
  std::vector<std::string> violations;
};

BurstResult RunBursts(const MmCidConfig& c, int n, int cpus_per_llc, Nanos gap, int bursts, uint64_t seed) {
  BurstResult r;
  auto m = *MmCid::Create(n, c);
  GapsPlacement place(*m);
  Nanos now = 1000;
  const MmId mm = *m->CreateMm(CpuMask::Full(n), now);
  for (int k = 0; k < n; ++k) {
    EXPECT_TRUE(m->Fork(k == 0 ? kNoTask : 0, k, mm, CpuMask::Of(n, k), now).ok());
  }
  std::vector<int32_t> last_id_of_cpu(static_cast<size_t>(n), -1);
  std::vector<int> llc_of_region(static_cast<size_t>(n), -1);
  std::mt19937_64 rng(seed);
  int reused = 0;
  for (int b = 0; b < bursts; ++b) {
    const int cpu = static_cast<int>(rng() % static_cast<uint64_t>(n));
    const TaskId t = cpu;
    m->ContextSwitch(cpu, kNoTask, t, now);
    place.ReturnToUser(cpu, t, now);
    const int32_t id = m->TaskCid(t);
    for (int tick = 1; tick <= 2; ++tick) {
      place.Tick(cpu, t, now + tick * kNsPerMs);
      place.ReturnToUser(cpu, t, now + tick * kNsPerMs);
    }
    auto v = m->CheckAlways();
    r.violations.insert(r.violations.end(), v.begin(), v.end());
    if (id < 0 || id >= n) {
      r.violations.push_back("S6: burst without a valid ID");
    } else {
      int32_t& last = last_id_of_cpu[static_cast<size_t>(cpu)];
      if (last >= 0) {
        ++r.bursts_counted;
        if (last == id) ++reused;
      }
      last = id;
      const int llc = cpu / cpus_per_llc;
      int& region_llc = llc_of_region[static_cast<size_t>(id)];
      if (region_llc >= 0 && region_llc != llc) ++r.llc_moves;
      region_llc = llc;
    }
    m->ContextSwitch(cpu, t, kNoTask, now + 3 * kNsPerMs);
    // Housekeeping progresses through the gap (delayed work every 100 ms).
    for (Nanos h = now + 3 * kNsPerMs; h < now + gap; h += 10 * kNsPerMs) place.Housekeeping(h, 1);
    now += gap;
  }
  auto v = AllViolations(*m, true);
  r.violations.insert(r.violations.end(), v.begin(), v.end());
  r.distinct_ids = static_cast<int>(std::count_if(llc_of_region.begin(), llc_of_region.end(), [](int l) { return l >= 0; }));
  r.reuse = r.bursts_counted > 0 ? static_cast<double>(reused) / r.bursts_counted : 0;
  return r;
}

TEST_P(MmCidGapsLazyTest, S6_IntermittentBursts_ReuseRate) {
  const MmCidConfig& c = GetParam();
  struct Shape {
    int n;
    int cpus_per_llc;
  };
  for (Shape s : {Shape{8, 8}, Shape{24, 1}}) {
    for (Nanos gap : {10 * kNsPerMs, 200 * kNsPerMs}) {
      const BurstResult r = RunBursts(c, s.n, s.cpus_per_llc, gap, 300, 0x56 + static_cast<uint64_t>(s.n));
      const std::string where = absl::StrCat("S6 n=", s.n, " gap_ms=", gap / kNsPerMs);
      ASSERT_TRUE(r.violations.empty()) << where << ": " << r.violations.front();
      ASSERT_GT(r.bursts_counted, 200) << where;
      RecordProperty(where + " reuse_pct", static_cast<int>(r.reuse * 100));
      RecordProperty(where + " llc_moves", static_cast<int>(r.llc_moves));
      RecordProperty(where + " distinct_ids", r.distinct_ids);
      if (c.allocator == Allocator::kV6_4) {
        if (gap == 200 * kNsPerMs && c.scope != ScanScope::kCidmask) {
          // Every other slot is older than the period when a burst's scan
          // runs, so the lowest free ID(s) go to whichever CPU runs next:
          // at most two IDs circulate (one if the delayed work empties the
          // bitmap during the gap) and their regions bounce between CPUs.
          // (The per-CPU reuse rate is not the signal here: with one
          // circulating ID it is trivially 100 %.)  batch_N needs
          // ceil(n/N) bursts for a full pass, so a parked ID survives that
          // many bursts: at most 1 + ceil(n/N) IDs circulate.
          const int passes = c.batch > 0 ? (s.n + c.batch - 1) / c.batch : 1;
          EXPECT_LE(r.distinct_ids, 1 + passes) << where << ": alloc_v6_4 must hand the low IDs to whichever CPU runs";
          if (s.cpus_per_llc == 1) {
            EXPECT_GT(r.llc_moves, r.bursts_counted / 2) << where << ": the region must bounce between LLCs";
          }
        }
      } else {
        // recent_cid: every CPU gets back the ID it used last time.
        EXPECT_GE(r.reuse, 0.95) << where << ": alloc_v6_13+ must reuse the CPU's recent ID";
        EXPECT_EQ(r.distinct_ids, s.n) << where;
        if (s.cpus_per_llc == 1) {
          EXPECT_EQ(r.llc_moves, 0) << where << ": regions must stay in their LLC";
        }
      }
    }
  }
}

// ---------------------------------------------------------------------------
// S13 never-preempted thread: 8 CPUs, one task pinned per CPU; the survivor
// on CPU 7 gets the highest ID (started last) and busy-loops with the tick on
// (4 ms) for 1 s, never switching, while its 7 siblings exit.  Without the
// [WQ] tick kick its ID must stay the same for the whole run (the scan may
// set LAZY on its slot but not take the ID: I4), and scans ran meanwhile.
// With the kick (always on for work_unbound / work_resume, the placements of
// the series that carries it) the ID is re-taken in place: alloc_v6_4 /
// alloc_v6_14 reach 0 within ~200 ms of the last exit without a switch,
// alloc_v6_13 re-grants its recent ID.  After its next switch-out/in:
// lazy with alloc_v6_14 (correct scope, a placement whose scan runs while it
// is busy) and owner619 converge to ID 0; alloc_v6_4 too; alloc_v6_13 takes
// its recent ID back.  (mm_cid_s13_sim_test.cc has the per-expectation
// variants, with the survivor's CPU differing from its ID.)
// ---------------------------------------------------------------------------
TEST_P(MmCidGapsAllTest, S13_NeverPreemptedThreadKeepsHighId) {
  const MmCidConfig& c = GetParam();
  const int p = 8;
  const TaskId survivor = p - 1;
  auto m = *MmCid::Create(p, c);
  GapsPlacement place(*m);
  Nanos now = 1000;
  const MmId mm = *m->CreateMm(CpuMask::Full(p), now);
  for (int k = p - 1; k >= 0; --k) {
    ASSERT_TRUE(m->Fork(k == p - 1 ? kNoTask : p - 1, k, mm, CpuMask::Of(p, k), now).ok());
  }
  // owner619 allocates at fork (survivor forked first gets 0); lazy at the
  // first switch-in (survivor switched in last gets the highest).
  for (int k = 0; k < p; ++k) m->ContextSwitch(k, kNoTask, k, now);
  const int32_t start_id = m->TaskCid(survivor);
  ASSERT_GE(start_id, 0);
  if (c.design == Design::kLazy) {
    ASSERT_EQ(start_id, p - 1) << "S13 setup: survivor must hold the highest ID";
  }
  const int64_t scans_before = m->Stats().scans;
  for (int k = 0; k < p - 1; ++k) {
    now += kNsPerMs;
    EXPECT_TRUE(m->Exit(k, k, now).ok());
    m->ContextSwitch(k, k, kNoTask, now);
  }
  const Nanos last_exit = now;
  const bool kick = c.TickKickEnabled();
  Nanos retaken_at = -1;
  for (int tick = 0; tick < 250; ++tick) {
    now += 4 * kNsPerMs;
    place.Tick(survivor, survivor, now);
    place.ReturnToUser(survivor, survivor, now);
    place.Housekeeping(now + 1, 1);
    if (!kick) {
      ASSERT_EQ(m->TaskCid(survivor), start_id) << "S13: ID changed without a switch at tick " << tick;
    } else if (retaken_at < 0 && m->TaskCid(survivor) != start_id) {
      retaken_at = now;
    }
    const auto v = m->CheckAlways();
    ASSERT_TRUE(v.empty()) << "S13 tick " << tick << ": " << v.front();
  }
  if (kick) {
    if (c.allocator == Allocator::kV6_13) {
      EXPECT_EQ(m->TaskCid(survivor), start_id) << "S13 kick, alloc_v6_13: the recent ID is re-granted in place";
      EXPECT_GT(m->Stats().tick_kick_retakes, 0) << "S13: the kick must have re-taken the ID";
    } else {
      // The survivor runs on CPU 7 == its ID, so even scan_cidmask visits its slot.
      ASSERT_GE(retaken_at, 0) << "S13 kick: the ID was never re-taken while busy";
      EXPECT_EQ(m->TaskCid(survivor), 0) << "S13 kick: re-taken ID";
      EXPECT_LE(retaken_at - last_exit, 2 * kScanDelayNs + 2 * 4 * kNsPerMs) << "S13 kick: not within ~200 ms";
    }
  }
  const bool scan_runs_while_busy = c.design == Design::kLazy && (c.placement != Placement::kResume || kick);
  if (scan_runs_while_busy) {
    EXPECT_GT(m->Stats().scans, scans_before) << "S13: compaction must have run during the busy loop";
  }
  // Next schedin.
  now += kNsPerMs;
  m->ContextSwitch(survivor, survivor, kNoTask, now);
  place.Housekeeping(now + 1, 1);
  m->ContextSwitch(survivor, kNoTask, survivor, now + 2);
  const int32_t after = m->TaskCid(survivor);
  const auto v = AllViolations(*m, false);
  ASSERT_TRUE(v.empty()) << "S13 after schedin: " << v.front();
  if (c.design == Design::kOwner619) {
    EXPECT_EQ(after, 0) << "S13 owner619: the schedin converges the ID";
  } else if (c.design == Design::kV63MmLock) {
    // v6.3: the switch-out put the ID, the switch-in takes the first zero.
    EXPECT_EQ(start_id, p - 1) << "S13 v63_mmlock: started last, first zero is the highest";
    EXPECT_EQ(after, 0) << "S13 v63_mmlock: put at switch-out, first zero at switch-in";
  } else if (c.allocator == Allocator::kV6_13) {
    EXPECT_EQ(after, start_id) << "S13 alloc_v6_13: the recent ID is re-granted";
  } else if (scan_runs_while_busy && c.scope != ScanScope::kCidmask) {
    EXPECT_EQ(after, 0) << "S13: after the scan set LAZY, the switch-out frees the high ID and the schedin takes 0";
  }
}

// ---------------------------------------------------------------------------
// S10 exec: 4 tasks of one mm running on CPUs 0-3; task 2 (ID 2 for lazy)
// execs on CPU 2: it gets a fresh mm where it is the only user with ID 0 and
// its old ID is freed; then the others exit (de_thread) and the old mm holds
// no users and no IDs.  Failed thread creation: Fork calls the API rejects
// (reused id, empty affinity, unknown mm) leave users and IDs unchanged.
// ---------------------------------------------------------------------------
TEST_P(MmCidGapsAllTest, S10_ExecFreshMmAndRejectedForkRollsBack) {
  const MmCidConfig& c = GetParam();
  const int p = 8;
  auto m = *MmCid::Create(p, c);
  Nanos now = 1000;
  const MmId old_mm = *m->CreateMm(CpuMask::Full(p), now);
  for (int k = 0; k < 4; ++k) ASSERT_TRUE(m->Fork(k == 0 ? kNoTask : 0, k, old_mm, CpuMask::Full(p), now).ok());
  for (int k = 0; k < 4; ++k) m->ContextSwitch(k, kNoTask, k, now);
  ASSERT_EQ(m->MmUsers(old_mm), 4);
  ASSERT_EQ(m->CidmaskWeight(old_mm), 4);

  // Rejected thread creation: nothing changes.
  EXPECT_FALSE(m->Fork(0, 1, old_mm, CpuMask::Full(p), now).ok()) << "reused task id";
  EXPECT_FALSE(m->Fork(0, 5, old_mm, CpuMask(p), now).ok()) << "empty affinity";
  EXPECT_FALSE(m->Fork(0, 6, old_mm + 100, CpuMask::Full(p), now).ok()) << "unknown mm";
  EXPECT_EQ(m->MmUsers(old_mm), 4) << "S10: failed fork must roll back users";
  EXPECT_EQ(m->CidmaskWeight(old_mm), 4) << "S10: failed fork must not keep an ID";
  {
    const auto v = AllViolations(*m, true);
    ASSERT_TRUE(v.empty()) << "S10 after failed forks: " << v.front();
  }

  now += kNsPerMs;
  auto new_mm = m->Exec(2, 2, CpuMask::Full(p), now);
  ASSERT_TRUE(new_mm.ok()) << new_mm.status();
  ASSERT_NE(*new_mm, old_mm);
  EXPECT_EQ(m->TaskMm(2), *new_mm);
  EXPECT_EQ(m->TaskCid(2), 0) << "S10: the exec'ing task gets ID 0 in its fresh mm";
  EXPECT_EQ(m->MmUsers(*new_mm), 1);
  EXPECT_EQ(m->CidmaskWeight(*new_mm), 1);
  EXPECT_EQ(m->MmUsers(old_mm), 3);
  EXPECT_EQ(m->CidmaskWeight(old_mm), 3) << "S10: the exec'ing task's old ID is freed";
  {
    const auto v = AllViolations(*m, true);
    ASSERT_TRUE(v.empty()) << "S10 after exec: " << v.front();
  }
  // de_thread(): the other threads exit.
  for (int k : {0, 1, 3}) {
    now += kNsPerMs;
    EXPECT_TRUE(m->Exit(k, k, now).ok());
    m->ContextSwitch(k, k, kNoTask, now);
  }
  EXPECT_EQ(m->MmUsers(old_mm), 0);
  EXPECT_EQ(m->CidmaskWeight(old_mm), 0) << "S10: the others' IDs are freed";
  EXPECT_EQ(m->TaskCid(2), 0);
  const auto v = AllViolations(*m, true);
  ASSERT_TRUE(v.empty()) << "S10 after de_thread: " << v.front();
}

INSTANTIATE_TEST_SUITE_P(AllLazyVariants, MmCidGapsLazyTest, testing::ValuesIn(AllLazyConfigs()), ConfigTestName);
INSTANTIATE_TEST_SUITE_P(AllDesigns, MmCidGapsAllTest, testing::ValuesIn(AllCorrectConfigs()), ConfigTestName);

}  // namespace
}  // namespace isolation::mm_cid
