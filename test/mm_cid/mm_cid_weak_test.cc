// SPDX-License-Identifier: GPL-2.0-or-later
// Weak-memory tests of mm_cid under the store-buffer model (store_buffer.h),
// forced at the built-in designs' named interleave points:
//   I4 -- the lazy put's Dekker pairing.  With the two fences removed
//         (lazy_no_dekker_fences) forced schedules of a remote clear or a
//         migration steal against a context switch free an ID a running task
//         holds (asserted); with the barriers, those schedules are clean, in
//         both barrier modes of `lazy` (BarrierMode::kFences, and
//         kMembarrier: no fence on the switch side, the reclaimer's
//         membarrier drains every thread's modelled buffer).
//   S9 -- owner619's mode word (47ee94efccf6): the pre-fix split layout lets a
//         schedin treat a half-published transition as stable and exhaust
//         the ID space (I14, asserted); the fixed word completes.
// Every schedule of these races (all interleavings at the interleave
// points) is the conformance kit's (MmCidRaceConformance, for every
// covering variant; the controls failing it: mm_cid_negative_controls_test.cc
// and, for each allocator, I4_FencesRemoved_ExplorationFindsViolations below).

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "isolation/core/interleave.h"
#include "isolation/core/membarrier.h"
#include "isolation/mm_cid/mm_cid.h"
#include "isolation/mm_cid/registry.h"
#include "isolation/mm_cid/switcher.h"
#include "isolation/core/store_buffer.h"
#include "isolation/testing/mm_cid.h"
#include "isolation/testing/status_matchers.h"
#include "isolation/testing/violations.h"

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

// Every registered allocator (the built-ins: alloc_v6_4, alloc_v6_13, alloc_v6_14).
const std::vector<std::string> kAllocators = AllocatorRegistry().Names();
std::string AllocatorName(const std::string& a) { return a; }

MmCidVariant LazyVariant(const std::string& allocator, bool no_fences) {
  MmCidVariant v;
  v.design = no_fences ? "lazy_no_dekker_fences" : "lazy";
  v.lazy.allocator = allocator;
  return v;
}
constexpr Nanos kT = kNsPerSec;  // the racing switch happens at 1 s, the scan at 2 s

