// SPDX-License-Identifier: GPL-2.0-or-later
// -----------------------------------------------------------------------------
// idle_select.h
// -----------------------------------------------------------------------------
//
// Choosing a CPU for a waking task: the mainline last-level-cache (LLC) scan
// bounded by the SIS_UTIL budget, Aubrey Li's per-LLC idle cpumask (never
// merged) in several flavours, an overloaded-CPU filter, and sched_ext's
// claim-based global / per-node idle masks.  One shared core (`IdleState`)
// keeps the per-CPU state the selection reads and the per-LLC shared state of
// `struct sched_domain_shared` (the idle-core hint and the SIS_UTIL budget);
// the selection itself is a strategy object (`IdleSelector`, selector.h)
// chosen once, by its registered name, when the state is created.  The
// selector owns whatever it keeps on the side (an idle mask, an overloaded
// mask, sched_ext's claimable masks) and keeps it up to date from the entry
// points below; no entry point looks at which selector it is.
//
// Kernel counterpart: kernel/sched/fair.c as of ~v6.14/6.15
// (select_idle_sibling, select_idle_cpu, select_idle_core, select_idle_smt,
// __select_idle_cpu, __update_idle_core, update_idle_cpu_scan),
// kernel/sched/topology.c (update_top_cache_domain: domain-isolated CPUs are
// singleton LLCs), kernel/sched/ext_idle.c @ 0022b328504d
// (scx_select_cpu_dfl, scx_idle_test_and_clear_cpu, scx_pick_idle_cpu,
// update_builtin_idle), and the idle-cpumask series of Aubrey Li (v3..v11).
// Spec: docs/idle_select.md, "Invariants and scenarios" (I*, S*).
//
// Selectors: every registered variant, built-in or registered from outside
// with RegisterSelector() (selector.h), is listed by SelectorRegistry() with a
// one-line description; `isolab variants` prints them (docs/idle_select.md
// describes the built-ins, V0 being mainline).  Not modelled: cluster-first scan (no
// cluster level in Topology), asymmetric capacity, the per-CPU-kthread
// shortcut of select_idle_sibling, core scheduling cookies, vCPU preemption
// (kept as an always-false hook).
//
// Thread-safety contract:
//   - Per-CPU entry points (IdleEnter, IdleExit, IdleRefresh, Tick, TickStop,
//     the run-queue accounting) for CPU c are called from c's own context
//     only, never concurrently for the same c (driver.h guarantees this).
//   - Select() may run concurrently with everything, from any thread, as a
//     wakeup does in the kernel: it takes no lock; scan-style selections read
//     racy hints and may "stack" two wakees on one CPU; claim-style selections
//     (V4) win an idle period with an atomic test-and-clear, one winner each.
//   - Rebuild() and UpdateIdleCpuScan() model the (serialised) domain rebuild
//     and the periodic load balance: Rebuild must not run concurrently with
//     anything; UpdateIdleCpuScan may run concurrently with Select.
//   - The inspection calls (snapshots, CheckSubsetInvariant) read relaxed
//     atomics; they are exact only when the state is quiescent.
//
// Contracts and errors (docs/core.md, "Contracts and errors"): the per-CPU
// entry points, the predicates, the inspection calls and Select() keep the
// kernel's contract (CPU numbers in [0, num_cpus()), LLC ids in range,
// affinity of num_cpus() bits), stated as REQUIRES and checked with
// ISOLATION_CONTRACT (contract.h) in debug, sanitizer and ISOLATION_HARDENED
// builds.  Create(), Uniform(), FromIds(), Rebuild(), UpdateIdleCpuScan(),
// SetBudget() and SetIdleCoresHint() validate always and return absl::Status
// naming the bad value.
//
// Memory ordering: per-CPU state and the CFS hint/budget are relaxed atomics:
// they are hints, and every CPU a scan-style selector returns is re-checked
// against the per-CPU state (I4).  The built-in selectors' mask set/clear are
// relaxed (kernel set_bit/clear_bit are unordered); the V4 claim is a seq_cst
// test-and-clear (the kernel's value-returning atomics are fully ordered).
//
// Allocation: construction and Rebuild allocate; the per-CPU entry points
// never do; Select allocates only on a thread's first selection for a given
// machine size (its per-thread scratch masks, the analogue of the kernel's
// per-CPU select_rq_mask / select_idle_mask), then reuses them.

#ifndef ISOLATION_IDLE_SELECT_H_
#define ISOLATION_IDLE_SELECT_H_

