// SPDX-License-Identifier: GPL-2.0-or-later
// The conformance kit's helpers: status matchers and macros, the violations
// helper, the machine builder and the variant registry.

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest-spi.h"
#include "gtest/gtest.h"
#include "absl/functional/any_invocable.h"
#include "absl/strings/str_cat.h"
#include "isolation/core/registry.h"
#include "isolation/testing/bench.h"
#include "isolation/testing/churn.h"
#include "isolation/testing/machine.h"
#include "isolation/testing/status_matchers.h"
#include "isolation/testing/violations.h"

// Without ISOLATION_TESTING_SHORT_STATUS_MACROS the header defines no
// unprefixed name (kit_short_macros_test.cc checks the opt-in).
#if defined(EXPECT_OK) || defined(ASSERT_OK) || defined(ASSERT_OK_AND_ASSIGN)
#error "status_matchers.h defined a short macro name without the opt-in"
#endif

namespace isolation::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

absl::StatusOr<int> Twice(int x) {
  if (x < 0) return absl::InvalidArgumentError(absl::StrCat("negative: ", x));
  return 2 * x;
}

// The calibration names the host and times every loop; no figure is judged
// here (speed belongs to the benchmarks), only that each was measured.
TEST(HostLimits, EveryLoopIsTimedAndTheCpuNamed) {
  const testing::HostLimits h = testing::MeasureHostLimits();
  EXPECT_FALSE(h.cpu_model.empty());
  for (const testing::HostLimit& l :
       {h.thread_local_increment, h.owner_byte_update, h.locked_fetch_add, h.empty_indirect_call}) {
    EXPECT_GT(l.min_ns, 0.0);
    EXPECT_GE(l.median_ns, l.min_ns);
  }
}

// The spread takes the mean empty interval out of every batch and reports
// each side's floor and median batch, so a bimodal baseline shows.
TEST(PairedBatchSpread, MeanClockOutOfEveryBatchFloorsAndMedians) {
  testing::PairedBatchSpread spread;
  EXPECT_EQ(spread.Summarize(10).ratio_median, 0.0);  // nothing added
  // Batches of 10 operations; the empty intervals average 100 ns.
  spread.Add(/*subject_ns=*/300, /*baseline_ns=*/150, /*empty_ns=*/90);   // 200 / 50
  spread.Add(/*subject_ns=*/500, /*baseline_ns=*/200, /*empty_ns=*/110);  // 400 / 100
  spread.Add(/*subject_ns=*/400, /*baseline_ns=*/300, /*empty_ns=*/100);  // 300 / 200
  const testing::PairedBatchSpread::Summary m = spread.Summarize(10);
  EXPECT_DOUBLE_EQ(m.subject_min_ns, 20);
  EXPECT_DOUBLE_EQ(m.subject_median_ns, 30);
  EXPECT_DOUBLE_EQ(m.baseline_min_ns, 5);
  EXPECT_DOUBLE_EQ(m.baseline_median_ns, 10);
  EXPECT_DOUBLE_EQ(m.ratio_median, 4);  // per batch: 4, 4, 1.5
  EXPECT_DOUBLE_EQ(m.ratio_of_minimums, 4);
}

// A batch at or below the clock's cost on one side has no ratio, and a
// floor below zero no ratio of minimums.
TEST(PairedBatchSpread, BatchesBelowTheClockHaveNoRatio) {
  testing::PairedBatchSpread spread;
  spread.Add(/*subject_ns=*/300, /*baseline_ns=*/150, /*empty_ns=*/100);  // 200 / 50
  spread.Add(/*subject_ns=*/60, /*baseline_ns=*/500, /*empty_ns=*/100);   // -40 / 400
  const testing::PairedBatchSpread::Summary m = spread.Summarize(1);
  EXPECT_DOUBLE_EQ(m.ratio_median, 4);  // the first batch's only
  EXPECT_EQ(m.ratio_of_minimums, 0.0);
  EXPECT_DOUBLE_EQ(m.subject_min_ns, -40);
}

// A paired comparison on either clock reports every counter it documents,
// each side timed (no figure is judged: speed belongs to the benchmarks),
// and refuses a batch below one by the benchmark's error, not a crash.
class CapturedRuns : public benchmark::BenchmarkReporter {
 public:
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& r : runs) this->runs.push_back(r);
  }
  std::vector<Run> runs;
};

