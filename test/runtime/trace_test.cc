// SPDX-License-Identifier: GPL-2.0-or-later
// Chrome trace writer (trace.h) on both drivers: the file is valid JSON, each
// track is ordered and its slices nest, the interruption slices of a CPU are
// the driver's own interruption count, the bound truncates and says so, the
// CPU filter, and the argument errors.

#include "isolation/runtime/trace.h"

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "gtest/gtest.h"
#include "isolation/runtime/real_driver.h"
#include "isolation/runtime/sim.h"
#include "isolation/testing/machine.h"
#include "isolation/testing/status_matchers.h"
#include "test_util.h"

namespace isolation {
namespace {

using ::isolation::testing::MachineBuilder;

using runtime_testing::Spec;

std::string TempPath(const std::string& name) {
  return ::testing::TempDir() + "/" + name + "." + std::to_string(getpid()) + ".json";
}

nlohmann::json ReadJson(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  // Throws (fails the test) on invalid JSON.
  return nlohmann::json::parse(ss.str());
}

// Per (pid, tid): timestamps non-decreasing; complete slices nest.
void ExpectOrderedAndNested(const nlohmann::json& trace) {
  std::map<std::pair<int, int>, double> last_ts;
  std::map<std::pair<int, int>, std::vector<double>> open_ends;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] == "M") continue;
    const auto key = std::make_pair(e["pid"].get<int>(), e["tid"].get<int>());
    const double ts = e["ts"].get<double>();
    auto it = last_ts.find(key);
    if (it != last_ts.end()) {
      EXPECT_GE(ts, it->second) << e.dump();
    }
    last_ts[key] = ts;
    if (e["ph"] != "X") continue;
    const double end = ts + e["dur"].get<double>();
    std::vector<double>& ends = open_ends[key];
    while (!ends.empty() && ends.back() <= ts + 1e-6) ends.pop_back();  // (us as doubles)
    if (!ends.empty()) {
      EXPECT_LE(end, ends.back() + 1e-6) << "slice outlives its parent: " << e.dump();
    }
    ends.push_back(end);
  }
}

// Interruption slices (args.interrupted) per CPU of run `pid`.
std::map<int, int64_t> InterruptionSlices(const nlohmann::json& trace, int pid) {
  std::map<int, int64_t> n;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] != "X" || e["pid"] != pid) continue;
    if (e.contains("args") && e["args"].contains("interrupted")) ++n[e["tid"].get<int>() - 1];
  }
  return n;
}

// Two busy tasks on isolated CPU 1 (so the tick preempts), one that sleeps
// on CPU 0, per-CPU work on CPU 1 and a timer on CPU 2.
void Populate(Driver& d) {
  ISOLATION_ASSERT_OK(
      d.Spawn(Spec("hog", 1, [](TaskContext&) { return Step::Run(2 * kNsPerMs); })));
  ISOLATION_ASSERT_OK(
      d.Spawn(Spec("hog2", 1, [](TaskContext&) { return Step::Run(2 * kNsPerMs); })));
  ASSERT_TRUE(d.Spawn(Spec("sleeper", 0, [n = 0](TaskContext& ctx) mutable {
                 if (n++ % 2 == 0) {
                   ctx.Syscall([](CpuContext& k) { k.Charge(3 * kNsPerUs); }, 2 * kNsPerUs);
                   return Step::Run(300 * kNsPerUs);
                 }
                 return Step::Sleep(700 * kNsPerUs);
               })).ok());
  for (int i = 1; i <= 20; ++i) {
    d.QueueWorkOn(1, i * 500 * kNsPerUs, [](CpuContext& ctx) { ctx.Charge(5 * kNsPerUs); });
  }
  d.ArmTimer(2, 3 * kNsPerMs, [](CpuContext& ctx) { ctx.Charge(kNsPerUs); });
}

