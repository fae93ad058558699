// SPDX-License-Identifier: GPL-2.0-or-later
// The experiments name variants through the registries (experiments/
// registered.h): a variant registered here, outside the library, is accepted
// by each experiment's variant option and shows as a row, joins the default
// lists unless it is a negative control; an unknown name is InvalidArgument
// naming it.

#include "experiments/registered.h"

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "experiments/idle_experiment.h"
#include "experiments/mmcid_experiment.h"
#include "experiments/tmigr_experiment.h"
#include "experiments/vmstat_experiment.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "isolation/idle_select/selector.h"
#include "isolation/idle_select/sis_selector.h"
#include "isolation/mm_cid/registry.h"
#include "isolation/testing/status_matchers.h"
#include "isolation/tmigr/variants.h"
#include "isolation/vmstat/vmstat.h"

namespace isolation::experiments {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::Not;

// Throwaway variants: copies of built-ins under names of their own.
void RegisterThrowaways() {
  static const bool registered = [] {
    EXPECT_TRUE(
        idle_select::RegisterSelector(idle_select::SelectorEntryOf<idle_select::SisSelector>(
                                          "throwaway_sel", "mainline's scan, renamed"))
            .ok());
    EXPECT_TRUE(
        idle_select::RegisterSelector(idle_select::SelectorEntryOf<idle_select::SisSelector>(
                                          "throwaway_sel_control", "negative control", true))
            .ok());
    EXPECT_TRUE(vmstat::RegisterFoldPolicy(
                    {"throwaway_fold", "A1, renamed", false,
                     [] { return (*vmstat::FoldPolicyRegistry().Find("A1"))->factory(); }})
                    .ok());
    EXPECT_TRUE(tmigr::RegisterParticipation(
                    {"throwaway_part", "isolation, renamed", false,
                     [] { return (*tmigr::ParticipationRegistry().Find("isolation"))->factory(); }})
                    .ok());
    EXPECT_TRUE(mm_cid::RegisterScope(
                    {"throwaway_scope", "scan_possible, renamed", false,
                     [] { return (*mm_cid::ScopeRegistry().Find("scan_possible"))->factory(); }})
                    .ok());
    EXPECT_TRUE(mm_cid::RegisterPlacement(
                    {"throwaway_placement", "work_rcu, renamed", false,
                     [] { return (*mm_cid::PlacementRegistry().Find("work_rcu"))->factory(); }})
                    .ok());
    EXPECT_TRUE(mm_cid::RegisterAllocator(
                    {"throwaway_alloc", "alloc_v6_14, renamed", false,
                     [] { return (*mm_cid::AllocatorRegistry().Find("alloc_v6_14"))->factory(); }})
                    .ok());
    return true;
  }();
  (void)registered;
}

CommonOptions SmallMachine() {
  CommonOptions c;
  c.topology = "pu:8";
  c.isolcpus = "1-7";
  c.quick = true;
  return c;
}

std::vector<std::string> Column(const nlohmann::json& rows, const char* key) {
  std::vector<std::string> out;
  for (const auto& row : rows) out.push_back(row[key].get<std::string>());
  return out;
}

// Only this file registers outside the library: the experiments' lists of
// built-ins (registered.cc) leave out nothing the library registers.
TEST(RegisteredVariants, OnlyOutsideRegistrationsAreOutside) {
  RegisterThrowaways();
  EXPECT_EQ(OutsideSelectors(), std::vector<std::string>{"throwaway_sel"});
  EXPECT_EQ(OutsideFoldPolicies(), std::vector<std::string>{"throwaway_fold"});
  EXPECT_EQ(OutsideParticipations(), std::vector<std::string>{"throwaway_part"});
  EXPECT_EQ(OutsideScopes(), std::vector<std::string>{"throwaway_scope"});
  EXPECT_EQ(OutsidePlacements(), std::vector<std::string>{"throwaway_placement"});
}

TEST(RegisteredVariants, DefaultListsAreTheSeedsPlusOutsideVariants) {
  RegisterThrowaways();
  EXPECT_EQ(IdleExperimentOptions{}.variants,
            (std::vector<std::string>{"V0", "V1", "V1-eager", "V1-tickstop", "V1-unbounded", "V2",
                                      "V3", "V4g", "V4n", "V5", "throwaway_sel"}));
  EXPECT_EQ(VmstatExperimentOptions{}.strategies,
            (std::vector<std::string>{"A0", "A1", "B", "C", "throwaway_fold"}));
  EXPECT_EQ(TmigrExperimentOptions{}.variants,
            (std::vector<std::string>{"v6.9", "isolation", "throwaway_part"}));
  // A negative control is named explicitly or not at all.
  EXPECT_THAT(DefaultIdleVariants(), Not(Contains("throwaway_sel_control")));
  EXPECT_THAT(RegisteredSelectorsHelp(), HasSubstr("throwaway_sel"));
}

// The mm_cid tables' rows: the default rows under their labels (the seeds'
// names), the scope negative control the scan tables show beside the
// correct scopes flagged, then the outside variants under their names.
TEST(RegisteredVariants, MmCidRowsComeFromTheRegistry) {
  RegisterThrowaways();
  std::vector<std::string> scopes, placements;
  for (const RowVariant& r : DefaultScopeRows())
    scopes.push_back(r.name + "=" + r.label + (r.negative_control ? "!" : ""));
  for (const RowVariant& r : DefaultPlacementRows()) placements.push_back(r.name + "=" + r.label);
  EXPECT_EQ(scopes,
            (std::vector<std::string>{"scan_possible=possible", "scan_allowed=allowed",
                                      "scan_cidmask=cidmask!", "throwaway_scope=throwaway_scope"}));
  EXPECT_EQ(placements,
            (std::vector<std::string>{"work_taskwork=task", "work_unbound=workqueue",
                                      "work_rcu=rcu", "throwaway_placement=throwaway_placement"}));
}

TEST(RegisteredVariants, IdleRunsARegisteredSelectorBesideMainline) {
  RegisterThrowaways();
  IdleExperimentOptions o;
  o.variants = {"V0", "throwaway_sel"};
  o.samples = 300;
  o.iterations = 1;
  o.hackbench_loops = 10;
  o.pipe_round_trips = 50;
  Progress progress("idle");
  auto report = RunIdleExperiment(SmallMachine(), o, progress);
  ISOLATION_ASSERT_OK(report);
  EXPECT_THAT(Column(report->json["select"], "variant"), Contains("throwaway_sel"));
  EXPECT_THAT(Column(report->json["workloads"], "variant"), Contains("throwaway_sel"));
  EXPECT_THAT(Column(report->json["schbench"], "variant"), Contains("throwaway_sel"));
  EXPECT_EQ(report->invariant_violations, 0);
  // Named explicitly, a negative control runs too (select sweep only).
  o.variants = {"throwaway_sel_control"};
  report = RunIdleExperiment(SmallMachine(), o, progress);
  ISOLATION_ASSERT_OK(report);
  EXPECT_THAT(Column(report->json["select"], "variant"), Contains("throwaway_sel_control"));
  EXPECT_THAT(Column(report->json["workloads"], "variant"), Not(Contains("throwaway_sel_control")));
}

TEST(RegisteredVariants, VmstatRunsARegisteredPolicy) {
  RegisterThrowaways();
  VmstatExperimentOptions o;
  o.strategies = {"A1", "throwaway_fold"};
  o.syscalls = 20;
  o.host_iterations = 200;
  Progress progress("vmstat");
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto report, RunVmstatExperiment(SmallMachine(), o, progress));
  EXPECT_THAT(Column(report.json["strategies"], "strategy"), Contains("throwaway_fold"));
  // Checked by its traits (A1's: no work on isolated CPUs).
  EXPECT_THAT(Column(report.json["checks"], "check"),
              Contains("throwaway_fold: no isolated interruption"));
  EXPECT_EQ(report.invariant_violations, 0);
}

