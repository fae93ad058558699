// SPDX-License-Identifier: GPL-2.0-or-later
// -----------------------------------------------------------------------------
// tmigr.h
// -----------------------------------------------------------------------------
//
// The timer-migration hierarchy ("pull model") and its exclusion of isolated
// CPUs.  A CPU that stops its tick hands the expiry of its first global
// (migratable) timer to a tree of groups of at most 8 children; the active
// CPU holding the *migrator* role of a group notices the expiry in its own
// tick and runs the idle CPU's global timers itself.  When the last CPU goes
// idle it keeps a wake-up for the earliest global expiry of the whole system.
//
//   TimerMigration  the hierarchy: every entry point of
//                   kernel/time/timer_migration.c, hotplug, isolation, and
//                   inspection through plain snapshots (HierarchySnapshot).
//   TimerBackend    what the hierarchy needs from the timer code (run a remote
//                   CPU's global timers, fetch its next global expiry, wake a
//                   CPU, run a work item on a CPU).
//   TimerSystem     (timers.h) a small per-CPU timer base that implements
//                   TimerBackend and the fetch_next_timer_interrupt() contract.
//
// Kernel counterpart: kernel/time/timer_migration.c / .h.  The hierarchy and
// hot paths follow v6.9 as released (with the -rc fixes 4b6f4c5a67c0,
// 8ca1836769d7, f55acb1e44f3, 61f7fdf8fd00, 7a96a84bfbee) and the later fixes
// 10a0e6f3d3db, b729cc1ec21a, de3ced72a792, 5eb579dfd46b, ba14500e4bfc; the
// setup path follows the newest mainline (gregkh/linux @ 2519003dd5fb,
// tmigr_setup_groups with the atomic_fetch_or(0) read of the old root).  The
// isolation-aware variant follows the v6.19 series as merged in tip (commit
// 7dec062cfcf2 "timers: Exclude isolated cpus from timer migration" and its
// six preparatory patches); [V15]'s exclude ordering is a variant of its own.
//
// Variants (variants.h), chosen once by name at Create():
//   participation (Options::participation): which CPUs take part --
//     "v6.9"       TM-ONLINE: every online CPU takes part.
//     "isolation"  TM-ISOL: domain-isolated (isolcpus / isolated cpuset) CPUs
//                  are unavailable after the late init, except nohz_full CPUs
//                  and the tick CPU while nohz_full runs; merged exclude order.
//     "isolation-v15" the same with [V15]'s exclude order; more in variants.h.
//   hierarchy (Options::hierarchy): the pull-model algorithm -- "mainline"
//     (the kernel's, plus our fix of race R4: docs/tmigr.md, S28), or a
//     negative control re-creating a bug ("ghost_timer", "kernel_r4", ...) so the
//     conformance suites (isolation/testing/tmigr.h) can be seen to fail.
// Code outside the library registers its own variants there (one call) and
// then gets every conformance suite, benchmark and isolab row.
//
// Thread-safety contract (the kernel's): the per-CPU entry points Activate,
// Deactivate, NewTimer, QuickCheck, RequiresHandleRemote, HandleRemote,
// SetCpuAvailable and ClearCpuAvailable for CPU c run on c's context: calls
// for the same CPU never overlap, calls for different CPUs may run
// concurrently.  PrepareCpu/BringUpCpu, IsolatedExclude, SetCpusetIsolated and
// InitIsolation are serialised by the caller against each other (hotplug
// lock) but may run concurrently with the per-CPU entry points.  Inspection
// (Snapshot, CheckInvariants, DebugString, CoverageOf) needs a quiescent
// hierarchy.
//
// Contracts and errors (docs/core.md, "Contracts and errors"): the per-CPU
// entry points (Activate .. HandleRemote) keep the kernel's contract -- 0 <=
// cpu < num_cpus() -- stated as REQUIRES and checked with ISOLATION_CONTRACT
// (contract.h) in debug, sanitizer and ISOLATION_HARDENED builds.  Factories
// and the hotplug / isolation setup calls validate always and return
// absl::Status naming the bad value; observers return a documented safe value
// for a CPU out of range.
//
// Memory ordering: the group state word is changed only by full-word CAS
// (acq_rel on success, acquire on failure); deactivation reads it with
// acquire and issues a seq_cst fence after a failed CAS before re-reading
// the child (pairs with activation, which updates child before parent with
// fully ordered CAS).  `parent` is published with release and read once per
// step with acquire.  Event placement reads the states under the group locks.
// `next_expiry` and `wakeup` are written under their lock and read lock-free
// with relaxed loads (a 64-bit load is not torn; stale values only cause a
// useless or a later check, as in the kernel).
//
// Cost of the variant choice: the entry points are virtual (one indirect
// call per entry); inside, the mainline hierarchy has no branch on a variant
// (docs/tmigr.md, "Open variants").

