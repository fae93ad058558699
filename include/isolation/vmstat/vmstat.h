// SPDX-License-Identifier: GPL-2.0-or-later
// -----------------------------------------------------------------------------
// vmstat.h
// -----------------------------------------------------------------------------
//
// The kernel's VM-statistics counters as a userspace library: two-level
// approximate counters (a shared atomic per zone or node and per item, plus a
// global atomic per item) with a signed per-CPU differential per (CPU, zone or
// node, item) that is pushed to the shared side only when its magnitude passes
// a per-CPU threshold.  What stays below the threshold is folded later by
// deferred machinery, and *how* that fold reaches isolated CPUs is what the
// variants differ in.  A variant is a point on two axes, each chosen once by
// Create from a registry:
//
//   fold policy (vmstat/fold_policy.h): who folds a residue, and when --
//     A0 (pre-6.5: the shepherd queues work on every dirty CPU), A1 (mainline
//     >= 6.5, be5e015d107d: not on cpu_is_isolated() CPUs), B (the seed
//     series, Tomlin/Tosatti v8, 2022: fold on return to user of a nohz_full
//     CPU whose tick is stopped, dirty-gated quiet_vmstat), B.local
//     (Tosatti's v9-v13 rework: a nohz_full CPU arms its own work and
//     cancels it on return to user), C (Tosatti's remote fold, 2023: the
//     housekeeping shepherd folds every CPU remotely), D (OURS, the library's
//     own idea, no kernel discussion: C's policy over a watermark slot),
//     C.xadd (OURS: C's policy over one locked add per update), C.addo
//     (OURS: the same add, its overflow flag the threshold test), and the
//     negative control C-plain (spec I7);
//   slot representation (vmstat/slot.h): how a differential is stored and
//     updated -- s8-owner (A*, B*), s32-atomic (C: CAS writers, xchg
//     folders), s32-xadd (C.xadd: a locked add, an xchg fold past the
//     threshold), s32-scaled (C.addo: the differential in units of the
//     threshold, one locked add whose overflow flag is the threshold test),
//     s64-watermark (D: a running sum stored by its owner plus a
//     `folded` word advanced by CAS), s32-plain (the negative control's
//     plain load/store writer, which loses updates under a remote fold).
//
// Each fold policy names its default slot; outside code adds policies with
// RegisterFoldPolicy() and gets every conformance suite, benchmark and
// isolab row for them (testing/vmstat.h, testing/vmstat_bench.h).  The
// writers' per-update code depends on the slot representation only; the
// fold policy is consulted by the deferred machinery (shepherd, per-CPU
// work, tick stop, return to user) and, for policies that ask, on a CPU's
// clean->dirty transition -- never on an ordinary update.
//
// Writers come in two forms with one behaviour: Vmstat::Mod/Inc/Dec (virtual,
// by cpu) and the inline front end VmstatWriter (Vmstat::Writer(cpu),
// writer.h): per-CPU pointers resolved once and the slot's update inline in
// the caller, as the kernel compiles mod_zone_page_state into its callers;
// the over-threshold fold and the clean->dirty transition go out of line
// through the virtual path.
//
// Kernel counterpart: mm/vmstat.c and include/linux/vmstat.h (text of v6.15):
// __mod_zone_page_state, __inc_zone_state, mod_zone_state (and the node
// twins), refresh_cpu_vm_stats, need_update, vmstat_update, vmstat_shepherd,
// quiet_vmstat, cpu_vm_stats_fold, calculate_normal_threshold,
// calculate_pressure_threshold, refresh_zone_stat_thresholds,
// set_pgdat_percpu_threshold; zone_page_state(_snapshot).  B follows
// <20220924152227.819815-5-atomlin@redhat.com> and its companions, B.local
// docs/vmstat.md's summary of Tosatti's v9-v13 series ([LOCAL]: v10 3/6
// <20221216194904.155675758@redhat.com> to v13
// <20230105125218.031928326@redhat.com>, FLUSH_WORK_ON_RESUME_USER on),
// C follows <20230515180015.016409657@redhat.com>.
//
// Not modelled: NUMA events, VM events, per-CPU page lists (do_pagesets),
// node items counted in bytes, stat_refresh.
//
// Thread-safety contract (as in the kernel):
//   - Writers (Mod/Inc/Dec and their IrqsOff forms, and a VmstatWriter of
//     `cpu`) for CPU `cpu` run only in that CPU's context; two contexts of the same CPU never run
//     concurrently (the drivers guarantee it).  s8-owner and s64-watermark slots: only the owner
//     writes its differential (s64-watermark: any folder CASes the `folded` word).  s32-atomic,
//     s32-xadd and s32-scaled: the shepherd also changes slots, remotely.
//   - RunCpuWork, RefreshCpu, QuietVmstat, ReturnToUser: owner CPU context
//     (and so the fold policy's hooks they call, fold_policy.h).
//   - Shepherd, FoldCpuRemote and every read: any thread, concurrently with
//     writers (reads are racy and approximate, as in the kernel).
//   - CpuOnline/CpuOffline/SetPressure/RefreshThresholds: serialised with each
//     other (hotplug context); CpuOffline(cpu) only after `cpu` stopped
//     running writers (the CPU is dead).
//
// Contracts and errors (docs/core.md, "Contracts and errors"): the writers
// (Mod/Inc/Dec and their IrqsOff forms) are the hot path and keep the
// kernel's contract -- cpu, instance and item in range -- stated as REQUIRES
// and checked with ISOLATION_CONTRACT (contract.h) in debug, sanitizer and
// ISOLATION_HARDENED builds.  Everything else validates always: Create,
// hotplug and SetPressure return absl::Status naming the bad value; readers,
// folders, the deferred-machinery calls and the per-CPU observers return 0 /
// false / zero counters for an index out of range and change nothing.
//
// Memory ordering: every slot, threshold and shared counter is a std::atomic
// accessed with memory_order_relaxed.  Nothing orders one slot against
// another location: conservation (I1) follows from each slot's single
// modification order (C: CAS/xchg; D: CAS on `folded`), and the owner-only
// representations need atomicity only against their own CPU, which program order
// gives.  Cross-thread visibility at quiescent points comes from the join /
// driver hand-off (release/acquire), not from the counters.  The one
// exception is the per-CPU work's pending bit: it is cleared with release
// after the work generation moved and set by the shepherd with an acquire
// test-and-set, so a queued item always carries a live generation.

