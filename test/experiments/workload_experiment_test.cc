// SPDX-License-Identifier: GPL-2.0-or-later
// `isolab run --workload=rtapp:FILE`: the shipped rt-app examples on every
// mechanism's rows, deterministic per seed; bad options refused by name.

#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "experiments/workload_experiment.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "isolation/testing/status_matchers.h"

namespace isolation::experiments {
namespace {

using ::isolation::testing::StatusIs;
using ::testing::HasSubstr;

CommonOptions Machine(const char* isolcpus = "1-3") {
  CommonOptions c;
  c.topology = "package:1 core:8 pu:1";
  c.isolcpus = isolcpus;
  c.quick = true;
  return c;
}

WorkloadExperimentOptions Options(const char* example, int64_t ms = 200) {
  WorkloadExperimentOptions o;
  o.workload = absl::StrCat("rtapp:", ISOLATION_RTAPP_EXAMPLES_DIR, "/", example);
  o.duration_ms = ms;
  return o;
}

TEST(WorkloadExperiment, EveryMechanismRunsEachShippedExampleDeterministically) {
  for (const char* example : {"isolated_periodic.json", "producer_consumer.json"}) {
    Progress progress("run");
    ISOLATION_ASSERT_OK_AND_ASSIGN(
        ExperimentReport a, RunWorkloadExperiment(Machine(), Options(example, 1500), progress));
    ISOLATION_ASSERT_OK_AND_ASSIGN(
        ExperimentReport b, RunWorkloadExperiment(Machine(), Options(example, 1500), progress));
    EXPECT_EQ(a.json["mechanisms"], b.json["mechanisms"]) << example;
    EXPECT_EQ(a.invariant_violations, 0) << example;
    for (const char* m : {"mm_cid", "tmigr", "idle_select", "vmstat"}) {
      ASSERT_TRUE(a.json["mechanisms"].contains(m)) << example << " " << m;
      ASSERT_FALSE(a.json["mechanisms"][m].empty()) << example << " " << m;
      for (const auto& row : a.json["mechanisms"][m]) {
        if (row.contains("error")) continue;  // a variant refusing the machine (V4g)
        EXPECT_GT(row["wakeups"].get<int64_t>(), 100) << example << " " << m << " " << row;
        EXPECT_EQ(row["ran_ns"].get<int64_t>(), 1'500'000'000) << row;
      }
    }
    EXPECT_THAT(a.text, HasSubstr("vmstat_update on isolated CPUs"));
  }
}

int64_t Figure(const ExperimentReport& r, const char* mechanism, const char* variant,
               const char* figure) {
  for (const auto& row : r.json["mechanisms"][mechanism]) {
    if (row["variant"] == variant) return row[figure].get<int64_t>();
  }
  ADD_FAILURE() << "no row " << mechanism << " " << variant;
  return -1;
}

TEST(WorkloadExperiment, IsolatingCpusMovesTheTmigrRowsTheWayTheSeedsReport) {
  // The periodic example with isolcpus=1-3 (its RT threads' CPUs) and
  // without: the v6.9 hierarchy pulls housekeeping timers onto the idle
  // phases of the isolated CPUs, the isolation-aware one never.
  Progress progress("run");
  WorkloadExperimentOptions o = Options("isolated_periodic.json", 3000);
  o.mechanisms = {"tmigr"};
  o.variants["tmigr"] = {"v6.9", "isolation"};
  ISOLATION_ASSERT_OK_AND_ASSIGN(ExperimentReport isolated,
                                 RunWorkloadExperiment(Machine("1-3"), o, progress));
  ISOLATION_ASSERT_OK_AND_ASSIGN(ExperimentReport none,
                                 RunWorkloadExperiment(Machine(""), o, progress));
  const char* pulled = "remote_timer_callbacks_on_isolated_cpus";
  EXPECT_GT(Figure(isolated, "tmigr", "v6.9", pulled), 0);
  EXPECT_EQ(Figure(isolated, "tmigr", "isolation", pulled), 0);
  EXPECT_EQ(Figure(none, "tmigr", "v6.9", pulled), 0);  // nothing is isolated
}

TEST(WorkloadExperiment, IsolatingCpusMovesTheVmstatRowsTheWayTheSeedsReport) {
  // The seeds' vmstat case: an RT thread makes a few system calls, then
  // spins on its isolated CPU.  Vanilla (A0) queues vmstat_update there and
  // interrupts it; mainline (A1) skips isolated CPUs and leaves the residue.
  const std::string path = absl::StrCat(::testing::TempDir(), "/spin.json");
  {
    std::ofstream f(path);
    f << R"({"tasks": {"rt": {"cpus": [1], "loop": 1, "phases": {
          "setup": {"yield": ""}, "spin": {"runtime": 3000000}}}}})";
  }
  Progress progress("run");
  WorkloadExperimentOptions o;
  o.workload = absl::StrCat("rtapp:", path);
  o.duration_ms = 3000;
  o.mechanisms = {"vmstat"};
  o.variants["vmstat"] = {"A0", "A1"};
  ISOLATION_ASSERT_OK_AND_ASSIGN(ExperimentReport isolated,
                                 RunWorkloadExperiment(Machine("1-3"), o, progress));
  ISOLATION_ASSERT_OK_AND_ASSIGN(ExperimentReport none,
                                 RunWorkloadExperiment(Machine(""), o, progress));
  const char* runs = "vmstat_update_runs_on_isolated_cpus";
  EXPECT_GT(Figure(isolated, "vmstat", "A0", runs), 0);
  EXPECT_EQ(Figure(isolated, "vmstat", "A0", "isolated_max_residue"), 0);
  EXPECT_EQ(Figure(isolated, "vmstat", "A1", runs), 0);
  EXPECT_GT(Figure(isolated, "vmstat", "A1", "isolated_max_residue"), 0);
  EXPECT_EQ(Figure(none, "vmstat", "A0", runs), 0);  // nothing is isolated
}

