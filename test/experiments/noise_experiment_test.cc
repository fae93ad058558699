// SPDX-License-Identifier: GPL-2.0-or-later
// `isolab noise`: oslat's JSON read back, both tools printed in oslat's
// format, the rounds and ratios with a stand-in oslat, the refusals, and one
// real oslat run where the host has it (skipped, saying why, where not).

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "experiments/noise_experiment.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "isolation/testing/status_matchers.h"

namespace isolation::experiments {
namespace {

using ::isolation::testing::StatusIs;
using ::testing::HasSubstr;

constexpr char kOslatJson[] = R"({"file_version": 1, "num_threads": 1, "thread": {"0": {
  "cpu": 1, "freq": 2445, "min": 1, "avg": 1.010796, "max": 9958, "duration": 1.002,
  "histogram": {"1": 26084321, "2": 45, "3": 140, "31": 2, "40": 5, "9958": 1}}}})";

TEST(NoiseExperiment, ReadsOslatJsonAndPrintsOslatsFormat) {
  ISOLATION_ASSERT_OK_AND_ASSIGN(OslatFigures f, ParseOslatJson(kOslatJson, 32));
  EXPECT_EQ(f.min_us, 1);
  EXPECT_EQ(f.max_us, 9958);
  EXPECT_DOUBLE_EQ(f.avg_us, 1.010796);
  ASSERT_EQ(f.buckets.size(), 32u);
  EXPECT_EQ(f.buckets[0], 26084321);
  EXPECT_EQ(f.buckets[30], 2);
  EXPECT_EQ(f.buckets[31], 6);  // 40 us and 9958 us: the last bucket includes overflows
  const std::string text = OslatText(f);
  EXPECT_THAT(text, HasSubstr("    001 (us):\t 26084321\n"));
  EXPECT_THAT(text, HasSubstr("    032 (us):\t 6 (including overflows)\n"));
  EXPECT_THAT(text, HasSubstr("     Minimum:\t 1 (us)\n     Average:\t 1.011 (us)\n"));
  EXPECT_THAT(text, HasSubstr("     Maximum:\t 9958 (us)\n     Max-Min:\t 9957 (us)\n"));
  EXPECT_THAT(text, HasSubstr("    Duration:\t 1.002 (sec)\n"));
}

TEST(NoiseExperiment, OslatTableHasOneColumnPerCpuAsOslatPrintsIt) {
  OslatFigures a;
  a.min_us = 1;
  a.avg_us = 1.028;
  a.max_us = 12095;
  a.duration_s = 0.999;
  a.buckets = {17901690, 33, 0, 196};
  OslatFigures b = a;
  b.max_us = 8053;
  b.buckets = {18012682, 0, 0, 178};
  const std::string t = OslatTable({{0, a}, {1, b}}, /*zero_omit=*/true);
  // oslat 2.40, `oslat --cpu-list 0-1 -z`, without its Counter Freq line.
  EXPECT_EQ(t,
            "        Core:\t 0 1\n"
            "    001 (us):\t 17901690 18012682\n"
            "    002 (us):\t 33 0\n"
            "    004 (us):\t 196 178 (including overflows)\n"
            "     Minimum:\t 1 1 (us)\n"
            "     Average:\t 1.028 1.028 (us)\n"
            "     Maximum:\t 12095 8053 (us)\n"
            "     Max-Min:\t 12094 8052 (us)\n"
            "    Duration:\t 0.999 0.999 (sec)\n");
}

TEST(NoiseExperiment, RefusesMalformedOslatJson) {
  EXPECT_THAT(ParseOslatJson("not json", 32),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("not JSON")));
  EXPECT_THAT(ParseOslatJson(R"({"thread": {}})", 32),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("thread \"0\"")));
  EXPECT_THAT(ParseOslatJson(R"({"thread": {"0": {"min": 1, "avg": 1, "max": 2}}})", 32),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("lacks thread.0.duration")));
  EXPECT_THAT(ParseOslatJson(R"({"thread": {"0": {"min": 1, "avg": 1, "max": 2, "duration": 1,
                                 "histogram": {"x": 3}}}})",
                             32),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("histogram entry 'x'")));
}

