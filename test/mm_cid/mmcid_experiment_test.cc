// SPDX-License-Identifier: GPL-2.0-or-later
// `isolab mmcid --quick` and its expected outcomes (docs/mm_cid.md).

#include <iostream>
#include <memory>
#include <string>

#include "experiments/mmcid_experiment.h"
#include "gtest/gtest.h"
#include "isolation/testing/status_matchers.h"

namespace isolation::experiments {
namespace {

TEST(MmCidExperiment, QuickRunMeetsIssueExpectations) {
  Progress progress("mmcid");
  CommonOptions options;
  options.quick = true;
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto report,
                                 RunMmCidExperiment(options, MmCidExperimentOptions{}, progress));
  const nlohmann::json& j = report.json;
  std::cout << report.text;
  ASSERT_TRUE(j.contains("scan") && j.contains("placement") && j.contains("compaction") &&
              j.contains("invariant_violations"));

  // scan: for a task pinned to one CPU of 128, allowed visits <= 1/20 of possible.
  int possible = -1, allowed = -1;
  for (const auto& s : j["scan"]) {
    EXPECT_EQ(s["cpus"].get<int>(), 128);
    EXPECT_GT(s["cpus_visited"].get<int>(), 0) << s.dump();
    if (s["strategy"] == "possible") possible = s["cpus_visited"].get<int>();
    if (s["strategy"] == "allowed") allowed = s["cpus_visited"].get<int>();
  }
  EXPECT_EQ(possible, 256);
  ASSERT_GT(allowed, 0);
  EXPECT_LE(allowed * 20, possible);
  EXPECT_EQ(j["scan"].size(), 4u);

  // placement: compaction stalls isolated CPUs only with task work.
  ASSERT_EQ(j["placement"].size(), 3u);
  for (const auto& p : j["placement"]) {
    if (p["placement"] == "task") {
      EXPECT_GT(p["isolated_max_stall_ns"].get<int64_t>(), 0) << p.dump();
    } else {
      EXPECT_EQ(p["isolated_max_stall_ns"].get<int64_t>(), 0) << p.dump();
      EXPECT_EQ(p["scans_on_isolated_cpus"].get<int64_t>(), 0) << "I10: " << p.dump();
      EXPECT_GT(p["scans"].get<int64_t>(), 0) << "the offloaded scans must still run: " << p.dump();
    }
  }

  // compaction: cidmask does not converge, the others do.
  ASSERT_EQ(j["compaction"].size(), 4u);
  for (const auto& c : j["compaction"]) {
    EXPECT_EQ(c["converged"].get<bool>(), c["strategy"] != "cidmask") << c.dump();
  }
  EXPECT_EQ(j["invariant_violations"].get<int64_t>(), 0) << report.text;
  EXPECT_EQ(report.rows.size(), 2u);
  // The v6.3 baseline (text only): no background work, cid_lock at switches.
  EXPECT_NE(
      report.text.find("(v63_mmlock: isolated_max_stall 0 ns, scans 0, cid_lock round trips "),
      std::string::npos)
      << report.text;
}

}  // namespace
}  // namespace isolation::experiments
