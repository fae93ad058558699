// SPDX-License-Identifier: GPL-2.0-or-later
// The committed kernel recordings (test/data/replay, README.md there):
// their event counts, the agreement of each mechanism's kernel variant with
// the recorded kernel (pinned: a change of the port that moves agreement
// with the kernel fails here, and must say so), and the readers agreeing on
// one recording in its several formats.

#include <map>
#include <string>
#include <vector>

#include "experiments/replay_experiment.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "isolation/replay/readers.h"
#include "isolation/testing/status_matchers.h"

namespace isolation::experiments {
namespace {

std::string Data(const std::string& name) {
  return std::string(ISOLATION_REPLAY_DATA_DIR) + "/" + name;
}

nlohmann::json Replay(const std::string& file) {
  CommonOptions common;
  ReplayExperimentOptions o;
  o.file = Data(file);
  Progress progress("replay");
  absl::StatusOr<ExperimentReport> r = RunReplayExperiment(common, o, progress);
  ISOLATION_EXPECT_OK(r) << file;
  return r.ok() ? r->json : nlohmann::json();
}

struct Judged {
  int64_t judged;
  int64_t agreed;
  int64_t not_judged;
  friend bool operator==(const Judged&, const Judged&) = default;
};
std::ostream& operator<<(std::ostream& os, const Judged& j) {
  return os << "{" << j.judged << ", " << j.agreed << ", " << j.not_judged << "}";
}
Judged AgreementOf(const nlohmann::json& mech) {
  if (!mech.contains("agreement")) return {-1, -1, -1};
  const nlohmann::json& a = mech["agreement"];
  return {a["judged"].get<int64_t>(), a["agreed"].get<int64_t>(), a["not_judged"].get<int64_t>()};
}

struct Pin {
  std::string file;
  int64_t events;
  int64_t switches;
  int64_t rseq_updates;
  Judged mm_cid;
  Judged tmigr;  // {-1, -1, -1}: the recording lacks the events
  Judged idle;
  Judged vmstat;
};

// Measured on the recordings as committed (kernel 6.18.44 on a 2-vCPU KVM
// guest; docs/replay.md, "The committed recordings").
const std::vector<Pin>& Pins() {
  static const std::vector<Pin> pins = {
      {"rseq_threads.dat.gz",
       20896,
       5234,
       4506,
       {4411, 4410, 0},
       {0, 0, 1353},
       {1962, 1960, 827},
       {0, 0, 0}},
      {"rseq_threads.report.txt.gz",
       20896,
       5234,
       4506,
       {4411, 4410, 0},
       {0, 0, 1353},
       {1962, 1960, 827},
       {0, 0, 0}},
      {"perf_rseq_threads.txt.gz",
       20807,
       6051,
       5329,
       {5316, 5316, 0},
       {3, 1, 1355},
       {1404, 1399, 516},
       {-1, -1, -1}},
      {"messaging.dat.gz", 2187, 465, 324, {299, 299, 0}, {0, 0, 99}, {13, 13, 293}, {0, 0, 0}},
      {"messaging.report.txt.gz",
       2187,
       465,
       324,
       {299, 299, 0},
       {0, 0, 99},
       {13, 13, 293},
       {0, 0, 0}},
      {"pipe.dat.gz",
       55108,
       12449,
       10047,
       {9990, 9990, 0},
       {0, 0, 4291},
       {20, 20, 7672},
       {0, 0, 0}},
      {"stress_ng.dat.gz",
       18191,
       6050,
       5159,
       {5146, 5146, 0},
       {-1, -1, -1},
       {5, 5, 3463},
       {-1, -1, -1}},
      {"oslat.dat.gz",
       8402,
       2287,
       1769,
       {1040, 1040, 0},
       {147, 147, 108},
       {15, 13, 1115},
       {1, 1, 0}},
  };
  return pins;
}

class Fixture : public ::testing::TestWithParam<Pin> {};

TEST_P(Fixture, EventCountsAndAgreementWithTheKernel) {
  const Pin& p = GetParam();
  const nlohmann::json j = Replay(p.file);
  ASSERT_FALSE(j.is_null());
  EXPECT_EQ(j["events"].get<int64_t>(), p.events);
  EXPECT_EQ(j["events_per_kind"].value("sched:sched_switch", int64_t{0}), p.switches);
  EXPECT_EQ(j["events_per_kind"].value("rseq:rseq_update", int64_t{0}), p.rseq_updates);
  EXPECT_EQ(j["machine"]["kernel"], "6.18.44-fc-v1147");
  const nlohmann::json& m = j["mechanisms"];
  EXPECT_EQ(AgreementOf(m["mm_cid"]), p.mm_cid);
  EXPECT_EQ(AgreementOf(m["tmigr"]), p.tmigr);
  EXPECT_EQ(AgreementOf(m["idle_select"]), p.idle);
  EXPECT_EQ(AgreementOf(m["vmstat"]), p.vmstat);
  // The bound: the recorded kernel's mm_cid variant reproduces at
  // least 99 % of the kernel's rseq_update IDs.
  const Judged mm = AgreementOf(m["mm_cid"]);
  EXPECT_GE(static_cast<double>(mm.agreed), 0.99 * static_cast<double>(mm.judged)) << p.file;
  EXPECT_EQ(m["mm_cid"]["kernel_variant"], "lazy+alloc_v6_14");
  // No correct variant breaks an invariant on a real schedule.
  EXPECT_EQ(j["invariant_violations"].get<int64_t>(), 0);
}

INSTANTIATE_TEST_SUITE_P(Recordings, Fixture, ::testing::ValuesIn(Pins()), [](const auto& info) {
  std::string name = info.param.file;
  for (char& c : name) {
    if (!isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
});

// One recording as trace.dat and as `trace-cmd report -t` text: the same
// figures, except what the text cannot carry (timer_start's flags, so the
// kernel's global-timer counts of the tmigr section).
TEST(Readers, TraceDatAndReportTextGiveTheSameFigures) {
  for (const std::string base : {"rseq_threads", "messaging"}) {
    nlohmann::json dat = Replay(base + ".dat.gz");
    nlohmann::json text = Replay(base + ".report.txt.gz");
    ASSERT_FALSE(dat.is_null());
    ASSERT_FALSE(text.is_null());
    for (nlohmann::json* j : {&dat, &text}) {
      j->erase("file");
      j->erase("format");
      j->erase("notes");
      (*j)["mechanisms"]["tmigr"].erase("kernel");
    }
    EXPECT_EQ(dat, text) << base;
  }
}

// The model's own figures differ between variants on a real schedule: the
// per-mm lock design (v6.3) allocates at every switch-in and gives IDs back
// at every switch-out, which the recorded kernel does not.
TEST(Readers, VariantsDisagreeWhereTheyShould) {
  const nlohmann::json j = Replay("rseq_threads.dat.gz");
  ASSERT_FALSE(j.is_null());
  bool seen = false;
  for (const nlohmann::json& row : j["mechanisms"]["mm_cid"]["rows"]) {
    if (row["variant"] != "v63_mmlock") continue;
    seen = true;
    const Judged a = AgreementOf(row);
    EXPECT_LT(a.agreed, a.judged * 9 / 10);
  }
  EXPECT_TRUE(seen);
}

// A what-if: the same recording with CPU 1 isolated.  The variants run the
// other isolation, so no agreement is computed, and the isolation-aware
// timer-migration variant keeps CPU 1 out of its hierarchy.
TEST(Replay, WhatIfIsolationChangesTheModelNotTheKernel) {
  CommonOptions common;
  common.isolcpus = "1";
  ReplayExperimentOptions o;
  o.file = Data("oslat.dat.gz");
  Progress progress("replay");
  ISOLATION_ASSERT_OK_AND_ASSIGN(ExperimentReport r, RunReplayExperiment(common, o, progress));
  const nlohmann::json& j = r.json;
  EXPECT_TRUE(j["machine"]["what_if"].get<bool>());
  const nlohmann::json& rows = j["mechanisms"]["tmigr"]["rows"];
  std::map<std::string, std::string> available;
  for (const nlohmann::json& row : rows) {
    EXPECT_FALSE(row.contains("agreement"));
    available[row["variant"]] = row.value("available_cpus", "");
  }
  EXPECT_EQ(available["v6.9"], "0-1");
  EXPECT_EQ(available["isolation"], "0");
  EXPECT_FALSE(j["mechanisms"]["mm_cid"].contains("agreement"));
}

// The usual variant flags choose the rows; a name that is not registered
// is refused naming the flag, and a negative control named replays.
TEST(Replay, VariantListsChooseTheRows) {
  CommonOptions common;
  ReplayExperimentOptions o;
  o.file = Data("rseq_threads.dat.gz");
  o.variants["idle_select"] = {"V0", "V1-trusting"};  // a negative control, named
  o.variants["tmigr"] = {"v6.9"};
  o.variants["vmstat"] = {"A1"};
  o.variants["mm_cid"] = {"owner619"};
  Progress progress("replay");
  ISOLATION_ASSERT_OK_AND_ASSIGN(ExperimentReport r, RunReplayExperiment(common, o, progress));
  auto names = [&](const char* mechanism) {
    std::vector<std::string> out;
    for (const nlohmann::json& row : r.json["mechanisms"][mechanism]["rows"]) {
      if (row.contains("variant")) out.push_back(row["variant"].get<std::string>());
    }
    return out;
  };
  EXPECT_THAT(names("idle_select"), ::testing::ElementsAre("V0", "V1-trusting"));
  EXPECT_THAT(names("tmigr"), ::testing::ElementsAre("v6.9"));
  EXPECT_THAT(names("vmstat"), ::testing::ElementsAre("A1"));
  EXPECT_THAT(names("mm_cid"), ::testing::ElementsAre("owner619"));

  o.variants = {{"idle_select", {"V9"}}};
  absl::StatusOr<ExperimentReport> bad = RunReplayExperiment(common, o, progress);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(bad.status().message()),
              ::testing::HasSubstr("--idle_variants: 'V9' is not a registered"));
}

}  // namespace
}  // namespace isolation::experiments
