// SPDX-License-Identifier: GPL-2.0-or-later
// MmCid::CheckAlwaysIncremental() -- what MmCidHooks checks after every
// simulator event -- returns exactly what the full CheckAlways() returns, at
// every point, for every design:
//   - random simulator workloads (forks, exits, migrations, affinity
//     changes, scans in every placement) for every correct configuration and
//     every negative control, compared after every hook event;
//   - the negative controls that do violate CheckAlways() invariants, under
//     the store-buffer model, in every schedule at the granularity of the
//     interleave points: lazy_no_dekker_fences (I4 / I1 from a remote clear
//     or a migration steal: a write by another CPU than the victim's) and
//     owner619_split_mode (I14); the incremental check must report each
//     violation, identically, and forget it once the state is repaired.
// Throughout, the engine's audit (always_check.h) re-evaluates everything
// after each incremental check: no part may differ from what the engine
// remembers, i.e. every design notes every write of checked state, also
// where no violation would show a missing note.

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "isolation/core/interleave.h"
#include "isolation/core/isolation_config.h"
#include "isolation/core/store_buffer.h"
#include "isolation/core/topology.h"
#include "isolation/mm_cid/hooks.h"
#include "isolation/mm_cid/mm_cid.h"
#include "isolation/runtime/sim.h"
#include "isolation/testing/status_matchers.h"
#include "isolation/testing/violations.h"
#include "mm_cid/always_check.h"
#include "isolation/mm_cid/registry.h"
#include "isolation/testing/churn.h"
#include "isolation/testing/mm_cid.h"

namespace isolation::mm_cid {
namespace {

std::string Join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += x + "; ";
  return s;
}

// Turns the engine's audit on for a scope; Mismatches() counts since then.
class ScopedAudit {
 public:
  ScopedAudit() : start_(internal::IncrementalCheckAuditMismatches()) {
    internal::SetIncrementalCheckAudit(true);
  }
  ~ScopedAudit() { internal::SetIncrementalCheckAudit(false); }
  int64_t Mismatches() const { return internal::IncrementalCheckAuditMismatches() - start_; }

 private:
  int64_t start_;
};

// After every simulator event: incremental == full.  Added after the
// MmCidHooks, so it sees the state each event left.
class CompareChecks final : public Hooks {
 public:
  explicit CompareChecks(MmCid& m) : m_(m) {}
  void Compare(const char* where) {
    ++compared_;
    std::vector<std::string> inc = m_.CheckAlwaysIncremental();
    std::vector<std::string> full = m_.CheckAlways();
    if (!full.empty()) ++violating_;
    if (inc != full && mismatches_++ == 0) {
      first_mismatch_ =
          std::string(where) + ": incremental {" + Join(inc) + "} full {" + Join(full) + "}";
    }
  }
  void OnTick(CpuContext&, TaskId) override { Compare("tick"); }
  void OnIdleEnter(int, Nanos) override { Compare("idle_enter"); }
  void OnIdleExit(int, Nanos) override { Compare("idle_exit"); }
  void OnContextSwitch(int, TaskId, TaskId, Nanos) override { Compare("switch"); }
  void OnReturnToUser(CpuContext&, TaskId) override { Compare("rtu"); }
  void OnTaskFork(TaskId, TaskId, int, Nanos) override { Compare("fork"); }
  void OnTaskExit(int, TaskId, Nanos) override { Compare("exit"); }
  void OnMigrate(TaskId, int, int, Nanos) override { Compare("migrate"); }
  void OnAffinityChange(TaskId, const CpuMask&, Nanos) override { Compare("affinity"); }

  int64_t compared_ = 0;
  int64_t violating_ = 0;
  int64_t mismatches_ = 0;
  std::string first_mismatch_;

