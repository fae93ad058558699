// SPDX-License-Identifier: GPL-2.0-or-later
// rt-app descriptions: the grammar (what is read, what is refused and why),
// each event's behaviour on the simulator, the shipped examples, and a
// property test over random descriptions and mutated files.

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "isolation/runtime/real_driver.h"
#include "isolation/runtime/sim.h"
#include "isolation/testing/machine.h"
#include "isolation/testing/status_matchers.h"
#include "isolation/workload/rtapp.h"

namespace isolation::workload {
namespace {

using ::isolation::testing::IsOk;
using ::isolation::testing::MachineBuilder;
using ::isolation::testing::StatusIs;
using ::testing::AllOf;
using ::testing::Contains;
using ::testing::HasSubstr;

constexpr char kSmallMachine[] = "package:1 core:4 pu:1";

std::unique_ptr<Simulator> Sim(uint64_t seed = 1, std::string_view isolcpus = "") {
  SimOptions options;
  options.seed = seed;
  absl::StatusOr<std::unique_ptr<Simulator>> sim =
      MachineBuilder().Topology(kSmallMachine).Isolcpus(isolcpus).Simulator(options);
  EXPECT_THAT(sim.status(), IsOk());
  return sim.ok() ? *std::move(sim) : nullptr;
}

std::vector<RtAppThreadStats> RunJson(const std::string& json, uint64_t seed = 1,
                                      Nanos bound = 10 * kNsPerSec) {
  absl::StatusOr<RtAppDescription> d = ParseRtApp(json, "test.json");
  EXPECT_THAT(d.status(), IsOk());
  if (!d.ok()) return {};
  std::unique_ptr<Simulator> sim = Sim(seed);
  absl::StatusOr<std::unique_ptr<RtAppRun>> run = RtAppRun::Start(*d, *sim);
  EXPECT_THAT(run.status(), IsOk());
  if (!run.ok()) return {};
  EXPECT_THAT((*run)->RunToEnd(bound).status(), IsOk());
  return (*run)->Threads();
}

const RtAppThreadStats* Find(const std::vector<RtAppThreadStats>& ts, std::string_view name) {
  for (const RtAppThreadStats& t : ts) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

// --- the grammar -----------------------------------------------------------

TEST(RtAppParse, InlineEventsArePhaseZeroInFileOrder) {
  ISOLATION_ASSERT_OK_AND_ASSIGN(
      RtAppDescription d,
      ParseRtApp(R"({"tasks": {"t": {"loop": 3, "run0": 10, "sleep": 20, "run1": 30}}})"));
  ASSERT_EQ(d.tasks.size(), 1u);
  const RtAppTask& t = d.tasks[0];
  EXPECT_EQ(t.loop, 3);
  EXPECT_EQ(t.instances, 1);
  ASSERT_EQ(t.phases.size(), 1u);
  ASSERT_EQ(t.phases[0].events.size(), 3u);
  EXPECT_EQ(t.phases[0].events[0].kind, RtAppEventKind::kRun);
  EXPECT_EQ(t.phases[0].events[0].ns, 10 * kNsPerUs);
  EXPECT_EQ(t.phases[0].events[1].kind, RtAppEventKind::kSleep);
  EXPECT_EQ(t.phases[0].events[2].ns, 30 * kNsPerUs);
  EXPECT_EQ(d.duration, -1);
}

TEST(RtAppParse, RuntimeIsNotRunAndSyncExpands) {
  ISOLATION_ASSERT_OK_AND_ASSIGN(
      RtAppDescription d,
      ParseRtApp(R"({"tasks": {"t": {"runtime": 5, "sync": {"ref": "c", "mutex": "m"}}}})"));
  const std::vector<RtAppEvent>& e = d.tasks[0].phases[0].events;
  ASSERT_EQ(e.size(), 5u);
  EXPECT_EQ(e[0].kind, RtAppEventKind::kRunTime);
  EXPECT_EQ(e[1].kind, RtAppEventKind::kLock);
  EXPECT_EQ(e[1].ref, "m");
  EXPECT_EQ(e[2].kind, RtAppEventKind::kSignal);
  EXPECT_EQ(e[2].ref, "c");
  EXPECT_EQ(e[3].kind, RtAppEventKind::kWait);
  EXPECT_EQ(e[3].mutex, "m");
  EXPECT_EQ(e[4].kind, RtAppEventKind::kUnlock);
}

TEST(RtAppParse, GlobalAndSchedulingAttributesAreNotedNotDropped) {
  ISOLATION_ASSERT_OK_AND_ASSIGN(RtAppDescription d, ParseRtApp(R"({
    "global": {"duration": 2, "calibration": "CPU0", "default_policy": "SCHED_FIFO",
               "logdir": "./"},
    "tasks": {"t": {"priority": 10, "cpus": [2, 1, 2],
                    "phases": {"p": {"loop": 4, "cpus": [3], "run": 1,
                                     "timer": {"ref": "x", "period": 100}}}}}})"));
  EXPECT_EQ(d.duration, 2 * kNsPerSec);
  EXPECT_EQ(d.default_policy, "SCHED_FIFO");
  EXPECT_EQ(d.tasks[0].policy, "SCHED_FIFO");
  EXPECT_EQ(d.tasks[0].cpus, (std::vector<int>{1, 2}));
  EXPECT_EQ(d.tasks[0].phases[0].loop, 4);
  EXPECT_EQ(d.tasks[0].phases[0].cpus, (std::vector<int>{3}));
  EXPECT_THAT(d.notes, Contains(HasSubstr("global.calibration: ignored")));
  EXPECT_THAT(d.notes, Contains(HasSubstr("global.logdir")));
  EXPECT_THAT(d.notes, Contains(HasSubstr("priority is not modelled")));
  EXPECT_THAT(d.notes, Contains(HasSubstr("policy SCHED_FIFO is not modelled")));
}

TEST(RtAppParse, BarrierUsersAreInstancesTimesReferences) {
  ISOLATION_ASSERT_OK_AND_ASSIGN(RtAppDescription d, ParseRtApp(R"({"tasks": {
    "a": {"instance": 3, "run": 1, "barrier": "b"},
    "c": {"run": 2, "barrier": "b"}}})"));
  ASSERT_EQ(d.barriers.size(), 1u);
  EXPECT_EQ(d.barriers[0].first, "b");
  EXPECT_EQ(d.barriers[0].second, 4);
}

struct Refusal {
  const char* json;
  const char* message;
};

TEST(RtAppParse, RefusesWhatItCannotHonourNamingIt) {
  const Refusal cases[] = {
      {R"({"tasks": {"t": {"run": 1, "mem0": 4096}}})", "task 't', key 'mem0': the model has no"},
      {R"({"tasks": {"t": {"run": 1, "iorun": 10}}})", "key 'iorun'"},
      {R"({"tasks": {"t": {"suspend": "t"}}})", "key 'suspend': suspend/resume are not modelled"},
      {R"({"tasks": {"t": {"phases": {"p": {"resume": "t"}}}}})", "phase 'p', key 'resume'"},
      {R"({"tasks": {"t": {"frobnicate": 1}}})", "key 'frobnicate': unknown event"},
      {R"({"tasks": {"t": {"run": -5}}})", "key 'run': -5 is outside"},
      {R"({"tasks": {"t": {"run": 1.5}}})", "key 'run': want an integer, got 1.5"},
      {R"({"tasks": {"t": {"sleep": 4000000000}}})", "key 'sleep': 4000000000 is outside"},
      {R"({"tasks": {"t": {"run": 1, "run": 2}}})", "key 'run' appears twice"},
      {R"({"tasks": {"t": {"run": 1}})", "malformed JSON at byte"},
      {R"({"tasks": {"t": {"fork": "nobody"}}})", "fork of unknown task 'nobody'"},
      {R"({"tasks": {"t": {"fork": "u", "sleep": 1}, "u": {"instance": 0, "barrier": "b"}}})",
       "barrier 'b' in a task that is forked"},
      {R"({"tasks": {"t": {"timer": {"ref": "x"}}}})", "a timer without 'period'"},
      {R"({"tasks": {"t": {"timer": {"ref": "x", "period": 5, "mode": "sometimes"}}}})",
       "'sometimes' (want absolute or relative)"},
      {R"({"tasks": {"t": {"wait": {"ref": "c"}}}})", "needs both 'ref' and 'mutex'"},
      {R"({"tasks": {"t": {"policy": "SCHED_BATCH", "run": 1}}})", "unknown policy 'SCHED_BATCH'"},
      {R"({"tasks": {"t": {"loop": 0, "run": 1}}})", "key 'loop': 0"},
      {R"({"tasks": {"t": {"cpus": [], "run": 1}}})", "key 'cpus': want a non-empty array"},
      {R"({"tasks": {"t": {"phases": {"p": {"run": 1}}, "sleep": 3}}})",
       "key 'sleep': an event beside 'phases'"},
      {R"({"tasks": {"t": {"instance": 0, "run": 1}}})", "no thread starts"},
      {R"({"tasks": {}})", "want a non-empty object"},
      {R"({"global": {"duration": 0}, "tasks": {"t": {"run": 1}}})", "global.duration"},
      {R"({"global": {"frob": 1}, "tasks": {"t": {"run": 1}}})", "unknown global key"},
      {R"({"task": {"t": {"run": 1}}})", "key 'task': unknown top-level key"},
      {R"([1, 2])", "the top level must be an object"},
      {R"({"tasks": {"t": {"instance": 70000, "run": 1}}})", "key 'instance': 70000 is outside"},
  };
  for (const Refusal& c : cases) {
    EXPECT_THAT(ParseRtApp(c.json, "f.json"),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         AllOf(HasSubstr("f.json"), HasSubstr(c.message))))
        << c.json;
  }
}

TEST(RtAppParse, LoadNamesAMissingFile) {
  EXPECT_THAT(LoadRtApp("/nonexistent/x.json"),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("/nonexistent/x.json")));
}

