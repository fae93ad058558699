// SPDX-License-Identifier: GPL-2.0-or-later
// -----------------------------------------------------------------------------
// mm_cid.h
// -----------------------------------------------------------------------------
//
// Per-address-space concurrency IDs ("mm_cid", the rseq `mm_cid` field) and
// their compaction, with every design the kernel used or discussed, side by
// side.  A variant (variant.h) names a registered design and, for the lazy
// design, one registered strategy per axis (strategies.h, registry.h):
//
//   design     lazy      v6.4-v6.18 per-(mm, CPU) slots with a lazy-put flag,
//                        a global cid_lock fallback and a periodic compaction
//                        scan (kernel/sched/core.c, kernel/sched/sched.h,
//                        CONFIG_SCHED_MM_CID; commits 223baf9d17f2, 7e019dcc470f,
//                        02d954c0fdf9).
//              owner619  the 6.19 rewrite: per-task / per-CPU ownership modes,
//                        the TRANSIT bit, fixups at fork/exit and affinity growth
//                        (kernel/sched/sched.h mm_cid_schedin/schedout, core.c
//                        sched_mm_cid_fork/exit, mm_cid_fixup_*).
//              v63_mmlock  the v6.3 baseline (af7f588d8f73): a per-mm spinlock
//                        (mm->cid_lock) around first-zero/set/clear of the cid
//                        bitmap at every switch between different mms; the ID
//                        is handed over when prev and next share the mm
//                        (kernel/sched/sched.h switch_mm_cid, mm_cid_get/put,
//                        core.c sched_mm_cid_exit_signals/_execve/_fork).
//              negative controls, each a design of its own: lazy_no_dekker_fences,
//                        owner619_direct, owner619_walk619, owner619_split_mode.
//   allocator  (lazy)    alloc_v6_4, alloc_v6_13 (recent_cid, max_nr_cid),
//                        alloc_v6_14 (shrink max_nr_cid) -- __mm_cid_try_get().
//   scan scope (lazy)    scan_possible, scan_allowed (the mm's CPU union),
//                        scan_cidmask (the seed's patch 1/2, WRONG: a negative
//                        control).
//   granularity (lazy)   batch_full, or batch_N: N CPUs per call.
//   placement  (lazy)    when the scan (task_mm_cid_work) is due and where it
//                        runs; the Hooks adapter (hooks.h) provides the workers.
//   tick (lazy)          no_tick_kick, tick_kick ([WQ] never-preempted tasks).
// Each strategy is chosen once, at Create(); no entry point looks at a
// variant's name.
//
// The mechanism is a plain data structure: entry points take the CPU number
// and the time, exactly at the points the kernel calls its hooks (see the
// per-function comments for the kernel function each corresponds to).
// ContextSwitch is a virtual call; MmCid::Switcher() (switcher.h) is the
// same switch compiled into the caller, as the kernel inlines
// switch_mm_cid() into context_switch(): the cached path inline, the rest
// forwarded here.  The Hooks adapter (hooks.h) switches through it.
//
// Thread-safety contract (as in the kernel):
//   - ContextSwitch(cpu, ...), Tick(cpu, ...) and ReturnToUser(cpu, ...) run
//     in `cpu`'s context with `cpu`'s run-queue lock, RunQueueLock(cpu), held
//     by the caller (or, in the simulator, on the single thread); two of them
//     for the same CPU never run concurrently.  The lock is the instance's
//     own mutex per CPU unless BindRunQueueLocks() gave it the driver's
//     (the Hooks adapter binds Driver::RunQueueLock, which the real-thread
//     driver holds around OnContextSwitch): the switch itself takes no lock.
//   - Exit(cpu, ...) and Exec(cpu, ...) run in `cpu`'s context *without* its
//     run-queue lock: owner619 takes it itself under the mm's mutex, as
//     sched_mm_cid_exit() does (7.0: mutex, then rq_lock_irq(this_rq())).
//   - Migrate(task, from, to) runs with `to`'s run-queue lock held, for a task
//     that is not running.
//   - Scan() may run anywhere, concurrently with everything above, without
//     any run-queue lock (the remote clears use the lazy-put CAS protocol).
//   - Fork/SetAffinity/CreateMm may run from any thread holding no run-queue
//     lock (owner619's fixups take other CPUs' run-queue locks).
//   - The observers (TaskCid, Check*) are exact only at quiescent points
//     (single-threaded simulator between events, or after joining).
//   - v63_mmlock: everything above except that the bitmap is guarded by the
//     per-mm lock (as in v6.3), which ContextSwitch/Exit/Exec take; its
//     observers take it too (uncounted).
//
// Contracts and errors (docs/core.md, "Contracts and errors"):
//   - hot entry points (ContextSwitch, Migrate, Tick, ReturnToUser) keep the
//     kernel's contract -- the caller passes a CPU in [0, num_cpus()) and
//     task ids in [0, max_tasks()) (or kNoTask where allowed) -- stated as REQUIRES
//     and checked with ISOLATION_CONTRACT (contract.h) in debug, sanitizer
//     and ISOLATION_HARDENED builds, unchecked otherwise;
//   - everything else validates always: factories, Fork*, Exit, Exec and
//     SetAffinity return absl::Status naming the bad value; observers return
//     the documented "no such thing" value for an unknown task, mm or CPU.
//
// Memory ordering: the lazy design's reclaim is a Dekker pairing. The switch
// side publishes the CPU's current task (relaxed store) and then issues a
// barrier before loading its own slot; the reclaimer's CAS to LAZY is
// followed by a barrier before it loads the CPU's current task and that
// task's mm/active fields.  At least one of the two sees the other's store,
// so a reclaimer never frees an ID a running task holds (invariant I4).
// The barriers are a full fence on each side (BarrierMode::kFences) or, by
// default where the host supports it, a compiler barrier on the switch side
// and membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) on the reclaimer side
// (kMembarrier): the membarrier runs a full barrier on every CPU that runs a
// thread of the process, so a switch that ran before it is ordered as if it
// had fenced itself.  That requires every caller of ContextSwitch to be a
// thread of this process (it is a library: they are).  The
// cid bitmap uses fetch_or(acq_rel) to reserve and fetch_and(release) to
// free.  owner619 serialises on per-CPU locks (the rq locks) and the mm
// mutex; its mode word is published with the two full fences of 47ee94efccf6.

