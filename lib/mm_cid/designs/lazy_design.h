// SPDX-License-Identifier: GPL-2.0-or-later
// lazy_design.h (mm_cid module, not installed): the `lazy` design
// (v6.4-v6.18): per-(mm, CPU) slots with the lazy-put flag, the cid bitmap,
// the global cid_lock fallback, migration, and the periodic compaction scan.
// Its variants are objects chosen once at construction
// (strategies.h: allocator, scan scope, granularity, placement, tick
// policy), and the Dekker fences are a compile-time policy: `Fences` is
// DekkerFences or AsymmetricBarriers (lazy.cc, mainline, picked at
// construction by MakeMainlineLazyDesign) or NoDekkerFences
// (controls/lazy_no_dekker_fences.cc, the negative control), so the mainline switch
// carries no branch for the mode or the control.  Only those two files include this.
// This header holds the class and its switch path (switch_mm_cid(),
// migration, allocation, exit and exec); the compaction scan's member
// definitions are in lazy_scan.h, included at the end.  The scan's loop is
// resolved at construction too: inlined for the built-in scopes and
// granularities, generic (virtual calls) for strategies registered from
// outside (scan_path.h).  The observers and argument contracts shared with
// the other designs are DesignCommon's (design_common.h).
//
// Thread safety and memory ordering: mm_cid.h.

#ifndef ISOLATION_LIB_MM_CID_DESIGNS_LAZY_DESIGN_H_
#define ISOLATION_LIB_MM_CID_DESIGNS_LAZY_DESIGN_H_

#include <algorithm>
#include <atomic>
#include <bit>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "isolation/core/interleave.h"
#include "isolation/core/membarrier.h"
#include "isolation/core/mutex.h"
#include "isolation/mm_cid/mm_cid.h"
#include "isolation/mm_cid/registry.h"
#include "isolation/mm_cid/strategies.h"
#include "isolation/core/store_buffer.h"
#include "mm_cid/always_check.h"
#include "mm_cid/batch.h"
#include "mm_cid/designs/design_common.h"
#include "mm_cid/internal.h"
#include "mm_cid/mm_registry.h"
#include "mm_cid/per_cpu_slots.h"
#include "mm_cid/scan_path.h"
#include "mm_cid/scope_mask.h"
#include "mm_cid/stat_shards.h"

