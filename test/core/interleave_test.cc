// SPDX-License-Identifier: GPL-2.0-or-later
// The Interleaver honours its script and reports script errors.

#include "isolation/core/interleave.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "isolation/testing/status_matchers.h"

#include <sched.h>

#include <atomic>
#include <filesystem>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace isolation {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

#if defined(ISOLATION_INTERLEAVE_POINTS)

// A toy "lost update": read, point, write.  Interleaving the two actors at
// the point makes one increment overwrite the other, deterministically.
TEST(Interleaver, TwoActorScriptIsHonoured) {
  int counter = 0;
  std::vector<std::string> order;
  auto increment = [&](const char* who) {
    const int seen = counter;
    order.push_back(std::string(who) + ".read");
    ISOLATION_INTERLEAVE_POINT("test.after_read");
    counter = seen + 1;
    order.push_back(std::string(who) + ".write");
  };
  Interleaver il;
  il.Add("a", [&] { increment("a"); });
  il.Add("b", [&] { increment("b"); });
  absl::Status s = il.Run({{"a", "test.after_read"}, {"b", ""}, {"a", ""}});
  ISOLATION_ASSERT_OK(s);
  EXPECT_THAT(order, ElementsAre("a.read", "b.read", "b.write", "a.write"));
  EXPECT_EQ(counter, 1);  // the lost update the script forced
  EXPECT_THAT(il.log(), ElementsAre("a:test.after_read", "b:test.after_read"));
}

TEST(Interleaver, SerialScriptHasNoLostUpdate) {
  int counter = 0;
  auto increment = [&] {
    const int seen = counter;
    ISOLATION_INTERLEAVE_POINT("test.after_read");
    counter = seen + 1;
  };
  Interleaver il;
  il.Add("a", increment);
  il.Add("b", increment);
  ISOLATION_ASSERT_OK(il.Run({{"a", ""}, {"b", ""}}));
  EXPECT_EQ(counter, 2);
}

TEST(Interleaver, StopsAtTheNamedPointOnly) {
  std::vector<int> order;
  Interleaver il;
  il.Add("a", [&] {
    order.push_back(1);
    ISOLATION_INTERLEAVE_POINT("p1");
    order.push_back(2);
    ISOLATION_INTERLEAVE_POINT("p2");
    order.push_back(4);
  });
  il.Add("b", [&] { order.push_back(3); });
  ISOLATION_ASSERT_OK(il.Run({{"a", "p2"}, {"b", ""}, {"a", ""}}));
  EXPECT_THAT(order, ElementsAre(1, 2, 3, 4));
  EXPECT_THAT(il.log(), ElementsAre("a:p1", "a:p2"));
}

TEST(Interleaver, PointNeverReachedIsAnError) {
  Interleaver il;
  bool ran = false;
  il.Add("a", [&] { ran = true; });
  absl::Status s = il.Run({{"a", "never"}});
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(s.message()), HasSubstr("never"));
  EXPECT_TRUE(ran);
}

TEST(Interleaver, UnfinishedActorIsAnErrorAndIsCompleted) {
  bool finished = false;
  Interleaver il;
  il.Add("a", [&] {
    ISOLATION_INTERLEAVE_POINT("p");
    finished = true;
  });
  absl::Status s = il.Run({{"a", "p"}});
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(s.message()), HasSubstr("unfinished"));
  EXPECT_TRUE(finished);  // run to completion before Run() returned
}

TEST(Interleaver, SliceOfFinishedActorIsAnError) {
  Interleaver il;
  il.Add("a", [] {});
  absl::Status s = il.Run({{"a", ""}, {"a", ""}});
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(s.message()), HasSubstr("already finished"));
}

TEST(Interleaver, PointsOfNonActorThreadsPassThrough) {
  Interleaver il;
  std::atomic<bool> other_done{false};
  il.Add("a", [&] {
    // A thread that is not an actor reaches a point while the script runs.
    std::thread other([&] {
      ISOLATION_INTERLEAVE_POINT("p");
      other_done.store(true);
    });
    other.join();
  });
  ISOLATION_ASSERT_OK(il.Run({{"a", ""}}));
  EXPECT_TRUE(other_done.load());
  EXPECT_TRUE(il.log().empty());
}

