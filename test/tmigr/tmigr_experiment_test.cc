// SPDX-License-Identifier: GPL-2.0-or-later
// `isolab tmigr --quick`: the expected outcomes (JSON keys, v6.9 runs
// housekeeping timers on isolated CPUs 1 and 65 among others, isolation runs
// none there, no lost timers, no invariant violations).

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "experiments/real_model.h"
#include "experiments/tmigr_experiment.h"
#include "gtest/gtest.h"
#include "isolation/core/cpumask.h"
#include "isolation/runtime/trace.h"
#include "isolation/testing/status_matchers.h"

namespace isolation::experiments {
namespace {

TEST(TmigrExperiment, QuickRunMeetsIssueExpectations) {
  TmigrExperimentOptions options;
  options.real_ms = 60;
  Progress progress("tmigr");
  ISOLATION_ASSERT_OK_AND_ASSIGN(
      auto report, RunTmigrExperiment(CommonOptions{.seed = 1, .quick = true}, options, progress));
  const nlohmann::json& j = report.json;
  ASSERT_TRUE(j.contains("variants"));
  ASSERT_EQ(j["variants"].size(), 2u);
  for (const auto& v : j["variants"]) {
    for (const char* key : {"variant", "timers_total", "timers_on_isolated", "timers_lost",
                            "max_lateness_ns", "invariant_violations", "per_cpu_timers"}) {
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
  EXPECT_EQ(report.invariant_violations, 0);
  ASSERT_EQ(report.rows.size(), 1u);
  EXPECT_NE(report.rows[0].kernel_reported.find("1203"), std::string::npos);
}

// The real-thread part runs on the host-sized model (real_model.h) and says
// so in the text, the JSON and the reproduce row; a model larger than the
// host is refused unless allowed, and then every real-thread row is
// labelled OVERSUBSCRIBED.  Short real runs on a small modelled machine.
TEST(TmigrExperiment, RealThreadsRunOnTheHostSizedModel) {
  TmigrExperimentOptions options;
  options.duration_ms = 300;
  options.real_ms = 20;
  Progress progress("tmigr");
  CommonOptions common{
      .topology = "pu:16", .isolcpus = "1-15", .seed = 1, .quick = true, .host_cpus = 2};
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto report, RunTmigrExperiment(common, options, progress));
  const std::string label =
      "real threads: host-sized model, 2 CPUs (housekeeping 0, isolated 1), 1:1 pinning on 2 of 2 "
      "host CPUs";
  EXPECT_NE(report.text.find(label), std::string::npos) << report.text;
  EXPECT_EQ(report.text.find("OVERSUBSCRIBED"), std::string::npos) << report.text;
  const nlohmann::json& m = report.json["real_thread_model"];
  EXPECT_EQ(m["cpus"], 2);
  EXPECT_EQ(m["isolated"], "1");
  EXPECT_EQ(m["oversubscribed"], false);
  EXPECT_EQ(m["label"], label);
  EXPECT_EQ(report.json["real_thread"]["real_thread_model"], m);
  ASSERT_EQ(report.json["real_thread"]["variants"].size(), 2u);
  for (const auto& v : report.json["real_thread"]["variants"]) {
    EXPECT_FALSE(v.contains("error")) << v.dump();
    EXPECT_EQ(v["max_gap_cpu"], 1) << v.dump();
    // Two model CPUs on a host that has at least two: no sharing.
    if (HostUsableCpus() >= 2) {
      EXPECT_EQ(v["oversubscribed"], false) << v.dump();
    }
  }
  ASSERT_EQ(report.rows.size(), 1u);
  EXPECT_NE(report.rows[0].measured.find(label), std::string::npos) << report.rows[0].measured;

  common.host_cpus = 0;  // this host
  common.real_cpus = HostUsableCpus() + 1;
  auto refused = RunTmigrExperiment(common, options, progress);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(refused.status().message()).find("--allow_oversubscribed"),
            std::string::npos)
      << refused.status();

  common.allow_oversubscribed = true;
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto over, RunTmigrExperiment(common, options, progress));
  EXPECT_EQ(over.json["real_thread_model"]["oversubscribed"], true);
  for (const auto& v : over.json["real_thread"]["variants"]) {
    EXPECT_EQ(v["oversubscribed"], true) << v.dump();  // the driver's own view
    EXPECT_NE(over.text.find(absl::StrCat("  OVERSUBSCRIBED ", v["variant"].get<std::string>())),
              std::string::npos)
        << over.text;
  }
  EXPECT_NE(over.rows[0].measured.find("OVERSUBSCRIBED"), std::string::npos)
      << over.rows[0].measured;
}

// --tmigr_bugs re-creates a fixed bug in the modelled run (negative control):
// the run reports it as invariant violations (isolab then exits 1), and an
// unknown bug name is bad input naming the value.
TEST(TmigrExperiment, BugSwitchIsReportedAsViolations) {
  const CommonOptions common{.topology = "pu:16", .isolcpus = "", .seed = 1, .quick = true};
  TmigrExperimentOptions options;
  options.real_ms = 0;
  Progress progress("tmigr");
  options.bugs = {"ghost_timer"};
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto report, RunTmigrExperiment(common, options, progress));
  EXPECT_GT(report.invariant_violations, 0);
  for (const auto& d : report.json["details"])
    EXPECT_GT(d["ghost_timers"].get<int64_t>(), 0) << d.dump();
  options.bugs = {};
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto clean, RunTmigrExperiment(common, options, progress));
  EXPECT_EQ(clean.invariant_violations, 0);
  options.bugs = {"ghost_timer", "frob"};
  auto bad = RunTmigrExperiment(common, options, progress);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(bad.status().message()).find("'frob'"), std::string::npos) << bad.status();
}