TEST(CompareToBaseline, EitherClockTimesBothSidesAndReportsTheRatio) {
  static int64_t sink = 0;
  const auto work = [](int64_t n) {
    for (int64_t i = 0; i < n; ++i) benchmark::DoNotOptimize(sink += i);
  };
  for (const auto& [name, clock] :
       {std::pair{"KitCompareSteady", testing::BenchClock::kSteady},
        std::pair{"KitCompareThreadCpu", testing::BenchClock::kThreadCpu}}) {
    benchmark::RegisterBenchmark(name,
                                 [clock = clock, work](benchmark::State& state) {
                                   testing::CompareToBaseline(state, work, work, "same", 1024,
                                                              clock);
                                 })
        ->UseManualTime()
        ->Iterations(64);
  }
  benchmark::RegisterBenchmark("KitCompareNoBatch", [work](benchmark::State& state) {
    testing::CompareToBaseline(state, work, work, "same", 0);
  })->Iterations(1);
  CapturedRuns captured;
  benchmark::RunSpecifiedBenchmarks(&captured, "^KitCompare");
  ASSERT_EQ(captured.runs.size(), 3u);
  for (const auto& run : captured.runs) {
    SCOPED_TRACE(run.benchmark_name());
    if (run.benchmark_name().find("NoBatch") != std::string::npos) {
      EXPECT_TRUE(run.error_occurred);
      EXPECT_THAT(run.error_message, ::testing::HasSubstr("batch 0 < 1"));
      continue;
    }
    EXPECT_FALSE(run.error_occurred) << run.error_message;
    for (const char* counter :
         {"ns_per_op", "same_ns_per_op", "ratio_to_same", "clock_read_ns", "ns_per_op_min",
          "same_ns_per_op_median", "ratio_median", "ratio_of_minimums"}) {
      ASSERT_TRUE(run.counters.count(counter)) << counter;
    }
    EXPECT_GT(run.counters.at("ns_per_op").value, 0.0);
    EXPECT_GT(run.counters.at("same_ns_per_op").value, 0.0);
    EXPECT_GT(run.counters.at("ratio_to_same").value, 0.0);
  }
}

// The churn helpers draw only from the simulator's seeded generators: two
// runs of one seed switch and migrate alike, and the placer moves tasks.
TEST(Churn, DeterministicPerSeedAndThePlacerMigrates) {
  auto run = [](uint64_t seed) -> std::pair<int64_t, int64_t> {
    SimOptions so;
    so.seed = seed;
    auto sim = MachineBuilder().Topology("core:8 pu:1").Simulator(so);
    if (!sim.ok()) return {-1, -1};
    testing::RandomWakeupPlacer placer(**sim, 8);
    struct CountMigrations : Hooks {
      void OnMigrate(TaskId, int, int, Nanos) override { ++n; }
      int64_t n = 0;
    } migrations;
    (*sim)->AddHooks(&placer);
    (*sim)->AddHooks(&migrations);
    if (!testing::SpawnChurnTasks(
             **sim,
             {.count = 16, .num_cpus = 8, .groups = 1, .first_steps = 40, .step_increment = 0})
             .ok())
      return {-1, -1};
    if (!(*sim)->RunFor(200 * kNsPerMs).ok()) return {-1, -1};
    int64_t switches = 0;
    for (int c = 0; c < 8; ++c) switches += (*sim)->Stats(c).context_switches;
    return {switches, migrations.n};
  };
  const auto a = run(3);
  EXPECT_GT(a.first, 0);
  EXPECT_GT(a.second, 0);
  EXPECT_EQ(run(3), a);
}

