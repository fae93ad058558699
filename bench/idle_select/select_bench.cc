// SPDX-License-Identifier: GPL-2.0-or-later
// Selection cost and CPUs probed versus LLC size (8..256) and busy fraction
// (0..100 %), per variant, with the ratio to V0 measured in the same run.
//
// State: one LLC, a seeded random busy set of the given share, masks
// settled (every CPU ticked), SIS_UTIL budget fed the busy share.  The
// waker runs on a busy CPU (target), prev is random.  V4 claims are given
// back after each selection (IdleRefresh), which is inside the timed loop.
//
// Counters: probes (per selection), found_pct (idle CPU found among
// wakeups where one existed), ratio_to_V0 (ns per selection / V0's ns per
// selection, thread CPU time, for the same LLC size and busy share; V0 runs
// first).
//
//   idle_select_bench --benchmark_min_time=0.05

#include <time.h>

#include <map>
#include <random>
#include <utility>
#include <vector>

#include "benchmark/benchmark.h"
#include "isolation/core/clock.h"
#include "isolation/idle_select/idle_select.h"

namespace isolation::idle_select {
namespace {

Nanos ThreadCpuNanos() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<Nanos>(ts.tv_sec) * kNsPerSec + ts.tv_nsec;
}

std::map<std::pair<int, int>, double>& V0NsPerOp() {
  static auto* m = new std::map<std::pair<int, int>, double>();
  return *m;
}

void BM_Select(benchmark::State& state, Variant v) {
  const int n = static_cast<int>(state.range(0));
  const int busy_pct = static_cast<int>(state.range(1));
  Options o;
  o.variant = v;
  auto st_or = IdleState::Create(IdleTopology::Uniform(1, n), o);
  if (!st_or.ok()) {
    state.SkipWithError(st_or.status().ToString().c_str());
    return;
  }
  IdleState& st = **st_or;
  auto sel = MakeSelector(st);
  std::mt19937_64 rng(static_cast<uint64_t>(n * 1000 + busy_pct));
  std::vector<int> order(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) order[static_cast<size_t>(i)] = i;
  std::shuffle(order.begin(), order.end(), rng);
  const int nbusy = (n * busy_pct + 50) / 100;
  std::vector<int> busy(order.begin(), order.begin() + nbusy);
  for (int c : busy) {
    st.IdleExit(c);
    st.cpu_state(c).nr_running.store(1);
  }
  for (int c = 0; c < n; ++c) st.Tick(c);
  if (absl::Status s = st.UpdateIdleCpuScan(0, int64_t{nbusy} * kSchedCapacityScale); !s.ok()) {
    state.SkipWithError(s.ToString().c_str());
    return;
  }
  // Precomputed wakeups.
  constexpr int kWakeups = 1024;
  std::vector<std::pair<int, int>> wakeups;
  for (int i = 0; i < kWakeups; ++i) {
    const int target = busy.empty() ? static_cast<int>(rng() % static_cast<uint64_t>(n))
                                    : busy[static_cast<size_t>(rng() % busy.size())];
    wakeups.emplace_back(target, static_cast<int>(rng() % static_cast<uint64_t>(n)));
  }
  int64_t probes = 0, found = 0, ops = 0;
  size_t i = 0;
  // Thread CPU time: the ratio should not count time the host took the CPU
  // away (the benchmark host is shared).
  const Nanos t0 = ThreadCpuNanos();
  for (auto _ : state) {
    const auto& w = wakeups[i];
    i = (i + 1) % wakeups.size();
    WakeTask t;
    t.prev_cpu = w.second;
    WakeContext ctx;
    ctx.target = w.first;
    ctx.waker_cpu = w.first;
    const Selection s = sel->Select(t, ctx);
    benchmark::DoNotOptimize(s);
    probes += s.probes;
    found += s.idle_found() ? 1 : 0;
    ++ops;
    if (s.claimed) st.IdleRefresh(s.cpu);
  }
  const double ns_per_op = static_cast<double>(ThreadCpuNanos() - t0) / static_cast<double>(std::max<int64_t>(ops, 1));
  state.counters["probes"] = static_cast<double>(probes) / static_cast<double>(std::max<int64_t>(ops, 1));
  state.counters["found_pct"] =
      nbusy == n ? 0.0 : 100.0 * static_cast<double>(found) / static_cast<double>(std::max<int64_t>(ops, 1));
  state.counters["budget"] = st.llc(0).nr_idle_scan.load();
  auto key = std::make_pair(n, busy_pct);
  if (v == Variant::kV0) V0NsPerOp()[key] = ns_per_op;
  auto it = V0NsPerOp().find(key);
  if (it != V0NsPerOp().end() && it->second > 0) state.counters["ratio_to_V0"] = ns_per_op / it->second;
}

// Registered per (size, busy) with V0 first so ratio_to_V0 is from this run.
const bool kRegistered = [] {
  for (int n : {8, 16, 32, 64, 128, 256}) {
    for (int busy : {0, 25, 50, 75, 90, 95, 100}) {
      for (Variant v : AllVariants()) {
        std::string name = "BM_Select/";
        name += VariantName(v);
        benchmark::RegisterBenchmark(name.c_str(), [v](benchmark::State& s) { BM_Select(s, v); })
            ->Args({n, busy});
      }
    }
  }
  return true;
}();

}  // namespace
}  // namespace isolation::idle_select
