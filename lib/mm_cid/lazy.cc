// SPDX-License-Identifier: GPL-2.0-or-later
// The `lazy` design (v6.4-v6.18): per-(mm, CPU) slots with the lazy-put flag,
// the cid bitmap, the global cid_lock fallback, migration, and the periodic
// compaction scan with its scope/batch/placement variants.  Spec §3.1-3.3.

#include <algorithm>
#include <atomic>
#include <bit>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "isolation/core/interleave.h"
#include "isolation/mm_cid/mm_cid.h"
#include "isolation/core/store_buffer.h"
#include "mm_cid/always_check.h"
#include "mm_cid/internal.h"
#include "mm_cid/mm_registry.h"
#include "mm_cid/per_cpu_slots.h"

namespace isolation::mm_cid::internal {
namespace {

// MM_CID_UNSET / MM_CID_LAZY_PUT (kernel/sched/sched.h).
constexpr uint32_t kUnset = 0xFFFFFFFFu;
constexpr uint32_t kLazyPut = 1u << 31;

constexpr bool CidIsUnset(uint32_t c) { return c == kUnset; }
constexpr bool CidIsValid(uint32_t c) { return (c & kLazyPut) == 0; }
constexpr bool CidIsLazy(uint32_t c) { return c != kUnset && (c & kLazyPut) != 0; }

// Bounds on the allocation spins so that a simulator (one thread, where a
// spin can never be resolved by another CPU) reports a failure instead of
// hanging.  The kernel spins without bound.
constexpr int kFirstZeroSpin = 1 << 12;
constexpr int kLockedRetries = 64;

// Per-(mm, CPU) slot (struct mm_cid in v6.4-v6.18), 16 bytes as in the
// kernel; stored per CPU (per_cpu_slots.h) so that the owning CPU's hot path
// never shares a line with another CPU's.
struct Slot {
  std::atomic<uint32_t> cid{kUnset};
  std::atomic<uint32_t> recent_cid{kUnset};  // v6.13+ allocation hint
  std::atomic<Nanos> time{0};                // rq clock at last use
};

struct Mm {
  Mm(MmId mm_id, int p, PerCpuRef<Slot> pcpu)
      : id(mm_id), slots(pcpu), cidmask(p), allowed_atomic(p), allowed(p) {}
  const MmId id;
  PerCpuRef<Slot> slots;           // mm->pcpu_cid
  AtomicCpuMask cidmask;           // indexed by ID, not CPU
  AtomicCpuMask allowed_atomic;    // mm_cpus_allowed, readable by scans
  std::mutex allowed_lock;         // cpus_allowed_lock
  CpuMask allowed;                 // guarded by allowed_lock
  std::atomic<int> nr_cpus_allowed{0};
  std::atomic<int> max_nr_cid{0};
  std::atomic<Nanos> next_scan{0};   // mm_cid_next_scan, 0 = not initialised
  std::atomic<int> scan_cursor{0};   // mm_cid_scan_batch ([BATCH])
  std::atomic<int> users{0};         // mm_users
  std::atomic<bool> work_pending{false};  // a non task-work scan is queued
  // Instrumentation (relaxed counters; not on the cached switch path).
  std::atomic<int64_t> allocations{0};
  std::atomic<int64_t> frees{0};
  std::atomic<int64_t> range_violations{0};    // I2
  std::atomic<int64_t> allowed_violations{0};  // I3
};

struct alignas(64) Task {
  std::atomic<MmId> mm{kNoMm};
  std::atomic<bool> active{false};     // mm_cid_active
  std::atomic<int32_t> mm_cid{-1};     // read by observers
  int32_t last_mm_cid = -1;
  int migrate_from_cpu = -1;
  std::atomic<int> nr_cpus_allowed{0};  // the task's own count (v6.4-v6.12); set by SetAffinity from any thread
  std::atomic<bool> work_queued{false};  // cid_work queued as task work
  // TIF_NOTIFY_RESUME for rseq: set at switch-in (and by the [WQ] tick
  // kick), consumed by the next return to user (work_resume scans there).
  bool resume_pending = false;
  bool ran = false;            // switched in at least once (ForkFailed precondition)
  Nanos switched_in_at = 0;    // se.prev_sum_exec_runtime stand-in: runtime since switch-in
  Nanos last_cid_reset = 0;    // [WQ]: time of the last allocation by mm_cid_get()
  bool exists = false;
};

// Per-CPU scheduler state the mechanism needs: rq->curr.
struct alignas(64) Cpu {
  std::atomic<TaskId> curr{kNoTask};
  int64_t context_switches = 0;  // written only in this CPU's context
};

class LazyMmCid final : public MmCid, private AlwaysInvariants {
 public:
  LazyMmCid(int p, const MmCidConfig& config, Limits limits)
      : MmCid(p, config),
        limits_(limits),
        tasks_(new Task[static_cast<size_t>(limits.max_tasks)]),
        cpus_(new Cpu[static_cast<size_t>(p)]),
        slots_(p),
        mms_(limits.max_mms) {}