WorkloadExperimentOptions Trace(const char* file) {
  WorkloadExperimentOptions o;
  o.workload = absl::StrCat("trace:", ISOLATION_REPLAY_DATA_DIR, "/", file);
  return o;
}

CommonOptions Recorded() {
  CommonOptions c;  // topology and isolcpus "seed": the recording's own
  c.quick = true;
  return c;
}

TEST(WorkloadExperiment, RecordingReproducedOnItsOwnMachineUnderEveryRow) {
  Progress progress("run");
  ISOLATION_ASSERT_OK_AND_ASSIGN(
      ExperimentReport r, RunWorkloadExperiment(Recorded(), Trace("oslat_idle.dat.gz"), progress));
  EXPECT_EQ(r.json["machine"]["cpus"], 2);
  EXPECT_EQ(r.invariant_violations, 0);
  for (const char* m : {"mm_cid", "tmigr", "idle_select", "vmstat"}) {
    ASSERT_FALSE(r.json["mechanisms"][m].empty()) << m;
    for (const auto& row : r.json["mechanisms"][m]) {
      if (row.contains("error")) continue;
      // The tolerance docs/workloads.md states, under every variant.
      const auto& rep = row["reproduced"];
      EXPECT_GE(rep["run_time_ratio"].get<double>(), 0.90) << m << " " << row["variant"];
      EXPECT_LE(rep["run_time_ratio"].get<double>(), 1.10) << m << " " << row["variant"];
      EXPECT_GE(rep["wakeup_ratio"].get<double>(), 0.90) << m << " " << row["variant"];
      EXPECT_LE(rep["wakeup_ratio"].get<double>(), 1.10) << m << " " << row["variant"];
      EXPECT_GE(rep["tasks_within_10pct"].get<int>() * 10, rep["tasks_judged"].get<int>() * 8)
          << m << " " << row["variant"];
    }
  }
  EXPECT_THAT(r.text, HasSubstr("closed loop / recording"));
}

TEST(WorkloadExperiment, RecordingWhatIfIsolatingItsOslatCpu) {
  // The recording ran oslat on CPU 1 with no isolation.  The same workload
  // with isolcpus=1: the v6.9 hierarchy pulls CPU 0's timers onto the
  // oslat CPU while CPU 0 idles, the isolation-aware one never; vanilla
  // vmstat (A0) queues vmstat_update on it, mainline (A1) never.
  Progress progress("run");
  WorkloadExperimentOptions o = Trace("oslat_idle.dat.gz");
  o.mechanisms = {"tmigr", "vmstat"};
  o.variants["tmigr"] = {"v6.9", "isolation"};
  o.variants["vmstat"] = {"A0", "A1"};
  CommonOptions what_if = Recorded();
  what_if.isolcpus = "1";
  ISOLATION_ASSERT_OK_AND_ASSIGN(ExperimentReport isolated,
                                 RunWorkloadExperiment(what_if, o, progress));
  ISOLATION_ASSERT_OK_AND_ASSIGN(ExperimentReport recorded,
                                 RunWorkloadExperiment(Recorded(), o, progress));
  const char* pulled = "remote_timer_callbacks_on_isolated_cpus";
  EXPECT_GT(Figure(isolated, "tmigr", "v6.9", pulled), 0);
  EXPECT_EQ(Figure(isolated, "tmigr", "isolation", pulled), 0);
  EXPECT_EQ(Figure(recorded, "tmigr", "v6.9", pulled), 0);  // nothing is isolated
  const char* runs = "vmstat_update_runs_on_isolated_cpus";
  EXPECT_GT(Figure(isolated, "vmstat", "A0", runs), 0);
  EXPECT_EQ(Figure(isolated, "vmstat", "A1", runs), 0);
  EXPECT_EQ(Figure(recorded, "vmstat", "A0", runs), 0);
}

