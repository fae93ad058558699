// SPDX-License-Identifier: GPL-2.0-or-later
// -----------------------------------------------------------------------------
// noise_meter.h
// -----------------------------------------------------------------------------
//
// An oslat-style noise meter: spin reading the clock and record every gap
// between consecutive reads (min/avg/max and a histogram of 1 us buckets,
// overflow in the last), so an experiment can show how much a mechanism
// disturbs an isolated CPU.
//
// Counterpart: rt-tests oslat (src/oslat/oslat.c): same bucket semantics
// (bucket k counts gaps in [k, k+1) us, the last bucket includes overflows).
// The histogram can also be shaped and printed as `rtla osnoise hist` does
// (tools/tracing/rtla/src/osnoise_hist.c): `entries` buckets of
// `bucket_size_us` (a gap of d ns lands in bucket (d / 1000) / bucket_size)
// plus an "over" count, and FormatRtlaHistogram() prints one column per CPU
// ("Index   CPU-001 ...") and the over/count/min/avg/max rows, in
// microseconds truncated like rtla's (duration / 1000).
//
// Two ways to use it:
//   - NoiseMeter::Spin(duration) on the calling thread (pin it first);
//   - NoiseMeter::MakeTaskBody() as a task on either driver: in the real
//     driver it spins in slices and records real gaps, including time the CPU
//     thread spent in ticks/work between slices; in the simulator it records
//     the modelled interruptions of the task.
//
// Thread safety: one NoiseMeter per measuring thread; Result() may be called
// after the measuring thread is done (or joined).

#ifndef ISOLATION_NOISE_METER_H_
#define ISOLATION_NOISE_METER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "isolation/core/clock.h"
#include "isolation/core/driver.h"

namespace isolation {

// Histogram shape, as rtla's --bucket-size and --entries.
struct NoiseHistogramOptions {
  int bucket_size_us = 1;  // [1, 999999] (rtla: > 0 and < 1000000)
  int entries = 256;       // [10, 1000000] (rtla allows up to 9999999; capped here for memory)
};
// Errors (InvalidArgument) name the field and value.
absl::Status ValidateNoiseHistogram(const NoiseHistogramOptions& options);

struct NoiseResult {
  int64_t samples = 0;
  Nanos min_ns = 0;
  double avg_ns = 0;
  Nanos max_ns = 0;
  Nanos duration_ns = 0;
  // entries + 1 counts: bucket k = gaps in [k, k+1) x bucket_size_us; the
  // last one is the overflow ("over"), gaps >= entries x bucket_size_us.
  // The sum of all of them is `samples`.
  std::vector<int64_t> histogram_us;
  int bucket_size_us = 1;
  int entries = 0;
  // rtla's summary: gaps in whole microseconds (ns / 1000, truncated).
  int64_t min_us = 0;
  int64_t max_us = 0;
  int64_t sum_us = 0;
  int64_t over() const { return histogram_us.empty() ? 0 : histogram_us.back(); }
  std::string ToString() const;  // oslat-like text summary
};

class NoiseMeter {
 public:
  // Histogram size bound: 1 us buckets over one second (oslat's default is 32).
  static constexpr int kMaxBuckets = 1'000'000;
  // oslat's shape: `buckets` 1-us buckets, the last including overflows
  // (entries = buckets - 1 plus "over").  Errors: buckets outside
  // [2, kMaxBuckets] (InvalidArgument naming it).
  static absl::StatusOr<NoiseMeter> Create(int buckets);
  // REQUIRES: 2 <= buckets <= kMaxBuckets (contract-checked, contract.h);
  // without contract checks a value outside is clamped into the range.  Use
  // Create() for a value from outside.
  explicit NoiseMeter(int buckets = 32);
  // rtla's shape.  REQUIRES: ValidateNoiseHistogram(options).ok() (invalid
  // values are clamped into range).
  explicit NoiseMeter(const NoiseHistogramOptions& options);
  // Spin on the calling thread for `duration` recording gaps (<= 0: one
  // sample).  kNanosMax spins forever.
  void Spin(Nanos duration);
  // Record one gap (for simulated measurement); negative counts as 0.  Sums
  // saturate at kNanosMax.
  void Record(Nanos gap_ns);
  // Add to the measured duration (Record() does not: a gap is not a span).
  void AddDuration(Nanos ns) { duration_ = SaturatingAdd(duration_, ns > 0 ? ns : 0); }
  // A task body that measures for `duration` then exits; `slice` is the
  // length of each Step::Run (values < 1 count as 1).  The meter must
  // outlive the task.
  std::unique_ptr<TaskBody> MakeTaskBody(Nanos duration, Nanos slice = 50 * kNsPerUs);
  NoiseResult Result() const;

 private:
  int bucket_size_us_ = 1;
  int entries_ = 31;
  int64_t samples_ = 0;
  Nanos min_ = kNanosMax, max_ = 0, sum_ = 0, duration_ = 0;
  int64_t sum_us_ = 0;
  std::vector<int64_t> hist_;  // entries_ + 1, last = over
};

// `rtla osnoise hist`-style table of the per-CPU results `per_cpu` (CPU
// number, result), in CPU order as given:
//   # RTLA osnoise histogram
//   # Time unit is microseconds (us)
//   # Duration:   0 00:00:02
//   Index   CPU-001
//   0       123456
//   ...
//   over:        0
//   count:  123456
//   min:         0
//   avg:      0.02
//   max:       812
// A CPU column appears only if its count is non-zero, and a bucket row only
// if some CPU has samples there when `no_zero_lines` (rtla's default; rtla's
// --with-zeros is no_zero_lines = false).  `comment` lines (without '#') are
// added to the header.  Errors: results of different bucket sizes or
// entries.
struct RtlaHistogramFormat {
  bool no_zero_lines = false;
  std::string tool = "osnoise";
  std::string column =
      "CPU";  // column heads "CPU-001"; `rtla timerlat hist`'s thread column: "Thr"
  std::vector<std::string> comment;
};
absl::StatusOr<std::string> FormatRtlaHistogram(
    const std::vector<std::pair<int, NoiseResult>>& per_cpu, const RtlaHistogramFormat& format);

// `rtla osnoise top`-style table of modelled CPUs (CPU number, its
// CpuStats over a run of `duration`), one row per CPU in the order given:
//                                           Operating System Noise
//   duration:   0 00:00:01 | time is in us
//   CPU Period       Runtime        Noise  % CPU Aval   Max Noise   Max Single          HW NMI IRQ
//   Softirq       Thread
//     1 #1           1000000         1234    99.87660        1234           20           0 0 500 83
//     2
// The model's figures in those columns: the run is one period; Noise is the
// time kernel activities stalled a running user task (stalled_ns), Max
// Noise the same (one period), Max Single the longest (max_stall_ns); HW and
// NMI are 0 (the model has neither); IRQ counts ticks and timer interrupts,
// Softirq the timer callbacks, Thread the per-CPU work items (kworkers).
// `comment` lines go under the header.
std::string FormatRtlaOsnoiseTop(const std::vector<std::pair<int, CpuStats>>& per_cpu,
                                 Nanos duration, const std::vector<std::string>& comment = {});

}  // namespace isolation

#endif  // ISOLATION_NOISE_METER_H_