#ifndef ISOLATION_VMSTAT_H_
#define ISOLATION_VMSTAT_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "isolation/core/clock.h"
#include "isolation/core/contract.h"
#include "isolation/core/cpumask.h"
#include "isolation/core/interleave.h"
#include "isolation/core/registry.h"
#include "isolation/core/topology.h"
#include "isolation/vmstat/fold_policy.h"
#include "isolation/vmstat/internal/forms.h"
#include "isolation/vmstat/items.h"
#include "isolation/vmstat/slot.h"

namespace isolation::vmstat {

// Every registered variant of both axes ("fold_policy" and "slot" rows), for
// `isolab variants`.
std::vector<VariantInfo> ListVariants();

// StatKind, the item names and the limits: vmstat/items.h.

// One zone: its node, size and watermarks (pages).
struct ZoneSpec {
  std::string name = "Normal";
  int node = 0;
  int64_t managed_pages = 4 * 262144;  // 4 GiB of 4 KiB pages
  int64_t min_wmark = 8192;
  int64_t low_wmark = 10240;
  int64_t high_wmark = 12288;
};

struct VmstatConfig {
  // The fold policy: a FoldPolicyRegistry() name (case-insensitive; Create
  // stores the registered spelling).
  std::string fold_policy = "A1";
  // The slot representation: a SlotRegistry() name; empty = the policy's
  // default (FoldPolicyTraits::slot).
  std::string slot;
  int num_cpus = 1;  // possible CPUs (all online at creation)
  std::vector<ZoneSpec> zones = {ZoneSpec{}};
  int num_nodes = 1;               // [1, kMaxNumaNodes]; every zone's node must be < num_nodes
  int zone_items = kMaxZoneItems;  // 1..kMaxZoneItems
  int node_items = kMaxNodeItems;  // 1..kMaxNodeItems
  // Threshold policy: <= 0 = kernel formula; > 0 = this fixed value (capped
  // at kThresholdCap) for every zone and node.
  int fixed_threshold = 0;
  // __inc/__dec and mod_*_state(mode +-1) park the slot half a threshold back.
  bool overstep = true;
  Nanos stat_interval = kNsPerSec;  // sysctl_stat_interval (P)
  int page_shift = 12;              // PAGE_SHIFT
  // cpu_is_isolated() and nohz_full masks (num_cpus bits; empty = none).
  CpuMask isolated;
  CpuMask nohz_full;
  // Policies that fold remotely (C, D): fold only CPUs that need_update
  // (false = every online CPU, as C does).
  bool remote_fold_need_update_filter = false;
};

// fls(): 1-based index of the most significant set bit, fls(0) = 0.
int Fls(uint64_t x);
// calculate_normal_threshold(): min(125, 2 * fls(n) * (1 + fls(mem))) with
// mem = managed_pages >> (27 - page_shift).  REQUIRES 0 <= page_shift <= 27
// (contract-checked; clamped otherwise).
int NormalThreshold(int64_t managed_pages, int online_cpus, int page_shift = 12);
// calculate_pressure_threshold(): min(125, max(1, (low - min) / n)).
int PressureThreshold(int64_t low_wmark, int64_t min_wmark, int online_cpus);

// Per-CPU event counts of the deferred machinery (exact, driver independent).
struct CpuCounters {
  int64_t work_runs = 0;             // vmstat_update executions (interference)
  int64_t cancelled_work_runs = 0;   // work that ran after being cancelled (did nothing)
  int64_t quiet_calls = 0;           // quiet_vmstat invocations
  int64_t quiet_folds = 0;           // ... that folded
  int64_t return_to_user_folds = 0;  // folds on return to user (B, B.local)
  int64_t remote_folds = 0;          // shepherd folds of this CPU that moved something (C, D)
  int64_t threshold_folds = 0;       // writer updates that pushed to the shared side
  int64_t local_work_arms = 0;       // work armed by the CPU itself (B.local: dirty episode)
  int64_t shepherd_queued = 0;       // work items the shepherd queued on this CPU
};

// The per-CPU cells the writer and the slot code share: vmstat/internal/cells.h;
// the writer's forms over them: vmstat/internal/forms.h.

class VmstatWriter;
template <internal::WriterForm F, bool kMarksDirty = true>
class VmstatSlotWriter;

// A CPU's own delayed work (B.local's vmstat_work armed from the CPU itself).
// Implemented by the driver adapter (VmstatHooks); Vmstat calls it from the
// owner CPU's context (writers, return to user) and from CpuOffline
// (hotplug context).
class LocalWorkQueue {
 public:
  virtual ~LocalWorkQueue() = default;
  // queue_delayed_work_on(cpu, mm_percpu_wq, vmstat_work,
  // round_jiffies_relative(P)): run RunCpuWork(cpu, generation) on `cpu`
  // after stat_interval.  The pending bit is already set.
  virtual void ArmLocalWork(int cpu, uint64_t generation) = 0;
  // cancel_delayed_work(): the armed item's generation is already stale; the
  // queue may drop it so it does not even wake the CPU.  Called on every
  // cancel; a CPU with nothing armed is a no-op.
  virtual void CancelLocalWork(int cpu) = 0;
};

class Vmstat {
 public:
  // Errors (InvalidArgument, naming the value): num_cpus out of [1,
  // kMaxCpus]; num_nodes out of [1, kMaxNumaNodes]; item counts out of range;
  // no zones or more than kMaxZones; a zone on a node >= num_nodes; masks of
  // the wrong size; a zone with negative size, more than kMaxZonePages or
  // watermarks out of order; an unknown fold policy or slot; a policy that
  // folds remotely over a slot only its owner may write.
  static absl::StatusOr<std::unique_ptr<Vmstat>> Create(VmstatConfig config);
  virtual ~Vmstat() = default;

