// SPDX-License-Identifier: GPL-2.0-or-later
// -----------------------------------------------------------------------------
// idle_select_hooks.h
// -----------------------------------------------------------------------------
//
// The run-queue harness glue for idle_select: a `Hooks` adapter that keeps the
// per-CPU state of an `IdleState` in step with a driver's run queues and
// answers the driver's wakeup placement (`SelectTaskCpu`) with the chosen
// selector.  The message-passing workloads that run on it are in
// isolation/idle_select/workload.h.
//
// Kernel counterpart: the calls the kernel makes into the selection state —
// do_idle() / put_prev_task_idle() (idle edges), sched_tick(),
// tick_nohz_idle_stop_tick(), ttwu_queue_wakelist() (ttwu_pending),
// select_task_rq_fair() + wake_affine() (placement), and the periodic
// load balance's update_idle_cpu_scan() (budget, from the LLC's measured
// utilisation).
//
// Thread-safety contract: per-CPU hooks touch only their CPU's state (the
// driver never runs two hooks of one CPU at once); SelectTaskCpu may run on
// any CPU thread concurrently; per-task state is preallocated (max_tasks) and
// a task's slot is only touched by the one wakeup of that task in flight.
// Counters are relaxed atomics read after RunFor returns.
//
// Memory ordering: the driver's Wake/enqueue hand-over is release/acquire
// (driver.h); everything here is a hint re-checked by the selector.
//
// Tracing: with a tracer on the driver, every placement is an "idle.select"
// instant on the waker's CPU (task, prev, target, probes, found).

#ifndef ISOLATION_IDLE_SELECT_HOOKS_H_
#define ISOLATION_IDLE_SELECT_HOOKS_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "isolation/core/driver.h"
#include "isolation/core/mutex.h"
#include "isolation/idle_select/idle_select.h"

namespace isolation::idle_select {

struct HarnessOptions {
  // Task ids [0, max_tasks) get per-task state.  REQUIRES: 1 <= max_tasks <=
  // kMaxHarnessTasks (contract-checked; clamped into the range otherwise and
  // reported by IdleSelectHooks::status()).
  int max_tasks = 1024;
  // wake_affine(): target = waker CPU (if allowed) unless prev is idle.
  bool wake_affine = true;
  // With wake_affine: the kernel's decision instead of the rule above --
  // wake_affine_idle() (waker CPU idle and cache-shared -> prev if idle else
  // waker; prev idle -> prev), then wake_affine_weight() with the run-queue
  // length as the load (waker side +1 for the wakee, prev side weighted by
  // 100 + (imbalance_pct - 100) / 2 as WA_BIAS does); no decision -> prev.
  // The driver's Wake() carries no WF_SYNC, so the sync terms are off.
  // Under load this keeps request/response partners on their own CPUs, where
  // the simplified rule pulls every pair onto one CPU for good.
  bool wake_affine_kernel = false;
  // The V1-tickstop gating rule (spec S13, Aubrey v4/v5): forward a tick
  // stop to the selection state only if the CPU's predicted idle exceeds
  // this (Vincent Guittot: 1-2 ms on arm64).  The prediction is the running
  // average of the CPU's recent idle periods, update_avg()-style (1/8 new
  // sample), as the cpuidle governor's typical-interval guess.  0 = every
  // tick stop is forwarded (the simulator stops the tick on each idle entry).
  Nanos tick_stop_min_predicted_idle = 0;
  // Feed SIS_UTIL from the measured LLC utilisation every `sis_util_period`
  // (update_idle_cpu_scan at the periodic balance); 0 = leave the budget.
  Nanos sis_util_period = 4 * kNsPerMs;
  // Check every selection against I3 (affinity) and count violations.
  bool check_invariants = true;
};

struct HarnessCounters {
  int64_t selections = 0;
  int64_t idle_found = 0;
  int64_t fallbacks = 0;
  int64_t probes = 0;
  int64_t stale_hits = 0;
  int64_t claim_failures = 0;
  int64_t placed_on_busy = 0;  // stacking: chosen CPU had a task or pending wakeup
  int64_t migrations = 0;      // chosen CPU != prev
  int64_t invariant_violations = 0;
  // Runnable tasks already on the chosen CPU at placement (summed; the
  // wakee waits behind them) and the largest such value: the "max
  // nr_running per CPU" of the TCP_RR report.
  int64_t queued_ahead = 0;
  int64_t max_queued_ahead = 0;
  int64_t tick_stops_hidden = 0;  // tick stops not forwarded (gating rule)
  // Every queued-task move the driver reported (OnMigrate): wakeup
  // migrations plus load-balancer pulls (simulator newidle_balance).
  int64_t migrate_events = 0;
  // Concurrent wake-ups (SimOptions::wake_select_cost and
  // idle_entry_cost open the windows, so both stay 0 without them):
  // stackings = placements on a CPU with no task (Driver::IsIdle) that
  // another wakeup already chose and has not enqueued yet (two wakers
  // placing on the same idle CPU); lost_wakeups = idle entries whose
  // re-check this harness skipped (the selector's
  // SelectorTraits::idle_entry_recheck false) with a task queued.
  int64_t stackings = 0;
  int64_t lost_wakeups = 0;
};

inline constexpr int kMaxHarnessTasks = 1 << 20;

// The concurrent-wakeup windows of the kit's
// Sim_ConcurrentWakeups_NoLostWakeup and of `isolab idle`'s stacking table:
// SimOptions::wake_select_cost (select -> enqueue, plus a jitter of up to as
// much again) and SimOptions::idle_entry_cost (run-queue check -> sleep).
inline constexpr Nanos kConcurrentWakeSelectCost = 2 * kNsPerUs;
inline constexpr Nanos kConcurrentIdleEntryCost = 5 * kNsPerUs;

class IdleSelectHooks final : public Hooks {
 public:
  // Placement by `state`'s own selector (IdleState::Select).
  explicit IdleSelectHooks(IdleState& state, HarnessOptions options = {});
  // Placement by `selector` (compatibility: MakeSelector(state)'s handle).
  IdleSelectHooks(IdleState& state, IdleSelector& selector, HarnessOptions options = {});

