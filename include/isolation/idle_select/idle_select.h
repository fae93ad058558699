// SPDX-License-Identifier: GPL-2.0-or-later
// -----------------------------------------------------------------------------
// idle_select.h
// -----------------------------------------------------------------------------
//
// Choosing a CPU for a waking task: the mainline last-level-cache (LLC) scan
// bounded by the SIS_UTIL budget, Aubrey Li's per-LLC idle cpumask (never
// merged) in three flavours, and sched_ext's claim-based global / per-node idle
// masks.  One shared core keeps the per-CPU state the selection reads and the
// per-LLC shared state (`struct sched_domain_shared`); selectors are
// strategies behind one interface (`IdleSelector`), chosen at run time by
// `Variant`.
//
// Kernel counterpart: kernel/sched/fair.c as of ~v6.14/6.15
// (select_idle_sibling, select_idle_cpu, select_idle_core, select_idle_smt,
// __select_idle_cpu, __update_idle_core, update_idle_cpu_scan),
// kernel/sched/topology.c (update_top_cache_domain: domain-isolated CPUs are
// singleton LLCs), kernel/sched/ext_idle.c @ 0022b328504d
// (scx_select_cpu_dfl, scx_idle_test_and_clear_cpu, scx_pick_idle_cpu,
// update_builtin_idle), and the idle-cpumask series of Aubrey Li (v3..v11).
// Spec: shared/spec/idle_select.md (section numbers below refer to it).
//
// Variants (spec section 4):
//   kV0            mainline: LLC span ∩ affinity, SIS_UTIL budget, idle cores.
//   kV1            idle mask set on every idle entry, cleared at the tick;
//                  scanned with the SIS_UTIL budget raised to the SIS_PROP
//                  floor the RFC ran under (Options::v1_min_nr).
//   kV1Eager       V1, also cleared on idle exit.
//   kV1TickStop    V1, set only when the tick stops in idle (Aubrey v4/v5).
//   kV1Unbounded   V1 without any probe budget (v9 2/2, v11 9/9).
//   kV2            two passes: mask, then the rest of the span, one budget.
//   kV3            mask, at most K probes (Options::v3_max_probes, default 4).
//   kV4Global      sched_ext built-in idle tracking, one global mask pair.
//   kV4Node        sched_ext with per-NUMA-node masks.
//   kV5            LLC span minus an overloaded-CPU mask (Abel Wu / SIS_FILTER).
// Not modelled: cluster-first scan (no cluster level in Topology), asymmetric
// capacity, the per-CPU-kthread shortcut of select_idle_sibling, core
// scheduling cookies, vCPU preemption (kept as an always-false hook).
//
// Thread-safety contract:
//   - Per-CPU entry points (IdleEnter, IdleExit, IdleRefresh, Tick, TickStop,
//     the run-queue accounting) for CPU c are called from c's own context
//     only, never concurrently for the same c (driver.h guarantees this).
//   - Select() may run concurrently with everything, from any thread, as a
//     wakeup does in the kernel: it takes no lock; CFS-style selections read
//     racy hints and may "stack" two wakees on one CPU; V4 claims with an
//     atomic test-and-clear so each idle period has at most one winner.
//   - Rebuild() and UpdateIdleCpuScan() model the (serialised) domain rebuild
//     and the periodic load balance: Rebuild must not run concurrently with
//     anything; UpdateIdleCpuScan may run concurrently with Select.
//
// Contracts and errors (docs/core.md, "Contracts and errors"): the per-CPU
// entry points, the predicates, the inspection accessors and Select() keep
// the kernel's contract (CPU numbers in [0, num_cpus()), LLC / scope ids in
// range, affinity of num_cpus() bits), stated as REQUIRES and checked with
// ISOLATION_CONTRACT (contract.h) in debug, sanitizer and ISOLATION_HARDENED
// builds.  Create(), Uniform(), FromIds(), Rebuild(), UpdateIdleCpuScan() and
// SetBudget() validate always and return absl::Status naming the bad value.
//
// Memory ordering: per-CPU state and the CFS hint/budget are relaxed atomics:
// they are hints, and every CPU returned from a mask is re-checked against the
// per-CPU state (I4).  Mask set/clear are relaxed (kernel set_bit/clear_bit
// are unordered).  The V4 claim is a seq_cst test-and-clear (the kernel's
// value-returning atomics are fully ordered), which both gives the unique
// winner and orders the claim against the claimer's later queue write.
//
// Allocation: construction and Rebuild allocate; the per-CPU entry points
// never do; Select allocates only on a thread's first selection for a given
// machine size (its per-thread scratch masks, the analogue of the kernel's
// per-CPU select_rq_mask / select_idle_mask), then reuses them.