#include <climits>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
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

// update_idle_cpu_scan(): the SIS_UTIL budget, integer form of the formula in
// docs/idle_select.md ("SIS_UTIL budget").  `sum_util` is the LLC's summed
// utilisation (1024 per fully busy CPU).  Returns 0 for llc_weight <= 0 or
// negative utilisation.
int SisUtilBudget(int64_t sum_util, int llc_weight, int imbalance_pct = kLlcImbalancePct);

// The registered name of a selector (selector.h: SelectorRegistry()), as in
// Options::variant.  Converts implicitly from a string.
class SelectorName {
 public:
  SelectorName(const char* name)
      : name_(name == nullptr ? "" : name) {}                 // NOLINT: implicit by design
  SelectorName(std::string name) : name_(std::move(name)) {}  // NOLINT
  SelectorName(std::string_view name) : name_(name) {}        // NOLINT
  const std::string& str() const { return name_; }
  friend bool operator==(const SelectorName& a, const SelectorName& b) {
    return a.name_ == b.name_;
  }

 private:
  std::string name_;
};

// The scheduling topology the selection sees (LLC spans without
// domain-isolated CPUs, SMT siblings, NUMA nodes).  Built from Topology +
// IsolationConfig, or directly (tests, embedders).
struct IdleTopology {
  int num_cpus = 0;
  std::vector<int> hw_llc_of;        // physical LLC of each CPU
  std::vector<CpuMask> hw_llc_span;  // per LLC id: every CPU sharing it
  std::vector<int> llc_of;           // -1: no sd_llc (domain-isolated or offline)
  std::vector<CpuMask> llc_span;     // per LLC id: housekeeping online CPUs
  std::vector<int> core_of;
  std::vector<CpuMask> smt_mask;  // per core (cpu_smt_mask)
  std::vector<int> node_of;
  std::vector<CpuMask> node_span;  // per node: online CPUs
  CpuMask online;
  CpuMask domain_isolated;       // isolcpus=domain and isolated cpuset partitions
  CpuMask boot_domain_isolated;  // isolcpus=domain only (sched_ext refuses to load)
  int smt_width = 1;

  // LLC spans = llc_mask ∩ online ∖ DomainIsolated() (update_top_cache_domain).
  // REQUIRES: isolation of topology's CPU count (contract-checked).
  static IdleTopology From(const Topology& topology, const IsolationConfig& isolation);
  // Explicit ids; `domain_isolated` may be empty (= none).  Errors: sizes
  // differ, negative or non-dense ids, an isolation mask that is neither
  // empty nor of one bit per CPU.
  static absl::StatusOr<IdleTopology> FromIds(const std::vector<int>& llc_of,
                                              const std::vector<int>& core_of,
                                              const std::vector<int>& node_of,
                                              const CpuMask& domain_isolated = CpuMask(),
                                              const CpuMask& boot_domain_isolated = CpuMask());
  // Convenience: `llcs` LLCs of `cores_per_llc` cores of `smt` threads,
  // `nodes` nodes (LLCs split evenly), CPUs numbered consecutively.
  // Errors: a count < 1, more nodes than LLCs, or more than kMaxCpus CPUs
  // (InvalidArgument naming the values).
  static absl::StatusOr<IdleTopology> Uniform(int llcs, int cores_per_llc, int smt = 1,
                                              int nodes = 1);
  // OK if the fields are consistent (sizes, ids in range, masks of num_cpus
  // bits, 1 <= num_cpus <= kMaxCpus); else InvalidArgument naming the first
  // bad field.  IdleState::Create() checks this for hand-built topologies.
  absl::Status Validate() const;

  // Recomputes llc_of / llc_span from hw_* for a new isolated set.
  // REQUIRES: isolated.nbits() == num_cpus (contract-checked).
  void ApplyDomainIsolation(const CpuMask& isolated);

  // REQUIRES: 0 <= a, b, cpu < num_cpus (contract-checked: hardened,
  // debug and sanitizer builds stop naming the CPU instead of reading past
  // the tables).
  bool SharesCache(int a, int b) const {
    ISOLATION_CONTRACT(a >= 0 && a < num_cpus && b >= 0 && b < num_cpus,
                       "IdleTopology::SharesCache(%d, %d): a CPU outside [0, %d)", a, b, num_cpus);
    return a == b || (llc_of[static_cast<size_t>(a)] >= 0 &&
                      llc_of[static_cast<size_t>(a)] == llc_of[static_cast<size_t>(b)]);
  }
  const CpuMask& siblings(int cpu) const {
    ISOLATION_CONTRACT(cpu >= 0 && cpu < num_cpus,
                       "IdleTopology::siblings(%d): a CPU outside [0, %d)", cpu, num_cpus);
    return smt_mask[static_cast<size_t>(core_of[static_cast<size_t>(cpu)])];
  }
};

