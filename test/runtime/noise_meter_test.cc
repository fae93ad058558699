// SPDX-License-Identifier: GPL-2.0-or-later
// NoiseMeter: arithmetic and histogram, a real spin, and the task body on
// both drivers.

#include "isolation/runtime/noise_meter.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "isolation/runtime/real_driver.h"
#include "isolation/runtime/sim.h"
#include "isolation/testing/status_matchers.h"

namespace isolation {
namespace {

TEST(NoiseMeter, RecordArithmeticAndHistogram) {
  NoiseMeter m(8);
  m.Record(500);             // bucket 0
  m.Record(1500);            // bucket 1
  m.Record(1999);            // bucket 1
  m.Record(7 * kNsPerUs);    // bucket 7 (last)
  m.Record(100 * kNsPerUs);  // overflow -> last bucket
  m.Record(-5);              // clamped to 0 -> bucket 0
  const NoiseResult r = m.Result();
  EXPECT_EQ(r.samples, 6);
  EXPECT_EQ(r.min_ns, 0);
  EXPECT_EQ(r.max_ns, 100 * kNsPerUs);
  EXPECT_DOUBLE_EQ(r.avg_ns, (500.0 + 1500 + 1999 + 7000 + 100000 + 0) / 6);
  ASSERT_EQ(r.histogram_us.size(), 8u);
  EXPECT_EQ(r.histogram_us[0], 2);
  EXPECT_EQ(r.histogram_us[1], 2);
  EXPECT_EQ(r.histogram_us[2], 0);
  EXPECT_EQ(r.histogram_us[7], 2);
  const std::string text = r.ToString();
  EXPECT_NE(text.find("Samples: 6"), std::string::npos) << text;
  EXPECT_NE(text.find("Maximum: 100.000 us"), std::string::npos) << text;
  EXPECT_NE(text.find("007+ (us): 2"), std::string::npos) << text;
}

TEST(NoiseMeter, EmptyResultIsZero) {
  NoiseMeter m;
  const NoiseResult r = m.Result();
  EXPECT_EQ(r.samples, 0);
  EXPECT_EQ(r.min_ns, 0);
  EXPECT_EQ(r.max_ns, 0);
  EXPECT_EQ(r.avg_ns, 0);
  EXPECT_EQ(r.histogram_us.size(), 32u);
}

TEST(NoiseMeter, SpinProducesSamples) {
  NoiseMeter m;
  m.Spin(20 * kNsPerMs);
  const NoiseResult r = m.Result();
  EXPECT_GT(r.samples, 100);
  EXPECT_GE(r.duration_ns, 20 * kNsPerMs);
  EXPECT_LE(r.min_ns, r.avg_ns);
  EXPECT_LE(r.avg_ns, static_cast<double>(r.max_ns));
  int64_t total = 0;
  for (int64_t b : r.histogram_us) total += b;
  EXPECT_EQ(total, r.samples);
}

TEST(NoiseMeter, SimulatedBodyRecordsModelledInterruptions) {
  ISOLATION_ASSERT_OK_AND_ASSIGN(Topology t, Topology::FromSynthetic("core:2 pu:1"));
  ISOLATION_ASSERT_OK_AND_ASSIGN(IsolationConfig iso, IsolationConfig::FromFlags(t, "1", "1"));
  SimOptions opts;
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto sim, Simulator::Create(t, iso, opts));
  NoiseMeter meter;
  TaskSpec spec;
  spec.name = "oslat";
  spec.cpu = 1;
  spec.body = meter.MakeTaskBody(10 * kNsPerMs, 100 * kNsPerUs);
  ISOLATION_ASSERT_OK(sim->Spawn(std::move(spec)));
  sim->QueueWorkOn(1, 5 * kNsPerMs, [](CpuContext& ctx) { ctx.Charge(20 * kNsPerUs); });
  ISOLATION_ASSERT_OK(sim->RunFor(20 * kNsPerMs));
  const NoiseResult r = meter.Result();
  EXPECT_EQ(r.samples, 100);  // one per 100 us slice over 10 ms
  EXPECT_EQ(r.min_ns, 0);
  EXPECT_EQ(r.max_ns, opts.work_cost + 20 * kNsPerUs);  // the one work item
  EXPECT_EQ(r.histogram_us[0], 99);
  EXPECT_EQ(r.histogram_us[22], 1);
  EXPECT_GE(r.duration_ns, 10 * kNsPerMs);
}

TEST(NoiseMeter, RealBodyRecordsGaps) {
  ISOLATION_ASSERT_OK_AND_ASSIGN(Topology t, Topology::FromSynthetic("core:1 pu:1"));
  RealDriverOptions opts;
  opts.default_tick_mode = TickMode::kPeriodic;
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto d, RealThreadDriver::Create(t, IsolationConfig(t), opts));
  NoiseMeter meter;
  TaskSpec spec;
  spec.name = "oslat";
  spec.cpu = 0;
  spec.body = meter.MakeTaskBody(20 * kNsPerMs);
  ISOLATION_ASSERT_OK(d->Spawn(std::move(spec)));
  // Bounded: the task exits after 20 ms of its own run time.
  for (int i = 0; i < 100 && !d->IsIdle(0); ++i) ISOLATION_ASSERT_OK(d->RunFor(10 * kNsPerMs));
  const NoiseResult r = meter.Result();
  EXPECT_GT(r.samples, 100);
  EXPECT_GE(r.duration_ns, 20 * kNsPerMs);
  EXPECT_GT(d->Stats(0).ticks, 0);
  EXPECT_TRUE(d->IsIdle(0));  // the meter task exited
}

