// SPDX-License-Identifier: GPL-2.0-or-later
// The mm_cid kit's check list (testing/mm_cid.h: AllChecks, NotApplicable,
// Run, RunAll, RunAsTest): every TEST_P of the five suites by name, with its
// schedule sizes, the one place that decides from the declared traits which
// check applies, and each TEST_P's whole expectation (declared properties
// both ways) as a function returning violations.

#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "isolation/mm_cid/registry.h"
#include "isolation/testing/mm_cid.h"
#include "isolation/testing/status_matchers.h"
#include "isolation/testing/violations.h"
#include "mm_cid_internal.h"

namespace isolation::testing::mm_cid {

using isolation::mm_cid::kScanDelayNs;

namespace {

// Values a TEST_P records (RecordProperty) besides its verdict.
using Properties = std::vector<std::pair<std::string, int>>;
using RunFn = std::function<Violations(const MmCidVariant&, const VariantTraits&, Properties&)>;

struct Entry {
  Check check;
  RunFn run;
};

// A declared property both ways: declared, its violations; declared not to
// hold, a violation if it held.
Violations Declared(bool declared, const Violations& property, const std::string& what) {
  Violations out;
  if (declared) {
    for (const std::string& p : property) out.push_back(absl::StrCat(what, ": ", p));
  } else if (property.empty()) {
    out.push_back(absl::StrCat(what, ": the variant declares it does not hold, yet it held"));
  }
  return out;
}

void Append(Violations& out, const Violations& more) {
  out.insert(out.end(), more.begin(), more.end());
}

// S4's promise: IDs compact at the next schedin (no scan), or through the
// scans when the allocator compacts.
bool ClaimsCompaction(const VariantTraits& t) {
  return t.design.converges_at_schedin || (t.design.lazy_axes && t.allocator.compacts);
}

// A check function of the variant alone.
RunFn Plain(Violations (*f)(const MmCidVariant&)) {
  return [f](const MmCidVariant& v, const VariantTraits&, Properties&) { return f(v); };
}

constexpr const char* kDirect = "MmCidConformance";
constexpr const char* kScan = "MmCidScanConformance";
constexpr const char* kSim = "MmCidSimConformance";
constexpr const char* kRace = "MmCidRaceConformance";
constexpr const char* kStress = "MmCidStressConformance";

std::vector<Entry> MakeEntries() {
  std::vector<Entry> e;
  const std::string random_size =
      absl::StrCat("P=8: ", internal::kRandomSeedsP8, " seeds x ", internal::kRandomSteps,
                   " steps; P=64: 1 seed x ", internal::kRandomSteps,
                   " steps (ThreadSanitizer builds: 1 x 500 each)");
  // ---- MmCidConformance
  e.push_back({{"I1_I6_I15_RandomSchedules_S2Counters", kDirect,
                "I1-I6, I15 and S2's per-ID counters after every event of seeded random schedules; "
                "the ID bound at "
                "every allocation (AllocationBound)",
                random_size},
               [](const MmCidVariant& v, const VariantTraits&, Properties&) {
                 Violations out;
                 for (int p : {8, 64}) {
                   for (uint64_t seed = 1; seed <= (p == 8 ? internal::kRandomSeedsP8 : 1u);
                        ++seed) {
                     Append(out, CheckRandomSchedule(v, p, seed * 7919 + static_cast<uint64_t>(p),
                                                     internal::kRandomSteps));
                   }
                 }
                 return out;
               }});
  e.push_back({{"SwitcherMatchesContextSwitch", kDirect,
                "MmCid::Switcher() and the virtual ContextSwitch give the same state after every "
                "event; I1-I6 and "
                "the ID bound at allocation on the switcher's instance",
                absl::StrCat("P=8: ", internal::kRandomSeedsP8, " seeds x ", internal::kRandomSteps,
                             " steps, every second seed with the incremental check's journal")},
               [](const MmCidVariant& v, const VariantTraits&, Properties&) {
                 Violations out;
                 for (uint64_t seed = 1; seed <= internal::kRandomSeedsP8; ++seed) {
                   Append(out, CheckSwitcherMatchesContextSwitch(v, 8, seed * 104729,
                                                                 internal::kRandomSteps,
                                                                 /*journaled=*/seed % 2 == 0));
                 }
                 return out;
               }});
  e.push_back(
      {{"I2_I3_AllocationBound_RarePaths", kDirect,
        "the ID bound at every allocation on the allocator's rare paths (users dropped to or below "
        "IDs handed "
        "out before; a narrow CPU union), each reached >= once per 2 waves, >= 5 allocations per "
        "wave; I1-I6 after every event",
        absl::StrCat("P=16: ", internal::kRarePathSeeds, " instance x ", internal::kRarePathWaves,
                     " waves (a fresh mm each, 1 in 3 on 4-12 CPUs; users up to 1.5 x the union, "
                     "down to 1-3, "
                     "up again), ~27000 events and ~4000 allocations on the one instance for lazy "
                     "(ThreadSanitizer builds: 1 x 40)")},
       [](const MmCidVariant& v, const VariantTraits&, Properties&) {
         return CheckAllocationRarePaths(v, internal::kRarePathSeeds, internal::kRarePathWaves);
       }});
  e.push_back(
      {{"S1_SingleThread", kDirect, "one task: ID 0, still 0 after exec; the old mm's ID freed",
        "8 CPUs, 1 task, 1 exec"},
       Plain(CheckSingleThread)});
  e.push_back({{"S3_RestrictedAffinity_I3", kDirect,
                "an mm allowed 11 of 32 CPUs keeps its IDs below the design's bound; the ID bound "
                "at every allocation",
                "32 CPUs, 32 tasks on CPUs 10-20, 20000 steps"},
               Plain(CheckRestrictedAffinity)});
  e.push_back({{"S4_Compaction_I8", kDirect,
                "N pinned tasks started in reverse, all but the leader exit: the leader reaches ID "
                "0 (declared "
                "compaction, both ways)",
                "N = 8 and 128, up to 10 polls 500 ms apart (1 where IDs converge at schedin)"},
               [](const MmCidVariant& v, const VariantTraits& t, Properties&) {
                 Violations out;
                 for (int n : {8, 128}) {
                   const CompactionRun r =
                       RunCompaction(v, n, t.design.converges_at_schedin ? 1 : 10);
                   const std::string where = absl::StrCat("S4 N=", n);
                   for (const std::string& s : r.invariants)
                     out.push_back(absl::StrCat(where, ": ", s));
                   Violations property;
                   if (r.leader_end != 0) {
                     property.push_back(absl::StrCat("the leader holds ID ", r.leader_end,
                                                     " after ", r.polls, " polls"));
                   }
                   Append(out, Declared(ClaimsCompaction(t), property,
                                        absl::StrCat(where, ": the leader reaches ID 0")));
                 }
                 return out;
               }});
  e.push_back(
      {{"S10_ExecAndRejectedFork", kDirect,
        "exec gives a fresh mm with ID 0 and frees the old ID; rejected forks change nothing",
        "8 CPUs, 4 threads"},
       Plain(CheckExecAndRejectedFork)});
  e.push_back({{"S10_FailedForkRollsBack", kDirect,
                "a failed fork rolls back users and the child's ID", "8 CPUs, 4 threads + 1 child"},
               Plain(CheckFailedFork)});
  e.push_back({{"S10_VforkSharer", kDirect, "a CLONE_VM sharer is a user and holds a distinct ID",
                "8 CPUs, 3 threads + 1 sharer"},
               Plain(CheckVforkSharer)});
  e.push_back({{"S10_VforkSharerAtModeFlip_I11", kDirect,
                "a queued vfork sharer while the ninth user is forked: quiescent invariants (I11), "
                "distinct IDs",
                "8 CPUs, 9 users"},
               Plain(CheckVforkSharerAtModeFlip)});
  e.push_back({{"S13_NeverPreemptedThread_I4", kDirect,
                "a thread that never switches while its siblings exit: kicked re-take (declared "
                "kicks_unpreempted) or no change until its next schedin; I4 at every tick",
                "8 CPUs, 250 ticks of 4 ms"},
               Plain(CheckNeverPreempted)});
  e.push_back({{"S14_FenceEveryCpuOfTheMm", kDirect,
                "every switch-in is on a CPU of the mm's union; IDs do move between CPUs",
                "8 CPUs, 6 tasks, 4000 steps"},
               Plain(CheckFenceTargets)});
  // ---- MmCidScanConformance
  e.push_back({{"I7_IdleReclaim", kScan,
                "a CPU idle for the mm >= 100 ms loses its ID after a complete pass", "16 CPUs"},
               Plain(CheckIdleReclaim)});
  e.push_back(
      {{"I8_ConvergesWithinTwoPasses", kScan,
        "pinned tasks, no fork/exit after t0: IDs {0..3} after two passes started >= 100 ms after "
        "t0 "
        "(declared compacts, both ways)",
        "16 CPUs, 30 tasks, 26 exit, up to 10000 steps"},
       [](const MmCidVariant& v, const VariantTraits& t, Properties&) {
         const ConvergenceRun r = RunConvergence(v, 2);
         Violations out = r.invariants;
         if (r.passes_after_t0 != 2) {
           out.push_back(absl::StrCat("I8: ", r.passes_after_t0, " passes ran after t0, not 2"));
         }
         Violations property;
         if (r.ids != std::vector<int32_t>{0, 1, 2, 3})
           property.push_back("IDs not {0,1,2,3} after two passes");
         Append(out, Declared(t.allocator.compacts, property, "I8: convergence within two passes"));
         return out;
       }});
  e.push_back({{"I9_RateLimitAndCursor", kScan,
                "pass starts >= 100 ms apart over a placement-driven schedule; batch_N: <= N CPUs "
                "per loop per call, "
                "only a call at cursor 0 rate limited",
                "8 CPUs x 2 s of 1 ms ticks; 16 CPUs cursor walk"},
               Plain(CheckRateLimit)});
  e.push_back({{"I9_OneScannerPerPeriod_EverySchedule", kScan,
                "two scanners racing for one period: one pass start in every schedule of their "
                "interleave points",
                "every schedule (exhaustive)"},
               Plain(CheckRacingScanners)});
  e.push_back({{"I9_OneScannerPerPeriod_RealThreads", kScan,
                "K real threads scanning each period: one pass start", "4 threads x 40 periods"},
               [](const MmCidVariant& v, const VariantTraits&, Properties&) {
                 return CheckConcurrentScanners(v, 4, 40);
               }});
  e.push_back({{"S5_Shrink", kScan,
                "16 tasks, 12 exit: the survivors' IDs in [0, 4) (declared compacts, both ways)",
                "16 CPUs, 40 rounds"},
               [](const MmCidVariant& v, const VariantTraits& t, Properties& props) {
                 const ShrinkRegrowRun r = RunShrinkAndRegrow(v);
                 Violations out = r.invariants;
                 Violations property;
                 if (r.max_id_after_shrink >= 4)
                   property.push_back(absl::StrCat("highest ID ", r.max_id_after_shrink));
                 Append(out, Declared(t.allocator.compacts, property,
                                      "S5: IDs in [0, 4) after the shrink"));
                 props.emplace_back("max_id_after_shrink", r.max_id_after_shrink);
                 return out;
               }});
  e.push_back(
      {{"S5_Regrow", kScan,
        "12 new tasks on the freed CPUs: each gets its recent ID back (declared reuses_recent_cid)",
        "16 CPUs, 16 regrown"},
       [](const MmCidVariant& v, const VariantTraits& t, Properties& props) {
         const ShrinkRegrowRun r = RunShrinkAndRegrow(v);
         Violations out = r.invariants;
         if (r.regrown != 16)
           out.push_back(absl::StrCat("S5 regrow: ", r.regrown, " CPUs regrown, not 16"));
         props.emplace_back("regrow_reuse_pct",
                            r.regrown > 0 ? 100 * r.regrown_with_recent / r.regrown : 0);
         // A promise only where declared (without a hint, reuse is chance).
         if (t.allocator.reuses_recent_cid && r.regrown_with_recent != r.regrown) {
           out.push_back(absl::StrCat("S5 regrow: ", r.regrown_with_recent, " of ", r.regrown,
                                      " CPUs got their recent ID back after the sleep"));
         }
         return out;
       }});
  e.push_back(
      {{"S6_IntermittentBursts", kScan,
        "per-CPU ID reuse across bursts (declared reuses_recent_cid)", "300 bursts per shape"},
       Plain(CheckBursts)});
  e.push_back({{"S12_I9_VisitsPerPass", kScan,
                "slot visits of a complete pass = 2 x the scope's size; <= 2N per call",
                "128 CPUs, one task pinned to CPU 77"},
               Plain(CheckVisitsPerPass)});
  // ---- MmCidSimConformance
  e.push_back({{"I1_I6_RandomWorkload", kSim,
                "I1-I6 after every simulator event; the ID bound at every switch-in and tick that "
                "allocates",
                "3 seeds x 400 ms, 8 CPUs, 20 tasks of 3 mms, 30 affinity changes"},
               [](const MmCidVariant& v, const VariantTraits&, Properties&) {
                 Violations out;
                 for (uint64_t seed : {1u, 2u, 3u}) Append(out, CheckSimRandomWorkload(v, seed));
                 return out;
               }});
  e.push_back(
      {{"I10_Placement", kSim,
        "offloaded placements run no scan on an isolated CPU; runs_on_trigger_cpu placements do",
        "16 CPUs (14 isolated), 600 ms"},
       Plain(CheckSimPlacement)});
  e.push_back(
      {{"S13_NeverPreemptedThread", kSim,
        "S13 on an isolated CPU whose tick runs (declared kicks_unpreempted)", "8 CPUs, 1 s"},
       [](const MmCidVariant& v, const VariantTraits&, Properties& props) {
         const NeverPreemptedSimRun r = RunNeverPreemptedSim(v);
         if (r.changed_after_last_exit >= 0) {
           props.emplace_back("retake_ms_after_last_exit",
                              static_cast<int>(r.changed_after_last_exit / kNsPerMs));
         }
         return CheckNeverPreemptedSim(v);
       }});
  // ---- MmCidRaceConformance
  e.push_back({{"I4_ScanVsSwitch_EverySchedule_StoreBuffer", kRace,
                "a scan vs switches on a parked CPU: I4, I1, I5, I6 in every schedule under the "
                "store-buffer model",
                "every schedule (exhaustive), direct and via Switcher"},
               Plain(CheckScanVsSwitchSchedules)});
  e.push_back({{"I4_MigrationStealVsSwitch_EverySchedule_StoreBuffer", kRace,
                "a migration steal vs a switch-in on its source: I4, I1, I5, I6 in every schedule",
                "every schedule (exhaustive), direct and via Switcher"},
               Plain(CheckMigrateVsSwitchSchedules)});
  e.push_back({{"S8_S9_ModeFlipVsMigratingSchedin_EverySchedule_StoreBuffer", kRace,
                "a fork crossing the per-CPU threshold vs a migrating schedin: I1, I11, I14 in "
                "every schedule",
                "every schedule (exhaustive)"},
               Plain(CheckModeFlipSchedules)});
  e.push_back({{"S10_ForkVsFork_EverySchedule", kRace,
                "two concurrent forks, one crossing the threshold: I5, I11, I14 in every schedule",
                "every schedule (exhaustive), 8 CPUs"},
               Plain(CheckForkRaceSchedules)});
  // ---- MmCidStressConformance
  e.push_back(
      {{"S7_ThreadPoolChurn_P256", kStress,
        "thread-pool churn: I1, I2, I14 after every event, quiescent after every fork/exit; the ID "
        "bound at "
        "every allocating switch; modes flip both ways at 32 x 32 (declared ownership_modes)",
        "P=256, pools x threads = 8 x 8 and 32 x 32, 2 rounds"},
       [](const MmCidVariant& v, const VariantTraits& t, Properties& props) {
         Violations out;
         for (auto [pools, threads] : {std::pair{8, 8}, std::pair{32, 32}}) {
           const int rounds = 2;
           const PoolChurnRun r = RunThreadPoolChurn(v, pools, threads, rounds);
           const std::string shape = absl::StrCat(pools, "x", threads);
           for (const std::string& s : r.invariants)
             out.push_back(absl::StrCat("S7 ", shape, ": ", s));
           props.emplace_back("thread_creations_per_sim_s_" + shape,
                              static_cast<int>(r.creations_per_sim_second));
           props.emplace_back("bitmap_ops_per_1000_switches_" + shape,
                              static_cast<int>(r.bitmap_ops_per_switch * 1000));
           props.emplace_back("mode_changes_" + shape, static_cast<int>(r.mode_changes));
           if (t.design.ownership_modes && pools * threads > 256) {
             if (r.mode_changes < 2 * rounds) {
               out.push_back(absl::StrCat("S7 ", shape, ": ", r.mode_changes,
                                          " mode changes (both directions each round expected)"));
             }
             if (r.remote_lock_acquisitions <= 0) {
               out.push_back(absl::StrCat("S7 ", shape, ": no fixup took a remote rq lock"));
             }
           }
         }
         return out;
       }});
  e.push_back({{"S2_PerIdCounters_RealThreads", kStress,
                "per-ID counters with a plain load/store on two real threads lose no update; "
                "MmCidHooks' I1 clean",
                "2 model CPUs, 6 tasks of 2 mms, bounded real-thread run"},
               Plain(CheckRealThreadCounters)});
  e.push_back({{"I1_ConcurrentSwitchAndScan_RealThreads", kStress,
                "two CPUs switching tasks of one mm while a third thread scans: I1",
                "4 CPUs, 6 tasks, >= 300 scans"},
               Plain(CheckConcurrentSwitchAndScan)});
  return e;
}

const std::vector<Entry>& Entries() {
  static const auto* entries = new std::vector<Entry>(MakeEntries());
  return *entries;
}

const Entry* FindEntry(std::string_view name) {
  for (const Entry& e : Entries()) {
    if (e.check.name == name) return &e;
  }
  return nullptr;
}

// Which check applies to which traits: decided here only.
std::string NotApplicableReason(const Check& c, const VariantTraits& t) {
  if (c.suite == kScan && !t.design.lazy_axes) {
    return "no compaction scan (DesignTraits::lazy_axes is false): the scan suite's checks do not "
           "apply";
  }
  return "";
}

struct Described {
  MmCidVariant variant;
  VariantTraits traits;
};
absl::StatusOr<Described> Describe(std::string_view name) {
  absl::StatusOr<MmCidVariant> v = isolation::mm_cid::ParseVariant(name);
  if (!v.ok()) return v.status();
  absl::StatusOr<VariantTraits> t = isolation::mm_cid::DescribeVariant(*v);
  if (!t.ok()) return t.status();
  return Described{*v, *t};
}

Violations RunEntry(const Entry& e, std::string_view variant, Properties& props) {
  absl::StatusOr<Described> d = Describe(variant);
  if (!d.ok())
    return {absl::StrCat("variant '", std::string(variant), "': ", d.status().ToString())};
  return e.run(d->variant, d->traits, props);
}

}  // namespace

const std::vector<Check>& AllChecks() {
  static const auto* checks = [] {
    auto* out = new std::vector<Check>;
    for (const Entry& e : Entries()) out->push_back(e.check);
    return out;
  }();
  return *checks;
}

absl::StatusOr<std::string> NotApplicable(std::string_view name, std::string_view variant) {
  const Entry* e = FindEntry(name);
  if (e == nullptr)
    return absl::NotFoundError(absl::StrCat("mm_cid kit: unknown check '", std::string(name), "'"));
  absl::StatusOr<Described> d = Describe(variant);
  if (!d.ok()) return d.status();
  return NotApplicableReason(e->check, d->traits);
}

Violations Run(std::string_view name, std::string_view variant) {
  const Entry* e = FindEntry(name);
  if (e == nullptr) return {absl::StrCat("mm_cid kit: unknown check '", std::string(name), "'")};
  Properties ignored;
  return RunEntry(*e, variant, ignored);
}

std::vector<std::pair<std::string, Violations>> RunAll(std::string_view variant) {
  std::vector<std::pair<std::string, Violations>> out;
  absl::StatusOr<Described> d = Describe(variant);
  if (!d.ok()) {
    out.emplace_back("variant", Violations{absl::StrCat("variant '", std::string(variant),
                                                        "': ", d.status().ToString())});
    return out;
  }
  for (const Entry& e : Entries()) {
    if (!NotApplicableReason(e.check, d->traits).empty()) continue;
    Properties ignored;
    Violations found = e.run(d->variant, d->traits, ignored);
    if (!found.empty()) out.emplace_back(e.check.name, std::move(found));
  }
  return out;
}

void RunAsTest(std::string_view name, const std::string& variant) {
  const Entry* e = FindEntry(name);
  ASSERT_NE(e, nullptr) << "mm_cid kit: no check list entry named " << name;
  ISOLATION_ASSERT_OK_AND_ASSIGN(std::string reason, NotApplicable(name, variant));
  if (!reason.empty()) GTEST_SKIP() << reason;
  Properties props;
  ISOLATION_EXPECT_NO_VIOLATIONS(RunEntry(*e, variant, props))
      << e->check.name << " (" << e->check.size << ")";
  for (const auto& [key, value] : props) ::testing::Test::RecordProperty(key, value);
}

}  // namespace isolation::testing::mm_cid