// `isolab tmigr --quick --trace=FILE`: valid JSON, a track per CPU of each
// modelled run, pulled-timer events on isolated CPUs under v6.9 and none
// with isolation, and per run as many interruption slices on isolated CPUs
// as the run's own timers_on_isolated.  The real-thread runs' noise meter
// gaps are in the JSON as an rtla histogram whose counts add up.
TEST(TmigrExperiment, QuickTraceShowsPulledTimersOnlyUnderV69) {
  TmigrExperimentOptions tmigr_options;
  tmigr_options.real_ms = 30;
  const std::string path =
      ::testing::TempDir() + "/tmigr_trace." + std::to_string(getpid()) + ".json";
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto file, TraceFile::Create(path, TraceFileOptions{}));
  CommonOptions options;
  options.quick = true;
  options.trace = file.get();
  options.hist.print = true;
  options.hist.no_zero_lines = true;
  Progress progress("tmigr");
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto report, RunTmigrExperiment(options, tmigr_options, progress));
  ISOLATION_ASSERT_OK(file->Close());

  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  const nlohmann::json t = nlohmann::json::parse(ss.str());  // throws if not JSON
  EXPECT_EQ(t["otherData"]["truncated"], "false");
  std::map<int, std::string> run_name;
  std::map<int, std::set<int>> tracks;
  for (const auto& e : t["traceEvents"]) {
    if (e["ph"] != "M") continue;
    if (e["name"] == "process_name") run_name[e["pid"].get<int>()] = e["args"]["name"];
    if (e["name"] == "thread_name") tracks[e["pid"].get<int>()].insert(e["tid"].get<int>() - 1);
  }
  const CpuMask isolated = *CpuMask::Parse("1-31,33-63,65-95,97-127", 128);
  std::map<std::string, int64_t> on_isolated;  // variant -> timers_on_isolated
  for (const auto& v : report.json["variants"]) on_isolated[v["variant"]] = v["timers_on_isolated"];
  int modelled = 0;
  for (const auto& [pid, name] : run_name) {
    if (name.find("modelled") == std::string::npos) continue;
    ++modelled;
    EXPECT_EQ(tracks[pid].size(), 128u) << name;
    const std::string variant = name.find("v6.9") != std::string::npos ? "v6.9" : "isolation";
    int64_t pulled_on_isolated = 0, pulled_elsewhere = 0, interruptions_on_isolated = 0;
    std::map<int, double> last;
    for (const auto& e : t["traceEvents"]) {
      if (e["ph"] == "M" || e["pid"] != pid) continue;
      const int cpu = e["tid"].get<int>() - 1;
      const double ts = e["ts"].get<double>();
      EXPECT_GE(ts, last[cpu]) << e.dump();
      last[cpu] = ts;
      if (e["name"] == "tmigr.remote_expiry")
        (isolated.Test(cpu) ? pulled_on_isolated : pulled_elsewhere)++;
      if (e["ph"] == "X" && isolated.Test(cpu) && e.contains("args") &&
          e["args"].contains("interrupted")) {
        ++interruptions_on_isolated;
      }
    }
    EXPECT_EQ(interruptions_on_isolated, on_isolated[variant]) << name;
    if (variant == "v6.9") {
      EXPECT_GT(pulled_on_isolated, 0) << name;
    } else {
      EXPECT_EQ(pulled_on_isolated, 0) << name;
      EXPECT_GT(pulled_elsewhere, 0) << name;  // housekeeping CPUs pull instead
    }
  }
  EXPECT_EQ(modelled, 2);
  // The noise meter's histogram (JSON always): counts add up to the samples.
  for (const auto& v : report.json["real_thread"]["variants"]) {
    ASSERT_TRUE(v.contains("noise_histogram")) << v.dump();
    const auto& c = v["noise_histogram"]["cpus"][0];
    EXPECT_EQ(c["cpu"], 1);
    int64_t sum = c["over"].get<int64_t>();
    for (const auto& b : c["buckets"]) sum += b[1].get<int64_t>();
    EXPECT_EQ(sum, c["count"].get<int64_t>());
    EXPECT_GT(c["count"].get<int64_t>(), 0);
  }
  EXPECT_NE(report.text.find("# RTLA osnoise histogram"), std::string::npos) << report.text;
  EXPECT_NE(report.text.find("Index   CPU-001"), std::string::npos) << report.text;
  if (!HasFailure()) std::remove(path.c_str());
}

}  // namespace
}  // namespace isolation::experiments