TEST(RtAppRunTest, CpusOutsideTheMachineAreRefusedAtStart) {
  ISOLATION_ASSERT_OK_AND_ASSIGN(
      RtAppDescription d,
      ParseRtApp(R"({"tasks": {"t": {"phases": {"p": {"cpus": [9], "run": 1}}}}})", "f.json"));
  std::unique_ptr<Simulator> sim = Sim();
  EXPECT_THAT(RtAppRun::Start(d, *sim),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("task 't', phase 'p': CPU 9"), HasSubstr("4 CPUs"))));
}

// --- events on the simulator -----------------------------------------------

TEST(RtAppRunTest, RunAndSleepLoopTheirCount) {
  const auto ts = RunJson(R"({"tasks": {"t": {"loop": 10, "run": 100, "sleep": 900}}})");
  ASSERT_EQ(ts.size(), 1u);
  EXPECT_TRUE(ts[0].ended);
  EXPECT_EQ(ts[0].loops, 10);
  EXPECT_EQ(ts[0].run_ns, 10 * 100 * kNsPerUs);
  EXPECT_EQ(ts[0].wakeups, 10);
  EXPECT_EQ(ts[0].name, "t-0");
}

TEST(RtAppRunTest, TimerKeepsItsPeriodWhenTheRunIsDelayed) {
  // Two threads with a nominal 15 ms period share one CPU with a third of
  // another period: when runs overlap they take longer (round-robin), yet
  // the timer thread keeps its period while the sleep thread's period
  // stretches by each delay.
  const auto ts = RunJson(R"({"global": {"duration": 1}, "tasks": {
    "timed": {"cpus": [0], "run": 4000, "timer": {"ref": "unique", "period": 15000}},
    "slept": {"cpus": [0], "run": 4000, "sleep": 11000},
    "noise": {"cpus": [0], "run": 3000, "sleep": 14000}}})");
  const RtAppThreadStats* timed = Find(ts, "timed-0");
  const RtAppThreadStats* slept = Find(ts, "slept-0");
  ASSERT_NE(timed, nullptr);
  ASSERT_NE(slept, nullptr);
  EXPECT_GE(timed->timer_waits, 65);
  EXPECT_LE(timed->timer_waits, 67);
  EXPECT_EQ(timed->timer_misses, 0);
  EXPECT_LT(slept->loops, timed->loops - 3);
}