TEST(RegisteredVariants, TmigrRunsARegisteredParticipation) {
  RegisterThrowaways();
  TmigrExperimentOptions o;
  o.variants = {"v6.9", "throwaway_part"};
  o.duration_ms = 200;
  o.real_ms = 0;
  Progress progress("tmigr");
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto report, RunTmigrExperiment(SmallMachine(), o, progress));
  EXPECT_THAT(Column(report.json["variants"], "variant"), Contains("throwaway_part"));
  EXPECT_EQ(report.invariant_violations, 0);
}

TEST(RegisteredVariants, MmCidRunsRegisteredScopesPlacementsAndAllocators) {
  RegisterThrowaways();
  MmCidExperimentOptions o;
  o.allocator = "throwaway_alloc";
  o.duration_ms = 100;
  o.scan_reps = 5;
  Progress progress("mmcid");
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto report, RunMmCidExperiment(SmallMachine(), o, progress));
  EXPECT_EQ(report.json["allocator"], "throwaway_alloc");
  EXPECT_THAT(Column(report.json["scan"], "strategy"), Contains("throwaway_scope"));
  EXPECT_THAT(Column(report.json["compaction"], "strategy"), Contains("throwaway_scope"));
  EXPECT_THAT(Column(report.json["placement"], "placement"), Contains("throwaway_placement"));
  EXPECT_EQ(report.invariant_violations, 0);
}

TEST(RegisteredVariants, AnUnknownNameIsInvalidArgumentNamingIt) {
  RegisterThrowaways();
  Progress progress("bad");
  IdleExperimentOptions idle;
  idle.variants = {"V0", "no_such_selector"};
  auto r = RunIdleExperiment(SmallMachine(), idle, progress);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("--idle_variants"));
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("'no_such_selector'"));
  EXPECT_THAT(std::string(r.status().message()),
              HasSubstr("throwaway_sel"));  // the registered names

  VmstatExperimentOptions vm;
  vm.strategies = {"no_such_policy"};
  r = RunVmstatExperiment(SmallMachine(), vm, progress);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("'no_such_policy'"));
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("throwaway_fold"));

  TmigrExperimentOptions tm;
  tm.variants = {"no_such_participation"};
  r = RunTmigrExperiment(SmallMachine(), tm, progress);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("'no_such_participation'"));
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("throwaway_part"));

  MmCidExperimentOptions mm;
  mm.allocator = "no_such_allocator";
  r = RunMmCidExperiment(SmallMachine(), mm, progress);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("'no_such_allocator'"));
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("throwaway_alloc"));
}

}  // namespace
}  // namespace isolation::experiments
