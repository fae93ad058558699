// SPDX-License-Identifier: GPL-2.0-or-later
//
// NoiseMeter (noise_meter.h): oslat-style gap recording.
//
// Real driver: each Step::Run(slice) of the task body is a busy spin done by
// the body itself inside Next() (reading MonotonicNanos() in a loop and
// recording every gap), and the first gap of a step is measured from the last
// read of the previous step, so the time the CPU thread spent between two
// steps (its tick, work items, timers, a context switch) shows up as a gap,
// exactly as an interruption shows up in oslat.  The body then returns
// Step::Run(0) so the driver handles its events at once.
//
// Simulator: a spin has no meaning on a virtual clock.  The body asks for
// Step::Run(slice) and, when it is called again, records the modelled gap:
// (virtual time that passed since it asked) - slice, i.e. the time the task
// was stalled by ticks, work and timers in that slice (0 if none).  A
// simulated histogram therefore holds one sample per slice, not per clock
// read.

#include <algorithm>
#include <cstdio>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "isolation/core/contract.h"
#include "isolation/runtime/noise_meter.h"

namespace isolation {

std::string NoiseResult::ToString() const {
  std::string out;
  absl::StrAppendFormat(&out, "    Samples: %d\n", samples);
  absl::StrAppendFormat(&out, "    Duration: %.3f ms\n", static_cast<double>(duration_ns) / 1e6);
  absl::StrAppendFormat(&out, "    Minimum: %.3f us\n", static_cast<double>(min_ns) / 1e3);
  absl::StrAppendFormat(&out, "    Average: %.3f us\n", avg_ns / 1e3);
  absl::StrAppendFormat(&out, "    Maximum: %.3f us\n", static_cast<double>(max_ns) / 1e3);
  for (size_t k = 0; k < histogram_us.size(); ++k) {
    if (histogram_us[k] == 0) continue;
    const bool last = k + 1 == histogram_us.size();
    absl::StrAppendFormat(&out, "    %03d%s (us): %d\n", static_cast<int>(k), last ? "+" : "",
                          histogram_us[k]);
  }
  return out;
}

namespace {
int CheckedBuckets(int buckets) {
  ISOLATION_CONTRACT(buckets >= 1 && buckets <= NoiseMeter::kMaxBuckets, "NoiseMeter buckets %d outside [1, %d]",
                     buckets, NoiseMeter::kMaxBuckets);
  return std::clamp(buckets, 1, NoiseMeter::kMaxBuckets);
}
}  // namespace

absl::StatusOr<NoiseMeter> NoiseMeter::Create(int buckets) {
  if (buckets < 1 || buckets > kMaxBuckets) {
    return absl::InvalidArgumentError(
        absl::StrCat("NoiseMeter: buckets ", buckets, " outside [1, ", kMaxBuckets, "]"));
  }
  return NoiseMeter(buckets);
}

NoiseMeter::NoiseMeter(int buckets)
    : buckets_(CheckedBuckets(buckets)), hist_(static_cast<size_t>(buckets_), 0) {}

void NoiseMeter::Record(Nanos gap_ns) {
  if (gap_ns < 0) gap_ns = 0;
  ++samples_;
  min_ = std::min(min_, gap_ns);
  max_ = std::max(max_, gap_ns);
  sum_ = SaturatingAdd(sum_, gap_ns);
  const Nanos bucket = gap_ns / kNsPerUs;
  hist_[static_cast<size_t>(std::min<Nanos>(bucket, buckets_ - 1))]++;
}

void NoiseMeter::Spin(Nanos duration) {
  const Nanos start = MonotonicNanos();
  const Nanos end = SaturatingAdd(start, duration);
  Nanos prev = start;
  while (true) {
    const Nanos t = MonotonicNanos();
    Record(t - prev);
    prev = t;
    if (t >= end) break;
  }
  AddDuration(prev - start);
}

namespace {

class NoiseTaskBody final : public TaskBody {
 public:
  NoiseTaskBody(NoiseMeter* meter, Nanos duration, Nanos slice)
      : meter_(meter), duration_(duration), slice_(std::max<Nanos>(1, slice)) {}

  Step Next(TaskContext& ctx) override {
    if (ctx.driver().is_simulated()) return NextSimulated(ctx);
    return NextReal();
  }

 private:
  Step NextSimulated(TaskContext& ctx) {
    const Nanos now = ctx.now();
    if (start_ < 0) {
      start_ = now;
    } else {
      // Requested slice_ of user time; whatever else passed was a stall.
      meter_->Record(now - asked_at_ - slice_);
      meter_->AddDuration(now - asked_at_);
    }
    if (now - start_ >= duration_) return Step::Exit();
    asked_at_ = now;
    return Step::Run(slice_);
  }

  Step NextReal() {
    Nanos t = MonotonicNanos();
    if (start_ < 0) {
      start_ = t;
      prev_ = t;
    }
    // The gap since the previous step's last read includes the CPU thread's
    // work between the two steps.
    const Nanos step_end = std::min(SaturatingAdd(t, slice_), SaturatingAdd(start_, duration_));
    while (true) {
      t = MonotonicNanos();
      meter_->Record(t - prev_);
      meter_->AddDuration(t - prev_);
      prev_ = t;
      if (t >= step_end) break;
    }
    if (t - start_ >= duration_) return Step::Exit();
    return Step::Run(0);
  }

  NoiseMeter* meter_;
  Nanos duration_;
  Nanos slice_;
  Nanos start_ = -1;
  Nanos prev_ = 0;
  Nanos asked_at_ = 0;
};

}  // namespace

std::unique_ptr<TaskBody> NoiseMeter::MakeTaskBody(Nanos duration, Nanos slice) {
  return std::make_unique<NoiseTaskBody>(this, duration, slice);
}

NoiseResult NoiseMeter::Result() const {
  NoiseResult r;
  r.samples = samples_;
  r.min_ns = samples_ > 0 ? min_ : 0;
  r.max_ns = max_;
  r.avg_ns = samples_ > 0 ? static_cast<double>(sum_) / static_cast<double>(samples_) : 0.0;
  r.duration_ns = duration_;
  r.histogram_us = hist_;
  return r;
}

}  // namespace isolation