TEST(Trace, SimulatorTraceIsValidOrderedAndCountsInterruptions) {
  const std::string path = TempPath("sim_trace");
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto file, TraceFile::Create(path, TraceFileOptions{}));
  ISOLATION_ASSERT_OK_AND_ASSIGN(
      auto sim, MachineBuilder().Topology("core:4 pu:1").Isolcpus("1-3").Simulator());
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto run,
                                 file->StartRun({"sim run", 4, TraceCpuRoles(sim->isolation())}));
  run->Attach(*sim);
  Populate(*sim);
  ISOLATION_ASSERT_OK(sim->RunFor(20 * kNsPerMs));
  run->Finish(sim->Now());
  ISOLATION_ASSERT_OK(file->Close());

  const nlohmann::json t = ReadJson(path);
  ASSERT_TRUE(t.contains("traceEvents"));
  EXPECT_EQ(t["otherData"]["truncated"], "false");
  // A named track per CPU, with its role.
  std::map<int, std::string> tracks;
  for (const auto& e : t["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "thread_name")
      tracks[e["tid"].get<int>() - 1] = e["args"]["name"];
  }
  ASSERT_EQ(tracks.size(), 4u);
  EXPECT_EQ(tracks[0], "CPU 000 (housekeeping)");
  EXPECT_EQ(tracks[1], "CPU 001 (isolated)");
  ExpectOrderedAndNested(t);
  // Every interruption the driver counted is one slice, CPU by CPU.
  const std::map<int, int64_t> slices = InterruptionSlices(t, 1);
  int64_t total = 0;
  for (int cpu = 0; cpu < 4; ++cpu) {
    const int64_t want = sim->Stats(cpu).interruptions;
    EXPECT_EQ(slices.count(cpu) ? slices.at(cpu) : 0, want) << "cpu " << cpu;
    total += want;
  }
  EXPECT_GT(total, 20);  // the work items and ticks on CPU 1 at least
  // What the CPUs ran: both hogs on CPU 1, idle periods on CPU 3, the timer.
  std::map<std::string, int> names;
  for (const auto& e : t["traceEvents"]) {
    if (e["ph"] == "X") ++names[e["cat"].get<std::string>() + ":" + e["name"].get<std::string>()];
  }
  EXPECT_GT(names["task:hog"], 1);
  EXPECT_GT(names["task:hog2"], 1);
  EXPECT_GT(names["idle:idle"], 0);
  EXPECT_EQ(names["timer:timer"], 1);
  EXPECT_EQ(names["kworker:kworker"], 20);
  EXPECT_GT(names["syscall:syscall"], 5);
  EXPECT_GT(names["tick:tick"], 10);
  std::remove(path.c_str());
}

TEST(Trace, BoundTruncatesAndTheFileSaysSo) {
  const std::string path = TempPath("bounded");
  TraceFileOptions o;
  o.max_events = 60;
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto file, TraceFile::Create(path, o));
  ISOLATION_ASSERT_OK_AND_ASSIGN(
      auto sim, MachineBuilder().Topology("core:4 pu:1").Isolcpus("1-3").Simulator());
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto run, file->StartRun({"bounded run", 4, {}}));
  run->Attach(*sim);
  Populate(*sim);
  ISOLATION_ASSERT_OK(sim->RunFor(20 * kNsPerMs));
  run->Finish(sim->Now());
  EXPECT_GT(run->dropped(), 0);
  ISOLATION_ASSERT_OK(file->Close());
  const nlohmann::json t = ReadJson(path);  // still valid JSON
  int events = 0;
  bool marker = false;
  std::string process;
  for (const auto& e : t["traceEvents"]) {
    if (e["ph"] == "M") {
      if (e["name"] == "process_name") process = e["args"]["name"];
      continue;
    }
    if (e["cat"] == "trace") {
      marker = true;
      continue;
    }
    ++events;
  }
  EXPECT_LE(events, 60);
  EXPECT_GT(events, 0);
  EXPECT_TRUE(marker) << "no 'trace truncated' event";
  EXPECT_NE(process.find("truncated"), std::string::npos) << process;
  EXPECT_EQ(t["otherData"]["truncated"], "true");
  EXPECT_TRUE(t["isolation"]["runs"][0]["truncated"].get<bool>());
  EXPECT_GT(t["isolation"]["runs"][0]["dropped"].get<int64_t>(), 0);
  ExpectOrderedAndNested(t);
  std::remove(path.c_str());
}

TEST(Trace, CpuFilterKeepsOnlyThoseTracks) {
  const std::string path = TempPath("filter");
  TraceFileOptions o;
  o.cpus = *CpuMask::Parse("1", kMaxCpus);
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto file, TraceFile::Create(path, o));
  ISOLATION_ASSERT_OK_AND_ASSIGN(
      auto sim, MachineBuilder().Topology("core:4 pu:1").Isolcpus("1-3").Simulator());
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto run, file->StartRun({"filtered", 4, {}}));
  run->Attach(*sim);
  Populate(*sim);
  ISOLATION_ASSERT_OK(sim->RunFor(10 * kNsPerMs));
  run->Finish(sim->Now());
  ISOLATION_ASSERT_OK(file->Close());
  const nlohmann::json t = ReadJson(path);
  int on_cpu1 = 0;
  for (const auto& e : t["traceEvents"]) {
    if (!e.contains("tid")) continue;
    EXPECT_EQ(e["tid"], 2) << e.dump();
    if (e["ph"] != "M") ++on_cpu1;
  }
  EXPECT_GT(on_cpu1, 10);
  std::remove(path.c_str());
}

