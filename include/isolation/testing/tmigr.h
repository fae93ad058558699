// SPDX-License-Identifier: GPL-2.0-or-later
// -----------------------------------------------------------------------------
// testing/tmigr.h
// -----------------------------------------------------------------------------
//
// The conformance suites of the timer-migration hierarchy, part of the kit
// `isolation::testing`: every invariant (I*) and scenario (S*) of the spec
// (docs/tmigr.md, "Invariants and scenarios") that holds for any variant,
// run on a variant named by the registries of tmigr/variants.h.  A variant
// is a participation and a hierarchy, written "participation[/hierarchy]"
// ("isolation", "v6.9/ghost_timer"; the hierarchy defaults to "mainline").
// Register yours (RegisterParticipation / RegisterHierarchy) and instantiate
// every suite with one macro:
//
//   ISOLATION_TMIGR_CONFORMANCE(PinOdd, "pin-odd");
//
// The suites (one TEST_P per check below; the name says the spec label):
//   TmigrScenarios  direct API: S1-S11, S14-S16, I12, the remote-expiry hand-over (its
//                   report is named "§3.8"), on a recording
//                   timer backend with fixed CPUs and expiries;
//   TmigrRaces      forced interleavings (core/interleave.h): S12, S13, S28,
//                   S17 over every schedule at the granularity of the
//                   interleave points; I2 (two servicers of one event) over
//                   the four schedules that park no actor holding a lock;
//                   the migrator re-check of tmigr_handle_remote_up()
//                   (report "§3.8 goto again");
//   TmigrIsolation  S18-S23 and the cpuset term of the isolation predicate;
//                   what a variant must do is decided by the properties its
//                   Participation declares (excludes_isolated_cpus,
//                   flushes_unisolation_first), never by its name;
//   TmigrStress     I1-I12 over seeded random schedules (12 seeds x 1500
//                   steps, 2 and 8 children per group; 40 seeds x 3000
//                   idle-heavy steps on 4 CPUs), S27 on real threads
//                   (bounded), the hierarchy under the simulator
//                   (TmigrHooks, S26 with nohz_full), and the S24 oslat seed.
// The store-buffer model (core/store_buffer.h) is not used: the hierarchy's
// loads and stores are not instrumented for it.
//
// Each check is also a plain function returning its violations (empty =
// pass), so a test can assert that a negative control is caught:
//   EXPECT_THAT(CheckS11GhostTimer({"v6.9", "ghost_timer"}), Not(IsEmpty()));
//
// Kernel counterpart: kernel/time/timer_migration.c (see tmigr/tmigr.h).
// Thread-safety: each check builds its own hierarchy; checks may run
// concurrently except the forced interleavings (one Interleaver at a time
// per process, core/interleave.h).

#ifndef ISOLATION_TESTING_TMIGR_H_
#define ISOLATION_TESTING_TMIGR_H_

#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "isolation/testing/violations.h"

