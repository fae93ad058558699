// SPDX-License-Identifier: GPL-2.0-or-later
// -----------------------------------------------------------------------------
// testing/vmstat.h
// -----------------------------------------------------------------------------
//
// The vmstat conformance suites of the kit (`isolation::testing`): every
// invariant (I1-I11) and scenario (S2-S17) of docs/vmstat.md ("The spec the
// kit checks") that applies to any variant, as value-parameterized GoogleTest
// suites over a variant name.  A variant is a registered fold policy
// (vmstat/fold_policy.h), optionally over another slot representation than
// its default: "B", "A1:s32-atomic".  To run them all on a policy of yours:
//
//   #include "isolation/testing/vmstat.h"
//   // ... RegisterFoldPolicy({"B.half", ...}) before main (or in a
//   // testing::Environment), then:
//   ISOLATION_VMSTAT_CONFORMANCE(BHalf, "B.half");
//
// and link isolation::testing and GTest::gtest_main.  Three suites are
// instantiated: VmstatApiConformance (the direct API: fixed vectors, seeded
// random schedules over every entry point, forced interleavings with the
// Interleaver), VmstatSimConformance (the deterministic simulator through
// VmstatHooks) and VmstatRealConformance (pinned real threads, bounded to a
// fraction of a second each; no timing assertion anywhere).
//
// What a variant must satisfy beyond the invariants is what its fold policy
// promises (FoldPolicyTraits: shepherd work scope, return-to-user folds,
// dirty-gated quiet_vmstat, folding kernel-bound CPUs): a check that applies
// to some variants only is decided by those declared properties, never by a
// name, and a test not applicable to the variant is skipped with the reason.
//
// Each check is also a plain function returning its violations (empty: it
// passed), so a test can show that a negative control fails it
// (test/vmstat/vmstat_negative_control_test.cc does, for C-plain).
//
// Kernel counterpart: none (tests of a model of mm/vmstat.c).
// Thread-safety: the checks create their own counters and drivers; run them
// from one thread at a time (the Interleaver is process-wide).

#ifndef ISOLATION_TESTING_VMSTAT_H_
#define ISOLATION_TESTING_VMSTAT_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "isolation/testing/violations.h"
#include "isolation/vmstat/vmstat.h"

