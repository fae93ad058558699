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
//   TimerMigration  the hierarchy: groups, per-CPU state, every entry point of
//                   kernel/time/timer_migration.c, hotplug, isolation.
//   TimerBackend    what the hierarchy needs from the timer code (run a remote
//                   CPU's global timers, fetch its next global expiry, wake a
//                   CPU, run a work item on a CPU).
//   TimerSystem     (tmigr_timers.h) a small per-CPU timer base that implements
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
// six preparatory patches); [V15]'s exclude ordering is an option.
//
// Variants (Options::variant):
//   kV69        TM-ONLINE: every online CPU takes part.
//   kIsolation  TM-ISOL: domain-isolated (isolcpus / isolated cpuset) CPUs are
//               unavailable after the late init, except nohz_full CPUs and the
//               tick CPU while nohz_full runs.
// BugSwitches re-create fixed bugs so regression tests can show the failure.
//
// Thread-safety contract (the kernel's): the per-CPU entry points Activate,
// Deactivate, NewTimer, QuickCheck, RequiresHandleRemote, HandleRemote,
// SetCpuAvailable and ClearCpuAvailable for CPU c run on c's context: calls
// for the same CPU never overlap, calls for different CPUs may run
// concurrently.  PrepareCpu/BringUpCpu, IsolatedExclude, SetCpusetIsolated and
// InitIsolation are serialised by the caller against each other (hotplug
// lock) but may run concurrently with the per-CPU entry points.  Inspection
// functions (CheckInvariants, state accessors) need a quiescent hierarchy.
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

#ifndef ISOLATION_TMIGR_H_
#define ISOLATION_TMIGR_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

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

enum class Variant { kV69, kIsolation };
// "v6.9" / "isolation".
std::string_view VariantName(Variant variant);
// Accepts "v6.9" and "isolation"; errors name the value.
absl::StatusOr<Variant> ParseVariant(std::string_view name);
inline constexpr std::array<Variant, 2> kAllVariants = {Variant::kV69, Variant::kIsolation};

// Re-creations of fixed bugs (negative controls).  All off = correct code.
struct BugSwitches {
  bool ghost_timer = false;            // before f55acb1e44f3: handle_remote returns early, wakeup kept
  bool no_cpu_refresh = false;         // before 61f7fdf8fd00: equal expiry does not refresh evt->cpu
  bool early_return = false;           // 4b6f4c5a67c0's bug: ignored level-0 event returns even at the top
  bool quick_check_top_only = false;   // before 8ca1836769d7: quick check uses only the top's expiry
  bool no_seq_increment = false;       // race R1 unprotected: CAS without seq++
  bool lockless_update_reads = false;  // race R2 unprotected: states read before taking the locks
  bool any() const {
    return ghost_timer || no_cpu_refresh || early_return || quick_check_top_only ||
           no_seq_increment || lockless_update_reads;
  }
};

struct Options {
  Variant variant = Variant::kV69;
  // Power of two in [2, 8]; 2 reproduces the drawings of the kernel's design comment.
  int children_per_group = kMaxChildrenPerGroup;
  // TM-ISOL exclude ordering: merged (un-isolate, flush, isolate) or [V15]
  // (mask computed up front, both sets queued then flushed together).
  bool v15_exclude_order = false;
  // Isolation predicate with the cpuset term (v6.19) or without it (post-merge).
  bool cpuset_term = true;
  // Record the lock order of every tmigr lock (I11); small cost per lock.
  bool record_lock_order = false;
  BugSwitches bugs;
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

// struct tmigr_event.  `expires` and `queued` are protected by the lock of
// the group whose queue holds (or will hold) the event; `ignore` is also
// written lock-free on activation.
struct Event {
  Nanos expires = kNanosMax;
  int cpu = -1;
  std::atomic<bool> ignore{true};
  bool queued = false;
};

// The timerqueue of a group: at most one event per child, so a sorted
// fixed array of 8 pointers (no allocation; insertion is O(8)).  Equal keys
// go after existing ones, as timerqueue_add() does.
class EventQueue {
 public:
  // Returns true if `e` became the first event (timerqueue_add).
  bool Add(Event* e);
  // Returns true if the queue is still non-empty (timerqueue_del).
  bool Remove(Event* e);
  Event* First() const { return size_ > 0 ? items_[0] : nullptr; }
  int size() const { return size_; }
  Event* at(int i) const { return items_[static_cast<size_t>(i)]; }

