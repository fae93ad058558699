// SPDX-License-Identifier: GPL-2.0-or-later
// main() of the benchmark programs: Google Benchmark's, plus the host the
// figures come from (the CPU model and the calibration loops of
// testing/bench.h) in the context printed above the table and in the JSON.
// A program with its own main() (idle_select_bench) ends in BenchmarkMain()
// itself; the linker then leaves this one out.

#include "benchmark/benchmark.h"
#include "isolation/testing/bench.h"

int main(int argc, char** argv) { return isolation::testing::BenchmarkMain(argc, argv); }