TEST(RtAppRunTest, RuntimeEndsAtItsWallClockTimeNotItsWork) {
  // Two threads share CPU 0 in 3 ms round-robin slices, each with runtime
  // 10 ms counted from when it first runs: a runs 0-3 and 6-9 ms and is past
  // its end (10 ms) when its turn comes at 12 ms; b (from 3 ms) runs 3-6,
  // 9-12 and 12-13 ms.  Work as `run` would do 10 ms each.
  const auto ts = RunJson(R"({"tasks": {
    "a": {"cpus": [0], "loop": 1, "runtime": 10000},
    "b": {"cpus": [0], "loop": 1, "runtime": 10000}}})");
  ASSERT_EQ(ts.size(), 2u);
  for (const RtAppThreadStats& t : ts) {
    EXPECT_TRUE(t.ended) << t.name;
    EXPECT_GE(t.run_ns, 5 * kNsPerMs) << t.name;
    EXPECT_LE(t.run_ns, 7 * kNsPerMs + 200 * kNsPerUs) << t.name;
  }
}

TEST(RtAppRunTest, AbsoluteTimerCatchesUpAfterAnOverrunRelativeDoesNot) {
  // The timer starts at its first use (1 ms); a run of 25 ms then overruns
  // its 10 ms period: the absolute timer keeps its reference and misses the
  // next expiry too (catching up without sleeping), the relative one moves
  // its reference to now and misses only once.
  auto misses = [](const char* mode) {
    const std::string timer =
        absl::StrCat(R"({"ref": "tick", "period": 10000, "mode": ")", mode, R"("})");
    const auto ts = RunJson(absl::StrCat(R"({"tasks": {"t": {"loop": 1, "phases": {
      "first": {"run": 1000, "timer": )",
                                         timer, R"(},
      "long": {"run": 25000, "timer": )",
                                         timer, R"(},
      "short": {"loop": 5, "run": 1000, "timer": )",
                                         timer, R"(}}}}})"));
    return ts.empty() ? int64_t{-1} : ts[0].timer_misses;
  };
  EXPECT_EQ(misses("relative"), 1);
  EXPECT_EQ(misses("absolute"), 2);
}