#ifndef ISOLATION_IDLE_SELECT_H_
#define ISOLATION_IDLE_SELECT_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "isolation/core/contract.h"
#include "isolation/core/cpumask.h"
#include "isolation/core/isolation_config.h"
#include "isolation/core/topology.h"

namespace isolation::idle_select {

inline constexpr int kSchedCapacityScale = 1024;  // SCHED_CAPACITY_SCALE
inline constexpr int kLlcImbalancePct = 117;      // imbalance_pct of the LLC domain

// update_idle_cpu_scan(): the SIS_UTIL budget, integer form of spec 2.5.
// `sum_util` is the LLC's summed utilisation (1024 per fully busy CPU).
// Returns 0 for llc_weight <= 0 or negative utilisation.
int SisUtilBudget(int64_t sum_util, int llc_weight, int imbalance_pct = kLlcImbalancePct);

enum class Variant {
  kV0,
  kV1,
  kV1Eager,
  kV1TickStop,
  kV1Unbounded,
  kV2,
  kV3,
  kV4Global,
  kV4Node,
  kV5,
};
// Every variant, in the order above.
const std::vector<Variant>& AllVariants();
// "V0", "V1", "V1-eager", "V1-tickstop", "V1-unbounded", "V2", "V3", "V4g",
// "V4n", "V5".
std::string_view VariantName(Variant v);
// Inverse of VariantName (also accepts "V4" for V4g).  Error names the value.
absl::StatusOr<Variant> ParseVariant(std::string_view name);
bool IsScxVariant(Variant v);
bool UsesIdleMask(Variant v);  // V1*, V2, V3
// V1, V1-eager, V1-tickstop: the RFC's V1, bounded like select_idle_cpu()
// with the SIS_PROP floor Options::v1_min_nr (not V1-unbounded, V2, V3).
bool HasV1ScanFloor(Variant v);

// The scheduling topology the selection sees (spec 2.3): LLC spans without
// domain-isolated CPUs, SMT siblings, NUMA nodes.  Built from Topology +
// IsolationConfig, or directly (tests, embedders).
struct IdleTopology {
  int num_cpus = 0;
  std::vector<int> hw_llc_of;       // physical LLC of each CPU
  std::vector<CpuMask> hw_llc_span; // per LLC id: every CPU sharing it
  std::vector<int> llc_of;      // -1: no sd_llc (domain-isolated or offline)
  std::vector<CpuMask> llc_span;  // per LLC id: housekeeping online CPUs
  std::vector<int> core_of;
  std::vector<CpuMask> smt_mask;  // per core (cpu_smt_mask)
  std::vector<int> node_of;
  std::vector<CpuMask> node_span;  // per node: online CPUs
  CpuMask online;
  CpuMask domain_isolated;      // isolcpus=domain and isolated cpuset partitions
  CpuMask boot_domain_isolated; // isolcpus=domain only (sched_ext refuses to load)
  int smt_width = 1;

  // LLC spans = llc_mask ∩ online ∖ DomainIsolated() (update_top_cache_domain).
  static IdleTopology From(const Topology& topology, const IsolationConfig& isolation);
  // Explicit ids; `domain_isolated` may be empty (= none).  Errors: sizes
  // differ, negative or non-dense ids.
  static absl::StatusOr<IdleTopology> FromIds(const std::vector<int>& llc_of,
                                              const std::vector<int>& core_of,
                                              const std::vector<int>& node_of,
                                              const CpuMask& domain_isolated = CpuMask(),
                                              const CpuMask& boot_domain_isolated = CpuMask());
  // Convenience: `llcs` LLCs of `cores_per_llc` cores of `smt` threads,
  // `nodes` nodes (LLCs split evenly), CPUs numbered consecutively.
  // Errors: a count < 1, more nodes than LLCs, or more than kMaxCpus CPUs
  // (InvalidArgument naming the values).
  static absl::StatusOr<IdleTopology> Uniform(int llcs, int cores_per_llc, int smt = 1, int nodes = 1);
  // OK if the fields are consistent (sizes, ids in range, masks of num_cpus
  // bits, 1 <= num_cpus <= kMaxCpus); else InvalidArgument naming the first
  // bad field.  IdleState::Create() checks this for hand-built topologies.
  absl::Status Validate() const;

