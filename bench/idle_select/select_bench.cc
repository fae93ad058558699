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

#include <cstdio>
#include <string>

#include "benchmark/benchmark.h"
#include "isolation/idle_select/selector.h"
#include "isolation/testing/idle_select_bench.h"

int main(int argc, char** argv) {
  for (const std::string& name : isolation::idle_select::SelectorNames()) {
    if (absl::Status s = isolation::testing::RegisterIdleSelectBenchmarks(name, "V0"); !s.ok()) {
      std::fprintf(stderr, "%s\n", s.ToString().c_str());
      return 2;
    }
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