  // Registered names of the two axes (canonical spelling).
  const std::string& fold_policy_name() const { return config_.fold_policy; }
  const std::string& slot_name() const { return config_.slot; }
  const FoldPolicy& fold_policy() const { return *policy_; }
  const FoldPolicyTraits& policy_traits() const { return traits_; }
  const SlotTraits& slot_traits() const { return slot_traits_; }
  const VmstatConfig& config() const { return config_; }
  int num_cpus() const { return config_.num_cpus; }
  int num_zones() const { return static_cast<int>(config_.zones.size()); }
  int num_nodes() const { return config_.num_nodes; }
  int num_items(StatKind kind) const {
    return kind == StatKind::kZone ? config_.zone_items : config_.node_items;
  }
  int num_instances(StatKind kind) const {
    return kind == StatKind::kZone ? num_zones() : num_nodes();
  }
  // false for a cpu out of range.
  bool IsIsolated(int cpu) const { return isolated_.TestInRange(cpu); }
  bool IsNohzFull(int cpu) const { return nohz_full_.TestInRange(cpu); }

  // ---- writers: `cpu` is the calling CPU (owner context) ----------------
  // REQUIRES (hot path, like the kernel's; contract-checked, contract.h):
  // 0 <= cpu < num_cpus(), 0 <= instance < num_instances(kind),
  // 0 <= item < num_items(kind), |delta| <= kMaxZonePages.
  // mod_zone_page_state / mod_node_page_state (mod_*_state mode 0): the
  // per-CPU compare-and-swap path.  s8-owner: the unlocked this_cpu_cmpxchg
  // is modelled by a single-writer load/store (the nearest userspace
  // analogue); s32-atomic: a real (locked) CAS; s64-watermark: owner store.
  // One virtual call into the slot representation's code; the fold policy
  // is not consulted (B.local's clean->dirty transition excepted).
  virtual void Mod(int cpu, StatKind kind, int instance, int item, int64_t delta) = 0;
  // inc_/dec_*_page_state (mod_*_state mode +1 / -1: overstep).
  virtual void Inc(int cpu, StatKind kind, int instance, int item) = 0;
  virtual void Dec(int cpu, StatKind kind, int instance, int item) = 0;
  // __mod_*_page_state / __inc_*_state / __dec_*_state: caller excludes
  // same-CPU writers (IRQs off).  Slots without irqs_off_writers_plain turn
  // these into their CAS forms (a plain RMW could lose a concurrent remote
  // fold); the negative control's plain slot does not.
  virtual void ModIrqsOff(int cpu, StatKind kind, int instance, int item, int64_t delta) = 0;
  virtual void IncIrqsOff(int cpu, StatKind kind, int instance, int item) = 0;
  virtual void DecIrqsOff(int cpu, StatKind kind, int instance, int item) = 0;

