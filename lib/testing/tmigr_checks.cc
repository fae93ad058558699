// SPDX-License-Identifier: GPL-2.0-or-later
// The tmigr kit's check list (testing/tmigr.h, tmigr_conformance): each
// TEST_P by name with its property, schedule size and applicability.

#include <map>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "isolation/core/contract.h"
#include "isolation/testing/status_matchers.h"
#include "isolation/testing/violations.h"
#include "testing/tmigr_common.h"

namespace isolation::testing::tmigr_conformance {
namespace {

struct Doc {
  const char* suite;
  const char* what;
  const char* size;
  const char* applies_when;
};

// By TmigrChecks() name; every entry of TmigrChecks() must have one
// (AllChecks contract-checks it).
const std::map<std::string, Doc, std::less<>>& Docs() {
  static const auto* const docs = new std::map<std::string, Doc, std::less<>>{
      {"S1_Trees",
       {"TmigrScenarios", "S1: tree shapes for CPU counts and children per group", "fixed shapes",
        "always"}},
      {"S2_GrowingTop",
       {"TmigrScenarios", "S2: the top grows as CPUs come up", "fixed bring-up order", "always"}},
      {"S3_NumaMismatch",
       {"TmigrScenarios", "S3: node and group layout disagree", "fixed", "always"}},
      {"S4_FirstActivation",
       {"TmigrScenarios", "S4: the first CPU becomes migrator of every level", "fixed", "always"}},
      {"S5_HandOver",
       {"TmigrScenarios", "S5: the migrator goes idle and hands over", "fixed", "always"}},
      {"S6_LocalTimerFirst",
       {"TmigrScenarios", "S6: a local timer earlier than the global one", "fixed", "always"}},
      {"S7_S8_LastCpuIdlesAndIdlePuller",
       {"TmigrScenarios", "S7/S8: the last CPU idles with the first event; an idle puller", "fixed",
        "always"}},
      {"S9_ActivePull",
       {"TmigrScenarios", "S9: an active migrator pulls an idle CPU's timer", "fixed", "always"}},
      {"S10_SameExpiryOtherCpu",
       {"TmigrScenarios", "S10: equal expiry from another CPU refreshes the event's cpu", "fixed",
        "always"}},
      {"S11_GhostTimer",
       {"TmigrScenarios", "S11: no ghost event left after the timer is gone", "fixed", "always"}},
      {"S14_QuickCheck",
       {"TmigrScenarios", "S14: quick check reads every level of the path", "fixed", "always"}},
      {"S15_SingleLevelEarlyReturn",
       {"TmigrScenarios", "S15: an ignored level-0 event at the top", "fixed", "always"}},
      {"S16_OfflineLastActive",
       {"TmigrScenarios", "S16: the last active CPU goes offline", "fixed", "always"}},
      {"RemoteExpiryHandsNoGlobalBehindLocal",
       {"TmigrScenarios", "a remote expiry leaves no global timer behind a local one", "fixed",
        "always"}},
      {"I5_LastIdleCpuWakesForTheFirstTimer",
       {"TmigrScenarios", "I5: the last idle CPU wakes for the hierarchy's first timer", "fixed",
        "always"}},
      {"S12_RaceR1AllSchedules",
       {"TmigrRaces", "S12: race R1 (seq), every schedule", "all schedules", "always"}},
      {"S13_RaceR2AllSchedules",
       {"TmigrRaces", "S13: race R2 (update reads under locks), every schedule", "all schedules",
        "always"}},
      {"S28_RaceR4AllSchedules",
       {"TmigrRaces", "S28: race R4 (late event of a non-last idler), every schedule",
        "all schedules", "always"}},
      {"S17_HotplugVsIdleAllSchedules",
       {"TmigrRaces", "S17: hotplug against idle entry, every schedule", "all schedules",
        "always"}},
      {"I2_TwoServicersExpireOnce",
       {"TmigrRaces", "I2: two servicers of one event expire it once", "4 lock-free schedules",
        "always"}},
      {"HandleRemoteStopsWhenChildBecameMigrator",
       {"TmigrRaces", "3.8: the migrator re-check stops a remote walk",
        "every lock-free hand-over point", "always"}},
      {"S18_BootIsolation",
       {"TmigrIsolation", "S18: isolcpus at boot", "8 CPUs, fixed",
        "always (expectations from excludes_isolated_cpus)"}},
      {"S19_NohzFullStaysAvailable",
       {"TmigrIsolation", "S19: a nohz_full isolated CPU stays available", "fixed",
        "always (expectations from excludes_isolated_cpus)"}},
      {"S20_TickCpuStays",
       {"TmigrIsolation", "S20: the tick CPU stays available", "fixed",
        "always (expectations from excludes_isolated_cpus)"}},
      {"S21_CpusetChange",
       {"TmigrIsolation", "S21: a cpuset change; exclude order", "fixed, flushes reversed",
        "always (expectations from excludes_isolated_cpus, flushes_unisolation_first)"}},
      {"S21_BootIsolatedStayOut",
       {"TmigrIsolation", "S21: boot-isolated CPUs stay out over cpuset changes", "fixed",
        "always (expectations from excludes_isolated_cpus)"}},
      {"S22_OfflineOnlineIsolated",
       {"TmigrIsolation", "S22: an isolated CPU offline and online", "fixed",
        "always (expectations from excludes_isolated_cpus)"}},
      {"S22_CpusetIsolatedStaysOutOnHotplug",
       {"TmigrIsolation", "S22: a cpuset-isolated CPU stays out across hotplug", "fixed",
        "always (expectations from excludes_isolated_cpus)"}},
      {"S23_HousekeepingRule",
       {"TmigrIsolation", "S23: one housekeeping CPU always available", "fixed",
        "always (expectations from excludes_isolated_cpus)"}},
      {"I1_I12_RandomSchedulesCpg2",
       {"TmigrStress",
        "I1-I12 after every step (so at every migrator hand-over) over idle, timers, ticks, "
        "hotplug, cpusets; "
        "no timer two jiffies late",
        "12 seeds x 1500 steps, 20 CPUs, 2 children per group", "always"}},
      {"I1_I12_RandomSchedulesCpg8",
       {"TmigrStress", "as Cpg2 with 8 children per group",
        "12 seeds x 1500 steps, 20 CPUs, 8 children per group", "always"}},
      {"I1_I12_RandomSchedulesIdleHeavy",
       {"TmigrStress",
        "as Cpg2 on 4 CPUs that are mostly idle: the last idler's wake-up and idle CPUs' new "
        "timers at every step",
        "40 seeds x 3000 steps, 4 CPUs, 2 children per group", "always"}},
      {"S27_RealThreads",
       {"TmigrStress", "S27: invariants at every barrier of real threads; no timer lost",
        "3 seeds x 400 rounds x 8 threads", "always"}},
      {"SimulatorHousekeepingTimers",
       {"TmigrStress", "housekeeping timers under the simulator run once, in time",
        "3 seeds x 300 ms simulated", "always (expectations from excludes_isolated_cpus)"}},
      {"S26_IsolatedTimersPulledByHousekeeping",
       {"TmigrStress", "S26: isolated CPUs' timers pulled by housekeeping", "300 ms simulated",
        "always (expectations from excludes_isolated_cpus)"}},
      {"S24_S26_OslatSeed",
       {"TmigrStress", "S24-S26 oslat seeds", "3 machines (up to 128 CPUs), 1-2 s simulated",
        "always"}},
  };
  return *docs;
}

const TmigrCheck* FindFn(std::string_view name) {
  for (const TmigrCheck& c : TmigrChecks()) {
    if (name == c.name) return &c;
  }
  return nullptr;
}

}  // namespace

const std::vector<Check>& AllChecks() {
  static const std::vector<Check>* const checks = [] {
    auto* out = new std::vector<Check>;
    for (const TmigrCheck& c : TmigrChecks()) {
      auto it = Docs().find(c.name);
      ISOLATION_CONTRACT(it != Docs().end(), "tmigr check %s has no entry in the check list",
                         c.name);
      out->push_back({c.name, it->second.suite, it->second.what, it->second.size,
                      it->second.applies_when, c.slow});
    }
    return out;
  }();
  return *checks;
}

absl::StatusOr<std::string> NotApplicable(std::string_view name, std::string_view variant) {
  if (FindFn(name) == nullptr)
    return absl::NotFoundError(absl::StrCat("no tmigr check '", std::string(name), "'"));
  auto v = ParseTmigrVariant(variant);
  if (!v.ok()) return v.status();
  auto traits = TraitsOf(*v);
  if (!traits.ok()) return traits.status();
  return std::string();  // every check applies; the traits shape what it expects
}

Violations Run(std::string_view name, std::string_view variant) {
  const TmigrCheck* c = FindFn(name);
  if (c == nullptr)
    return {absl::StrCat(std::string(variant), ": no tmigr check '", std::string(name), "'")};
  auto v = ParseTmigrVariant(variant);
  if (!v.ok()) return {absl::StrCat(std::string(variant), ": ", v.status().message())};
  return c->fn(*v);
}

std::vector<std::pair<std::string, Violations>> RunAll(std::string_view variant) {
  std::vector<std::pair<std::string, Violations>> out;
  for (const Check& c : AllChecks()) {
    auto why = NotApplicable(c.name, variant);
    if (!why.ok()) {
      out.push_back({c.name, {absl::StrCat(std::string(variant), ": ", why.status().message())}});
      continue;
    }
    if (!why->empty()) continue;
    Violations v = Run(c.name, variant);
    if (!v.empty()) out.push_back({c.name, std::move(v)});
  }
  return out;
}

void RunAsTest(const TmigrVariant& variant) {
  const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
  ASSERT_NE(info, nullptr);
  const std::string test = info->name();  // "S11_GhostTimer/v6_9"
  const std::string name = test.substr(0, test.find('/'));
  const std::string spec = variant.ToString();
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto why, NotApplicable(name, spec));
  if (!why.empty()) GTEST_SKIP() << why;
  ISOLATION_EXPECT_NO_VIOLATIONS(Run(name, spec));
}

}  // namespace isolation::testing::tmigr_conformance
