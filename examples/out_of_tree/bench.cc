// SPDX-License-Identifier: GPL-2.0-or-later
// This project's variants beside mainline in one Google Benchmark binary:
// the kit registers the cases and reports ratio_to_<baseline> as a counter.

#include <cstdio>

#include "benchmark/benchmark.h"
#include "isolation/testing/idle_select_bench.h"
#include "isolation/testing/vmstat_bench.h"

int main(int argc, char** argv) {
  const absl::Status idle =
      isolation::testing::RegisterIdleSelectBenchmarks("last_idle_hint", "V0");
  if (!idle.ok()) {
    std::fprintf(stderr, "%s\n", idle.ToString().c_str());
    return 2;
  }
  isolation::testing::RegisterVmstatBenchmarks("B.half", "A1");
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