namespace isolation::testing {

// A variant of the hierarchy under test: one name of each registry.
struct TmigrVariant {
  std::string participation = "v6.9";
  std::string hierarchy = "mainline";
  // "participation" when the hierarchy is mainline, else "participation/hierarchy".
  std::string ToString() const;
};
void PrintTo(const TmigrVariant& v, std::ostream* os);

// "participation[/hierarchy]" -> TmigrVariant.  Errors: empty parts, more
// than one '/', or a name no registry knows (the message lists the names).
absl::StatusOr<TmigrVariant> ParseTmigrVariant(std::string_view spec);
// The same without checking the registries (an unknown name then fails each
// check with the registry's message): what the macros use, since a
// variant registered from a static initialiser may not exist yet when the
// macro's argument is evaluated.
TmigrVariant TmigrVariantFromSpec(std::string_view spec);
// A composed variant is a negative control if either part is one (a
// participation over a negative-control hierarchy breaks what that hierarchy
// breaks); RegisteredTmigrVariants() never lists one.  Errors: an unknown name.
absl::StatusOr<bool> IsTmigrNegativeControl(const TmigrVariant& variant);
// Every participation of the registry that is not a negative control, with
// the mainline hierarchy (the built-ins and whatever is registered by then).
std::vector<TmigrVariant> RegisteredTmigrVariants();
// A GoogleTest parameter name: the spec with [^A-Za-z0-9] as '_'.
std::string TmigrParamName(const ::testing::TestParamInfo<TmigrVariant>& info);

// The properties a variant declares (its Participation).  Errors: unknown name.
struct TmigrTraits {
  bool excludes_isolated_cpus = false;
  bool flushes_unisolation_first = false;
};
absl::StatusOr<TmigrTraits> TraitsOf(const TmigrVariant& variant);

// ---- the checks -------------------------------------------------------------
using TmigrCheckFn = std::vector<std::string> (*)(const TmigrVariant&);
struct TmigrCheck {
  const char* name;  // the TEST_P name, e.g. "S11_GhostTimer"
  TmigrCheckFn fn;
  bool slow;  // seconds rather than milliseconds
};
// Every check of every suite, in suite order.
const std::vector<TmigrCheck>& TmigrChecks();

// TmigrScenarios
std::vector<std::string> CheckS1Trees(const TmigrVariant& v);
std::vector<std::string> CheckS2GrowingTop(const TmigrVariant& v);
std::vector<std::string> CheckS3NumaMismatch(const TmigrVariant& v);
std::vector<std::string> CheckS4FirstActivation(const TmigrVariant& v);
std::vector<std::string> CheckS5HandOver(const TmigrVariant& v);
std::vector<std::string> CheckS6LocalTimerFirst(const TmigrVariant& v);
std::vector<std::string> CheckS7S8LastCpuIdlesAndIdlePuller(const TmigrVariant& v);
std::vector<std::string> CheckS9ActivePull(const TmigrVariant& v);
std::vector<std::string> CheckS10SameExpiryOtherCpu(const TmigrVariant& v);
std::vector<std::string> CheckS11GhostTimer(const TmigrVariant& v);
std::vector<std::string> CheckS14QuickCheck(const TmigrVariant& v);
std::vector<std::string> CheckS15SingleLevelEarlyReturn(const TmigrVariant& v);
std::vector<std::string> CheckS16OfflineLastActive(const TmigrVariant& v);
std::vector<std::string> CheckRemoteExpiryHandsNoGlobalBehindLocal(const TmigrVariant& v);
std::vector<std::string> CheckI5LastIdleCpuWakesForTheFirstTimer(const TmigrVariant& v);
// TmigrRaces
std::vector<std::string> CheckS12RaceR1AllSchedules(const TmigrVariant& v);
std::vector<std::string> CheckS13RaceR2AllSchedules(const TmigrVariant& v);
std::vector<std::string> CheckS28RaceR4AllSchedules(const TmigrVariant& v);
std::vector<std::string> CheckS17HotplugVsIdleAllSchedules(const TmigrVariant& v);
std::vector<std::string> CheckI2TwoServicersExpireOnce(const TmigrVariant& v);
std::vector<std::string> CheckHandleRemoteStopsWhenChildBecameMigrator(const TmigrVariant& v);
// TmigrIsolation
std::vector<std::string> CheckS18BootIsolation(const TmigrVariant& v);
std::vector<std::string> CheckS19NohzFullStaysAvailable(const TmigrVariant& v);
std::vector<std::string> CheckS20TickCpuStays(const TmigrVariant& v);
std::vector<std::string> CheckS21CpusetChange(const TmigrVariant& v);
std::vector<std::string> CheckS21BootIsolatedStayOut(const TmigrVariant& v);
std::vector<std::string> CheckS22OfflineOnlineIsolated(const TmigrVariant& v);
std::vector<std::string> CheckS22CpusetIsolatedStaysOutOnHotplug(const TmigrVariant& v);
std::vector<std::string> CheckS23HousekeepingRule(const TmigrVariant& v);
// TmigrStress
std::vector<std::string> CheckRandomSchedulesCpg2(const TmigrVariant& v);
std::vector<std::string> CheckRandomSchedulesCpg8(const TmigrVariant& v);
// 4 CPUs, mostly idle, 40 seeds x 3000 steps: the last-idler and idle-CPU
// new-timer paths tens of thousands of times.
std::vector<std::string> CheckRandomSchedulesIdleHeavy(const TmigrVariant& v);
std::vector<std::string> CheckS27RealThreads(const TmigrVariant& v);
std::vector<std::string> CheckSimulatorHousekeepingTimers(const TmigrVariant& v);
std::vector<std::string> CheckS26IsolatedTimersPulledByHousekeeping(const TmigrVariant& v);
std::vector<std::string> CheckS24OslatSeed(const TmigrVariant& v);

// ---- the list of checks (the model is testing/idle_select.h) ----------------
// Every TEST_P of the four suites by its name, with its schedule size and
// when it applies.  Every check applies to every variant: what it expects of
// the isolation (excludes_isolated_cpus, flushes_unisolation_first) it reads
// from the variant's traits.
//
//   EXPECT_THAT(tmigr_conformance::Run("S11_GhostTimer", "v6.9/ghost_timer"), Not(IsEmpty()));
namespace tmigr_conformance {
using Violations = ::isolation::testing::Violations;
struct Check {
  std::string name;          // the TEST_P name, e.g. "S11_GhostTimer"
  std::string suite;         // "TmigrScenarios", "TmigrRaces", "TmigrIsolation", "TmigrStress"
  std::string what;          // one line: the property
  std::string size;          // the schedule size, e.g. "12 seeds x 1500 steps (20 CPUs)"
  std::string applies_when;  // "always", and which traits shape the expectations
  bool slow = false;         // seconds rather than milliseconds
};
// Every check, in suite order (the order of TmigrChecks()).
const std::vector<Check>& AllChecks();
// "" if check `name` applies to `variant` ("participation[/hierarchy]"), else
// why not.  Errors: an unknown check (NotFound) or variant (ParseTmigrVariant's).
absl::StatusOr<std::string> NotApplicable(std::string_view name, std::string_view variant);
// Runs check `name` on `variant` whether or not it applies; an unknown check
// or variant is one violation saying so.
Violations Run(std::string_view name, std::string_view variant);
// Every applicable check: {check name, violations} for each that reported any.
std::vector<std::pair<std::string, Violations>> RunAll(std::string_view variant);
// Body of every TEST_P: the check named by the running test, skipped with the
// reason if it does not apply, else run and expected clean.
void RunAsTest(const TmigrVariant& variant);
}  // namespace tmigr_conformance

// The S21 event log of a variant: the work items of the two exclusions
// ("set N" / "clear N" as queued, "flush" at each flush), as the check sees
// them.  For tests that tell exclude orders apart.
std::vector<std::string> S21ExclusionLog(const TmigrVariant& v);
// The order check of S21 on a log: with `flushes_unisolation_first`, every
// "set" queued by an exclusion is flushed before its first "clear".
std::vector<std::string> CheckS21Order(const std::vector<std::string>& log,
                                       bool flushes_unisolation_first);

// ---- the suites ------------------------------------------------------------
class TmigrScenarios : public ::testing::TestWithParam<TmigrVariant> {};
class TmigrRaces : public ::testing::TestWithParam<TmigrVariant> {};
class TmigrIsolation : public ::testing::TestWithParam<TmigrVariant> {};
class TmigrStress : public ::testing::TestWithParam<TmigrVariant> {};

// Referenced by the macros so that the archive members holding the suites
// are linked.
int TmigrConformanceAnchor();

}  // namespace isolation::testing