  // The inline writer front end of `cpu` (VmstatWriter below): per-CPU
  // pointers resolved once, so that an update is the kernel's
  // __mod_zone_page_state shape inlined into the caller.  Errors:
  // InvalidArgument naming a cpu outside [0, num_cpus()).
  absl::StatusOr<VmstatWriter> Writer(int cpu);

  // ---- readers (any thread; racy) ---------------------------------------
  // An index out of range reads 0.
  // zone_page_state / node_page_state / global_*: shared atomic, clamped at 0.
  int64_t Read(StatKind kind, int instance, int item) const;
  int64_t ReadGlobal(StatKind kind, int item) const;
  // *_page_state_snapshot: + every online CPU's differential, clamped at 0.
  int64_t ReadSnapshot(StatKind kind, int instance, int item) const;
  int64_t ReadGlobalSnapshot(StatKind kind, int item) const;
  // Unclamped shared values and one differential (D: slot - folded).
  int64_t SharedRaw(StatKind kind, int instance, int item) const;
  int64_t GlobalRaw(StatKind kind, int item) const;
  virtual int64_t Diff(int cpu, StatKind kind, int instance, int item) const = 0;
  // Largest |differential| of `cpu` over every zone/node item.
  int64_t MaxAbsDiff(int cpu) const;
  // Largest |differential| / threshold of `cpu` over every zone/node item
  // (0 when clean; a threshold of 0 counts as 1).  For fold policies that
  // fold only past a fraction of the threshold.
  double MaxThresholdFraction(int cpu) const;
  int Threshold(int cpu, StatKind kind, int instance) const;
  int64_t DriftMark(int zone) const;
  // Adds to a shared or global counter that would have overflowed int64 and
  // saturated it at INT64_MAX / INT64_MIN instead (0 in any sane use: 2^63
  // pages).  Once non-zero the saturated counters no longer equal the sum of
  // what was added (conservation, spec I1, is lost for them).
  int64_t saturated_adds() const { return saturated_adds_.load(std::memory_order_relaxed); }