TEST(Trace, SlicesThatOutliveTheirParentAreClipped) {
  const std::string path = TempPath("clip");
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto file, TraceFile::Create(path, TraceFileOptions{}));
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto run, file->StartRun({"manual", 1, {}}));
  TraceRun& r = *run;
  r.CpuRuns(0, 0, 7, "a");
  r.Activity(0, 900, 1300, kTraceTick, "tick", 7);  // task a ends at 1000
  r.CpuRuns(0, 1000, 8, "b");
  r.Instant(0, 1100, "x.event", {{"k", 3}});
  r.Finish(2000);
  ISOLATION_ASSERT_OK(file->Close());
  const nlohmann::json t = ReadJson(path);
  ExpectOrderedAndNested(t);
  EXPECT_EQ(t["isolation"]["runs"][0]["clipped_slices"], 1);
  bool saw_instant = false;
  for (const auto& e : t["traceEvents"]) {
    if (e["name"] == "tick") {
      EXPECT_DOUBLE_EQ(e["dur"].get<double>(), 0.1);  // 900..1000 ns
    }
    if (e["name"] == "x.event") {
      saw_instant = true;
      EXPECT_EQ(e["cat"], "x");
      EXPECT_EQ(e["args"]["k"], 3);
    }
  }
  EXPECT_TRUE(saw_instant);
  std::remove(path.c_str());
}

TEST(Trace, BadArgumentsNameTheValue) {
  auto bad_path = TraceFile::Create("/nonexistent-dir/for/trace.json", TraceFileOptions{});
  ASSERT_FALSE(bad_path.ok());
  EXPECT_EQ(bad_path.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad_path.status().message().find("/nonexistent-dir/for/trace.json"), std::string::npos);
  for (int64_t m : {int64_t{0}, int64_t{-1}, kMaxTraceEvents + 1}) {
    TraceFileOptions o;
    o.max_events = m;
    auto f = TraceFile::Create(TempPath("bad"), o);
    ASSERT_FALSE(f.ok());
    EXPECT_NE(f.status().message().find(std::to_string(m)), std::string::npos) << f.status();
  }
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto file,
                                 TraceFile::Create(TempPath("runs"), TraceFileOptions{}));
  EXPECT_FALSE(file->StartRun({"none", 0, {}}).ok());
  EXPECT_FALSE(file->StartRun({"roles", 2, {"a"}}).ok());
  ISOLATION_ASSERT_OK(file->Close());
  EXPECT_FALSE(file->StartRun({"late", 2, {}}).ok());
}

TEST(Trace, PlannedRunsShareTheBound) {
  const std::string path = TempPath("share");
  TraceFileOptions o;
  o.max_events = 1000;
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto file, TraceFile::Create(path, o));
  file->PlanRuns(4);
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto a, file->StartRun({"a", 1, {}}));
  EXPECT_EQ(a->budget(), 250);
  a->Finish(0);  // used 0: the rest is shared by the 3 left
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto b, file->StartRun({"b", 1, {}}));
  EXPECT_EQ(b->budget(), 333);
  b->Finish(0);
  // Phases (isolab reproduce: one per experiment) split what is left first.
  file->BeginPhase(2);
  file->PlanRuns(2);
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto c, file->StartRun({"c", 1, {}}));
  EXPECT_EQ(c->budget(), 250);
  c->Finish(0);
  file->BeginPhase(1);
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto d, file->StartRun({"d", 1, {}}));
  EXPECT_EQ(d->budget(), 1000);
  ISOLATION_ASSERT_OK(file->Close());
  std::remove(path.c_str());
}

TEST(Trace, RealThreadDriverTraceIsValidAndOrdered) {
  const std::string path = TempPath("real");
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto file, TraceFile::Create(path, TraceFileOptions{}));
  RealDriverOptions ro;
  ro.hz = 1000;
  ISOLATION_ASSERT_OK_AND_ASSIGN(
      auto d, MachineBuilder().Topology("core:2 pu:1").Isolcpus("1").RealThreads(ro));
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto run,
                                 file->StartRun({"real run", 2, TraceCpuRoles(d->isolation())}));
  run->Attach(*d);
  ISOLATION_ASSERT_OK(d->Spawn(Spec("spin", 1, [](TaskContext&) { return Step::Run(kNsPerMs); })));
  ASSERT_TRUE(d->Spawn(Spec("napper", 0, [n = 0](TaskContext&) mutable {
                 return n++ % 2 == 0 ? Step::Run(100 * kNsPerUs) : Step::Sleep(kNsPerMs);
               })).ok());
  for (int i = 1; i <= 10; ++i) d->QueueWorkOn(1, i * kNsPerMs, [](CpuContext&) {});
  ISOLATION_ASSERT_OK(d->RunFor(60 * kNsPerMs));
  run->Finish(d->Now());
  ISOLATION_ASSERT_OK(file->Close());
  const nlohmann::json t = ReadJson(path);
  ExpectOrderedAndNested(t);
  std::map<int, int> per_track;
  int kworkers = 0;
  for (const auto& e : t["traceEvents"]) {
    if (e["ph"] == "M") continue;
    ++per_track[e["tid"].get<int>()];
    if (e["ph"] == "X" && e["cat"] == "kworker") ++kworkers;
  }
  EXPECT_GT(per_track[1], 0);
  EXPECT_GT(per_track[2], 0);
  EXPECT_EQ(kworkers, 10);
  EXPECT_NE(t["isolation"]["runs"][0]["clock"].get<std::string>().find("real threads"),
            std::string::npos);
  if (!HasFailure()) std::remove(path.c_str());
}

}  // namespace
}  // namespace isolation
