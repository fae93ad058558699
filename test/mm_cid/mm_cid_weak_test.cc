// SPDX-License-Identifier: GPL-2.0-or-later
// Weak-memory tests of mm_cid under the store-buffer model (store_buffer.h):
//   I4 -- the lazy put's Dekker pairing.  With the two fences removed
//         (lazy_no_dekker_fences) forced schedules of a remote clear or a
//         migration steal against a context switch free an ID a running task
//         holds (asserted); with the fences, those schedules and every
//         schedule at the granularity of the interleave points are clean.
//   S9 -- owner619's mode word (47ee94efccf6): the pre-fix split layout lets a
//         schedin treat a half-published transition as stable and exhaust
//         the ID space (I14, asserted); the fixed word is clean in every
//         schedule.

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "isolation/core/interleave.h"
#include "isolation/mm_cid/mm_cid.h"
#include "isolation/core/store_buffer.h"

namespace isolation::mm_cid {
namespace {

bool Mentions(const std::vector<std::string>& v, const std::string& what) {
  for (const auto& s : v) {
    if (s.find(what) != std::string::npos) return true;
  }
  return false;
}

std::string Join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += x + "; ";
  return s;
}

constexpr Allocator kAllocators[] = {Allocator::kV6_4, Allocator::kV6_13, Allocator::kV6_14};
constexpr Nanos kT = kNsPerSec;  // the racing switch happens at 1 s, the scan at 2 s

// 4 CPUs, one mm with tasks 0, 1, 2.  Task 0 ran on CPU 1 and left ID 0
// parked in CPU 1's slot (time stamp 2 ns); the scan's rate limit is
// initialised, so a Scan at 2 s runs both passes.
struct LazyRace {
  std::unique_ptr<MmCid> m;
  MmId mm = kNoMm;
  LazyRace(Allocator a, bool no_fences) {
    MmCidConfig c;
    c.allocator = a;
    c.lazy_no_dekker_fences = no_fences;
    m = *MmCid::Create(4, c, MmCid::Limits{8, 2});  // small: one per explored schedule
    mm = *m->CreateMm(CpuMask::Full(4), 0);
    for (TaskId t = 0; t < 3; ++t) EXPECT_TRUE(m->Fork(t == 0 ? kNoTask : 0, t, mm, CpuMask::Full(4), 0).ok());
    m->ContextSwitch(1, kNoTask, 0, 1);
    m->ContextSwitch(1, 0, kNoTask, 2);
    m->Scan(mm, 3);  // initialises mm_cid_next_scan only
  }
};

// Violations of I1/I4 (and I5/I6 accounting) after a run.
std::vector<std::string> Violations(const MmCid& m) {
  std::vector<std::string> v = m.CheckAlways();
  for (auto& q : m.CheckQuiescent()) v.push_back(q);
  return v;
}

// Remote clear vs switch-in on CPU 1: runs `script` under the store-buffer
// model; returns the violations found after it.
std::vector<std::string> RunClearVsSwitch(Allocator a, bool no_fences, const std::vector<Interleaver::Slice>& script,
                                          int32_t* task1_cid) {
  StoreBufferModel sb;
  LazyRace f(a, no_fences);
  sb.DrainAll();  // the set-up ran on this thread: publish it
  Interleaver il;
  il.Add("switch", [&] { f.m->ContextSwitch(1, kNoTask, 1, kT); });
  il.Add("scan", [&] { f.m->Scan(f.mm, 2 * kT); });
  const absl::Status st = il.Run(script);
  EXPECT_TRUE(st.ok()) << st;
  sb.DrainAll();
  *task1_cid = f.m->TaskCid(1);
  return Violations(*f.m);
}

// Schedule 1 (the scheduler's fence): the switch publishes rq->curr and reads
// its slot (ID 0 parked, valid) and stops before returning; the whole scan
// runs.  Without the fence the publication is still in CPU 1's store buffer:
// the scan's clear_old sees CPU 1 idle, the remote clear announces LAZY, sees
// no user current, commits and frees ID 0 -- which task 1 is running with.
TEST(MmCidWeak, I4_FencesRemoved_SwitchBeforeClear_FreesRunningId) {
  for (Allocator a : kAllocators) {
    int32_t cid = -2;
    const auto v = RunClearVsSwitch(a, /*no_fences=*/true, {{"switch", "mm_cid.switch.end"}, {"scan", ""}, {"switch", ""}},
                                    &cid);
    EXPECT_EQ(cid, 0) << AllocatorName(a);
    EXPECT_TRUE(Mentions(v, "I4: running task 1 on CPU 1 holds ID 0 whose bit is free"))
        << AllocatorName(a) << ": " << Join(v);
    EXPECT_TRUE(Mentions(v, "I4: running task 1 on CPU 1 holds ID 0 but slot has UNSET")) << Join(v);
  }
}

TEST(MmCidWeak, I4_WithFences_SwitchBeforeClear_Clean) {
  for (Allocator a : kAllocators) {
    int32_t cid = -2;
    const auto v = RunClearVsSwitch(a, /*no_fences=*/false,
                                    {{"switch", "mm_cid.switch.end"}, {"scan", ""}, {"switch", ""}}, &cid);
    EXPECT_EQ(cid, 0) << AllocatorName(a);
    EXPECT_TRUE(v.empty()) << AllocatorName(a) << ": " << Join(v);
  }
}

// Schedule 2 (the reclaimer's fence): the clear announces LAZY, finds CPU 1
// idle and stops before its commit; the switch publishes rq->curr and reads
// the slot.  Without the reclaimer's fence the LAZY value has not reached CPU
// 1: the switch takes ID 0 as parked and valid, and the commit then frees it.
TEST(MmCidWeak, I4_FencesRemoved_ClearBeforeSwitch_FreesRunningId) {
  for (Allocator a : kAllocators) {
    int32_t cid = -2;
    const auto v = RunClearVsSwitch(
        a, /*no_fences=*/true, {{"scan", "mm_cid.remote_clear.before_commit"}, {"switch", ""}, {"scan", ""}}, &cid);
    EXPECT_EQ(cid, 0) << AllocatorName(a);
    EXPECT_TRUE(Mentions(v, "I4: running task 1 on CPU 1 holds ID 0 whose bit is free"))
        << AllocatorName(a) << ": " << Join(v);
  }
}

// With the fence the switch sees LAZY, frees and re-allocates the ID itself,
// and the clear's commit CAS fails.
TEST(MmCidWeak, I4_WithFences_ClearBeforeSwitch_Clean) {
  for (Allocator a : kAllocators) {
    int32_t cid = -2;
    const auto v = RunClearVsSwitch(
        a, /*no_fences=*/false, {{"scan", "mm_cid.remote_clear.before_commit"}, {"switch", ""}, {"scan", ""}}, &cid);
    EXPECT_GE(cid, 0) << AllocatorName(a);
    EXPECT_TRUE(v.empty()) << AllocatorName(a) << ": " << Join(v);
  }
}

// The migration steal (__sched_mm_cid_migrate_from_try_steal_cid) is the
// other reclaimer: task 0 migrates from CPU 1 to CPU 3 and runs there while
// task 1 switches in on CPU 1.  Without the fences both run with ID 0 (I1).
std::vector<std::string> RunStealVsSwitch(Allocator a, bool no_fences, const std::vector<Interleaver::Slice>& script) {
  StoreBufferModel sb;
  LazyRace f(a, no_fences);
  sb.DrainAll();
  Interleaver il;
  il.Add("switch", [&] { f.m->ContextSwitch(1, kNoTask, 1, kT); });
  il.Add("migrate", [&] {
    f.m->Migrate(0, 1, 3, kT);
    f.m->ContextSwitch(3, kNoTask, 0, kT);
  });
  const absl::Status st = il.Run(script);
  EXPECT_TRUE(st.ok()) << st;
  sb.DrainAll();
  return Violations(*f.m);
}

TEST(MmCidWeak, I4_FencesRemoved_MigrateSteal_DuplicatesId) {
  for (Allocator a : kAllocators) {
    const auto v1 = RunStealVsSwitch(a, true, {{"switch", "mm_cid.switch.end"}, {"migrate", ""}, {"switch", ""}});
    EXPECT_TRUE(Mentions(v1, "I1: ID 0 of mm 0 held twice")) << AllocatorName(a) << ": " << Join(v1);
    EXPECT_TRUE(Mentions(v1, "I4: running task 1 on CPU 1 holds ID 0 but slot has UNSET")) << Join(v1);
    const auto v2 = RunStealVsSwitch(
        a, true, {{"migrate", "mm_cid.migrate_steal.before_commit"}, {"switch", ""}, {"migrate", ""}});
    EXPECT_TRUE(Mentions(v2, "I1: ID 0 of mm 0 held twice")) << AllocatorName(a) << ": " << Join(v2);
  }
}

TEST(MmCidWeak, I4_WithFences_MigrateSteal_Clean) {
  for (Allocator a : kAllocators) {
    const auto v1 = RunStealVsSwitch(a, false, {{"switch", "mm_cid.switch.end"}, {"migrate", ""}, {"switch", ""}});
    EXPECT_TRUE(v1.empty()) << AllocatorName(a) << ": " << Join(v1);
    const auto v2 = RunStealVsSwitch(
        a, false, {{"migrate", "mm_cid.migrate_steal.before_commit"}, {"switch", ""}, {"migrate", ""}});
    EXPECT_TRUE(v2.empty()) << AllocatorName(a) << ": " << Join(v2);
  }
}

// Every schedule at the granularity of the interleave points, under the
// store-buffer model, for two races on CPU 1's parked ID:
//   clear:   a scan (both passes) vs task 1 switching in and out, and task 2
//            switching in;
//   steal:   task 0 migrating 1 -> 3 and running there vs task 1 switching in.
// With the fences no schedule violates I1/I4/I5/I6; without them some do.
// (Three actors at once -- scan, steal and switch -- would need ~10^4
// schedules, too many for a unit test at one thread pair per schedule.)
struct ExploreResult {
  int schedules = 0;
  int violating_runs = 0;
  std::string first;
};

enum class Race { kClear, kSteal };

ExploreResult ExploreLazy(Allocator a, bool no_fences, Race race) {
  ExploreResult r;
  StoreBufferModel sb;
  std::unique_ptr<LazyRace> f;
  // I1/I2/I4 are also checked after each switch of an actor, once that
  // switch's stores have drained (the end of the operation): a task that ran
  // with a freed ID and already switched out leaves no trace at the end of
  // the run.  The other actor may be parked inside a switch, after
  // publishing rq->curr and before storing the task's ID, so "runs without
  // an ID" is a transient state there, not a violation.
  std::vector<std::string> mid;
  auto switch_op = [&](int cpu, TaskId prev, TaskId next, Nanos t) {
    f->m->ContextSwitch(cpu, prev, next, t);
    store_buffer::OperationEnds();
    for (auto& v : f->m->CheckAlways()) {
      if (v.find("without an ID") == std::string::npos) mid.push_back(v);
    }
  };
  auto n = Interleaver::Explore(
      [&](Interleaver& il) {
        f = std::make_unique<LazyRace>(a, no_fences);
        sb.DrainAll();
        mid.clear();
        if (race == Race::kClear) {
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
        auto v = Violations(*f->m);
        v.insert(v.end(), mid.begin(), mid.end());
        if (!v.empty()) {
          if (r.violating_runs++ == 0) r.first = Join(v) + " | schedule: " + Join(log);
        }
      });
  EXPECT_TRUE(n.ok()) << n.status();
  r.schedules = n.ok() ? *n : 0;
  return r;
}

TEST(MmCidWeak, I4_WithFences_AllSchedulesClean) {
  for (Allocator a : kAllocators) {
    for (Race race : {Race::kClear, Race::kSteal}) {
      const ExploreResult r = ExploreLazy(a, /*no_fences=*/false, race);
      EXPECT_GT(r.schedules, 10) << AllocatorName(a) << " race " << static_cast<int>(race);
      EXPECT_EQ(r.violating_runs, 0) << AllocatorName(a) << " race " << static_cast<int>(race) << ": " << r.first;
      RecordProperty(absl::StrCat("schedules_", std::string(AllocatorName(a)), "_", static_cast<int>(race)), r.schedules);
    }
  }
}

// The same exploration must be able to fail: without the fences it finds
// violating schedules for every race.
TEST(MmCidWeak, I4_FencesRemoved_ExplorationFindsViolations) {
  for (Allocator a : kAllocators) {
    for (Race race : {Race::kClear, Race::kSteal}) {
      const ExploreResult r = ExploreLazy(a, /*no_fences=*/true, race);
      EXPECT_GT(r.violating_runs, 0) << AllocatorName(a) << " race " << static_cast<int>(race);
    }
  }
}

// Without the model, forced interleavings alone cannot tell the two apart:
// the fence-less control is clean in every schedule (why the model exists).
TEST(MmCidWeak, I4_FencesRemoved_SequentiallyConsistentSchedulesAllClean) {
  LazyRace* fp = nullptr;
  std::unique_ptr<LazyRace> f;
  int violating = 0;
  auto n = Interleaver::Explore(
      [&](Interleaver& il) {
        f = std::make_unique<LazyRace>(Allocator::kV6_14, /*no_fences=*/true);
        fp = f.get();
        il.Add("switch", [&] { fp->m->ContextSwitch(1, kNoTask, 1, kT); });
        il.Add("scan", [&] { fp->m->Scan(fp->mm, 2 * kT); });
      },
      [&](const std::vector<std::string>&) { violating += Violations(*fp->m).empty() ? 0 : 1; });
  ASSERT_TRUE(n.ok()) << n.status();
  EXPECT_GT(*n, 3);
  EXPECT_EQ(violating, 0);
}

TEST(MmCidWeak, NegativeControlNames) {
  MmCidConfig c;
  c.lazy_no_dekker_fences = true;
  EXPECT_EQ(c.Name(), "lazy+alloc_v6_14+scan_possible+batch_full+work_taskwork+lazy_no_dekker_fences");
  MmCidConfig o;
  o.design = Design::kOwner619;
  o.owner619_split_mode = true;
  EXPECT_EQ(o.Name(), "owner619+owner619_split_mode");
}

// ---------------------------------------------------------------------------
// S9 weak ordering of owner619's mode (47ee94efccf6).  P = 4, four tasks in
// per-task mode (IDs 0-3), task 0 running on CPU 0 forks a fifth: users 5 >
// max_cids 4 flips the mm to per-CPU and the fixup walks tasks 1-3.  Task X
// (3) meanwhile switches in on CPU 1, out, migrates to CPU 2 and switches in
// there (the S8 sequence).  Under the store-buffer model:
//   - owner619_split_mode (pre-fix: `percpu` and `transit` written separately,
//     no fences): when X's schedin sees the new `percpu` but `transit` still 0
//     -- the order a PowerPC may make the two stores visible in -- it treats
//     the transition as a stable per-CPU mode and hands its ID to CPU 1
//     permanently; on CPU 2 the ID space is exhausted: I14 (the kernel's
//     hard lockup: schedin spins holding CPU 2's rq lock);
//   - the single mode word with its two fences: in every schedule X sees the
//     old mode or ONCPU|TRANSIT, never a half-published one, and completes.
// ---------------------------------------------------------------------------
struct Owner619Race {
  std::unique_ptr<MmCid> m;
  MmId mm = kNoMm;
  explicit Owner619Race(bool split) {
    MmCidConfig c;
    c.design = Design::kOwner619;
    c.owner619_split_mode = split;
    m = *MmCid::Create(4, c, MmCid::Limits{8, 2});
    mm = *m->CreateMm(CpuMask::Full(4), 0);
    for (TaskId t = 0; t < 4; ++t) EXPECT_TRUE(m->Fork(t == 0 ? kNoTask : 0, t, mm, CpuMask::Full(4), 0).ok());
    m->ContextSwitch(0, kNoTask, 0, 1);  // the forker runs on CPU 0
  }
  void AddActors(Interleaver& il) {
    il.Add("fork", [this] { EXPECT_TRUE(m->Fork(0, 4, mm, CpuMask::Full(4), 2).ok()); });
    il.Add("x", [this] {
      m->ContextSwitch(1, kNoTask, 3, 3);
      ISOLATION_INTERLEAVE_POINT("s9.x.ran_on_cpu1");
      m->ContextSwitch(1, 3, kNoTask, 4);
      m->Migrate(3, 1, 2, 5);
      ISOLATION_INTERLEAVE_POINT("s9.x.migrated");
      m->ContextSwitch(2, kNoTask, 3, 6);
    });
  }
};

std::vector<std::string> RunS9Forced(bool split, const std::vector<Interleaver::Slice>& script, MmCidStats* stats) {
  StoreBufferModel sb;
  Owner619Race f(split);
  sb.DrainAll();
  Interleaver il;
  f.AddActors(il);
  const absl::Status st = il.Run(script);
  EXPECT_TRUE(st.ok()) << st;
  sb.DrainAll();
  *stats = f.m->Stats();
  return Violations(*f.m);
}

TEST(MmCidWeak, S9_SplitMode_HalfPublishedTransition_ViolatesI14) {
  MmCidStats s;
  const auto v = RunS9Forced(/*split=*/true,
                             {{"fork", "mm_cid.owner619.split_mode.percpu_visible"}, {"x", ""}, {"fork", ""}}, &s);
  EXPECT_GT(s.alloc_failures, 0) << "X's schedin on CPU 2 must exhaust the ID space";
  EXPECT_TRUE(Mentions(v, "I14")) << Join(v);
}

// The fixed layout in the S8 schedule (the fixup paused before its first
// task) under the model: completes, no violation.
TEST(MmCidWeak, S9_ModeWordWithFences_SameRaceClean) {
  MmCidStats s;
  const auto v = RunS9Forced(/*split=*/false, {{"fork", "mm_cid.owner619.fixup_task"}, {"x", ""}, {"fork", ""}}, &s);
  EXPECT_EQ(s.alloc_failures, 0);
  EXPECT_EQ(s.mode_changes, 1);
  EXPECT_TRUE(v.empty()) << Join(v);
}

struct S9Explored {
  int schedules = 0;
  int violating_runs = 0;
  std::string first;
};

S9Explored ExploreS9(bool split) {
  S9Explored r;
  StoreBufferModel sb;
  std::unique_ptr<Owner619Race> f;
  auto n = Interleaver::Explore(
      [&](Interleaver& il) {
        f = std::make_unique<Owner619Race>(split);
        sb.DrainAll();
        f->AddActors(il);
      },
      [&](const std::vector<std::string>& log) {
        sb.DrainAll();
        const auto v = Violations(*f->m);
        if (!v.empty() && r.violating_runs++ == 0) r.first = Join(v) + " | schedule: " + Join(log);
      });
  EXPECT_TRUE(n.ok()) << n.status();
  r.schedules = n.ok() ? *n : 0;
  return r;
}

TEST(MmCidWeak, S9_ModeWordWithFences_AllSchedulesClean) {
  const S9Explored r = ExploreS9(/*split=*/false);
  EXPECT_GT(r.schedules, 5);
  EXPECT_EQ(r.violating_runs, 0) << r.first;
  RecordProperty("schedules", r.schedules);
}

TEST(MmCidWeak, S9_SplitMode_ExplorationFindsViolations) {
  const S9Explored r = ExploreS9(/*split=*/true);
  EXPECT_GT(r.violating_runs, 0);
  RecordProperty("schedules", r.schedules);
  RecordProperty("violating_runs", r.violating_runs);
}

}  // namespace
}  // namespace isolation::mm_cid