  // ---- folders (a cpu out of range: false / 0, nothing folded) -------------
  // need_update(): any non-zero differential of `cpu` (racy byte scan).
  virtual bool NeedUpdate(int cpu) const = 0;
  // refresh_cpu_vm_stats(false) on the owner: every differential of `cpu`
  // to 0 (C/D: by xchg / folded CAS).  Returns the number of global items
  // whose summed delta was non-zero (fold_diff).
  virtual int RefreshCpu(int cpu) = 0;
  // Remote fold of `cpu` by another CPU (remote-foldable slots only; a
  // no-op returning 0 for s8-owner, whose slots only their owner may write).
  virtual int FoldCpuRemote(int cpu) = 0;

  // ---- deferred machinery (a cpu out of range: false, nothing done) -------
  // vmstat_shepherd(), run every P on a housekeeping CPU: asks the fold
  // policy about every online CPU.  `tick_stopped` answers the racy remote
  // tick_nohz_tick_stopped_cpu(); `queue_work(cpu, generation)` must queue
  // RunCpuWork(cpu, generation) on `cpu` with delay 0; the shepherd has
  // already set the CPU's pending bit (queue_delayed_work_on's
  // test-and-set).  Returns the number of per-CPU work items queued plus
  // CPUs folded remotely.
  int Shepherd(absl::FunctionRef<bool(int)> tick_stopped,
               absl::FunctionRef<void(int cpu, uint64_t generation)> queue_work);
  // vmstat_update() on `cpu`: folds; returns true if the work must re-queue
  // itself on `cpu` after P (it stays pending then).  A stale `generation`
  // (the work was cancelled) does nothing and returns false.
  bool RunCpuWork(int cpu, uint64_t generation);
  // quiet_vmstat() from the tick-stop path on `cpu`: the fold policy's
  // (A0/A1: folds only if the CPU's work is pending and need_update, the
  // kernel's gate; B: folds if dirty and cancels the pending work when
  // `tick_stopped`; B.local: folds if dirty; C/D: nothing).  Returns true if
  // it folded.
  bool QuietVmstat(int cpu, bool tick_stopped);
  // exit_to_user_mode_prepare -> tick_nohz_user_enter_prepare on `cpu`: the
  // fold policy's, on nohz_full CPUs of policies that hook it (B: folds when
  // the tick is stopped; B.local: folds if dirty and cancels the pending
  // work).  Returns true if it folded.
  bool ReturnToUser(int cpu, bool tick_stopped);
  // Whether the re-queue of `cpu`'s work after a fold goes through the
  // LocalWorkQueue (the policy's RequeueLocally; for the driver adapter).
  bool RequeueLocally(int cpu) const {
    return ValidCpu(cpu) && policy_->RequeueLocally(*this, cpu);
  }
  // Where a CPU's own work is armed and cancelled (VmstatHooks registers
  // itself).  REQUIRES: set before any writer runs, or nullptr (then an armed
  // item only sets the pending bit; tests drive RunCpuWork themselves).  Not
  // owned.
  void SetLocalWorkQueue(LocalWorkQueue* queue) { local_queue_ = queue; }
  bool WorkPending(int cpu) const;
  // vmstat_dirty (always false for policies whose writers do not mark it).
  bool Dirty(int cpu) const;

