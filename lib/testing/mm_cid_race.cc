// SPDX-License-Identifier: GPL-2.0-or-later
// MmCidRaceConformance (testing/mm_cid.h): the racing scenarios of mm_cid in
// every schedule at the granularity of the variant's interleave points
// (core/interleave.h: Interleaver::Explore), under the store-buffer model
// (core/store_buffer.h) where the race is about memory ordering:
//   I4 -- a scan racing switches on a CPU where an ID is parked, and a
//         migration steal racing a switch-in on its source CPU (the Dekker
//         pairing of the lazy put);
//   S8/S9 -- a fork that crosses the per-CPU threshold racing a task that
//         switches in, migrates and switches in again (the live lock of
//         4327fb13fa47, the mode word of 47ee94efccf6);
//   S10 -- two concurrent forks, one crossing the threshold (the 7.0 fork
//         order and user list).
// A variant without interleave points runs each scenario's actors one after
// the other: still checked, with fewer schedules.

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "isolation/core/interleave.h"
#include "isolation/core/store_buffer.h"
#include "isolation/mm_cid/switcher.h"
#include "isolation/testing/mm_cid.h"

namespace isolation::testing::mm_cid {

using isolation::mm_cid::kNoTask;
using isolation::mm_cid::MmCidStats;

namespace {

constexpr Nanos kT = kNsPerSec;  // the racing switch happens at 1 s, the scan at 2 s

// 4 CPUs, one mm with tasks 0, 1, 2.  Task 0 ran on CPU 1 and left (for the
// lazy design: parked) its ID there; a first Scan initialises the rate
// limit, so a Scan at 2 s runs a pass.
struct ParkedIdRace {
  std::unique_ptr<MmCid> m;
  MmId mm = 0;
  ParkedIdRace(const MmCidVariant& v, bool force_fences) {
    m = *MmCid::Create(4, v,
                       MmCid::Limits{8, 2, force_fences});  // small: one per explored schedule
    mm = *m->CreateMm(CpuMask::Full(4), 0);
    for (TaskId t = 0; t < 3; ++t) (void)m->Fork(t == 0 ? kNoTask : 0, t, mm, CpuMask::Full(4), 0);
    m->ContextSwitch(1, kNoTask, 0, 1);
    m->ContextSwitch(1, 0, kNoTask, 2);
    m->Scan(mm, 3);
  }
};

enum class Race { kScan, kSteal };

// Every schedule of the race under the store-buffer model.  I1/I2/I4 are
// also checked after each switch of an actor once its stores have drained
// (the end of the operation): a task that ran with a freed ID and already
// switched out leaves no trace at the end of the run.  The other actor may
// be parked inside a switch, after publishing rq->curr and before storing
// the task's ID, so "runs without an ID" is transient there, not a violation.
// `via_switcher`: the switches go through MmCid::Switcher() (switcher.h),
// whose inline cached path has the same interleave points and store-buffer
// routing as the design's own.
Violations ExploreParkedIdRaceVia(const MmCidVariant& v, Race race, bool force_fences,
                                  bool via_switcher) {
  Violations out;
  int violating = 0;
  StoreBufferModel sb;
  std::unique_ptr<ParkedIdRace> f;
  Violations mid;
  auto switch_op = [&](int cpu, TaskId prev, TaskId next, Nanos t) {
    if (via_switcher) {
      f->m->Switcher().ContextSwitch(cpu, prev, next, t);
    } else {
      f->m->ContextSwitch(cpu, prev, next, t);
    }
    store_buffer::OperationEnds();
    for (std::string& s : f->m->CheckAlways()) {
      if (s.find("without an ID") == std::string::npos) mid.push_back(std::move(s));
    }
  };
  absl::StatusOr<int> n = Interleaver::Explore(
      [&](Interleaver& il) {
        f = std::make_unique<ParkedIdRace>(v, force_fences);
        sb.DrainAll();
        mid.clear();
        if (race == Race::kScan) {
          il.Add("switch", [&] {
            switch_op(1, kNoTask, 1, kT);
            switch_op(1, 1, kNoTask, kT + 1);
            switch_op(1, kNoTask, 2, kT + 2);
          });
          il.Add("scan", [&] { f->m->Scan(f->mm, 2 * kT); });
        } else {
          il.Add("switch", [&] { switch_op(1, kNoTask, 1, kT); });
          il.Add("migrate", [&] {
            f->m->Migrate(0, 1, 3, kT);
            switch_op(3, kNoTask, 0, kT);
          });
        }
      },
      [&](const std::vector<std::string>& log) {
        sb.DrainAll();
        Violations found = AllViolations(*f->m, true);
        found.insert(found.end(), mid.begin(), mid.end());
        if (!found.empty() && violating++ == 0) {
          out.push_back(
              absl::StrCat(absl::StrJoin(found, "; "), " | schedule: ", absl::StrJoin(log, " ")));
        }
      });
  if (!n.ok()) return {n.status().ToString()};
  if (violating > 0) {
    out.push_back(absl::StrCat(violating, " of the runs over ", *n, " schedules violated",
                               via_switcher ? " (switching through MmCid::Switcher())" : ""));
  }
  return out;
}

// Both switch paths: the virtual ContextSwitch and the inline front end.
Violations ExploreParkedIdRace(const MmCidVariant& v, Race race, bool force_fences) {
  Violations out = ExploreParkedIdRaceVia(v, race, force_fences, /*via_switcher=*/false);
  for (std::string& s : ExploreParkedIdRaceVia(v, race, force_fences, /*via_switcher=*/true)) {
    out.push_back("via Switcher: " + s);
  }
  return out;
}

// P = 4, four tasks (IDs 0-3), task 0 running on CPU 0 forks a fifth: five
// users on four CPUs (owner619: max_cids 4, the mm turns per-CPU and the
// fixup walks tasks 1-3).  Task X (3) meanwhile switches in on CPU 1, out,
// migrates to CPU 2 and switches in there.
struct ModeFlipRace {
  std::unique_ptr<MmCid> m;
  MmId mm = 0;
  explicit ModeFlipRace(const MmCidVariant& v) {
    m = *MmCid::Create(4, v, MmCid::Limits{8, 2});
    mm = *m->CreateMm(CpuMask::Full(4), 0);
    for (TaskId t = 0; t < 4; ++t) (void)m->Fork(t == 0 ? kNoTask : 0, t, mm, CpuMask::Full(4), 0);
    m->ContextSwitch(0, kNoTask, 0, 1);
  }
  void AddActors(Interleaver& il) {
    il.Add("fork", [this] { (void)m->Fork(0, 4, mm, CpuMask::Full(4), 2); });
    il.Add("x", [this] {
      m->ContextSwitch(1, kNoTask, 3, 3);
      ISOLATION_INTERLEAVE_POINT("mm_cid.kit.x.ran_on_cpu1");
      m->ContextSwitch(1, 3, kNoTask, 4);
      m->Migrate(3, 1, 2, 5);
      ISOLATION_INTERLEAVE_POINT("mm_cid.kit.x.migrated");
      m->ContextSwitch(2, kNoTask, 3, 6);
    });
  }
};

}  // namespace

Violations CheckScanVsSwitchSchedules(const MmCidVariant& v) {
  return ExploreParkedIdRace(v, Race::kScan, false);
}
Violations CheckMigrateVsSwitchSchedules(const MmCidVariant& v) {
  return ExploreParkedIdRace(v, Race::kSteal, false);
}
Violations CheckScanVsSwitchSchedulesInMode(const MmCidVariant& v, bool force_fences) {
  return ExploreParkedIdRace(v, Race::kScan, force_fences);
}
Violations CheckMigrateVsSwitchSchedulesInMode(const MmCidVariant& v, bool force_fences) {
  return ExploreParkedIdRace(v, Race::kSteal, force_fences);
}

Violations CheckModeFlipSchedules(const MmCidVariant& v) {
  Violations out;
  int violating = 0;
  StoreBufferModel sb;
  std::unique_ptr<ModeFlipRace> f;
  absl::StatusOr<int> n = Interleaver::Explore(
      [&](Interleaver& il) {
        f = std::make_unique<ModeFlipRace>(v);
        sb.DrainAll();
        f->AddActors(il);
      },
      [&](const std::vector<std::string>& log) {
        sb.DrainAll();
        Violations found = AllViolations(*f->m, true);
        const MmCidStats s = f->m->Stats();
        if (s.alloc_failures > 0)
          found.push_back(absl::StrCat("I14: ", s.alloc_failures, " allocations gave up"));
        if (!found.empty() && violating++ == 0) {
          out.push_back(
              absl::StrCat(absl::StrJoin(found, "; "), " | schedule: ", absl::StrJoin(log, " ")));
        }
      });
  if (!n.ok()) return {n.status().ToString()};
  if (violating > 0)
    out.push_back(absl::StrCat(violating, " of the runs over ", *n, " schedules violated"));
  return out;
}

// Threads 0 and 1 of one mm (7 users) run on CPUs 0 and 1 and fork children
// A = 20 and B = 21 at once; the ninth user crosses max_cids (8 on an 8-CPU
// union).  After each run the quiescent invariants; once both children
// exist, everyone runs (9 users on 8 CPUs) without an allocation failure.
Violations CheckForkRaceSchedules(const MmCidVariant& v) {
  const int p = 8;
  const TaskId kA = 20, kB = 21;
  Violations out;
  int violating = 0;
  std::unique_ptr<MmCid> m;
  MmId mm = 0;
  absl::StatusOr<int> n = Interleaver::Explore(
      [&](Interleaver& il) {
        m = *MmCid::Create(p, v);
        mm = *m->CreateMm(CpuMask::Full(p), 0);
        for (int k = 0; k < 7; ++k) (void)m->Fork(k == 0 ? kNoTask : 0, k, mm, CpuMask::Full(p), 0);
        m->ContextSwitch(0, kNoTask, 0, 1);
        m->ContextSwitch(1, kNoTask, 1, 1);
        il.Add("forkA", [&] { (void)m->Fork(0, kA, mm, CpuMask::Full(p), 2); });
        il.Add("forkB", [&] { (void)m->Fork(1, kB, mm, CpuMask::Full(p), 2); });
      },
      [&](const std::vector<std::string>& log) {
        Violations found = AllViolations(*m, true);
        if (found.empty() && m->TaskActive(kA) && m->TaskActive(kB)) {
          std::vector<TaskId> all = {0, 1, 2, 3, 4, 5, 6, kA, kB};
          Nanos now = 10;
          for (size_t i = 0; i < all.size(); ++i) {
            const int cpu = static_cast<int>(i % p);
            now += kNsPerMs;
            // Tasks 0 and 1 already run on CPUs 0 and 1: no switch from a
            // task to itself (the kernel never makes one).
            if (m->CurrentTask(cpu) != all[i])
              m->ContextSwitch(cpu, m->CurrentTask(cpu), all[i], now);
            if (m->TaskCid(all[i]) < 0)
              found.push_back(absl::StrCat("task ", all[i], " runs without an ID"));
          }
          Violations after = m->CheckAlways();
          found.insert(found.end(), after.begin(), after.end());
          if (m->Stats().alloc_failures > 0) found.push_back("I14: an allocation gave up");
        }
        if (!found.empty() && violating++ == 0) {
          out.push_back(
              absl::StrCat(absl::StrJoin(found, "; "), " | schedule: ", absl::StrJoin(log, " ")));
        }
      });
  if (!n.ok()) return {n.status().ToString()};
  if (violating > 0)
    out.push_back(absl::StrCat(violating, " of the runs over ", *n, " schedules violated"));
  return out;
}

// ---- the suite -----------------------------------------------------------------

TEST_P(MmCidRaceConformance, I4_ScanVsSwitch_EverySchedule_StoreBuffer) {
  RunAsTest("I4_ScanVsSwitch_EverySchedule_StoreBuffer", GetParam());
}

TEST_P(MmCidRaceConformance, I4_MigrationStealVsSwitch_EverySchedule_StoreBuffer) {
  RunAsTest("I4_MigrationStealVsSwitch_EverySchedule_StoreBuffer", GetParam());
}

TEST_P(MmCidRaceConformance, S8_S9_ModeFlipVsMigratingSchedin_EverySchedule_StoreBuffer) {
  RunAsTest("S8_S9_ModeFlipVsMigratingSchedin_EverySchedule_StoreBuffer", GetParam());
}

TEST_P(MmCidRaceConformance, S10_ForkVsFork_EverySchedule) {
  RunAsTest("S10_ForkVsFork_EverySchedule", GetParam());
}

// A binary that links the kit without instantiating this suite is not an error.
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(MmCidRaceConformance);

namespace internal {
int MmCidRaceConformanceAnchor() { return 0; }
}  // namespace internal

}  // namespace isolation::testing::mm_cid
