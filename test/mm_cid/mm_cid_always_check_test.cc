// SPDX-License-Identifier: GPL-2.0-or-later
// The incremental CheckAlways() engine (lib/mm_cid/always_check.h) on a
// model state the test mutates at random, including the changes a design
// makes to *other* CPUs' inputs (a bitmap bit freed by a scan, a running
// task's ID rewritten by a fixup) that are reported only with NoteId /
// NoteTask, never with NoteCpu of the victim: after every change the
// engine must agree with the full pass over the same parts, violation or
// not, for I1 duplicates (also three holders, a task current on two CPUs,
// IDs >= P and unknown mms), per-CPU, per-task, per-mm and global findings.

#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "mm_cid/always_check.h"

namespace isolation::mm_cid::internal {
namespace {

constexpr int kCpus = 6;
constexpr int kTasks = 10;
constexpr int kMms = 3;

// A design reduced to what its checks read.
struct ModelState final : public AlwaysInvariants {
  std::vector<TaskId> curr = std::vector<TaskId>(kCpus, kNoTask);
  std::vector<MmId> mm = std::vector<MmId>(kTasks, 0);
  std::vector<int32_t> id = std::vector<int32_t>(kTasks, -1);
  std::vector<bool> active = std::vector<bool>(kTasks, false);
  std::vector<std::set<int>> bits = std::vector<std::set<int>>(kMms);
  std::vector<bool> mm_bad = std::vector<bool>(kMms, false);
  bool global_bad = false;
  int task_bound = 0;