  // ---- hotplug and thresholds --------------------------------------------
  // false for a cpu out of range.
  bool IsOnline(int cpu) const;
  int online_cpus() const { return online_count_; }
  // vmstat_cpu_down_prep + page_alloc_cpu_dead (cpu_vm_stats_fold) +
  // vmstat_cpu_dead: cancel the work, fold the dead CPU's slots, recompute
  // thresholds.  Errors: out of range, already offline, last online CPU.
  absl::Status CpuOffline(int cpu);
  // vmstat_cpu_online: recompute thresholds; slots start at 0.
  absl::Status CpuOnline(int cpu);
  // refresh_zone_stat_thresholds().
  void RefreshThresholds();
  // set_pgdat_percpu_threshold(): pressure thresholds on `node`'s zones with
  // a non-zero drift mark (on = kswapd awake) or back to normal (off).
  absl::Status SetPressure(int node, bool on);

  // Zero counters for a cpu out of range.
  CpuCounters Counters(int cpu) const;

 protected:
  // `config` is canonical (Create resolved both names); `policy` non-null.
  Vmstat(VmstatConfig config, std::unique_ptr<FoldPolicy> policy, SlotTraits slot_traits);

  bool ValidCpu(int cpu) const { return cpu >= 0 && cpu < config_.num_cpus; }
  bool ValidSlot(int cpu, StatKind kind, int instance, int item) const {
    return ValidCpu(cpu) && (kind == StatKind::kZone || kind == StatKind::kNode) && instance >= 0 &&
           instance < num_instances(kind) && item >= 0 && item < num_items(kind);
  }
  static void ContractDelta(const char* op, int64_t delta) {
    ISOLATION_CONTRACT(delta >= -kMaxZonePages && delta <= kMaxZonePages,
                       "vmstat %s: delta %d beyond +-%d pages", op, delta, kMaxZonePages);
  }
  // The writers' REQUIRES; no code where contract checks are off.
  void ContractSlot(const char* op, int cpu, StatKind kind, int instance, int item) const {
    ISOLATION_CONTRACT(
        ValidSlot(cpu, kind, instance, item),
        "vmstat %s(cpu %d, %s %d, item %d): outside cpus [0, %d), instances [0, %d), items [0, %d)",
        op, cpu, kind == StatKind::kZone ? "zone" : "node", instance, item, config_.num_cpus,
        num_instances(kind), num_items(kind));
  }

  // The slot code's layout for VmstatWriter's inline fast path: `form` and
  // the first zone and node block of CPU 0 (blocks CPU-major, each an
  // internal::CellBlock of the form's cell, never moved while *this lives).
  // A subclass that does not call it gets writers that forward every update
  // to the virtual Mod/Inc/Dec.
  void SetWriterLayout(internal::WriterForm form, void* zone_blocks, void* node_blocks) {
    writer_form_ = form;
    writer_blocks_[0] = zone_blocks;
    writer_blocks_[1] = node_blocks;
  }