 private:
  MmCid& m_;
};

// From the registries: every combination of correct strategies, one variant
// per negative control, and the tick kick on a placement that does not
// imply it.
std::vector<std::string> VariantsWithNegativeControls() {
  std::vector<MmCidVariant> v = AllVariants();
  for (const MmCidVariant& c : NegativeControlVariants()) v.push_back(c);
  MmCidVariant kick;
  kick.lazy.tick = "tick_kick";
  v.push_back(kick);
  return ::isolation::testing::mm_cid::Params(v);
}

class IncrementalCheckSimTest : public ::testing::TestWithParam<std::string> {};

// 16 CPUs (half isolated, so task work runs on isolated CPUs and offloaded
// scans on housekeeping ones), tasks of five shared mms and single-task
// mms, random run/sleep/yield bodies with exits, late spawns (forks into
// live mms) and random affinity changes (migrations).
TEST_P(IncrementalCheckSimTest, RandomWorkload_SameResultAfterEveryEvent) {
  constexpr int kP = 16;
  int64_t compared = 0;
  ScopedAudit audit;
  for (uint64_t seed : {1u, 2u}) {
    ISOLATION_ASSERT_OK_AND_ASSIGN(auto topo, Topology::FromSynthetic("core:16 pu:1"));
    ISOLATION_ASSERT_OK_AND_ASSIGN(auto iso, IsolationConfig::FromFlags(topo, "2-7,10-15", ""));
    SimOptions so;
    so.seed = seed;
    so.newidle_balance = true;
    ISOLATION_ASSERT_OK_AND_ASSIGN(auto sim_or, Simulator::Create(topo, iso, so));
    Simulator& sim = *sim_or;
    auto m = *MmCid::Create(kP, std::string_view(GetParam()));
    MmCidHooks::Options ho;
    ho.check_invariants = false;  // CompareChecks does it
    MmCidHooks hooks(*m, ho);
    CompareChecks compare(*m);
    sim.AddHooks(&hooks);
    sim.AddHooks(&compare);
    auto spawn = [&sim](int i, int cpu) {
      TaskSpec t;
      t.name = absl::StrCat("t", i);
      t.cpu = cpu;
      t.group = i % 7 < 5 ? i % 7 : 100 + i;
      const int life = 40 + (i * 13) % 90;
      t.body = testing::ChurnBody(life, {.choices = 5,
                                         .max_sleep = 3 * kNsPerMs,
                                         .min_run = 50 * kNsPerUs,
                                         .run_spread = 4 * kNsPerMs});
      return sim.Spawn(std::move(t));
    };
    std::vector<TaskId> ids;
    for (int i = 0; i < 40; ++i) {
      ISOLATION_ASSERT_OK_AND_ASSIGN(auto id, spawn(i, i % kP));
      ids.push_back(id);
    }
    std::mt19937_64 rng(seed);
    for (int k = 0; k < 40; ++k) {
      const Nanos at = static_cast<Nanos>(k) * 7 * kNsPerMs + 1;
      if (k % 3 == 0) {
        sim.At(at, [&spawn, k] { (void)spawn(1000 + k, k % kP); });
        continue;
      }
      const TaskId t = ids[rng() % ids.size()];
      CpuMask mask(kP);
      for (int j = 0; j < 3; ++j) mask.Set(static_cast<int>(rng() % kP));
      sim.At(at, [&sim, t, mask] { (void)sim.SetAffinity(t, mask); });
    }
    ISOLATION_ASSERT_OK(sim.RunFor(300 * kNsPerMs));
    EXPECT_EQ(compare.mismatches_, 0) << compare.first_mismatch_;
    compared += compare.compared_;
    EXPECT_EQ(hooks.errors(), 0);
  }
  EXPECT_GT(compared, 10000);
  EXPECT_EQ(audit.Mismatches(), 0) << "a write of checked state was not noted";
}

INSTANTIATE_TEST_SUITE_P(AllDesigns, IncrementalCheckSimTest,
                         ::testing::ValuesIn(VariantsWithNegativeControls()),
                         ::isolation::testing::mm_cid::ParamName);

// ---------------------------------------------------------------------------
// Negative controls under the store-buffer model, every schedule.
// ---------------------------------------------------------------------------

constexpr Nanos kT = kNsPerSec;

struct Explored {
  int schedules = 0;
  int violating = 0;  // schedules whose end state violates CheckAlways()
  int mismatches = 0;
  int repaired_mismatches = 0;
  std::string first;
};

void Record(Explored& r, const std::vector<std::string>& inc, const std::vector<std::string>& full,
            bool repaired, const std::vector<std::string>& log) {
  if (inc == full) return;
  ++(repaired ? r.repaired_mismatches : r.mismatches);
  if (r.first.empty()) {
    r.first = std::string(repaired ? "after repair: " : "") + "incremental {" + Join(inc) +
              "} full {" + Join(full) + "} schedule " + Join(log);
  }
}

// The lazy races of mm_cid_weak_test.cc on CPU 1's parked ID 0 (4 CPUs, one
// mm, tasks 0-2; task 0 left ID 0 in CPU 1's slot): a scan against task 1
// switching in (kClear), or task 0 migrating 1 -> 3 and running there against
// task 1 switching in (kSteal).  The incremental check is enabled after the
// set-up, so it sees the race only through the changes it is told about.
// After the run, every task switches out: the violations must go away in
// both checks.
enum class Race { kClear, kSteal };

Explored ExploreLazy(const std::string& allocator, bool no_fences, Race race) {
  Explored r;
  StoreBufferModel sb;
  std::unique_ptr<MmCid> m;
  MmId mm = kNoMm;
  auto n = Interleaver::Explore(
      [&](Interleaver& il) {
        MmCidVariant v;
        v.design = no_fences ? "lazy_no_dekker_fences" : "lazy";
        v.lazy.allocator = allocator;
        m = *MmCid::Create(4, v, MmCid::Limits{8, 2});
        mm = *m->CreateMm(CpuMask::Full(4), 0);
        for (TaskId t = 0; t < 3; ++t)
          ISOLATION_EXPECT_OK(m->Fork(t == 0 ? kNoTask : 0, t, mm, CpuMask::Full(4), 0));
        m->ContextSwitch(1, kNoTask, 0, 1);
        m->ContextSwitch(1, 0, kNoTask, 2);
        m->Scan(mm, 3);  // initialises mm_cid_next_scan only
        sb.DrainAll();
        ISOLATION_EXPECT_NO_VIOLATIONS(m->CheckAlwaysIncremental());  // enables tracking
        il.Add("switch", [&] { m->ContextSwitch(1, kNoTask, 1, kT); });
        if (race == Race::kClear) {
          il.Add("scan", [&] { m->Scan(mm, 2 * kT); });
        } else {
          il.Add("migrate", [&] {
            m->Migrate(0, 1, 3, kT);
            m->ContextSwitch(3, kNoTask, 0, kT);
          });
        }
      },
      [&](const std::vector<std::string>& log) {
        sb.DrainAll();
        const auto full = m->CheckAlways();
        r.violating += full.empty() ? 0 : 1;
        Record(r, m->CheckAlwaysIncremental(), full, false, log);
        for (int cpu = 0; cpu < 4; ++cpu) {
          if (const TaskId t = m->CurrentTask(cpu); t != kNoTask)
            m->ContextSwitch(cpu, t, kNoTask, 3 * kT);
        }
        sb.DrainAll();
        Record(r, m->CheckAlwaysIncremental(), m->CheckAlways(), true, log);
      });
  ISOLATION_EXPECT_OK(n);
  r.schedules = n.ok() ? *n : 0;
  return r;
}

TEST(IncrementalCheck, LazyNoDekkerFences_EverySchedule_CaughtIdentically) {
  ScopedAudit audit;
  for (const std::string& a : AllocatorRegistry().Names()) {
    for (Race race : {Race::kClear, Race::kSteal}) {
      const Explored r = ExploreLazy(a, /*no_fences=*/true, race);
      const std::string what = a + (race == Race::kClear ? " clear" : " steal");
      EXPECT_GT(r.schedules, 10) << what;
      EXPECT_GT(r.violating, 0) << what
                                << ": the negative control must violate I1/I4 in some schedule";
      EXPECT_EQ(r.mismatches, 0) << what << ": " << r.first;
      EXPECT_EQ(r.repaired_mismatches, 0) << what << ": " << r.first;
    }
  }
  EXPECT_EQ(audit.Mismatches(), 0);
}

TEST(IncrementalCheck, LazyWithFences_EverySchedule_CleanInBoth) {
  for (const std::string& a : AllocatorRegistry().Names()) {
    for (Race race : {Race::kClear, Race::kSteal}) {
      const Explored r = ExploreLazy(a, /*no_fences=*/false, race);
      EXPECT_EQ(r.violating, 0) << a;
      EXPECT_EQ(r.mismatches + r.repaired_mismatches, 0) << r.first;
    }
  }
}

// S9 of mm_cid_weak_test.cc: owner619's mode transition (a fifth fork on
// P = 4 flips the mm to per-CPU) against task 3 switching in on CPU 1, out,
// migrating to CPU 2 and switching in there.  owner619_split_mode exhausts
// the ID space in some schedules (I14).
Explored ExploreOwner619(bool split) {
  Explored r;
  StoreBufferModel sb;
  std::unique_ptr<MmCid> m;
  MmId mm = kNoMm;
  auto n = Interleaver::Explore(
      [&](Interleaver& il) {
        MmCidVariant v;
        v.design = split ? "owner619_split_mode" : "owner619";
        m = *MmCid::Create(4, v, MmCid::Limits{8, 2});
        mm = *m->CreateMm(CpuMask::Full(4), 0);
        for (TaskId t = 0; t < 4; ++t)
          ISOLATION_EXPECT_OK(m->Fork(t == 0 ? kNoTask : 0, t, mm, CpuMask::Full(4), 0));
        m->ContextSwitch(0, kNoTask, 0, 1);
        sb.DrainAll();
        ISOLATION_EXPECT_NO_VIOLATIONS(m->CheckAlwaysIncremental());
        il.Add("fork", [&] { ISOLATION_EXPECT_OK(m->Fork(0, 4, mm, CpuMask::Full(4), 2)); });
        il.Add("x", [&] {
          m->ContextSwitch(1, kNoTask, 3, 3);
          ISOLATION_INTERLEAVE_POINT("incremental.s9.x.ran_on_cpu1");
          m->ContextSwitch(1, 3, kNoTask, 4);
          m->Migrate(3, 1, 2, 5);
          ISOLATION_INTERLEAVE_POINT("incremental.s9.x.migrated");
          m->ContextSwitch(2, kNoTask, 3, 6);
        });
      },
      [&](const std::vector<std::string>& log) {
        sb.DrainAll();
        const auto full = m->CheckAlways();
        r.violating += full.empty() ? 0 : 1;
        Record(r, m->CheckAlwaysIncremental(), full, false, log);
      });
  ISOLATION_EXPECT_OK(n);
  r.schedules = n.ok() ? *n : 0;
  return r;
}

TEST(IncrementalCheck, Owner619SplitMode_EverySchedule_CaughtIdentically) {
  ScopedAudit audit;
  const Explored split = ExploreOwner619(true);
  EXPECT_GT(split.schedules, 5);
  EXPECT_GT(split.violating, 0) << "owner619_split_mode must violate I14 in some schedule";
  EXPECT_EQ(split.mismatches, 0) << split.first;
  const Explored fixed = ExploreOwner619(false);
  EXPECT_EQ(fixed.violating, 0);
  EXPECT_EQ(fixed.mismatches, 0) << fixed.first;
  EXPECT_EQ(audit.Mismatches(), 0);
}

}  // namespace
}  // namespace isolation::mm_cid