  absl::StatusOr<MmId> CreateMm(const CpuMask& affinity, Nanos now) override {
    (void)now;
    ISOLATION_RETURN_IF_ERROR(CheckCreatorAffinity(affinity, num_cpus_));
    return mms_.Create([&](MmId id) {
      // mm_init_cid(): slots UNSET, max_nr_cid 0, union = creator's mask.
      auto mm = std::make_unique<Mm>(id, num_cpus_, slots_.Allocate());
      mm->allowed.CopyFrom(affinity);
      mm->allowed_atomic.Store(affinity);
      mm->nr_cpus_allowed.store(affinity.Weight(), std::memory_order_relaxed);
      return mm;
    });
  }

  absl::Status Fork(TaskId parent, TaskId child, MmId mm_id, const CpuMask& affinity, Nanos now) override {
    Mm* mm = GetMm(mm_id);
    const bool child_exists = child >= 0 && child < limits_.max_tasks && tasks_[child].exists;
    ISOLATION_RETURN_IF_ERROR(CheckForkArgs(parent, child, child_exists, limits_.max_tasks, mm_id, mm != nullptr,
                                            affinity, num_cpus_));
    Task& t = tasks_[child];
    notes_.Task(child);
    t.exists = true;
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
    t.active.store(true, std::memory_order_relaxed);
    return absl::OkStatus();
  }

  absl::Status SetAffinity(TaskId task, const CpuMask& mask, Nanos now) override {
    (void)now;
    ISOLATION_RETURN_IF_ERROR(CheckSetAffinityArgs(tasks_.get(), limits_.max_tasks, task, mask, num_cpus_));
    Task& t = tasks_[task];
    t.nr_cpus_allowed.store(mask.Weight(), std::memory_order_relaxed);
    Mm* mm = GetMm(t.mm.load(std::memory_order_relaxed));
    if (mm != nullptr) UnionAffinity(*mm, mask);
    return absl::OkStatus();
  }

  // switch_mm_cid()
  void ContextSwitch(int cpu, TaskId prev, TaskId next, Nanos now) override {
    ContractCpu("ContextSwitch", cpu, num_cpus_);
    ContractTask("ContextSwitch", limits_.max_tasks, prev, /*none_ok=*/true);
    ContractTask("ContextSwitch", limits_.max_tasks, next, /*none_ok=*/true);
    Cpu& c = cpus_[cpu];
    ++c.context_switches;
    notes_.Switch(cpu, prev, next);
    // Publish rq->curr, then a full fence before touching any slot
    // (smp_mb__after_switch_mm()): the scheduler half of the Dekker pairing
    // with RemoteClear()/Migrate()'s steal, which CAS the slot, fence, and
    // then load `curr`.  Neither a relaxed store nor a seq_cst CAS followed by
    // a plain load orders store->load; only the fence does.  The store and
    // the slot loads go through store_buffer.h so that a StoreBufferModel
    // can show what happens without the fence (lazy_no_dekker_fences).
    store_buffer::Store(c.curr, next, std::memory_order_relaxed);
    ISOLATION_INTERLEAVE_POINT("mm_cid.switch.after_publish_curr");
    if (!config_.lazy_no_dekker_fences) FullFence();
    if (prev != kNoTask) {
      Task& p = tasks_[prev];
      if (p.active.load(std::memory_order_relaxed)) {
        Mm& mm = *GetMm(p.mm.load(std::memory_order_relaxed));
        Slot& s = mm.slots[cpu];
        s.time.store(now, std::memory_order_relaxed);  // mm_cid_snapshot_time()
        PutLazy(mm, s);
        p.mm_cid.store(-1, std::memory_order_relaxed);
      }
    }
    if (next != kNoTask) {
      Task& n = tasks_[next];
      if (n.active.load(std::memory_order_relaxed)) {
        Mm& mm = *GetMm(n.mm.load(std::memory_order_relaxed));
        const int32_t cid = GetCid(mm, cpu, n, now);
        n.mm_cid.store(cid, std::memory_order_relaxed);
        n.last_mm_cid = cid;
        n.resume_pending = true;
        n.ran = true;
        n.switched_in_at = now;
      }
    }
    ISOLATION_INTERLEAVE_POINT("mm_cid.switch.end");
  }