  // cpu_vm_stats_fold(): fold a dead CPU's slots (no writer can run there).
  virtual void FoldDeadCpu(int cpu) = 0;

  struct alignas(64) CpuState {
    std::atomic<bool> online{true};
    std::atomic<bool> work_pending{false};
    std::atomic<uint64_t> work_generation{0};
    std::atomic<int64_t> work_runs{0};
    std::atomic<int64_t> cancelled_work_runs{0};
    std::atomic<int64_t> quiet_calls{0};
    std::atomic<int64_t> quiet_folds{0};
    std::atomic<int64_t> rtu_folds{0};
    std::atomic<int64_t> remote_folds{0};
    std::atomic<int64_t> threshold_folds{0};
    std::atomic<int64_t> local_work_arms{0};
    std::atomic<int64_t> shepherd_queued{0};
  };
  // One cache line of shared counters per (zone or node) and for the globals.
  struct alignas(64) SharedCounters {
    std::array<std::atomic<int64_t>, kMaxNodeItems> v{};
  };
  // zone_page_state_add / node_page_state_add: unordered atomic adds.
  void AddShared(StatKind kind, int instance, int item, int64_t delta) {
    AddCounter(Shared(kind, instance).v[static_cast<size_t>(item)], delta);
    AddCounter(Global(kind).v[static_cast<size_t>(item)], delta);
  }
  // One add to a shared or global counter, saturating at the int64 bounds
  // (a wrap would turn a huge count into a negative one, read as 0).  The
  // fast path is the unordered fetch_add; an add that overflowed pins the
  // counter to the bound it crossed and counts itself in saturated_adds().
  void AddCounter(std::atomic<int64_t>& counter, int64_t delta) {
    // Relaxed: these are statistics; nothing is published through them.
    const int64_t old = counter.fetch_add(delta, std::memory_order_relaxed);
    int64_t sum;
    if (__builtin_add_overflow(old, delta, &sum)) [[unlikely]] {
      Saturate(counter, delta > 0);
    }
  }
  void Saturate(std::atomic<int64_t>& counter, bool up);
  SharedCounters& Shared(StatKind kind, int instance) {
    return kind == StatKind::kZone ? zone_shared_[static_cast<size_t>(instance)]
                                   : node_shared_[static_cast<size_t>(instance)];
  }
  const SharedCounters& Shared(StatKind kind, int instance) const {
    return kind == StatKind::kZone ? zone_shared_[static_cast<size_t>(instance)]
                                   : node_shared_[static_cast<size_t>(instance)];
  }
  SharedCounters& Global(StatKind kind) {
    return kind == StatKind::kZone ? zone_global_ : node_global_;
  }
  const SharedCounters& Global(StatKind kind) const {
    return kind == StatKind::kZone ? zone_global_ : node_global_;
  }
  CpuState& State(int cpu) { return cpu_state_[static_cast<size_t>(cpu)]; }
  const CpuState& State(int cpu) const { return cpu_state_[static_cast<size_t>(cpu)]; }
  // Threshold of (cpu, kind, instance); relaxed (racy across refreshes, as
  // the kernel's this_cpu_read of stat_threshold).  Laid out CPU-major, so a
  // CPU reads its own thresholds from one line; they are written only by a
  // threshold refresh.
  std::atomic<int8_t>& ThresholdSlot(int cpu, StatKind kind, int instance) {
    const size_t i = static_cast<size_t>(cpu) * static_cast<size_t>(num_instances(kind)) +
                     static_cast<size_t>(instance);
    return kind == StatKind::kZone ? zone_threshold_[i] : node_threshold_[i];
  }
  int ThresholdRaw(int cpu, StatKind kind, int instance) const {
    return ThresholdSlot(cpu, kind, instance).load(std::memory_order_relaxed);
  }
  const std::atomic<int8_t>& ThresholdSlot(int cpu, StatKind kind, int instance) const {
    const size_t i = static_cast<size_t>(cpu) * static_cast<size_t>(num_instances(kind)) +
                     static_cast<size_t>(instance);
    return kind == StatKind::kZone ? zone_threshold_[i] : node_threshold_[i];
  }
  // After every update: vmstat_mark_dirty() for policies whose writers mark
  // the CPU dirty (one predictable branch on a member for the others).
  // Writer path: the cpu is valid by the writer contract, so unchecked.
  void AfterWrite(int cpu) {
    if (mark_dirty_) MarkDirty(cpu);
  }
  // Overstep mode multiplier for Inc/Dec.
  int Overstep(int t) const { return config_.overstep ? (t >> 1) : 0; }

