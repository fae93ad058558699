// SPDX-License-Identifier: GPL-2.0-or-later
// owner619's S10 cases at its own interleave points and thresholds: a failed
// fork that had flipped the mode, the tasks->CPUs fixup reaching a vfork
// sharer, and a fork stopped in its visible/accounted window while another
// flips the mode -- each against its 6.19 predecessor (owner619_walk619, a
// negative control): the tests assert that the old walk's misses are
// detected.  (S10 for every variant -- failed fork, vfork, exec, the sharer
// at a mode flip, every schedule of two racing forks -- is the conformance
// kit's, include/isolation/testing/mm_cid.h.)

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "isolation/core/interleave.h"
#include "isolation/mm_cid/mm_cid.h"
#include "isolation/testing/status_matchers.h"
#include "isolation/testing/violations.h"

namespace isolation::mm_cid {
namespace {

std::vector<std::string> Violations(const MmCid& m, bool quiescent) {
  auto v = m.CheckAlways();
  if (quiescent) {
    auto q = m.CheckQuiescent();
    v.insert(v.end(), q.begin(), q.end());
  }
  return v;
}

bool AnyMentions(const std::vector<std::string>& v, const std::string& needle) {
  return std::any_of(v.begin(), v.end(),
                     [&](const std::string& s) { return s.find(needle) != std::string::npos; });
}

MmCidVariant Owner619OrWalk619(bool walk619) {
  MmCidVariant v;
  v.design = walk619 ? "owner619_walk619" : "owner619";
  return v;
}

// ---------------------------------------------------------------------------
// owner619: the failing fork is the one that crossed into per-CPU mode (the
// ninth user of an 8-CPU union: max_cids 8).  The rollback leaves the mode
// per-CPU (hysteresis: pcpu_thrs 4) with every invariant intact, and the
// eight running tasks keep distinct IDs below max_cids through a round of
// switches.
// ---------------------------------------------------------------------------
TEST(MmCidForkOwner619, S10_FailedForkAfterModeFlip) {
  const int p = 8;
  auto m = *MmCid::Create(p, Owner619OrWalk619(false));
  Nanos now = 1000;
  const MmId mm = *m->CreateMm(CpuMask::Full(p), now);
  for (int k = 0; k < 8; ++k)
    ISOLATION_ASSERT_OK(m->Fork(k == 0 ? kNoTask : 0, k, mm, CpuMask::Full(p), now));
  for (int k = 0; k < 8; ++k) m->ContextSwitch(k, kNoTask, k, now);
  const int64_t flips = m->Stats().mode_changes;
  ISOLATION_ASSERT_OK(m->Fork(0, 8, mm, CpuMask::Full(p), now));
  ASSERT_EQ(m->Stats().mode_changes, flips + 1) << "setup: the ninth user must flip to per-CPU";
  ISOLATION_ASSERT_OK(m->ForkFailed(8, now));
  EXPECT_EQ(m->MmUsers(mm), 8);
  {
    const auto v = Violations(*m, true);
    ISOLATION_ASSERT_NO_VIOLATIONS(v) << "S10 rollback after flip";
  }
  for (int round = 0; round < 3; ++round) {
    for (int k = 0; k < 8; ++k) {
      now += kNsPerMs;
      m->ContextSwitch(k, k, kNoTask, now);
      m->ContextSwitch(k, kNoTask, k, now);
    }
    const auto v = Violations(*m, true);
    ISOLATION_ASSERT_NO_VIOLATIONS(v) << "S10 round " << round;
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
  auto m = *MmCid::Create(p, Owner619OrWalk619(walk619));
  Nanos now = 1000;
  const MmId mm = *m->CreateMm(CpuMask::Full(p), now);
  const TaskId kSharer = 6;
  for (int k = 0; k < 8; ++k) {
    if (k == kSharer) {
      ISOLATION_ASSERT_OK(m->ForkVm(0, k, mm, CpuMask::Full(p), now));
    } else {
      ISOLATION_ASSERT_OK(m->Fork(k == 0 ? kNoTask : 0, k, mm, CpuMask::Full(p), now));
    }
  }
  for (int k = 0; k < 5; ++k) m->ContextSwitch(k, kNoTask, k, now);  // 5, 6, 7 queued
  ASSERT_EQ(m->MmUsers(mm), 8) << "S10: the sharer is a user";
  ASSERT_EQ(m->CidmaskWeight(mm), 8) << "setup: per-task mode, every user owns an ID";
  const int64_t flips = m->Stats().mode_changes;
  ISOLATION_ASSERT_OK(m->Fork(0, 8, mm, CpuMask::Full(p), now));
  ASSERT_EQ(m->Stats().mode_changes, flips + 1) << "setup: the ninth user must flip to per-CPU";
  const auto v = Violations(*m, true);
  const std::string sharer = absl::StrCat("task ", kSharer, " owns ID");
  if (walk619) {
    EXPECT_TRUE(AnyMentions(v, sharer))
        << "owner619_walk619 must miss the vfork sharer (I11 detected); got "
        << (v.empty() ? std::string("no violation") : v.front());
    return;
  }
  ISOLATION_ASSERT_NO_VIOLATIONS(v) << "S10 vfork fixup";
  // The sharer runs in per-CPU mode: it takes its CPU's ID, distinct (I1).
  now += kNsPerMs;
  m->ContextSwitch(6, kNoTask, kSharer, now);
  m->ContextSwitch(5, kNoTask, 5, now);
  EXPECT_GE(m->TaskCid(kSharer), 0);
  const auto w = Violations(*m, true);
  ISOLATION_ASSERT_NO_VIOLATIONS(w) << "S10 vfork sharer runs";
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
  auto m = *MmCid::Create(p, Owner619OrWalk619(walk619));
  const MmId mm = *m->CreateMm(CpuMask::Full(p), 0);
  const int start_users = walk619 ? 7 : 8;
  for (int k = 0; k < start_users; ++k) {
    ISOLATION_ASSERT_OK(m->Fork(k == 0 ? kNoTask : 0, k, mm, CpuMask::Full(p), 0));
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
  ISOLATION_ASSERT_OK(run);
  ISOLATION_ASSERT_OK(fork_a);
  ISOLATION_ASSERT_OK(fork_b);
  ASSERT_EQ(m->MmUsers(mm), start_users + 2);
  ASSERT_EQ(m->Stats().mode_changes, flips + 1) << "setup: exactly B's fork flips to per-CPU";
  const auto v = Violations(*m, true);
  const std::string a_owns = absl::StrCat("task ", kA, " owns ID");
  if (walk619) {
    EXPECT_TRUE(AnyMentions(v, a_owns))
        << "owner619_walk619: the invisible child must be missed (I11 detected); got "
        << (v.empty() ? std::string("no violation") : v.front());
    return;
  }
  ISOLATION_ASSERT_NO_VIOLATIONS(v) << "S10 fork racing fixup";
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
    ISOLATION_ASSERT_NO_VIOLATIONS(w) << "S10 after race, task " << all[i];
    EXPECT_GE(m->TaskCid(all[i]), 0);
  }
  EXPECT_EQ(m->Stats().alloc_failures, 0) << "I14";
}

TEST(MmCidForkOwner619, S10_ForkRacingFixup_ChildNotYetUser) { RunForkRacingFixup(false); }
TEST(MmCidForkOwner619, S10_ForkRacingFixup_Walk619MissesInvisibleChild_Detected) {
  RunForkRacingFixup(true);
}

}  // namespace
}  // namespace isolation::mm_cid
