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
// thread-local increment, an s8 load + store through memory (what a host
// that renames only wider accesses makes the floor of an s8 counter), a
// locked fetch_add, an empty indirect call -- and
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
#include <vector>

#include "absl/functional/function_ref.h"
#include "benchmark/benchmark.h"

namespace isolation::testing {

// The clock a paired comparison reads.  kSteady (wall time) is the default;
// kThreadCpu (CLOCK_THREAD_CPUTIME_ID) leaves out the time the thread spent
// preempted, for a shared host where another process's slice would land in
// one side's batch; it reads slower (a system call where the steady clock
// is a vDSO read), which the empty interval takes out.
enum class BenchClock { kSteady, kThreadCpu };

// Runs `subject(batch)` and `baseline(batch)` alternately once per benchmark
// iteration, timing each with `clock`; counters ns_per_op,
// <baseline>_ns_per_op, ratio_to_<baseline> (totals), clock_read_ns, and the
// per-batch spread of PairedBatchSpread.  Each callable must perform
// exactly `n` operations and keep their results observable
// (benchmark::DoNotOptimize).  REQUIRES: the benchmark uses manual time;
// batch >= 1.
void CompareToBaseline(benchmark::State& state, absl::FunctionRef<void(int64_t n)> subject,
                       absl::FunctionRef<void(int64_t n)> baseline,
                       std::string_view baseline_name = "baseline", int64_t batch = 256,
                       BenchClock clock = BenchClock::kSteady);

// The per-batch figures of a paired comparison, beside the totals: a host
// whose baseline is bimodal (a thread-local increment at 0.36 or 0.67 ns on
// one Zen 3 guest, by where the loop lands) shows it as a minimum well below
// the median instead of averaging it in.  Add() one batch's subject and
// baseline intervals and the empty interval timed beside them, as read;
// Report() takes the mean empty interval (the clock read each interval
// holds: one batch's own empty interval varies too much to subtract) out of
// every batch and sets, per operation, ns_per_op_min / _median,
// <baseline>_ns_per_op_min / _median, ratio_median (the median batch's
// ratio) and ratio_of_minimums (the two floors' ratio).  Memory: three
// doubles per batch.  Used by CompareToBaseline.
class PairedBatchSpread {
 public:
  // Per operation; 0 where there is nothing to say (no batch, or a ratio
  // whose side is below the clock's resolution).
  struct Summary {
    double subject_min_ns = 0, subject_median_ns = 0;
    double baseline_min_ns = 0, baseline_median_ns = 0;
    double ratio_median = 0, ratio_of_minimums = 0;
  };
  void Add(double subject_ns, double baseline_ns, double empty_ns);
  Summary Summarize(int64_t ops_per_batch) const;
  void Report(benchmark::State& state, std::string_view baseline_name, int64_t ops_per_batch) const;

 private:
  std::vector<double> subject_ns_, baseline_ns_;
  double empty_ns_sum_ = 0;
};

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
  HostLimit owner_byte_update;  // an s8's relaxed load + store, alternating +1 / -1
  HostLimit locked_fetch_add;
  HostLimit empty_indirect_call;
};
// About 20 ms: each loop 15 times over 2^16 operations, after a warm-up.
HostLimits MeasureHostLimits();
// MeasureHostLimits() as context entries: host_cpu, and host_<loop>_ns as
// "min M median D" for thread_local_increment, owner_byte_update,
// locked_fetch_add and empty_indirect_call.
void AddHostLimitsContext();
// benchmark::Initialize, the unrecognised-argument check (exit status 1),
// AddHostLimitsContext, RunSpecifiedBenchmarks and Shutdown; returns the
// exit status.
int BenchmarkMain(int argc, char** argv);

}  // namespace isolation::testing

#endif  // ISOLATION_TESTING_BENCH_H_
