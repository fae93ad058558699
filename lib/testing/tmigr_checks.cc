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
// The suites, and the sizes and applicabilities most entries share.
constexpr const char* kScenarios = "TmigrScenarios";
constexpr const char* kRaces = "TmigrRaces";
constexpr const char* kIsolation = "TmigrIsolation";
constexpr const char* kStress = "TmigrStress";
constexpr const char* kFixed = "fixed";
constexpr const char* kAllSchedules = "all schedules";
constexpr const char* kAlways = "always";
// The isolation checks apply to every variant; its traits set what they expect.
constexpr const char* kIsolationTraits = "always (expectations from excludes_isolated_cpus)";

const std::map<std::string, Doc, std::less<>>& Docs() {
  static const auto* const docs = new std::map<std::string, Doc, std::less<>>{
      {"S1_Trees",
       {kScenarios, "S1: tree shapes for CPU counts and children per group", "fixed shapes",
        kAlways}},
      {"S2_GrowingTop",
       {kScenarios, "S2: the top grows as CPUs come up", "fixed bring-up order", kAlways}},
      {"S3_NumaMismatch", {kScenarios, "S3: node and group layout disagree", kFixed, kAlways}},
      {"S4_FirstActivation",
       {kScenarios, "S4: the first CPU becomes migrator of every level", kFixed, kAlways}},
      {"S5_HandOver", {kScenarios, "S5: the migrator goes idle and hands over", kFixed, kAlways}},
      {"S6_LocalTimerFirst",
       {kScenarios, "S6: a local timer earlier than the global one", kFixed, kAlways}},
      {"S7_S8_LastCpuIdlesAndIdlePuller",
       {kScenarios, "S7/S8: the last CPU idles with the first event; an idle puller", kFixed,
        kAlways}},
      {"S9_ActivePull",
       {kScenarios, "S9: an active migrator pulls an idle CPU's timer", kFixed, kAlways}},
      {"S10_SameExpiryOtherCpu",
       {kScenarios, "S10: equal expiry from another CPU refreshes the event's cpu", kFixed,
        kAlways}},
      {"S11_GhostTimer",
       {kScenarios, "S11: no ghost event left after the timer is gone", kFixed, kAlways}},
      {"S14_QuickCheck",
       {kScenarios, "S14: quick check reads every level of the path", kFixed, kAlways}},
      {"S15_SingleLevelEarlyReturn",
       {kScenarios, "S15: an ignored level-0 event at the top", kFixed, kAlways}},
      {"S16_OfflineLastActive",
       {kScenarios, "S16: the last active CPU goes offline", kFixed, kAlways}},
      {"RemoteExpiryHandsNoGlobalBehindLocal",
       {kScenarios, "a remote expiry leaves no global timer behind a local one", kFixed, kAlways}},
      {"I5_LastIdleCpuWakesForTheFirstTimer",
       {kScenarios, "I5: the last idle CPU wakes for the hierarchy's first timer", kFixed,
        kAlways}},
      {"S12_RaceR1AllSchedules",
       {kRaces, "S12: race R1 (seq), every schedule", kAllSchedules, kAlways}},
      {"S13_RaceR2AllSchedules",
       {kRaces, "S13: race R2 (update reads under locks), every schedule", kAllSchedules, kAlways}},
      {"S28_RaceR4AllSchedules",
       {kRaces, "S28: race R4 (late event of a non-last idler), every schedule", kAllSchedules,
        kAlways}},
      {"S17_HotplugVsIdleAllSchedules",
       {kRaces, "S17: hotplug against idle entry, every schedule", kAllSchedules, kAlways}},
      {"I2_TwoServicersExpireOnce",
       {kRaces, "I2: two servicers of one event expire it once", "4 lock-free schedules", kAlways}},
      {"HandleRemoteStopsWhenChildBecameMigrator",
       {kRaces, "3.8: the migrator re-check stops a remote walk", "every lock-free hand-over point",
        kAlways}},
      {"S18_BootIsolation",
       {kIsolation, "S18: isolcpus at boot", "8 CPUs, fixed", kIsolationTraits}},
      {"S19_NohzFullStaysAvailable",
       {kIsolation, "S19: a nohz_full isolated CPU stays available", kFixed, kIsolationTraits}},
      {"S20_TickCpuStays",
       {kIsolation, "S20: the tick CPU stays available", kFixed, kIsolationTraits}},
      {"S21_CpusetChange",
       {kIsolation, "S21: a cpuset change; exclude order", "fixed, flushes reversed",
        "always (expectations from excludes_isolated_cpus, flushes_unisolation_first)"}},
      {"S21_BootIsolatedStayOut",
       {kIsolation, "S21: boot-isolated CPUs stay out over cpuset changes", kFixed,
        kIsolationTraits}},
      {"S22_OfflineOnlineIsolated",
       {kIsolation, "S22: an isolated CPU offline and online", kFixed, kIsolationTraits}},
      {"S22_CpusetIsolatedStaysOutOnHotplug",
       {kIsolation, "S22: a cpuset-isolated CPU stays out across hotplug", kFixed,
        kIsolationTraits}},
      {"S23_HousekeepingRule",
       {kIsolation, "S23: one housekeeping CPU always available", kFixed, kIsolationTraits}},
      {"I1_I12_RandomSchedulesCpg2",
       {kStress,
        "I1-I12 after every step (so at every migrator hand-over) over idle, timers, ticks, "
        "hotplug, cpusets; "
        "no timer two jiffies late",
        "12 seeds x 1500 steps, 20 CPUs, 2 children per group", kAlways}},
      {"I1_I12_RandomSchedulesCpg8",
       {kStress, "as Cpg2 with 8 children per group",
        "12 seeds x 1500 steps, 20 CPUs, 8 children per group", kAlways}},
      {"I1_I12_RandomSchedulesIdleHeavy",
       {kStress,
        "as Cpg2 on 4 CPUs that are mostly idle: the last idler's wake-up and idle CPUs' new "
        "timers at every step",
        "40 seeds x 3000 steps, 4 CPUs, 2 children per group", kAlways}},
      {"S27_RealThreads",
       {kStress, "S27: invariants at every barrier of real threads; no timer lost",
        "3 seeds x 400 rounds x 8 threads", kAlways}},
      {"SimulatorHousekeepingTimers",
       {kStress, "housekeeping timers under the simulator run once, in time",
        "3 seeds x 300 ms simulated", kIsolationTraits}},
      {"S26_IsolatedTimersPulledByHousekeeping",
       {kStress, "S26: isolated CPUs' timers pulled by housekeeping", "300 ms simulated",
        kIsolationTraits}},
      {"S24_S26_OslatSeed",
       {kStress, "S24-S26 oslat seeds", "3 machines (up to 128 CPUs), 1-2 s simulated", kAlways}},
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
