// SPDX-License-Identifier: GPL-2.0-or-later
// -----------------------------------------------------------------------------
// mm_cid_hooks.h
// -----------------------------------------------------------------------------
//
// Runs an `MmCid` (mm_cid.h) under either driver (simulator or real pinned
// threads) by forwarding `Hooks` events to its entry points, and provides the
// workers on which the lazy design's placement (strategies.h:
// PlacementStrategy, which decides when a scan is due and where it goes)
// runs the compaction scan -- the built-in placements:
//
//   work_taskwork  on return to user of the task the tick interrupted (its
//                  CPU, possibly isolated) -- the kernel's task_work.
//   work_resume    on return to user after every switch-in (the CPU itself).
//   work_unbound   Driver::QueueHousekeepingWork (the [WQ] work_struct).
//   work_delayed   a per-mm housekeeping work item re-armed every 100 ms.
//   work_rcu       a driver whose hooks run concurrently (real threads):
//                  liburcu urcu-memb call_rcu() with its call_rcu_data worker
//                  pinned to host CPU `rcu_host_cpu` (the pin is applied with
//                  pthread_setaffinity_np because liburcu 0.13.2 applies the
//                  cpu_affinity argument lazily); a driver that serializes
//                  its hooks (the simulator), where a host worker thread
//                  would break that contract: a housekeeping work item after
//                  a modelled grace period.
//
// Cost model: the driver's kernel-time service (driver.h) times each scan:
// the simulator charges visits x visit_cost_ns ("modelled", default 130 ns
// per slot visit, calibrated at 30-35 us per 256 visits); the real driver measures it with
// CLOCK_MONOTONIC (host, indicative).  The
// adapter records, per CPU, scan executions and the longest scan, from which
// `IsolatedMaxStallNs()` is the longest compaction stall on an isolated CPU.
//
// Kernel counterpart: the call sites of the mm_cid hooks in kernel/sched/core.c
// (context_switch, set_task_cpu/activate_task, sched_tick, task_work_run),
// kernel/exit.c, fs/exec.c, and the placement patches cited in the spec.
//
// Thread safety: the hooks may be called concurrently for different CPUs
// (real-thread driver); counters are atomics.  Group-to-mm bookkeeping takes
// an internal mutex (fork/exit paths only).  Invariant checking
// (`check_invariants`): where the driver serializes its hooks
// (Driver::hooks_run_concurrently() false: the simulator) CheckAlways()
// after every event; where they run concurrently (real threads), where
// CheckAlways() would read other CPUs' in-flight state, I1 at every switch
// hook: each CPU publishes the (mm, ID) its running task holds
// after the mechanism switched it in and withdraws it before the mechanism
// switches it out (or a tick may re-take it), and a CPU that publishes a
// pair another CPU still shows counts a violation -- with sequentially
// consistent publication and reads, of two CPUs running the same ID at once
// at least one sees the other.
//
// Tracing: with a tracer on the driver, each scan is an "mm_cid.scan"
// instant on the CPU that ran it (mm, visits, reclaimed, cost_ns, task_work)
// and names its work item "mm_cid_work"; a task that runs with a different
// ID than the last time it ran is an "mm_cid.cid" instant (task, cid,
// prev_cid).
//
// Memory ordering: the adapter's counters are statistics, updated and read
// with relaxed atomics (read them after the driver stopped and Drain()); the
// ordering that matters for correctness is the mechanism's own (mm_cid.h).
// Offloaded scans see the state published before they were queued through
// the driver's hand-over (driver.h) or liburcu's call_rcu queue.

#ifndef ISOLATION_MM_CID_HOOKS_H_
#define ISOLATION_MM_CID_HOOKS_H_

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "isolation/core/driver.h"
#include "isolation/core/mutex.h"
#include "isolation/mm_cid/mm_cid.h"
#include "isolation/mm_cid/switcher.h"
#include "isolation/mm_cid/strategies.h"

namespace isolation::mm_cid {

class MmCidHooks final : public Hooks, private ScanRunner {
 public:
  struct Options {
    // Simulator: CheckAlways() after each event, through
    // CheckAlwaysIncremental() (same result, cost of what the event changed,
    // so large machines need no sampling).
    bool check_invariants = true;
    int check_every = 1;  // ... or only after every n-th event
    Nanos visit_cost_ns = kModelledVisitNs;
    Nanos rcu_grace_ns = 3 * kNsPerMs;  // simulator model of call_rcu latency
    int rcu_host_cpu = 0;               // real threads: host CPU of the call_rcu worker
                           // (outside [0, CPU_SETSIZE): no worker, counted in errors())
    // Where offloaded scans (work_unbound, work_delayed, simulated work_rcu)
    // run: explicit `worker_cpus`, else -- with `workers_on_housekeeping` --
    // the CPUs that are not isolated (an unbound workqueue cpumask / rcu_nocbs
    // offload that excludes isolated CPUs), else Driver::QueueHousekeepingWork
    // (HK_TYPE_WQ, which isolcpus= alone does not restrict).
    bool workers_on_housekeeping = true;
    CpuMask worker_cpus;
  };
  MmCidHooks(MmCid& mech, Options options);
  explicit MmCidHooks(MmCid& mech) : MmCidHooks(mech, Options{}) {}
  ~MmCidHooks() override;

