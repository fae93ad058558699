// SPDX-License-Identifier: GPL-2.0-or-later
// Internal to lib/idle_select: what the message-passing workloads
// (workload_*.cc) share -- the completion count and its timestamps, the
// jittered work step, the argument checks every workload makes, task
// placement and spawning, and the loop that runs the driver until the tasks
// are done.  Not API: the workloads themselves are in
// isolation/idle_select/workload.h.
//
// Kernel counterpart: none; user-level harness code (rt-tests hackbench.c,
// perf bench sched pipe, schbench play these roles in user space).
//
// Thread-safety: RunState's counters are atomics, updated by the tasks on any
// driver thread and read by Drive() between RunFor calls; the functions are
// called by the one thread that sets a workload up and drives it.

#ifndef ISOLATION_LIB_IDLE_SELECT_WORKLOAD_INTERNAL_H_
#define ISOLATION_LIB_IDLE_SELECT_WORKLOAD_INTERNAL_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "isolation/core/cpumask.h"
#include "isolation/core/driver.h"
#include "isolation/idle_select/workload.h"

namespace isolation::idle_select::workload_internal {

struct RunState {
  std::atomic<int> remaining{0};
  std::atomic<Nanos> end_ns{0};
  std::atomic<int64_t> operations{0};
  Nanos start_ns = 0;
  void TaskDone(Nanos now) {
    if (remaining.fetch_sub(1, std::memory_order_acq_rel) == 1)
      end_ns.store(now, std::memory_order_release);
  }
};

// `base` +- `pct` % uniform, drawn from the task's rng.
Nanos Jitter(TaskContext& ctx, Nanos base, int pct);

// What every workload checks before it allocates or spawns: the task count
// (int64, so a product of large parameters cannot wrap), the jitter, the
// timeout, and a start mask that is empty (any CPU) or of the driver's size
// with at least one online CPU.
absl::Status CheckWorkload(const Driver& d, const char* name, int64_t tasks, int jitter_pct,
                           Nanos timeout, const CpuMask& cpus);

// The online CPUs of `cpus` (empty = every online CPU), where tasks start
// round-robin.
std::vector<int> StartCpus(const Driver& d, const CpuMask& cpus);

// Spawns a task on `cpu` (affine to `cpus` when that is a non-empty mask of
// the driver's size) and registers it with `hooks` when not null.
absl::StatusOr<TaskId> SpawnOn(Driver& d, IdleSelectHooks* hooks, std::string name, int cpu,
                               const CpuMask& cpus, std::unique_ptr<TaskBody> body);

// Runs the driver until every task of `rs` is done or `timeout` has passed.
absl::StatusOr<WorkloadResult> Drive(Driver& d, RunState& rs, Nanos timeout);

}  // namespace isolation::idle_select::workload_internal

#endif  // ISOLATION_LIB_IDLE_SELECT_WORKLOAD_INTERNAL_H_
