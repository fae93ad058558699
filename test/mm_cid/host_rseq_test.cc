// SPDX-License-Identifier: GPL-2.0-or-later
// Host cross-check: threads of this test process read the real kernel's
// mm_cid from their rseq area (struct rseq's mm_cid, Linux 6.3+) and the same invariants
// are checked on the kernel and on our port for the same thread layouts.
// Exact values are not compared (the kernel's policy changes by release).

#include <pthread.h>
#include <sched.h>
#include <sys/auxv.h>
#include <sys/rseq.h>

#include <algorithm>
#include <atomic>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "isolation/core/clock.h"
#include "isolation/mm_cid/mm_cid.h"
#include "isolation/testing/status_matchers.h"

namespace isolation::mm_cid {
namespace {

// struct rseq (include/uapi/linux/rseq.h, v6.3+): mm_cid is the u32 at +24;
// present when the kernel's rseq feature size is >= 28.  glibc 2.36's
// <sys/rseq.h> predates the field, hence the raw offset.
constexpr ptrdiff_t kRseqMmCidOffset = 24;
constexpr unsigned long kRseqFeatureSizeWithMmCid = 28;

bool HostMmCidAvailable(std::string* why) {
  const unsigned long feature_size = getauxval(AT_RSEQ_FEATURE_SIZE);
  if (feature_size < kRseqFeatureSizeWithMmCid) {
    *why =
        absl::StrCat("kernel rseq feature size ", feature_size, " < 28: no mm_cid (kernel < 6.3?)");
    return false;
  }
  if (__rseq_size == 0) {
    *why =
        "glibc did not register rseq (__rseq_size == 0, e.g. GLIBC_TUNABLES=glibc.pthread.rseq=0)";
    return false;
  }
  return true;
}

// Reads the calling thread's mm_cid (only the thread itself may).
uint32_t HostMmCid() {
  const char* base = static_cast<const char*>(__builtin_thread_pointer()) + __rseq_offset;
  return __atomic_load_n(reinterpret_cast<const uint32_t*>(base + kRseqMmCidOffset),
                         __ATOMIC_RELAXED);
}

bool PinSelf(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return pthread_setaffinity_np(pthread_self(), sizeof(set), &set) == 0;
}

std::vector<int> AllowedHostCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> v;
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return v;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &set)) v.push_back(c);
  }
  return v;
}

// I1/I2/I3 on the host: one thread pinned to each allowed CPU, all spinning
// at once for 30 ms and sampling their ID.  A pinned thread's ID stays
// parked on its CPU even when preempted, so the sets must be disjoint.
TEST(MmCidHost, I1_I3_PinnedThreadsHoldDistinctIds_KernelAndPort) {
  std::string why;
  if (!HostMmCidAvailable(&why)) GTEST_SKIP() << why;
  const std::vector<int> cpus = AllowedHostCpus();
  ASSERT_FALSE(cpus.empty());
  const int n = static_cast<int>(std::min<size_t>(cpus.size(), 8));
  std::vector<std::set<uint32_t>> seen(static_cast<size_t>(n));
  std::atomic<int> ready{0};
  std::atomic<bool> pinned_ok{true};
  std::vector<std::thread> threads;
  for (int i = 0; i < n; ++i) {
    threads.emplace_back([&, i] {
      if (!PinSelf(cpus[static_cast<size_t>(i)])) pinned_ok = false;
      ready.fetch_add(1);
      while (ready.load() < n) {
      }
      const Nanos end = MonotonicNanos() + 30 * kNsPerMs;
      while (MonotonicNanos() < end) seen[static_cast<size_t>(i)].insert(HostMmCid());
    });
  }
  for (auto& t : threads) t.join();
  ASSERT_TRUE(pinned_ok.load());
  // The process's threads: main (all allowed CPUs) + n pinned -> union = n CPUs.
  for (int i = 0; i < n; ++i) {
    for (uint32_t id : seen[static_cast<size_t>(i)]) {
      EXPECT_LT(id, static_cast<uint32_t>(n)) << "kernel I3: ID below the mm's allowed CPU count";
      for (int k = i + 1; k < n; ++k) {
        EXPECT_EQ(seen[static_cast<size_t>(k)].count(id), 0u)
            << "kernel I1: ID " << id << " on two pinned threads";
      }
    }
  }
  // The port, same layout: main task + n tasks pinned one per CPU.
  MmCidVariant c;  // lazy + alloc_v6_14: what a 6.14-6.18 kernel runs
  auto m = *MmCid::Create(n, c);
  MmId mm = *m->CreateMm(CpuMask::Full(n), 0);
  ISOLATION_ASSERT_OK(m->Fork(kNoTask, 0, mm, CpuMask::Full(n), 0));
  for (int i = 0; i < n; ++i) {
    ISOLATION_ASSERT_OK(m->Fork(0, 1 + i, mm, CpuMask::Of(n, i), 0));
    m->ContextSwitch(i, kNoTask, 1 + i, 1);
  }
  std::set<int32_t> port_ids;
  for (int i = 0; i < n; ++i) {
    const int32_t id = m->TaskCid(1 + i);
    EXPECT_LT(id, n) << "port I3";
    EXPECT_TRUE(port_ids.insert(id).second) << "port I1";
  }
}

// Restricted affinity (S3 on the host): several threads pinned to one CPU,
// the main thread allowed everywhere: every ID < weight of the union.
TEST(MmCidHost, S3_ThreadsPinnedToOneCpu_KernelAndPort) {
  std::string why;
  if (!HostMmCidAvailable(&why)) GTEST_SKIP() << why;
  const std::vector<int> cpus = AllowedHostCpus();
  ASSERT_FALSE(cpus.empty());
  const int union_weight = static_cast<int>(cpus.size());
  constexpr int kThreads = 4;
  std::atomic<uint32_t> max_id{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&] {
      PinSelf(cpus[0]);
      const Nanos end = MonotonicNanos() + 20 * kNsPerMs;
      while (MonotonicNanos() < end) {
        uint32_t id = HostMmCid();
        uint32_t prev = max_id.load();
        while (id > prev && !max_id.compare_exchange_weak(prev, id)) {
        }
        sched_yield();
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_LT(max_id.load(), static_cast<uint32_t>(union_weight))
      << "kernel: IDs bounded by the mm's CPU union";

  // Port: main task (all CPUs) + 4 tasks pinned to CPU 0 taking turns there.
  MmCidVariant c;
  const int p = std::max(union_weight, 2);
  auto m = *MmCid::Create(p, c);
  MmId mm = *m->CreateMm(CpuMask::Range(p, 0, union_weight - 1), 0);
  ISOLATION_ASSERT_OK(m->Fork(kNoTask, 0, mm, CpuMask::Range(p, 0, union_weight - 1), 0));
  for (int i = 0; i < kThreads; ++i)
    ISOLATION_ASSERT_OK(m->Fork(0, 1 + i, mm, CpuMask::Of(p, 0), 0));
  TaskId cur = kNoTask;
  int32_t port_max = 0;
  for (int k = 0; k < 40; ++k) {
    const TaskId next = 1 + k % kThreads;
    m->ContextSwitch(0, cur, next, k);
    cur = next;
    port_max = std::max(port_max, m->TaskCid(cur));
  }
  EXPECT_LT(port_max, union_weight);
}

}  // namespace
}  // namespace isolation::mm_cid