TEST(NoiseMeter, RtlaShapeBucketsAndOver) {
  NoiseHistogramOptions shape;
  shape.bucket_size_us = 5;
  shape.entries = 10;
  ISOLATION_ASSERT_OK(ValidateNoiseHistogram(shape));
  NoiseMeter m(shape);
  for (Nanos gap : {Nanos{0}, Nanos{4999}, Nanos{5000}, 12 * kNsPerUs, 49 * kNsPerUs, 50 * kNsPerUs,
                    900 * kNsPerUs}) {
    m.Record(gap);
  }
  const NoiseResult r = m.Result();
  ASSERT_EQ(r.histogram_us.size(), 11u);
  EXPECT_EQ(r.entries, 10);
  EXPECT_EQ(r.bucket_size_us, 5);
  EXPECT_EQ(r.histogram_us[0], 2);  // 0, 4.999 us
  EXPECT_EQ(r.histogram_us[1], 1);  // 5 us
  EXPECT_EQ(r.histogram_us[2], 1);  // 12 us
  EXPECT_EQ(r.histogram_us[9], 1);  // 49 us
  EXPECT_EQ(r.over(), 2);           // 50, 900 us
  EXPECT_EQ(r.min_us, 0);
  EXPECT_EQ(r.max_us, 900);
  EXPECT_EQ(r.sum_us, 0 + 4 + 5 + 12 + 49 + 50 + 900);
  int64_t total = 0;
  for (int64_t b : r.histogram_us) total += b;
  EXPECT_EQ(total, r.samples);
}

TEST(NoiseMeter, RtlaHistogramTable) {
  NoiseMeter a(NoiseHistogramOptions{1, 10});
  NoiseMeter b(NoiseHistogramOptions{1, 10});
  for (int i = 0; i < 1000; ++i) a.Record(300);  // bucket 0
  a.Record(3 * kNsPerUs);
  a.Record(25 * kNsPerUs);  // over
  for (int i = 0; i < 10; ++i) b.Record(7 * kNsPerUs + 10);
  NoiseMeter empty(NoiseHistogramOptions{1, 10});
  const std::vector<std::pair<int, NoiseResult>> cpus = {
      {1, a.Result()}, {3, empty.Result()}, {5, b.Result()}};
  RtlaHistogramFormat f;
  f.comment = {"a comment"};
  absl::StatusOr<std::string> text = FormatRtlaHistogram(cpus, f);
  ISOLATION_ASSERT_OK(text);
  const std::string expected =
      "# RTLA osnoise histogram\n"
      "# Time unit is microseconds (us)\n"
      "# Duration:   0 00:00:00\n"
      "# a comment\n"
      "Index   CPU-001   CPU-005\n"  // CPU 3 has no samples: no column (rtla)
      "0          1000         0 \n"
      "1             0         0 \n"
      "2             0         0 \n"
      "3             1         0 \n"
      "4             0         0 \n"
      "5             0         0 \n"
      "6             0         0 \n"
      "7             0        10 \n"
      "8             0         0 \n"
      "9             0         0 \n"
      "over:         1         0 \n"
      "count:     1002        10 \n"
      "min:          0         7 \n"
      "avg:       0.03      7.00 \n"
      "max:         25         7 \n";
  EXPECT_EQ(*text, expected);
  // The counts of every column add up to its count row.
  f.no_zero_lines = true;
  text = FormatRtlaHistogram(cpus, f);
  ISOLATION_ASSERT_OK(text);
  EXPECT_EQ(text->find("\n1   "), std::string::npos) << *text;
  EXPECT_NE(text->find("\n3             1         0 \n"), std::string::npos) << *text;
  EXPECT_NE(text->find("\n7             0        10 \n"), std::string::npos) << *text;
}