  // sched_mm_cid_migrate_from() + sched_mm_cid_migrate_to()
  void Migrate(TaskId task, int from, int to, Nanos now) override {
    ContractTask("Migrate", limits_.max_tasks, task, /*none_ok=*/false);
    ContractCpu("Migrate", from, num_cpus_);
    ContractCpu("Migrate", to, num_cpus_);
    Task& t = tasks_[task];
    notes_.Migrate(task, from, to);  // the steal writes both slots
    t.migrate_from_cpu = from;  // sched_mm_cid_migrate_from()
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
    if (config_.allocator != Allocator::kV6_4) {
      dst_set = dst_set || !CidIsUnset(dst.recent_cid.load(std::memory_order_relaxed));
    }
    const int allowed = config_.allocator == Allocator::kV6_4
                            ? t.nr_cpus_allowed.load(std::memory_order_relaxed)
                            : mm.nr_cpus_allowed.load(std::memory_order_relaxed);
    // Enough users to populate every allowed CPU: keep the destination's ID.
    if (dst_set && mm.users.load(std::memory_order_relaxed) >= allowed) return;
    Slot& src_slot = mm.slots[src];
    // __sched_mm_cid_migrate_from_fetch_cid()
    uint32_t src_cid = store_buffer::Load(src_slot.cid, std::memory_order_relaxed);
    if (t.last_mm_cid < 0 || !CidIsValid(src_cid) || static_cast<uint32_t>(t.last_mm_cid) != src_cid) return;
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
    if (!config_.lazy_no_dekker_fences) FullFence();  // reclaimer half of the Dekker pairing
    if (ActiveUserCurrentOn(src, mm_id(t))) {
      t.last_mm_cid = -1;  // that task completes the lazy put
      return;
    }
    ISOLATION_INTERLEAVE_POINT("mm_cid.migrate_steal.before_commit");
    expected = src_cid | kLazyPut;
    if (!store_buffer::CompareExchange(src_slot.cid, expected, kUnset, std::memory_order_relaxed)) return;
    if (config_.allocator != Allocator::kV6_4) src_slot.recent_cid.store(kUnset, std::memory_order_relaxed);
    if (dst_set) {
      FreeCid(mm, src_cid);  // compaction: the destination already has one
      return;
    }
    dst.time.store(now, std::memory_order_relaxed);
    // dst was UNSET, so no delayed LAZY view of it can be pending (those
    // exist only for valid slots): a plain store is sound under the model.
    dst.cid.store(src_cid, std::memory_order_relaxed);
    if (config_.allocator != Allocator::kV6_4) dst.recent_cid.store(src_cid, std::memory_order_relaxed);
  }

  // task_tick_mm_cid(), plus the [WQ] kick for never-preempted tasks.
  ScanRequest Tick(int cpu, TaskId curr, Nanos now) override {
    ContractCpu("Tick", cpu, num_cpus_);
    ContractTask("Tick", limits_.max_tasks, curr, /*none_ok=*/true);
    if (curr == kNoTask) return {};
    Task& t = tasks_[curr];
    if (!t.active.load(std::memory_order_relaxed)) return {};
    const MmId mm_id = t.mm.load(std::memory_order_relaxed);
    Mm* mm = GetMm(mm_id);
    if (mm == nullptr) return {};
    const ScanRequest req = TickPlacement(t, mm_id, *mm, now);
    if (config_.TickKickEnabled()) TickKick(cpu, t, *mm, now);
    return req;
  }

  ScanRequest ReturnToUser(int cpu, TaskId task, Nanos now, ScanResult* result) override {
    ContractCpu("ReturnToUser", cpu, num_cpus_);
    ContractTask("ReturnToUser", limits_.max_tasks, task, /*none_ok=*/true);
    if (task == kNoTask) return {};
    Task& t = tasks_[task];
    const bool switched_in = t.resume_pending;
    t.resume_pending = false;
    const MmId mm_id = t.mm.load(std::memory_order_relaxed);
    Mm* mm = GetMm(mm_id);
    switch (config_.placement) {
      case Placement::kTaskWork: {
        if (!t.work_queued.load(std::memory_order_relaxed)) return {};
        t.work_queued.store(false, std::memory_order_relaxed);  // work->next = work
        if (mm == nullptr || !t.active.load(std::memory_order_relaxed)) return {};
        ScanResult r = Scan(mm_id, now);
        if (result != nullptr) *result = r;
        return {};
      }
      case Placement::kResume: {
        if (!switched_in || mm == nullptr || !t.active.load(std::memory_order_relaxed)) return {};
        ScanResult r = Scan(mm_id, now);
        if (result != nullptr) *result = r;
        return {};
      }
      case Placement::kUnbound:
        if (mm == nullptr || !t.active.load(std::memory_order_relaxed)) return {};
        if (now < mm->next_scan.load(std::memory_order_relaxed)) return {};
        if (mm->work_pending.exchange(true, std::memory_order_relaxed)) return {};
        return ScanRequest{mm_id};
      case Placement::kDelayed:
      case Placement::kRcu:
        return {};
    }
    return {};
  }

  void ScanRequestDone(MmId mm_id) override {
    if (Mm* mm = GetMm(mm_id)) mm->work_pending.store(false, std::memory_order_relaxed);
  }