struct Options {
  // The selector, by registered name (case-insensitive; "V4" = "V4g").
  SelectorName variant = "V0";
  // Idle-core preference (SMT): the CFS has_idle_cores hint and scx's smt
  // mask; off models a kernel without sched_smt_active().
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
  // Idle-mask selectors: reset last_idle_state on Rebuild (the fix for S10).
  bool v1_reset_state_on_rebuild = false;
  // V5: apply the overloaded filter only when budget < LLC size (Abel's rule).
  bool v5_only_when_budget_short = true;
};

// What a wakeup knows about the waking task.
struct WakeTask {
  int prev_cpu = 0;
  int recent_used_cpu = -1;           // updated by Select (p->recent_used_cpu = prev)
  const CpuMask* affinity = nullptr;  // nullptr: every CPU
  bool sched_idle = false;            // the wakee is SCHED_IDLE
};

struct WakeContext {
  int target = -1;               // wake_affine() result; -1 = prev
  int waker_cpu = -1;            // -1: timer / remote
  bool sync = false;             // WF_SYNC (V4 step 1)
  bool node_restricted = false;  // V4: SCX_PICK_IDLE_IN_NODE
};

enum class Outcome : uint8_t {
  kIdleFound,  // returned CPU passed the idle check (or was claimed)
  kFallback,   // nothing idle found: target / prev fallback
};

// Counters of one selection.
struct Selection {
  int cpu = -1;  // scan-style: valid unless the affinity allows no online CPU; claim-style: -1 =
                 // none (caller uses prev)
  Outcome outcome = Outcome::kFallback;
  bool claimed = false;    // claim-style: the returned CPU's idle bit was won
  int probes = 0;          // remote per-CPU state examined by the scan (claim attempts for V4)
  int stale_hits = 0;      // a hint said idle, the per-CPU state said busy
  int claim_failures = 0;  // claim-style: lost test-and-clear races
  bool idle_found() const { return outcome == Outcome::kIdleFound; }
};

// Snapshots for inspection: plain values, read with relaxed loads (exact
// only when quiescent).
struct CpuSnapshot {
  bool curr_is_idle = true;   // the idle task runs
  bool ttwu_pending = false;  // a remote wakeup is in flight
  bool tick_stopped = false;
  bool in_domain = true;      // has sd_llc
  int nr_running = 0;         // queued + running (excl. the idle task)
  int nr_sched_idle = 0;      // of which SCHED_IDLE
  int64_t shared_writes = 0;  // writes to shared lines this CPU performed (I12)
};
struct LlcSnapshot {
  CpuMask span;  // housekeeping online CPUs of the LLC
  int weight = 0;
  bool has_idle_cores = false;
  int nr_idle_scan = 0;       // SIS_UTIL budget
  int64_t budget_stores = 0;  // stores of nr_idle_scan (I12, S1)
};
// One mask a selector keeps (IdleSelector::Masks()).
struct MaskSnapshot {
  std::string
      name;       // built-ins: "idle_cpus" (idle-mask family), "overloaded" (V5), "cpu", "smt" (V4)
  int scope = 0;  // LLC id of a per-LLC mask, node id of a per-node one, 0 for a global one
  CpuMask cpus;
};

class IdleState;
class IdleSelector;     // selector.h
struct CpuIdleState;    // lib/idle_select/state_internal.h
struct LlcShared;       // lib/idle_select/state_internal.h
class IdleStateAccess;  // lib/idle_select/state_internal.h
using SelectorFactoryFn = absl::StatusOr<std::unique_ptr<IdleSelector>>(IdleState&);

