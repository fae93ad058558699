// SPDX-License-Identifier: GPL-2.0-or-later
// -----------------------------------------------------------------------------
// testing/mm_cid.h
// -----------------------------------------------------------------------------
//
// The mm_cid conformance suites of the kit (`isolation::testing`): every
// invariant (I1-I15) and scenario (S1-S14) of docs/mm_cid.md ("What the
// conformance kit checks") that applies to any variant, on the direct API
// (seeded schedules, forced and exhaustively explored interleavings, the
// store-buffer model) and on the simulator and real threads.  A user runs
// them all on a variant with one line:
//
//   // my_scope_test.cc -- link isolation::testing and GTest::gtest_main
//   #include "isolation/testing/mm_cid.h"
//   static const bool registered = [] {
//     return isolation::mm_cid::RegisterScope({"scan_mine", "...", false, MakeMine}).ok();
//   }();
//   ISOLATION_MM_CID_CONFORMANCE(Mine, "lazy+scan_mine", "lazy+scan_mine+batch_8+work_rcu");
//
// The arguments are variant names (variant.h: ParseVariant) or a
// std::vector<MmCidVariant>; register outside strategies before
// InitGoogleTest (a namespace-scope initializer as above).  The macro
// instantiates five suites:
//   MmCidConformance        direct API, every variant;
//   MmCidScanConformance    direct API, variants with a compaction scan
//                           (DesignTraits::lazy_axes): I7, I8, I9, S5, S6, S12;
//   MmCidSimConformance     the simulator through MmCidHooks (hooks.h);
//   MmCidRaceConformance    every schedule of the racing scenarios at the
//                           granularity of the interleave points, under the
//                           store-buffer model (core/store_buffer.h);
//   MmCidStressConformance  S7 at P = 256 and bounded real-thread runs.
// ISOLATION_MM_CID_<SUITE>_CONFORMANCE(prefix, ...) instantiates one of them.
//
// Which expectation of a scenario applies is decided by the traits the
// variant declares (registry.h: DesignTraits, AllocatorTraits,
// PlacementTraits, TickPolicy::kicks_unpreempted), never by its name.  A
// declared property is checked both ways: a variant that declares it does
// not hold it (alloc_v6_13's `compacts = false`) must be seen not to.
//
// Each check is also a function returning the violations it found (empty =
// the property holds), so a test can assert that a negative control makes a
// check fail (test/mm_cid/mm_cid_negative_controls_test.cc does, for every
// registered control).  The checks are one list, named as their TEST_Ps
// (AllChecks, with each schedule's size), NotApplicable decides from the
// traits which apply, Run / RunAll run them with every expectation of the
// TEST_P (test/mutation/mm_cid_mutation_test.cc runs mutants through it):
//
//   EXPECT_THAT(isolation::testing::mm_cid::Run("S4_Compaction_I8", "lazy+mine"), IsEmpty());
//
// Every schedule driven on one thread asserts the ID bound at the moment of
// each allocation (AllocationBound, AllocationWatch), not only its later
// consequences.
//
// Kernel counterpart: none (the scenarios reproduce the kernel's selftests
// and the reports cited in the spec).
//
// Thread-safety contract: the check functions and suites may run in parallel
// processes; inside one process the store-buffer and interleaving checks
// must not overlap with another Interleaver (core/interleave.h: one at a
// time), which GoogleTest's sequential test execution guarantees.

#ifndef ISOLATION_TESTING_MM_CID_H_
#define ISOLATION_TESTING_MM_CID_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "isolation/mm_cid/mm_cid.h"
#include "isolation/mm_cid/registry.h"
#include "isolation/mm_cid/strategies.h"
#include "isolation/mm_cid/variant.h"
#include "isolation/testing/violations.h"