TEST(Churn, SpawnChurnTasksPlacesNamesAndStopsAtTheFirstRefusal) {
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto sim, MachineBuilder().Topology("core:4 pu:1").Simulator());
  ISOLATION_ASSERT_OK_AND_ASSIGN(
      const std::vector<TaskId> ids,
      testing::SpawnChurnTasks(
          *sim, {.count = 6, .num_cpus = 4, .groups = 2, .first_steps = 5, .step_increment = 1}));
  ASSERT_EQ(ids.size(), 6u);
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(sim->TaskCpu(ids[static_cast<size_t>(i)]), i % 4);
    EXPECT_EQ(sim->TaskGroup(ids[static_cast<size_t>(i)]), i % 2);
  }
  // CPU 4 of a 4-CPU machine: the fifth task is refused, and the error is Spawn's.
  const absl::StatusOr<std::vector<TaskId>> refused =
      testing::SpawnChurnTasks(*sim, {.count = 6, .num_cpus = 5, .groups = 1});
  EXPECT_FALSE(refused.ok());
  EXPECT_THAT(std::string(refused.status().message()), ::testing::HasSubstr("4"));
  ISOLATION_EXPECT_OK(sim->RunFor(50 * kNsPerMs));
}

TEST(StatusMatchers, IsOkAndStatusIs) {
  EXPECT_THAT(absl::OkStatus(), IsOk());
  EXPECT_THAT(Twice(1), IsOk());
  EXPECT_THAT(Twice(-3), Not(IsOk()));
  EXPECT_THAT(Twice(-3), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(Twice(-3), StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("-3")));
  EXPECT_THAT(Twice(-3), Not(StatusIs(absl::StatusCode::kNotFound)));
  ISOLATION_EXPECT_OK(Twice(2));
  ISOLATION_ASSERT_OK(absl::OkStatus()) << "a message streams";
}

TEST(StatusMatchers, OkMacrosNameTheExpressionAndStatus) {
  EXPECT_NONFATAL_FAILURE(ISOLATION_EXPECT_OK(Twice(-5)) << "ctx7",
                          "Twice(-5) is not OK: INVALID_ARGUMENT: negative: -5");
  EXPECT_NONFATAL_FAILURE(ISOLATION_EXPECT_OK(Twice(-5)) << "ctx7", "ctx7");
  EXPECT_FATAL_FAILURE(ISOLATION_ASSERT_OK(absl::NotFoundError("gone")),
                       "absl::NotFoundError(\"gone\") is not OK");
}

TEST(StatusMatchers, IsOkAndHolds) {
  EXPECT_THAT(Twice(21), IsOkAndHolds(42));
  EXPECT_THAT(Twice(21), IsOkAndHolds(::testing::Gt(40)));
  EXPECT_THAT(Twice(21), Not(IsOkAndHolds(41)));
  EXPECT_THAT(Twice(-1), Not(IsOkAndHolds(::testing::_)));
  const absl::StatusOr<std::string> s = std::string("abc");
  EXPECT_THAT(s, IsOkAndHolds(HasSubstr("b")));
  // On error the failure shows the status, not only "not OK".
  EXPECT_NONFATAL_FAILURE(EXPECT_THAT(Twice(-9), IsOkAndHolds(1)), "negative: -9");
  EXPECT_NONFATAL_FAILURE(EXPECT_THAT(Twice(2), IsOkAndHolds(5)), "whose value 4");
}

TEST(StatusMatchers, AssertOkAndAssign) {
  ISOLATION_ASSERT_OK_AND_ASSIGN(int v, Twice(21));
  EXPECT_EQ(v, 42);
  int w = 0;
  ISOLATION_ASSERT_OK_AND_ASSIGN(w, Twice(4));
  EXPECT_EQ(w, 8);
  // A braced argument's commas are the expression's, not the macro's.
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto p,
                                 absl::StatusOr<std::pair<int, int>>(std::pair<int, int>{1, 2}));
  EXPECT_EQ(p.second, 2);
}

bool g_reached_after_failed_assign = false;
void AssignFromError() {
  ISOLATION_ASSERT_OK_AND_ASSIGN(int v, Twice(-1));
  g_reached_after_failed_assign = true;
  (void)v;
}

TEST(StatusMatchers, AssertOkAndAssignFailsTheTest) {
  // The failure must be reported, name the expression and its status, and
  // leave the function, not be swallowed.
  EXPECT_FATAL_FAILURE(AssignFromError(), "Twice(-1) is not OK: INVALID_ARGUMENT: negative: -1");
  EXPECT_FALSE(g_reached_after_failed_assign);
}

