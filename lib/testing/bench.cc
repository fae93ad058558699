// SPDX-License-Identifier: GPL-2.0-or-later
#include "isolation/testing/bench.h"

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <ctime>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"

namespace isolation::testing {
namespace {

double MinOf(const std::vector<double>& v) {
  return v.empty() ? 0.0 : *std::min_element(v.begin(), v.end());
}
double MedianOf(std::vector<double> v) {  // by value: nth_element reorders it
  if (v.empty()) return 0.0;
  const auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  return *mid;
}

}  // namespace

void PairedBatchSpread::Add(double subject_ns, double baseline_ns, double empty_ns) {
  subject_ns_.push_back(subject_ns);
  baseline_ns_.push_back(baseline_ns);
  empty_ns_sum_ += empty_ns;
}

PairedBatchSpread::Summary PairedBatchSpread::Summarize(int64_t ops_per_batch) const {
  Summary out;
  if (subject_ns_.empty() || ops_per_batch < 1) return out;
  const double clock = empty_ns_sum_ / static_cast<double>(subject_ns_.size());
  std::vector<double> subject, baseline, ratios;
  subject.reserve(subject_ns_.size());
  baseline.reserve(subject_ns_.size());
  ratios.reserve(subject_ns_.size());
  for (size_t i = 0; i < subject_ns_.size(); ++i) {
    const double s = subject_ns_[i] - clock;
    const double b = baseline_ns_[i] - clock;
    subject.push_back(s);
    baseline.push_back(b);
    // A batch below the clock's resolution on either side has no ratio.
    if (s > 0 && b > 0) ratios.push_back(s / b);
  }
  const double ops = static_cast<double>(ops_per_batch);
  out.subject_min_ns = MinOf(subject) / ops;
  out.subject_median_ns = MedianOf(subject) / ops;
  out.baseline_min_ns = MinOf(baseline) / ops;
  out.baseline_median_ns = MedianOf(baseline) / ops;
  out.ratio_median = MedianOf(ratios);
  // The floors' ratio: one batch's noise moves a per-batch ratio's minimum,
  // not both sides' minima.
  out.ratio_of_minimums = out.subject_min_ns > 0 && out.baseline_min_ns > 0
                              ? out.subject_min_ns / out.baseline_min_ns
                              : 0.0;
  return out;
}

void PairedBatchSpread::Report(benchmark::State& state, std::string_view baseline_name,
                               int64_t ops_per_batch) const {
  if (subject_ns_.empty() || ops_per_batch < 1) return;
  const Summary m = Summarize(ops_per_batch);
  const std::string b(baseline_name);
  state.counters["ns_per_op_min"] = m.subject_min_ns;
  state.counters["ns_per_op_median"] = m.subject_median_ns;
  state.counters[b + "_ns_per_op_min"] = m.baseline_min_ns;
  state.counters[b + "_ns_per_op_median"] = m.baseline_median_ns;
  state.counters["ratio_median"] = m.ratio_median;
  state.counters["ratio_of_minimums"] = m.ratio_of_minimums;
}

namespace {

// The clocks BenchClock names, as std::chrono clocks: the loop below reads
// one inline, so both sides' intervals hold the same read.
struct ThreadCpuClock {
  using duration = std::chrono::nanoseconds;
  using rep = duration::rep;
  using period = duration::period;
  using time_point = std::chrono::time_point<ThreadCpuClock>;
  static time_point now() noexcept {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return time_point(duration(static_cast<rep>(ts.tv_sec) * 1000000000 + ts.tv_nsec));
  }
};

template <typename Clock>
void ComparePaired(benchmark::State& state, absl::FunctionRef<void(int64_t n)> subject,
                   absl::FunctionRef<void(int64_t n)> baseline, std::string_view baseline_name,
                   int64_t batch) {
  double subject_s = 0;
  double baseline_s = 0;
  double clock_s = 0;
  int64_t batches = 0;
  PairedBatchSpread spread;
  // Warm both up once so that the first timed batch does not pay cold caches
  // for one side only.
  subject(batch);
  baseline(batch);
  for (auto _ : state) {
    const auto t0 = Clock::now();
    subject(batch);
    const auto t1 = Clock::now();
    baseline(batch);
    const auto t2 = Clock::now();
    const auto t3 = Clock::now();  // an empty interval: the clock's own cost
    const double s = std::chrono::duration<double>(t1 - t0).count();
    const double b = std::chrono::duration<double>(t2 - t1).count();
    const double empty = std::chrono::duration<double>(t3 - t2).count();
    subject_s += s;
    baseline_s += b;
    clock_s += empty;
    ++batches;
    spread.Add(s * 1e9, b * 1e9, empty * 1e9);
    state.SetIterationTime(s > empty ? s - empty : 0.0);
  }
  if (batches == 0) return;
  // Each timed interval holds one clock read's cost besides its batch (from
  // the sample in one read to the sample in the next), which biases the
  // ratio towards 1; the mean empty interval takes it out of both sides.
  subject_s -= clock_s;
  baseline_s -= clock_s;
  const double ops = static_cast<double>(batches) * static_cast<double>(batch);
  const double subject_ns = subject_s * 1e9 / ops;
  const double baseline_ns = baseline_s * 1e9 / ops;
  state.SetItemsProcessed(static_cast<int64_t>(ops));
  state.counters["ns_per_op"] = subject_ns;
  state.counters["clock_read_ns"] = clock_s * 1e9 / static_cast<double>(batches);
  state.counters[std::string(baseline_name) + "_ns_per_op"] = baseline_ns;
  state.counters["ratio_to_" + std::string(baseline_name)] =
      baseline_ns > 0 && subject_ns > 0 ? subject_ns / baseline_ns
                                        : 0.0;  // 0: below the clock's resolution
  spread.Report(state, baseline_name, batch);
}

}  // namespace

void CompareToBaseline(benchmark::State& state, absl::FunctionRef<void(int64_t n)> subject,
                       absl::FunctionRef<void(int64_t n)> baseline, std::string_view baseline_name,
                       int64_t batch, BenchClock clock) {
  if (batch < 1) {
    state.SkipWithError(absl::StrCat("CompareToBaseline: batch ", batch, " < 1").c_str());
    return;
  }
  switch (clock) {
    case BenchClock::kSteady:
      return ComparePaired<std::chrono::steady_clock>(state, subject, baseline, baseline_name,
                                                      batch);
    case BenchClock::kThreadCpu:
      return ComparePaired<ThreadCpuClock>(state, subject, baseline, baseline_name, batch);
  }
  state.SkipWithError(
      absl::StrCat("CompareToBaseline: unknown clock ", static_cast<int>(clock)).c_str());
}

}  // namespace isolation::testing