  // sched_mm_cid_exit_signals()
  absl::Status Exit(int cpu, TaskId task, Nanos now) override {
    (void)now;
    ISOLATION_RETURN_IF_ERROR(CheckTaskOnCpu("Exit", tasks_.get(), limits_.max_tasks, task, cpu, num_cpus_));
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
    ISOLATION_RETURN_IF_ERROR(CheckTaskOnCpu("Exec", tasks_.get(), limits_.max_tasks, task, cpu, num_cpus_));
    Task& t = tasks_[task];
    Mm* old = GetMm(t.mm.load(std::memory_order_relaxed));
    if (old == nullptr) return absl::InvalidArgumentError(absl::StrCat("mm_cid: exec of task ", task, " without mm"));
    auto new_id = CreateMm(affinity, now);
    if (!new_id.ok()) return new_id.status();
    ISOLATION_RETURN_IF_ERROR(Exit(cpu, task, now));  // before_execve is the same put
    notes_.Cpu(cpu);
    notes_.Task(task);
    Mm& mm = *GetMm(*new_id);
    mm.users.fetch_add(1, std::memory_order_relaxed);
    t.mm.store(*new_id, std::memory_order_relaxed);
    t.nr_cpus_allowed.store(affinity.Weight(), std::memory_order_relaxed);
    t.active.store(true, std::memory_order_relaxed);
    FullFence();  // active before the slot
    t.ran = true;
    t.switched_in_at = now;
    const int32_t cid = GetCid(mm, cpu, t, now);
    t.mm_cid.store(cid, std::memory_order_relaxed);
    t.last_mm_cid = cid;
    return *new_id;
  }

  // copy_process() error path after copy_mm(): bad_fork_cleanup_mm ->
  // mmput() drops the user; the child never ran, so it holds no slot or ID.
  // (init_sched_mm_cid()'s deferral of the parent mm's first scan stays, as
  // in the kernel.)
  absl::Status ForkFailed(TaskId child, Nanos now) override {
    (void)now;
    notes_.Task(child);
    return RollBackUnrunChild(tasks_.get(), limits_.max_tasks, child, [this](MmId id) { return GetMm(id); });
  }

  // CLONE_VM without CLONE_THREAD: mm_users counts it like a thread, and
  // nothing in this design walks tasks, so it is a plain fork into `mm`.
  absl::Status ForkVm(TaskId parent, TaskId child, MmId mm, const CpuMask& affinity, Nanos now) override {
    return Fork(parent, child, mm, affinity, now);
  }

  bool SlotLazy(MmId mm_id, int cpu) const override {
    const Mm* mm = GetMm(mm_id);
    if (mm == nullptr || cpu < 0 || cpu >= num_cpus_) return false;
    return CidIsLazy(mm->slots[cpu].cid.load(std::memory_order_relaxed));
  }

  // task_mm_cid_work()
  ScanResult Scan(MmId mm_id, Nanos now) override {
    ScanResult r;
    Mm* mmp = GetMm(mm_id);
    if (mmp == nullptr) return r;
    Mm& mm = *mmp;
    const int n = config_.batch;
    int start = 0;
    int size = 0;
    if (n > 0) {
      start = mm.scan_cursor.load(std::memory_order_relaxed);
      size = ScopeSize(mm);
      if (start >= size) start = 0;
    }
    if (start == 0 && config_.placement != Placement::kDelayed) {
      if (!PassRateLimit(mm, now)) return r;
    }
    int count = num_cpus_;
    if (n > 0) {
      const int next = start + n >= size ? 0 : start + n;
      int expected = mm.scan_cursor.load(std::memory_order_relaxed);
      if (expected >= size) expected = 0;
      if (expected != start ||
          !mm.scan_cursor.compare_exchange_strong(expected, next, std::memory_order_relaxed)) {
        // Another scanner claimed this batch.
        return r;
      }
      count = n;
    }
    r.ran = true;
    // Pass 1: sched_mm_cid_remote_clear_old() on every CPU of the scope.
    ForEachInScope(mm, start, count, [&](int c) {
      ++r.visits;
      r.reclaimed += ClearOld(mm, mm_id, c, now);
    });
    // Pass 2: sched_mm_cid_remote_clear_weight().
    const int weight = mm.cidmask.Weight();
    ForEachInScope(mm, start, count, [&](int c) {
      ++r.visits;
      const uint32_t cid = store_buffer::Load(mm.slots[c].cid, std::memory_order_relaxed);
      if (CidIsValid(cid) && cid >= static_cast<uint32_t>(weight)) r.reclaimed += RemoteClear(mm, mm_id, c);
    });
    scans_.fetch_add(1, std::memory_order_relaxed);
    slot_visits_.fetch_add(r.visits, std::memory_order_relaxed);
    return r;
  }

  int32_t TaskCid(TaskId task) const override {
    if (task < 0 || task >= limits_.max_tasks) return -1;
    return tasks_[task].mm_cid.load(std::memory_order_relaxed);
  }
  // Observers: an unknown id gives the "none" value documented in mm_cid.h.
  MmId TaskMm(TaskId task) const override {
    return InRange(task) ? tasks_[task].mm.load(std::memory_order_relaxed) : kNoMm;
  }
  bool TaskActive(TaskId task) const override {
    return InRange(task) && tasks_[task].active.load(std::memory_order_relaxed);
  }
  TaskId CurrentTask(int cpu) const override {
    return cpu >= 0 && cpu < num_cpus_ ? cpus_[cpu].curr.load(std::memory_order_relaxed) : kNoTask;
  }
  int MmUsers(MmId mm) const override {
    const Mm* m = GetMm(mm);
    return m != nullptr ? m->users.load(std::memory_order_relaxed) : 0;
  }
  int MmAllowedWeight(MmId mm) const override {
    const Mm* m = GetMm(mm);
    return m != nullptr ? m->nr_cpus_allowed.load(std::memory_order_relaxed) : 0;
  }
  CpuMask MmAllowed(MmId mm) const override {
    const Mm* m = GetMm(mm);
    return m != nullptr ? m->allowed_atomic.Snapshot() : CpuMask(num_cpus_);
  }
  int CidmaskWeight(MmId mm) const override {
    const Mm* m = GetMm(mm);
    return m != nullptr ? m->cidmask.Weight() : 0;
  }

