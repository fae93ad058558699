// SPDX-License-Identifier: GPL-2.0-or-later
// -----------------------------------------------------------------------------
// testing/mm_cid_bench.h
// -----------------------------------------------------------------------------
//
// Google Benchmark helpers of the conformance kit (`isolation::testing`) for
// mm_cid: the hot paths of a variant timed beside a baseline variant in the
// same binary, interleaved (testing/bench.h: CompareToBaseline), with the
// ratio as a counter:
//
//   // my_bench.cc -- link isolation::testing and benchmark::benchmark_main
//   static const bool registered = [] {
//     (void)isolation::mm_cid::RegisterScope({...});   // an outside strategy, if any
//     isolation::testing::RegisterMmCidBenchmarks("lazy+scan_mine");
//     return true;
//   }();
//
// registers, each as MmCid/<benchmark>/<variant>:
//   switch_cached     two tasks of one mm alternate on CPU 0 (the parked-ID
//                     fast path: the number the hot-path budget is about);
//   switcher_cached   the same through MmCid::Switcher() (switcher.h), the
//                     form resolved once per batch: the inline cached switch
//                     (a design without an inline form: the virtual call);
//   switch_cross_mm   tasks of two mms alternate on CPU 0 (slot reuse);
//   switch_migrate    switch-out, migrate to the other CPU, switch-in;
//   scan_128          one pass of task_mm_cid_work() for an mm whose only
//                     task is pinned to CPU 64 of 128 (designs without a scan:
//                     the no-op call).
// Counters: ns_per_op (the variant), <baseline>_ns_per_op,
// ratio_to_<baseline>.  A variant or baseline that is not registered, or that
// cannot be created, is still registered, and skipped with the error (its
// message names the value) when it runs.
//
// Kernel counterpart: none (the operations are switch_mm_cid(),
// sched_mm_cid_migrate_to(), task_mm_cid_work()).  Thread-safety: call before
// benchmark::RunSpecifiedBenchmarks(), from one thread.

#ifndef ISOLATION_TESTING_MM_CID_BENCH_H_
#define ISOLATION_TESTING_MM_CID_BENCH_H_

#include <string_view>

namespace isolation::testing {

// The mainline lazy design of v6.14-v6.18: what variants are compared with.
inline constexpr std::string_view kMmCidMainline =
    "lazy+alloc_v6_14+scan_possible+batch_full+work_taskwork";

void RegisterMmCidBenchmarks(std::string_view variant, std::string_view baseline = kMmCidMainline);

}  // namespace isolation::testing

#endif  // ISOLATION_TESTING_MM_CID_BENCH_H_
