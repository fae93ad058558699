// SPDX-License-Identifier: GPL-2.0-or-later
// rseq_threads: a multithreaded workload that reads its own rseq concurrency
// IDs -- the recorded fixture's "multithreaded rseq reader" (docs/replay.md).
//
//   rseq_threads [threads=4] [milliseconds=300] [sleep_us=200]
//
// Each thread spins a little, reads the mm_cid field of its rseq area (glibc
// registers rseq for every thread: __rseq_offset from the thread pointer),
// then sleeps, yields or waits for its neighbour, so the kernel switches,
// migrates and re-assigns IDs; at the end it prints, per thread, the IDs it
// saw.  A recording of it (isolab record -- rseq_threads) has the kernel's
// rseq:rseq_update of each switch-in beside them.
//
// Kernel counterpart: the rseq ABI (include/uapi/linux/rseq.h, mm_cid at
// offset 24, AT_RSEQ_FEATURE_SIZE >= 28), as tcmalloc and librseq read it.
// Thread safety: a program.

#include <sched.h>
#include <sys/auxv.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>
#include <thread>
#include <vector>

extern "C" {
extern const ptrdiff_t __rseq_offset __attribute__((weak));
extern const unsigned int __rseq_size __attribute__((weak));
}

namespace {

#ifndef AT_RSEQ_FEATURE_SIZE
constexpr unsigned long kAtRseqFeatureSize = 27;
#else
constexpr unsigned long kAtRseqFeatureSize = AT_RSEQ_FEATURE_SIZE;
#endif
constexpr size_t kMmCidOffset = 24;

// The calling thread's rseq mm_cid, -1 if rseq is not registered.
int32_t ReadMmCid() {
  if (&__rseq_size == nullptr || __rseq_size == 0) return -1;
  const auto* base = static_cast<const char*>(__builtin_thread_pointer()) + __rseq_offset;
  return *reinterpret_cast<const volatile int32_t*>(base + kMmCidOffset);
}

int Arg(int argc, char** argv, int i, int def, int lo, int hi) {
  if (argc <= i) return def;
  char* end = nullptr;
  const long v = std::strtol(argv[i], &end, 10);
  if (end == argv[i] || *end != '\0' || v < lo || v > hi) {
    std::fprintf(stderr, "rseq_threads: argument %d '%s' is not an integer in [%d, %d]\n", i,
                 argv[i], lo, hi);
    std::exit(2);
  }
  return static_cast<int>(v);
}

}  // namespace

int main(int argc, char** argv) {
  const int threads = Arg(argc, argv, 1, 4, 1, 256);
  const int ms = Arg(argc, argv, 2, 300, 1, 60'000);
  const int sleep_us = Arg(argc, argv, 3, 200, 0, 1'000'000);
  if (getauxval(kAtRseqFeatureSize) < 28 || ReadMmCid() < 0) {
    std::fprintf(stderr, "rseq_threads: this kernel or libc exposes no rseq mm_cid\n");
    return 2;
  }
  std::atomic<bool> stop{false};
  std::vector<std::set<int32_t>> seen(static_cast<size_t>(threads));
  std::vector<std::atomic<int>> turn(static_cast<size_t>(threads));
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      uint64_t round = 0;
      while (!stop.load(std::memory_order_relaxed)) {
        volatile uint64_t x = 0;
        for (int i = 0; i < 20000; ++i) x = x + static_cast<uint64_t>(i);
        seen[static_cast<size_t>(t)].insert(ReadMmCid());
        switch (round++ % 3) {
          case 0:
            std::this_thread::sleep_for(std::chrono::microseconds(sleep_us));
            break;
          case 1:
            sched_yield();
            break;
          default: {
            // Hand a token to the neighbour and wait briefly for ours.
            turn[static_cast<size_t>((t + 1) % threads)].fetch_add(1, std::memory_order_release);
            for (int spin = 0;
                 spin < 1000 && turn[static_cast<size_t>(t)].load(std::memory_order_acquire) == 0;
                 ++spin) {
              sched_yield();
            }
            turn[static_cast<size_t>(t)].store(0, std::memory_order_relaxed);
          }
        }
      }
    });
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(ms));
  stop.store(true);
  for (auto& th : pool) th.join();
  for (int t = 0; t < threads; ++t) {
    std::string ids;
    for (int32_t c : seen[static_cast<size_t>(t)]) {
      ids += ' ';  // not " " + std::to_string(c): GCC 12 -O3 -Wrestrict false positive
      ids += std::to_string(c);
    }
    std::printf("thread %d saw mm_cid:%s\n", t, ids.c_str());
  }
  return 0;
}