namespace isolation::testing::mm_cid {

using isolation::mm_cid::MmCid;
using isolation::mm_cid::MmCidVariant;
using isolation::mm_cid::MmId;
using isolation::mm_cid::TaskId;
using isolation::mm_cid::VariantTraits;

// What a check found wrong (empty = the property holds).
using Violations = ::isolation::testing::Violations;

// The scans a variant's placement asks for, run on the calling thread: the
// ScanRunner of direct driving (tests that call the entry points
// themselves).  Queued work runs at the next Housekeeping() whose time has
// reached it; periodic work every period while the mm has users.
class DirectScanRunner final : public isolation::mm_cid::ScanRunner {
 public:
  explicit DirectScanRunner(MmCid& m);
  // A new mm (CreateMm, Exec): the placement may arm periodic work.
  void MmCreated(MmId mm, Nanos now);
  void Tick(int cpu, TaskId task, Nanos now);
  void ReturnToUser(int cpu, TaskId task, Nanos now);
  // Housekeeping CPUs progress: runs every queued scan due by `now`.
  void Housekeeping(Nanos now);
  int64_t inline_scans() const { return inline_scans_; }
  // (mm, time) of every scan call that started a pass, in order.
  const std::vector<std::pair<MmId, Nanos>>& pass_starts() const { return pass_starts_; }

  void QueueWork(MmId mm, Nanos delay) override;
  void QueuePeriodicWork(MmId mm, Nanos period) override;
  void CallRcu(MmId mm) override;

 private:
  struct Item {
    MmId mm;
    Nanos due;
    Nanos period;  // 0: once
  };
  void RunScan(MmId mm, Nanos now);
  MmCid& m_;
  const isolation::mm_cid::PlacementStrategy* placement_;
  Nanos now_ = 0;  // latest time seen
  std::vector<Item> items_;
  int64_t inline_scans_ = 0;
  std::vector<std::pair<MmId, Nanos>> pass_starts_;
};

// MmCid::CheckAlways() plus, when `quiescent`, CheckQuiescent().
Violations AllViolations(const MmCid& m, bool quiescent);

// ---- ID bound at allocation ---------------------------------------------------
// The bound an ID allocated now must be below, from the traits the variant
// declares, for an mm of `users` users on a union of `allowed` CPUs whose
// lowest free ID before the event was `first_free` (MmCid::FirstFreeCid):
//   every variant                       P (I2);
//   AllocatorTraits::bounded_by_allowed `allowed` (I3);
//   IdPromise::kFirstFree               first_free + 1 (alloc_v6_4);
//   IdPromise::kMaxNrCid                max(min(users, allowed), first_free + 1)
//                                       (alloc_v6_14: max_nr_cid, or the fallback);
//   designs without lazy axes           DesignTraits::id_bound: min(users, allowed)
//                                       (kUsersAndAllowed) or max_cids =
//                                       min(opt + opt/4, P) (kMaxCids), or the
//                                       first free ID when none is free below.
int AllocationBound(const VariantTraits& t, int num_cpus, int users, int allowed, int first_free);

// Asserts the bound at the moment of each allocation: Before() snapshots the
// task's mm (allocations so far, lowest free ID, users, reserved IDs), After()
// -- once the event (a switch-in of `task`, a tick of it running) is done --
// checks the task's ID against AllocationBound if the instance allocated.
// Single-threaded driving only (every event a quiescent point).
class AllocationWatch {
 public:
  AllocationWatch(const MmCid& m, const VariantTraits& t) : m_(m), t_(t) {}
  void Before(TaskId task);
  // Appends a violation naming the ID, the bound and its inputs to `out`.
  void After(TaskId task, Violations& out);
  int64_t allocations() const { return allocations_; }  // allocations checked
  // ... of them, where the rare paths are reached: every ID below
  // min(users, allowed) was taken (the fallback); users had dropped to or
  // below an ID the mm handed out before (max_nr_cid must shrink, a high
  // recent ID must be refused); the mm's CPU union was narrower than P.
  int64_t at_full_bitmap() const { return at_full_bitmap_; }
  int64_t users_dropped() const { return users_dropped_; }
  int64_t narrow_union() const { return narrow_union_; }