  // OK, or what is wrong with the setup: options.max_tasks out of range
  // (clamped), or a driver whose CPU count differs from the state's (found
  // at OnStart; the hooks then ignore every event and place nothing, so a
  // mismatched machine never indexes the state out of range).
  absl::Status status() const;

  // Tell the harness a task's affinity (TaskSpec.affinity) after Spawn; tasks
  // not registered may run anywhere.  Errors: id outside [0, max_tasks).
  absl::Status RegisterTask(TaskId task, const CpuMask& affinity, bool sched_idle = false);

  HarnessCounters counters() const;
  IdleState& state() { return state_; }

  // Hooks:
  void OnStart(Driver& driver) override;
  void OnTick(CpuContext& ctx, TaskId curr) override;
  void OnIdleEnter(int cpu, Nanos now) override;
  void OnIdleExit(int cpu, Nanos now) override;
  void OnTickStop(CpuContext& ctx) override;
  void OnTickRestart(CpuContext& ctx) override;
  void OnContextSwitch(int cpu, TaskId prev, TaskId next, Nanos now) override;
  void OnAffinityChange(TaskId task, const CpuMask& mask, Nanos now) override;
  void OnMigrate(TaskId task, int from, int to, Nanos now) override;
  int SelectTaskCpu(TaskId task, int prev_cpu, int waker_cpu, Nanos now) override;
  // ttwu_pending is set here, on the CPU SelectTaskCpu chose (unless the
  // waker's own), and the wakeup stops being in flight.
  void OnWakeEnqueue(TaskId task, int cpu, Nanos now) override;
  // The selector's SelectorTraits::idle_entry_recheck.
  bool IdleRecheck(int cpu, Nanos now) override;

 private:
  struct alignas(64) TaskSlot {
    int recent_used_cpu = -1;
    bool has_affinity = false;
    bool sched_idle = false;
    CpuMask affinity;
    // The wakeup in flight (selected, not yet enqueued): its CPU and waker.
    int inflight_cpu = -1;
    int inflight_waker = -1;
  };
  struct alignas(64) CpuSlot {
    // Driver idle time at the last SIS_UTIL sample.  Atomic: successive
    // samples of one LLC may be taken by different CPU threads (the stamp
    // CAS elects them but does not order their writes).
    std::atomic<Nanos> last_idle_ns{0};
    // Tick-stop gating (owner CPU only): start of the current idle period
    // and the predicted idle length.
    Nanos idle_start_ns = 0;
    Nanos predicted_idle_ns = 0;
    // Wakeups that chose this CPU and have not enqueued yet (any CPU thread).
    std::atomic<int> inflight{0};
  };
  struct alignas(64) Counter {
    std::atomic<int64_t> v{0};
  };
  void MaybeUpdateBudget(int cpu, Nanos now);
  int WakeAffineTarget(int prev_cpu, int waker_cpu) const;
  void Add(int which, int64_t n) {
    counters_[static_cast<size_t>(which)].v.fetch_add(n, std::memory_order_relaxed);
  }

  IdleState& state_;
  IdleSelector& selector_;
  HarnessOptions options_;
  Driver* driver_ = nullptr;
  // false after OnStart with a driver of another size: every hook returns.
  // Written by OnStart before any other event (driver.h), then read-only.
  bool active_ = true;
  bool idle_recheck_ = true;  // the selector's SelectorTraits::idle_entry_recheck
  std::string setup_error_;   // "" = fine; same lifetime rules as active_
  Tracer* tracer_ = nullptr;  // Driver::tracer() at OnStart
  std::vector<TaskSlot> tasks_;
  std::vector<CpuSlot> cpu_slots_;
  std::vector<std::unique_ptr<std::atomic<Nanos>>> llc_last_update_;
  std::vector<Counter> counters_;
};

// ---------------------------------------------------------------------------
// Selection sweep (no driver): cost and probes of one selector on one LLC
// at a given busy share, with the SIS_UTIL budget fed the same share.
// ---------------------------------------------------------------------------
struct SweepParams {
  SelectorName variant = "V0";  // a registered selector
  int llc_cpus = 64;
  int busy_pct = 50;
  int samples = 20000;
  uint64_t seed = 1;
  // Churn: every `flip_every` wakeups one busy CPU idles and one idle CPU
  // starts a task (no tick); every `tick_every` wakeups every CPU ticks.
  // This is what leaves V1 bits stale between ticks.  0 = static state.
  int flip_every = 4;
  int tick_every = 64;
};
struct SweepResult {
  double probes_mean = 0;
  double stale_hits_mean = 0;
  double select_ns_median = 0;  // median over batches of 16 of ns per Select()
  double found_pct = 0;         // idle CPU found, among wakeups where one existed
  int64_t samples = 0;
  int budget = 0;  // nr_idle_scan fed from the busy share
};
absl::StatusOr<SweepResult> MeasureSelect(const SweepParams& params);

}  // namespace isolation::idle_select

#endif  // ISOLATION_IDLE_SELECT_HOOKS_H_