  std::vector<std::string> CheckAlways() const override { return CheckAlwaysFull(*this, num_cpus_); }
  std::vector<std::string> CheckAlwaysIncremental() override {
    return notes_.Check(*this, num_cpus_, limits_.max_tasks, limits_.max_mms);
  }

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
        if (held.TestAndSet(k)) v.push_back(absl::StrCat("I5: mm ", m, " ID ", k, " held by two slots"));
      }
      const CpuMask bits = mm.cidmask.Snapshot();
      if (!(bits == held)) {
        v.push_back(absl::StrCat("I5: mm ", m, " bitmap {", bits.ToString(), "} != slot IDs {", held.ToString(),
                                 "}"));
      }
      const int64_t live = mm.allocations.load(std::memory_order_relaxed) - mm.frees.load(std::memory_order_relaxed);
      if (live != bits.Weight()) {
        v.push_back(absl::StrCat("I6: mm ", m, " allocations-frees=", live, " != popcount ", bits.Weight()));
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
    s.bitmap_ops = bitmap_ops_.load(std::memory_order_relaxed);
    for (int c = 0; c < num_cpus_; ++c) s.context_switches += cpus_[c].context_switches;
    s.scans = scans_.load(std::memory_order_relaxed);
    s.slot_visits = slot_visits_.load(std::memory_order_relaxed);
    s.lock_fallbacks = lock_fallbacks_.load(std::memory_order_relaxed);
    s.alloc_failures = alloc_failures_.load(std::memory_order_relaxed);
    s.max_alloc_attempts = max_alloc_attempts_.load(std::memory_order_relaxed);
    s.tick_kick_retakes = tick_kick_retakes_.load(std::memory_order_relaxed);
    return s;
  }

 private:
  // The placement half of task_tick_mm_cid().
  ScanRequest TickPlacement(Task& t, MmId mm_id, Mm& mm, Nanos now) {
    switch (config_.placement) {
      case Placement::kTaskWork:
        if (t.work_queued.load(std::memory_order_relaxed)) return {};
        if (now < mm.next_scan.load(std::memory_order_relaxed)) return {};
        t.work_queued.store(true, std::memory_order_relaxed);  // task_work_add(TWA_RESUME)
        return {};
      case Placement::kRcu:
        // The seed's patch 2/2: call_rcu() from the tick instead of task work.
        if (now < mm.next_scan.load(std::memory_order_relaxed)) return {};
        if (mm.work_pending.exchange(true, std::memory_order_relaxed)) return {};
        return ScanRequest{mm_id};
      case Placement::kDelayed:
      case Placement::kUnbound:
      case Placement::kResume:
        return {};
    }
    return {};
  }

