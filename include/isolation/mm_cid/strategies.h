// SPDX-License-Identifier: GPL-2.0-or-later
// -----------------------------------------------------------------------------
// mm_cid/strategies.h
// -----------------------------------------------------------------------------
//
// The variant axes of the `lazy` design (v6.4-v6.18, mm_cid.h) as
// interfaces.  One object per axis is chosen when the MmCid is created
// (from the names in a LazyConfig, variant.h) and never changes:
//
//   AllocatorStrategy    __mm_cid_try_get(): which free ID a switch-in takes
//                        (alloc_v6_4, alloc_v6_13, alloc_v6_14).
//   ScopeStrategy        which CPUs a compaction pass visits (scan_possible,
//                        scan_allowed, scan_cidmask -- a negative control).
//   GranularityStrategy  how much of a pass one Scan() call does and which
//                        calls start a pass (batch_full, batch_N).
//   PlacementStrategy    one object for both halves of the placement: WHEN a
//                        scan is due (at a tick, at a return to user) and
//                        WHERE it runs (inline on the triggering CPU, on a
//                        housekeeping worker, after an RCU grace period, as
//                        periodic delayed work; the adapter -- hooks.h --
//                        provides the ScanRunner it queues on).
//   TickPolicy           what the tick does for a task that has run a long
//                        time without being preempted (no_tick_kick,
//                        tick_kick of [WQ]).
//
// Each built-in is one file of lib/mm_cid/; registry.h lists them and takes
// new ones, so an outside strategy is a class implementing one of these
// interfaces plus one Register*() call.  The design calls its strategies on
// the allocation, scan, tick and return-to-user paths only: the cached
// context switch (a valid ID parked in the CPU's slot, the common case)
// calls none of them.
//
// Kernel counterpart: kernel/sched/core.c and kernel/sched/sched.h
// (CONFIG_SCHED_MM_CID) of v6.4-v6.18 and the patches cited per strategy
// (spec tags [LF], [LOC], [SHRINK], [SEED], [DW], [WQ], [BATCH]).
//
// Thread-safety contract: strategy objects are immutable after creation and
// shared by every CPU of one MmCid; their methods may run concurrently from
// any thread (a scan runs without any rq lock, concurrently with switches).
// They keep no mutable state of their own: what changes lives in the design's
// atomics they are handed (the cursor, ScanTrigger's flags, CidSpace).
// CidSpace, ScanSet and ScanTrigger are views valid during the call only.
//
// Memory ordering: the atomics handed to a strategy are the design's own and
// keep its ordering (mm_cid.h): a strategy reads them relaxed unless noted
// (CidSpace::nr_cpus_allowed() is an acquire load pairing with the union's
// release update), reserves IDs only through CidSpace::TryReserve()
// (fetch_or acq_rel), and moves the batch cursor with a relaxed CAS: the
// cursor only partitions work, the slot CASes order the reclaim itself.

#ifndef ISOLATION_MM_CID_STRATEGIES_H_
#define ISOLATION_MM_CID_STRATEGIES_H_

#include <atomic>

#include "absl/functional/function_ref.h"
#include "isolation/core/clock.h"
#include "isolation/core/cpumask.h"
#include "isolation/mm_cid/types.h"

namespace isolation::mm_cid {

// ---------------------------------------------------------------------------
// Allocator: __mm_cid_try_get()
// ---------------------------------------------------------------------------

// What one allocation attempt may read and do: one mm, one CPU, under that
// CPU's rq lock.  Implemented by the lazy design.
class CidSpace {
 public:
  virtual int num_cpus() const = 0;         // nr_cpu_ids
  virtual int users() const = 0;            // mm_users
  virtual int nr_cpus_allowed() const = 0;  // weight of the mm's CPU union (mm_cpus_allowed)
  // mm->max_nr_cid (v6.13+): the high-water mark allocations expand.
  virtual std::atomic<int>& max_nr_cid() = 0;
  // This CPU's recent_cid (v6.13+): the ID it used last for this mm, -1 if none.
  virtual int recent_cid() const = 0;
  // The lowest clear bit of the mm's ID bitmap if it is below `bound`,
  // waiting (boundedly) while bits that only a migration or remote clear
  // owns transiently fill [0, bound); -1 if none came free.
  virtual int FirstZeroBelow(int bound) = 0;
  // cpumask_test_and_set_cpu() on the mm's bitmap: true if `cid` is now
  // reserved by this call (counted as one allocation attempt).
  virtual bool TryReserve(int cid) = 0;

