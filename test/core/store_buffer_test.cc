// SPDX-License-Identifier: GPL-2.0-or-later
// StoreBufferModel (store_buffer.h) and Interleaver::Explore: the SB litmus
// test is reachable without fences and unreachable with them; store
// forwarding; delayed CAS visibility; drains at operation end.

#include "isolation/core/store_buffer.h"

#include <atomic>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "isolation/core/interleave.h"
#include "isolation/testing/status_matchers.h"

namespace isolation {
namespace {

// Without a model the wrappers are the plain operations.
TEST(StoreBuffer, InactiveIsPlainAtomics) {
  std::atomic<int> x{0};
  store_buffer::Store(x, 5, std::memory_order_relaxed);
  EXPECT_EQ(x.load(), 5);
  EXPECT_EQ(store_buffer::Load(x, std::memory_order_relaxed), 5);
  int e = 5;
  EXPECT_TRUE(store_buffer::CompareExchangeDelayed(x, e, 6, std::memory_order_relaxed));
  EXPECT_EQ(store_buffer::Load(x, std::memory_order_relaxed), 6);
}

// A buffered store is seen by its own thread (forwarding), not by another,
// until the writer fences; the end of an actor drains it too.
TEST(StoreBuffer, ForwardingAndFenceVisibility) {
  std::atomic<int> x{0};
  int seen_by_writer = -1, seen_before_fence = -1, seen_after_fence = -1;
  StoreBufferModel sb;
  Interleaver il;
  il.Add("w", [&] {
    store_buffer::Store(x, 1, std::memory_order_relaxed);
    seen_by_writer = store_buffer::Load(x, std::memory_order_relaxed);
    ISOLATION_INTERLEAVE_POINT("w.stored");
    store_buffer::OnFullFence();
    ISOLATION_INTERLEAVE_POINT("w.fenced");
  });
  il.Add("r1", [&] { seen_before_fence = store_buffer::Load(x, std::memory_order_relaxed); });
  il.Add("r2", [&] { seen_after_fence = store_buffer::Load(x, std::memory_order_relaxed); });
  ISOLATION_ASSERT_OK(
      il.Run({{"w", "w.stored"}, {"r1", ""}, {"w", "w.fenced"}, {"r2", ""}, {"w", ""}}));
  EXPECT_EQ(seen_by_writer, 1);
  EXPECT_EQ(seen_before_fence, 0);
  EXPECT_EQ(seen_after_fence, 1);
  EXPECT_EQ(sb.Pending(), 0);
  EXPECT_EQ(sb.stats().buffered_stores, 1);
  EXPECT_EQ(sb.stats().forwarded_loads, 1);
}

TEST(StoreBuffer, ActorEndDrains) {
  std::atomic<int> x{0};
  int seen = -1;
  StoreBufferModel sb;
  Interleaver il;
  il.Add("w", [&] { store_buffer::Store(x, 7, std::memory_order_relaxed); });
  il.Add("r", [&] { seen = store_buffer::Load(x, std::memory_order_relaxed); });
  ISOLATION_ASSERT_OK(il.Run({{"w", ""}, {"r", ""}}));
  EXPECT_EQ(seen, 7);
}

// A delayed CAS is atomic (a second CAS expecting the old value fails) but
// other threads' loads see the old value until the CASer fences; another
// thread's RMW on the location ends the stale view.
TEST(StoreBuffer, DelayedCasIsAtomicButLate) {
  std::atomic<uint32_t> x{0};
  uint32_t stale = 99, after_rmw = 99;
  bool second_cas = true;
  StoreBufferModel sb;
  Interleaver il;
  il.Add("a", [&] {
    uint32_t e = 0;
    EXPECT_TRUE(store_buffer::CompareExchangeDelayed(x, e, 1u, std::memory_order_relaxed));
    EXPECT_EQ(store_buffer::Load(x, std::memory_order_relaxed), 1u);  // its own value
    ISOLATION_INTERLEAVE_POINT("a.cas");
  });
  il.Add("b", [&] {
    stale = store_buffer::Load(x, std::memory_order_relaxed);
    uint32_t e = 0;
    second_cas = store_buffer::CompareExchange(x, e, 2u, std::memory_order_relaxed);
    after_rmw = store_buffer::Load(x, std::memory_order_relaxed);
  });
  ISOLATION_ASSERT_OK(il.Run({{"a", "a.cas"}, {"b", ""}, {"a", ""}}));
  EXPECT_EQ(stale, 0u) << "the delayed CAS value is not yet visible";
  EXPECT_FALSE(second_cas) << "two CASes expecting the same value can never both win";
  EXPECT_EQ(after_rmw, 1u) << "after an RMW read it, everyone sees the value";
  EXPECT_EQ(sb.stats().stale_loads, 1);
}

// The store-buffer litmus test (SB): x = y = 0; A: x = 1; [fence]; r1 = y.
// B: y = 1; [fence]; r2 = x.  r1 == r2 == 0 must be reachable without the
// fences (and is never reachable with interleavings alone) and unreachable
// with them.  Every schedule at the granularity of the points is run.
struct SbOutcome {
  int schedules = 0;
  int both_zero = 0;
};
SbOutcome ExploreSb(bool fences, bool model) {
  std::atomic<int> x{0}, y{0};
  int r1 = -1, r2 = -1;
  SbOutcome out;
  auto run = [&] {
    auto n = Interleaver::Explore(
        [&](Interleaver& il) {
          x.store(0);
          y.store(0);
          r1 = r2 = -1;
          il.Add("a", [&] {
            store_buffer::Store(x, 1, std::memory_order_relaxed);
            ISOLATION_INTERLEAVE_POINT("sb.a.stored");
            if (fences) store_buffer::OnFullFence();
            r1 = store_buffer::Load(y, std::memory_order_relaxed);
            ISOLATION_INTERLEAVE_POINT("sb.a.loaded");
          });
          il.Add("b", [&] {
            store_buffer::Store(y, 1, std::memory_order_relaxed);
            ISOLATION_INTERLEAVE_POINT("sb.b.stored");
            if (fences) store_buffer::OnFullFence();
            r2 = store_buffer::Load(x, std::memory_order_relaxed);
            ISOLATION_INTERLEAVE_POINT("sb.b.loaded");
          });
        },
        [&](const std::vector<std::string>&) {
          if (r1 == 0 && r2 == 0) ++out.both_zero;
        });
    ISOLATION_ASSERT_OK(n);
    out.schedules = n.ok() ? *n : 0;
  };
  if (model) {
    StoreBufferModel sb;
    run();
  } else {
    run();
  }
  return out;
}

TEST(StoreBuffer, SbLitmus_NoFencesReachesBothZero) {
  const SbOutcome o = ExploreSb(/*fences=*/false, /*model=*/true);
  EXPECT_EQ(o.schedules, 20) << "C(6,3): two actors of three segments each";
  EXPECT_GT(o.both_zero, 0) << "the store buffer must produce the SB outcome";
}

TEST(StoreBuffer, SbLitmus_FencesForbidBothZero) {
  const SbOutcome o = ExploreSb(/*fences=*/true, /*model=*/true);
  EXPECT_EQ(o.schedules, 20);
  EXPECT_EQ(o.both_zero, 0);
}

TEST(StoreBuffer, SbLitmus_InterleavingsAloneNeverReachBothZero) {
  const SbOutcome o = ExploreSb(/*fences=*/false, /*model=*/false);
  EXPECT_EQ(o.schedules, 20);
  EXPECT_EQ(o.both_zero, 0) << "sequentially consistent interleavings cannot produce SB";
}

// Explore counts complete schedules: actors with a and b points have
// C(a+b+2, a+1) interleavings of their segments.
TEST(InterleaverExplore, CountsAllInterleavings) {
  std::vector<std::string> seen;
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto n, Interleaver::Explore(
                                             [&](Interleaver& il) {
                                               il.Add("p", [] {
                                                 ISOLATION_INTERLEAVE_POINT("p1");
                                                 ISOLATION_INTERLEAVE_POINT("p2");
                                               });
                                               il.Add("q",
                                                      [] { ISOLATION_INTERLEAVE_POINT("q1"); });
                                             },
                                             [&](const std::vector<std::string>& log) {
                                               std::string s;
                                               for (const auto& e : log) s += e + ",";
                                               seen.push_back(s);
                                             }));
  EXPECT_EQ(n, 10);  // C(5, 2): 3 segments of p, 2 of q
  auto too_many = Interleaver::Explore(
      [&](Interleaver& il) {
        il.Add("p", [] { ISOLATION_INTERLEAVE_POINT("p1"); });
        il.Add("q", [] { ISOLATION_INTERLEAVE_POINT("q1"); });
      },
      [](const std::vector<std::string>&) {}, 2);
  EXPECT_EQ(too_many.status().code(), absl::StatusCode::kResourceExhausted);
}

TEST(InterleaverExplore, NextPointSliceMayFinish) {
  int steps = 0;
  Interleaver il;
  il.Add("a", [&] {
    ++steps;
    ISOLATION_INTERLEAVE_POINT("a1");
    ++steps;
  });
  ISOLATION_ASSERT_OK(il.Run({{"a", Interleaver::kNextPoint}, {"a", Interleaver::kNextPoint}}));
  EXPECT_EQ(steps, 2);
}

}  // namespace
}  // namespace isolation