namespace isolation::testing {

// A variant under test: "policy" or "policy:slot".
struct VmstatVariant {
  std::string fold_policy;
  std::string slot;  // empty: the policy's default
  // Errors: an empty name, or more than one ':'.  The names are checked by
  // Vmstat::Create, not here.
  static absl::StatusOr<VmstatVariant> Parse(std::string_view text);
  std::string ToString() const;
};

// `base` with the variant's two axes filled in, then Vmstat::Create.
absl::StatusOr<std::unique_ptr<vmstat::Vmstat>> MakeVmstat(std::string_view variant,
                                                           vmstat::VmstatConfig base);
// The traits of a variant's fold policy (Create's errors).
absl::StatusOr<vmstat::FoldPolicyTraits> VmstatPolicyTraits(std::string_view variant);
// A variant is a negative control if its fold policy is one or its slot
// (named, or the policy's default) is one: "C:s32-plain" breaks what the slot
// breaks.  The default lists (FoldPolicyRegistry().Names()) hold none.
// Errors: an unparsable variant or an unknown name.
absl::StatusOr<bool> IsVmstatNegativeControl(std::string_view variant);
// GoogleTest-safe form of a variant name: "B.local" -> "B_local".
std::string VmstatParamName(std::string_view variant);

// Why a check does not apply to `variant` ("" if it does, or if the variant
// cannot be created).  Names of the checks below without the "CheckVmstat"
// prefix (older spelling; vmstat_conformance::NotApplicable takes the
// TEST_P names).
std::string VmstatNotApplicable(std::string_view check, std::string_view variant);

// ---- the checks: each returns its Violations (testing/violations.h), named by spec label

// ---- the list of checks -------------------------------------------------------------
// Every TEST_P of the three suites, by its name: what it checks, its
// schedule size, and when it applies (decided from FoldPolicyTraits).
//
//   for (const auto& c : vmstat_conformance::AllChecks()) ...
//   EXPECT_THAT(vmstat_conformance::Run("S11_QuietGate", "C-plain"), IsEmpty());
namespace vmstat_conformance {
struct Check {
  std::string name;   // the TEST_P name, e.g. "S8_ReturnToUserHookChain"
  std::string suite;  // "VmstatApiConformance", "VmstatSimConformance", "VmstatRealConformance"
  std::string what;   // one line: the property
  std::string size;   // the schedule size, e.g. "40 seeds x 3000 steps (1-8 CPUs)"
  std::string applies_when;  // "always" or the FoldPolicyTraits field it needs
};
// Every check, in suite order.
const std::vector<Check>& AllChecks();
// "" if check `name` applies to `variant`, else why not (from the fold
// policy's traits).  Errors: an unknown check (NotFound) or a variant that
// cannot be created (Create's error).
absl::StatusOr<std::string> NotApplicable(std::string_view name, std::string_view variant);
// Runs check `name` on `variant` (whether or not it applies) and returns its
// violations; an unknown check is one violation saying so.
Violations Run(std::string_view name, std::string_view variant);
// Runs every check that applies to `variant`: {check name, violations} for
// each check that reported any (a variant that cannot be created reports
// that under every check).
std::vector<std::pair<std::string, Violations>> RunAll(std::string_view variant);
// Inside a TEST_P: the check's name (the test's name without "/param").
std::string CurrentCheckName();
}  // namespace vmstat_conformance

// Direct API.
Violations CheckVmstatThresholds(std::string_view variant);        // S1 per CPU, I11
Violations CheckVmstatOverstep(std::string_view variant);          // S2, overstep knob
Violations CheckVmstatModPath(std::string_view variant);           // S3
Violations CheckVmstatFoldCadence(std::string_view variant);       // I5, overstep knob
Violations CheckVmstatThresholdDrop(std::string_view variant);     // S4, I3
Violations CheckVmstatDriftDemo(std::string_view variant);         // S5, I4
Violations CheckVmstatRefresh(std::string_view variant);           // I6
Violations CheckVmstatHotplug(std::string_view variant);           // I10
Violations CheckVmstatCustomerStall(std::string_view variant);     // S10
Violations CheckVmstatQuietGate(std::string_view variant);         // S11 (quiet_folds_dirty)
Violations CheckVmstatNeedUpdateFilter(std::string_view variant);  // knob (folds_remotely)
// Seeded random schedules over every entry point (writers, folds, the
// shepherd with random tick states, queued and armed work run later,
// quiet_vmstat, return to user, hotplug, pressure): I1 after every step, I3
// after every update, I4, I6, I8 and I9 as promised, I10; at the end every
// queued item is run and no pending bit may be left without one.
Violations CheckVmstatRandomSchedules(std::string_view variant, int seeds = 40, int steps = 3000);
// The same on 2-4 CPUs (odd ones isolated and nohz_full) without hotplug or pressure, dense in
// shepherd passes (20%), returns to user (20%), quiet_vmstat and queued work (10% each): I8 and I9
// are asserted at tens of thousands of decisions, I1 after every step (every fold).
Violations CheckVmstatDenseRandomSchedules(std::string_view variant, int seeds = 10,
                                           int steps = 8000);
// Forced interleavings (every schedule at the granularity of the
// mechanism's interleave points, Interleaver::Explore) with an observer
// checking I2 between any two steps: a writer against a remote fold
// (I7; folds_remotely), and the owner's quiet_vmstat / return to user
// against a shepherd pass (I1, I9: no pending bit stranded, work still
// queued afterwards).
Violations CheckVmstatRemoteFoldInterleavings(std::string_view variant);
Violations CheckVmstatOwnerShepherdInterleavings(std::string_view variant);
// The inline writer front end (Vmstat::Writer): two counters of the variant
// driven by the same seeded schedule (updates, folds, the shepherd, return to
// user, quiet_vmstat, pressure, hotplug), the updates of one through
// Vmstat::Mod/Inc/Dec and of the other through per-CPU writers made once at
// the start (every other update through WithSlotForm's VmstatSlotWriter); every observable (slots,
// shared and global counters, dirty, pending, threshold folds, local work arms) must agree after
// every step, and I1 holds through the writer.  The forced interleavings above and the real-thread
// checks below run writer scenarios too.
Violations CheckVmstatWriterLockstep(std::string_view variant, int seeds = 24, int steps = 2000);

// Simulator (8 CPUs, 1-7 isolated and nohz_full, P = 10 ms).
Violations CheckVmstatRtInit(std::string_view variant);             // S7
Violations CheckVmstatIdleEntry(std::string_view variant);          // S9
Violations CheckVmstatInterruptDirtying(std::string_view variant);  // S12
Violations CheckVmstatKernelBound(std::string_view variant);        // S13
Violations CheckVmstatStatRefresh(std::string_view variant);        // S14
Violations CheckVmstatSimHotplug(std::string_view variant);         // S15, I10

// S17: a simulated hour (P = 1 s) of random syscall and interrupt dirtying
// on isolated CPUs: fold executions per CPU class and the residual drift
// distribution, sampled every second.
struct VmstatNoiseCensus {
  struct Class {
    int64_t work_runs = 0;        // vmstat_update executed on these CPUs
    int64_t shepherd_queued = 0;  // ... of which the shepherd queued
    int64_t quiet_folds = 0;
    int64_t return_to_user_folds = 0;
    int64_t remote_folds = 0;     // folded from the housekeeping shepherd
    int64_t threshold_folds = 0;  // writers crossing a threshold
  };
  Class isolated, housekeeping;
  // |global - true| summed over every item, pages, one sample per second.
  std::vector<int64_t> drift_samples;
  // Largest |differential| over the isolated CPUs at each sample.
  std::vector<int64_t> isolated_residue_samples;
  int64_t drift_bound = 0;         // I4: sum of all CPUs' thresholds
  int64_t conservation_error = 0;  // I1 at the end
  Nanos simulated = 0;
  // "p50 a p90 b p99 c max d" of a sample vector.
  static std::string Percentiles(std::vector<int64_t> samples);
};
absl::StatusOr<VmstatNoiseCensus> RunVmstatNoiseCensus(std::string_view variant,
                                                       Nanos duration = 3600 * kNsPerSec,
                                                       uint64_t seed = 7);
// S17 (I1, I4, I8 and the promised folds); `census` receives the figures.
Violations CheckVmstatNoiseCensus(std::string_view variant, VmstatNoiseCensus* census = nullptr);

// Real threads (bounded).
Violations CheckVmstatStressConservation(std::string_view variant);     // S6, I1
Violations CheckVmstatRemoteFoldRealThreads(std::string_view variant);  // I7, I2 (folds_remotely)
// The same two, every update through the CPUs' VmstatWriters.
Violations CheckVmstatStressConservationThroughWriter(std::string_view variant);     // S6, I1
Violations CheckVmstatRemoteFoldRealThreadsThroughWriter(std::string_view variant);  // I7, I2
Violations CheckVmstatRealDriver(
    std::string_view variant);  // S6/S7 on RealThreadDriver: I1, I8, I10
// S8: Tomlin's mlock/munlock loop on real threads: the hook chain does the
// work the policy promises per iteration (a fold per dirtying syscall where
// return to user folds, none where it does not, nothing on a clean CPU),
// and its cost is measured in ns and cycles (reported, not asserted).
struct VmstatHookChainCost {
  double ns_per_syscall = 0;
  double cycles_per_syscall = 0;  // 0 where no cycle counter is available
  int64_t syscalls = 0;
  int64_t return_to_user_folds = 0;
  int64_t clean_hook_folds = 0;  // folds by the hook on a clean CPU (must be 0)
};
absl::StatusOr<VmstatHookChainCost> MeasureVmstatHookChain(std::string_view variant,
                                                           int iterations = 20000);
Violations CheckVmstatHookChain(std::string_view variant);  // S8

// ---- the suites ---------------------------------------------------------------------------
class VmstatApiConformance : public ::testing::TestWithParam<std::string> {};
class VmstatSimConformance : public ::testing::TestWithParam<std::string> {};
class VmstatRealConformance : public ::testing::TestWithParam<std::string> {};
// Defined in each suite's object file; the macros reference them so that a
// static link keeps the suites.
int VmstatApiConformanceAnchor();
int VmstatSimConformanceAnchor();
int VmstatRealConformanceAnchor();

struct VmstatParamNamer {
  std::string operator()(const ::testing::TestParamInfo<std::string>& info) const {
    return VmstatParamName(info.param);
  }
};

}  // namespace isolation::testing