TEST(Interleaver, ManyRandomSchedulesOfThreeActors) {
  // Each actor appends its id at three points; any script that names points
  // in order must produce exactly the order the script implies.
  for (int round = 0; round < 20; ++round) {
    std::vector<int> trace;
    Interleaver il;
    for (int id = 0; id < 3; ++id) {
      il.Add(absl::StrCat("t", id), [&trace, id] {
        trace.push_back(id * 10 + 0);
        ISOLATION_INTERLEAVE_POINT("s1");
        trace.push_back(id * 10 + 1);
        ISOLATION_INTERLEAVE_POINT("s2");
        trace.push_back(id * 10 + 2);
      });
    }
    // Rotate which actor starts, so different threads are first each round.
    const int f = round % 3, g = (round + 1) % 3, h = (round + 2) % 3;
    // absl::StrCat, not "t" + std::to_string(id): GCC 12 at -O3 reports a
    // -Wrestrict false positive inside std::string's operator+ (GCC PR 105329).
    auto n = [](int id) { return absl::StrCat("t", id); };
    ISOLATION_ASSERT_OK(
        il.Run({{n(f), "s1"}, {n(g), "s2"}, {n(h), ""}, {n(f), "s2"}, {n(g), ""}, {n(f), ""}}));
    EXPECT_THAT(trace, ElementsAre(f * 10, g * 10, g * 10 + 1, h * 10, h * 10 + 1, h * 10 + 2,
                                   f * 10 + 1, g * 10 + 2, f * 10 + 2));
  }
}

#endif  // ISOLATION_INTERLEAVE_POINTS

TEST(Interleaver, UnknownActorIsAnErrorAndNothingRuns) {
  bool ran = false;
  Interleaver il;
  il.Add("a", [&] { ran = true; });
  absl::Status s = il.Run({{"a", ""}, {"ghost", ""}});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("ghost"));
  EXPECT_FALSE(ran);
}

TEST(Interleaver, SecondRunIsAnError) {
  Interleaver il;
  il.Add("a", [] {});
  ISOLATION_ASSERT_OK(il.Run({{"a", ""}}));
  EXPECT_EQ(il.Run({{"a", ""}}).code(), absl::StatusCode::kFailedPrecondition);
}

// The process's threads, from /proc (Linux).
int ThreadCount() {
  int n = 0;
  for ([[maybe_unused]] const auto& entry :
       std::filesystem::directory_iterator("/proc/self/task")) {
    ++n;
  }
  return n;
}

// The actors' threads come from a pool: many runs leave at most as many
// threads behind as the largest run had actors, and the actors of one run
// are distinct threads, none of them the controller.
TEST(Interleaver, ActorThreadsAreDistinctWithinARunAndReusedAcrossRuns) {
  const int before = ThreadCount();
  for (int run = 0; run < 200; ++run) {
    std::vector<std::thread::id> ids(3);
    Interleaver il;
    for (int a = 0; a < 3; ++a) {
      il.Add(absl::StrCat("a", a), [&ids, a] { ids[a] = std::this_thread::get_id(); });
    }
    ISOLATION_ASSERT_OK(il.Run({{"a2", ""}, {"a0", ""}, {"a1", ""}}));
    const std::set<std::thread::id> distinct(ids.begin(), ids.end());
    EXPECT_EQ(distinct.size(), 3u) << "run " << run;
    EXPECT_EQ(distinct.count(std::this_thread::get_id()), 0u) << "run " << run;
  }
  EXPECT_LE(ThreadCount(), before + 3);
}

// Run() keeps every party on the controller's CPU while it runs (the
// hand-overs then stay on one CPU) and gives the controller its own
// affinity back afterwards.
TEST(Interleaver, RunRestoresTheControllersAffinity) {
  cpu_set_t before;
  ASSERT_EQ(sched_getaffinity(0, sizeof(before), &before), 0);
  int actor_cpus = -1;
  Interleaver il;
  il.Add("a", [&] {
    cpu_set_t inside;
    if (sched_getaffinity(0, sizeof(inside), &inside) == 0) actor_cpus = CPU_COUNT(&inside);
  });
  ISOLATION_ASSERT_OK(il.Run({{"a", ""}}));
  cpu_set_t after;
  ASSERT_EQ(sched_getaffinity(0, sizeof(after), &after), 0);
  EXPECT_TRUE(CPU_EQUAL(&before, &after));
  EXPECT_EQ(actor_cpus, 1);
}

TEST(Interleaver, InactiveOutsideRun) {
  EXPECT_FALSE(interleave_internal::g_active.load());
  ISOLATION_INTERLEAVE_POINT("outside");  // no actor, no script: passes
}

}  // namespace
}  // namespace isolation