 private:
  std::array<Event*, kMaxChildrenPerGroup> items_{};
  int size_ = 0;
};

// struct tmigr_group.
struct alignas(64) Group {
  std::mutex lock;
  std::atomic<Group*> parent{nullptr};
  Event groupevt;  // queued in the parent while this group is inactive
  std::atomic<Nanos> next_expiry{kNanosMax};
  EventQueue events;
  std::atomic<uint32_t> migr_state{GroupState{}.Pack()};
  int level = 0;
  int numa_node = -1;  // -1: at or above the crossnode level
  int num_children = 0;
  uint8_t groupmask = 0;  // this group's bit in its parent
  int index = 0;          // creation order within the level: "GRP<level>:<index>"
  bool root_prepared = false;

  GroupState state() const { return GroupState::Unpack(migr_state.load(std::memory_order_acquire)); }
  std::string Name() const;
};

// struct tmigr_cpu.
struct alignas(64) CpuState {
  std::mutex lock;
  std::atomic<bool> available{false};
  std::atomic<bool> idle{false};
  std::atomic<bool> remote{false};
  Group* tmgroup = nullptr;
  uint8_t groupmask = 0;
  std::atomic<Nanos> wakeup{kNanosMax};
  Event cpuevt;
  bool prepared = false;
  bool online = false;
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
  // timer_base_is_idle() of `cpu` (called on cpu's context).
  virtual bool BaseIsIdle(int cpu) = 0;
  // work_on_cpu(cpu, tmigr_trigger_active): wake `cpu` so it leaves idle
  // and activates in the hierarchy.
  virtual void KickCpu(int cpu) = 0;
  // schedule_work_on(cpu, ...) + flush: run `fn` on cpu's context (waking it
  // if it is idle).  Default: run it directly.
  virtual void RunOnCpu(int /*cpu*/, absl::FunctionRef<void()> fn) { fn(); }
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
  std::atomic<int64_t> remote_expiries{0};   // handle_remote_cpu passes that ran a CPU's timers
  std::atomic<int64_t> cas_retries{0};
  std::atomic<int64_t> lock_order_violations{0};
  std::atomic<int64_t> warnings{0};          // WARN_ON_ONCE equivalents
};

class TimerMigration {
 public:
  // Sizing from possible CPUs and nodes of `topology`.  `backend` must outlive
  // the object.  Errors: bad children_per_group, unknown variant, null
  // backend, CPU count outside [1, kMaxCpus], a node id outside
  // [0, kMaxNumaNodes).
  static absl::StatusOr<std::unique_ptr<TimerMigration>> Create(const Topology& topology,
                                                                const Options& options,
                                                                TimerBackend* backend);
  // Explicit node of each CPU (tests).  Nodes are 0..max(node_of).
  static absl::StatusOr<std::unique_ptr<TimerMigration>> Create(std::vector<int> node_of,
                                                                const Options& options,
                                                                TimerBackend* backend);
  ~TimerMigration();

  // Isolation inputs for TM-ISOL (copied).  Call before InitIsolation.
  void SetIsolation(const IsolationConfig& config);
  // Trace sink for migrator hand-overs ("tmigr.migrator": level, group,
  // from_mask, to_mask, on the CPU whose walk changed it, at tracer->Now())
  // and remote expiries ("tmigr.remote_expiry": owner, on the runner).
  // nullptr (default) = off.  REQUIRES: set before the per-CPU entry points
  // run; not owned.
  void SetTracer(Tracer* tracer) { tracer_ = tracer; }