// The shared core: per-CPU state, per-LLC state, the selector, and the entry
// points the harness calls at the kernel's places.
class IdleState {
 public:
  // Errors: an inconsistent topology (IdleTopology::Validate()); a selector
  // name nobody registered (InvalidArgument listing the registered names);
  // v3_max_probes < 1; whatever the selector's factory refuses (V4 with
  // boot-time isolcpus=domain: FailedPrecondition, as scx_enable, 9f391f94a173).
  static absl::StatusOr<std::unique_ptr<IdleState>> Create(IdleTopology topology, Options options);
  // The same from a topology factory's result (Uniform, FromIds): its error
  // is passed through.
  static absl::StatusOr<std::unique_ptr<IdleState>> Create(absl::StatusOr<IdleTopology> topology,
                                                           Options options);
  // With a selector factory instead of a registered name (trying a selector
  // before registering it; options.variant is then only a label).
  static absl::StatusOr<std::unique_ptr<IdleState>> Create(
      IdleTopology topology, Options options, const std::function<SelectorFactoryFn>& factory);
  ~IdleState();
  IdleState(const IdleState&) = delete;
  IdleState& operator=(const IdleState&) = delete;

  const IdleTopology& topology() const { return topo_; }
  const Options& options() const { return options_; }
  int num_cpus() const { return topo_.num_cpus; }
  int num_llcs() const { return static_cast<int>(topo_.llc_span.size()); }
  // The selector chosen at creation, and its registered name.
  IdleSelector& selector() { return *selector_; }
  const IdleSelector& selector() const { return *selector_; }
  const std::string& selector_name() const { return options_.variant.str(); }

  // --- the wakeup ------------------------------------------------------------
  // select_task_rq() for a wakeup, after wake_affine() chose ctx.target.
  // REQUIRES (contract-checked): 0 <= task.prev_cpu < num_cpus();
  // task.recent_used_cpu, ctx.target and ctx.waker_cpu -1 or a CPU; an
  // affinity (if any) of num_cpus() bits.  An affinity with no online CPU
  // (empty) is answered with cpu -1, kFallback, nothing claimed, by every
  // built-in selector (I6, checked by the kit's I6_EmptyAffinityNoCpu).
  Selection Select(WakeTask& task, const WakeContext& ctx);

  // --- per-CPU entry points (own context) ----------------------------------
  // REQUIRES for all of them: 0 <= cpu < num_cpus() (contract-checked).
  // do_idle() entry: the idle task runs; then the selector's upkeep.
  void IdleEnter(int cpu);
  // put_prev_task_idle(): a task replaces the idle task.
  void IdleExit(int cpu);
  // pick_task_idle() while idle (V4 idle->idle refresh, a2a3374c47c4).
  void IdleRefresh(int cpu);
  // sched_tick().
  void Tick(int cpu);
  // tick_nohz_idle_stop_tick() / restart.
  void TickStop(int cpu);
  void TickRestart(int cpu);
  // Run-queue accounting: a task queued on / leaving `cpu`.  Enqueue clears
  // ttwu_pending (the wakeup landed).
  void Enqueue(int cpu, bool sched_idle = false);
  void Dequeue(int cpu, bool sched_idle = false);
  // The queue length as a harness that keeps its own run queues knows it:
  // tasks queued + running (the idle task excluded), and how many of them are
  // SCHED_IDLE.  REQUIRES: counts >= 0 (unchecked).
  void SetNrRunning(int cpu, int nr_running);
  void SetNrSchedIdle(int cpu, int nr_sched_idle);
  // A remote wakeup to `cpu` is in flight (ttwu_queue_wakelist).
  void SetWakePending(int cpu, bool pending);

  // --- domain-level entry points -------------------------------------------
  // update_idle_cpu_scan(): compute the budget, store only on change (I12).
  // Errors (nothing stored): llc outside [0, num_llcs()).
  absl::Status UpdateIdleCpuScan(int llc, int64_t sum_util);
  // Directly set the budget (tests).  Errors: llc out of range, negative
  // budget.
  absl::Status SetBudget(int llc, int nr_idle_scan);
  // Directly set or clear the idle-core hint (tests inject false hints).
  // Errors: llc out of range.
  absl::Status SetIdleCoresHint(int llc, bool has_idle_cores);
  // Domain rebuild: new isolation; the LLC spans and the hint are
  // re-initialised, then the selector re-initialises its masks
  // (IdleSelector::OnRebuild).  Not concurrent-safe.  Errors (nothing
  // changed): a mask not of num_cpus() bits (an empty CpuMask() of 0 bits
  // means "none").
  absl::Status Rebuild(const CpuMask& domain_isolated);

  // --- predicates (kernel idle_cpu() family) -------------------------------
  // REQUIRES: 0 <= cpu < num_cpus() (contract-checked).
  bool IdleCpu(int cpu) const;           // idle_cpu()
  bool AvailableIdleCpu(int cpu) const;  // available_idle_cpu()
  bool SchedIdleCpu(int cpu) const;      // sched_idle_cpu()

