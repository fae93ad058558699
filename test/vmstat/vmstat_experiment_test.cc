// SPDX-License-Identifier: GPL-2.0-or-later
// `isolab vmstat --quick` as a test: its JSON keys and its expected
// outcomes (A0 interrupts isolated CPUs, A1/B/C do not; A1 leaves residue,
// B does not; lost_updates 0), plus D when asked for.

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include "experiments/vmstat_experiment.h"
#include "gtest/gtest.h"
#include "isolation/runtime/trace.h"
#include "isolation/testing/status_matchers.h"

namespace isolation::experiments {
namespace {

TEST(VmstatExperiment, S7_S8_QuickRunMatchesIssueContract) {
  Progress progress("vmstat");
  // VMSTAT_FULL=1 runs the default (non-quick) configuration instead.
  const bool quick = std::getenv("VMSTAT_FULL") == nullptr;
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto report,
                                 RunVmstatExperiment(CommonOptions{.seed = 1, .quick = quick},
                                                     VmstatExperimentOptions{}, progress));
  const nlohmann::json& j = report.json;
  EXPECT_EQ(report.invariant_violations, 0) << j.dump(2);
  // Shown in the test log: what `isolab vmstat --quick` prints.
  std::cout << report.text;
  for (const auto& r : report.rows)
    std::cout << r.figure << " | " << r.kernel_reported << " | " << r.measured << "\n";
  if (std::getenv("VMSTAT_DUMP_JSON") != nullptr) std::cout << j.dump(2) << "\n";
  ASSERT_TRUE(j.contains("strategies"));
  ASSERT_EQ(j["strategies"].size(), 4u);
  const std::set<std::string> want_keys = {"strategy",     "syscall_ns_median",
                                           "overhead_pct", "isolated_interruptions",
                                           "residue_max",  "lost_updates"};
  std::set<std::string> seen;
  for (const auto& s : j["strategies"]) {
    std::set<std::string> keys;
    for (auto it = s.begin(); it != s.end(); ++it) keys.insert(it.key());
    EXPECT_EQ(keys, want_keys);
    const std::string name = s["strategy"].get<std::string>();
    seen.insert(name);
    EXPECT_EQ(s["lost_updates"].get<int64_t>(), 0) << name;
    EXPECT_GT(s["syscall_ns_median"].get<double>(), 0) << name;
    if (name == "A0") {
      EXPECT_GT(s["isolated_interruptions"].get<int64_t>(), 0);
    } else {
      EXPECT_EQ(s["isolated_interruptions"].get<int64_t>(), 0) << name;
    }
    if (name == "A1") {
      EXPECT_DOUBLE_EQ(s["overhead_pct"].get<double>(), 0.0);
      EXPECT_GT(s["residue_max"].get<int64_t>(), 0);
    }
    if (name == "B" || name == "C") {
      EXPECT_EQ(s["residue_max"].get<int64_t>(), 0) << name;
    }
  }
  EXPECT_EQ(seen, (std::set<std::string>{"A0", "A1", "B", "C"}));
  EXPECT_EQ(j["model"]["cpus"].get<int>(), 128);
  EXPECT_EQ(j["model"]["isolated_cpus"].get<int>(), 124);
  ASSERT_EQ(report.rows.size(), 2u);
  EXPECT_EQ(report.rows[0].experiment, "vmstat");
  EXPECT_NE(report.rows[0].kernel_reported.find("8461"), std::string::npos);
  EXPECT_NE(report.rows[1].kernel_reported.find("15 us"), std::string::npos);
  EXPECT_FALSE(report.text.empty());
}

// The host part runs on the host-sized model, says so, and
// an oversubscribed model is refused unless allowed, then labelled.
TEST(VmstatExperiment, HostPartRunsOnTheHostSizedModel) {
  Progress progress("vmstat");
  VmstatExperimentOptions o;
  o.strategies = {"A1", "B"};
  o.syscalls = 20;
  o.host_iterations = 64;
  CommonOptions common{.seed = 1, .quick = true};
  common.host_cpus = 2;  // as on the 2-CPU CI host
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto report, RunVmstatExperiment(common, o, progress));
  const nlohmann::json& m = report.json["real_thread_model"];
  EXPECT_EQ(m["cpus"].get<int>(), 2);
  EXPECT_EQ(m["housekeeping"].get<std::string>(), "0");
  EXPECT_EQ(m["isolated"].get<std::string>(), "1");
  EXPECT_FALSE(m["oversubscribed"].get<bool>());
  const std::string label = m["label"].get<std::string>();
  EXPECT_NE(label.find("host-sized model, 2 CPUs"), std::string::npos) << label;
  EXPECT_NE(report.json["host"]["label"].get<std::string>().find(label), std::string::npos);
  EXPECT_NE(report.text.find(label), std::string::npos) << report.text;

