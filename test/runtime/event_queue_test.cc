// SPDX-License-Identifier: GPL-2.0-or-later
// The simulator's event queue (lib/runtime/event_queue.h) pops exactly what
// a binary heap ordered by (time, seq) pops -- the order the simulator's
// determinism and its pinned traces rest on -- over random schedules that
// mix few and many distinct times, pushes at the time being popped, pushes
// earlier than the front, and more distinct live times than the queue's
// direct-mapped table has entries (so that a time gets a second bucket).

#include "runtime/event_queue.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

namespace isolation::sim_internal {
namespace {

struct TestEvent {
  Nanos time;
  uint64_t seq;
  int64_t payload;
};

// The reference: a binary heap, as the simulator had before.
class ReferenceQueue {
 public:
  void Push(const TestEvent& e) {
    heap_.push_back(e);
    std::push_heap(heap_.begin(), heap_.end(), Later);
  }
  TestEvent Pop() {
    std::pop_heap(heap_.begin(), heap_.end(), Later);
    const TestEvent e = heap_.back();
    heap_.pop_back();
    return e;
  }
  bool empty() const { return heap_.empty(); }
  size_t size() const { return heap_.size(); }
  Nanos front_time() const { return heap_.front().time; }

 private:
  static bool Later(const TestEvent& x, const TestEvent& y) {
    return x.time != y.time ? x.time > y.time : x.seq > y.seq;
  }
  std::vector<TestEvent> heap_;
};

struct Schedule {
  int distinct_times;   // times are drawn from [now, now + distinct_times)
  int push_percent;     // chance of a push (else a pop) per step
  int earlier_percent;  // chance that a push goes before the current front
};

void RunSchedule(const Schedule& sch, uint64_t seed) {
  std::mt19937_64 rng(seed);
  EventQueue<TestEvent> queue;
  ReferenceQueue ref;
  uint64_t seq = 0;
  Nanos now = 0;
  auto uniform = [&](int n) { return static_cast<int>(rng() % static_cast<uint64_t>(n)); };
  for (int step = 0; step < 20000; ++step) {
    if (ref.empty() || uniform(100) < sch.push_percent) {
      Nanos time = now + uniform(sch.distinct_times);
      if (!ref.empty() && uniform(100) < sch.earlier_percent)
        time = ref.front_time() - 1 - uniform(3);
      const TestEvent e{time, seq++, static_cast<int64_t>(rng())};
      queue.Push(e);
      ref.Push(e);
    } else {
      ASSERT_FALSE(queue.empty());
      ASSERT_EQ(queue.front_time(), ref.front_time()) << "step " << step;
      const TestEvent got = queue.Pop();
      const TestEvent want = ref.Pop();
      ASSERT_EQ(got.time, want.time) << "step " << step << " seed " << seed;
      ASSERT_EQ(got.seq, want.seq) << "step " << step << " seed " << seed;
      ASSERT_EQ(got.payload, want.payload) << "step " << step;
      now = got.time;
    }
    ASSERT_EQ(queue.size(), ref.size());
    ASSERT_EQ(queue.empty(), ref.empty());
  }
  while (!ref.empty()) {
    const TestEvent got = queue.Pop();
    const TestEvent want = ref.Pop();
    ASSERT_EQ(got.seq, want.seq);
  }
  EXPECT_TRUE(queue.empty());
}

TEST(EventQueue, PopsInTimeSeqOrderLikeABinaryHeap) {
  const Schedule schedules[] = {
      {1, 50, 0},       // every event at one time: one FIFO bucket
      {4, 60, 0},       // few times, as ticks of many CPUs
      {4, 60, 10},      // ... with pushes before the front
      {1000, 55, 5},    // more live times than table entries: collisions
      {100000, 50, 0},  // nearly every time distinct: a heap of 1-event buckets
      {3, 30, 20},      // draining often: buckets close and reopen
  };
  for (const Schedule& sch : schedules) {
    for (uint64_t seed = 1; seed <= 20; ++seed) {
      SCOPED_TRACE(::testing::Message()
                   << "times " << sch.distinct_times << " push% " << sch.push_percent
                   << " earlier% " << sch.earlier_percent << " seed " << seed);
      RunSchedule(sch, seed);
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
}

// A time whose table entry was taken by another time gets a second bucket;
// events pushed to it after the first bucket's must still pop after them.
TEST(EventQueue, SecondBucketOfOneTimePopsAfterTheFirst) {
  EventQueue<TestEvent> queue;
  uint64_t seq = 0;
  // Enough distinct times that several share each of the 256 table entries.
  for (int round = 0; round < 3; ++round) {
    for (Nanos t = 0; t < 4096; ++t) queue.Push(TestEvent{t % 8, seq++, t});
    for (Nanos t = 0; t < 4096; ++t) queue.Push(TestEvent{8 + t, seq++, t});
  }
  Nanos last_time = -1;
  uint64_t last_seq = 0;
  size_t popped = 0;
  while (!queue.empty()) {
    const TestEvent e = queue.Pop();
    if (popped > 0) {
      ASSERT_TRUE(e.time > last_time || (e.time == last_time && e.seq > last_seq))
          << "(" << e.time << ", " << e.seq << ") after (" << last_time << ", " << last_seq << ")";
    }
    last_time = e.time;
    last_seq = e.seq;
    ++popped;
  }
  EXPECT_EQ(popped, size_t{3 * 2 * 4096});
}

}  // namespace
}  // namespace isolation::sim_internal