  // Recomputes llc_of / llc_span from hw_* for a new isolated set.
  // REQUIRES: isolated.nbits() == num_cpus (contract-checked).
  void ApplyDomainIsolation(const CpuMask& isolated);

  // REQUIRES: 0 <= a, b, cpu < num_cpus (unchecked: a plain struct).
  bool SharesCache(int a, int b) const {
    return a == b || (llc_of[static_cast<size_t>(a)] >= 0 &&
                      llc_of[static_cast<size_t>(a)] == llc_of[static_cast<size_t>(b)]);
  }
  const CpuMask& siblings(int cpu) const {
    return smt_mask[static_cast<size_t>(core_of[static_cast<size_t>(cpu)])];
  }
};

struct Options {
  Variant variant = Variant::kV0;
  // Idle-core preference (SMT): the CFS has_idle_cores hint and scx's smt mask.
  bool smt_preference = true;
  // V3: probe limit (the old SIS_PROP floor of 4).
  int v3_max_probes = 4;
  // V1, V1-eager, V1-tickstop: floor of the kernel's scan counter `nr`.
  // Aubrey Li's series (v3..v10) only replaced the span by the idle mask in
  // a select_idle_cpu() bounded by SIS_PROP, whose `nr` never fell below 4
  // (`nr = 4` when span_avg <= 4 * avg_cost; `if (!--nr) return -1`, so at
  // least 3 probes, and no limit in idle-core mode).  Ported onto SIS_UTIL:
  // nr = max(nr_idle_scan + 1, v1_min_nr), so V1 has no budget-0 cut and keeps
  // finding idle CPUs with <= 3 probes above ~85 % busy.  <= 1 gives the
  // literal spec reading (nr = nr_idle_scan + 1: cut exactly like V0).
  int v1_min_nr = 4;
  // Scan starts at target+1 (mainline since v5.15) or at target (5.10).
  bool scan_from_target_plus_one = true;
  // The 2026 rule: SCHED_IDLE wakees do not treat sched-idle CPUs as idle.
  bool sched_idle_wakee_rule = false;
  // V4: idle->idle refresh of the masks (a2a3374c47c4); off = claim bubbles.
  bool scx_idle_refresh = true;
  // V1: reset last_idle_state on Rebuild (the fix for S10).
  bool v1_reset_state_on_rebuild = false;
  // V5: apply the overloaded filter only when budget < LLC size (Abel's rule).
  bool v5_only_when_budget_short = true;
};

// Per-CPU state the selection reads (spec 2.1); one cache line per CPU.
// Written by the CPU's own context (harness), read by any waker.
struct alignas(64) CpuIdleState {
  std::atomic<uint8_t> curr_is_idle{1};   // the idle task runs
  std::atomic<uint8_t> ttwu_pending{0};   // remote wakeup in flight
  std::atomic<uint8_t> tick_stopped{0};
  std::atomic<uint8_t> in_domain{1};      // has sd_llc (copy of llc_of >= 0)
  std::atomic<int32_t> nr_running{0};     // queued + running (excl. idle task)
  std::atomic<int32_t> nr_sched_idle{0};  // of which SCHED_IDLE
  std::atomic<int32_t> distribute_cursor{-1};  // scx "any and distribute" cursor (waker side)
  uint8_t last_idle_state = 1;  // V1: last value written to the mask; owner-only
  // Shared-line writes this CPU performed (I12); owner-only, read quiescent.
  std::atomic<int64_t> shared_writes{0};
};

// Per-LLC shared state (struct sched_domain_shared, spec 2.2).  The hint and
// budget share a line; each mask is its own line-aligned allocation.
struct alignas(64) LlcShared {
  std::atomic<int32_t> has_idle_cores{0};
  std::atomic<int32_t> nr_idle_scan{0};
  std::atomic<int64_t> budget_stores{0};  // I12 / S1: stores of nr_idle_scan
  AtomicCpuMask idle_cpus;   // V1/V2/V3
  AtomicCpuMask overloaded;  // V5
  CpuMask span;
  int weight = 0;
};

// sched_ext scope: one per node (V4n) or one global (V4g).
struct alignas(64) ScxIdleMasks {
  AtomicCpuMask cpu;  // idle logical CPUs
  AtomicCpuMask smt;  // CPUs whose whole core is idle
};

// What a wakeup knows about the waking task.
struct WakeTask {
  int prev_cpu = 0;
  int recent_used_cpu = -1;  // updated by Select (p->recent_used_cpu = prev)
  const CpuMask* affinity = nullptr;  // nullptr: every CPU
  bool sched_idle = false;   // the wakee is SCHED_IDLE
};

struct WakeContext {
  int target = -1;      // wake_affine() result; -1 = prev
  int waker_cpu = -1;   // -1: timer / remote
  bool sync = false;    // WF_SYNC (V4 step 1)
  bool node_restricted = false;  // V4: SCX_PICK_IDLE_IN_NODE
};

enum class Outcome : uint8_t {
  kIdleFound,  // returned CPU passed the idle check (or was claimed)
  kFallback,   // nothing idle found: target / prev fallback
};

// Counters of one selection.
struct Selection {
  int cpu = -1;        // CFS: always valid; V4: -1 = none (caller uses prev)
  Outcome outcome = Outcome::kFallback;
  bool claimed = false;     // V4: the returned CPU's idle bit was won
  int probes = 0;           // remote per-CPU state examined by the scan
  int stale_hits = 0;       // mask said idle, per-CPU state said busy
  int claim_failures = 0;   // V4: lost test-and-clear races
  bool idle_found() const { return outcome == Outcome::kIdleFound; }
};

class IdleState;

// A selection strategy (select_idle_sibling / scx_select_cpu_dfl analogue).
class IdleSelector {
 public:
  virtual ~IdleSelector() = default;
  virtual Variant variant() const = 0;
  // select_task_rq() for a wakeup, after wake_affine() chose ctx.target.
  // REQUIRES (contract-checked): 0 <= task.prev_cpu < num_cpus;
  // task.recent_used_cpu, ctx.target and ctx.waker_cpu -1 or a CPU; an
  // affinity (if any) of num_cpus bits.
  virtual Selection Select(WakeTask& task, const WakeContext& ctx) = 0;
};

// The shared core: per-CPU state, per-LLC state, scx masks and the entry
// points the harness calls at the kernel's places.
class IdleState {
 public:
  // Errors: an inconsistent topology (IdleTopology::Validate()); an unknown
  // variant; v3_max_probes < 1; V4 with boot-time isolcpus=domain
  // (scx_enable refuses to load, 9f391f94a173).
  static absl::StatusOr<std::unique_ptr<IdleState>> Create(IdleTopology topology, Options options);
  // The same from a topology factory's result (Uniform, FromIds): its error
  // is passed through.
  static absl::StatusOr<std::unique_ptr<IdleState>> Create(absl::StatusOr<IdleTopology> topology, Options options);
  ~IdleState();
  IdleState(const IdleState&) = delete;
  IdleState& operator=(const IdleState&) = delete;

