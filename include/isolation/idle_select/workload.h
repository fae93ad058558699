// SPDX-License-Identifier: GPL-2.0-or-later
// -----------------------------------------------------------------------------
// idle_select/workload.h
// -----------------------------------------------------------------------------
//
// User-level message-passing workloads for the idle_select harness
// (hooks.h): hackbench-like groups, sched-pipe ping-pong, netperf-RR-like
// request/response pairs and schbench-like batch wake, written as TaskBodies
// with Block()/Wake(), so the same workload runs on the Simulator and on the
// RealThreadDriver; and the load sweep that sizes one of them to a share of
// the driver's CPUs.
//
// Kernel counterpart: none in the kernel; the user-space benchmarks the
// kernel threads measure with: rt-tests hackbench.c, perf bench sched pipe,
// netperf TCP_RR, masoncl/schbench.
//
// Thread-safety contract: a Run* call sets its workload up and drives the
// driver from the calling thread; its tasks run on the driver's CPU threads.
// Each Channel has a Mutex (isolation/core/mutex.h) (user-level pipes, not a
// kernel hot path); the completion counters are atomics.

#ifndef ISOLATION_IDLE_SELECT_WORKLOAD_H_
#define ISOLATION_IDLE_SELECT_WORKLOAD_H_

#include <cstdint>
#include <deque>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "isolation/core/cpumask.h"
#include "isolation/core/driver.h"
#include "isolation/core/mutex.h"
#include "isolation/idle_select/hooks.h"

namespace isolation::idle_select {

// A bounded message channel between user-level tasks (a pipe).  Readers
// and writers that cannot proceed Block(); the other side Wake()s them.
// The wake is issued after the waiter is recorded under the channel mutex;
// a waiter re-checks the channel every time it runs, so a spurious run is
// harmless.
class Channel {
 public:
  explicit Channel(int capacity) : capacity_(capacity) {}
  // Returns true if a message was written; otherwise `self` is recorded as a
  // waiting writer and the caller must Block().
  bool TryWrite(Driver& d, TaskId self, int waker_cpu);
  bool TryRead(Driver& d, TaskId self, int waker_cpu);

 private:
  Mutex mu_;
  int capacity_;
  int count_ ABSL_GUARDED_BY(mu_) = 0;
  std::deque<TaskId> waiting_readers_ ABSL_GUARDED_BY(mu_);
  std::deque<TaskId> waiting_writers_ ABSL_GUARDED_BY(mu_);
};

struct WorkloadResult {
  Nanos duration_ns = 0;         // start barrier to last task done
  int64_t operations = 0;        // messages / round trips / wakeups
  std::vector<Nanos> latencies;  // schbench: wake -> run
  bool completed = false;        // every task finished (no lost wakeup)
};

struct HackbenchParams {
  int groups = 1;
  int senders = 20;                       // per group (= receivers)
  int messages = 100;                     // per sender per receiver (hackbench --loops)
  int channel_capacity = 16;              // messages a pipe holds before the writer blocks
  Nanos work_per_message = 2 * kNsPerUs;  // user-mode time per write / read
  int work_jitter_pct = 0;                // +- uniform jitter on each work step (task rng)
};
struct PipeParams {
  int round_trips = 10000;
  int pairs = 1;  // independent ping-pong pairs, driven together
  Nanos work_per_message = 1 * kNsPerUs;
  int work_jitter_pct = 0;
};
// netperf-RR analogue (spec S12): `pairs` client/server pairs doing
// request/response transactions.  Each message spends `net_delay_ns` "on the
// wire" (the sender sleeps, then writes: loopback / softirq time during
// which neither side runs), so CPUs do idle between transactions even at
// 200 % threads, as the TCP_RR report's 17.6 % idle shows.  The wire sleep
// ends with a timer wakeup (waker -1); the write wakes the partner (waker =
// the sender's CPU).
struct RequestResponseParams {
  int pairs = 8;
  int transactions = 1000;  // per pair
  Nanos work_per_message = 5 * kNsPerUs;
  Nanos net_delay_ns = 5 * kNsPerUs;
  int work_jitter_pct = 50;
};
struct SchbenchParams {
  int message_tasks = 2;
  int workers_per_message = 4;
  int rounds = 200;  // wake rounds per worker
  Nanos think_ns = 20 * kNsPerUs;
};

// Spawn a workload on `driver`, registering every task with `hooks` (may be
// null), run it until done or `timeout` of driver time, and report.  Tasks
// start spread round-robin over `cpus` (empty = every online CPU).
absl::StatusOr<WorkloadResult> RunHackbench(Driver& driver, IdleSelectHooks* hooks,
                                            const HackbenchParams& params, Nanos timeout,
                                            const CpuMask& cpus = CpuMask());
absl::StatusOr<WorkloadResult> RunPipe(Driver& driver, IdleSelectHooks* hooks,
                                       const PipeParams& params, Nanos timeout,
                                       const CpuMask& cpus = CpuMask());
absl::StatusOr<WorkloadResult> RunRequestResponse(Driver& driver, IdleSelectHooks* hooks,
                                                  const RequestResponseParams& params,
                                                  Nanos timeout, const CpuMask& cpus = CpuMask());
absl::StatusOr<WorkloadResult> RunSchbench(Driver& driver, IdleSelectHooks* hooks,
                                           const SchbenchParams& params, Nanos timeout,
                                           const CpuMask& cpus = CpuMask());

// ---------------------------------------------------------------------------
// Load sweep (spec S22): one workload sized to a share of the driver's CPUs.
// ---------------------------------------------------------------------------
enum class LoadWorkload { kHackbench, kPipe, kSchbench, kRequestResponse };
// "hackbench", "pipe", "schbench", "rr".
std::string_view LoadWorkloadName(LoadWorkload w);
struct LoadPointResult {
  // hackbench: modelled/real ms to finish (lower is better); pipe and rr:
  // round trips per ms over `window` (higher is better); schbench: p99
  // wake->run latency in us (lower is better).
  double value = 0;
  int tasks = 0;
  bool completed = false;  // hackbench / schbench ran to the end
  HarnessCounters counters;
};
// Tasks for `load_pct` % of the N online CPUs (n = max(1, N * load_pct / 100)):
// hackbench one group of n/2 senders + n/2 receivers (>= 1 each, 20 loops);
// pipe n ping-pong pairs; rr n request/response pairs (netperf "n threads");
// schbench 2 message tasks x max(1, n/2) workers, 30 rounds, 100 us think.
// Pipe and rr run for `window`; hackbench and schbench until done (at most
// 20 x window).  `hooks` must be registered with `driver`.  Errors: bad
// load_pct (1..1000) or window, and workload errors.
absl::StatusOr<LoadPointResult> RunLoadPoint(Driver& driver, IdleSelectHooks& hooks,
                                             LoadWorkload workload, int load_pct, Nanos window);

}  // namespace isolation::idle_select

#endif  // ISOLATION_IDLE_SELECT_WORKLOAD_H_
