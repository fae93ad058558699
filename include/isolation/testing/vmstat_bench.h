// SPDX-License-Identifier: GPL-2.0-or-later
// -----------------------------------------------------------------------------
// testing/vmstat_bench.h
// -----------------------------------------------------------------------------
//
// Google Benchmark helpers of the conformance kit for vmstat: the hot paths
// of a variant (a fold policy, optionally ":slot") timed beside a baseline
// variant in the same binary, interleaved, with the ratio as a counter
// (testing/bench.h, CompareToBaseline).  In a benchmark program of yours:
//
//   #include "isolation/testing/vmstat_bench.h"
//   int main(int argc, char** argv) {
//     ... RegisterFoldPolicy({"B.half", ...});
//     isolation::testing::RegisterVmstatBenchmarks("B.half");  // vs "A1"
//     benchmark::Initialize(&argc, argv);
//     benchmark::RunSpecifiedBenchmarks();
//   }
//
// Registered, each as BM_Vmstat<Op>/<variant> with counters ns_per_op,
// <baseline>_ns_per_op and ratio_to_<baseline>:
//   Mod                  mod_zone_page_state(+1/-1 alternately) (NR_MLOCK)
//   ModIrqsOff           __mod_zone_page_state
//   Inc                  inc_node_page_state (overstep)
//   ModWithRemoteFolder  Mod while another thread folds the CPU remotely
//                        (remote-foldable slots) or scans it (need_update)
//   SyscallHookChain     S8: 2 x (update + return to user of a nohz_full
//                        CPU whose tick is stopped), one mlock/munlock pair
//   ReturnToUserClean    the return-to-user hook of a clean CPU
//   TickStopQuietClean   quiet_vmstat on a clean CPU's tick-stop attempt
//
// Kernel counterpart: none.  Thread-safety: call before
// benchmark::RunSpecifiedBenchmarks, from one thread.

#ifndef ISOLATION_TESTING_VMSTAT_BENCH_H_
#define ISOLATION_TESTING_VMSTAT_BENCH_H_

#include <string_view>

namespace isolation::testing {

// Registers the benchmarks above for `variant` against `baseline` (mainline:
// "A1").  Unknown names make the benchmarks report an error when they run.
void RegisterVmstatBenchmarks(std::string_view variant, std::string_view baseline = "A1");

}  // namespace isolation::testing

#endif  // ISOLATION_TESTING_VMSTAT_BENCH_H_