  // ---- hotplug ------------------------------------------------------------
  // tmigr_cpu_prepare(): first bring-up builds the CPU's path (idempotent).
  absl::Status PrepareCpu(int cpu);
  // tmigr_set_cpu_available() (hotplug online, on `cpu`).  Errors: no group.
  absl::Status SetCpuAvailable(int cpu);
  // tmigr_clear_cpu_available() (hotplug offline / isolation, on `cpu`).  A
  // cpu outside [0, num_cpus()) is ignored.
  void ClearCpuAvailable(int cpu);
  // Prepare + online + set available, as a CPU coming online.
  absl::Status BringUpCpu(int cpu);
  // Offline: clear available and mark offline (ignored for a cpu out of range).
  void TakeDownCpu(int cpu);

  // ---- isolation (TM-ISOL; no-ops for kV69) ---------------------------------
  // tmigr_init_isolation() (late initcall): enable the switch and exclude the
  // domain-isolated CPUs.
  void InitIsolation();
  // Cpuset isolated partitions changed: exclude domain ∪ cpuset isolated.
  absl::Status SetCpusetIsolated(const CpuMask& isolated);
  // tmigr_isolated_exclude_cpumask().  Errors (nothing changed): a mask not
  // of num_cpus() bits.
  absl::Status IsolatedExclude(const CpuMask& exclude);
  // tmigr_is_isolated().  false for a cpu outside [0, num_cpus()).
  bool IsIsolated(int cpu) const;

  // ---- per-CPU entry points (run on `cpu`) ---------------------------------
  // REQUIRES: 0 <= cpu < num_cpus() (contract-checked).
  void Activate(int cpu);                               // tmigr_cpu_activate()
  Nanos Deactivate(int cpu, Nanos next_global);         // tmigr_cpu_deactivate()
  Nanos NewTimer(int cpu, Nanos next_global);           // tmigr_cpu_new_timer()
  Nanos QuickCheck(int cpu, Nanos next_global);         // tmigr_quick_check()
  bool RequiresHandleRemote(int cpu, Nanos now);        // tmigr_requires_handle_remote()
  void HandleRemote(int cpu, Nanos now);                // tmigr_handle_remote()

  // ---- inspection (quiescent) ----------------------------------------------
  int num_cpus() const { return num_cpus_; }
  const Sizing& sizing() const { return sizing_; }
  const Options& options() const { return options_; }
  const Group* root() const { return root_; }
  // Groups of a level in creation order.  REQUIRES (contract-checked):
  // 0 <= level < number of levels; cpu_state(): 0 <= cpu < num_cpus().
  const std::vector<Group*>& groups_at(int level) const {
    ISOLATION_CONTRACT(level >= 0 && static_cast<size_t>(level) < levels_.size(), "tmigr: level %d outside [0, %d)",
                       level, levels_.size());
    return levels_[static_cast<size_t>(level)];
  }
  int num_groups() const { return static_cast<int>(storage_.size()); }
  const CpuState& cpu_state(int cpu) const { return *cpus_[CpuIndex(cpu)]; }
  // false for a cpu outside [0, num_cpus()).
  bool IsAvailable(int cpu) const {
    return cpu >= 0 && cpu < num_cpus_ && cpus_[static_cast<size_t>(cpu)]->available.load(std::memory_order_relaxed);
  }
  CpuMask AvailableMask() const;
  bool isolation_enabled() const { return exclude_isolated_.load(std::memory_order_relaxed); }
  Counters& counters() { return counters_; }
  const Counters& counters() const { return counters_; }
  // Per-runner count of remote expiries (handle_remote_cpu for another CPU).
  std::vector<int64_t> RemoteExpiriesByRunner() const;