  // --- what selectors read and write (sched_domain_shared) ------------------
  // REQUIRES: cpu / LLC id in range (contract-checked).
  int llc_of(int cpu) const { return topo_.llc_of[CpuIndex(cpu)]; }  // -1: no sd_llc
  const CpuMask& llc_span(int llc) const {
    return topo_.llc_span[IdIndex(llc, topo_.llc_span.size(), "llc")];
  }
  int nr_idle_scan(int llc) const;     // relaxed load of the SIS_UTIL budget
  bool has_idle_cores(int llc) const;  // relaxed load of the idle-core hint
  void ClearIdleCores(int llc);        // the failed-scan clear (plain store, as the kernel)
  // __update_idle_core(cpu): sets the LLC's hint when every other sibling of
  // `cpu` is available-idle (called by scan-style selectors on idle entry).
  void UpdateIdleCore(int cpu);
  // Counts one write to a shared line done by `cpu`'s own context (I12);
  // selectors call it for every mask write they perform.
  void CountSharedWrite(int cpu);

  // --- inspection -------------------------------------------------------------
  // REQUIRES: cpu / LLC id in range (contract-checked).
  CpuSnapshot cpu(int cpu) const;
  LlcSnapshot llc(int llc) const;
  // The selector's masks (IdleSelector::Masks()), and one of them by name and
  // scope: a mask of 0 bits if the selector keeps no such mask.
  std::vector<MaskSnapshot> SelectorMasks() const;
  CpuMask SelectorMask(std::string_view name, int scope = 0) const;
  int64_t TotalSharedWrites() const;
  // Quiescent I1 check of the selector's masks (IdleSelector::CheckQuiescent):
  // a description of the first violation, or "" if none.
  std::string CheckSubsetInvariant() const;

 private:
  friend class IdleStateAccess;
  IdleState(IdleTopology topology, Options options);
  static absl::StatusOr<std::unique_ptr<IdleState>> Finish(
      std::unique_ptr<IdleState> state, const std::function<SelectorFactoryFn>& factory);
  size_t CpuIndex(int cpu) const {
    ISOLATION_CONTRACT(cpu >= 0 && cpu < topo_.num_cpus, "idle_select: cpu %d outside [0, %d)", cpu,
                       topo_.num_cpus);
    return static_cast<size_t>(cpu);
  }
  static size_t IdIndex(int id, size_t n, const char* what) {
    ISOLATION_CONTRACT(id >= 0 && static_cast<size_t>(id) < n, "idle_select: %s %d outside [0, %d)",
                       what, id, n);
    return static_cast<size_t>(id);
  }
  // Select()'s contract (REQUIRES above): compiled in only where contract
  // checks are on (contract.h).
  void CheckWake(const WakeTask& task, const WakeContext& ctx) const {
    const int n = topo_.num_cpus;
    ISOLATION_CONTRACT(task.prev_cpu >= 0 && task.prev_cpu < n,
                       "idle_select Select: prev_cpu %d outside [0, %d)", task.prev_cpu, n);
    ISOLATION_CONTRACT(task.recent_used_cpu >= -1 && task.recent_used_cpu < n,
                       "idle_select Select: recent_used_cpu %d outside [-1, %d)",
                       task.recent_used_cpu, n);
    ISOLATION_CONTRACT(ctx.target >= -1 && ctx.target < n,
                       "idle_select Select: target %d outside [-1, %d)", ctx.target, n);
    ISOLATION_CONTRACT(ctx.waker_cpu >= -1 && ctx.waker_cpu < n,
                       "idle_select Select: waker_cpu %d outside [-1, %d)", ctx.waker_cpu, n);
    ISOLATION_CONTRACT(task.affinity == nullptr || task.affinity->nbits() == n,
                       "idle_select Select: affinity of %d bits for %d cpus",
                       task.affinity == nullptr ? n : task.affinity->nbits(), n);
    (void)task;
    (void)ctx;
    (void)n;
  }

  IdleTopology topo_;
  Options options_;
  std::vector<std::unique_ptr<CpuIdleState>> cpus_;
  std::vector<std::unique_ptr<LlcShared>> llcs_;
  std::unique_ptr<IdleSelector> selector_;
};

}  // namespace isolation::idle_select

// The selector interface and the registry complete this header's API (and
// define IdleState::Select inline).
#include "isolation/idle_select/selector.h"

#endif  // ISOLATION_IDLE_SELECT_H_
