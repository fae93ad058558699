// SPDX-License-Identifier: GPL-2.0-or-later
// The lazy design's scan statistics (lib/mm_cid/stat_shards.h):
// bumped without a locked RMW in per-thread shards, summed by
// Stats().  Every call of every thread is counted once -- also with more
// threads alive at once than there are shard indices (those use the
// overflow counter) -- and a concurrent Stats() reader sees non-decreasing
// sums (each shard has one writer and the reader's relaxed loads of one
// counter are coherent).  Statistics of task_mm_cid_work(), which the
// kernel does not keep.

#include <atomic>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "isolation/mm_cid/mm_cid.h"
#include "isolation/testing/status_matchers.h"

namespace isolation::mm_cid {
namespace {

TEST(MmCidStats, ScanCountersSumEveryThreadsCallsWhileRead) {
  constexpr int kCpus = 8;
  constexpr int kThreads = 72;  // > 64 shard indices alive at once
  constexpr int kCalls = 50;
  MmCidVariant c;  // mainline: lazy, scan_possible, batch_full, work_taskwork
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto created,
                                 MmCid::Create(kCpus, c, MmCid::Limits{kThreads, kThreads}));
  std::unique_ptr<MmCid> m = std::move(created);
  // One mm per thread, each with one task: every call of a thread is due
  // (its clock advances 200 ms) and the thread is its mm's only scanner.
  std::vector<MmId> mms;
  for (int i = 0; i < kThreads; ++i) {
    ISOLATION_ASSERT_OK_AND_ASSIGN(auto mm, m->CreateMm(CpuMask::Full(kCpus), 0));
    ISOLATION_ASSERT_OK(m->Fork(kNoTask, i, mm, CpuMask::Full(kCpus), 0));
    mms.push_back(mm);
    m->Scan(mm, 1);  // sets mm_cid_next_scan (not a pass)
  }
  const MmCidStats before = m->Stats();
  std::atomic<int> alive{0};
  std::atomic<bool> done{false};
  std::vector<int64_t> ran(kThreads, 0), visits(kThreads, 0);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      alive.fetch_add(1);
      while (alive.load() < kThreads) std::this_thread::yield();  // all hold an index or overflow
      Nanos now = 1;
      for (int k = 0; k < kCalls; ++k) {
        now += 200 * kNsPerMs;
        const ScanResult r = m->Scan(mms[static_cast<size_t>(i)], now);
        ran[static_cast<size_t>(i)] += r.ran ? 1 : 0;
        visits[static_cast<size_t>(i)] += r.visits;
      }
    });
  }
  bool monotonic = true;
  std::thread reader([&] {
    int64_t last_scans = 0, last_visits = 0;
    while (!done.load()) {
      const MmCidStats s = m->Stats();
      if (s.scans < last_scans || s.slot_visits < last_visits) monotonic = false;
      last_scans = s.scans;
      last_visits = s.slot_visits;
      std::this_thread::yield();
    }
  });
  for (std::thread& t : threads) t.join();
  done.store(true);
  reader.join();
  int64_t want_scans = 0, want_visits = 0;
  for (int i = 0; i < kThreads; ++i) {
    want_scans += ran[static_cast<size_t>(i)];
    want_visits += visits[static_cast<size_t>(i)];
  }
  EXPECT_EQ(want_scans, int64_t{kThreads} * kCalls);  // every call was due
  const MmCidStats after = m->Stats();
  EXPECT_EQ(after.scans - before.scans, want_scans);
  EXPECT_EQ(after.slot_visits - before.slot_visits, want_visits);
  EXPECT_TRUE(monotonic) << "a concurrent Stats() saw scans or slot_visits decrease";
}

}  // namespace
}  // namespace isolation::mm_cid
