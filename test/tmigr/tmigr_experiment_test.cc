// SPDX-License-Identifier: GPL-2.0-or-later
// `isolab tmigr --quick`: the issue's expected outcomes (JSON keys, v6.9 runs
// housekeeping timers on isolated CPUs 1 and 65 among others, isolation runs
// none there, no lost timers, no invariant violations).

#include <memory>
#include <string>

#include "absl/flags/flag.h"
#include "experiments/common_flags.h"
#include "experiments/experiment.h"
#include "gtest/gtest.h"

ABSL_DECLARE_FLAG(int64_t, tmigr_real_ms);
ABSL_DECLARE_FLAG(std::string, tmigr_bugs);

namespace isolation::experiments {
namespace {

TEST(TmigrExperiment, QuickRunMeetsIssueExpectations) {
  std::unique_ptr<Experiment> exp;
  for (auto& e : AllExperiments()) {
    if (e->name() == "tmigr") exp = std::move(e);
  }
  ASSERT_NE(exp, nullptr);
  absl::SetFlag(&FLAGS_tmigr_real_ms, 60);
  Progress progress("tmigr");
  auto report = exp->Run(RunOptions{/*quick=*/true, /*seed=*/1}, progress);
  ASSERT_TRUE(report.ok()) << report.status();
  const nlohmann::json& j = report->json;
  ASSERT_TRUE(j.contains("variants"));
  ASSERT_EQ(j["variants"].size(), 2u);
  for (const auto& v : j["variants"]) {
    for (const char* key : {"variant", "timers_total", "timers_on_isolated", "timers_lost", "max_lateness_ns",
                            "invariant_violations", "per_cpu_timers"}) {
      EXPECT_TRUE(v.contains(key)) << key;
    }
    EXPECT_EQ(v["timers_lost"].get<int64_t>(), 0);
    EXPECT_EQ(v["invariant_violations"].get<int64_t>(), 0);
    EXPECT_GT(v["timers_total"].get<int64_t>(), 0);
    if (v["variant"] == "v6.9") {
      EXPECT_GT(v["timers_on_isolated"].get<int64_t>(), 0);
      EXPECT_TRUE(v["per_cpu_timers"].contains("1"));
      EXPECT_TRUE(v["per_cpu_timers"].contains("65"));
    } else {
      EXPECT_EQ(v["variant"], "isolation");
      EXPECT_EQ(v["timers_on_isolated"].get<int64_t>(), 0);
    }
  }
  ASSERT_TRUE(j.contains("real_thread"));
  EXPECT_NE(j["real_thread"]["label"].get<std::string>().find("indicative"), std::string::npos);
  EXPECT_EQ(report->invariant_violations, 0);
  ASSERT_EQ(report->rows.size(), 1u);
  EXPECT_NE(report->rows[0].kernel_reported.find("1203"), std::string::npos);
}

// --tmigr_bugs re-creates a fixed bug in the modelled run (negative control):
// the run reports it as invariant violations (isolab then exits 1), and an
// unknown bug name is bad input naming the value.
TEST(TmigrExperiment, BugSwitchIsReportedAsViolations) {
  std::unique_ptr<Experiment> exp;
  for (auto& e : AllExperiments()) {
    if (e->name() == "tmigr") exp = std::move(e);
  }
  ASSERT_NE(exp, nullptr);
  absl::SetFlag(&FLAGS_tmigr_real_ms, 0);
  absl::SetFlag(&FLAGS_topology, "pu:16");
  absl::SetFlag(&FLAGS_isolcpus, "");
  Progress progress("tmigr");
  absl::SetFlag(&FLAGS_tmigr_bugs, "ghost_timer");
  auto report = exp->Run(RunOptions{/*quick=*/true, /*seed=*/1}, progress);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_GT(report->invariant_violations, 0);
  for (const auto& d : report->json["details"]) EXPECT_GT(d["ghost_timers"].get<int64_t>(), 0) << d.dump();
  absl::SetFlag(&FLAGS_tmigr_bugs, "");
  auto clean = exp->Run(RunOptions{/*quick=*/true, /*seed=*/1}, progress);
  ASSERT_TRUE(clean.ok()) << clean.status();
  EXPECT_EQ(clean->invariant_violations, 0);
  absl::SetFlag(&FLAGS_tmigr_bugs, "ghost_timer,frob");
  auto bad = exp->Run(RunOptions{/*quick=*/true, /*seed=*/1}, progress);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(bad.status().message()).find("'frob'"), std::string::npos) << bad.status();
  absl::SetFlag(&FLAGS_tmigr_bugs, "");
  absl::SetFlag(&FLAGS_topology, "seed");
  absl::SetFlag(&FLAGS_isolcpus, "seed");
}

}  // namespace
}  // namespace isolation::experiments
