// SPDX-License-Identifier: GPL-2.0-or-later
// -----------------------------------------------------------------------------
// testing/idle_select_bench.h
// -----------------------------------------------------------------------------
//
// Google Benchmark helpers of the conformance kit for idle_select: the hot
// path (IdleState::Select) of a registered selector timed beside a baseline
// selector in the same binary, with the ratio as a counter.
//
//   int main(int argc, char** argv) {
//     ... RegisterSelector(...) ...
//     if (!isolation::testing::RegisterIdleSelectBenchmarks("llc_last_idle_hint").ok()) return 2;
//     benchmark::Initialize(&argc, argv);
//     benchmark::RunSpecifiedBenchmarks();
//   }
//
// Each case: one LLC of `llc_cpus` CPUs, a seeded random busy set of
// `busy_pct` %, masks settled (every CPU ticked), the SIS_UTIL budget fed the
// busy share; the waker runs on a busy CPU (target), prev is random, over
// 1024 precomputed wakeups; a claim-style selector's claim is given back
// (IdleRefresh) inside the timed loop.  Subject and baseline get identical
// states and wakeups and are timed alternately in batches
// (testing/bench.h: CompareToBaseline).  Name:
// "BM_IdleSelect/<variant>_vs_<baseline>/llc:<n>/busy:<p>".  Counters:
// ns_per_op, <baseline>_ns_per_op, ratio_to_<baseline>, probes (per
// selection, subject), found_pct (idle CPU found, subject), budget.
//
// Kernel counterpart: none (the subject is select_idle_sibling() /
// scx_select_cpu_dfl()).  Thread-safety: register before
// benchmark::RunSpecifiedBenchmarks(), from one thread.

#ifndef ISOLATION_TESTING_IDLE_SELECT_BENCH_H_
#define ISOLATION_TESTING_IDLE_SELECT_BENCH_H_

#include <string_view>
#include <vector>

#include "absl/status/status.h"

namespace isolation::testing {

struct IdleSelectBenchGrid {
  std::vector<int> llc_cpus = {8, 16, 32, 64, 128, 256};
  std::vector<int> busy_pct = {0, 25, 50, 75, 90, 95, 100};
};

// Registers one case per grid point.  Errors: a variant or baseline nobody
// registered (named), a grid value out of range (2..4096 CPUs, 0..100 %).
absl::Status RegisterIdleSelectBenchmarks(std::string_view variant,
                                          std::string_view baseline = "V0",
                                          const IdleSelectBenchGrid& grid = {});

}  // namespace isolation::testing

#endif  // ISOLATION_TESTING_IDLE_SELECT_BENCH_H_