TEST(RtAppRunTest, MutexAndConditionHandOverWithoutLoss) {
  const auto ts = RunJson(R"({"global": {"duration": 1}, "tasks": {
    "producer": {"run": 50, "lock": "m", "broad": "c", "unlock": "m", "sleep": 200},
    "consumer": {"instance": 3, "lock": "m", "wait": {"ref": "c", "mutex": "m"},
                 "unlock": "m", "run": 100}}})");
  const RtAppThreadStats* producer = Find(ts, "producer-0");
  ASSERT_NE(producer, nullptr);
  int64_t consumed = 0;
  for (const RtAppThreadStats& t : ts) {
    if (t.task == "consumer") consumed += t.loops;
  }
  // Each broadcast releases every consumer waiting then; a consumer busy in
  // its run misses that one, so the consumers loop at least once per round
  // (and at most three times).
  EXPECT_GT(producer->loops, 1000);
  EXPECT_GE(consumed, producer->loops - 1);
  EXPECT_LE(consumed, 3 * producer->loops);
}

TEST(RtAppRunTest, BarrierReleasesAllTogether) {
  const auto ts = RunJson(R"({"tasks": {
    "fast": {"loop": 20, "instance": 2, "run": 100, "barrier": "b"},
    "slow": {"loop": 20, "run": 5000, "barrier": "b"}}})");
  ASSERT_EQ(ts.size(), 3u);
  for (const RtAppThreadStats& t : ts) {
    EXPECT_TRUE(t.ended) << t.name;
    EXPECT_EQ(t.loops, 20) << t.name;
  }
  // The fast threads waited at every barrier for the slow one.
  EXPECT_EQ(Find(ts, "fast-0")->wakeups, 20);
}

TEST(RtAppRunTest, ForkStartsAThreadOfTheNamedTask) {
  const auto ts = RunJson(R"({"tasks": {
    "parent": {"loop": 3, "fork": "child", "sleep": 1000},
    "child": {"instance": 0, "loop": 2, "run": 100}}})");
  ASSERT_EQ(ts.size(), 4u);
  for (int i = 0; i < 3; ++i) {
    const RtAppThreadStats* c = Find(ts, absl::StrCat("child-f", i));
    ASSERT_NE(c, nullptr) << i;
    EXPECT_TRUE(c->ended);
    EXPECT_EQ(c->run_ns, 2 * 100 * kNsPerUs);
  }
}