#ifndef ISOLATION_MM_CID_H_
#define ISOLATION_MM_CID_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "isolation/core/clock.h"
#include "isolation/core/contract.h"
#include "isolation/core/cpumask.h"
#include "isolation/core/mutex.h"
#include "isolation/mm_cid/types.h"
#include "isolation/mm_cid/variant.h"

namespace isolation::mm_cid {

class PlacementStrategy;
class MmCidSwitcher;  // switcher.h

namespace internal {
// Which inline switch an MmCid offers its MmCidSwitcher (switcher.h; fixed
// at Create).  Not for use outside the library and switcher.h.
enum class SwitchForm : uint8_t {
  kVirtual,              // none: every switch is MmCid::ContextSwitch
  kLazyCompilerBarrier,  // lazy, BarrierMode::kMembarrier
  kLazyFence,            // lazy, BarrierMode::kFences
  kOwner619,             // owner619 (mainline mode word)
};
// What a design hands the switcher (MmCid::SetSwitchLayout): its task array
// (the address of task 0's TaskSwitchState and log2 of its Task's size), its
// per-CPU array and its journal flag (set once CheckAlwaysIncremental has
// attached a journal; read plainly, like the journal itself).
struct SwitchLayout {
  SwitchForm form = SwitchForm::kVirtual;
  uint8_t task_shift = 0;
  char* tasks = nullptr;
  void* cpus = nullptr;
  const bool* journaled = nullptr;
};
}  // namespace internal

// ---------------------------------------------------------------------------
// Deprecated: the flat configuration the library had before the variant
// registries.  Code written against it still compiles, with a deprecation
// warning at each use; it names only the built-ins, and Create() turns it
// into an MmCidVariant (ToVariant), which is what new code writes
// (variant.h).  The enums' parsers and names are gone: the registries
// accept the old spellings ("task", "cidmask", "v6_13") as aliases.
// ---------------------------------------------------------------------------
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
enum class [[deprecated("name a registered design (MmCidVariant::design)")]] Design{
    kLazy, kOwner619, kV63MmLock};
enum class [[deprecated("name a registered allocator (LazyConfig::allocator)")]] Allocator{
    kV6_4, kV6_13, kV6_14};
enum class [[deprecated("name a registered scan scope (LazyConfig::scope)")]] ScanScope{
    kPossible, kAllowed, kCidmask};
enum class [[deprecated("name a registered placement (LazyConfig::placement)")]] Placement{
    kTaskWork,  // work_taskwork
    kDelayed,   // work_delayed
    kUnbound,   // work_unbound
    kRcu,       // work_rcu
    kResume,    // work_resume
};

struct [[deprecated("use MmCidVariant (mm_cid/variant.h)")]] MmCidConfig {
  Design design = Design::kLazy;
  Allocator allocator = Allocator::kV6_14;
  ScanScope scope = ScanScope::kPossible;
  int batch = 0;  // 0 = batch_full, N > 0 = batch_N
  Placement placement = Placement::kTaskWork;
  bool owner619_direct = false;   // -> design owner619_direct
  bool owner619_walk619 = false;  // -> design owner619_walk619
  bool tick_kick = false;         // -> tick tick_kick
  bool TickKickEnabled() const {
    return design == Design::kLazy &&
           (tick_kick || placement == Placement::kUnbound || placement == Placement::kResume);
  }
  bool lazy_no_dekker_fences = false;  // -> design lazy_no_dekker_fences
  bool owner619_split_mode = false;    // -> design owner619_split_mode

