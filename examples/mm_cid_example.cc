// SPDX-License-Identifier: GPL-2.0-or-later
// Indexing per-"CPU" counters by the concurrency ID, as rseq users do
// (tcmalloc's virtual-CPU caches, librseq's RSEQ_PERCPU_MM_CID pools): the
// array is sized by the process's parallelism, not by the machine size.
//
// Part 1 drives the library's mm_cid (lazy design, v6.14 allocator) on a
// model 128-CPU machine: 4 threads pinned to 4 far-apart CPUs get IDs 0..3,
// so a 4-entry array suffices where CPU numbers would need 128 entries.
// Part 2 reads the host kernel's own mm_cid from the rseq area, when the
// kernel provides it, and does the same from real threads.

#include <sys/auxv.h>
#include <sys/rseq.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdio>
#include <thread>
#include <vector>

#include "isolation/mm_cid/mm_cid.h"
#include "isolation/mm_cid/switcher.h"
#include "isolation/mm_cid/variant.h"

using isolation::CpuMask;
using isolation::mm_cid::kNoTask;
using isolation::mm_cid::MmCid;
using isolation::mm_cid::MmCidSwitcher;
using isolation::mm_cid::MmCidVariant;

namespace {

uint32_t HostMmCid() {
  // struct rseq: mm_cid is the u32 at offset 24 (include/uapi/linux/rseq.h).
  const char* rseq = static_cast<const char*>(__builtin_thread_pointer()) + __rseq_offset;
  return __atomic_load_n(reinterpret_cast<const uint32_t*>(rseq + 24), __ATOMIC_RELAXED);
}

}  // namespace

int main() {
  constexpr int kCpus = 128;
  // The mainline lazy design on its default axes; any registered name works too.
  auto created = MmCid::Create(kCpus, MmCidVariant{});
  if (!created.ok()) {
    std::fprintf(stderr, "%s\n", std::string(created.status().message()).c_str());
    return 1;
  }
  MmCid& m = **created;
  const int cpus[] = {5, 40, 77, 126};
  CpuMask allowed(kCpus);
  for (int c : cpus) allowed.Set(c);
  auto mm = m.CreateMm(allowed, 0);
  if (!mm.ok()) return 1;
  std::array<int64_t, 4> counters{};  // sized by allowed CPUs (4), not by 128
  for (int t = 0; t < 4; ++t) {
    if (!m.Fork(t == 0 ? kNoTask : 0, t, *mm, CpuMask::Of(kCpus, cpus[t]), 0).ok()) return 1;
  }
  // The switch hook compiled into this loop, as the kernel inlines
  // switch_mm_cid() into context_switch() (switcher.h): the cached switch
  // costs no call; anything else falls back to m.ContextSwitch.
  MmCidSwitcher switcher = m.Switcher();
  for (int round = 0; round < 1000; ++round) {
    for (int t = 0; t < 4; ++t) {
      switcher.ContextSwitch(cpus[t], kNoTask, t, round);
      const int32_t id = m.TaskCid(t);
      if (id < 0 || id >= static_cast<int32_t>(counters.size())) {
        std::fprintf(stderr, "ID %d out of the 4-entry array\n", id);
        return 1;
      }
      ++counters[static_cast<size_t>(id)];  // no atomics needed: IDs are unique while running
      switcher.ContextSwitch(cpus[t], t, kNoTask, round);
    }
  }
  std::printf(
      "model: 4 threads on CPUs 5,40,77,126 of 128 -> counters by ID: %lld %lld %lld %lld\n",
      static_cast<long long>(counters[0]), static_cast<long long>(counters[1]),
      static_cast<long long>(counters[2]), static_cast<long long>(counters[3]));

  if (getauxval(AT_RSEQ_FEATURE_SIZE) < 28 || __rseq_size == 0) {
    std::printf(
        "host: kernel mm_cid not available (needs Linux >= 6.3 and glibc rseq registration)\n");
    return 0;
  }
  const unsigned n = std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::atomic<int64_t>> host_counters(n);
  std::vector<std::thread> threads;
  for (unsigned i = 0; i < n; ++i) {
    threads.emplace_back([&] {
      for (int k = 0; k < 100000; ++k) {
        const uint32_t id = HostMmCid();
        // A real rseq user would do this in an rseq critical section; a
        // relaxed atomic keeps this example simple and correct.
        if (id < n) host_counters[id].fetch_add(1, std::memory_order_relaxed);
      }
    });
  }
  for (auto& t : threads) t.join();
  std::printf("host: %u threads, counters by kernel mm_cid:", n);
  for (auto& c : host_counters) std::printf(" %lld", static_cast<long long>(c.load()));
  std::printf("\n");
  return 0;
}