TEST(RtAppRunTest, PhaseAffinityMovesTheThread) {
  ISOLATION_ASSERT_OK_AND_ASSIGN(RtAppDescription d, ParseRtApp(R"({"tasks": {"t": {
    "cpus": [0], "loop": 1, "phases": {"a": {"run": 1000}, "b": {"cpus": [3], "run": 1000},
                                        "c": {"run": 1000}}}}})"));
  std::unique_ptr<Simulator> sim = Sim();
  ISOLATION_ASSERT_OK_AND_ASSIGN(std::unique_ptr<RtAppRun> run, RtAppRun::Start(d, *sim));
  std::vector<int> cpus;
  for (int i = 0; i < 40 && run->live_threads() > 0; ++i) {
    ISOLATION_ASSERT_OK(sim->RunFor(100 * kNsPerUs));
    const int c = sim->TaskCpu(run->Threads()[0].id);
    if (cpus.empty() || cpus.back() != c) cpus.push_back(c);
  }
  EXPECT_EQ(cpus, (std::vector<int>{0, 3, 0}));
}

TEST(RtAppRunTest, RunErrorsNameTheThreadAndTheMutex) {
  absl::StatusOr<RtAppDescription> d =
      ParseRtApp(R"({"tasks": {"t": {"run": 1, "unlock": "m"}}})", "u.json");
  ASSERT_THAT(d.status(), IsOk());
  std::unique_ptr<Simulator> sim = Sim();
  ISOLATION_ASSERT_OK_AND_ASSIGN(std::unique_ptr<RtAppRun> run, RtAppRun::Start(*d, *sim));
  EXPECT_THAT(run->RunToEnd(kNsPerSec),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       AllOf(HasSubstr("u.json: thread t-0"),
                             HasSubstr("unlocks mutex 'm' it does not hold"))));
  EXPECT_EQ(run->live_threads(), 0);
}

TEST(RtAppRunTest, TimerLatenciesByCpuAsRtlaTimerlatColumns) {
  ISOLATION_ASSERT_OK_AND_ASSIGN(RtAppDescription d,
                                 ParseRtApp(R"({"global": {"duration": 1}, "tasks": {
        "a": {"cpus": [1], "run": 100, "timer": {"ref": "unique", "period": 1000}},
        "b": {"cpus": [2], "run": 100, "sleep": 900}}})"));
  std::unique_ptr<Simulator> sim = Sim();
  ISOLATION_ASSERT_OK_AND_ASSIGN(std::unique_ptr<RtAppRun> run, RtAppRun::Start(d, *sim));
  ISOLATION_ASSERT_OK(run->RunToEnd().status());
  const auto lat = run->TimerLatencies();
  ASSERT_EQ(lat.size(), 1u);  // only CPU 1's thread waits on a timer
  EXPECT_EQ(lat[0].first, 1);
  // One sample per timer wait that ended (the last one may still be open).
  EXPECT_EQ(lat[0].second.samples, Find(run->Threads(), "a-0")->wakeups);
  EXPECT_EQ(lat[0].second.duration_ns, kNsPerSec);
  RtAppRunOptions bad;
  bad.timer_latency_histogram.entries = 1;
  std::unique_ptr<Simulator> sim2 = Sim();
  EXPECT_THAT(RtAppRun::Start(d, *sim2, std::move(bad)),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("entries")));
}

TEST(RtAppRunTest, KernelEntriesReachTheHarness) {
  absl::StatusOr<RtAppDescription> d =
      ParseRtApp(R"({"tasks": {"t": {"loop": 5, "run": 10, "sleep": 10, "yield": ""}}})");
  ASSERT_THAT(d.status(), IsOk());
  std::unique_ptr<Simulator> sim = Sim();
  int entries = 0;
  RtAppRunOptions o;
  o.on_kernel_entry = [&](CpuContext&, TaskId) { ++entries; };
  ISOLATION_ASSERT_OK_AND_ASSIGN(std::unique_ptr<RtAppRun> run,
                                 RtAppRun::Start(*d, *sim, std::move(o)));
  ISOLATION_ASSERT_OK(run->RunToEnd(kNsPerSec).status());
  EXPECT_EQ(entries, 10);  // a sleep and a yield per loop; run is user work
}