  // ToVariant(*this)'s Name(), e.g. "lazy+alloc_v6_14+scan_possible+batch_full+work_taskwork".
  std::string Name() const;
};

// The registered variant a flat configuration stands for.  Errors name the
// bad value: batch outside [0, kMaxCpus], an enum value out of range, two
// negative-control toggles at once.
[[deprecated("use MmCidVariant (mm_cid/variant.h)")]] absl::StatusOr<MmCidVariant> ToVariant(
    const MmCidConfig& config);
#pragma GCC diagnostic pop

// "tick_kick" -> true, "no_tick_kick" -> false (the lazy tick_kick toggle).
absl::StatusOr<bool> ParseTickKick(std::string_view s);

// ---------------------------------------------------------------------------

struct MmCidStats {
  int64_t allocations = 0;  // IDs reserved in the bitmap
  int64_t frees = 0;        // IDs released from the bitmap
  int64_t bitmap_ops = 0;   // test-and-set / clear on the bitmap
  int64_t switch_rmw = 0;   // atomic RMW operations done inside ContextSwitch
  int64_t context_switches = 0;
  int64_t scans = 0;  // Scan() calls that ran
  int64_t slot_visits = 0;
  int64_t lock_fallbacks = 0;            // cid_lock slow path taken (lazy)
  int64_t max_alloc_attempts = 0;        // worst schedin allocation attempts (I14)
  int64_t alloc_failures = 0;            // an allocation gave up (progress bound hit)
  int64_t mode_changes = 0;              // owner619 per-task <-> per-CPU flips
  int64_t remote_lock_acquisitions = 0;  // owner619 fixups taking other CPUs' locks
  // v63_mmlock: acquisitions of the per-mm cid_lock (switches, exit, exec)
  // and how many of them found it taken (the waiter had to spin).
  int64_t mm_lock_acquisitions = 0;
  int64_t mm_lock_contended = 0;
  int64_t tick_kick_retakes = 0;  // lazy: [WQ] kicks that re-took a running task's ID in place (put
                                  // + get; it may come back unchanged)
};

// How a design orders the two sides of the lazy put's Dekker pairing
// (MmCid::barrier_mode(); docs/mm_cid.md "I4 with an asymmetric barrier").
//   kNone        the design has no such pairing (owner619, v63_mmlock: rq
//                locks / the mm lock) or deliberately lacks its barriers
//                (the negative control lazy_no_dekker_fences);
//   kFences      a full fence on both sides (the kernel's smp_mb() pair);
//   kMembarrier  asymmetric, as userspace RCU: a compiler barrier after the
//                switch publishes rq->curr, membarrier(PRIVATE_EXPEDITED) in
//                the rare reclaimer (scan's remote clear, migration steal).
enum class BarrierMode { kNone, kFences, kMembarrier };
const char* BarrierModeName(BarrierMode mode);  // "none", "fences", "membarrier"

// One kernel instance: `num_cpus` possible CPUs, address spaces and tasks.
// A design is a subclass (registry.h registers its factory).
class MmCid {
 public:
  struct Limits {
    int max_tasks = 4096;
    int max_mms = 1024;
    // Construction-time barrier choice of designs with a lazy-put pairing
    // (lazy): false = kMembarrier where the host has
    // membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) (core/membarrier.h: not
    // in TSan builds), else kFences; true = kFences always.
    bool force_fences = false;
  };
  // Errors: num_cpus outside [1, kMaxCpus], limits outside [1, kMaxTasks] /
  // [1, kMaxMms], a design or strategy that is not registered (NotFound,
  // listing the registered names), a strategy's own refusal (e.g. batch_0).
  static absl::StatusOr<std::unique_ptr<MmCid>> Create(int num_cpus, const MmCidVariant& variant,
                                                       Limits limits);
  static absl::StatusOr<std::unique_ptr<MmCid>> Create(int num_cpus, const MmCidVariant& variant) {
    return Create(num_cpus, variant, Limits{});
  }
  // The variant named `name` (ParseVariant()).
  static absl::StatusOr<std::unique_ptr<MmCid>> Create(int num_cpus, std::string_view name,
                                                       Limits limits);
  static absl::StatusOr<std::unique_ptr<MmCid>> Create(int num_cpus, std::string_view name) {
    return Create(num_cpus, name, Limits{});
  }
  // Deprecated (MmCidConfig above): ToVariant(config) first (its errors).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  [[deprecated(
      "use MmCidVariant (mm_cid/variant.h)")]] static absl::StatusOr<std::unique_ptr<MmCid>>
  Create(int num_cpus, const MmCidConfig& config, Limits limits);
  [[deprecated(
      "use MmCidVariant (mm_cid/variant.h)")]] static absl::StatusOr<std::unique_ptr<MmCid>>
  Create(int num_cpus, const MmCidConfig& config) {
    return Create(num_cpus, config, Limits{});
  }