  common.host_cpus = 0;  // this host
  common.real_cpus = 8192;
  auto refused = RunVmstatExperiment(common, o, progress);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(std::string(refused.status().message()).find("--allow_oversubscribed"),
            std::string::npos)
      << refused.status();

  common.host_cpus = 1;  // pretend a 1-CPU host: a 2-CPU model is oversubscribed
  common.real_cpus = 2;
  common.allow_oversubscribed = true;
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto allowed, RunVmstatExperiment(common, o, progress));
  EXPECT_TRUE(allowed.json["real_thread_model"]["oversubscribed"].get<bool>());
  EXPECT_EQ(allowed.json["host"]["label"].get<std::string>().rfind("OVERSUBSCRIBED", 0), 0u);
  EXPECT_NE(allowed.text.find("OVERSUBSCRIBED host real threads"), std::string::npos)
      << allowed.text;
}

TEST(VmstatExperiment, D_OursAndBadFlags) {
  Progress progress("vmstat");
  VmstatExperimentOptions options;
  options.strategies = {"A1", "D"};
  ISOLATION_ASSERT_OK_AND_ASSIGN(
      auto report, RunVmstatExperiment(CommonOptions{.seed = 2, .quick = true}, options, progress));
  EXPECT_EQ(report.invariant_violations, 0);
  const auto& d = report.json["strategies"][1];
  EXPECT_EQ(d["strategy"], "D");
  EXPECT_EQ(d["isolated_interruptions"].get<int64_t>(), 0);
  EXPECT_EQ(d["residue_max"].get<int64_t>(), 0);
  EXPECT_TRUE(report.json["details"][1]["ours"].get<bool>());
  options.strategies = {"A1", "Q"};
  auto bad = RunVmstatExperiment(CommonOptions{.seed = 2, .quick = true}, options, progress);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(std::string(bad.status().message()).find("'Q'"), std::string::npos);
}

// Without isolated CPUs the checks about them (A0 interrupts them, A1 leaves
// residue on them, every RT spin on them finished) do not apply: skipped
// with a note, not failed.  A failing one would make isolab exit 1.
TEST(VmstatExperiment, NoIsolatedCpuSkipsTheChecksAboutThem) {
  Progress progress("vmstat");
  ISOLATION_ASSERT_OK_AND_ASSIGN(
      auto report, RunVmstatExperiment(CommonOptions{.isolcpus = "", .seed = 1, .quick = true},
                                       VmstatExperimentOptions{}, progress));
  EXPECT_EQ(report.invariant_violations, 0) << report.json["checks"].dump(2);
  EXPECT_EQ(report.json["model"]["isolated_cpus"].get<int>(), 0);
  int skipped = 0, run = 0;
  for (const auto& c : report.json["checks"]) {
    EXPECT_TRUE(c["ok"].get<bool>()) << c.dump();
    if (c.contains("skipped")) {
      ++skipped;
      EXPECT_EQ(c["skipped"].get<std::string>().rfind("no isolated ", 0), 0u) << c.dump();
    } else {
      ++run;
      EXPECT_NE(c["check"].get<std::string>().find("lost_updates"), std::string::npos) << c.dump();
    }
  }
  EXPECT_EQ(run, 4);                      // lost_updates, per strategy
  EXPECT_EQ(skipped, 4 + 1 + 2 + 2 + 2);  // every RT spin finished x 4; A0 1, A1 2, B 2, C 2
  EXPECT_NE(report.text.find("skipped"), std::string::npos);
  EXPECT_EQ(report.text.find("CHECK FAILED"), std::string::npos);
}

// B folds on return to user of a nohz_full CPU whose tick is stopped: an
// isolated CPU without nohz_full keeps its tick and gets vmstat work, which
// is no failure of B.  Its checks are about the isolated nohz_full CPUs (the
// run exited 1 with "CHECK FAILED: B: no isolated interruption" here).
TEST(VmstatExperiment, PartialNohzFullChecksBOnlyOnNohzFullCpus) {
  Progress progress("vmstat");
  ISOLATION_ASSERT_OK_AND_ASSIGN(
      auto report,
      RunVmstatExperiment(
          CommonOptions{
              .topology = "pu:8", .isolcpus = "1-7", .nohz_full = "1-3", .seed = 1, .quick = true},
          VmstatExperimentOptions{}, progress));
  EXPECT_EQ(report.invariant_violations, 0) << report.json["checks"].dump(2);
  const auto& b = report.json["strategies"][2];
  ASSERT_EQ(b["strategy"], "B");
  EXPECT_GT(b["isolated_interruptions"].get<int64_t>(), 0);  // on CPUs 4-7, whose tick runs
  bool checked = false;
  for (const auto& c : report.json["checks"]) {
    if (c["check"] == "B: no interruption of isolated nohz_full CPUs") {
      checked = true;
      EXPECT_FALSE(c.contains("skipped"));
      EXPECT_TRUE(c["ok"].get<bool>());
    }
  }
  EXPECT_TRUE(checked);
}