TEST(Violations, NoViolationsPassesAndPrintsWhatFailed) {
  const Violations none;
  ISOLATION_EXPECT_NO_VIOLATIONS(none);
  ISOLATION_ASSERT_NO_VIOLATIONS(none) << "a message streams";
  EXPECT_THAT(none, HasNoViolations());
  const Violations two = {"S1: first broken", "S1: second broken"};
  EXPECT_THAT(two, Not(HasNoViolations()));
  EXPECT_NONFATAL_FAILURE(ISOLATION_EXPECT_NO_VIOLATIONS(two) << "seed 3",
                          "two has 2 violations:\n  S1: first broken\n  S1: second broken");
  EXPECT_NONFATAL_FAILURE(ISOLATION_EXPECT_NO_VIOLATIONS(two) << "seed 3", "seed 3");
  EXPECT_FATAL_FAILURE(ISOLATION_ASSERT_NO_VIOLATIONS(Violations{"x"}), "1 violation:\n  x");
  EXPECT_NONFATAL_FAILURE(EXPECT_THAT(two, HasNoViolations()), "second broken");
}

TEST(Violations, LongListsAreCut) {
  Violations many;
  for (int i = 0; i < 40; ++i) many.push_back(absl::StrCat("v", i));
  EXPECT_NONFATAL_FAILURE(ISOLATION_EXPECT_NO_VIOLATIONS(many), "v31\n  ... and 8 more");
}

TEST(MachineBuilder, SeedMachine) {
  ISOLATION_ASSERT_OK_AND_ASSIGN(Machine m, MachineBuilder().Isolcpus(kSeedIsolcpus).Build());
  EXPECT_EQ(m.num_cpus(), 128);
  EXPECT_TRUE(m.isolation.CpuIsIsolated(1));
  EXPECT_FALSE(m.isolation.CpuIsIsolated(32));
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto sim, m.Simulator());
  EXPECT_EQ(sim->topology().num_cpus(), 128);
}

TEST(MachineBuilder, NohzFullAndCmdline) {
  ISOLATION_ASSERT_OK_AND_ASSIGN(
      Machine a, MachineBuilder().Topology("package:1 core:8 pu:1").NohzFull("1-7").Build());
  EXPECT_TRUE(a.isolation.nohz_full().Test(3));
  ISOLATION_ASSERT_OK_AND_ASSIGN(
      Machine b,
      MachineBuilder().Topology("package:1 core:8 pu:1").Cmdline("quiet nohz_full=1-7 ro").Build());
  EXPECT_EQ(a.isolation.nohz_full(), b.isolation.nohz_full());
}

TEST(MachineBuilder, DriverShortcuts) {
  ISOLATION_ASSERT_OK_AND_ASSIGN(
      auto sim, MachineBuilder().Topology("core:2 pu:1").Isolcpus("1").Simulator());
  EXPECT_EQ(sim->num_cpus(), 2);
  EXPECT_THAT(MachineBuilder().Topology("core:two").Simulator(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("two")));
  EXPECT_THAT(MachineBuilder().Topology("core:2 pu:1").NohzFull("1-x").RealThreads(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("1-x")));
}

TEST(MachineBuilder, BadInputNamesTheValue) {
  EXPECT_THAT(MachineBuilder().Topology("package:two").Build(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("two")));
  EXPECT_THAT(MachineBuilder().Topology("package:1 core:8 pu:1").Isolcpus("1-x").Build(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("1-x")));
}

using IntFactory = absl::AnyInvocable<int() const>;

TEST(VariantRegistry, RegisterFindAndList) {
  VariantRegistry<IntFactory> r("test axis");
  ISOLATION_ASSERT_OK(
      r.Register({.name = "mainline", .description = "the kernel's", .factory = [] { return 1; }}));
  ISOLATION_ASSERT_OK(r.Register(
      {.name = "broken", .description = "drops a fence", .negative_control = true, .factory = [] {
         return 2;
       }}));
  ISOLATION_ASSERT_OK_AND_ASSIGN(const auto* e, r.Find("MAINLINE"));
  EXPECT_EQ(e->factory(), 1);
  EXPECT_THAT(r.Names(), ::testing::ElementsAre("mainline"));
  EXPECT_THAT(r.Names(/*include_negative_controls=*/true),
              ::testing::ElementsAre("mainline", "broken"));
  EXPECT_EQ(r.All().size(), 2u);
}