#ifndef ISOLATION_TMIGR_H_
#define ISOLATION_TMIGR_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "isolation/core/clock.h"
#include "isolation/core/contract.h"
#include "isolation/core/cpumask.h"
#include "isolation/core/isolation_config.h"
#include "isolation/core/topology.h"
#include "isolation/core/tracer.h"

namespace isolation::tmigr {

inline constexpr int kMaxChildrenPerGroup = 8;  // TMIGR_CHILDREN_PER_GROUP (8-bit masks)
inline constexpr uint8_t kMigratorNone = 0xFF;  // TMIGR_NONE

struct Options {
  // A name in ParticipationRegistry() (variants.h), case-insensitive.
  std::string participation = "v6.9";
  // A name in HierarchyRegistry() (variants.h): "mainline", or a negative
  // control that re-creates a bug.
  std::string hierarchy = "mainline";
  // Power of two in [2, 8]; 2 reproduces the drawings of the kernel's design comment.
  int children_per_group = kMaxChildrenPerGroup;
  // Record the lock order of every tmigr lock (I11); small cost per lock.
  bool record_lock_order = false;
};

// tmigr_init() sizing.
struct Sizing {
  int cpus_per_node = 0;
  int cpu_levels = 0;
  int node_levels = 0;
  int levels = 0;
  int crossnode_level = 0;
};
// REQUIRES: 1 <= ncpus <= kMaxCpus, 1 <= nnodes <= kMaxNumaNodes, children a
// power of two in [2, kMaxChildrenPerGroup] (contract-checked).
Sizing ComputeSizing(int ncpus, int nnodes, int children_per_group = kMaxChildrenPerGroup);

// union tmigr_state: active bits 0-7, migrator bits 8-15, seq bits 16-31.
struct GroupState {
  uint8_t active = 0;
  uint8_t migrator = kMigratorNone;
  uint16_t seq = 0;
  static GroupState Unpack(uint32_t word) {
    return {static_cast<uint8_t>(word & 0xFF), static_cast<uint8_t>((word >> 8) & 0xFF),
            static_cast<uint16_t>(word >> 16)};
  }
  uint32_t Pack() const {
    return uint32_t{active} | (uint32_t{migrator} << 8) | (uint32_t{seq} << 16);
  }
};

// ---- inspection: plain snapshots of a quiescent hierarchy --------------------
// A group is named by its level and its creation order within the level:
// "GRP<level>:<index>", as the kernel's trace events and design comment do.
struct GroupId {
  int level = -1;
  int index = -1;
  bool valid() const { return level >= 0 && index >= 0; }
  friend bool operator==(const GroupId&, const GroupId&) = default;
};
std::string GroupName(GroupId id);  // "GRP1:0", "-" when invalid

// struct tmigr_event.
struct EventSnapshot {
  Nanos expires = kNanosMax;
  int cpu = -1;        // the CPU whose global timers the event stands for
  bool ignore = true;  // stale marker
  bool queued = false;
};

// struct tmigr_group.
struct GroupSnapshot {
  GroupId id;
  GroupId parent;      // invalid for the top
  int numa_node = -1;  // -1: at or above the crossnode level
  int num_children = 0;
  uint8_t groupmask = 0;  // this group's bit in its parent
  GroupState state;
  Nanos next_expiry = kNanosMax;
  EventSnapshot groupevt;             // this group's event (queued in the parent while inactive)
  std::vector<EventSnapshot> events;  // the group's queue, in queue order
  std::string Name() const { return GroupName(id); }
};

// struct tmigr_cpu.
struct CpuSnapshot {
  bool prepared = false;  // tmigr_cpu_prepare() ran
  bool online = false;
  bool available = false;
  bool idle = false;    // idle in the hierarchy (tick stopped)
  bool remote = false;  // another CPU is expiring its timers
  GroupId group;        // level-0 group (invalid before prepare)
  uint8_t groupmask = 0;
  Nanos wakeup = kNanosMax;
  EventSnapshot cpuevt;
};

struct HierarchySnapshot {
  int children_per_group = kMaxChildrenPerGroup;
  Sizing sizing;
  GroupId root;                                    // invalid before the first prepare
  std::vector<std::vector<GroupSnapshot>> levels;  // [level][index]
  std::vector<CpuSnapshot> cpus;
  CpuMask available_mask;          // tmigr_available_cpumask
  bool isolation_enabled = false;  // the late init ran for a variant that excludes CPUs
  CpuMask nohz_full;
  int tick_cpu = -1;

