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
#include <vector>

#include "absl/status/statusor.h"
#include "isolation/core/clock.h"
#include "isolation/core/driver.h"

namespace isolation {

struct NoiseResult {
  int64_t samples = 0;
  Nanos min_ns = 0;
  double avg_ns = 0;
  Nanos max_ns = 0;
  Nanos duration_ns = 0;
  std::vector<int64_t> histogram_us;  // bucket k = gaps in [k, k+1) us; last includes overflow
  std::string ToString() const;       // oslat-like text summary
};

class NoiseMeter {
 public:
  // Histogram size bound: 1 us buckets over one second (oslat's default is 32).
  static constexpr int kMaxBuckets = 1'000'000;
  // Errors: buckets outside [1, kMaxBuckets] (InvalidArgument naming it).
  static absl::StatusOr<NoiseMeter> Create(int buckets);
  // REQUIRES: 1 <= buckets <= kMaxBuckets (contract-checked, contract.h);
  // without contract checks a value outside is clamped into the range.  Use
  // Create() for a value from outside.
  explicit NoiseMeter(int buckets = 32);
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
  int buckets_;
  int64_t samples_ = 0;
  Nanos min_ = kNanosMax, max_ = 0, sum_ = 0, duration_ = 0;
  std::vector<int64_t> hist_;
};

}  // namespace isolation

#endif  // ISOLATION_NOISE_METER_H_