// The report lists the isolation configuration's warnings (isolab prints
// them) and so does its JSON: here nohz_full= disagrees with
// isolcpus=nohz and is dropped.
TEST(VmstatExperiment, ConfigurationWarningsReachTheReport) {
  Progress progress("vmstat");
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto report,
                                 RunVmstatExperiment(CommonOptions{.topology = "pu:16",
                                                                   .isolcpus = "nohz,1-7",
                                                                   .nohz_full = "8-15",
                                                                   .seed = 1,
                                                                   .quick = true},
                                                     VmstatExperimentOptions{}, progress));
  ASSERT_FALSE(report.warnings.empty());
  EXPECT_EQ(report.warnings[0].parameter, "nohz_full=8-15");
  ASSERT_TRUE(report.json.contains("warnings"));
  ASSERT_EQ(report.json["warnings"].size(), report.warnings.size());
  EXPECT_EQ(report.json["warnings"][0]["parameter"], "nohz_full=8-15");
  EXPECT_NE(report.json["warnings"][0]["message"].get<std::string>().find("must match isolcpus"),
            std::string::npos);
  EXPECT_EQ(report.json["invariant_violations"].get<int64_t>(), report.invariant_violations);
}

// --trace: each strategy's simulated run is a trace run whose vmstat_update
// slices on isolated CPUs (each an interruption of the RT task) are exactly
// the experiment's isolated_interruptions; the file is valid JSON.
TEST(VmstatExperiment, TraceInterruptionSlicesMatchTheCount) {
  VmstatExperimentOptions vmstat_options;
  vmstat_options.strategies = {"A0", "B"};
  vmstat_options.host_iterations = 200;
  const std::string path =
      ::testing::TempDir() + "/vmstat_trace." + std::to_string(getpid()) + ".json";
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto file, TraceFile::Create(path, TraceFileOptions{}));
  CommonOptions options;
  options.quick = true;
  options.trace = file.get();
  Progress progress("vmstat");
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto report,
                                 RunVmstatExperiment(options, vmstat_options, progress));
  ISOLATION_ASSERT_OK(file->Close());
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  const nlohmann::json t = nlohmann::json::parse(ss.str());
  EXPECT_EQ(t["otherData"]["truncated"], "false");
  std::map<int, std::string> strategy_of;  // pid -> strategy
  std::map<int, std::set<int>> isolated;   // pid -> isolated CPUs (track names)
  for (const auto& e : t["traceEvents"]) {
    if (e["ph"] != "M") continue;
    const int pid = e["pid"].get<int>();
    if (e["name"] == "process_name") {
      const std::string name = e["args"]["name"];
      strategy_of[pid] = name.substr(std::string("vmstat ").size(),
                                     name.find(':') - std::string("vmstat ").size());
    }
    if (e["name"] == "thread_name" &&
        e["args"]["name"].get<std::string>().find("isolated") != std::string::npos) {
      isolated[pid].insert(e["tid"].get<int>() - 1);
    }
  }
  ASSERT_EQ(strategy_of.size(), 2u);
  std::map<std::string, int64_t> slices;
  for (const auto& e : t["traceEvents"]) {
    if (e["ph"] != "X" || e["name"] != "vmstat_update") continue;
    const int pid = e["pid"].get<int>();
    if (!isolated[pid].count(e["tid"].get<int>() - 1)) continue;
    EXPECT_TRUE(e.contains("args") && e["args"].contains("interrupted")) << e.dump();
    ++slices[strategy_of[pid]];
  }
  for (const auto& s : report.json["strategies"]) {
    EXPECT_EQ(slices[s["strategy"].get<std::string>()], s["isolated_interruptions"].get<int64_t>())
        << s.dump();
  }
  EXPECT_GT(slices["A0"], 0);
  EXPECT_EQ(slices["B"], 0);
  if (!HasFailure()) std::remove(path.c_str());
}

}  // namespace
}  // namespace isolation::experiments