  // Structural invariants I1, I3, I4, I6, I7, I8 (mask part), I9, I10; each
  // violation is one human-readable line naming the invariant.  I5 needs the
  // timer base and is checked by TimerSystem.
  std::vector<std::string> CheckInvariants() const;
  // One line per group: "GRP1:0 lvl1 active=0x03 migr=0x01 next=..., events=[...]".
  std::string DebugString() const;
  // Earliest non-ignored event expiry over the queues from `cpu`'s level-0
  // group up to its lowest active ancestor (for I5), and whether that path
  // reaches an inactive root.  A cpu outside [0, num_cpus()): the default
  // (nothing covered, no idle root).
  struct PathCoverage {
    Nanos min_expiry_on_path = kNanosMax;  // max over levels of per-level min (weakest link)
    bool reaches_idle_root = false;
  };
  PathCoverage CoverageOf(int cpu, Nanos timer) const;

 private:
  struct Walk;
  size_t CpuIndex(int cpu) const {
    ISOLATION_CONTRACT(cpu >= 0 && cpu < num_cpus_, "tmigr: cpu %d outside [0, %d)", cpu, num_cpus_);
    return static_cast<size_t>(cpu);
  }
  TimerMigration(std::vector<int> node_of, int num_nodes, const Options& options, TimerBackend* backend);

  template <typename StepFn>
  void WalkGroupsFrom(Group* group, Walk& data, StepFn&& step);
  template <typename StepFn>
  void WalkGroups(CpuState& tmc, Walk& data, StepFn&& step);

  bool ActiveUp(Group* group, Group* child, Walk& data);
  bool InactiveUp(Group* group, Group* child, Walk& data);
  bool UpdateEvents(Group* group, Group* child, Walk& data);
  bool RequiresHandleRemoteUp(Group* group, Walk& data);
  bool HandleRemoteUp(Group* group, Walk& data);
  void HandleRemoteCpu(int cpu, int runner, Nanos now);
  void ActivateLocked(CpuState& tmc);
  Nanos DeactivateLocked(CpuState& tmc, Nanos next_global);
  Event* NextGroupEvent(Group* group);
  Event* NextExpiredGroupEvent(Group* group, Nanos now);
  static bool CheckMigrator(const Group* group, uint8_t childmask);

  void SetCpuAvailableUnchecked(int cpu);
  Group* GetGroup(int node, int level);
  absl::Status SetupGroups(int cpu, int node, Group* start, bool activate);
  bool InitRoot(Group* group, bool activate);
  void ConnectChildParent(Group* child, Group* parent, bool activate);

  void LockRanked(std::mutex& m, int rank);
  void UnlockRanked(std::mutex& m, int rank);
  void NoteAcquire(int rank);
  void NoteRelease(int rank);
  void Warn() { counters_.warnings.fetch_add(1, std::memory_order_relaxed); }
  void TraceMigrator(const Group* group, uint8_t from, uint8_t to, int cpu);

  Options options_;
  TimerBackend* backend_;
  int num_cpus_;
  std::vector<int> node_of_;
  Sizing sizing_;
  std::vector<std::unique_ptr<CpuState>> cpus_;
  std::deque<Group> storage_;               // groups are never freed; stable addresses
  std::vector<std::vector<Group*>> levels_;  // creation order (kernel list head = newest)
  Group* root_ = nullptr;
  bool reconnecting_old_root_ = false;       // under setup_mutex_
  std::mutex setup_mutex_;                   // tmigr_mutex
  mutable std::mutex available_mutex_;       // tmigr_available_mutex
  CpuMask available_mask_;                   // tmigr_available_cpumask
  std::atomic<bool> exclude_isolated_{false};  // static key tmigr_exclude_isolated
  CpuMask domain_isolated_, nohz_full_, cpuset_isolated_;
  int tick_cpu_ = -1;
  Counters counters_;
  std::unique_ptr<std::atomic<int64_t>[]> remote_by_runner_;
  Tracer* tracer_ = nullptr;
};

}  // namespace isolation::tmigr

#endif  // ISOLATION_TMIGR_H_