TEST(RtAppRunTest, SameSeedSameFigures) {
  const std::string json =
      R"({"global": {"duration": 1}, "tasks": {"w": {"instance": 6, "run": 300, "sleep": 200}}})";
  const auto a = RunJson(json, 5);
  const auto b = RunJson(json, 5);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].run_ns, b[i].run_ns);
    EXPECT_EQ(a[i].loops, b[i].loops);
    EXPECT_EQ(a[i].wakeups, b[i].wakeups);
  }
}

TEST(RtAppRunTest, RunsOnRealThreadsToo) {
  ISOLATION_ASSERT_OK_AND_ASSIGN(
      RtAppDescription d,
      ParseRtApp(R"({"tasks": {"p": {"loop": 20, "run": 100, "lock": "m", "signal": "c",
                                      "unlock": "m", "sleep": 500},
                                "q": {"loop": 5, "lock": "m", "wait": {"ref": "c", "mutex": "m"},
                                      "unlock": "m"}}})"));
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto driver,
                                 MachineBuilder().Topology("package:1 core:2 pu:1").RealThreads());
  ISOLATION_ASSERT_OK_AND_ASSIGN(std::unique_ptr<RtAppRun> run, RtAppRun::Start(d, *driver));
  ISOLATION_ASSERT_OK(run->RunToEnd(5 * kNsPerSec).status());
  // The producer always ends; the consumer may miss signals sent while it
  // was not waiting (pthread semantics), so it need not.
  EXPECT_TRUE(Find(run->Threads(), "p-0")->ended);
}

// --- the shipped examples ----------------------------------------------------

std::string Example(const char* name) {
  return absl::StrCat(ISOLATION_RTAPP_EXAMPLES_DIR, "/", name);
}

TEST(RtAppExamples, IsolatedPeriodicKeepsEveryPeriod) {
  ISOLATION_ASSERT_OK_AND_ASSIGN(RtAppDescription d, LoadRtApp(Example("isolated_periodic.json")));
  std::unique_ptr<Simulator> sim = Sim(1, "1-3");
  ISOLATION_ASSERT_OK_AND_ASSIGN(std::unique_ptr<RtAppRun> run, RtAppRun::Start(d, *sim));
  ISOLATION_ASSERT_OK_AND_ASSIGN(Nanos ran, run->RunToEnd());
  EXPECT_EQ(ran, kNsPerSec);
  for (const RtAppThreadStats& t : run->Threads()) {
    if (t.task.rfind("rt", 0) != 0) continue;
    EXPECT_EQ(t.timer_misses, 0) << t.name;
    EXPECT_GT(t.timer_waits, 400) << t.name;
  }
}

TEST(RtAppExamples, ProducerConsumerWakesTheConsumers) {
  ISOLATION_ASSERT_OK_AND_ASSIGN(RtAppDescription d, LoadRtApp(Example("producer_consumer.json")));
  std::unique_ptr<Simulator> sim = Sim();
  ISOLATION_ASSERT_OK_AND_ASSIGN(std::unique_ptr<RtAppRun> run, RtAppRun::Start(d, *sim));
  ISOLATION_ASSERT_OK(run->RunToEnd().status());
  int64_t wakeups = 0;
  for (const RtAppThreadStats& t : run->Threads()) {
    if (t.task == "consumer") wakeups += t.wakeups;
  }
  EXPECT_GT(wakeups, 1000);
}

// --- properties --------------------------------------------------------------