// A stand-in oslat: writes a fixed --json result (or fails) without spinning.
std::string StandIn(const char* name, bool fail) {
  const std::string path = absl::StrCat(::testing::TempDir(), "/", name);
  std::ofstream f(path);
  f << "#!/bin/sh\n";
  if (fail) {
    f << "echo 'oslat: sched_setaffinity failed' >&2\nexit 3\n";
  } else {
    f << "for a in \"$@\"; do case \"$a\" in --json=*) out=\"${a#--json=}\";; esac; done\n"
      << "cat > \"$out\" <<'J'\n"
      << R"({"thread": {"0": {"cpu": 0, "min": 1, "avg": 1.5, "max": 40, "duration": 1.0,)"
      << R"( "histogram": {"1": 1000, "2": 10, "40": 1}}}})"
      << "\nJ\n";
  }
  f.close();
  chmod(path.c_str(), 0755);
  return path;
}

TEST(NoiseExperiment, RoundsAlternateAndReportBothToolsWithRatios) {
  NoiseExperimentOptions o;
  o.oslat = StandIn("fake_oslat", false);
  o.seconds = 1;
  o.rounds = 2;
  o.cpu = 0;
  CommonOptions common;
  Progress progress("noise");
  ISOLATION_ASSERT_OK_AND_ASSIGN(ExperimentReport r, RunNoiseExperiment(common, o, progress));
  ASSERT_EQ(r.json["rounds"].size(), 2u);
  EXPECT_EQ(r.json["rounds"][0]["first"], "oslat");
  EXPECT_EQ(r.json["rounds"][1]["first"], "meter");
  for (const auto& round : r.json["rounds"]) {
    EXPECT_EQ(round["oslat"]["max_us"], 40);
    EXPECT_GT(round["meter"]["duration_s"].get<double>(), 0.5);  // it spun, on CPU 0
    EXPECT_EQ(round["meter"]["buckets"].size(), 32u);
    EXPECT_DOUBLE_EQ(round["max_ratio"].get<double>(),
                     round["meter"]["max_us"].get<double>() / 40.0);
  }
  EXPECT_THAT(r.text, HasSubstr("round 2, noise meter:\n    001 (us):"));
  EXPECT_THAT(r.text, HasSubstr("median ratio: max"));
}

TEST(NoiseExperiment, RefusalsNameTheFlagOrTheProgram) {
  CommonOptions common;
  Progress progress("noise");
  NoiseExperimentOptions o;
  o.seconds = 0;
  EXPECT_THAT(RunNoiseExperiment(common, o, progress),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("--noise_seconds=0")));
  o = {};
  o.buckets = 4;  // oslat 2.40 refuses 4 although its message says 4-1024
  EXPECT_THAT(RunNoiseExperiment(common, o, progress),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("--noise_buckets=4")));
  o = {};
  o.cpu = 100000;
  EXPECT_THAT(RunNoiseExperiment(common, o, progress),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("--noise_cpu=100000")));
  o = {};
  o.oslat = "/nonexistent/oslat";
  o.seconds = 1;
  o.rounds = 1;
  o.cpu = 0;
  EXPECT_THAT(RunNoiseExperiment(common, o, progress),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("rt-tests")));
  o.oslat = StandIn("failing_oslat", true);
  EXPECT_THAT(RunNoiseExperiment(common, o, progress),
              StatusIs(absl::StatusCode::kInternal, HasSubstr("sched_setaffinity failed")));
}

TEST(NoiseExperiment, RealOslatWhereTheHostHasIt) {
  if (access("/usr/bin/oslat", X_OK) != 0) GTEST_SKIP() << "no /usr/bin/oslat (Debian rt-tests)";
  if (geteuid() != 0) GTEST_SKIP() << "oslat needs root";
  NoiseExperimentOptions o;
  o.oslat = "/usr/bin/oslat";
  CommonOptions common;
  common.quick = true;  // one round of 1 s each
  Progress progress("noise");
  ISOLATION_ASSERT_OK_AND_ASSIGN(ExperimentReport r, RunNoiseExperiment(common, o, progress));
  ASSERT_EQ(r.json["rounds"].size(), 1u);
  EXPECT_GT(r.json["rounds"][0]["oslat"]["duration_s"].get<double>(), 0.5);
  EXPECT_GT(r.json["rounds"][0]["meter"]["duration_s"].get<double>(), 0.5);
}

}  // namespace
}  // namespace isolation::experiments