// 4 CPUs, one mm with tasks 0, 1, 2.  Task 0 ran on CPU 1 and left ID 0
// parked in CPU 1's slot (time stamp 2 ns); the scan's rate limit is
// initialised, so a Scan at 2 s runs both passes.
struct LazyRace {
  std::unique_ptr<MmCid> m;
  MmId mm = kNoMm;
  LazyRace(const std::string& a, bool no_fences, bool force_fences = false) {
    m = *MmCid::Create(4, LazyVariant(a, no_fences),
                       MmCid::Limits{8, 2, force_fences});  // small: one per explored schedule
    mm = *m->CreateMm(CpuMask::Full(4), 0);
    for (TaskId t = 0; t < 3; ++t)
      ISOLATION_EXPECT_OK(m->Fork(t == 0 ? kNoTask : 0, t, mm, CpuMask::Full(4), 0));
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
// The barrier modes `lazy` runs in: force_fences = true (kFences) and false
// (the default: kMembarrier where the host has it).
const std::vector<bool> kForceFences = {true, false};
BarrierMode ExpectedMode(bool force_fences) {
  return force_fences || !PrivateExpeditedMembarrier().available ? BarrierMode::kFences
                                                                 : BarrierMode::kMembarrier;
}
std::string ModeName(bool force_fences) { return BarrierModeName(ExpectedMode(force_fences)); }

std::vector<std::string> RunClearVsSwitch(const std::string& a, bool no_fences,
                                          const std::vector<Interleaver::Slice>& script,
                                          int32_t* task1_cid, bool force_fences = false,
                                          StoreBufferModel::Stats* stats = nullptr) {
  StoreBufferModel sb;
  LazyRace f(a, no_fences, force_fences);
  if (!no_fences) {
    EXPECT_EQ(f.m->barrier_mode(), ExpectedMode(force_fences));
  }
  sb.DrainAll();  // the set-up ran on this thread: publish it
  Interleaver il;
  il.Add("switch", [&] { f.m->ContextSwitch(1, kNoTask, 1, kT); });
  il.Add("scan", [&] { f.m->Scan(f.mm, 2 * kT); });
  const absl::Status st = il.Run(script);
  ISOLATION_EXPECT_OK(st);
  sb.DrainAll();
  if (stats != nullptr) *stats = sb.stats();
  *task1_cid = f.m->TaskCid(1);
  return Violations(*f.m);
}

// Schedule 1 (the scheduler's fence): the switch publishes rq->curr and reads
// its slot (ID 0 parked, valid) and stops before returning; the whole scan
// runs.  Without the fence the publication is still in CPU 1's store buffer:
// the scan's clear_old sees CPU 1 idle, the remote clear announces LAZY, sees
// no user current, commits and frees ID 0 -- which task 1 is running with.
TEST(MmCidWeak, I4_FencesRemoved_SwitchBeforeClear_FreesRunningId) {
  for (const std::string& a : kAllocators) {
    int32_t cid = -2;
    const auto v =
        RunClearVsSwitch(a, /*no_fences=*/true,
                         {{"switch", "mm_cid.switch.end"}, {"scan", ""}, {"switch", ""}}, &cid);
    EXPECT_EQ(cid, 0) << AllocatorName(a);
    EXPECT_TRUE(Mentions(v, "I4: running task 1 on CPU 1 holds ID 0 whose bit is free"))
        << AllocatorName(a) << ": " << Join(v);
    EXPECT_TRUE(Mentions(v, "I4: running task 1 on CPU 1 holds ID 0 but slot has UNSET"))
        << Join(v);
  }
}

TEST(MmCidWeak, I4_WithFences_SwitchBeforeClear_Clean) {
  for (const bool ff : kForceFences) {
    for (const std::string& a : kAllocators) {
      int32_t cid = -2;
      const auto v = RunClearVsSwitch(
          a, /*no_fences=*/false, {{"switch", "mm_cid.switch.end"}, {"scan", ""}, {"switch", ""}},
          &cid, ff);
      EXPECT_EQ(cid, 0) << AllocatorName(a) << " " << ModeName(ff);
      ISOLATION_EXPECT_NO_VIOLATIONS(v) << AllocatorName(a) << " " << ModeName(ff);
    }
  }
}

// The asymmetric mode really is asymmetric under the model: in schedule 1
// the switch issues no fence (its rq->curr store stays buffered until the
// reclaimer's membarrier drains it), and the reclaimer's barrier is the
// process-wide one.  In kFences mode it is the other way round.
TEST(MmCidWeak, I4_BarrierModes_AreWhatTheModelSees) {
  for (const bool ff : kForceFences) {
    int32_t cid = -2;
    StoreBufferModel::Stats st;
    const auto v = RunClearVsSwitch(kAllocators.front(), /*no_fences=*/false,
                                    {{"switch", "mm_cid.switch.end"}, {"scan", ""}, {"switch", ""}},
                                    &cid, ff, &st);
    ISOLATION_EXPECT_NO_VIOLATIONS(v) << ModeName(ff);
    if (ExpectedMode(ff) == BarrierMode::kMembarrier) {
      EXPECT_EQ(st.fences, 0) << "the switch and the reclaimer must not fence in kMembarrier mode";
      EXPECT_GE(st.process_barriers, 1) << "the remote clear must issue the membarrier";
    } else {
      EXPECT_GE(st.fences, 2) << "switch and reclaimer each fence in kFences mode";
      EXPECT_EQ(st.process_barriers, 0);
    }
  }
}

// The mode is a construction-time choice, reported by barrier_mode():
// force_fences gives kFences; the default gives kMembarrier exactly where
// the host supports MEMBARRIER_CMD_PRIVATE_EXPEDITED (never under TSan);
// designs without the pairing report kNone.
TEST(MmCidWeak, BarrierMode_ChosenAtConstruction) {
  const MembarrierSupport& mb = PrivateExpeditedMembarrier();
  RecordProperty("membarrier", mb.available ? "available" : mb.reason);
  EXPECT_EQ((*MmCid::Create(4, "lazy", MmCid::Limits{8, 2, true}))->barrier_mode(),
            BarrierMode::kFences);
  EXPECT_EQ((*MmCid::Create(4, "lazy"))->barrier_mode(),
            mb.available ? BarrierMode::kMembarrier : BarrierMode::kFences)
      << mb.reason;
#if defined(__SANITIZE_THREAD__) || defined(ISOLATION_TSAN)
  EXPECT_FALSE(mb.available) << "TSan builds must use the fences it understands";
#endif
  EXPECT_EQ((*MmCid::Create(4, "lazy_no_dekker_fences"))->barrier_mode(), BarrierMode::kNone);
  EXPECT_EQ((*MmCid::Create(4, "owner619"))->barrier_mode(), BarrierMode::kNone);
  EXPECT_EQ((*MmCid::Create(4, "v63_mmlock"))->barrier_mode(), BarrierMode::kNone);
  EXPECT_STREQ(BarrierModeName(BarrierMode::kMembarrier), "membarrier");
}

// The inline switch front end (switcher.h) takes the barrier of the mode
// chosen at construction; designs without an inline form forward.
TEST(MmCidWeak, SwitcherForm_FollowsTheBarrierMode) {
  using internal::SwitchForm;
  const bool mb = PrivateExpeditedMembarrier().available;
  EXPECT_EQ((*MmCid::Create(4, "lazy", MmCid::Limits{8, 2, true}))->Switcher().form(),
            SwitchForm::kLazyFence);
  EXPECT_EQ((*MmCid::Create(4, "lazy"))->Switcher().form(),
            mb ? SwitchForm::kLazyCompilerBarrier : SwitchForm::kLazyFence);
  EXPECT_EQ((*MmCid::Create(4, "owner619"))->Switcher().form(), SwitchForm::kOwner619);
  for (const char* forwarded : {"lazy_no_dekker_fences", "v63_mmlock", "owner619_split_mode"}) {
    EXPECT_FALSE((*MmCid::Create(4, forwarded))->Switcher().inline_fast_path()) << forwarded;
  }
}

// Schedule 2 (the reclaimer's fence): the clear announces LAZY, finds CPU 1
// idle and stops before its commit; the switch publishes rq->curr and reads
// the slot.  Without the reclaimer's fence the LAZY value has not reached CPU
// 1: the switch takes ID 0 as parked and valid, and the commit then frees it.
TEST(MmCidWeak, I4_FencesRemoved_ClearBeforeSwitch_FreesRunningId) {
  for (const std::string& a : kAllocators) {
    int32_t cid = -2;
    const auto v = RunClearVsSwitch(
        a, /*no_fences=*/true,
        {{"scan", "mm_cid.remote_clear.before_commit"}, {"switch", ""}, {"scan", ""}}, &cid);
    EXPECT_EQ(cid, 0) << AllocatorName(a);
    EXPECT_TRUE(Mentions(v, "I4: running task 1 on CPU 1 holds ID 0 whose bit is free"))
        << AllocatorName(a) << ": " << Join(v);
  }
}

// With the fence the switch sees LAZY, frees and re-allocates the ID itself,
// and the clear's commit CAS fails.
TEST(MmCidWeak, I4_WithFences_ClearBeforeSwitch_Clean) {
  for (const bool ff : kForceFences) {
    for (const std::string& a : kAllocators) {
      int32_t cid = -2;
      const auto v = RunClearVsSwitch(
          a, /*no_fences=*/false,
          {{"scan", "mm_cid.remote_clear.before_commit"}, {"switch", ""}, {"scan", ""}}, &cid, ff);
      EXPECT_GE(cid, 0) << AllocatorName(a) << " " << ModeName(ff);
      ISOLATION_EXPECT_NO_VIOLATIONS(v) << AllocatorName(a) << " " << ModeName(ff);
    }
  }
}

// The migration steal (__sched_mm_cid_migrate_from_try_steal_cid) is the
// other reclaimer: task 0 migrates from CPU 1 to CPU 3 and runs there while
// task 1 switches in on CPU 1.  Without the fences both run with ID 0 (I1).
std::vector<std::string> RunStealVsSwitch(const std::string& a, bool no_fences,
                                          const std::vector<Interleaver::Slice>& script,
                                          bool force_fences = false) {
  StoreBufferModel sb;
  LazyRace f(a, no_fences, force_fences);
  if (!no_fences) {
    EXPECT_EQ(f.m->barrier_mode(), ExpectedMode(force_fences));
  }
  sb.DrainAll();
  Interleaver il;
  il.Add("switch", [&] { f.m->ContextSwitch(1, kNoTask, 1, kT); });
  il.Add("migrate", [&] {
    f.m->Migrate(0, 1, 3, kT);
    f.m->ContextSwitch(3, kNoTask, 0, kT);
  });
  const absl::Status st = il.Run(script);
  ISOLATION_EXPECT_OK(st);
  sb.DrainAll();
  return Violations(*f.m);
}

TEST(MmCidWeak, I4_FencesRemoved_MigrateSteal_DuplicatesId) {
  for (const std::string& a : kAllocators) {
    const auto v1 = RunStealVsSwitch(
        a, true, {{"switch", "mm_cid.switch.end"}, {"migrate", ""}, {"switch", ""}});
    EXPECT_TRUE(Mentions(v1, "I1: ID 0 of mm 0 held twice"))
        << AllocatorName(a) << ": " << Join(v1);
    EXPECT_TRUE(Mentions(v1, "I4: running task 1 on CPU 1 holds ID 0 but slot has UNSET"))
        << Join(v1);
    const auto v2 = RunStealVsSwitch(
        a, true,
        {{"migrate", "mm_cid.migrate_steal.before_commit"}, {"switch", ""}, {"migrate", ""}});
    EXPECT_TRUE(Mentions(v2, "I1: ID 0 of mm 0 held twice"))
        << AllocatorName(a) << ": " << Join(v2);
  }
}

TEST(MmCidWeak, I4_WithFences_MigrateSteal_Clean) {
  for (const bool ff : kForceFences) {
    for (const std::string& a : kAllocators) {
      const auto v1 = RunStealVsSwitch(
          a, false, {{"switch", "mm_cid.switch.end"}, {"migrate", ""}, {"switch", ""}}, ff);
      ISOLATION_EXPECT_NO_VIOLATIONS(v1) << AllocatorName(a) << " " << ModeName(ff);
      const auto v2 = RunStealVsSwitch(
          a, false,
          {{"migrate", "mm_cid.migrate_steal.before_commit"}, {"switch", ""}, {"migrate", ""}}, ff);
      ISOLATION_EXPECT_NO_VIOLATIONS(v2) << AllocatorName(a) << " " << ModeName(ff);
    }
  }
}

// Every schedule of both races, in both barrier modes, for every allocator
// (the conformance kit runs the default mode for every covering variant).
TEST(MmCidWeak, I4_BothModes_ExplorationClean) {
  for (const bool ff : kForceFences) {
    for (const std::string& a : kAllocators) {
      ISOLATION_EXPECT_NO_VIOLATIONS(
          testing::mm_cid::CheckScanVsSwitchSchedulesInMode(LazyVariant(a, false), ff))
          << a << " " << ModeName(ff);
      ISOLATION_EXPECT_NO_VIOLATIONS(
          testing::mm_cid::CheckMigrateVsSwitchSchedulesInMode(LazyVariant(a, false), ff))
          << a << " " << ModeName(ff);
    }
  }
}

// The kit's every-schedule exploration must be able to fail: without the
// fences it finds violating schedules for both races, with every allocator.
TEST(MmCidWeak, I4_FencesRemoved_ExplorationFindsViolations) {
  for (const std::string& a : kAllocators) {
    EXPECT_FALSE(testing::mm_cid::CheckScanVsSwitchSchedules(LazyVariant(a, true)).empty()) << a;
    EXPECT_FALSE(testing::mm_cid::CheckMigrateVsSwitchSchedules(LazyVariant(a, true)).empty()) << a;
  }
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
    MmCidVariant v;
    v.design = split ? "owner619_split_mode" : "owner619";
    m = *MmCid::Create(4, v, MmCid::Limits{8, 2});
    mm = *m->CreateMm(CpuMask::Full(4), 0);
    for (TaskId t = 0; t < 4; ++t)
      ISOLATION_EXPECT_OK(m->Fork(t == 0 ? kNoTask : 0, t, mm, CpuMask::Full(4), 0));
    m->ContextSwitch(0, kNoTask, 0, 1);  // the forker runs on CPU 0
  }
  void AddActors(Interleaver& il) {
    il.Add("fork", [this] { ISOLATION_EXPECT_OK(m->Fork(0, 4, mm, CpuMask::Full(4), 2)); });
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

std::vector<std::string> RunS9Forced(bool split, const std::vector<Interleaver::Slice>& script,
                                     MmCidStats* stats) {
  StoreBufferModel sb;
  Owner619Race f(split);
  sb.DrainAll();
  Interleaver il;
  f.AddActors(il);
  const absl::Status st = il.Run(script);
  ISOLATION_EXPECT_OK(st);
  sb.DrainAll();
  *stats = f.m->Stats();
  return Violations(*f.m);
}

TEST(MmCidWeak, S9_SplitMode_HalfPublishedTransition_ViolatesI14) {
  MmCidStats s;
  const auto v = RunS9Forced(
      /*split=*/true,
      {{"fork", "mm_cid.owner619.split_mode.percpu_visible"}, {"x", ""}, {"fork", ""}}, &s);
  EXPECT_GT(s.alloc_failures, 0) << "X's schedin on CPU 2 must exhaust the ID space";
  EXPECT_TRUE(Mentions(v, "I14")) << Join(v);
}

// The fixed layout in the S8 schedule (the fixup paused before its first
// task) under the model: completes, no violation.
TEST(MmCidWeak, S9_ModeWordWithFences_SameRaceClean) {
  MmCidStats s;
  const auto v = RunS9Forced(/*split=*/false,
                             {{"fork", "mm_cid.owner619.fixup_task"}, {"x", ""}, {"fork", ""}}, &s);
  EXPECT_EQ(s.alloc_failures, 0);
  EXPECT_EQ(s.mode_changes, 1);
  ISOLATION_EXPECT_NO_VIOLATIONS(v);
}

}  // namespace
}  // namespace isolation::mm_cid