#pragma GCC diagnostic pop
  virtual ~MmCid() = default;

  const MmCidVariant& variant() const { return variant_; }
  int num_cpus() const { return num_cpus_; }
  // Limits::max_tasks: task ids are [0, max_tasks()).
  int max_tasks() const { return max_tasks_; }
  // The barrier mode chosen at construction (BarrierMode; Limits::force_fences).
  virtual BarrierMode barrier_mode() const { return BarrierMode::kNone; }
  // The lazy design's placement, which the Hooks adapter asks where a due
  // scan runs; nullptr for designs without background work.
  virtual const PlacementStrategy* placement() const { return nullptr; }

  // mm_init_cid(): a new address space whose creator has `creator_affinity`.
  virtual absl::StatusOr<MmId> CreateMm(const CpuMask& creator_affinity, Nanos now) = 0;
  // init_sched_mm_cid() + sched_mm_cid_fork(): task `child` (an unused id <
  // max_tasks) joins `mm`; `parent` is the forking task (kNoTask if none).
  // Errors: ids out of range or reused, affinity empty or of wrong size.
  virtual absl::Status Fork(TaskId parent, TaskId child, MmId mm, const CpuMask& affinity,
                            Nanos now) = 0;
  // mm_set_cpus_allowed() / mm_update_cpus_allowed().  Errors
  // (InvalidArgument, nothing changed): task not forked or outside
  // [0, max_tasks), mask empty or not of num_cpus() bits.
  virtual absl::Status SetAffinity(TaskId task, const CpuMask& mask, Nanos now) = 0;

  // ---- hot entry points: REQUIRES 0 <= cpu, from, to < num_cpus(); task
  // ids in [0, max_tasks()), or kNoTask where it is allowed (an id that was
  // never forked is an inactive task: nothing happens for it);
  // contract-checked (see the header comment).
  // switch_mm_cid() / mm_cid_switch_to(); prev/next may be kNoTask (idle).
  virtual void ContextSwitch(int cpu, TaskId prev, TaskId next, Nanos now) = 0;
  // sched_mm_cid_migrate_from() + sched_mm_cid_migrate_to() for a queued task.
  virtual void Migrate(TaskId task, int from, int to, Nanos now) = 0;
  // task_tick_mm_cid(): returns the mm to scan when the placement hands the
  // scan to the adapter (PlacementStrategy::Dispatch); task work queues
  // internally.  `curr` may be kNoTask.
  virtual ScanRequest Tick(int cpu, TaskId curr, Nanos now) = 0;
  // Return to user of `task` (may be kNoTask) on `cpu`: runs queued task
  // work (work_taskwork) or the direct scan (work_resume) here, or asks for
  // unbound work.  `result` (optional) receives what an inline scan did.
  virtual ScanRequest ReturnToUser(int cpu, TaskId task, Nanos now, ScanResult* result) = 0;
  // The kernel's rollback of a thread creation that fails after the child
  // was accounted (copy_process() error path after copy_mm():
  // bad_fork_cleanup_mm -> mmput(); 6.19+: sched_mm_cid_exit() of the
  // child).  `child` must have been forked and never switched in.  Undoes
  // the user count and any ID the fork reserved (owner619 allocates the
  // child's ID at fork in per-task mode; crossing a threshold back flips the
  // mode with its fixup); the child id becomes reusable.  Errors:
  // InvalidArgument for an id out of range or not forked, FailedPrecondition
  // for a child that already ran or exited.
  virtual absl::Status ForkFailed(TaskId child, Nanos now) = 0;
  // clone(CLONE_VM) without CLONE_THREAD (vfork(), posix_spawn()): `child`
  // shares `mm` but leads its own thread group.  Counted as a user of the mm
  // exactly like a thread; owner619's tasks->CPUs fixup must reach it (7.0:
  // through the per-mm user list; 6.19: through the task-list pass).  Same
  // errors as Fork.
  virtual absl::Status ForkVm(TaskId parent, TaskId child, MmId mm, const CpuMask& affinity,
                              Nanos now) = 0;
  // sched_mm_cid_exit_signals(): `task` is current on `cpu` (the kernel's
  // contract; v63_mmlock also accepts a task that does not run).  A second
  // Exit is a no-op.  Errors (InvalidArgument, nothing changed): cpu outside
  // [0, num_cpus()), task not forked or outside [0, max_tasks).
  virtual absl::Status Exit(int cpu, TaskId task, Nanos now) = 0;
  // sched_mm_cid_before_execve() + new mm + sched_mm_cid_after_execve().
  // Returns the new mm.  Errors: as Exit, an exited task (no mm), a bad
  // affinity, the mm limit.
  virtual absl::StatusOr<MmId> Exec(int cpu, TaskId task, const CpuMask& affinity, Nanos now) = 0;
  // task_mm_cid_work() body for `mm` (rate limit included).  An unknown mm:
  // nothing (ran = false).
  virtual ScanResult Scan(MmId mm, Nanos now) = 0;
  // The adapter finished a queued (non task-work) scan request for `mm`
  // (unknown mm: no-op).
  virtual void ScanRequestDone(MmId mm) { (void)mm; }

  // Observers.  For an unknown task (not forked or out of range), mm or CPU
  // they return: TaskCid -1, TaskMm kNoMm, TaskActive false, CurrentTask
  // kNoTask, MmUsers / MmAllowedWeight / CidmaskWeight 0, MmAllowed an empty
  // mask of num_cpus() bits.
  // User-visible ID of `task` while running (flags masked), -1 otherwise.
  virtual int32_t TaskCid(TaskId task) const = 0;
  virtual MmId TaskMm(TaskId task) const = 0;
  virtual bool TaskActive(TaskId task) const = 0;
  virtual TaskId CurrentTask(int cpu) const = 0;
  virtual int MmUsers(MmId mm) const = 0;
  virtual int MmAllowedWeight(MmId mm) const = 0;
  virtual CpuMask MmAllowed(MmId mm) const = 0;
  virtual int CidmaskWeight(MmId mm) const = 0;
  // The lowest ID not reserved in `mm`'s ID bitmap (num_cpus() when every
  // one is); what a first-free allocation takes.  A design that does not
  // say returns the default, CidmaskWeight(mm): an upper bound of it.
  virtual int FirstFreeCid(MmId mm) const { return CidmaskWeight(mm); }
  // lazy: whether `cpu`'s slot of `mm` carries the LAZY flag (a scan
  // announced a reclaim the slot's running owner has not resolved yet).
  // false for owner619 and for bad arguments.
  virtual bool SlotLazy(MmId mm, int cpu) const {
    (void)mm;
    (void)cpu;
    return false;
  }
  // lazy: the CPUs the scan scope of `mm` holds now (ScopeStrategy::Size);
  // a complete pass visits each of them twice.  0 without a scan.
  virtual int ScanScopeSize(MmId mm) const {
    (void)mm;
    return 0;
  }
  // Invariants that hold at every point: I1, I2, I3 (lazy v6.13+), I4, I15
  // partially (v63_mmlock: I1, I2, I15, running IDs reserved). Returns
  // human-readable violations (empty = fine).
  virtual std::vector<std::string> CheckAlways() const = 0;
  // The same result as CheckAlways() at every call, at a cost that follows
  // the state changed since the previous call (the CPUs, tasks, IDs and mms
  // the entry points wrote) instead of a pass over every CPU and mm: what a
  // per-event check on a large simulated machine needs.  The first call
  // enables the change tracking and costs a full pass.  Contract: once
  // called, drive the instance from one thread at a time (the simulator) and
  // call it where every store is visible; the tracking is not synchronised.
  // A design without change tracking may keep this default: the full pass.
  virtual std::vector<std::string> CheckAlwaysIncremental() { return CheckAlways(); }
  // Invariants at quiescence: I5, I6 (lazy), I5/I11 (owner619); v63_mmlock:
  // its own accounting (set bits = IDs of the running tasks, a task that
  // does not run holds no ID, allocations - frees = popcount).
  virtual std::vector<std::string> CheckQuiescent() const = 0;
  virtual MmCidStats Stats() const = 0;
  // Bound of I14 (allocation attempts per schedin).
  int ProgressBound() const { return 10 * num_cpus_; }

  // rq->lock of `cpu` (REQUIRES 0 <= cpu < num_cpus()): what a caller of the
  // hot entry points holds when several threads drive the instance (the
  // thread-safety contract above), and what owner619's Exit, Exec and fixups
  // take.  By default a mutex per CPU owned by the instance.
  Mutex& RunQueueLock(int cpu) const {
    ISOLATION_CONTRACT(cpu >= 0 && cpu < num_cpus_,
                       "MmCid::RunQueueLock(%d): a CPU outside [0, %d)", cpu, num_cpus_);
    return *rq_locks_[static_cast<size_t>(cpu)];
  }
  // Makes `locks[cpu]` the run-queue lock of each CPU: a driver's own
  // per-CPU lock, which it already holds around the switch hook, so no
  // second lock is taken per switch.  REQUIRES: before any entry point runs
  // concurrently with another.  Errors (InvalidArgument, nothing changed):
  // not num_cpus() locks, or a null one.
  absl::Status BindRunQueueLocks(const std::vector<Mutex*>& locks);

  // The inline context-switch front end (switcher.h; include it to call
  // this): the cached switch compiled into the caller, everything else this
  // instance's ContextSwitch.  Valid as long as this instance.
  MmCidSwitcher Switcher();

 protected:
  explicit MmCid(int num_cpus);
  int num_cpus_;
  // A design with an inline cached switch describes it here, in its
  // constructor (switcher.h).  Default: SwitchForm::kVirtual.
  void SetSwitchLayout(const internal::SwitchLayout& layout) { switch_layout_ = layout; }
  // The journal notes ContextSwitch writes while CheckAlwaysIncremental's
  // journal is attached, for the switcher's inline path.
  virtual void JournalSwitch(int cpu, TaskId prev, TaskId next) {
    (void)cpu;
    (void)prev;
    (void)next;
  }

 private:
  friend class MmCidSwitcher;
  template <internal::SwitchForm>
  friend class MmCidFormSwitcher;
  internal::SwitchLayout switch_layout_;
  std::unique_ptr<Mutex[]> own_rq_locks_;  // the default run-queue locks
  std::vector<Mutex*> rq_locks_;           // [cpu]: own_rq_locks_ or bound ones
  MmCidVariant variant_;                   // set by Create()
  int max_tasks_ = 0;                      // set by Create()
};

}  // namespace isolation::mm_cid

#endif  // ISOLATION_MM_CID_H_
