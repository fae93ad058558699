// SPDX-License-Identifier: GPL-2.0-or-later
// The cross-check's baselines (baselines.h).

#include "crosscheck/baselines.h"

#include <atomic>

namespace isolation::crosscheck {
namespace {

class Empty final : public EmptySwitch {
 public:
  void ContextSwitch(int, mm_cid::TaskId, mm_cid::TaskId, Nanos) override {}
};

thread_local int64_t t_counter = 0;
std::atomic<int64_t> g_counter{0};
std::atomic<int64_t> g_unit{1};
struct alignas(64) SameLine {
  std::atomic<int64_t> unit{1};
  std::atomic<int64_t> counter{0};
};
SameLine g_same_line;

}  // namespace

std::unique_ptr<EmptySwitch> MakeEmptySwitch() { return std::make_unique<Empty>(); }

[[gnu::noinline, gnu::aligned(64)]] void ThreadLocalIncrements(int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    t_counter += 1;
    asm volatile("" : : "m"(t_counter) : "memory");  // one add to memory per iteration
  }
}

[[gnu::noinline, gnu::aligned(64)]] void FetchAdds(int64_t n) {
  for (int64_t i = 0; i < n; ++i) g_counter.fetch_add(1, std::memory_order_relaxed);
}

[[gnu::noinline, gnu::aligned(64)]] void LoadThenFetchAdds(int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    g_counter.fetch_add(g_unit.load(std::memory_order_relaxed), std::memory_order_relaxed);
}

[[gnu::noinline, gnu::aligned(64)]] void LoadSameLineThenFetchAdds(int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    g_same_line.counter.fetch_add(g_same_line.unit.load(std::memory_order_relaxed),
                                  std::memory_order_relaxed);
}

}  // namespace isolation::crosscheck
