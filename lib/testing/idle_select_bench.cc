// SPDX-License-Identifier: GPL-2.0-or-later
// RegisterIdleSelectBenchmarks(): IdleState::Select of a selector beside a
// baseline selector, CompareToBaseline timing.

#include "isolation/testing/idle_select_bench.h"

#include <algorithm>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "isolation/idle_select/idle_select.h"
#include "isolation/testing/bench.h"

namespace isolation::testing {
namespace {

namespace is = ::isolation::idle_select;

struct Wakeup {
  int target, prev;
};

// One LLC of n CPUs, a seeded busy set of busy_pct %, settled masks, the
// SIS_UTIL budget fed the busy share; 1024 wakeups from busy CPUs.
struct Case {
  std::unique_ptr<is::IdleState> state;
  std::vector<Wakeup> wakeups;
  size_t next = 0;
  int64_t probes = 0, found = 0, ops = 0;

  absl::Status Init(const std::string& variant, int n, int busy_pct) {
    is::Options o;
    o.variant = variant;
    auto st = is::IdleState::Create(is::IdleTopology::Uniform(1, n), o);
    if (!st.ok()) return st.status();
    state = *std::move(st);
    std::mt19937_64 rng(static_cast<uint64_t>(n * 1000 + busy_pct));
    std::vector<int> order(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) order[static_cast<size_t>(i)] = i;
    std::shuffle(order.begin(), order.end(), rng);
    const int nbusy = (n * busy_pct + 50) / 100;
    const std::vector<int> busy(order.begin(), order.begin() + nbusy);
    for (int c : busy) {
      state->IdleExit(c);
      state->SetNrRunning(c, 1);
    }
    for (int c = 0; c < n; ++c) state->Tick(c);
    if (absl::Status s = state->UpdateIdleCpuScan(0, int64_t{nbusy} * is::kSchedCapacityScale);
        !s.ok())
      return s;
    for (int i = 0; i < 1024; ++i) {
      const int target = busy.empty() ? static_cast<int>(rng() % static_cast<uint64_t>(n))
                                      : busy[static_cast<size_t>(rng() % busy.size())];
      wakeups.push_back({target, static_cast<int>(rng() % static_cast<uint64_t>(n))});
    }
    return absl::OkStatus();
  }

  void Run(int64_t batch) {
    is::IdleState& st = *state;
    for (int64_t k = 0; k < batch; ++k) {
      const Wakeup& w = wakeups[next];
      next = next + 1 == wakeups.size() ? 0 : next + 1;
      is::WakeTask t;
      t.prev_cpu = w.prev;
      is::WakeContext ctx;
      ctx.target = w.target;
      ctx.waker_cpu = w.target;
      const is::Selection s = st.Select(t, ctx);
      benchmark::DoNotOptimize(s);
      probes += s.probes;
      found += s.idle_found() ? 1 : 0;
      if (s.claimed) st.IdleRefresh(s.cpu);  // give the idle period back
    }
    ops += batch;
  }
};

void BM_IdleSelect(benchmark::State& bm, const std::string& variant, const std::string& baseline,
                   int n, int busy_pct) {
  Case subject, base;
  absl::Status init = subject.Init(variant, n, busy_pct);
  if (init.ok()) init = base.Init(baseline, n, busy_pct);
  if (!init.ok()) {
    bm.SkipWithError(init.ToString().c_str());
    return;
  }
  CompareToBaseline(
      bm, [&](int64_t k) { subject.Run(k); }, [&](int64_t k) { base.Run(k); }, baseline);
  const double ops = static_cast<double>(std::max<int64_t>(subject.ops, 1));
  bm.counters["probes"] = static_cast<double>(subject.probes) / ops;
  bm.counters["found_pct"] = 100.0 * static_cast<double>(subject.found) / ops;
  bm.counters["budget"] = subject.state->nr_idle_scan(0);
}

}  // namespace

absl::Status RegisterIdleSelectBenchmarks(std::string_view variant, std::string_view baseline,
                                          const IdleSelectBenchGrid& grid) {
  for (std::string_view name : {variant, baseline}) {
    auto e = is::FindSelector(name);
    if (!e.ok()) return e.status();
  }
  for (int n : grid.llc_cpus) {
    if (n < 2 || n > 4096)
      return absl::InvalidArgumentError(absl::StrCat("idle_select bench: llc_cpus ", n));
  }
  for (int b : grid.busy_pct) {
    if (b < 0 || b > 100)
      return absl::InvalidArgumentError(absl::StrCat("idle_select bench: busy_pct ", b));
  }
  const std::string v = (*is::FindSelector(variant))->name;
  const std::string base = (*is::FindSelector(baseline))->name;
  for (int n : grid.llc_cpus) {
    for (int busy : grid.busy_pct) {
      const std::string name =
          absl::StrCat("BM_IdleSelect/", v, "_vs_", base, "/llc:", n, "/busy:", busy);
      benchmark::RegisterBenchmark(name.c_str(), [v, base, n, busy](benchmark::State& bm) {
        BM_IdleSelect(bm, v, base, n, busy);
      })->UseManualTime();
    }
  }
  return absl::OkStatus();
}

}  // namespace isolation::testing