  int num_cpus() const { return static_cast<int>(cpus.size()); }
  int num_groups() const;
  // REQUIRES (contract-checked): a group that exists / 0 <= cpu < num_cpus()
  // and the cpu prepared.
  const GroupSnapshot& group(GroupId id) const;
  const GroupSnapshot& root_group() const { return group(root); }
  const GroupSnapshot& group_of(int cpu) const;
  const CpuSnapshot& cpu(int cpu) const;
};

// What the hierarchy needs from the timer code (kernel/time/timer.c).
class TimerBackend {
 public:
  virtual ~TimerBackend() = default;
  // timer_expire_remote(): run `owner`'s expired global timers on `runner`.
  virtual void ExpireRemote(int owner, int runner, Nanos now) = 0;
  // timer_lock_remote_bases() / unlock.  Lock order: bases before tmigr.
  virtual void LockBases(int cpu) = 0;
  virtual void UnlockBases(int cpu) = 0;
  // fetch_next_timer_interrupt_remote(): `cpu`'s next global expiry if it
  // precedes its next local one, else kNanosMax (bases locked).
  virtual Nanos NextGlobalLocked(int cpu, Nanos now) = 0;
  // timer_base_is_idle() of `cpu` (called on cpu's context, tmc lock held).
  virtual bool BaseIsIdle(int cpu) = 0;
  // work_on_cpu(cpu, tmigr_trigger_active): wake `cpu` so it leaves idle
  // and activates in the hierarchy.
  virtual void KickCpu(int cpu) = 0;
  // Run `fn` on cpu's context now (waking it if it is idle).  Default: run
  // it directly.
  virtual void RunOnCpu(int /*cpu*/, absl::FunctionRef<void()> fn) { fn(); }
  // schedule_work_on(cpu, fn) and flush_work() of everything queued: the
  // isolation changes of variants.h queue one item per CPU and flush.
  // Default: FlushWork runs the queued items in queue order through
  // RunOnCpu.  A backend may run them in another order (they are concurrent
  // in the kernel).  Serialised by the caller (hotplug lock).
  virtual void QueueWork(int cpu, absl::AnyInvocable<void()> fn);
  virtual void FlushWork();

 private:
  std::vector<std::pair<int, absl::AnyInvocable<void()>>> queued_work_;
};

// A TimerBackend with no timers (hierarchy-only tests and benchmarks).
class NullBackend : public TimerBackend {
 public:
  void ExpireRemote(int, int, Nanos) override {}
  void LockBases(int) override {}
  void UnlockBases(int) override {}
  Nanos NextGlobalLocked(int, Nanos) override { return kNanosMax; }
  bool BaseIsIdle(int) override { return false; }
  void KickCpu(int) override {}
};

struct Counters {
  std::atomic<int64_t> remote_expiries{0};  // handle_remote_cpu passes that ran a CPU's timers
  std::atomic<int64_t> cas_retries{0};
  std::atomic<int64_t> lock_order_violations{0};
  std::atomic<int64_t> warnings{0};  // WARN_ON_ONCE equivalents
};

// Earliest non-ignored event expiry over the queues from `cpu`'s level-0
// group up to its lowest active ancestor (for I5), and whether that path
// reaches an inactive root.
struct PathCoverage {
  Nanos min_expiry_on_path = kNanosMax;  // max over levels of per-level min (weakest link)
  bool reaches_idle_root = false;
};

class TimerMigration {
 public:
  // Sizing from possible CPUs and nodes of `topology`; the variants named by
  // `options` (registries in variants.h).  `backend` must outlive the object.
  // Errors: bad children_per_group, unknown variant name (the message lists
  // the registered ones), more than one compatibility bug switch, null
  // backend, CPU count outside [1, kMaxCpus], a node id outside
  // [0, kMaxNumaNodes).
  static absl::StatusOr<std::unique_ptr<TimerMigration>> Create(const Topology& topology,
                                                                const Options& options,
                                                                TimerBackend* backend);
  // Explicit node of each CPU (tests).  Nodes are 0..max(node_of).
  static absl::StatusOr<std::unique_ptr<TimerMigration>> Create(std::vector<int> node_of,
                                                                const Options& options,
                                                                TimerBackend* backend);
  virtual ~TimerMigration() = default;

  // Isolation inputs (copied), read by the participation variant.  Call
  // before InitIsolation.  Errors (nothing changed): a configuration for
  // another CPU count (InvalidArgument naming both).
  virtual absl::Status SetIsolation(const IsolationConfig& config) = 0;
  // Trace sink for migrator hand-overs ("tmigr.migrator": level, group,
  // from_mask, to_mask, on the CPU whose walk changed it, at tracer->Now())
  // and remote expiries ("tmigr.remote_expiry": owner, on the runner).
  // nullptr (default) = off.  REQUIRES: set before the per-CPU entry points
  // run; not owned.
  virtual void SetTracer(Tracer* tracer) = 0;

