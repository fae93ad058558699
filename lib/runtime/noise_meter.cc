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
    absl::StrAppendFormat(&out, "    %03d%s (us): %d\n", static_cast<int>(k) * bucket_size_us,
                          last ? "+" : "", histogram_us[k]);
  }
  return out;
}

namespace {
int CheckedBuckets(int buckets) {
  ISOLATION_CONTRACT(buckets >= 2 && buckets <= NoiseMeter::kMaxBuckets,
                     "NoiseMeter buckets %d outside [2, %d]", buckets, NoiseMeter::kMaxBuckets);
  return std::clamp(buckets, 2, NoiseMeter::kMaxBuckets);
}
}  // namespace

absl::StatusOr<NoiseMeter> NoiseMeter::Create(int buckets) {
  if (buckets < 2 || buckets > kMaxBuckets) {
    return absl::InvalidArgumentError(
        absl::StrCat("NoiseMeter: buckets ", buckets, " outside [2, ", kMaxBuckets, "]"));
  }
  return NoiseMeter(buckets);
}

absl::Status ValidateNoiseHistogram(const NoiseHistogramOptions& options) {
  if (options.bucket_size_us < 1 || options.bucket_size_us > 999'999) {
    return absl::InvalidArgumentError(
        absl::StrCat("--bucket_size=", options.bucket_size_us, ": want 1..999999 (us)"));
  }
  if (options.entries < 10 || options.entries > 1'000'000) {
    return absl::InvalidArgumentError(
        absl::StrCat("--entries=", options.entries, ": want 10..1000000"));
  }
  return absl::OkStatus();
}

NoiseMeter::NoiseMeter(int buckets)
    : bucket_size_us_(1),
      entries_(CheckedBuckets(buckets) - 1),
      hist_(static_cast<size_t>(entries_) + 1, 0) {}

