// SPDX-License-Identifier: GPL-2.0-or-later
// -----------------------------------------------------------------------------
// testing/bench.h
// -----------------------------------------------------------------------------
//
// Google Benchmark helpers of the conformance kit (`isolation::testing`):
// time a variant's operation and a baseline's in the same run, interleaved,
// and report the ratio as a counter.  Ratios taken this way carry over from
// one host to another far better than absolute times, and interleaving the
// two in alternating batches cancels most frequency and noise drift.
//
//   void BM_MySelect(benchmark::State& state) {
//     ... set up mine and mainline ...
//     isolation::testing::CompareToBaseline(
//         state, [&](int64_t n) { for (int64_t i = 0; i < n; ++i) Use(mine.Select(...)); },
//         [&](int64_t n) { for (int64_t i = 0; i < n; ++i) Use(mainline.Select(...)); },
//         "V0");
//   }
//   BENCHMARK(BM_MySelect)->UseManualTime();   // UseManualTime is required
//
// Counters: `ns_per_op` (the subject), `<baseline>_ns_per_op`, and
// `ratio_to_<baseline>` = subject / baseline, each side less the cost of
// the clock read its interval holds (an empty interval is timed in every
// iteration; `clock_read_ns` is its mean): left in, it would add the same
// time to both sides and pull the ratio towards 1.  The benchmark's own time is
// the subject's (manual time), so Google Benchmark's "Time" column and its
// JSON are the subject's cost per batch; `items_per_second` counts
// operations.
//
// The host a figure came from: MeasureHostLimits() times, in a few
// milliseconds, what a hot path is judged against on this host -- a
// thread-local increment, a locked fetch_add, an empty indirect call -- and
// reads the CPU model; AddHostLimitsContext() puts them into Google
// Benchmark's context (printed above the table, in the JSON's "context").
// BenchmarkMain() is Google Benchmark's main() with that context added; the
// project's benchmark programs end in it, after registering what they
// register at run time:
//   int main(int argc, char** argv) { return isolation::testing::BenchmarkMain(argc, argv); }
//
// Kernel counterpart: none.  Thread-safety: call from the benchmark's
// thread; the callables run on it.  MeasureHostLimits runs on the calling
// thread, where it is.

#ifndef ISOLATION_TESTING_BENCH_H_
#define ISOLATION_TESTING_BENCH_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/functional/function_ref.h"
#include "benchmark/benchmark.h"

namespace isolation::testing {

// Runs `subject(batch)` and `baseline(batch)` alternately once per benchmark
// iteration, timing each with a steady clock.  Each callable must perform
// exactly `n` operations and keep their results observable
// (benchmark::DoNotOptimize).  REQUIRES: the benchmark uses manual time;
// batch >= 1.
void CompareToBaseline(benchmark::State& state, absl::FunctionRef<void(int64_t n)> subject,
                       absl::FunctionRef<void(int64_t n)> baseline,
                       std::string_view baseline_name = "baseline", int64_t batch = 256);

// One calibration loop's figures, per operation: the minimum over the
// repetitions (the host's floor) and their median (what a loop usually
// gets; a bimodal host shows as median well above minimum).
struct HostLimit {
  double min_ns = 0;
  double median_ns = 0;
};
struct HostLimits {
  std::string cpu_model;  // /proc/cpuinfo's "model name" and, on x86, family and model
  HostLimit thread_local_increment;
  HostLimit locked_fetch_add;
  HostLimit empty_indirect_call;
};
// About 20 ms: each loop 15 times over 2^16 operations, after a warm-up.
HostLimits MeasureHostLimits();
// MeasureHostLimits() as context entries: host_cpu, and host_<loop>_ns as
// "min M median D" for thread_local_increment, locked_fetch_add and
// empty_indirect_call.
void AddHostLimitsContext();
// benchmark::Initialize, the unrecognised-argument check (exit status 1),
// AddHostLimitsContext, RunSpecifiedBenchmarks and Shutdown; returns the
// exit status.
int BenchmarkMain(int argc, char** argv);

}  // namespace isolation::testing

#endif  // ISOLATION_TESTING_BENCH_H_
