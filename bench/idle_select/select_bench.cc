// SPDX-License-Identifier: GPL-2.0-or-later
// Selection cost and CPUs probed versus LLC size (8..256) and busy fraction
// (0..100 %) for every registered selector that is not a negative control,
// each timed beside mainline (V0) in the same run with the kit's helper
// (testing/idle_select_bench.h): counters ns_per_op, V0_ns_per_op,
// ratio_to_V0, probes, found_pct, budget.  V0 is registered against itself
// too: its ratio (~1.00) shows the noise of the interleaved timing.
//
//   idle_select_bench --benchmark_min_time=0.05
//   idle_select_bench --benchmark_filter='llc:64/'      # the hot-path row of docs/idle_select.md
// BM_SelectPlainLoop/<V>/<cpus>/<busy %>: one Select per benchmark iteration
// on the same seeded LLC and 1024 wake-ups, the loop the pre-registry
// benchmark (BM_Select, before commit 4081ac0) timed; it keeps before/after
// comparisons of the hot path like for like (bench/before_after.py).

#include <algorithm>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "benchmark/benchmark.h"
#include "isolation/idle_select/idle_select.h"
#include "isolation/idle_select/selector.h"
#include "isolation/testing/bench.h"
#include "isolation/testing/idle_select_bench.h"

namespace {

namespace is = ::isolation::idle_select;

void BM_SelectPlainLoop(benchmark::State& state, const std::string& variant) {
  const int n = static_cast<int>(state.range(0));
  const int busy_pct = static_cast<int>(state.range(1));
  is::Options o;
  o.variant = variant;
  auto created = is::IdleState::Create(is::IdleTopology::Uniform(1, n), o);
  if (!created.ok()) {
    state.SkipWithError(created.status().ToString().c_str());
    return;
  }
  is::IdleState& st = **created;
  std::mt19937_64 rng(static_cast<uint64_t>(n * 1000 + busy_pct));
  std::vector<int> order(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) order[static_cast<size_t>(i)] = i;
  std::shuffle(order.begin(), order.end(), rng);
  const int nbusy = (n * busy_pct + 50) / 100;
  const std::vector<int> busy(order.begin(), order.begin() + nbusy);
  for (int c : busy) {
    st.IdleExit(c);
    st.SetNrRunning(c, 1);
  }
  for (int c = 0; c < n; ++c) st.Tick(c);
  if (absl::Status s = st.UpdateIdleCpuScan(0, int64_t{nbusy} * is::kSchedCapacityScale); !s.ok()) {
    state.SkipWithError(s.ToString().c_str());
    return;
  }
  std::vector<std::pair<int, int>> wakeups;
  for (int i = 0; i < 1024; ++i) {
    const int target = busy.empty() ? static_cast<int>(rng() % static_cast<uint64_t>(n))
                                    : busy[static_cast<size_t>(rng() % busy.size())];
    wakeups.emplace_back(target, static_cast<int>(rng() % static_cast<uint64_t>(n)));
  }
  size_t i = 0;
  int64_t probes = 0, found = 0, ops = 0;  // as the old loop kept them
  for (auto _ : state) {
    const auto& w = wakeups[i];
    i = (i + 1) % wakeups.size();
    is::WakeTask t;
    t.prev_cpu = w.second;
    is::WakeContext ctx;
    ctx.target = w.first;
    ctx.waker_cpu = w.first;
    const is::Selection s = st.Select(t, ctx);
    benchmark::DoNotOptimize(s);
    probes += s.probes;
    found += s.idle_found() ? 1 : 0;
    ++ops;
    if (s.claimed) st.IdleRefresh(s.cpu);
  }
  state.counters["probes"] =
      static_cast<double>(probes) / static_cast<double>(std::max<int64_t>(ops, 1));
  state.counters["found_pct"] =
      100.0 * static_cast<double>(found) / static_cast<double>(std::max<int64_t>(ops, 1));
}

}  // namespace

int main(int argc, char** argv) {
  for (const char* v : {"V0", "V1"}) {
    benchmark::RegisterBenchmark(
        (std::string("BM_SelectPlainLoop/") + v).c_str(),
        [name = std::string(v)](benchmark::State& s) { BM_SelectPlainLoop(s, name); })
        ->ArgsProduct({{64}, {0, 75}});
  }
  for (const std::string& name : isolation::idle_select::SelectorNames()) {
    if (absl::Status s = isolation::testing::RegisterIdleSelectBenchmarks(name, "V0"); !s.ok()) {
      std::fprintf(stderr, "%s\n", s.ToString().c_str());
      return 2;
    }
  }
  return isolation::testing::BenchmarkMain(argc, argv);
}