  VmstatConfig config_;
  std::atomic<int64_t> saturated_adds_{0};
  CpuMask isolated_, nohz_full_;
  int online_count_ = 0;

 private:
  friend class FoldContext;
  friend class VmstatWriter;
  template <internal::WriterForm F, bool kMarksDirty>
  friend class VmstatSlotWriter;
  // The inline writer's forms (internal/forms.h): their out-of-line folds.
#define ISOLATION_VMSTAT_FORM_FRIEND_(form, Form) friend struct internal::Form;
  ISOLATION_VMSTAT_INLINE_WRITER_FORMS(ISOLATION_VMSTAT_FORM_FRIEND_)
#undef ISOLATION_VMSTAT_FORM_FRIEND_

  // vmstat_mark_dirty(): the flag lives on its own line (written on every
  // update).  Relaxed: set and cleared on the owner CPU (program order);
  // remote readers (the shepherd) only take a hint from it.  A clean->dirty
  // transition first tells a policy that asked (B.local arms its work).
  void MarkDirty(int cpu) {
    std::atomic<bool>& flag = dirty_[static_cast<size_t>(cpu)].v;
    if (notify_first_dirty_ && !flag.load(std::memory_order_relaxed)) NotifyFirstDirty(cpu);
    flag.store(true, std::memory_order_relaxed);
  }
  void NotifyFirstDirty(int cpu);
  // VmstatWriter's clean->dirty transition, out of line (MarkDirty).
  void WriterMarkDirty(int cpu);

  void ClearDirty(int cpu) {
    dirty_[static_cast<size_t>(cpu)].v.store(false, std::memory_order_relaxed);
  }
  // The fold of a CPU from its own context: clear dirty, then refresh.
  int FoldOwn(int cpu);
  void ApplyThresholds();
  int ZoneNormalThreshold(const ZoneSpec& zone, int online_cpus) const;
  void CancelWork(int cpu);
  void ArmOwnWork(int cpu);

  std::unique_ptr<FoldPolicy> policy_;
  FoldPolicyTraits traits_;
  SlotTraits slot_traits_;
  // Copies of two traits, read by every writer (no pointer chase).
  bool mark_dirty_ = false;
  bool notify_first_dirty_ = false;
  LocalWorkQueue* local_queue_ = nullptr;
  internal::WriterForm writer_form_ = internal::WriterForm::kVirtual;
  void* writer_blocks_[2] = {nullptr, nullptr};  // [kZone], [kNode]

  struct alignas(64) DirtyFlag {
    std::atomic<bool> v{false};
  };
  std::vector<CpuState> cpu_state_;
  std::vector<DirtyFlag> dirty_;
  std::vector<SharedCounters> zone_shared_, node_shared_;
  SharedCounters zone_global_, node_global_;
  std::unique_ptr<std::atomic<int8_t>[]> zone_threshold_, node_threshold_;
  std::vector<int64_t> drift_mark_;
  std::vector<bool> node_pressure_;
};

}  // namespace isolation::vmstat

// The inline writer front end (Vmstat::Writer), after Vmstat: it calls
// Vmstat's members in its inline code.
#include "isolation/vmstat/writer.h"  // IWYU pragma: export

#endif  // ISOLATION_VMSTAT_H_
