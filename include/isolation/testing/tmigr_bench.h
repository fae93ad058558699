// SPDX-License-Identifier: GPL-2.0-or-later
// -----------------------------------------------------------------------------
// testing/tmigr_bench.h
// -----------------------------------------------------------------------------
//
// Google Benchmark helpers of the conformance kit for the timer-migration
// hierarchy: register the hierarchy's hot paths for a variant beside a
// baseline in one binary, timed in alternating batches, with the ratio as a
// counter (testing/bench.h, CompareToBaseline).
//
//   int main(int argc, char** argv) {
//     isolation::testing::RegisterTmigrBenchmarks("pin-odd");   // vs "v6.9"
//     benchmark::Initialize(&argc, argv);
//     benchmark::RunSpecifiedBenchmarks();
//   }
//
// Benchmarks, each at 8, 16, ..., max_cpus CPUs on one node (the variant and
// the baseline get the same machine: every fourth CPU housekeeping, the
// others domain-isolated, after the late init -- a variant that does not
// exclude CPUs ignores the isolation):
//   tmigr/IdleEntryExit/<variant>  tmigr_cpu_deactivate() + tmigr_cpu_activate()
//                                  of the only active CPU (walks to the root);
//   tmigr/NewTimer/<variant>       tmigr_cpu_new_timer() of an idle CPU in an
//                                  idle branch, a new expiry every call;
//   tmigr/RemoteExpiry/<variant>   an idle CPU queues its timer and the
//                                  migrator expires it (tmigr_handle_remote()).
// Counters: ns_per_op, <baseline>_ns_per_op, ratio_to_<baseline>, levels.
//
// Kernel counterpart: kernel/time/timer_migration.c (see tmigr/tmigr.h).
// Thread-safety: register before benchmark::RunSpecifiedBenchmarks(); the
// benchmarks are single-threaded (uncontended costs).

#ifndef ISOLATION_TESTING_TMIGR_BENCH_H_
#define ISOLATION_TESTING_TMIGR_BENCH_H_

#include <string_view>

namespace isolation::testing {

// `variant` and `baseline` are "participation[/hierarchy]" (testing/tmigr.h).
// A name no registry knows makes each benchmark report an error (SkipWithError).
// REQUIRES: max_cpus a power of two in [8, kMaxCpus].
void RegisterTmigrBenchmarks(std::string_view variant, std::string_view baseline = "v6.9",
                             int max_cpus = 4096);

}  // namespace isolation::testing

#endif  // ISOLATION_TESTING_TMIGR_BENCH_H_
