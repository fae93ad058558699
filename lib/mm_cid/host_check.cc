// SPDX-License-Identifier: GPL-2.0-or-later
// rseq mm_cid of pinned threads against I1/I3 (see mm_cid/host_check.h).

#include "isolation/mm_cid/host_check.h"

#include <pthread.h>
#include <sched.h>
#include <sys/auxv.h>
#include <sys/rseq.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "isolation/core/clock.h"

namespace isolation::mm_cid {
namespace {

// struct rseq: mm_cid is the u32 at +24 (glibc 2.36's <sys/rseq.h> predates it).
constexpr ptrdiff_t kRseqMmCidOffset = 24;
constexpr unsigned long kRseqFeatureSizeWithMmCid = 28;

// The calling thread's mm_cid (only the thread itself may read it).
uint32_t OwnMmCid() {
  const char* base = static_cast<const char*>(__builtin_thread_pointer()) + __rseq_offset;
  return __atomic_load_n(reinterpret_cast<const uint32_t*>(base + kRseqMmCidOffset),
                         __ATOMIC_RELAXED);
}

}  // namespace

HostCheck CheckHostMmCid() {
  HostCheck check{"mm_cid: rseq mm_cid of threads pinned one per CPU vs invariants I1/I3",
                  HostVerdict::kNotAvailable, "", "", ""};
  const unsigned long feature_size = getauxval(AT_RSEQ_FEATURE_SIZE);
  if (feature_size < kRseqFeatureSizeWithMmCid) {
    check.detail = absl::StrCat("rseq feature size ", feature_size,
                                " < 28: the kernel has no mm_cid (< 6.3?)");
    return check;
  }
  if (__rseq_size == 0) {
    check.detail =
        "glibc did not register rseq (__rseq_size == 0, e.g. GLIBC_TUNABLES=glibc.pthread.rseq=0)";
    return check;
  }
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0) {
    check.detail = "sched_getaffinity failed";
    return check;
  }
  std::vector<int> cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &allowed)) cpus.push_back(c);
  }
  const int allowed_count = static_cast<int>(cpus.size());
  const int n = std::min(allowed_count, 8);
  std::vector<std::set<uint32_t>> seen(static_cast<size_t>(n));
  std::atomic<int> ready{0};
  std::atomic<bool> pinned{true};
  std::vector<std::thread> threads;
  for (int i = 0; i < n; ++i) {
    threads.emplace_back([&, i] {
      cpu_set_t one;
      CPU_ZERO(&one);
      CPU_SET(cpus[static_cast<size_t>(i)], &one);
      if (pthread_setaffinity_np(pthread_self(), sizeof(one), &one) != 0) pinned = false;
      ready.fetch_add(1);
      while (ready.load() < n) {
      }
      const Nanos end = MonotonicNanos() + 30 * kNsPerMs;
      while (MonotonicNanos() < end) seen[static_cast<size_t>(i)].insert(OwnMmCid());
    });
  }
  for (auto& t : threads) t.join();
  if (!pinned.load()) {
    check.detail = "cannot pin a thread to an allowed CPU";
    return check;
  }
  std::vector<std::string> per_thread, problems;
  for (int i = 0; i < n; ++i) {
    per_thread.push_back(absl::StrCat("cpu", cpus[static_cast<size_t>(i)], ":{",
                                      absl::StrJoin(seen[static_cast<size_t>(i)], ","), "}"));
    for (uint32_t id : seen[static_cast<size_t>(i)]) {
      if (id >= static_cast<uint32_t>(allowed_count)) {
        problems.push_back(absl::StrCat("I3: ID ", id, " >= ", allowed_count, " allowed CPUs"));
      }
      for (int k = i + 1; k < n; ++k) {
        if (seen[static_cast<size_t>(k)].count(id)) {
          problems.push_back(absl::StrCat("I1: ID ", id, " on the threads pinned to cpu",
                                          cpus[static_cast<size_t>(i)], " and cpu",
                                          cpus[static_cast<size_t>(k)]));
        }
      }
    }
  }
  check.model = absl::StrCat("IDs < ", allowed_count, ", pairwise distinct across the ", n,
                             " pinned threads");
  check.kernel = absl::StrJoin(per_thread, " ");
  check.verdict = problems.empty() ? HostVerdict::kAgree : HostVerdict::kDisagree;
  check.detail = problems.empty()
                     ? absl::StrCat("30 ms of samples per thread; rseq feature size ", feature_size)
                     : absl::StrJoin(problems, "; ");
  return check;
}

}  // namespace isolation::mm_cid
