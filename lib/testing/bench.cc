// SPDX-License-Identifier: GPL-2.0-or-later
#include "isolation/testing/bench.h"

#include <chrono>
#include <string>

#include "absl/strings/str_cat.h"

namespace isolation::testing {

void CompareToBaseline(benchmark::State& state, absl::FunctionRef<void(int64_t n)> subject,
                       absl::FunctionRef<void(int64_t n)> baseline, std::string_view baseline_name,
                       int64_t batch) {
  if (batch < 1) {
    state.SkipWithError(absl::StrCat("CompareToBaseline: batch ", batch, " < 1").c_str());
    return;
  }
  using Clock = std::chrono::steady_clock;
  double subject_s = 0;
  double baseline_s = 0;
  double clock_s = 0;
  int64_t batches = 0;
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
    const double empty = std::chrono::duration<double>(t3 - t2).count();
    subject_s += s;
    baseline_s += std::chrono::duration<double>(t2 - t1).count();
    clock_s += empty;
    ++batches;
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
}

}  // namespace isolation::testing