 private:
  const MmCid& m_;
  const VariantTraits t_;
  TaskId task_ = -1;
  int64_t allocations_before_ = 0;
  int first_free_ = 0;
  int reserved_ = 0;
  int64_t allocations_ = 0;
  int64_t at_full_bitmap_ = 0;
  int64_t users_dropped_ = 0;
  int64_t narrow_union_ = 0;
  std::vector<int32_t> highest_;  // per mm: the highest ID allocated so far
};

// ---- direct API (MmCidConformance) ------------------------------------------
// I1-I6, I15 and S2's per-ID counter on a seeded random schedule (switch,
// migrate, tick + return to user, housekeeping scans, fork, exit, exec,
// affinity change), checked after every event; exec gives ID 0 (S10).
Violations CheckRandomSchedule(const MmCidVariant& v, int num_cpus, uint64_t seed, int steps);
// Two instances of `v` on one seeded random schedule, one switched through
// MmCid::ContextSwitch and one through MmCid::Switcher() (switcher.h): the
// observable state (IDs, current tasks, cid masks, LAZY flags, every
// statistic) is the same after every event, and the switcher's instance keeps
// I1-I6; `journaled` attaches CheckAlwaysIncremental's journal to it.
Violations CheckSwitcherMatchesContextSwitch(const MmCidVariant& v, int num_cpus, uint64_t seed,
                                             int steps, bool journaled);
Violations CheckSingleThread(const MmCidVariant& v);        // S1
Violations CheckRestrictedAffinity(const MmCidVariant& v);  // S3 (I3)
// S4: the leader's ID after each poll; the property: it reaches 0.
struct CompactionRun {
  int32_t leader_start = -1;
  int32_t leader_end = -1;
  int polls = 0;
  Violations invariants;
};
CompactionRun RunCompaction(const MmCidVariant& v, int n, int polls);
Violations CheckCompaction(const MmCidVariant& v);             // S4 / I8 (N = 8, 128)
Violations CheckExecAndRejectedFork(const MmCidVariant& v);    // S10 exec
Violations CheckFailedFork(const MmCidVariant& v);             // S10 failed fork
Violations CheckVforkSharer(const MmCidVariant& v);            // S10 vfork
Violations CheckVforkSharerAtModeFlip(const MmCidVariant& v);  // S10 vfork + fixup walk (I11)
// S13 on the direct API: a thread that never switches while its siblings exit.
struct NeverPreemptedRun {
  int32_t start_id = -1;
  int32_t id_end_of_busy = -1;
  Nanos changed_after_last_exit = -1;  // -1: never changed while busy
  int32_t id_after_schedin = -1;
  int64_t scans_while_busy = 0;
  int64_t kick_retakes = 0;
  Violations invariants;
};
NeverPreemptedRun RunNeverPreempted(const MmCidVariant& v);
Violations CheckNeverPreempted(const MmCidVariant& v);  // S13 (I4 at every tick)
Violations CheckFenceTargets(const MmCidVariant& v);    // S14
// The ID bound at allocation on the allocator's rare paths, on 16 CPUs in
// `waves` waves per seed: a fresh mm each (1 in 3 with a union of 4-12
// CPUs), users rising to 1/2-3/2 x the union spread over it, dropping to
// 1-3 with survivors switching in between the exits, rising again, exiting.
// AllocationBound at every allocation, CheckAlways after every event
// (incrementally), CheckQuiescent after every wave; users
// dropped and narrow unions (AllocationWatch's counts) reached at least once
// per two waves, >= 5 allocations per wave (designs with ids_at_fork: >= 1
// schedin allocation per wave, no reach counts; the full-bitmap fallback is counted,
// not required: this schedule reaches it about once per 40 waves).
Violations CheckAllocationRarePaths(const MmCidVariant& v, int seeds, int waves);

// ---- direct API, variants with a scan (MmCidScanConformance) ---------------
Violations CheckIdleReclaim(const MmCidVariant& v);  // I7
// I8: pinned tasks, no fork/exit after t0, each task switching out and in
// after every pass: the IDs are exactly {0 .. T-1} once two passes that
// start after t0 + 100 ms have completed.
struct ConvergenceRun {
  std::vector<int32_t> ids;  // at the bound
  int passes_after_t0 = 0;   // complete passes started after t0 + 100 ms
  Violations invariants;
};
ConvergenceRun RunConvergence(const MmCidVariant& v, int passes_after_t0);
Violations CheckConvergence(const MmCidVariant& v);
// I9 on one thread: pass starts of an mm >= 100 ms apart over a schedule
// driven through the placement; batch_N: <= N CPUs per loop per call, a call
// at cursor 0 inside the period refused, one at another position not.
Violations CheckRateLimit(const MmCidVariant& v);
// I9: exactly one scanner per period -- two scanners racing for the same
// period, every schedule of their interleave points (one pass start per
// schedule), and real threads: K threads scanning each period at once.
Violations CheckRacingScanners(const MmCidVariant& v);
Violations CheckConcurrentScanners(const MmCidVariant& v, int threads, int periods);
// S5: 16 tasks on 16 CPUs, 12 exit (shrink: IDs in [0, 4) after
// convergence), then 12 new tasks on the freed CPUs (regrow).
struct ShrinkRegrowRun {
  int32_t max_id_after_shrink = -1;
  int regrown = 0;              // CPUs whose recent ID was free at the regrow
  int regrown_with_recent = 0;  // ... and which got it back
  std::vector<int32_t> ids_after_regrow;
  Violations invariants;
};
ShrinkRegrowRun RunShrinkAndRegrow(const MmCidVariant& v);
Violations CheckShrink(const MmCidVariant& v);
Violations CheckRegrow(const MmCidVariant& v);
// S6: bursts of tasks pinned one per CPU, one at a time in a seeded order.
struct BurstRun {
  double reuse = 0;       // same ID as this CPU's previous burst
  int64_t llc_moves = 0;  // an ID's region touched from another LLC than last time
  int bursts_counted = 0;
  int distinct_ids = 0;
  Violations invariants;
};
BurstRun RunBursts(const MmCidVariant& v, int n, int cpus_per_llc, Nanos gap, int bursts,
                   uint64_t seed);
Violations CheckBursts(const MmCidVariant& v);
// S12 / I9: slot visits of a complete pass = 2 x the scope's size; <= 2N per call.
struct VisitsRun {
  int visits = 0;
  int calls = 0;
  int scope_size = 0;
  Violations invariants;
};
VisitsRun RunVisitsPerPass(const MmCidVariant& v, int num_cpus, int pinned_cpu);
Violations CheckVisitsPerPass(const MmCidVariant& v);

// ---- simulator (MmCidSimConformance) -----------------------------------------
Violations CheckSimRandomWorkload(const MmCidVariant& v, uint64_t seed);  // I1-I6 after every event
Violations CheckSimPlacement(const MmCidVariant& v);                      // I10
struct NeverPreemptedSimRun {
  int32_t start_id = -1;
  Nanos changed_after_last_exit = -1;
  int32_t id_at_change = -1;
  int32_t id_end_of_busy = -1;
  bool saw_lazy = false;
  int32_t id_after_schedin = -1;
  int64_t scans = 0;
  int64_t kick_retakes = 0;
  int64_t switches_during_busy = -1;
  Violations invariants;
};
NeverPreemptedSimRun RunNeverPreemptedSim(const MmCidVariant& v);
Violations CheckNeverPreemptedSim(const MmCidVariant& v);  // S13

// ---- every schedule (MmCidRaceConformance) -----------------------------------
// I4 / I1 / I5 / I6 under the store-buffer model, every schedule of:
Violations CheckScanVsSwitchSchedules(const MmCidVariant& v);  // a scan vs switches on a parked CPU
Violations CheckMigrateVsSwitchSchedules(
    const MmCidVariant& v);  // a migration vs a switch-in on its source
// The same with MmCid::Limits::force_fences = `force_fences`: the two above
// run the design in its default barrier mode (lazy: kMembarrier where the
// host has it, the membarrier modelled as draining every thread's buffer);
// true runs it in kFences.
Violations CheckScanVsSwitchSchedulesInMode(const MmCidVariant& v, bool force_fences);
Violations CheckMigrateVsSwitchSchedulesInMode(const MmCidVariant& v, bool force_fences);
// S8 / S9: a fork that crosses the per-CPU threshold vs a task that switches
// in, migrates and switches in again (I1, I11, I14).
Violations CheckModeFlipSchedules(const MmCidVariant& v);
// S10: two concurrent forks, one of which crosses the threshold (I5, I11, I14).
Violations CheckForkRaceSchedules(const MmCidVariant& v);

// ---- long and real-thread runs (MmCidStressConformance) ----------------------
// S7: P = 256, pools x threads = 8 x 8 and 32 x 32 on the simulator, I1, I2,
// I14 after every event (incremental CheckAlways), quiescent invariants at
// the end; modes (DesignTraits::ownership_modes) must flip both ways at
// 32 x 32.  Reports thread creations per simulated second and bitmap
// operations per context switch.
struct PoolChurnRun {
  int64_t threads_created = 0;
  Nanos simulated = 0;
  double creations_per_sim_second = 0;
  double bitmap_ops_per_switch = 0;
  int64_t mode_changes = 0;
  int64_t remote_lock_acquisitions = 0;
  Violations invariants;
};
PoolChurnRun RunThreadPoolChurn(const MmCidVariant& v, int pools, int threads, int rounds);
Violations CheckThreadPoolChurn(const MmCidVariant& v);
// S2 on real threads: two model CPUs, tasks of two mms on both CPUs at once,
// per-ID counters incremented with a plain load/store; no lost update, and
// MmCidHooks's own I1 check (real threads: at every switch hook) clean.
Violations CheckRealThreadCounters(const MmCidVariant& v);
// I1 under true concurrency: two CPUs switching tasks of one mm while a third
// thread scans continuously.
Violations CheckConcurrentSwitchAndScan(const MmCidVariant& v);

// ---- parameters -----------------------------------------------------------------
// Parameters of the suites: variant names.  Unparsable names are kept (the
// suite's SetUp then fails naming them).
std::vector<std::string> Params(const std::vector<MmCidVariant>& variants);
std::vector<std::string> Params(std::vector<std::string> names);
template <typename... Names>
std::vector<std::string> Params(const char* first, const Names&... rest) {
  return Params(std::vector<std::string>{std::string(first), std::string(rest)...});
}
// The variants among them with a compaction scan (DesignTraits::lazy_axes).
std::vector<std::string> KeepScanVariants(std::vector<std::string> names);
template <typename... Args>
std::vector<std::string> ScanParams(const Args&... args) {
  return KeepScanVariants(Params(args...));
}
// GoogleTest parameter name: the variant name with [^A-Za-z0-9] -> '_'.
std::string ParamName(const ::testing::TestParamInfo<std::string>& info);

// ---- the check list -----------------------------------------------------------
// Every check of the five suites, by the name of its TEST_P: what it asserts,
// the schedule sizes, and whether it applies to a variant (decided here, from
// the declared traits, never by name; the TEST_Ps skip with the reason).
struct Check {
  std::string name;   // the TEST_P name, e.g. "S4_Compaction_I8"
  std::string suite;  // "MmCidConformance", "MmCidScanConformance", "MmCidSimConformance",
                      // "MmCidRaceConformance", "MmCidStressConformance"
  std::string what;   // one line: the property
  std::string size;   // the schedules, e.g. "P=8: 5 seeds x 2000 steps; P=64: 1 x 2000"
};
// Every check, in suite order.
const std::vector<Check>& AllChecks();
// "" if check `name` applies to `variant`, else why not (e.g. "no compaction
// scan (DesignTraits::lazy_axes is false)").  Errors: an unknown check, an
// unparsable or undescribable variant.
absl::StatusOr<std::string> NotApplicable(std::string_view name, std::string_view variant);
// Runs check `name` on `variant` (whether or not it applies) with every
// expectation of its TEST_P, declared properties both ways; an unknown check
// or variant is one violation saying so.
Violations Run(std::string_view name, std::string_view variant);
// Every check that applies to `variant`: {check name, violations} of each
// check that reported any.
std::vector<std::pair<std::string, Violations>> RunAll(std::string_view variant);
// The body of every TEST_P: skip with the reason, or run and expect nothing.
void RunAsTest(std::string_view name, const std::string& variant);

// The suites' fixture: parses the parameter in SetUp (a failure there names it).
class MmCidSuiteBase : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override;
  const MmCidVariant& variant() const { return variant_; }
  const VariantTraits& traits() const { return traits_; }