namespace isolation::mm_cid::internal {
namespace lazy_design {

// The flags, the slot, the task's switch fields, the per-CPU state and the
// cached switch itself are shared with the inline front end (switcher.h).
using lazy_layout::CidIsLazy;
using lazy_layout::CidIsUnset;
using lazy_layout::CidIsValid;
using lazy_layout::Cpu;
using lazy_layout::kLazyPut;
using lazy_layout::kUnset;
using lazy_layout::Slot;

// Bounds on the allocation spins so that a simulator (one thread, where a
// spin can never be resolved by another CPU) reports a failure instead of
// hanging.  The kernel spins without bound.
constexpr int kFirstZeroSpin = 1 << 12;
constexpr int kLockedRetries = 64;

// Slot (struct mm_cid in v6.4-v6.18, 16 bytes as in the kernel) is stored
// per CPU (per_cpu_slots.h) so that the owning CPU's hot path never shares a
// line with another CPU's.

struct Mm {
  // The creator's affinity is copied here, before the mm is published (a
  // constructor needs no lock; the analysis does not check constructors).
  Mm(MmId mm_id, int p, PerCpuRef<Slot> pcpu, const CpuMask& affinity)
      : id(mm_id), slots(pcpu), cidmask(p), allowed_atomic(p), allowed(p) {
    allowed.CopyFrom(affinity);
  }
  const MmId id;
  PerCpuRef<Slot> slots;         // mm->pcpu_cid
  AtomicCpuMask cidmask;         // indexed by ID, not CPU
  AtomicCpuMask allowed_atomic;  // mm_cpus_allowed, readable by scans
  Mutex allowed_lock;            // cpus_allowed_lock
  CpuMask allowed ABSL_GUARDED_BY(allowed_lock);
  std::atomic<int> nr_cpus_allowed{0};
  std::atomic<int> max_nr_cid{0};
  std::atomic<Nanos> next_scan{0};        // mm_cid_next_scan, 0 = not initialised
  std::atomic<int> scan_cursor{0};        // mm_cid_scan_batch ([BATCH])
  std::atomic<int> users{0};              // mm_users
  std::atomic<bool> work_pending{false};  // a non task-work scan is queued
  // Instrumentation (relaxed counters; not on the cached switch path).
  std::atomic<int64_t> allocations{0};
  std::atomic<int64_t> frees{0};
  std::atomic<int64_t> range_violations{0};    // I2
  std::atomic<int64_t> allowed_violations{0};  // I3
};

struct Mm;
// The switch's fields (active, slots, mm_cid, last_mm_cid, resume_pending,
// ran, switched_in_at) are lazy_layout::TaskSwitchState's.  `slots` is
// t->mm->pcpu_cid, set beside `mm` and `mm_ptr` wherever they name an mm
// (Fork, Exec), so that the switch reaches its slot in two dependent loads
// (task, then slot) instead of task -> registry -> mm -> slot.  They are read
// only while `active` (a rolled-back fork leaves them stale) by the task's
// switches, which the harness orders after the Fork/Exec that wrote them.
struct alignas(64) Task : lazy_layout::TaskSwitchState {
  std::atomic<MmId> mm{kNoMm};
  Mm* mm_ptr = nullptr;  // t->mm
  int migrate_from_cpu = -1;
  std::atomic<int> nr_cpus_allowed{
      0};  // the task's own count (v6.4-v6.12); set by SetAffinity from any thread
  std::atomic<bool> work_queued{false};  // cid_work queued as task work
  Nanos last_cid_reset = 0;              // [WQ]: time of the last allocation by mm_cid_get()
  bool exists = false;
};
static_assert(std::has_single_bit(sizeof(Task)), "the switcher indexes tasks by a shift");

// The Dekker fences of the lazy put (docs/mm_cid.md, I4): the scheduler side after
// publishing rq->curr, the reclaimer side after its CAS to LAZY.
struct DekkerFences : lazy_layout::FenceAfterPublish {
  static constexpr BarrierMode kMode = BarrierMode::kFences;
  static constexpr SwitchForm kSwitchForm = SwitchForm::kLazyFence;
  static void AfterLazyCas() { FullFence(); }
};

// The same pairing made asymmetric, as userspace RCU does (core/membarrier.h):
// the switch -- every context switch -- keeps only a compiler barrier, so
// the compiler cannot move the slot loads above the rq->curr store; the
// hardware still may, and the rare reclaimer forbids it after the fact with
// membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED): a full barrier on every CPU
// running a thread of the process (and on the caller before and after, so
// the caller's LAZY CAS is ordered before its load of rq->curr as by its
// old fence).  Either the switch's curr store preceded a CPU's barrier, and
// the reclaimer's later load sees it; or the switch's slot load follows that
// barrier, which itself follows the LAZY CAS, and the switch sees LAZY.
// Under a StoreBufferModel the membarrier drains every thread's buffer and
// delayed CAS (store_buffer::OnProcessWideBarrier), the switch drains
// nothing.  Chosen only where PrivateExpeditedMembarrier().available.
struct AsymmetricBarriers : lazy_layout::CompilerBarrierAfterPublish {
  static constexpr BarrierMode kMode = BarrierMode::kMembarrier;
  static constexpr SwitchForm kSwitchForm = SwitchForm::kLazyCompilerBarrier;
  static void AfterLazyCas() {
    store_buffer::OnProcessWideBarrier();
    MembarrierPrivateExpedited();
  }
};

template <typename Fences>
class LazyMmCid final : public DesignCommon<LazyMmCid<Fences>>,
                        public ScanPathInfo,
                        private AlwaysInvariants {
  using Common = DesignCommon<LazyMmCid>;
  friend Common;
  // The base is dependent: name what this class uses of it and of MmCid.
  using Common::BeginFork;
  using Common::CheckRunningTaskId;
  using Common::ContractMigrate;
  using Common::ContractReturnToUser;
  using Common::ContractSwitch;
  using Common::ContractTick;
  using Common::GetMm;
  using Common::InRange;
  using Common::num_cpus_;
  using Common::NumMms;

 public:
  using typename Common::Limits;

  LazyMmCid(int p, Limits limits, LazyStrategies strategies)
      : Common(p),
        limits_(limits),
        tasks_(new Task[static_cast<size_t>(limits.max_tasks)]),
        cpus_(new Cpu[static_cast<size_t>(p)]),
        slots_(p),
        mms_(limits.max_mms),
        allocator_(std::move(strategies.allocator)),
        scope_(std::move(strategies.scope)),
        granularity_(std::move(strategies.granularity)),
        placement_(std::move(strategies.placement)),
        tick_(std::move(strategies.tick)),
        recent_cid_(allocator_->traits().recent_cid),
        bounded_by_allowed_(allocator_->traits().bounded_by_allowed),
        rate_limited_(placement_->traits().rate_limited),
        scan_path_(ChooseScanPath(scope_.get(), granularity_.get())),
        full_pass_(IsWholePassPath(scan_path_)) {
    this->template PublishSwitchLayout<lazy_layout::TaskSwitchState>(Fences::kSwitchForm);
  }

  const PlacementStrategy* placement() const override { return placement_.get(); }
  BarrierMode barrier_mode() const override { return Fences::kMode; }

  absl::StatusOr<MmId> CreateMm(const CpuMask& affinity, Nanos now) override {
    (void)now;
    ISOLATION_RETURN_IF_ERROR(CheckCreatorAffinity(affinity, num_cpus_));
    return mms_.Create([&](MmId id) {
      // mm_init_cid(): slots UNSET, max_nr_cid 0, union = creator's mask.
      auto mm = std::make_unique<Mm>(id, num_cpus_, slots_.Allocate(), affinity);
      mm->allowed_atomic.Store(affinity);
      mm->nr_cpus_allowed.store(affinity.Weight(), std::memory_order_relaxed);
      return mm;
    });
  }

  absl::Status Fork(TaskId parent, TaskId child, MmId mm_id, const CpuMask& affinity,
                    Nanos now) override {
    ISOLATION_RETURN_IF_ERROR(BeginFork(parent, child, mm_id, affinity));
    Mm* mm = GetMm(mm_id);
    Task& t = tasks_[child];
    t.ran = false;
    t.resume_pending = false;
    t.work_queued.store(false, std::memory_order_relaxed);
    t.switched_in_at = now;
    t.last_cid_reset = 0;
    // dup_task_struct(): no ID, no source CPU, inactive.
    t.mm_cid.store(-1, std::memory_order_relaxed);
    t.last_mm_cid = -1;
    t.migrate_from_cpu = -1;
    t.nr_cpus_allowed.store(affinity.Weight(), std::memory_order_relaxed);
    // init_sched_mm_cid(): still sees the parent's mm.  A single-threaded
    // parent's mm gets its first scan deferred by MM_CID_SCAN_DELAY.
    if (parent != kNoTask && tasks_[parent].exists) {
      Mm* pmm = GetMm(tasks_[parent].mm.load(std::memory_order_relaxed));
      if (pmm != nullptr && pmm->users.load(std::memory_order_relaxed) == 1) {
        pmm->next_scan.store(now + kScanDelayNs, std::memory_order_relaxed);
      }
    }
    // copy_mm() + sched_mm_cid_fork().
    mm->users.fetch_add(1, std::memory_order_relaxed);
    UnionAffinity(*mm, affinity);
    t.mm.store(mm_id, std::memory_order_relaxed);
    t.mm_ptr = mm;
    t.slots = mm->slots;
    t.active.store(true, std::memory_order_relaxed);
    return absl::OkStatus();
  }

  absl::Status SetAffinity(TaskId task, const CpuMask& mask, Nanos now) override {
    (void)now;
    ISOLATION_RETURN_IF_ERROR(
        CheckSetAffinityArgs(tasks_.get(), limits_.max_tasks, task, mask, num_cpus_));
    Task& t = tasks_[task];
    t.nr_cpus_allowed.store(mask.Weight(), std::memory_order_relaxed);
    Mm* mm = GetMm(t.mm.load(std::memory_order_relaxed));
    if (mm != nullptr) UnionAffinity(*mm, mask);
    return absl::OkStatus();
  }

  // switch_mm_cid()
  //
  // The cached path (the incoming task's ID parked in its slot, the outgoing
  // task's slot not marked LAZY, no incremental check attached) is a leaf:
  // it makes no call, so it saves no callee-saved register -- the spills and
  // reloads a call-carrying body pays cost as much as the switch itself.
  // Everything else continues out of line in a tail call (a jump) that takes
  // the values already loaded, so no slot is read twice.
  void ContextSwitch(int cpu, TaskId prev, TaskId next, Nanos now) override {
    ContractSwitch(cpu, prev, next);
    if (__builtin_expect(notes_.Enabled(), 0)) return SwitchJournaled(cpu, prev, next, now);
    SwitchBody(cpu, prev, next, now);
  }

  [[gnu::noinline]] void SwitchJournaled(int cpu, TaskId prev, TaskId next, Nanos now) {
    notes_.Switch(cpu, prev, next);
    SwitchBody(cpu, prev, next, now);
  }
  void JournalSwitch(int cpu, TaskId prev, TaskId next) override { notes_.Switch(cpu, prev, next); }

  // The cached path is lazy_layout::SwitchCached (switcher.h), which the
  // inline front end runs too; its slow paths are the tail calls below.
  [[gnu::always_inline]] void SwitchBody(int cpu, TaskId prev, TaskId next, Nanos now) {
    Cpu& c = cpus_[cpu];
    ++c.context_switches;
    lazy_layout::SwitchCached<Fences>(
        c, [this](TaskId t) -> lazy_layout::TaskSwitchState& { return tasks_[t]; }, cpu, prev, next,
        now, [&](uint32_t cid) { return SwitchPutLazy(cpu, prev, next, now, cid); },
        [&](uint32_t cid) { return SwitchInAllocate(cpu, next, now, cid); });
  }

  // The rest of a switch whose outgoing task's slot was LAZY (`cid`, as
  // loaded): put it, then switch the next task in.
  [[gnu::noinline]] void SwitchPutLazy(int cpu, TaskId prev, TaskId next, Nanos now, uint32_t cid) {
    Task& p = tasks_[prev];
    PutLazySlow(*p.mm_ptr, p.slots[cpu], cid);
    p.mm_cid.store(-1, std::memory_order_relaxed);
    lazy_layout::SwitchInCached(
        [this](TaskId t) -> lazy_layout::TaskSwitchState& { return tasks_[t]; }, cpu, next, now,
        [&](uint32_t c) { return SwitchInAllocate(cpu, next, now, c); });
  }

  // __mm_cid_get() for the incoming task whose slot held no valid ID.
  [[gnu::noinline]] void SwitchInAllocate(int cpu, TaskId next, Nanos now, uint32_t cid) {
    Task& n = tasks_[next];
    lazy_layout::SwitchedIn(n, GetCidSlow(*n.mm_ptr, cpu, n.slots[cpu], cid, n, now), now);
    ISOLATION_INTERLEAVE_POINT("mm_cid.switch.end");
  }

  // sched_mm_cid_migrate_from() + sched_mm_cid_migrate_to()
  void Migrate(TaskId task, int from, int to, Nanos now) override {
    ContractMigrate(task, from, to);
    Task& t = tasks_[task];
    notes_.Migrate(task, from, to);  // the steal writes both slots
    t.migrate_from_cpu = from;       // sched_mm_cid_migrate_from()
    Mm* mmp = GetMm(t.mm.load(std::memory_order_relaxed));
    if (mmp == nullptr || !t.active.load(std::memory_order_relaxed)) return;
    Mm& mm = *mmp;
    const int src = t.migrate_from_cpu;
    if (src < 0) {
      t.last_mm_cid = -1;
      return;
    }
    Slot& dst = mm.slots[to];
    bool dst_set = !CidIsUnset(dst.cid.load(std::memory_order_relaxed));
    // v6.13+ ([LOC]): the destination's recent_cid counts, and the users are
    // compared with the mm's CPU union instead of the task's own affinity.
    if (recent_cid_)
      dst_set = dst_set || !CidIsUnset(dst.recent_cid.load(std::memory_order_relaxed));
    const int allowed = recent_cid_ ? mm.nr_cpus_allowed.load(std::memory_order_relaxed)
                                    : t.nr_cpus_allowed.load(std::memory_order_relaxed);
    // Enough users to populate every allowed CPU: keep the destination's ID.
    if (dst_set && mm.users.load(std::memory_order_relaxed) >= allowed) return;
    Slot& src_slot = mm.slots[src];
    // __sched_mm_cid_migrate_from_fetch_cid()
    uint32_t src_cid = store_buffer::Load(src_slot.cid, std::memory_order_relaxed);
    if (t.last_mm_cid < 0 || !CidIsValid(src_cid) ||
        static_cast<uint32_t>(t.last_mm_cid) != src_cid)
      return;
    if (ActiveUserCurrentOn(src, mm_id(t))) {
      t.last_mm_cid = -1;
      return;
    }
    // __sched_mm_cid_migrate_from_try_steal_cid(): announce with LAZY, fence,
    // verify the source CPU still does not run a user of this mm, commit.
    uint32_t expected = src_cid;
    // Delayed: under a StoreBufferModel the LAZY value may reach the source
    // CPU only at our next fence (the store half of the RMW).
    if (!store_buffer::CompareExchangeDelayed(src_slot.cid, expected, src_cid | kLazyPut,
                                              std::memory_order_relaxed)) {
      return;
    }
    ISOLATION_INTERLEAVE_POINT("mm_cid.migrate_steal.after_lazy_cas");
    Fences::AfterLazyCas();  // reclaimer half of the Dekker pairing
    if (ActiveUserCurrentOn(src, mm_id(t))) {
      t.last_mm_cid = -1;  // that task completes the lazy put
      return;
    }
    ISOLATION_INTERLEAVE_POINT("mm_cid.migrate_steal.before_commit");
    expected = src_cid | kLazyPut;
    if (!store_buffer::CompareExchange(src_slot.cid, expected, kUnset, std::memory_order_relaxed))
      return;
    if (recent_cid_) src_slot.recent_cid.store(kUnset, std::memory_order_relaxed);
    if (dst_set) {
      FreeCid(mm, src_cid);  // compaction: the destination already has one
      return;
    }
    dst.time.store(now, std::memory_order_relaxed);
    // dst was UNSET, so no delayed LAZY view of it can be pending (those
    // exist only for valid slots): a plain store is sound under the model.
    dst.cid.store(src_cid, std::memory_order_relaxed);
    if (recent_cid_) dst.recent_cid.store(src_cid, std::memory_order_relaxed);
  }

  // task_tick_mm_cid(): the placement's half (queue task work, or ask the
  // adapter for a scan), then the tick policy ([WQ] kick).
  ScanRequest Tick(int cpu, TaskId curr, Nanos now) override {
    ContractTick(cpu, curr);
    if (curr == kNoTask) return {};
    Task& t = tasks_[curr];
    if (!t.active.load(std::memory_order_relaxed)) return {};
    const MmId mm_id = t.mm.load(std::memory_order_relaxed);
    Mm* mm = GetMm(mm_id);
    if (mm == nullptr) return {};
    const ScanTrigger trigger = Trigger(t, mm_id, mm, now, /*switched_in=*/false);
    // A tick never scans in place (interrupt context): kRunHere is ignored.
    const bool request = placement_->OnTick(trigger) == ScanAction::kRequest;
    TickKick(cpu, t, *mm, trigger, now);
    return request ? ScanRequest{mm_id} : ScanRequest{};
  }

  // Return to user of `task`: the placement decides whether the scan runs
  // here (task work, rseq resume) or is handed to the adapter.
  ScanRequest ReturnToUser(int cpu, TaskId task, Nanos now, ScanResult* result) override {
    ContractReturnToUser(cpu, task);
    if (task == kNoTask) return {};
    Task& t = tasks_[task];
    const bool switched_in = t.resume_pending;
    t.resume_pending = false;
    const MmId mm_id = t.mm.load(std::memory_order_relaxed);
    Mm* mm = GetMm(mm_id);
    const ScanTrigger trigger = Trigger(t, mm_id, mm, now, switched_in);
    switch (placement_->OnReturnToUser(trigger)) {
      case ScanAction::kNone:
        return {};
      case ScanAction::kRunHere: {
        if (!trigger.active) return {};
        const ScanResult r = Scan(mm_id, now);
        if (result != nullptr) *result = r;
        return {};
      }
      case ScanAction::kRequest:
        return trigger.active ? ScanRequest{mm_id} : ScanRequest{};
    }
    return {};
  }

  void ScanRequestDone(MmId mm_id) override {
    if (Mm* mm = GetMm(mm_id)) mm->work_pending.store(false, std::memory_order_relaxed);
  }

  // sched_mm_cid_exit_signals()
  absl::Status Exit(int cpu, TaskId task, Nanos now) override {
    (void)now;
    ISOLATION_RETURN_IF_ERROR(
        CheckTaskOnCpu("Exit", tasks_.get(), limits_.max_tasks, task, cpu, num_cpus_));
    Task& t = tasks_[task];
    Mm* mm = GetMm(t.mm.load(std::memory_order_relaxed));
    if (mm == nullptr) return absl::OkStatus();
    notes_.Cpu(cpu);
    notes_.Task(task);
    if (t.active.load(std::memory_order_relaxed)) {
      // Exit side of the Dekker pairing: clear active, fence, then the slot.
      t.active.store(false, std::memory_order_relaxed);
      FullFence();
      Put(*mm, mm->slots[cpu]);
      t.mm_cid.store(-1, std::memory_order_relaxed);
      t.last_mm_cid = -1;
      mm->users.fetch_sub(1, std::memory_order_relaxed);  // exit_mm() -> mmput()
    }
    return absl::OkStatus();
  }

  // sched_mm_cid_before_execve(), bprm_mm_init(), sched_mm_cid_after_execve()
  absl::StatusOr<MmId> Exec(int cpu, TaskId task, const CpuMask& affinity, Nanos now) override {
    ISOLATION_ASSIGN_OR_RETURN(const MmId new_id, this->BeginExec(cpu, task, affinity, now));
    Task& t = tasks_[task];
    notes_.Cpu(cpu);
    notes_.Task(task);
    Mm& mm = *GetMm(new_id);
    mm.users.fetch_add(1, std::memory_order_relaxed);
    t.mm.store(new_id, std::memory_order_relaxed);
    t.mm_ptr = &mm;
    t.slots = mm.slots;
    t.nr_cpus_allowed.store(affinity.Weight(), std::memory_order_relaxed);
    t.active.store(true, std::memory_order_relaxed);
    FullFence();  // active before the slot
    t.ran = true;
    t.switched_in_at = now;
    const int32_t cid = GetCid(mm, cpu, t, now);
    t.mm_cid.store(cid, std::memory_order_relaxed);
    t.last_mm_cid = cid;
    return new_id;
  }

  // copy_process() error path after copy_mm(): bad_fork_cleanup_mm ->
  // mmput() drops the user; the child never ran, so it holds no slot or ID.
  // (init_sched_mm_cid()'s deferral of the parent mm's first scan stays, as
  // in the kernel.)
  absl::Status ForkFailed(TaskId child, Nanos now) override {
    (void)now;
    return this->RollBackUnrunFork(child);
  }
  // ForkVm: DesignCommon's plain fork (this design walks no tasks).

  bool SlotLazy(MmId mm_id, int cpu) const override {
    const Mm* mm = GetMm(mm_id);
    if (mm == nullptr || cpu < 0 || cpu >= num_cpus_) return false;
    return CidIsLazy(mm->slots[cpu].cid.load(std::memory_order_relaxed));
  }

  // task_mm_cid_work() and the scope's size, lazy_scan.h.
  ScanResult Scan(MmId mm_id, Nanos now) override;
  int ScanScopeSize(MmId mm_id) const override;
  ScanPath scan_path() const override { return scan_path_; }

  int32_t TaskCid(TaskId task) const override {
    if (task < 0 || task >= limits_.max_tasks) return -1;
    return tasks_[task].mm_cid.load(std::memory_order_relaxed);
  }
  // The other observers and CheckAlways() are DesignCommon's; its per-mm
  // reads, lock-free here (the mm's counters and masks are atomic):
  static int UsersOf(const Mm& m) { return m.users.load(std::memory_order_relaxed); }
  static int AllowedWeightOf(const Mm& m) {
    return m.nr_cpus_allowed.load(std::memory_order_relaxed);
  }
  static CpuMask AllowedOf(const Mm& m) { return m.allowed_atomic.Snapshot(); }
  static const AtomicCpuMask& CidBitsOf(const Mm& m) { return m.cidmask; }

  std::vector<std::string> CheckQuiescent() const override {
    std::vector<std::string> v;
    for (int m = 0; m < NumMms(); ++m) {
      const Mm& mm = *GetMm(m);
      CpuMask held(num_cpus_);
      for (int c = 0; c < num_cpus_; ++c) {
        const uint32_t s = mm.slots[c].cid.load(std::memory_order_relaxed);
        if (CidIsUnset(s)) continue;
        const int k = static_cast<int>(s & ~kLazyPut);
        if (k >= num_cpus_) {
          v.push_back(absl::StrCat("I5: mm ", m, " slot ", c, " holds ID ", k, " >= P"));
          continue;
        }
        if (held.TestAndSet(k))
          v.push_back(absl::StrCat("I5: mm ", m, " ID ", k, " held by two slots"));
      }
      const CpuMask bits = mm.cidmask.Snapshot();
      if (!(bits == held)) {
        v.push_back(absl::StrCat("I5: mm ", m, " bitmap {", bits.ToString(), "} != slot IDs {",
                                 held.ToString(), "}"));
      }
      const int64_t live =
          mm.allocations.load(std::memory_order_relaxed) - mm.frees.load(std::memory_order_relaxed);
      if (live != bits.Weight()) {
        v.push_back(absl::StrCat("I6: mm ", m, " allocations-frees=", live, " != popcount ",
                                 bits.Weight()));
      }
    }
    return v;
  }

  MmCidStats Stats() const override {
    MmCidStats s;
    for (int m = 0; m < NumMms(); ++m) {
      const Mm& mm = *GetMm(m);
      s.allocations += mm.allocations.load(std::memory_order_relaxed);
      s.frees += mm.frees.load(std::memory_order_relaxed);
    }
    s.bitmap_ops = stats_.Sum(kStatBitmapOps);
    for (int c = 0; c < num_cpus_; ++c) s.context_switches += cpus_[c].context_switches;
    s.scans = stats_.Sum(kStatScans);
    s.slot_visits = stats_.Sum(kStatSlotVisits);
    s.lock_fallbacks = lock_fallbacks_.load(std::memory_order_relaxed);
    s.alloc_failures = alloc_failures_.load(std::memory_order_relaxed);
    s.max_alloc_attempts = max_alloc_attempts_.load(std::memory_order_relaxed);
    s.tick_kick_retakes = tick_kick_retakes_.load(std::memory_order_relaxed);
    return s;
  }

 private:
  // What the placement sees of `t` at a tick or a return to user.
  static ScanTrigger Trigger(Task& t, MmId mm_id, Mm* mm, Nanos now, bool switched_in) {
    ScanTrigger trigger;
    trigger.mm = mm_id;
    trigger.active = mm != nullptr && t.active.load(std::memory_order_relaxed);
    trigger.now = now;
    trigger.next_scan = mm != nullptr ? mm->next_scan.load(std::memory_order_relaxed) : 0;
    trigger.switched_in = switched_in;
    trigger.task_work_queued = &t.work_queued;
    trigger.mm_work_pending = mm != nullptr ? &mm->work_pending : nullptr;
    return trigger;
  }

  // The tick policy's half of task_tick_mm_cid(): the [WQ] kick (v13 2/3;
  // tick_kick.cc decides when).  A task that has run more than
  // RSEQ_UNPREEMPTED_THRESHOLD since its switch-in never reaches the
  // switch-time paths that resolve a LAZY slot or pick up a compacted ID.
  // (A) Force its return-to-user path (rseq_set_notify_resume), where the
  // placement queues or runs the scan.  (B) Re-take its ID in place --
  // exactly the switch-out/in pair on the local slot (mm_cid_snapshot_time,
  // mm_cid_put_lazy, mm_cid_get), so a slot a scan marked LAZY is freed and a
  // lower ID allocated.  Runs in the CPU's context like ContextSwitch;
  // `curr` is already published, so a racing reclaimer sees an active user
  // and backs off (same Dekker pairing).
  void TickKick(int cpu, Task& t, Mm& mm, const ScanTrigger& trigger, Nanos now) {
    TickView view;
    view.now = now;
    view.ran_for = now - t.switched_in_at;
    view.last_cid_reset = t.last_cid_reset;
    view.scan_due = placement_->ScanDue(trigger);
    view.scan_pending = placement_->ScanPending(trigger);
    switch (tick_->OnTick(view)) {
      case TickAction::kNone:
        return;
      case TickAction::kForceReturnToUser:
        t.resume_pending = true;  // (A)
        return;
      case TickAction::kRetakeId:
        break;
    }
    // (B)
    notes_.Cpu(cpu);
    notes_.Task(static_cast<TaskId>(&t - tasks_.get()));
    Slot& s = mm.slots[cpu];
    s.time.store(now, std::memory_order_relaxed);
    PutLazy(mm, s);
    const int32_t cid = GetCid(mm, cpu, t, now);
    t.mm_cid.store(cid, std::memory_order_relaxed);
    t.last_mm_cid = cid;
    tick_kick_retakes_.fetch_add(1, std::memory_order_relaxed);
  }

  // The compaction scan (lazy_scan.h): the loop for the scope and
  // granularity types given, out of line so that Scan's not-due return pays
  // no part of its frame; the inlined paths; what the scope sees of an mm;
  // sched_mm_cid_remote_clear(), sched_mm_cid_remote_clear_old(); the
  // rate limit.
  template <typename Scope, typename Granularity>
  [[gnu::noinline]] ScanResult ScanLoop(Mm& mm, MmId mm_id, Nanos now, const Scope& scope,
                                        const Granularity& granularity);
  template <typename Granularity>
  static constexpr bool UsesScopeSize();
  template <typename Scope, typename Visit>
  static void WalkScope(const Scope& scope, const ScanSet& set, int start, int count,
                        Visit&& visit);
  template <typename T>
  const T& Builtin() const;
  template <size_t... kPath>
  ScanResult ScanInlined(Mm& mm, MmId mm_id, Nanos now, std::index_sequence<kPath...>);
  ScanSet View(const Mm& mm) const;
  int RemoteClear(Mm& mm, MmId mm_id, int cpu);
  int ClearOld(Mm& mm, MmId mm_id, int cpu, Nanos rq_clock);
  bool PassRateLimit(Mm& mm, Nanos now);

  // CheckAlways(), per part (always_check.h).  Per CPU: I14 (a running
  // active task has an ID), I2 (< P), I1 via `unique`, I4 (its bit is
  // reserved and its CPU's slot holds it).  Per mm: I2/I3 counted at
  // allocation, I6 (no more frees than allocations).
  CpuCheck CheckCpu(int c, Findings& before, Findings& after) const override {
    CpuCheck r;
    const int32_t k = CheckRunningTaskId(c, before, r);
    if (k < 0) return r;
    const TaskId t = r.task;
    const Mm& mm = *GetMm(r.mm);
    if (!mm.cidmask.Test(k)) {
      after.Add([&] {
        return absl::StrCat("I4: running task ", t, " on CPU ", c, " holds ID ", k,
                            " whose bit is free");
      });
    }
    const uint32_t slot = mm.slots[c].cid.load(std::memory_order_relaxed);
    if (CidIsUnset(slot) || (slot & ~kLazyPut) != static_cast<uint32_t>(k)) {
      after.Add([&] {
        return absl::StrCat("I4: running task ", t, " on CPU ", c, " holds ID ", k,
                            " but slot has ",
                            slot == kUnset ? std::string("UNSET") : absl::StrCat(slot & ~kLazyPut));
      });
    }
    return r;
  }
  int MmBound() const override { return NumMms(); }
  void CheckMm(MmId m, Findings& f) const override {
    const Mm& mm = *GetMm(m);
    if (int64_t n = mm.range_violations.load(std::memory_order_relaxed)) {
      f.Add([&] { return absl::StrCat("I2: mm ", m, " handed out ", n, " IDs >= P"); });
    }
    if (int64_t n = mm.allowed_violations.load(std::memory_order_relaxed)) {
      f.Add(
          [&] { return absl::StrCat("I3: mm ", m, " handed out ", n, " IDs >= nr_cpus_allowed"); });
    }
    if (mm.frees.load(std::memory_order_relaxed) > mm.allocations.load(std::memory_order_relaxed)) {
      f.Add([&] { return absl::StrCat("I6: mm ", m, " freed more IDs than it allocated"); });
    }
  }

  static MmId mm_id(const Task& t) { return t.mm.load(std::memory_order_relaxed); }

  // mm_set_cpus_allowed(): grow-only union; the atomic copy is extended
  // before the weight so a scan that sees the new weight sees the CPUs.
  void UnionAffinity(Mm& mm, const CpuMask& mask) {
    MutexLock l(mm.allowed_lock);
    mm.allowed.Or(mask);
    for (int c : mask) mm.allowed_atomic.Set(c);
    mm.nr_cpus_allowed.store(mm.allowed.Weight(), std::memory_order_release);
  }

  // Reads rq->curr of `cpu` and whether it is an active user of `mm`.  The
  // caller has issued the full fence of its half of the Dekker pairing.
  bool ActiveUserCurrentOn(int cpu, MmId mm) const {
    const TaskId t = store_buffer::Load(cpus_[cpu].curr, std::memory_order_relaxed);
    if (t == kNoTask) return false;
    return tasks_[t].active.load(std::memory_order_relaxed) &&
           tasks_[t].mm.load(std::memory_order_relaxed) == mm;
  }

  void FreeCid(Mm& mm, uint32_t cid) {  // __mm_cid_put()
    // release: the slot updates that made the ID unused happen before a new
    // owner's fetch_or (acq_rel) observes the bit clear.
    mm.cidmask.Clear(static_cast<int>(cid), std::memory_order_release);
    mm.frees.fetch_add(1, std::memory_order_relaxed);
    notes_.Id(mm.id, static_cast<int>(cid));
    stats_.Add(kStatBitmapOps, 1);
  }
  bool TryReserve(Mm& mm, int cid) {  // cpumask_test_and_set_cpu()
    stats_.Add(kStatBitmapOps, 1);
    // acq_rel: pairs with FreeCid's release; the kernel's op is fully ordered.
    if (mm.cidmask.TestAndSet(cid, std::memory_order_acq_rel)) return false;
    mm.allocations.fetch_add(1, std::memory_order_relaxed);
    notes_.Id(mm.id, cid);
    return true;
  }

  // mm_cid_put_lazy()
  void PutLazy(Mm& mm, Slot& s) {
    const uint32_t cid = store_buffer::Load(s.cid, std::memory_order_relaxed);
    if (CidIsLazy(cid)) PutLazySlow(mm, s, cid);
  }
  // Its CAS, for a slot seen LAZY (`cid`): out of the switch's line.
  [[gnu::noinline]] void PutLazySlow(Mm& mm, Slot& s, uint32_t cid) {
    if (store_buffer::CompareExchange(s.cid, cid, kUnset, std::memory_order_relaxed))
      FreeCid(mm, cid & ~kLazyPut);
  }
  // mm_cid_put()
  void Put(Mm& mm, Slot& s) {
    uint32_t cid = s.cid.load(std::memory_order_relaxed);
    while (!store_buffer::CompareExchange(s.cid, cid, kUnset, std::memory_order_relaxed)) {
    }
    if (!CidIsUnset(cid)) FreeCid(mm, cid & ~kLazyPut);
  }

  // What the allocator strategy sees of `mm` on `cpu` (strategies.h).
  class Space final : public CidSpace {
   public:
    Space(LazyMmCid& design, Mm& mm, int cpu, int64_t& attempts)
        : design_(design), mm_(mm), slot_(mm.slots[cpu]), attempts_(attempts) {}
    int num_cpus() const override { return design_.num_cpus_; }
    int users() const override { return mm_.users.load(std::memory_order_relaxed); }
    // acquire: pairs with UnionAffinity's release, so the CPUs of the new
    // weight are in the union we may bound by.
    int nr_cpus_allowed() const override {
      return mm_.nr_cpus_allowed.load(std::memory_order_acquire);
    }
    std::atomic<int>& max_nr_cid() override { return mm_.max_nr_cid; }
    int recent_cid() const override {
      const uint32_t recent = slot_.recent_cid.load(std::memory_order_relaxed);
      return CidIsUnset(recent) ? -1 : static_cast<int>(recent);
    }
    // Spins only while another CPU transiently owns a bit outside any slot.
    int FirstZeroBelow(int bound) override {
      for (int spin = 0;; ++spin) {
        const int cid = mm_.cidmask.FirstZero();
        if (cid < bound) return cid;
        if (spin >= kFirstZeroSpin) return -1;
        std::this_thread::yield();
      }
    }
    bool TryReserve(int cid) override {
      ++attempts_;
      return design_.TryReserve(mm_, cid);
    }

   private:
    LazyMmCid& design_;
    Mm& mm_;
    Slot& slot_;
    int64_t& attempts_;
  };

  // __mm_cid_try_get() by the allocator strategy: an ID whose bit it set, or
  // -1 on a lost race.
  int TryGetCid(Mm& mm, int cpu, int64_t& attempts) {
    Space space(*this, mm, cpu, attempts);
    return allocator_->TryGet(space);
  }

  // __mm_cid_get(): lock-free first, then the global cid_lock fallback.
  int32_t AllocateCid(Mm& mm, int cpu) {
    int64_t attempts = 0;
    int cid = -1;
    // relaxed: the flag only steers new allocators to the lock (progress);
    // correctness comes from the bitmap's atomic test-and-set.
    if (!use_cid_lock_.load(std::memory_order_relaxed)) cid = TryGetCid(mm, cpu, attempts);
    if (cid < 0) {
      lock_fallbacks_.fetch_add(1, std::memory_order_relaxed);
      MutexLock l(cid_lock_);
      cid = TryGetCid(mm, cpu, attempts);
      if (cid < 0) {
        use_cid_lock_.store(true, std::memory_order_relaxed);
        for (int i = 0; i < kLockedRetries && cid < 0; ++i) cid = TryGetCid(mm, cpu, attempts);
        use_cid_lock_.store(false, std::memory_order_relaxed);
      }
    }
    int64_t prev = max_alloc_attempts_.load(std::memory_order_relaxed);
    while (attempts > prev &&
           !max_alloc_attempts_.compare_exchange_weak(prev, attempts, std::memory_order_relaxed)) {
    }
    if (cid < 0) {
      alloc_failures_.fetch_add(1, std::memory_order_relaxed);
      return -1;
    }
    if (cid >= num_cpus_) {
      mm.range_violations.fetch_add(1, std::memory_order_relaxed);
      notes_.Mm(mm.id);
    }
    if (bounded_by_allowed_ && cid >= mm.nr_cpus_allowed.load(std::memory_order_relaxed)) {
      mm.allowed_violations.fetch_add(1, std::memory_order_relaxed);
      notes_.Mm(mm.id);
    }
    return cid;
  }

  // mm_cid_get(): the parked ID inline (a load, a test, the time stamp), the
  // rest out of line (__mm_cid_get()).
  int32_t GetCid(Mm& mm, int cpu, Task& t, Nanos now) { return GetCid(mm.slots[cpu], cpu, t, now); }
  // `s` is t's mm's slot of `cpu`; t is active.
  [[gnu::always_inline]] int32_t GetCid(Slot& s, int cpu, Task& t, Nanos now) {
    const uint32_t cid = store_buffer::Load(s.cid, std::memory_order_relaxed);
    if (__builtin_expect(CidIsValid(cid), 1)) {  // parked ID: no atomic RMW
      s.time.store(now, std::memory_order_relaxed);
      return static_cast<int32_t>(cid);
    }
    return GetCidSlow(*t.mm_ptr, cpu, s, cid, t, now);
  }
  [[gnu::noinline]] int32_t GetCidSlow(Mm& mm, int cpu, Slot& s, uint32_t cid, Task& t, Nanos now) {
    if (CidIsLazy(cid)) {
      ISOLATION_INTERLEAVE_POINT("mm_cid.get.before_lazy_cas");
      if (store_buffer::CompareExchange(s.cid, cid, kUnset, std::memory_order_relaxed))
        FreeCid(mm, cid & ~kLazyPut);
    }
    const int32_t n = AllocateCid(mm, cpu);
    s.time.store(now, std::memory_order_relaxed);
    t.last_cid_reset = now;  // [WQ]: stamped on the allocation path only
    if (n < 0) return -1;
    // The slot is UNSET here and only its owner (us, under the rq lock) moves
    // it out of UNSET, so a plain store suffices.  (store_buffer.h
    // discipline: no other CPU's delayed LAZY view of this slot can be
    // pending -- delayed views only exist for valid slots and our CAS or
    // UNSET load above ended or excluded them -- so a plain store is sound
    // under the model too.)
    s.cid.store(static_cast<uint32_t>(n), std::memory_order_relaxed);
    if (recent_cid_) s.recent_cid.store(static_cast<uint32_t>(n), std::memory_order_relaxed);
    return n;
  }

  Limits limits_;
  std::unique_ptr<Task[]> tasks_;
  std::unique_ptr<Cpu[]> cpus_;
  // Guarded by the registry's lock (Allocate() runs in CreateMm's callback,
  // under mms_'s private lock): not annotated, the analysis cannot see a
  // lock that another object takes around a callback.
  PerCpuSlots<Slot> slots_;
  MmRegistry<Mm> mms_;
  ChangeNotes notes_;  // CheckAlwaysIncremental()'s journal
  Mutex cid_lock_;     // global forward-progress lock
  std::atomic<bool> use_cid_lock_{false};
  std::atomic<int64_t> lock_fallbacks_{0};
  std::atomic<int64_t> alloc_failures_{0};
  std::atomic<int64_t> max_alloc_attempts_{0};
  std::atomic<int64_t> tick_kick_retakes_{0};
  // The variant's strategies (strategies.h), chosen at construction, and
  // the traits the entry points consult.
  const std::unique_ptr<AllocatorStrategy> allocator_;
  const std::unique_ptr<ScopeStrategy> scope_;
  const std::unique_ptr<GranularityStrategy> granularity_;
  const std::unique_ptr<PlacementStrategy> placement_;
  const std::unique_ptr<TickPolicy> tick_;
  const bool recent_cid_;          // AllocatorTraits::recent_cid
  const bool bounded_by_allowed_;  // AllocatorTraits::bounded_by_allowed (I3 counted)
  const bool rate_limited_;        // PlacementTraits::rate_limited
  const ScanPath scan_path_;       // Scan()'s loop (scan_path.h)
  const bool full_pass_;           // scan_path_ is a batch_full path: every call starts a pass
  // bitmap_ops, scans, slot_visits: bumped on the scan (and allocation)
  // path by whichever thread runs it, summed by Stats() (stat_shards.h).
  // Last: 4 KiB of shards that would separate the fields above.
  enum StatCounter { kStatBitmapOps, kStatScans, kStatSlotVisits, kNumStatCounters };
  StatShards<kNumStatCounters> stats_;
};

}  // namespace lazy_design

// The lazy design with fence policy `Fences` and the strategies `config`
// names (registry.h).
template <typename Fences>
absl::StatusOr<std::unique_ptr<MmCid>> MakeLazyDesign(int num_cpus, const LazyConfig& config,
                                                      const MmCid::Limits& limits) {
  absl::StatusOr<LazyStrategies> strategies = MakeLazyStrategies(config);
  if (!strategies.ok()) return strategies.status();
  return std::unique_ptr<MmCid>(
      new lazy_design::LazyMmCid<Fences>(num_cpus, limits, std::move(*strategies)));
}

// The mainline lazy design: AsymmetricBarriers where membarrier is available
// and not Limits::force_fences, DekkerFences otherwise (a construction-time
// choice, reported by barrier_mode(); each switch path is branch-free).
inline absl::StatusOr<std::unique_ptr<MmCid>> MakeMainlineLazyDesign(int num_cpus,
                                                                     const LazyConfig& config,
                                                                     const MmCid::Limits& limits) {
  if (!limits.force_fences && PrivateExpeditedMembarrier().available) {
    return MakeLazyDesign<lazy_design::AsymmetricBarriers>(num_cpus, config, limits);
  }
  return MakeLazyDesign<lazy_design::DekkerFences>(num_cpus, config, limits);
}

}  // namespace isolation::mm_cid::internal

// The scan path's member definitions.
#include "mm_cid/designs/lazy_scan.h"  // IWYU pragma: export

#endif  // ISOLATION_LIB_MM_CID_DESIGNS_LAZY_DESIGN_H_