  const IdleTopology& topology() const { return topo_; }
  const Options& options() const { return options_; }
  int num_cpus() const { return topo_.num_cpus; }
  int num_llcs() const { return static_cast<int>(llcs_.size()); }

  // --- per-CPU entry points (own context) ----------------------------------
  // REQUIRES for all of them: 0 <= cpu < num_cpus() (contract-checked).
  // do_idle() entry: the idle task runs.  __update_idle_core (hint), V1
  // update(idle) (not for V1-tickstop), V4 set cpu (+smt).
  void IdleEnter(int cpu);
  // put_prev_task_idle(): a task replaces the idle task.  V1-eager and V4
  // clear.
  void IdleExit(int cpu);
  // pick_task_idle() while idle (V4 idle->idle refresh, a2a3374c47c4).
  void IdleRefresh(int cpu);
  // sched_tick(): V1 update(idle_cpu()), V5 overloaded test-before-write.
  void Tick(int cpu);
  // tick_nohz_idle_stop_tick() / restart (V1-tickstop sets on stop).
  void TickStop(int cpu);
  void TickRestart(int cpu);
  // Run-queue accounting: a task queued on / leaving `cpu`.  Enqueue clears
  // ttwu_pending (the wakeup landed).
  void Enqueue(int cpu, bool sched_idle = false);
  void Dequeue(int cpu, bool sched_idle = false);
  // A remote wakeup to `cpu` is in flight (ttwu_queue_wakelist).
  void SetWakePending(int cpu, bool pending);