 private:
  MmCidVariant variant_;
  VariantTraits traits_;
};
class MmCidConformance : public MmCidSuiteBase {};
class MmCidScanConformance : public MmCidSuiteBase {};
class MmCidSimConformance : public MmCidSuiteBase {};
class MmCidRaceConformance : public MmCidSuiteBase {};
class MmCidStressConformance : public MmCidSuiteBase {};

namespace internal {
// Referenced by the instantiation macros so that the archive member holding
// each suite's TEST_Ps is linked.
int MmCidConformanceAnchor();
int MmCidScanConformanceAnchor();
int MmCidSimConformanceAnchor();
int MmCidRaceConformanceAnchor();
int MmCidStressConformanceAnchor();
}  // namespace internal

}  // namespace isolation::testing::mm_cid

#define ISOLATION_MM_CID_SUITE_CONFORMANCE_(prefix, suite, params, ...)                            \
  using ::isolation::testing::mm_cid::suite;                                                       \
  INSTANTIATE_TEST_SUITE_P(prefix, suite,                                                          \
                           ::testing::ValuesIn(::isolation::testing::mm_cid::params(__VA_ARGS__)), \
                           ::isolation::testing::mm_cid::ParamName);                               \
  [[maybe_unused]] static const int isolation_mm_cid_anchor_##prefix##_##suite =                   \
      ::isolation::testing::mm_cid::internal::suite##Anchor()