// A random, well-formed description: tasks of run/runtime/sleep/timer/yield
// events, lock/unlock pairs and barriers used by started threads only.
std::string RandomDescription(std::mt19937_64& rng) {
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<uint64_t>(n)); };
  std::string tasks;
  const int ntasks = 1 + pick(4);
  const bool barrier = pick(3) == 0;
  for (int t = 0; t < ntasks; ++t) {
    std::string events;
    const int nevents = 1 + pick(5);
    for (int e = 0; e < nevents; ++e) {
      std::string ev;
      switch (pick(6)) {
        case 0:
          ev = absl::StrCat(R"("run)", e, R"(": )", pick(2000));
          break;
        case 1:
          ev = absl::StrCat(R"("runtime)", e, R"(": )", pick(2000));
          break;
        case 2:
          ev = absl::StrCat(R"("sleep)", e, R"(": )", pick(3000));
          break;
        case 3:
          ev = absl::StrCat(R"("timer)", e, R"(": {"ref": ")", pick(2) ? "unique" : "shared",
                            R"(", "period": )", 1 + pick(5000), R"(, "mode": ")",
                            pick(2) ? "absolute" : "relative", R"("})");
          break;
        case 4:
          ev = absl::StrCat(R"("lock)", e, R"(": "m", "run_l)", e, R"(": )", pick(500),
                            R"(, "unlock)", e, R"(": "m")");
          break;
        default:
          ev = absl::StrCat(R"("yield)", e, R"(": "")");
          break;
      }
      absl::StrAppend(&events, events.empty() ? "" : ", ", ev);
    }
    if (barrier) absl::StrAppend(&events, R"(, "barrier": "all")");
    const std::string cpus = pick(2) ? absl::StrCat(R"("cpus": [)", pick(4), "], ") : std::string();
    absl::StrAppend(&tasks, t == 0 ? "" : ", ", R"("t)", t, R"(": {)", cpus, R"("instance": )",
                    1 + pick(3), R"(, "phases": {"p": {)", events, "}}}");
  }
  return absl::StrCat(R"({"global": {"duration": 1}, "tasks": {)", tasks, "}}");
}

TEST(RtAppProperty, RandomDescriptionsRunCleanWithinPhysicalBounds) {
  for (uint64_t seed = 1; seed <= 60; ++seed) {
    std::mt19937_64 rng(seed);
    const std::string json = RandomDescription(rng);
    absl::StatusOr<RtAppDescription> d = ParseRtApp(json);
    ASSERT_THAT(d.status(), IsOk()) << json;
    std::unique_ptr<Simulator> sim = Sim(seed);
    ISOLATION_ASSERT_OK_AND_ASSIGN(std::unique_ptr<RtAppRun> run, RtAppRun::Start(*d, *sim));
    ISOLATION_ASSERT_OK_AND_ASSIGN(Nanos ran, run->RunToEnd());
    Nanos total_run = 0;
    for (const RtAppThreadStats& t : run->Threads()) {
      EXPECT_LE(t.run_ns, ran) << json << " " << t.name;
      EXPECT_LE(t.timer_misses, t.timer_waits) << json;
      total_run += t.run_ns;
    }
    EXPECT_LE(total_run, 4 * ran) << json;  // 4 CPUs
  }
}

TEST(RtAppProperty, MutatedFilesAreRefusedOrRunNeverCrash) {
  std::ifstream in(Example("producer_consumer.json"));
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string base = ss.str();
  ASSERT_FALSE(base.empty());
  const char alphabet[] = "{}[]\":,-0123456789 runsleptimrbaoc";
  int parsed = 0;
  for (uint64_t seed = 1; seed <= 400; ++seed) {
    std::mt19937_64 rng(seed);
    std::string s = base;
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int i = 0; i < edits && !s.empty(); ++i) {
      const size_t at = rng() % s.size();
      switch (rng() % 3) {
        case 0:
          s[at] = alphabet[rng() % (sizeof alphabet - 1)];
          break;
        case 1:
          s.erase(at, 1 + rng() % 8);
          break;
        default:
          s.insert(at, 1, alphabet[rng() % (sizeof alphabet - 1)]);
          break;
      }
    }
    absl::StatusOr<RtAppDescription> d = ParseRtApp(s, "mutant.json");
    if (!d.ok()) {
      EXPECT_THAT(d.status().message(), HasSubstr("mutant.json"));
      continue;
    }
    ++parsed;
    d->duration = std::min<Nanos>(d->duration < 0 ? 50 * kNsPerMs : d->duration, 50 * kNsPerMs);
    std::unique_ptr<Simulator> sim = Sim(seed);
    absl::StatusOr<std::unique_ptr<RtAppRun>> run = RtAppRun::Start(*d, *sim);
    if (!run.ok()) continue;  // e.g. a CPU the mutation made up
    // A run error (an unlock the mutation orphaned) is a status, not a crash.
    (void)(*run)->RunToEnd(50 * kNsPerMs);
  }
  EXPECT_GT(parsed, 10);  // the mutations also reach the runtime
}

}  // namespace
}  // namespace isolation::workload