  // --- domain-level entry points -------------------------------------------
  // update_idle_cpu_scan(): compute the budget, store only on change (I12).
  // Errors (nothing stored): llc outside [0, num_llcs()).
  absl::Status UpdateIdleCpuScan(int llc, int64_t sum_util);
  // Directly set the budget (tests).  Errors: llc out of range, negative
  // budget.
  absl::Status SetBudget(int llc, int nr_idle_scan);
  // Domain rebuild (spec 3.8): new isolation; masks re-initialised (V1 to the
  // span, V5 empty, scx to the online CPUs).  Not concurrent-safe.  Errors
  // (nothing changed): a mask not of num_cpus() bits (an empty CpuMask() of
  // 0 bits means "none").
  absl::Status Rebuild(const CpuMask& domain_isolated);

  // --- predicates (spec 2.1) ------------------------------------------------
  // REQUIRES: 0 <= cpu < num_cpus() (contract-checked; they are on the
  // selection path).
  bool IdleCpu(int cpu) const;           // idle_cpu()
  bool AvailableIdleCpu(int cpu) const;  // available_idle_cpu()
  bool SchedIdleCpu(int cpu) const;      // sched_idle_cpu()

  // --- inspection ------------------------------------------------------------
  // REQUIRES: cpu, LLC id and scope in range (contract-checked).
  CpuIdleState& cpu_state(int cpu) { return *cpus_[CpuIndex(cpu)]; }
  const CpuIdleState& cpu_state(int cpu) const { return *cpus_[CpuIndex(cpu)]; }
  LlcShared& llc(int id) { return *llcs_[IdIndex(id, llcs_.size(), "llc")]; }
  const LlcShared& llc(int id) const { return *llcs_[IdIndex(id, llcs_.size(), "llc")]; }
  int llc_of(int cpu) const { return topo_.llc_of[CpuIndex(cpu)]; }
  // V4 scope of `cpu` (node id for V4n, 0 for V4g).
  int scx_scope_of(int cpu) const;
  int num_scx_scopes() const { return static_cast<int>(scx_.size()); }
  ScxIdleMasks& scx(int scope) { return *scx_[IdIndex(scope, scx_.size(), "scx scope")]; }
  const ScxIdleMasks& scx(int scope) const { return *scx_[IdIndex(scope, scx_.size(), "scx scope")]; }
  int64_t TotalSharedWrites() const;

  // Quiescent I1 check (spec 5): V1 mask ⊆ LLC span; V4 smt ⊆ cpu ⊆ online and
  // smt holds whole cores.  Returns a description of the first violation, or
  // "" if none.
  std::string CheckSubsetInvariant() const;


 private:
  IdleState(IdleTopology topology, Options options);
  size_t CpuIndex(int cpu) const {
    ISOLATION_CONTRACT(cpu >= 0 && cpu < topo_.num_cpus, "idle_select: cpu %d outside [0, %d)", cpu,
                       topo_.num_cpus);
    return static_cast<size_t>(cpu);
  }
  static size_t IdIndex(int id, size_t n, const char* what) {
    ISOLATION_CONTRACT(id >= 0 && static_cast<size_t>(id) < n, "idle_select: %s %d outside [0, %d)", what, id, n);
    return static_cast<size_t>(id);
  }
  void V1Update(int cpu, bool idle);  // Aubrey's update_idle_cpumask()
  void UpdateIdleCore(int cpu);       // __update_idle_core()
  void ScxUpdateIdle(int cpu, bool idle);  // update_builtin_idle()

  IdleTopology topo_;
  Options options_;
  std::vector<std::unique_ptr<CpuIdleState>> cpus_;
  std::vector<std::unique_ptr<LlcShared>> llcs_;
  std::vector<std::unique_ptr<ScxIdleMasks>> scx_;
};

// Per-thread scratch masks of `nbits` bits (the kernel's per-CPU
// select_rq_mask): allocated once per thread and size, then reused.
CpuMask& ScratchMask(int which, int nbits);

// The selector of options().variant for `state` (not owned; must outlive it).
std::unique_ptr<IdleSelector> MakeSelector(IdleState& state);
// Any variant on the same state (for tests that compare variants on one state;
// the state's maintenance follows state.options().variant).
std::unique_ptr<IdleSelector> MakeSelector(IdleState& state, Variant variant);

}  // namespace isolation::idle_select

#endif  // ISOLATION_IDLE_SELECT_H_
