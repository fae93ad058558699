// SPDX-License-Identifier: GPL-2.0-or-later
// -----------------------------------------------------------------------------
// testing/idle_select.h
// -----------------------------------------------------------------------------
//
// The idle_select conformance suites of the kit (`isolation::testing`): every
// invariant and scenario of docs/idle_select.md ("Invariants and scenarios")
// that applies to any selector, as value-parameterized GoogleTest suites whose
// parameter is a registered selector name.  Instantiate them for your
// selector with one macro, at namespace scope of any test file linked with
// isolation::testing:
//
//   ISOLATION_IDLE_SELECT_CONFORMANCE(MyHint, "llc_last_idle_hint");
//
// Three suites: IdleSelectConformance (the direct API: seeded random
// schedules over fixed seeds, forced scenarios), IdleSelectRaceConformance
// (forced interleavings with the Interleaver, the store-buffer handshake, real
// threads racing for one claim) and IdleSelectSimConformance (the run-queue
// harness on the deterministic simulator, and bounded real threads).  Which
// checks apply is decided by what the selector declares (SelectorTraits,
// MaxScanProbes: selector.h), never by its name; a check that does not apply
// is reported as skipped with the reason.
//
// Every check is also a function returning its violations, so that a test can
// show a broken selector fails it (the library's negative control
// "V1-trusting" fails I4_HintOnly; test/idle_select/negative_control_test.cc):
//
//   EXPECT_THAT(idle_select_conformance::Run("I4_HintOnly", "my_broken_copy"),
//               Not(IsEmpty()));
//
// Kernel counterpart: none (the checks state the kernel's invariants).
// Thread-safety: run the checks from one thread at a time (several start
// their own threads; the interleaving checks hold the process-wide
// Interleaver and StoreBufferModel).

#ifndef ISOLATION_TESTING_IDLE_SELECT_H_
#define ISOLATION_TESTING_IDLE_SELECT_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "isolation/idle_select/idle_select.h"
#include "isolation/testing/violations.h"

namespace isolation::testing {

// ---- direct-API helpers ------------------------------------------------------
// A task replaces the idle task: put_prev_task_idle() if the CPU was idle, one
// task queued, no wakeup pending.  Masks cleared only at the tick stay stale.
void MakeBusy(idle_select::IdleState& state, int cpu);
// MakeBusy, then the CPU's tick (a mask cleared at the tick has caught up).
void MakeBusySettled(idle_select::IdleState& state, int cpu);
// The queue empties, the CPU enters the idle loop and stops its tick (nohz
// idle, as the simulator's CPUs do).
void MakeIdle(idle_select::IdleState& state, int cpu);
// An IdleState whose selector is the registered `selector`.
absl::StatusOr<std::unique_ptr<idle_select::IdleState>> NewIdleState(
    std::string_view selector, absl::StatusOr<idle_select::IdleTopology> topology,
    idle_select::Options options = {});

namespace idle_select_conformance {

using Violations = ::isolation::testing::Violations;

struct Check {
  std::string name;  // the TEST_P name, e.g. "I4_HintOnly"
  std::string
      suite;  // "IdleSelectConformance", "IdleSelectRaceConformance", "IdleSelectSimConformance"
  std::string what;  // one line: the property
  std::string size;  // one line: the schedule size (selections, machines, seeds)
};
// Every check, in suite order.
const std::vector<Check>& AllChecks();
// "" if check `name` applies to `selector`, else why not (e.g. "claim-style
// selector: I4 is for scan-style selectors").  Errors: unknown check or
// selector, or a selector that cannot be created on the checks' machines.
absl::StatusOr<std::string> NotApplicable(std::string_view name, std::string_view selector);
// Runs check `name` on `selector` (whether or not it applies) and returns its
// violations; an unknown check or selector is one violation saying so.
Violations Run(std::string_view name, std::string_view selector);
// Runs every check that applies to `selector`: {check name, violations} for
// each check that reported any.
std::vector<std::pair<std::string, Violations>> RunAll(std::string_view selector);

// S16 on the store-buffer model: is a lost wakeup reachable with these fences
// (idle side between publishing its idle bit and reading the shared queue;
// waker side between queueing and Select)?  For claim-style selectors.
// Errors: a selector that cannot be created, an interleaving that fails.
absl::StatusOr<bool> LostWakeupReachable(std::string_view selector, bool idle_fence,
                                         bool waker_fence);

// gtest parameter name of a selector name ("V1-eager" -> "V1_eager").
std::string ParamName(const ::testing::TestParamInfo<std::string>& info);
// Referenced by the instantiation macros: links the suites' object files.
int Anchor();
// Body of every TEST_P: skip with the reason, or run and expect no violation.
void RunAsTest(std::string_view name, const std::string& selector);

}  // namespace idle_select_conformance
}  // namespace isolation::testing

// The suites (global namespace, so that the instantiation macros work from
// any namespace).
class IdleSelectConformance : public ::testing::TestWithParam<std::string> {};
class IdleSelectRaceConformance : public ::testing::TestWithParam<std::string> {};
class IdleSelectSimConformance : public ::testing::TestWithParam<std::string> {};

// Instantiates every idle_select suite for the named selectors (string
// literals or std::strings).
#define ISOLATION_IDLE_SELECT_CONFORMANCE(prefix, ...) \
  ISOLATION_IDLE_SELECT_CONFORMANCE_IN(prefix, (std::vector<std::string>{__VA_ARGS__}))

// The same for a container of names evaluated when the tests are registered,
// e.g. ::isolation::idle_select::SelectorNames() (every non-control selector).
#define ISOLATION_IDLE_SELECT_CONFORMANCE_IN(prefix, names)                               \
  INSTANTIATE_TEST_SUITE_P(prefix, IdleSelectConformance, ::testing::ValuesIn(names),     \
                           ::isolation::testing::idle_select_conformance::ParamName);     \
  INSTANTIATE_TEST_SUITE_P(prefix, IdleSelectRaceConformance, ::testing::ValuesIn(names), \
                           ::isolation::testing::idle_select_conformance::ParamName);     \
  INSTANTIATE_TEST_SUITE_P(prefix, IdleSelectSimConformance, ::testing::ValuesIn(names),  \
                           ::isolation::testing::idle_select_conformance::ParamName);     \
  [[maybe_unused]] static const int isolation_idle_select_conformance_anchor_##prefix =   \
      ::isolation::testing::idle_select_conformance::Anchor()

#endif  // ISOLATION_TESTING_IDLE_SELECT_H_