#define ISOLATION_MM_CID_DIRECT_CONFORMANCE(prefix, ...) \
  ISOLATION_MM_CID_SUITE_CONFORMANCE_(prefix, MmCidConformance, Params, __VA_ARGS__)
#define ISOLATION_MM_CID_SCAN_CONFORMANCE(prefix, ...) \
  ISOLATION_MM_CID_SUITE_CONFORMANCE_(prefix, MmCidScanConformance, ScanParams, __VA_ARGS__)
#define ISOLATION_MM_CID_SIM_CONFORMANCE(prefix, ...) \
  ISOLATION_MM_CID_SUITE_CONFORMANCE_(prefix, MmCidSimConformance, Params, __VA_ARGS__)
#define ISOLATION_MM_CID_RACE_CONFORMANCE(prefix, ...) \
  ISOLATION_MM_CID_SUITE_CONFORMANCE_(prefix, MmCidRaceConformance, Params, __VA_ARGS__)
#define ISOLATION_MM_CID_STRESS_CONFORMANCE(prefix, ...) \
  ISOLATION_MM_CID_SUITE_CONFORMANCE_(prefix, MmCidStressConformance, Params, __VA_ARGS__)

// Every mm_cid suite for the variants given (names or a vector<MmCidVariant>).
#define ISOLATION_MM_CID_CONFORMANCE(prefix, ...)           \
  ISOLATION_MM_CID_DIRECT_CONFORMANCE(prefix, __VA_ARGS__); \
  ISOLATION_MM_CID_SCAN_CONFORMANCE(prefix, __VA_ARGS__);   \
  ISOLATION_MM_CID_SIM_CONFORMANCE(prefix, __VA_ARGS__);    \
  ISOLATION_MM_CID_RACE_CONFORMANCE(prefix, __VA_ARGS__);   \
  ISOLATION_MM_CID_STRESS_CONFORMANCE(prefix, __VA_ARGS__)

#endif  // ISOLATION_TESTING_MM_CID_H_