// Instantiates every tmigr suite for the variants of a GoogleTest generator
// (e.g. ::testing::ValuesIn(isolation::testing::RegisteredTmigrVariants())).
#define ISOLATION_TMIGR_CONFORMANCE_VALUES(prefix, generator)                                    \
  static const int prefix##_isolation_tmigr_anchor [[maybe_unused]] =                            \
      ::isolation::testing::TmigrConformanceAnchor();                                            \
  using ::isolation::testing::TmigrScenarios;                                                    \
  using ::isolation::testing::TmigrRaces;                                                        \
  using ::isolation::testing::TmigrIsolation;                                                    \
  using ::isolation::testing::TmigrStress;                                                       \
  INSTANTIATE_TEST_SUITE_P(prefix, TmigrScenarios, generator,                                    \
                           ::isolation::testing::TmigrParamName);                                \
  INSTANTIATE_TEST_SUITE_P(prefix, TmigrRaces, generator, ::isolation::testing::TmigrParamName); \
  INSTANTIATE_TEST_SUITE_P(prefix, TmigrIsolation, generator,                                    \
                           ::isolation::testing::TmigrParamName);                                \
  INSTANTIATE_TEST_SUITE_P(prefix, TmigrStress, generator, ::isolation::testing::TmigrParamName)

// Instantiates every tmigr suite for one variant, "participation[/hierarchy]".
#define ISOLATION_TMIGR_CONFORMANCE(prefix, spec) \
  ISOLATION_TMIGR_CONFORMANCE_VALUES(             \
      prefix, ::testing::Values(::isolation::testing::TmigrVariantFromSpec(spec)))

#endif  // ISOLATION_TESTING_TMIGR_H_