// Every vmstat suite for the variants of a GoogleTest generator of strings,
// e.g. ::testing::ValuesIn(isolation::vmstat::FoldPolicyRegistry().Names()).
// Use at namespace scope outside namespace isolation::testing (the aliases
// make the suites' names visible there).
#define ISOLATION_VMSTAT_CONFORMANCE_IN(prefix, generator)                         \
  using VmstatApiConformance = ::isolation::testing::VmstatApiConformance;         \
  using VmstatSimConformance = ::isolation::testing::VmstatSimConformance;         \
  using VmstatRealConformance = ::isolation::testing::VmstatRealConformance;       \
  INSTANTIATE_TEST_SUITE_P(prefix, VmstatApiConformance, generator,                \
                           ::isolation::testing::VmstatParamNamer());              \
  INSTANTIATE_TEST_SUITE_P(prefix, VmstatSimConformance, generator,                \
                           ::isolation::testing::VmstatParamNamer());              \
  INSTANTIATE_TEST_SUITE_P(prefix, VmstatRealConformance, generator,               \
                           ::isolation::testing::VmstatParamNamer());              \
  [[maybe_unused]] static const int isolation_vmstat_conformance_anchor_##prefix = \
      ::isolation::testing::VmstatApiConformanceAnchor() +                         \
      ::isolation::testing::VmstatSimConformanceAnchor() +                         \
      ::isolation::testing::VmstatRealConformanceAnchor()

// Every vmstat suite for one variant ("B.half", "A1:s32-atomic").
#define ISOLATION_VMSTAT_CONFORMANCE(prefix, variant) \
  ISOLATION_VMSTAT_CONFORMANCE_IN(prefix, ::testing::Values(std::string(variant)))

#endif  // ISOLATION_TESTING_VMSTAT_H_