  // Affinity of the tasks of `group` (used to create the group's mm and as
  // the task's affinity at fork; default: every CPU).  Call before Spawn.
  void SetGroupAffinity(int group, const CpuMask& mask);
  // The mm of `group`, kNoMm if none yet.
  MmId GroupMm(int group) const;

  // Hooks:
  void OnStart(Driver& driver) override;
  void OnTick(CpuContext& ctx, TaskId curr) override;
  void OnContextSwitch(int cpu, TaskId prev, TaskId next, Nanos now) override;
  void OnReturnToUser(CpuContext& ctx, TaskId task) override;
  void OnTaskFork(TaskId parent, TaskId child, int group, Nanos now) override;
  void OnTaskExit(int cpu, TaskId task, Nanos now) override;
  void OnMigrate(TaskId task, int from, int to, Nanos now) override;
  void OnAffinityChange(TaskId task, const CpuMask& mask, Nanos now) override;

  // Results.  ScansOn() of a CPU outside [0, num_cpus) (or before OnStart) is 0.
  int64_t ScansOn(int cpu) const;
  int64_t ScansOnIsolatedCpus() const;
  int64_t TotalScans() const;
  int64_t TotalVisits() const;
  // Longest single scan run on an isolated CPU (modelled ns on the
  // simulator, measured ns on real threads); 0 if none ran there.
  Nanos IsolatedMaxStallNs() const;
  Nanos MaxScanNs() const;  // anywhere
  int64_t violations() const { return violations_.load(std::memory_order_relaxed); }
  std::vector<std::string> FirstViolations() const;
  int64_t errors() const { return errors_.load(std::memory_order_relaxed); }

  // Waits for pending call_rcu callbacks (real threads, work_rcu); call after
  // the driver stopped and before reading results.
  void Drain();

 private:
  struct RcuItem;
  // Task ids the mechanism can hold ([0, max_tasks)); the driver's ids beyond
  // its limit (more spawns than Limits::max_tasks) are not forwarded to the
  // hot entry points, whose contract requires them in range; their fork was
  // counted in errors().
  bool Tracked(TaskId t) const { return t >= 0 && t < mech_.max_tasks(); }
  void Dispatch(ScanRequest req);
  void RunScan(MmId mm, CpuContext* ctx, int cpu, Nanos now);
  void Record(int cpu, const ScanResult& r, Nanos cost);
  void Check(const char* where);
  void QueueOnWorker(Nanos delay, WorkFn fn);
  void TraceCid(int cpu, TaskId task, Nanos now);
  // ScanRunner (strategies.h): the workers the placement queues on.
  void QueueWork(MmId mm, Nanos delay) override;
  void QueuePeriodicWork(MmId mm, Nanos period) override;
  void CallRcu(MmId mm) override;
  void PrepareRcu() override;
  // Real threads: I1 at the switch hooks (see the header comment).
  bool RealThreadCheck() const {
    return options_.check_invariants && !serialized_ && running_id_ != nullptr;
  }
  void WithdrawRunningId(int cpu);
  void PublishRunningId(int cpu, TaskId task, const char* where);
  void AddViolation(std::string text);

  MmCid& mech_;
  MmCidSwitcher switcher_;  // mech_'s inline switch (OnContextSwitch)
  Options options_;
  Driver* driver_ = nullptr;
  bool serialized_ = true;  // !Driver::hooks_run_concurrently(), from OnStart
  CpuMask isolated_;
  CpuMask worker_cpus_;
  std::atomic<uint64_t> worker_rr_{0};
  struct alignas(64) PerCpu {
    std::atomic<int64_t> scans{0};
    std::atomic<int64_t> visits{0};
    std::atomic<Nanos> max_scan_ns{0};
  };
  std::unique_ptr<PerCpu[]> per_cpu_;
  // Real threads: (mm + 1) << 32 | ID of each CPU's running task, 0 = none.
  std::unique_ptr<std::atomic<uint64_t>[]> running_id_;
  const PlacementStrategy* placement_ = nullptr;  // mech_.placement()
  bool inline_scans_ = false;  // PlacementTraits::runs_on_trigger_cpu (timed on real threads)
  int num_cpus_ = 0;
  mutable Mutex groups_lock_;
  std::map<int, MmId> group_mm_ ABSL_GUARDED_BY(groups_lock_);
  std::map<int, CpuMask> group_affinity_ ABSL_GUARDED_BY(groups_lock_);
  std::atomic<int64_t> violations_{0};
  std::atomic<int64_t> errors_{0};
  std::atomic<int64_t> events_{0};
  mutable Mutex violations_lock_;
  std::vector<std::string> first_violations_ ABSL_GUARDED_BY(violations_lock_);
  // work_rcu on real threads.
  void* rcu_data_ = nullptr;                         // struct call_rcu_data*
  std::vector<std::unique_ptr<RcuItem>> rcu_items_;  // one per mm, sized at OnStart
  std::atomic<Nanos> outside_max_scan_ns_{0};
  // Tracing (Driver::tracer() at OnStart): last ID seen per task id below
  // kTracedTasks, allocated only when tracing.
  static constexpr int kTracedTasks = 1 << 16;
  Tracer* tracer_ = nullptr;
  std::unique_ptr<std::atomic<int32_t>[]> last_cid_;
};

}  // namespace isolation::mm_cid

#endif  // ISOLATION_MM_CID_HOOKS_H_