NoiseMeter::NoiseMeter(const NoiseHistogramOptions& options)
    : bucket_size_us_(std::clamp(options.bucket_size_us, 1, 999'999)),
      entries_(std::clamp(options.entries, 10, 1'000'000)),  // NoiseHistogramOptions' range
      hist_(static_cast<size_t>(entries_) + 1, 0) {}

void NoiseMeter::Record(Nanos gap_ns) {
  if (gap_ns < 0) gap_ns = 0;
  ++samples_;
  min_ = std::min(min_, gap_ns);
  max_ = std::max(max_, gap_ns);
  sum_ = SaturatingAdd(sum_, gap_ns);
  const Nanos us = gap_ns / kNsPerUs;
  sum_us_ = SaturatingAdd(sum_us_, us);
  const Nanos bucket = us / bucket_size_us_;
  hist_[static_cast<size_t>(std::min<Nanos>(bucket, entries_))]++;
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
  r.bucket_size_us = bucket_size_us_;
  r.entries = entries_;
  r.min_us = r.min_ns / kNsPerUs;
  r.max_us = r.max_ns / kNsPerUs;
  r.sum_us = sum_us_;
  return r;
}

absl::StatusOr<std::string> FormatRtlaHistogram(
    const std::vector<std::pair<int, NoiseResult>>& per_cpu, const RtlaHistogramFormat& format) {
  std::vector<const std::pair<int, NoiseResult>*> cols;  // CPUs with samples
  Nanos duration = 0;
  for (const auto& p : per_cpu) {
    const NoiseResult& r = p.second;
    if (!per_cpu.empty() && (r.bucket_size_us != per_cpu[0].second.bucket_size_us ||
                             r.entries != per_cpu[0].second.entries)) {
      return absl::InvalidArgumentError(
          absl::StrCat("rtla histogram: CPU ", p.first, " has ", r.entries, " entries of ",
                       r.bucket_size_us, " us, CPU ", per_cpu[0].first, " has ",
                       per_cpu[0].second.entries, " of ", per_cpu[0].second.bucket_size_us));
    }
    if (static_cast<int>(r.histogram_us.size()) != r.entries + 1) {
      return absl::InvalidArgumentError(absl::StrCat("rtla histogram: CPU ", p.first, " has ",
                                                     r.histogram_us.size(), " buckets for ",
                                                     r.entries, " entries"));
    }
    duration = std::max(duration, r.duration_ns);
    if (r.samples > 0) cols.push_back(&p);
  }
  std::string out;
  // rtla's header (osnoise_hist_header), durations as get_duration() prints.
  const int64_t secs = duration / kNsPerSec;
  absl::StrAppend(&out, "# RTLA ", format.tool, " histogram\n");
  absl::StrAppend(&out, "# Time unit is microseconds (us)\n");
  absl::StrAppend(&out, absl::StrFormat("# Duration: %3d %02d:%02d:%02d\n", secs / 86400,
                                        (secs / 3600) % 24, (secs / 60) % 60, secs % 60));
  for (const std::string& line : format.comment) absl::StrAppend(&out, "# ", line, "\n");
  absl::StrAppend(&out, "Index");
  for (const auto* c : cols) {
    absl::StrAppend(&out, absl::StrFormat("   %s-%03d", format.column, c->first));
  }
  absl::StrAppend(&out, "\n");
  if (cols.empty()) {
    // rtla prints zeroed statistics when nothing was recorded.
    absl::StrAppend(&out, "over: 0\ncount: 0\nmin: 0\navg: 0\nmax: 0\n");
    return out;
  }
  const int entries = cols[0]->second.entries;
  const int bucket_size = cols[0]->second.bucket_size_us;
  for (int b = 0; b < entries; ++b) {
    int64_t total = 0;
    std::string row = absl::StrFormat("%-6d", static_cast<int64_t>(b) * bucket_size);
    for (const auto* c : cols) {
      const int64_t v = c->second.histogram_us[static_cast<size_t>(b)];
      total += v;
      absl::StrAppend(&row, absl::StrFormat("%9d ", v));
    }
    if (total == 0 && format.no_zero_lines) continue;
    absl::StrAppend(&out, row, "\n");
  }
  auto summary = [&](const char* label, auto value) {
    absl::StrAppend(&out, label);
    for (const auto* c : cols) absl::StrAppend(&out, value(c->second));
    absl::StrAppend(&out, "\n");
  };
  summary("over: ", [](const NoiseResult& r) { return absl::StrFormat("%9d ", r.over()); });
  summary("count:", [](const NoiseResult& r) { return absl::StrFormat("%9d ", r.samples); });
  summary("min:  ", [](const NoiseResult& r) { return absl::StrFormat("%9d ", r.min_us); });
  summary("avg:  ", [](const NoiseResult& r) {
    return absl::StrFormat("%9.2f ",
                           static_cast<double>(r.sum_us) / static_cast<double>(r.samples));
  });
  summary("max:  ", [](const NoiseResult& r) { return absl::StrFormat("%9d ", r.max_us); });
  return out;
}

std::string FormatRtlaOsnoiseTop(const std::vector<std::pair<int, CpuStats>>& per_cpu,
                                 Nanos duration, const std::vector<std::string>& comment) {
  std::string out;
  const int64_t secs = duration / kNsPerSec;
  absl::StrAppend(&out, "                                          Operating System Noise\n");
  absl::StrAppend(&out,
                  absl::StrFormat("duration: %3d %02d:%02d:%02d | time is in us\n", secs / 86400,
                                  (secs / 3600) % 24, (secs / 60) % 60, secs % 60));
  for (const std::string& line : comment) absl::StrAppend(&out, "# ", line, "\n");
  absl::StrAppend(&out,
                  "CPU Period       Runtime        Noise  % CPU Aval   Max Noise   Max Single"
                  "          HW          NMI          IRQ      Softirq       Thread\n");
  const int64_t runtime_us = duration / 1000;
  for (const auto& [cpu, st] : per_cpu) {
    const int64_t noise_us = st.stalled_ns / 1000;
    const double avail =
        runtime_us > 0 ? 100.0 * static_cast<double>(runtime_us - noise_us) / runtime_us : 0.0;
    absl::StrAppend(
        &out,
        absl::StrFormat("%3d #%-6d %12d %12d %11.5f %11d %12d %11d %12d %12d %12d %12d\n", cpu, 1,
                        runtime_us, noise_us, avail, noise_us, st.max_stall_ns / 1000, 0, 0,
                        st.ticks + st.timer_callbacks, st.timer_callbacks, st.work_items));
  }
  return out;
}

}  // namespace isolation