TEST(NoiseMeter, RtlaOsnoiseTopTable) {
  CpuStats a;
  a.stalled_ns = 1'234'567;  // 1234 us of noise in 2 s
  a.max_stall_ns = 20'999;
  a.ticks = 500;
  a.timer_callbacks = 83;
  a.work_items = 2;
  const std::string t = FormatRtlaOsnoiseTop({{1, a}, {5, CpuStats{}}}, 2 * kNsPerSec, {"model"});
  EXPECT_NE(t.find("duration:   0 00:00:02 | time is in us\n# model\n"), std::string::npos) << t;
  EXPECT_NE(t.find("CPU Period       Runtime        Noise  % CPU Aval   Max Noise   Max Single"),
            std::string::npos);
  // Runtime 2000000 us, noise 1234 us: 99.93830 % available; IRQ = ticks +
  // timer interrupts, Softirq = timer callbacks, Thread = work items.
  EXPECT_NE(t.find("  1 #1           2000000         1234    99.93830        1234           20"
                   "           0            0          583           83            2\n"),
            std::string::npos)
      << t;
  EXPECT_NE(t.find("  5 #1           2000000            0   100.00000"), std::string::npos) << t;
}

TEST(NoiseMeter, RtlaHistogramColumnNames) {
  NoiseMeter m(NoiseHistogramOptions{1, 10});
  m.Record(2500);
  RtlaHistogramFormat f;
  f.tool = "timerlat";
  f.column = "Thr";
  ISOLATION_ASSERT_OK_AND_ASSIGN(std::string t, FormatRtlaHistogram({{3, m.Result()}}, f));
  EXPECT_NE(t.find("# RTLA timerlat histogram\n"), std::string::npos) << t;
  EXPECT_NE(t.find("Index   Thr-003\n"), std::string::npos) << t;
}

TEST(NoiseMeter, RtlaHistogramErrors) {
  EXPECT_FALSE(ValidateNoiseHistogram({0, 256}).ok());
  EXPECT_FALSE(ValidateNoiseHistogram({1000000, 256}).ok());
  EXPECT_FALSE(ValidateNoiseHistogram({1, 9}).ok());
  EXPECT_FALSE(ValidateNoiseHistogram({1, 1000001}).ok());
  const absl::Status s = ValidateNoiseHistogram({1, -1});
  EXPECT_NE(s.message().find("--entries=-1"), std::string::npos) << s;
  NoiseMeter a(NoiseHistogramOptions{1, 10});
  NoiseMeter b(NoiseHistogramOptions{2, 10});
  a.Record(1);
  b.Record(1);
  EXPECT_FALSE(FormatRtlaHistogram({{0, a.Result()}, {1, b.Result()}}, {}).ok());
  // Nothing recorded: rtla's zeroed statistics.
  NoiseMeter none(NoiseHistogramOptions{1, 10});
  ISOLATION_ASSERT_OK_AND_ASSIGN(std::string text, FormatRtlaHistogram({{0, none.Result()}}, {}));
  EXPECT_NE(text.find("over: 0\ncount: 0\n"), std::string::npos) << text;
}

}  // namespace
}  // namespace isolation
