// SPDX-License-Identifier: GPL-2.0-or-later
// Internal to the kit: the idle_select checks' table and shared helpers.

#ifndef ISOLATION_LIB_TESTING_IDLE_SELECT_CHECKS_H_
#define ISOLATION_LIB_TESTING_IDLE_SELECT_CHECKS_H_

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "isolation/idle_select/idle_select.h"
#include "isolation/testing/idle_select.h"

namespace isolation::testing::idle_select_conformance {

namespace is = ::isolation::idle_select;

// What the checks may assume about a selector (from what it declares).
struct Profile {
  is::SelectorTraits traits;
  int max_probes_at_0 = 0;   // MaxScanProbes(0)
  int max_probes_at_64 = 0;  // MaxScanProbes(64)
  bool scan_style() const { return !traits.claims_cpus; }
  bool claim_style() const { return traits.claims_cpus; }
};

struct CheckImpl {
  const char* name;
  const char* suite;
  const char* what;
  // "" when the check applies, else the reason it does not.
  std::string (*not_applicable)(const Profile&);
  Violations (*run)(const std::string& selector);
  const char* size;  // the schedule size, one line (Check::size)
};

// The tables of each suite's file (idle_select_direct.cc, _races.cc, _sim.cc).
const std::vector<CheckImpl>& DirectChecks();
const std::vector<CheckImpl>& RaceChecks();
const std::vector<CheckImpl>& SimChecks();

// Applicability predicates.
inline std::string Always(const Profile&) { return ""; }
inline std::string ScanStyleOnly(const Profile& p) {
  return p.scan_style() ? ""
                        : "claim-style selector: the property is stated for scan-style selectors";
}
inline std::string ClaimStyleOnly(const Profile& p) {
  return p.claim_style() ? ""
                         : "scan-style selector: it claims nothing (the property is about claims)";
}

// A state for `selector`, or nullptr with a violation recorded.
std::unique_ptr<is::IdleState> StateOrViolation(const std::string& selector,
                                                absl::StatusOr<is::IdleTopology> topology,
                                                is::Options options, Violations& v);
// One random transition of one CPU: busy, idle (tick stopped), a short idle
// (tick running), a tick, SCHED_IDLE-only or a pending wakeup, a wakeup landing
// on an idle CPU before it switches (busy by idle_cpu() while the idle task is
// still current).
void RandomStep(is::IdleState& st, std::mt19937_64& rng);
int RandomCpu(const is::IdleState& st, std::mt19937_64& rng);

// idle_select_stress.cc: the long schedules.
// RarePaths_100kSelections: every applicable property after each of 10^5
// selections on one instance.
Violations CheckRarePaths(const std::string& selector);
// D1_DomainFromTraits: the returned CPU lies in SelectorTraits::domain.
Violations CheckDomain(const std::string& selector);
// I6_EmptyAffinityNoCpu: an empty affinity yields cpu -1, nothing claimed.
Violations CheckEmptyAffinity(const std::string& selector);

}  // namespace isolation::testing::idle_select_conformance

#endif  // ISOLATION_LIB_TESTING_IDLE_SELECT_CHECKS_H_