 protected:
  ~CidSpace() = default;
};

// Properties an allocator declares; the design and the conformance kit
// (testing/mm_cid.h) act on these, never on the allocator's name.
struct AllocatorTraits {
  // v6.13+ data: a per-CPU recent_cid that each allocation and migration
  // writes and a migration steal clears, and migration comparing the users
  // with the mm's CPU union (not the task's own affinity weight).
  bool recent_cid = false;
  // I3: every ID handed out is below the mm's nr_cpus_allowed.
  bool bounded_by_allowed = false;
  // I8 (and S4, S5, S13): once the scans reclaim, the IDs of the remaining
  // tasks converge to {0 .. T-1}.  alloc_v6_13 declares false: its hint
  // re-grants the CPU's old high ID.  The kit checks the declaration both
  // ways (a declared non-compacting allocator must not compact either).
  bool compacts = true;
  // S5 / S6: a CPU gets its recent ID back when that ID is free (the
  // [LOC] cache-locality property).
  bool reuses_recent_cid = false;
  // What each ID TryGet() returns promises beyond I2 / I3; the kit asserts
  // it at the moment of every allocation of its schedules (testing/mm_cid.h:
  // AllocationBound), with `first free` the lowest ID free before the event.
  enum class IdPromise {
    kNone,       // nothing more (alloc_v6_13: the hint re-grants any old ID)
    kFirstFree,  // the lowest free ID (alloc_v6_4)
    // below max_nr_cid = min(users, nr_cpus_allowed), or the lowest free ID
    // (the fallback when every ID below max_nr_cid is taken): alloc_v6_14.
    kMaxNrCid,
  };
  IdPromise id_promise = IdPromise::kNone;
};

class AllocatorStrategy {
 public:
  virtual ~AllocatorStrategy() = default;
  virtual AllocatorTraits traits() const = 0;
  // __mm_cid_try_get(): an ID this call reserved with space.TryReserve(), or
  // -1 after a lost race (the design retries under its cid_lock fallback).
  virtual int TryGet(CidSpace& space) const = 0;
};

// ---------------------------------------------------------------------------
// Scope: the CPUs a compaction pass visits
// ---------------------------------------------------------------------------

// What a scope may read of one mm.
struct ScanSet {
  int num_cpus = 0;
  const AtomicCpuMask* allowed = nullptr;  // mm_cpus_allowed (grow-only union)
  const AtomicCpuMask* cidmask = nullptr;  // reserved IDs: indexed by ID, not by CPU
};

class ScopeStrategy {
 public:
  virtual ~ScopeStrategy() = default;
  // CPUs in the scope of `mm` now (the length of a batched pass).
  virtual int Size(const ScanSet& mm) const = 0;
  // Hands the CPUs at positions [start, start + count) of the scope's order
  // (clipped to the scope) to `visit`, in ascending chunks of CPU numbers
  // (`cpus[0 .. n)`), each chunk collected before it is visited.
  virtual void ForEach(const ScanSet& mm, int start, int count,
                       absl::FunctionRef<void(const int* cpus, int n)> visit) const = 0;
};

// ---------------------------------------------------------------------------
// Granularity: how much of a pass one Scan() call does
// ---------------------------------------------------------------------------

// One Scan() call's share of a pass.
struct ScanWindow {
  int start = 0;          // position in the scope's order
  int count = 0;          // CPUs visited in each of the two loops
  bool pass_end = false;  // this call completes the pass
};

class GranularityStrategy {
 public:
  virtual ~GranularityStrategy() = default;
  // CPUs per call in each loop; 0 = the whole scope (batch_full).
  virtual int batch() const = 0;
  // Where this call starts, read from the mm's cursor (mm_cid_scan_batch):
  // 0 starts a new pass, to which the 100 ms rate limit applies.
  virtual int Start(const std::atomic<int>& cursor, int scope_size) const = 0;
  // Claims the window beginning at `start` (a CAS on the cursor for
  // batches); false if another scanner claimed it first.
  virtual bool Claim(std::atomic<int>& cursor, int start, int scope_size, int num_cpus,
                     ScanWindow& window) const = 0;
};

// ---------------------------------------------------------------------------
// Placement: when a scan is due and where it runs
// ---------------------------------------------------------------------------

// What a placement sees at a tick or a return to user of a task.
struct ScanTrigger {
  MmId mm = kNoMm;      // the task's mm (kNoMm: none)
  bool active = false;  // the task is an active user of `mm` (mm_cid_active)
  Nanos now = 0;
  Nanos next_scan = 0;       // mm_cid_next_scan (0 = not initialised)
  bool switched_in = false;  // first return to user since the task's switch-in
  // The task's cid_work node is queued as task work (task_work_add).
  std::atomic<bool>* task_work_queued = nullptr;
  // The mm's work item / rcu head is in flight (nullptr without an mm).
  std::atomic<bool>* mm_work_pending = nullptr;
};

enum class ScanAction {
  kNone,
  kRunHere,  // run task_mm_cid_work() now, on this CPU (task work, rseq resume)
  kRequest,  // hand the mm to the adapter: PlacementStrategy::Dispatch()
};

struct PlacementTraits {
  // Passes start only when mm_cid_next_scan has passed (and move it on).
  // false: work_delayed, whose 100 ms re-arm is the limit ([DW]).
  bool rate_limited = true;
  // The placement comes with the [WQ] tick kick (work_unbound, work_resume):
  // the design then uses the registered `tick_kick` policy whatever the
  // configuration names.
  bool tick_kick = false;
  // Scans run on the CPU whose tick / return to user triggered them (I10:
  // they land on isolated CPUs when tasks of the mm run there).
  bool runs_on_trigger_cpu = false;
};

// Where an adapter can run a scan (hooks.h implements it for the drivers,
// the kit's DirectScanRunner for direct driving).  Each queued scan calls
// MmCid::Scan(mm, now) and then MmCid::ScanRequestDone(mm).
class ScanRunner {
 public:
  // On a housekeeping worker after `delay` (an unbound workqueue item).
  virtual void QueueWork(MmId mm, Nanos delay) = 0;
  // On a housekeeping worker every `period` while the mm has users
  // (delayed work that re-arms itself; cancelled when the mm is dropped).
  virtual void QueuePeriodicWork(MmId mm, Nanos period) = 0;
  // After an RCU grace period (call_rcu, callbacks offloaded).
  virtual void CallRcu(MmId mm) = 0;
  // Before the first CallRcu of a run (sets up the callback worker).
  virtual void PrepareRcu() {}