TEST(VariantRegistry, ErrorsNameTheValue) {
  VariantRegistry<IntFactory> r("test axis");
  ISOLATION_ASSERT_OK(r.Register({.name = "a", .description = "", .factory = [] { return 1; }}));
  EXPECT_THAT(r.Register({.name = "A", .description = "", .factory = [] { return 1; }}),
              StatusIs(absl::StatusCode::kAlreadyExists, HasSubstr("'A'")));
  EXPECT_THAT(r.Register({.name = "", .description = "", .factory = [] { return 1; }}),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(r.Register({.name = "a b", .description = "", .factory = [] { return 1; }}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("'a b'")));
  EXPECT_THAT(r.Register({.name = "nofactory", .description = "", .factory = nullptr}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("nofactory")));
  EXPECT_THAT(r.Find("zzz"), StatusIs(absl::StatusCode::kNotFound, HasSubstr("zzz")));
}

// What the rest of the library asks an entry: origin, default row, label,
// aliases (which Find() accepts and Register() keeps unique).
TEST(VariantRegistry, OriginDefaultRowsLabelsAndAliases) {
  VariantRegistry<IntFactory> r("test axis");
  ISOLATION_ASSERT_OK(r.Register(AsBuiltin(VariantEntry<IntFactory>{.name = "mainline",
                                                                    .description = "",
                                                                    .factory = [] { return 1; },
                                                                    .label = "main",
                                                                    .aliases = {"v1"}})));
  ISOLATION_ASSERT_OK(r.Register(
      {.name = "alt", .description = "", .factory = [] { return 2; }, .default_row = false}));
  ISOLATION_ASSERT_OK(
      r.Register({.name = "broken", .description = "", .negative_control = true, .factory = [] {
                    return 3;
                  }}));
  ISOLATION_ASSERT_OK(r.Register({.name = "shown",
                                  .description = "",
                                  .negative_control = true,
                                  .factory = [] { return 4; },
                                  .default_row = true}));
  ISOLATION_ASSERT_OK_AND_ASSIGN(const auto* e, r.Find("V1"));
  EXPECT_EQ(e->name, "mainline");
  EXPECT_TRUE(e->is_builtin());
  EXPECT_EQ(e->row_label(), "main");
  ISOLATION_ASSERT_OK_AND_ASSIGN(const auto* alt, r.Find("alt"));
  EXPECT_FALSE(alt->is_builtin());
  EXPECT_EQ(alt->row_label(), "alt");
  std::vector<std::string> rows;
  for (const auto* d : r.DefaultRows()) rows.push_back(d->name);
  EXPECT_THAT(rows, ::testing::ElementsAre("mainline", "shown"));
  std::vector<std::string> outside;
  for (const auto* o : r.FromOrigin(VariantOrigin::kOutside, /*include_negative_controls=*/true)) {
    outside.push_back(o->name);
  }
  EXPECT_THAT(outside, ::testing::ElementsAre("alt", "broken", "shown"));
  EXPECT_EQ(r.FromOrigin(VariantOrigin::kOutside).size(), 1u);
  EXPECT_THAT(r.Register({.name = "other",
                          .description = "",
                          .factory = [] { return 5; },
                          .aliases = {"MAINLINE"}}),
              StatusIs(absl::StatusCode::kAlreadyExists, HasSubstr("'MAINLINE'")));
  EXPECT_THAT(r.Register({.name = "v1", .description = "", .factory = [] { return 5; }}),
              StatusIs(absl::StatusCode::kAlreadyExists, HasSubstr("'v1'")));
  EXPECT_THAT(
      r.Register({.name = "x", .description = "", .factory = [] { return 5; }, .aliases = {"a b"}}),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("'a b'")));
  EXPECT_THAT(
      r.Register({.name = "y", .description = "", .factory = [] { return 5; }, .aliases = {""}}),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("empty alias")));
  EXPECT_EQ(VariantOriginName(VariantOrigin::kBuiltin), "builtin");
  EXPECT_EQ(VariantOriginName(VariantOrigin::kOutside), "outside");
}

}  // namespace
}  // namespace isolation::testing
