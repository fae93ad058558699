// SPDX-License-Identifier: GPL-2.0-or-later
// S10 (failed fork, vfork / CLONE_VM sharers, a fork racing a fixup) and
// S13 (never-preempted thread, with and without the [WQ] tick kick) driven
// directly through the mechanism's entry points.  The owner619 walk is
// checked against its 6.19 predecessor (owner619_walk619, a negative
// control): the tests assert that the old walk's misses are detected.

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "isolation/core/interleave.h"
#include "isolation/mm_cid/mm_cid.h"
#include "test_variants.h"

namespace isolation::mm_cid {
namespace {

using testing_variants::AllCorrectConfigs;
using testing_variants::ConfigTestName;

std::vector<std::string> Violations(const MmCid& m, bool quiescent) {
  auto v = m.CheckAlways();
  if (quiescent) {
    auto q = m.CheckQuiescent();
    v.insert(v.end(), q.begin(), q.end());
  }
  return v;
}

bool AnyMentions(const std::vector<std::string>& v, const std::string& needle) {
  return std::any_of(v.begin(), v.end(), [&](const std::string& s) { return s.find(needle) != std::string::npos; });
}

MmCidConfig Owner619(bool walk619) {
  MmCidConfig c;
  c.design = Design::kOwner619;
  c.owner619_walk619 = walk619;
  return c;
}

class MmCidForkTest : public testing::TestWithParam<MmCidConfig> {};

// ---------------------------------------------------------------------------
// S10 failed fork: 4 threads running on CPUs 0-3; a fifth is forked and the
// clone then fails (ForkFailed, the kernel's rollback after the child was
// accounted).  Users and the bitmap return to their values before the fork
// (owner619 had allocated the child's ID at fork, lazy had not), the child id
// can be forked again and then runs with an ID of its own.  Bad ids are
// errors, as is rolling back a child that already ran.
// ---------------------------------------------------------------------------
TEST_P(MmCidForkTest, S10_FailedForkRollsBackUsersAndId) {
  const MmCidConfig& c = GetParam();
  const int p = 8;
  auto m = *MmCid::Create(p, c);
  Nanos now = 1000;
  const MmId mm = *m->CreateMm(CpuMask::Full(p), now);
  for (int k = 0; k < 4; ++k) ASSERT_TRUE(m->Fork(k == 0 ? kNoTask : 0, k, mm, CpuMask::Full(p), now).ok());
  for (int k = 0; k < 4; ++k) m->ContextSwitch(k, kNoTask, k, now);
  ASSERT_EQ(m->MmUsers(mm), 4);
  ASSERT_EQ(m->CidmaskWeight(mm), 4);

  now += kNsPerMs;
  ASSERT_TRUE(m->Fork(0, 4, mm, CpuMask::Full(p), now).ok());
  EXPECT_EQ(m->MmUsers(mm), 5) << "the child is accounted at fork";
  EXPECT_EQ(m->CidmaskWeight(mm), c.design == Design::kOwner619 ? 5 : 4)
      << "owner619 allocates the child's ID at fork (per-task mode), lazy at its first switch-in";
  ASSERT_TRUE(m->ForkFailed(4, now).ok());
  EXPECT_EQ(m->MmUsers(mm), 4) << "S10: failed fork must roll back users";
  EXPECT_EQ(m->CidmaskWeight(mm), 4) << "S10: failed fork must release the child's ID";
  EXPECT_FALSE(m->TaskActive(4));
  {
    const auto v = Violations(*m, true);
    ASSERT_TRUE(v.empty()) << "S10 after rollback: " << v.front();
  }
  // Errors: out of range, never forked, already rolled back, already ran.
  EXPECT_EQ(m->ForkFailed(-1, now).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(m->ForkFailed(4, now).code(), absl::StatusCode::kInvalidArgument) << "rolled back twice";
  EXPECT_EQ(m->ForkFailed(99, now).code(), absl::StatusCode::kInvalidArgument);
  const absl::Status ran = m->ForkFailed(1, now);
  EXPECT_EQ(ran.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(std::string(ran.message()).find("1"), std::string::npos) << ran;
  EXPECT_EQ(m->MmUsers(mm), 4) << "a rejected ForkFailed changes nothing";

  // The id is free again: a successful fork of it runs with its own ID.
  now += kNsPerMs;
  ASSERT_TRUE(m->Fork(0, 4, mm, CpuMask::Full(p), now).ok());
  m->ContextSwitch(4, kNoTask, 4, now);
  EXPECT_GE(m->TaskCid(4), 0);
  EXPECT_EQ(m->MmUsers(mm), 5);
  EXPECT_EQ(m->CidmaskWeight(mm), 5);
  const auto v = Violations(*m, true);
  ASSERT_TRUE(v.empty()) << "S10 after re-fork: " << v.front();
  // An exited task cannot be rolled back either.
  EXPECT_TRUE(m->Exit(4, 4, now).ok());
  m->ContextSwitch(4, 4, kNoTask, now);
  EXPECT_EQ(m->ForkFailed(4, now).code(), absl::StatusCode::kFailedPrecondition);
}

// ---------------------------------------------------------------------------
// S10 vfork: a task of the mm does vfork() (CLONE_VM without CLONE_THREAD,
// ForkVm).  The sharer is a user of the mm exactly like a thread: counted in
// users, gets an ID distinct from the threads' while they all run (I1), and
// its exit releases it.  owner619 also gets its ID right at fork.
// ---------------------------------------------------------------------------
TEST_P(MmCidForkTest, S10_VforkSharerCountedAsUser) {
  const MmCidConfig& c = GetParam();
  const int p = 8;
  auto m = *MmCid::Create(p, c);
  Nanos now = 1000;
  const MmId mm = *m->CreateMm(CpuMask::Full(p), now);
  for (int k = 0; k < 3; ++k) ASSERT_TRUE(m->Fork(k == 0 ? kNoTask : 0, k, mm, CpuMask::Full(p), now).ok());
  for (int k = 0; k < 3; ++k) m->ContextSwitch(k, kNoTask, k, now);
  ASSERT_TRUE(m->ForkVm(0, 3, mm, CpuMask::Full(p), now).ok());
  EXPECT_EQ(m->MmUsers(mm), 4) << "S10: a CLONE_VM sharer is counted in users";
  EXPECT_EQ(m->TaskMm(3), mm);
  m->ContextSwitch(3, kNoTask, 3, now);
  std::vector<int32_t> ids;
  for (int k = 0; k < 4; ++k) ids.push_back(m->TaskCid(k));
  std::sort(ids.begin(), ids.end());
  EXPECT_EQ(ids, (std::vector<int32_t>{0, 1, 2, 3})) << "S10: sharer and threads hold distinct compact IDs";
  {
    const auto v = Violations(*m, true);
    ASSERT_TRUE(v.empty()) << "S10 vfork: " << v.front();
  }
  EXPECT_FALSE(m->ForkVm(0, 3, mm, CpuMask::Full(p), now).ok()) << "reused id";
  EXPECT_FALSE(m->ForkVm(0, 5, mm + 7, CpuMask::Full(p), now).ok()) << "unknown mm";
  // The vfork child exits (or execs): users drop, its ID is released.
  now += kNsPerMs;
  EXPECT_TRUE(m->Exit(3, 3, now).ok());
  m->ContextSwitch(3, 3, kNoTask, now);
  EXPECT_EQ(m->MmUsers(mm), 3);
  EXPECT_EQ(m->CidmaskWeight(mm), 3);
  const auto v = Violations(*m, true);
  ASSERT_TRUE(v.empty()) << "S10 vfork exit: " << v.front();
}

INSTANTIATE_TEST_SUITE_P(AllDesigns, MmCidForkTest, testing::ValuesIn(AllCorrectConfigs()), ConfigTestName);

// ---------------------------------------------------------------------------
// owner619: the failing fork is the one that crossed into per-CPU mode (the
// ninth user of an 8-CPU union: max_cids 8).  The rollback leaves the mode
// per-CPU (hysteresis: pcpu_thrs 4) with every invariant intact, and the
// eight running tasks keep distinct IDs below max_cids through a round of
// switches.
// ---------------------------------------------------------------------------
TEST(MmCidForkOwner619, S10_FailedForkAfterModeFlip) {
  const int p = 8;
  auto m = *MmCid::Create(p, Owner619(false));
  Nanos now = 1000;
  const MmId mm = *m->CreateMm(CpuMask::Full(p), now);
  for (int k = 0; k < 8; ++k) ASSERT_TRUE(m->Fork(k == 0 ? kNoTask : 0, k, mm, CpuMask::Full(p), now).ok());
  for (int k = 0; k < 8; ++k) m->ContextSwitch(k, kNoTask, k, now);
  const int64_t flips = m->Stats().mode_changes;
  ASSERT_TRUE(m->Fork(0, 8, mm, CpuMask::Full(p), now).ok());
  ASSERT_EQ(m->Stats().mode_changes, flips + 1) << "setup: the ninth user must flip to per-CPU";
  ASSERT_TRUE(m->ForkFailed(8, now).ok());
  EXPECT_EQ(m->MmUsers(mm), 8);
  {
    const auto v = Violations(*m, true);
    ASSERT_TRUE(v.empty()) << "S10 rollback after flip: " << v.front();
  }
  for (int round = 0; round < 3; ++round) {
    for (int k = 0; k < 8; ++k) {
      now += kNsPerMs;
      m->ContextSwitch(k, k, kNoTask, now);
      m->ContextSwitch(k, kNoTask, k, now);
    }
    const auto v = Violations(*m, true);
    ASSERT_TRUE(v.empty()) << "S10 round " << round << ": " << v.front();
  }
  for (int k = 0; k < 8; ++k) EXPECT_LT(m->TaskCid(k), 8);
}

// ---------------------------------------------------------------------------
// S10 vfork sharer reached by the tasks->CPUs fixup: process 0 with threads
// 0-5 and 7, a vfork child V = 6 (its own thread group) that is queued, not
// running.  Thread 0 (running) forks thread 8, the ninth user: the mode flips
// to per-CPU and the walk must drop V's task-owned ID.  7.0 (per-mm user
// list) reaches it: quiescent invariants hold and V later runs with the CPU's
// ID.  The 6.19 walk (owner619_walk619) spends its users budget (users - 2 =
// 7) on the six other threads in the thread-group pass and once more in the
// task-list pass before reaching V: V keeps its ID in per-CPU mode, which
// CheckQuiescent reports (I11) -- asserted, so the miss stays demonstrated.
// ---------------------------------------------------------------------------
void RunVforkFixup(bool walk619) {
  const int p = 8;
  auto m = *MmCid::Create(p, Owner619(walk619));
  Nanos now = 1000;
  const MmId mm = *m->CreateMm(CpuMask::Full(p), now);
  const TaskId kSharer = 6;
  for (int k = 0; k < 8; ++k) {
    if (k == kSharer) {
      ASSERT_TRUE(m->ForkVm(0, k, mm, CpuMask::Full(p), now).ok());
    } else {
      ASSERT_TRUE(m->Fork(k == 0 ? kNoTask : 0, k, mm, CpuMask::Full(p), now).ok());
    }
  }
  for (int k = 0; k < 5; ++k) m->ContextSwitch(k, kNoTask, k, now);  // 5, 6, 7 queued
  ASSERT_EQ(m->MmUsers(mm), 8) << "S10: the sharer is a user";
  ASSERT_EQ(m->CidmaskWeight(mm), 8) << "setup: per-task mode, every user owns an ID";
  const int64_t flips = m->Stats().mode_changes;
  ASSERT_TRUE(m->Fork(0, 8, mm, CpuMask::Full(p), now).ok());
  ASSERT_EQ(m->Stats().mode_changes, flips + 1) << "setup: the ninth user must flip to per-CPU";
  const auto v = Violations(*m, true);
  const std::string sharer = absl::StrCat("task ", kSharer, " owns ID");
  if (walk619) {
    EXPECT_TRUE(AnyMentions(v, sharer)) << "owner619_walk619 must miss the vfork sharer (I11 detected); got "
                                        << (v.empty() ? std::string("no violation") : v.front());
    return;
  }
  ASSERT_TRUE(v.empty()) << "S10 vfork fixup: " << v.front();
  // The sharer runs in per-CPU mode: it takes its CPU's ID, distinct (I1).
  now += kNsPerMs;
  m->ContextSwitch(6, kNoTask, kSharer, now);
  m->ContextSwitch(5, kNoTask, 5, now);
  EXPECT_GE(m->TaskCid(kSharer), 0);
  const auto w = Violations(*m, true);
  ASSERT_TRUE(w.empty()) << "S10 vfork sharer runs: " << w.front();
}

TEST(MmCidForkOwner619, S10_VforkSharerReachedByFixupWalk) { RunVforkFixup(false); }
TEST(MmCidForkOwner619, S10_VforkSharerMissedByWalk619_Detected) { RunVforkFixup(true); }

// ---------------------------------------------------------------------------
// S10 fork racing a fixup (forced interleaving).  Threads 0 and 1 of one mm
// run on CPUs 0 and 1 and fork children A = 20 and B = 21 concurrently; B's
// fork crosses max_cids (8 on an 8-CPU union) and runs the tasks->CPUs
// fixup while A's fork is stopped inside copy_process():
//   7.0:  A is visible but not yet a user (sched_mm_cid_fork() now runs in
//         sched_post_fork()); B's walk of the user list does not need it, A
//         joins after the flip and gets no task ID.  Start: 8 users.
//   6.19 (owner619_walk619): A is already a user with an ID (copy_mm()) but
//         not yet visible; B's walk cannot see it and A keeps a task-owned ID
//         in per-CPU mode -- the stall of "Prevent CID stalls due to
//         concurrent forks".  Start: 7 users (A's accounting is the 8th).
// Both orders end with A and B runnable; the test then runs everyone.
// ---------------------------------------------------------------------------
void RunForkRacingFixup(bool walk619) {
  const int p = 8;
  auto m = *MmCid::Create(p, Owner619(walk619));
  const MmId mm = *m->CreateMm(CpuMask::Full(p), 0);
  const int start_users = walk619 ? 7 : 8;
  for (int k = 0; k < start_users; ++k) {
    ASSERT_TRUE(m->Fork(k == 0 ? kNoTask : 0, k, mm, CpuMask::Full(p), 0).ok());
  }
  m->ContextSwitch(0, kNoTask, 0, 1);
  m->ContextSwitch(1, kNoTask, 1, 1);
  const TaskId kA = 20, kB = 21;
  const int64_t flips = m->Stats().mode_changes;
  Interleaver il;
  absl::Status fork_a, fork_b;
  il.Add("forkA", [&] { fork_a = m->Fork(0, kA, mm, CpuMask::Full(p), 2); });
  il.Add("forkB", [&] { fork_b = m->Fork(1, kB, mm, CpuMask::Full(p), 2); });
  const char* window =
      walk619 ? "mm_cid.owner619.fork.user_not_visible" : "mm_cid.owner619.fork.visible_not_user";
  const absl::Status run = il.Run({{"forkA", window}, {"forkB", ""}, {"forkA", ""}});
  ASSERT_TRUE(run.ok()) << run;
  ASSERT_TRUE(fork_a.ok()) << fork_a;
  ASSERT_TRUE(fork_b.ok()) << fork_b;
  ASSERT_EQ(m->MmUsers(mm), start_users + 2);
  ASSERT_EQ(m->Stats().mode_changes, flips + 1) << "setup: exactly B's fork flips to per-CPU";
  const auto v = Violations(*m, true);
  const std::string a_owns = absl::StrCat("task ", kA, " owns ID");
  if (walk619) {
    EXPECT_TRUE(AnyMentions(v, a_owns)) << "owner619_walk619: the invisible child must be missed (I11 detected); got "
                                        << (v.empty() ? std::string("no violation") : v.front());
    return;
  }
  ASSERT_TRUE(v.empty()) << "S10 fork racing fixup: " << v.front();
  // Everyone runs (10 users on 8 CPUs: two rounds), IDs distinct and < max_cids.
  Nanos now = 10;
  std::vector<TaskId> all;
  for (int k = 0; k < start_users; ++k) all.push_back(k);
  all.push_back(kA);
  all.push_back(kB);
  for (size_t i = 0; i < all.size(); ++i) {
    const int cpu = static_cast<int>(i % p);
    now += kNsPerMs;
    m->ContextSwitch(cpu, m->CurrentTask(cpu), all[i], now);
    const auto w = Violations(*m, false);
    ASSERT_TRUE(w.empty()) << "S10 after race, task " << all[i] << ": " << w.front();
    EXPECT_GE(m->TaskCid(all[i]), 0);
  }
  EXPECT_EQ(m->Stats().alloc_failures, 0) << "I14";
}

TEST(MmCidForkOwner619, S10_ForkRacingFixup_ChildNotYetUser) { RunForkRacingFixup(false); }
TEST(MmCidForkOwner619, S10_ForkRacingFixup_Walk619MissesInvisibleChild_Detected) { RunForkRacingFixup(true); }

TEST(MmCidForkConfig, NamesOfNewToggles) {
  MmCidConfig c;
  c.tick_kick = true;
  EXPECT_EQ(c.Name(), "lazy+alloc_v6_14+scan_possible+batch_full+work_taskwork+tick_kick");
  EXPECT_TRUE(c.TickKickEnabled());
  c.tick_kick = false;
  EXPECT_FALSE(c.TickKickEnabled());
  c.placement = Placement::kUnbound;
  EXPECT_TRUE(c.TickKickEnabled()) << "work_unbound carries the kick";
  c.tick_kick = true;
  EXPECT_EQ(c.Name(), "lazy+alloc_v6_14+scan_possible+batch_full+work_unbound") << "implied, not printed";
  EXPECT_EQ(Owner619(true).Name(), "owner619+owner619_walk619");
  EXPECT_FALSE(Owner619(true).TickKickEnabled());
  EXPECT_TRUE(*ParseTickKick("tick_kick"));
  EXPECT_FALSE(*ParseTickKick("no_tick_kick"));
  const auto bad = ParseTickKick("kick");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(std::string(bad.status().message()).find("kick"), std::string::npos);
}

}  // namespace
}  // namespace isolation::mm_cid