  CpuCheck CheckCpu(int c, Findings& before, Findings& after) const override {
    CpuCheck r;
    const TaskId t = curr[static_cast<size_t>(c)];
    r.task = t;
    if (t == kNoTask || !active[static_cast<size_t>(t)]) return r;
    const int32_t k = id[static_cast<size_t>(t)];
    const MmId m = mm[static_cast<size_t>(t)];
    if (k < 0) {
      before.Add([&] { return absl::StrCat("I14 cpu ", c); });
      return r;
    }
    if (k >= kCpus) before.Add([&] { return absl::StrCat("I2 cpu ", c); });
    r.mm = m;
    r.id = k;
    r.unique = true;
    const bool bit = m >= 0 && m < kMms && bits[static_cast<size_t>(m)].count(k) > 0;
    if (!bit) after.Add([&] { return absl::StrCat("I4 cpu ", c); });
    return r;
  }
  int TaskBound() const override { return task_bound; }
  void CheckTask(TaskId t, Findings& f) const override {
    if (!active[static_cast<size_t>(t)] && id[static_cast<size_t>(t)] >= 0) {
      f.Add([&] { return absl::StrCat("I15 task ", t); });
    }
  }
  int MmBound() const override { return kMms; }
  void CheckMm(MmId m, Findings& f) const override {
    if (mm_bad[static_cast<size_t>(m)]) f.Add([&] { return absl::StrCat("mm ", m); });
  }
  void CheckGlobal(Findings& f) const override {
    if (global_bad) f.Add([] { return std::string("global"); });
  }
};

// One random change with exactly the notes a design would make for it.
void Mutate(std::mt19937_64& rng, ModelState& s, IncrementalAlwaysCheck& check) {
  const auto pick = [&rng](int n) { return static_cast<int>(rng() % static_cast<uint64_t>(n)); };
  switch (pick(8)) {
    case 0:
    case 1: {  // a context switch on c (may put a task on a second CPU)
      const int c = pick(kCpus);
      s.curr[static_cast<size_t>(c)] = pick(4) == 0 ? kNoTask : pick(kTasks);
      check.NoteCpu(c);
      break;
    }
    case 2:
    case 3: {  // a task's ID rewritten (by its own CPU or a remote fixup)
      const TaskId t = pick(kTasks);
      const int r = pick(10);
      s.id[static_cast<size_t>(t)] = r == 0 ? -1 : (r == 1 ? kCpus + pick(3) : pick(3));
      s.task_bound = std::max(s.task_bound, t + 1);
      check.NoteTask(t);
      break;
    }
    case 4: {  // activity / mm of a task (fork, exit, exec); mm may be bogus
      const TaskId t = pick(kTasks);
      s.active[static_cast<size_t>(t)] = pick(3) != 0;
      if (pick(4) == 0) s.mm[static_cast<size_t>(t)] = pick(6) == 0 ? kNoMm : pick(kMms);
      s.task_bound = std::max(s.task_bound, t + 1);
      check.NoteTask(t);
      break;
    }
    case 5:
    case 6: {  // a bitmap bit set or freed, by anyone
      const MmId m = pick(kMms);
      const int k = pick(4);
      auto& b = s.bits[static_cast<size_t>(m)];
      if (!b.erase(k)) b.insert(k);
      check.NoteId(m, k);
      break;
    }
    case 7: {
      if (pick(2) == 0) {
        const MmId m = pick(kMms);
        s.mm_bad[static_cast<size_t>(m)] = pick(3) == 0;
        check.NoteMm(m);
      } else {
        s.global_bad = pick(4) == 0;  // read at every check, no note
      }
      break;
    }
  }
}

TEST(AlwaysCheck, RandomChanges_IncrementalAgreesWithFullPass) {
  SetIncrementalCheckAudit(true);
  const int64_t audit_before = IncrementalCheckAuditMismatches();
  int64_t violated = 0;
  int64_t duplicate_states = 0;
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    std::mt19937_64 rng(seed);
    ModelState s;
    IncrementalAlwaysCheck check(kCpus, kTasks, kMms);
    for (int step = 0; step < 2000; ++step) {
      // Several changes between two checks, like a simulator event.
      const int changes = 1 + static_cast<int>(rng() % 3);
      for (int i = 0; i < changes; ++i) Mutate(rng, s, check);
      const std::vector<std::string> full = CheckAlwaysFull(s, kCpus);
      const bool any = check.AnyViolation(s);
      ASSERT_EQ(any, !full.empty()) << "seed " << seed << " step " << step << ": full pass found {"
                                    << (full.empty() ? std::string() : full.front()) << " ...}";
      violated += any ? 1 : 0;
      for (const auto& v : full) duplicate_states += v.rfind("I1:", 0) == 0 ? 1 : 0;
    }
  }
  // Both outcomes occur, and I1 duplicates are among them.
  EXPECT_GT(violated, 1000);
  EXPECT_LT(violated, 40 * 2000);
  EXPECT_GT(duplicate_states, 100);
  EXPECT_EQ(IncrementalCheckAuditMismatches() - audit_before, 0)
      << "the engine remembers a stale evaluation";
  SetIncrementalCheckAudit(false);
}

// A remote free of a running task's ID, noted only as (mm, ID): found; the
// repair (bit set again) is found too.
TEST(AlwaysCheck, BitFreedRemotely_FoundThroughOwnerTable) {
  ModelState s;
  IncrementalAlwaysCheck check(kCpus, kTasks, kMms);
  s.task_bound = 2;
  s.active[0] = s.active[1] = true;
  s.id[0] = 0;
  s.id[1] = 1;
  s.bits[0] = {0, 1};
  s.curr[2] = 0;
  s.curr[4] = 1;
  EXPECT_FALSE(check.AnyViolation(s));  // first call: full evaluation
  s.bits[0].erase(1);
  check.NoteId(0, 1);
  EXPECT_TRUE(check.AnyViolation(s)) << "CPU 4 runs task 1 with ID 1, whose bit was freed";
  s.bits[0].insert(1);
  check.NoteId(0, 1);
  EXPECT_FALSE(check.AnyViolation(s));
  // A fixup rewrites task 0's ID to task 1's: an I1 duplicate, noted only
  // for the task.
  s.id[0] = 1;
  check.NoteTask(0);
  EXPECT_TRUE(check.AnyViolation(s));
  s.id[0] = 0;
  check.NoteTask(0);
  EXPECT_FALSE(check.AnyViolation(s));
}

}  // namespace
}  // namespace isolation::mm_cid::internal
