// SPDX-License-Identifier: GPL-2.0-or-later
// Replay speed (docs/replay.md, "Speed"):
//   BM_Read/<recording>          the reader alone: events per second.
//   BM_Replay/<mechanism>        the replay of the largest committed recording
//                                with one mechanism's variants: events per
//                                second, and per variant (events_per_s_x_variants).
//   BM_ReplayVsTraceCmdReport    the whole replay (every mechanism, every
//                                variant, the report) against `trace-cmd
//                                report FILE > /dev/null` of the same file,
//                                alternating in each iteration; ratio =
//                                replay / trace-cmd (goal <= 1).
// Build in Release; the recordings are the committed ones (test/data/replay).

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "experiments/replay_experiment.h"
#include "isolation/replay/readers.h"

extern char** environ;

namespace {

using isolation::experiments::CommonOptions;
using isolation::experiments::Progress;
using isolation::experiments::ReplayExperimentOptions;

std::string Data(const std::string& name) {
  return std::string(ISOLATION_REPLAY_DATA_DIR) + "/" + name;
}

// The largest committed recording, decompressed once (trace-cmd reads plain files).
const std::string& PlainPipe() {
  static const std::string path = [] {
    const std::string out = absl::StrCat("/tmp/isolation_replay_bench_pipe_", getpid(), ".dat");
    const std::string cmd = "gzip -dc " + Data("pipe.dat.gz") + " > " + out;
    if (std::system(cmd.c_str()) != 0) return std::string();
    std::atexit([] { std::remove(PlainPipe().c_str()); });
    return out;
  }();
  return path;
}

class CountingSink final : public isolation::replay::EventSink {
 public:
  absl::Status OnInfo(const isolation::replay::RecordingInfo&) override { return absl::OkStatus(); }
  absl::Status OnEvent(const isolation::replay::Event& e) override {
    benchmark::DoNotOptimize(e.time);
    ++events;
    return absl::OkStatus();
  }
  int64_t events = 0;
};

void BM_Read(benchmark::State& state, const std::string& file) {
  int64_t events = 0;
  for (auto _ : state) {
    CountingSink sink;
    if (absl::Status s = isolation::replay::ReadTrace(file, {}, sink); !s.ok()) {
      state.SkipWithError(std::string(s.message()).c_str());
      return;
    }
    events += sink.events;
  }
  state.SetItemsProcessed(events);
  state.counters["events_per_s"] =
      benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
}

// One whole replay; returns its event count and the rows it replayed.
int64_t RunReplay(benchmark::State& state, const std::vector<std::string>& mechanisms,
                  int64_t* rows) {
  CommonOptions common;
  ReplayExperimentOptions o;
  o.file = PlainPipe();
  o.mechanisms = mechanisms;
  Progress progress("replay");
  absl::StatusOr<isolation::experiments::ExperimentReport> r =
      RunReplayExperiment(common, o, progress);
  if (!r.ok()) {
    state.SkipWithError(std::string(r.status().message()).c_str());
    return 0;
  }
  *rows = 0;
  for (const auto& [name, m] : r->json["mechanisms"].items())
    *rows += static_cast<int64_t>(m.value("rows", nlohmann::json::array()).size());
  return r->json["events"].get<int64_t>();
}

void BM_Replay(benchmark::State& state, const std::string& mechanism) {
  if (PlainPipe().empty()) {
    state.SkipWithError("cannot decompress the recording");
    return;
  }
  int64_t events = 0;
  int64_t rows = 0;
  for (auto _ : state) events += RunReplay(state, {mechanism}, &rows);
  state.SetItemsProcessed(events);
  state.counters["variants"] = static_cast<double>(rows);
  state.counters["events_per_s"] =
      benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
  state.counters["events_per_s_x_variants"] =
      benchmark::Counter(static_cast<double>(events * rows), benchmark::Counter::kIsRate);
}

double TraceCmdReportSeconds(const std::string& file) {
  const auto start = std::chrono::steady_clock::now();
  pid_t pid = 0;
  std::string prog = "/bin/sh", flag = "-c", cmd = "trace-cmd report " + file + " > /dev/null 2>&1";
  char* argv[] = {prog.data(), flag.data(), cmd.data(), nullptr};
  if (posix_spawn(&pid, prog.c_str(), nullptr, nullptr, argv, environ) != 0) return -1;
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return -1;
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void BM_ReplayVsTraceCmdReport(benchmark::State& state) {
  if (PlainPipe().empty() || access("/usr/bin/trace-cmd", X_OK) != 0) {
    state.SkipWithError("needs trace-cmd (apt-get install trace-cmd) and gzip");
    return;
  }
  double replay_s = 0;
  double report_s = 0;
  int64_t events = 0;
  int64_t rows = 0;
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    events = RunReplay(state, {"mm_cid", "tmigr", "idle_select", "vmstat"}, &rows);
    replay_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const double t = TraceCmdReportSeconds(PlainPipe());
    if (t < 0) {
      state.SkipWithError("trace-cmd report failed");
      return;
    }
    report_s += t;
  }
  state.counters["events"] = static_cast<double>(events);
  state.counters["variants"] = static_cast<double>(rows);
  state.counters["replay_ms"] = 1e3 * replay_s / static_cast<double>(state.iterations());
  state.counters["trace_cmd_report_ms"] = 1e3 * report_s / static_cast<double>(state.iterations());
  state.counters["ratio_replay_over_trace_cmd_report"] = replay_s / report_s;
}

}  // namespace

BENCHMARK_CAPTURE(BM_Read, pipe_dat, Data("pipe.dat.gz"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Read, rseq_threads_report_text, Data("rseq_threads.report.txt.gz"))
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Read, perf_script_text, Data("perf_rseq_threads.txt.gz"))
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Replay, mm_cid, std::string("mm_cid"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Replay, tmigr, std::string("tmigr"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Replay, idle_select, std::string("idle_select"))
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Replay, vmstat, std::string("vmstat"))->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ReplayVsTraceCmdReport)->Unit(benchmark::kMillisecond);