 protected:
  ~ScanRunner() = default;
};

class PlacementStrategy {
 public:
  virtual ~PlacementStrategy() = default;
  virtual PlacementTraits traits() const = 0;

  // -- when (the design calls these in the CPU's context, rq lock held)
  // task_tick_mm_cid() with `t` the interrupted task.
  virtual ScanAction OnTick(const ScanTrigger& t) const = 0;
  // The return to user of `t` (after a switch-in, a tick or a syscall).
  virtual ScanAction OnReturnToUser(const ScanTrigger& t) const = 0;
  // mm_cid_needs_scan() / mm_cid_scan_pending(), for the [WQ] tick kick.
  virtual bool ScanDue(const ScanTrigger& t) const {
    return traits().rate_limited && t.now >= t.next_scan;
  }
  virtual bool ScanPending(const ScanTrigger& t) const = 0;

  // -- where (the adapter calls these)
  // Once, when the adapter starts.
  virtual void Start(ScanRunner& runner) const { (void)runner; }
  // A new mm was created (work_delayed arms its periodic work here).
  virtual void OnMmCreated(MmId mm, ScanRunner& runner) const {
    (void)mm;
    (void)runner;
  }
  // A ScanAction::kRequest of this placement: queue the scan.
  virtual void Dispatch(MmId mm, ScanRunner& runner) const {
    (void)mm;
    (void)runner;
  }
};

// ---------------------------------------------------------------------------
// Tick policy: never-preempted tasks ([WQ])
// ---------------------------------------------------------------------------

// What the tick sees of the interrupted task.
struct TickView {
  Nanos now = 0;
  Nanos ran_for = 0;          // since its switch-in (it has been current throughout)
  Nanos last_cid_reset = 0;   // its last ID allocation by mm_cid_get()
  bool scan_due = false;      // PlacementStrategy::ScanDue()
  bool scan_pending = false;  // PlacementStrategy::ScanPending()
};

enum class TickAction {
  kNone,
  kForceReturnToUser,  // rseq_set_notify_resume(): the placement sees a return to user
  kRetakeId,           // put lazy + get on the local slot, in place
};

class TickPolicy {
 public:
  virtual ~TickPolicy() = default;
  virtual TickAction OnTick(const TickView& v) const = 0;
  // Declared property: a task that never switches gets its ID re-taken
  // while it runs (S13's "kick" expectations apply).
  virtual bool kicks_unpreempted() const = 0;
};

}  // namespace isolation::mm_cid

#endif  // ISOLATION_MM_CID_STRATEGIES_H_