  // The [WQ] tick kick (task_tick_mm_cid() of v13 2/3): a task that has run
  // more than RSEQ_UNPREEMPTED_THRESHOLD since its switch-in never reaches
  // the switch-time paths that resolve a LAZY slot or pick up a compacted
  // ID.  (A) A due, not yet pending scan: force its return-to-user path
  // (rseq_set_notify_resume), where the placement queues or runs the scan.
  // (B) Otherwise, at most every MM_CID_SCAN_DELAY after its last
  // allocation: re-take its ID in place -- exactly the switch-out/in pair on
  // the local slot (mm_cid_snapshot_time, mm_cid_put_lazy, mm_cid_get), so a
  // slot a scan marked LAZY is freed and a lower ID allocated.  Runs in the
  // CPU's context like ContextSwitch; `curr` is already published, so a
  // racing reclaimer sees an active user and backs off (same Dekker pairing).
  void TickKick(int cpu, Task& t, Mm& mm, Nanos now) {
    if (now - t.switched_in_at <= kCidPeriodNs) return;  // RSEQ_UNPREEMPTED_THRESHOLD
    // mm_cid_needs_scan(): work_delayed has no mm_cid_next_scan ([DW]).
    const bool needs_scan =
        config_.placement != Placement::kDelayed && now >= mm.next_scan.load(std::memory_order_relaxed);
    bool pending = false;  // mm_cid_scan_pending()
    switch (config_.placement) {
      case Placement::kTaskWork: pending = t.work_queued.load(std::memory_order_relaxed); break;
      case Placement::kUnbound:
      case Placement::kRcu: pending = mm.work_pending.load(std::memory_order_relaxed); break;
      case Placement::kDelayed:
      case Placement::kResume: break;
    }
    if (needs_scan && !pending) {
      t.resume_pending = true;  // (A)
      return;
    }
    if (now <= t.last_cid_reset + kScanDelayNs) return;  // time_after(jiffies, last_cid_reset + delay)
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

  // CheckAlways(), per part (always_check.h).  Per CPU: I14 (a running
  // active task has an ID), I2 (< P), I1 via `unique`, I4 (its bit is
  // reserved and its CPU's slot holds it).  Per mm: I2/I3 counted at
  // allocation, I6 (no more frees than allocations).
  CpuCheck CheckCpu(int c, Findings& before, Findings& after) const override {
    CpuCheck r;
    const TaskId t = cpus_[c].curr.load(std::memory_order_relaxed);
    r.task = t;
    if (t == kNoTask || !tasks_[t].active.load(std::memory_order_relaxed)) return r;
    const MmId m = tasks_[t].mm.load(std::memory_order_relaxed);
    const int32_t k = tasks_[t].mm_cid.load(std::memory_order_relaxed);
    if (k < 0) {
      before.Add([&] { return absl::StrCat("I14/alloc: task ", t, " runs on CPU ", c, " without an ID"); });
      return r;
    }
    if (k >= num_cpus_) before.Add([&] { return absl::StrCat("I2: task ", t, " has ID ", k, " >= P"); });
    r.mm = m;
    r.id = k;
    r.unique = true;
    const Mm& mm = *GetMm(m);
    if (k < num_cpus_ && !mm.cidmask.Test(k)) {
      after.Add([&] {
        return absl::StrCat("I4: running task ", t, " on CPU ", c, " holds ID ", k, " whose bit is free");
      });
    }
    const uint32_t slot = mm.slots[c].cid.load(std::memory_order_relaxed);
    if (CidIsUnset(slot) || (slot & ~kLazyPut) != static_cast<uint32_t>(k)) {
      after.Add([&] {
        return absl::StrCat("I4: running task ", t, " on CPU ", c, " holds ID ", k, " but slot has ",
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
      f.Add([&] { return absl::StrCat("I3: mm ", m, " handed out ", n, " IDs >= nr_cpus_allowed"); });
    }
    if (mm.frees.load(std::memory_order_relaxed) > mm.allocations.load(std::memory_order_relaxed)) {
      f.Add([&] { return absl::StrCat("I6: mm ", m, " freed more IDs than it allocated"); });
    }
  }

  Mm* GetMm(MmId id) const { return mms_.Get(id); }
  int NumMms() const { return mms_.Size(); }
  bool InRange(TaskId t) const { return t >= 0 && t < limits_.max_tasks; }
  static MmId mm_id(const Task& t) { return t.mm.load(std::memory_order_relaxed); }

  // mm_set_cpus_allowed(): grow-only union; the atomic copy is extended
  // before the weight so a scan that sees the new weight sees the CPUs.
  void UnionAffinity(Mm& mm, const CpuMask& mask) {
    std::lock_guard<std::mutex> l(mm.allowed_lock);
    mm.allowed.Or(mask);
    for (int c : mask) mm.allowed_atomic.Set(c);
    mm.nr_cpus_allowed.store(mm.allowed.Weight(), std::memory_order_release);
  }

  // Reads rq->curr of `cpu` and whether it is an active user of `mm`.  The
  // caller has issued the full fence of its half of the Dekker pairing.
  bool ActiveUserCurrentOn(int cpu, MmId mm) const {
    const TaskId t = store_buffer::Load(cpus_[cpu].curr, std::memory_order_relaxed);
    if (t == kNoTask) return false;
    return tasks_[t].active.load(std::memory_order_relaxed) && tasks_[t].mm.load(std::memory_order_relaxed) == mm;
  }

  void FreeCid(Mm& mm, uint32_t cid) {  // __mm_cid_put()
    // release: the slot updates that made the ID unused happen before a new
    // owner's fetch_or (acq_rel) observes the bit clear.
    mm.cidmask.Clear(static_cast<int>(cid), std::memory_order_release);
    mm.frees.fetch_add(1, std::memory_order_relaxed);
    notes_.Id(mm.id, static_cast<int>(cid));
    bitmap_ops_.fetch_add(1, std::memory_order_relaxed);
  }
  bool TryReserve(Mm& mm, int cid) {  // cpumask_test_and_set_cpu()
    bitmap_ops_.fetch_add(1, std::memory_order_relaxed);
    // acq_rel: pairs with FreeCid's release; the kernel's op is fully ordered.
    if (mm.cidmask.TestAndSet(cid, std::memory_order_acq_rel)) return false;
    mm.allocations.fetch_add(1, std::memory_order_relaxed);
    notes_.Id(mm.id, cid);
    return true;
  }

  // mm_cid_put_lazy()
  void PutLazy(Mm& mm, Slot& s) {
    uint32_t cid = store_buffer::Load(s.cid, std::memory_order_relaxed);
    if (!CidIsLazy(cid)) return;
    if (store_buffer::CompareExchange(s.cid, cid, kUnset, std::memory_order_relaxed)) FreeCid(mm, cid & ~kLazyPut);
  }
  // mm_cid_put()
  void Put(Mm& mm, Slot& s) {
    uint32_t cid = s.cid.load(std::memory_order_relaxed);
    while (!store_buffer::CompareExchange(s.cid, cid, kUnset, std::memory_order_relaxed)) {
    }
    if (!CidIsUnset(cid)) FreeCid(mm, cid & ~kLazyPut);
  }

  // __mm_cid_try_get(): an ID whose bit we set, or -1 on a lost race.
  int TryGetCid(Mm& mm, int cpu, int64_t& attempts) {
    Slot& s = mm.slots[cpu];
    const int users = mm.users.load(std::memory_order_relaxed);
    const int nr_allowed = mm.nr_cpus_allowed.load(std::memory_order_acquire);
    int bound = num_cpus_;  // v6.4: nr_cpu_ids
    if (config_.allocator != Allocator::kV6_4) {
      bound = nr_allowed;
      const int allowed_max = std::min(nr_allowed, users);
      int max_nr = mm.max_nr_cid.load(std::memory_order_relaxed);
      if (config_.allocator == Allocator::kV6_14) {
        // [SHRINK]: pull max_nr_cid down to min(allowed, users).
        while (max_nr > allowed_max) {
          if (mm.max_nr_cid.compare_exchange_weak(max_nr, allowed_max, std::memory_order_relaxed)) {
            max_nr = allowed_max;
            break;
          }
        }
      }
      // (1) the CPU's recent ID ([SHRINK]: only below max_nr_cid).
      const uint32_t recent = s.recent_cid.load(std::memory_order_relaxed);
      if (!CidIsUnset(recent) &&
          (config_.allocator == Allocator::kV6_13 || static_cast<int>(recent) < max_nr)) {
        ++attempts;
        if (TryReserve(mm, static_cast<int>(recent))) return static_cast<int>(recent);
      }
      // (2) expand max_nr_cid.
      while (max_nr < allowed_max) {
        if (!mm.max_nr_cid.compare_exchange_weak(max_nr, max_nr + 1, std::memory_order_relaxed)) continue;
        ++attempts;
        if (TryReserve(mm, max_nr)) return max_nr;
        max_nr = mm.max_nr_cid.load(std::memory_order_relaxed);
      }
    }
    // (3) first zero below the bound; spins only while another CPU
    // transiently owns a bit outside any slot.
    int cid = 0;
    for (int spin = 0;; ++spin) {
      cid = mm.cidmask.FirstZero();
      if (cid < bound) break;
      if (spin >= kFirstZeroSpin) return -1;
      std::this_thread::yield();
    }
    ++attempts;
    if (!TryReserve(mm, cid)) return -1;
    return cid;
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
      std::lock_guard<std::mutex> l(cid_lock_);
      cid = TryGetCid(mm, cpu, attempts);
      if (cid < 0) {
        use_cid_lock_.store(true, std::memory_order_relaxed);
        for (int i = 0; i < kLockedRetries && cid < 0; ++i) cid = TryGetCid(mm, cpu, attempts);
        use_cid_lock_.store(false, std::memory_order_relaxed);
      }
    }
    int64_t prev = max_alloc_attempts_.load(std::memory_order_relaxed);
    while (attempts > prev && !max_alloc_attempts_.compare_exchange_weak(prev, attempts, std::memory_order_relaxed)) {
    }
    if (cid < 0) {
      alloc_failures_.fetch_add(1, std::memory_order_relaxed);
      return -1;
    }
    if (cid >= num_cpus_) {
      mm.range_violations.fetch_add(1, std::memory_order_relaxed);
      notes_.Mm(mm.id);
    }
    if (config_.allocator != Allocator::kV6_4 && cid >= mm.nr_cpus_allowed.load(std::memory_order_relaxed)) {
      mm.allowed_violations.fetch_add(1, std::memory_order_relaxed);
      notes_.Mm(mm.id);
    }
    return cid;
  }

  // mm_cid_get()
  int32_t GetCid(Mm& mm, int cpu, Task& t, Nanos now) {
    Slot& s = mm.slots[cpu];
    uint32_t cid = store_buffer::Load(s.cid, std::memory_order_relaxed);
    if (CidIsValid(cid)) {  // parked ID: no atomic RMW
      s.time.store(now, std::memory_order_relaxed);
      return static_cast<int32_t>(cid);
    }
    if (CidIsLazy(cid)) {
      ISOLATION_INTERLEAVE_POINT("mm_cid.get.before_lazy_cas");
      if (store_buffer::CompareExchange(s.cid, cid, kUnset, std::memory_order_relaxed)) FreeCid(mm, cid & ~kLazyPut);
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
    if (config_.allocator != Allocator::kV6_4) s.recent_cid.store(static_cast<uint32_t>(n), std::memory_order_relaxed);
    return n;
  }

  // sched_mm_cid_remote_clear(): 1 if this call freed the ID.
  int RemoteClear(Mm& mm, MmId mm_id, int cpu) {
    Slot& s = mm.slots[cpu];
    uint32_t cid = store_buffer::Load(s.cid, std::memory_order_relaxed);
    if (!CidIsValid(cid)) return 0;
    // Announce.  Delayed under a StoreBufferModel: the owner CPU may not see
    // LAZY until our fence.
    if (!store_buffer::CompareExchangeDelayed(s.cid, cid, cid | kLazyPut, std::memory_order_relaxed)) return 0;
    notes_.Cpu(cpu);  // a remote write of `cpu`'s slot
    ISOLATION_INTERLEAVE_POINT("mm_cid.remote_clear.after_lazy_cas");
    // Reclaimer half of the Dekker pairing: the LAZY store must be ordered
    // before the load of rq->curr; a seq_cst CAS alone does not order a later
    // relaxed load in the C++ model, the fence does.
    if (!config_.lazy_no_dekker_fences) FullFence();
    // Verify: an active user of the mm there resolves LAZY itself.
    if (ActiveUserCurrentOn(cpu, mm_id)) return 0;
    ISOLATION_INTERLEAVE_POINT("mm_cid.remote_clear.before_commit");
    // Commit: single winner frees the bit.
    uint32_t lazy = cid | kLazyPut;
    if (!store_buffer::CompareExchange(s.cid, lazy, kUnset, std::memory_order_relaxed)) return 0;
    FreeCid(mm, cid);
    return 1;
  }

  // sched_mm_cid_remote_clear_old()
  int ClearOld(Mm& mm, MmId mm_id, int cpu, Nanos rq_clock) {
    Slot& s = mm.slots[cpu];
    if (ActiveUserCurrentOn(cpu, mm_id)) {
      s.time.store(rq_clock, std::memory_order_relaxed);  // keep a long runner's ID
      return 0;
    }
    if (rq_clock < s.time.load(std::memory_order_relaxed) + kCidPeriodNs) return 0;
    return RemoteClear(mm, mm_id, cpu);
  }

  // The rate limit of task_mm_cid_work(): exactly one scanner per period.
  bool PassRateLimit(Mm& mm, Nanos now) {
    const Nanos next = now + kScanDelayNs;
    Nanos old = mm.next_scan.load(std::memory_order_relaxed);
    if (old == 0) {
      Nanos expected = 0;
      if (mm.next_scan.compare_exchange_strong(expected, next, std::memory_order_relaxed)) {
        old = next;
      } else {
        old = expected;
      }
    }
    if (now < old) return false;
    return mm.next_scan.compare_exchange_strong(old, next, std::memory_order_relaxed);
  }

  int ScopeSize(const Mm& mm) const {
    switch (config_.scope) {
      case ScanScope::kPossible: return num_cpus_;
      case ScanScope::kAllowed: return mm.allowed_atomic.Weight();
      case ScanScope::kCidmask: return std::max(1, mm.cidmask.Weight());
    }
    return num_cpus_;
  }

  // Visits up to `count` CPUs of the scan scope starting at position `start`.
  template <typename Fn>
  void ForEachInScope(const Mm& mm, int start, int count, Fn&& fn) {
    if (config_.scope == ScanScope::kPossible) {
      const int end = std::min(num_cpus_, start + count);
      for (int c = start; c < end; ++c) fn(c);
      return;
    }
    // scan_allowed: the grow-only union.  scan_cidmask (WRONG): the ID bitmap
    // read as if its bits were CPU numbers, as patch 1/2 of [SEED] did.
    const AtomicCpuMask& set = config_.scope == ScanScope::kAllowed ? mm.allowed_atomic : mm.cidmask;
    int c = set.Next(-1);
    for (int i = 0; i < start && c < num_cpus_; ++i) c = set.Next(c);
    for (int i = 0; i < count && c < num_cpus_; ++i) {
      const int next = set.Next(c);  // read before fn may clear bit c
      fn(c);
      c = next;
    }
  }

  Limits limits_;
  std::unique_ptr<Task[]> tasks_;
  std::unique_ptr<Cpu[]> cpus_;
  PerCpuSlots<Slot> slots_;  // guarded by the registry's lock (CreateMm)
  MmRegistry<Mm> mms_;
  ChangeNotes notes_;        // CheckAlwaysIncremental()'s journal
  std::mutex cid_lock_;                          // global forward-progress lock
  std::atomic<bool> use_cid_lock_{false};
  std::atomic<int64_t> bitmap_ops_{0};
  std::atomic<int64_t> scans_{0};
  std::atomic<int64_t> slot_visits_{0};
  std::atomic<int64_t> lock_fallbacks_{0};
  std::atomic<int64_t> alloc_failures_{0};
  std::atomic<int64_t> max_alloc_attempts_{0};
  std::atomic<int64_t> tick_kick_retakes_{0};
};

}  // namespace

absl::StatusOr<std::unique_ptr<MmCid>> CreateLazy(int num_cpus, const MmCidConfig& config, MmCid::Limits limits) {
  return std::unique_ptr<MmCid>(new LazyMmCid(num_cpus, config, limits));
}

}  // namespace isolation::mm_cid::internal