  // ---- hotplug ------------------------------------------------------------
  // tmigr_cpu_prepare(): first bring-up builds the CPU's path (idempotent).
  virtual absl::Status PrepareCpu(int cpu) = 0;
  // tmigr_set_cpu_available() (hotplug online, on `cpu`).  Errors: no group.
  virtual absl::Status SetCpuAvailable(int cpu) = 0;
  // tmigr_clear_cpu_available() (hotplug offline / isolation, on `cpu`).  A
  // cpu outside [0, num_cpus()) is ignored.
  virtual void ClearCpuAvailable(int cpu) = 0;
  // Prepare + online + set available, as a CPU coming online.
  virtual absl::Status BringUpCpu(int cpu) = 0;
  // Offline: clear available and mark offline (ignored for a cpu out of range).
  virtual void TakeDownCpu(int cpu) = 0;

  // ---- isolation (what they do is the participation variant's) -------------
  // tmigr_init_isolation() (late initcall).
  virtual void InitIsolation() = 0;
  // Cpuset isolated partitions changed: re-run the exclusion once isolation
  // is enabled.  Errors (nothing changed): a mask not of num_cpus() bits.
  virtual absl::Status SetCpusetIsolated(const CpuMask& isolated) = 0;
  // tmigr_isolated_exclude_cpumask().  Errors (nothing changed): a mask not
  // of num_cpus() bits.
  virtual absl::Status IsolatedExclude(const CpuMask& exclude) = 0;
  // tmigr_is_isolated().  false for a cpu outside [0, num_cpus()).
  virtual bool IsIsolated(int cpu) const = 0;

  // ---- per-CPU entry points (run on `cpu`) ---------------------------------
  // REQUIRES: 0 <= cpu < num_cpus() (contract-checked).
  virtual void Activate(int cpu) = 0;                         // tmigr_cpu_activate()
  virtual Nanos Deactivate(int cpu, Nanos next_global) = 0;   // tmigr_cpu_deactivate()
  virtual Nanos NewTimer(int cpu, Nanos next_global) = 0;     // tmigr_cpu_new_timer()
  virtual Nanos QuickCheck(int cpu, Nanos next_global) = 0;   // tmigr_quick_check()
  virtual bool RequiresHandleRemote(int cpu, Nanos now) = 0;  // tmigr_requires_handle_remote()
  virtual void HandleRemote(int cpu, Nanos now) = 0;          // tmigr_handle_remote()

  // ---- observers (any time) --------------------------------------------------
  virtual int num_cpus() const = 0;
  virtual const Sizing& sizing() const = 0;
  // The options with the variant names resolved (registry spelling).
  virtual const Options& options() const = 0;
  // false for a cpu outside [0, num_cpus()).
  virtual bool IsAvailable(int cpu) const = 0;
  virtual CpuMask AvailableMask() const = 0;
  virtual bool isolation_enabled() const = 0;
  virtual Counters& counters() = 0;
  virtual const Counters& counters() const = 0;
  // Per-runner count of remote expiries (handle_remote_cpu for another CPU).
  virtual std::vector<int64_t> RemoteExpiriesByRunner() const = 0;

  // ---- inspection (quiescent) ----------------------------------------------
  virtual HierarchySnapshot Snapshot() const = 0;
  // CheckHierarchyInvariants(Snapshot()).
  std::vector<std::string> CheckInvariants() const;
  // DebugString(Snapshot()).
  std::string DebugString() const;
  // CoverageOf(Snapshot(), cpu, timer): O(size of the hierarchy); take one
  // snapshot for many CPUs.
  PathCoverage CoverageOf(int cpu, Nanos timer) const;
};

// Structural invariants I1, I2 (no `remote` left set), I3, I4, I6, I7, I8
// (mask part), I9, I10 of a quiescent hierarchy; each violation is one
// human-readable line starting with the invariant's label.  I5 needs the
// timer bases (TimerSystem::CheckInvariants); I11 is the lock-order
// recorder's count (Counters::lock_order_violations).
std::vector<std::string> CheckHierarchyInvariants(const HierarchySnapshot& snapshot);
// One line per group: "GRP1:0 lvl1 active=0x03 migr=0x01 next=..., events=[...]".
std::string DebugString(const HierarchySnapshot& snapshot);
// Coverage of `cpu`'s global timer `timer` (I5).  A cpu outside
// [0, num_cpus()) or not prepared: the default (nothing covered, no idle root).
PathCoverage CoverageOf(const HierarchySnapshot& snapshot, int cpu, Nanos timer);

}  // namespace isolation::tmigr

#endif  // ISOLATION_TMIGR_H_