TEST(WorkloadExperiment, TraceOptionsRefusedByName) {
  Progress progress("run");
  WorkloadExperimentOptions o = Trace("oslat_idle.dat.gz");
  o.duration_ms = 100;
  EXPECT_THAT(RunWorkloadExperiment(Recorded(), o, progress),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("--run_duration_ms")));
  o = Trace("oslat_idle.dat.gz");
  o.cpu_scale = 0;
  EXPECT_THAT(RunWorkloadExperiment(Recorded(), o, progress),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("--cpu_scale=0")));
  o = Options("isolated_periodic.json");
  o.cpu_scale = 0.5;
  EXPECT_THAT(RunWorkloadExperiment(Machine(), o, progress),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("--cpu_scale")));
  o = Trace("oslat_idle.dat.gz");
  CommonOptions bad = Recorded();
  bad.topology = "package:1 core:8 pu:1";
  EXPECT_THAT(RunWorkloadExperiment(bad, o, progress),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("8 CPUs, the recording 2")));
}

TEST(WorkloadExperiment, CpuScaleShortensTheRecordedRuns) {
  Progress progress("run");
  WorkloadExperimentOptions o = Trace("pipe.dat.gz");
  o.mechanisms = {"idle_select"};
  o.variants["idle_select"] = {"V0"};
  o.cpu_scale = 0.5;
  ISOLATION_ASSERT_OK_AND_ASSIGN(ExperimentReport r,
                                 RunWorkloadExperiment(Recorded(), o, progress));
  // Faster CPUs: every scripted run is done, and the wake-ups are the same.
  const auto& rep = r.json["mechanisms"]["idle_select"][0]["reproduced"];
  EXPECT_GE(rep["run_time_ratio"].get<double>(), 0.99);
  EXPECT_GE(rep["wakeup_ratio"].get<double>(), 0.99);
  EXPECT_THAT(r.json["notes"].dump(), HasSubstr("run times x 0.5"));
}

TEST(WorkloadExperiment, RtlaTablesPerRow) {
  Progress progress("run");
  WorkloadExperimentOptions o = Options("isolated_periodic.json", 300);
  o.mechanisms = {"vmstat"};
  o.variants["vmstat"] = {"A1"};
  o.osnoise_top = true;
  CommonOptions c = Machine();
  c.hist.print = true;
  ISOLATION_ASSERT_OK_AND_ASSIGN(ExperimentReport r, RunWorkloadExperiment(c, o, progress));
  EXPECT_THAT(r.text, HasSubstr("# RTLA timerlat histogram"));
  EXPECT_THAT(r.text, HasSubstr("Index   Thr-001   Thr-002   Thr-003"));
  EXPECT_THAT(r.text, HasSubstr("Operating System Noise"));
  EXPECT_THAT(r.text, HasSubstr("\n  3 #1            300000"));  // isolated CPUs 1-3 only
  EXPECT_THAT(r.text, ::testing::Not(HasSubstr("\n  0 #1 ")));
}

TEST(WorkloadExperiment, AnyVariantsChooseTheirMechanismsRows) {
  Progress progress("run");
  WorkloadExperimentOptions o = Options("producer_consumer.json", 100);
  o.any_variants = {"isolation", "A1", "V0"};
  ISOLATION_ASSERT_OK_AND_ASSIGN(ExperimentReport r, RunWorkloadExperiment(Machine(), o, progress));
  EXPECT_FALSE(r.json["mechanisms"].contains("mm_cid"));
  ASSERT_EQ(r.json["mechanisms"]["tmigr"].size(), 1u);
  EXPECT_EQ(r.json["mechanisms"]["tmigr"][0]["variant"], "isolation");
  EXPECT_EQ(r.json["mechanisms"]["vmstat"][0]["variant"], "A1");
  EXPECT_EQ(r.json["mechanisms"]["idle_select"][0]["variant"], "V0");
  o.any_variants = {"frobnicate"};
  EXPECT_THAT(RunWorkloadExperiment(Machine(), o, progress),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("'frobnicate' is no")));
}

TEST(WorkloadExperiment, RefusesBadOptionsByName) {
  Progress progress("run");
  WorkloadExperimentOptions o = Options("isolated_periodic.json");
  o.workload = "json:x";
  EXPECT_THAT(RunWorkloadExperiment(Machine(), o, progress),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("--workload='json:x'")));
  o = Options("isolated_periodic.json");
  o.mechanisms = {"sched_ext"};
  EXPECT_THAT(
      RunWorkloadExperiment(Machine(), o, progress),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("unknown mechanism 'sched_ext'")));
  o = Options("isolated_periodic.json");
  o.variants["vmstat"] = {"Z9"};
  EXPECT_THAT(RunWorkloadExperiment(Machine(), o, progress),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("--vmstat_strategies")));
  o = Options("nonexistent.json");
  EXPECT_THAT(RunWorkloadExperiment(Machine(), o, progress),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("nonexistent.json")));
  o = Options("isolated_periodic.json", -1);
  EXPECT_THAT(RunWorkloadExperiment(Machine(), o, progress),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("--run_duration_ms=-1")));
}

}  // namespace
}  // namespace isolation::experiments
