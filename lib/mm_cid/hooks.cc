// SPDX-License-Identifier: GPL-2.0-or-later
// MmCidHooks: mm_cid under a Driver, with the workers the scan placements
// queue on (strategies.h: ScanRunner).

#include "isolation/mm_cid/hooks.h"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <string>
#include <utility>

#include <urcu/urcu-memb.h>

#include "absl/strings/str_cat.h"
#include "isolation/core/clock.h"

namespace isolation::mm_cid {

// One rcu_head per mm (at most one callback in flight per mm, guaranteed by
// the placement's work_pending flag), so the isolated CPU's tick never
// allocates.  The seed's patch reused task->rcu instead, which Mathieu
// pointed out risks double queueing; a per-mm head does not.
struct MmCidHooks::RcuItem {
  rcu_head head;  // first member: the callback casts back
  MmCidHooks* self = nullptr;
  MmId mm = kNoMm;
};

namespace {

// urcu-memb readers must register; call_rcu takes a read-side section.
// The thread_local's destructor unregisters before the thread's TLS goes.
struct UrcuThreadRegistration {
  UrcuThreadRegistration() { urcu_memb_register_thread(); }
  ~UrcuThreadRegistration() { urcu_memb_unregister_thread(); }
};
void EnsureUrcuRegistered() { thread_local UrcuThreadRegistration registration; }

}  // namespace

MmCidHooks::MmCidHooks(MmCid& mech, Options options)
    : mech_(mech), switcher_(mech), options_(options) {}

MmCidHooks::~MmCidHooks() { Drain(); }

void MmCidHooks::Drain() {
  if (rcu_data_ == nullptr) return;
  EnsureUrcuRegistered();
  urcu_memb_barrier();  // waits for every queued callback
  urcu_memb_set_thread_call_rcu_data(nullptr);
  auto* crdp = static_cast<call_rcu_data*>(rcu_data_);
  rcu_data_ = nullptr;
  urcu_memb_call_rcu_data_free(crdp);
}

void MmCidHooks::SetGroupAffinity(int group, const CpuMask& mask) {
  MutexLock l(groups_lock_);
  group_affinity_[group] = mask;
}

MmId MmCidHooks::GroupMm(int group) const {
  MutexLock l(groups_lock_);
  auto it = group_mm_.find(group);
  return it == group_mm_.end() ? kNoMm : it->second;
}

void MmCidHooks::OnStart(Driver& driver) {
  driver_ = &driver;
  tracer_ = driver.tracer();
  if (tracer_ != nullptr) {
    last_cid_ = std::make_unique<std::atomic<int32_t>[]>(kTracedTasks);
    for (int t = 0; t < kTracedTasks; ++t)
      last_cid_[static_cast<size_t>(t)].store(-1, std::memory_order_relaxed);
  }
  serialized_ = !driver.hooks_run_concurrently();
  num_cpus_ = driver.num_cpus();
  // The driver's run-queue locks become the mechanism's (mm_cid.h): the
  // real-thread driver holds them around OnContextSwitch/OnMigrate, so the
  // switch takes no lock of its own and owner619's fixups, which take them,
  // exclude the switches they race with.  A concurrent driver without them,
  // or of another size, would leave the switch unprotected: an error.
  if (!serialized_) {
    std::vector<Mutex*> locks;
    for (int c = 0; c < num_cpus_; ++c) locks.push_back(driver.RunQueueLock(c));
    if (!mech_.BindRunQueueLocks(locks).ok()) errors_.fetch_add(1, std::memory_order_relaxed);
  }
  per_cpu_.reset(new PerCpu[static_cast<size_t>(num_cpus_)]);
  isolated_ = CpuMask(num_cpus_);
  for (int c = 0; c < num_cpus_; ++c) {
    if (driver.isolation().CpuIsIsolated(c)) isolated_.Set(c);
  }
  worker_cpus_ = options_.worker_cpus;
  if (options_.workers_on_housekeeping && worker_cpus_.Empty()) {
    worker_cpus_ = isolated_;
    worker_cpus_.Complement();
  }
  if (!serialized_) {
    running_id_ = std::make_unique<std::atomic<uint64_t>[]>(static_cast<size_t>(num_cpus_));
    for (int c = 0; c < num_cpus_; ++c)
      running_id_[static_cast<size_t>(c)].store(0, std::memory_order_relaxed);
  }
  placement_ = mech_.placement();
  inline_scans_ = placement_ != nullptr && placement_->traits().runs_on_trigger_cpu;
  if (placement_ != nullptr) placement_->Start(*this);
}

// The call_rcu worker.  A liburcu worker is a host thread calling the
// mechanism at any time: only for a driver whose hooks run concurrently
// anyway (a serializing driver -- the simulator -- models the grace period).
void MmCidHooks::PrepareRcu() {
  if (serialized_ || rcu_data_ != nullptr) return;
  rcu_items_.resize(1024);
  EnsureUrcuRegistered();
  // The worker's cpu_affinity argument is applied lazily in liburcu 0.13.2;
  // pin it ourselves right away.
  // A host CPU outside cpu_set_t cannot be pinned (CPU_SET would write out
  // of bounds): counted as an error, no worker.
  const bool pinnable = options_.rcu_host_cpu >= 0 && options_.rcu_host_cpu < CPU_SETSIZE;
  call_rcu_data* crdp =
      pinnable ? urcu_memb_create_call_rcu_data(0, options_.rcu_host_cpu) : nullptr;
  if (crdp != nullptr) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(options_.rcu_host_cpu, &set);
    pthread_setaffinity_np(urcu_memb_get_call_rcu_thread(crdp), sizeof(set), &set);
    rcu_data_ = crdp;
  } else {
    errors_.fetch_add(1, std::memory_order_relaxed);
  }
}

void MmCidHooks::Record(int cpu, const ScanResult& r, Nanos cost) {
  if (!r.ran) return;
  if (cpu < 0 || cpu >= num_cpus_) {  // ran outside any model CPU (liburcu worker)
    Nanos prev = outside_max_scan_ns_.load(std::memory_order_relaxed);
    while (cost > prev &&
           !outside_max_scan_ns_.compare_exchange_weak(prev, cost, std::memory_order_relaxed)) {
    }
    return;
  }
  PerCpu& pc = per_cpu_[cpu];
  pc.scans.fetch_add(1, std::memory_order_relaxed);
  pc.visits.fetch_add(r.visits, std::memory_order_relaxed);
  Nanos prev = pc.max_scan_ns.load(std::memory_order_relaxed);
  while (cost > prev &&
         !pc.max_scan_ns.compare_exchange_weak(prev, cost, std::memory_order_relaxed)) {
  }
}

void MmCidHooks::RunScan(MmId mm, CpuContext* ctx, int cpu, Nanos now) {
  const Driver::KernelSpan span = driver_->BeginKernelSpan();
  const ScanResult r = mech_.Scan(mm, now);
  mech_.ScanRequestDone(mm);
  const Nanos cost = driver_->EndKernelSpan(span, ctx, r.visits * options_.visit_cost_ns);
  Record(cpu, r, cost);
  if (tracer_ != nullptr && r.ran && cpu >= 0) {
    tracer_->Instant(
        cpu, now, "mm_cid.scan",
        {{"mm", mm}, {"visits", r.visits}, {"reclaimed", r.reclaimed}, {"cost_ns", cost}});
    if (ctx != nullptr) tracer_->NameActivity(cpu, "mm_cid_work");
  }
  Check("scan");
}

// The running task's concurrency ID, when it differs from the one it had
// the last time it was seen running (an ID change the user sees in rseq).
void MmCidHooks::TraceCid(int cpu, TaskId task, Nanos now) {
  if (task < 0 || task >= kTracedTasks) return;
  const int32_t cid = mech_.TaskCid(task);
  if (cid < 0) return;
  // Relaxed: only the CPU running `task` writes its entry; a task's runs on
  // different CPUs are ordered by the driver's hand-over (run-queue locks).
  const int32_t prev =
      last_cid_[static_cast<size_t>(task)].exchange(cid, std::memory_order_relaxed);
  if (prev != cid)
    tracer_->Instant(cpu, now, "mm_cid.cid", {{"task", task}, {"cid", cid}, {"prev_cid", prev}});
}

void MmCidHooks::Check(const char* where) {
  if (!options_.check_invariants || !serialized_) return;
  if (options_.check_every > 1 &&
      events_.fetch_add(1, std::memory_order_relaxed) % options_.check_every != 0)
    return;
  // Same result as CheckAlways(), at the cost of what changed since the
  // previous check (the simulator drives the mechanism from one thread).
  std::vector<std::string> v = mech_.CheckAlwaysIncremental();
  if (v.empty()) return;
  violations_.fetch_add(static_cast<int64_t>(v.size()), std::memory_order_relaxed);
  MutexLock l(violations_lock_);
  for (auto& s : v) {
    if (first_violations_.size() < 16) first_violations_.push_back(absl::StrCat(where, ": ", s));
  }
}

std::vector<std::string> MmCidHooks::FirstViolations() const {
  MutexLock l(violations_lock_);
  return first_violations_;
}

void MmCidHooks::QueueOnWorker(Nanos delay, WorkFn fn) {
  if (worker_cpus_.Empty()) {
    driver_->QueueHousekeepingWork(delay, std::move(fn));
    return;
  }
  // Round-robin over the worker CPUs (the unbound workqueue's cpumask, or
  // the rcuo kthreads' housekeeping CPUs).
  const int n = static_cast<int>(worker_rr_.fetch_add(1, std::memory_order_relaxed) %
                                 static_cast<uint64_t>(worker_cpus_.Weight()));
  driver_->QueueWorkOn(worker_cpus_.Nth(n), delay, std::move(fn));
}

void MmCidHooks::QueueWork(MmId mm, Nanos delay) {
  QueueOnWorker(delay, [this, mm](CpuContext& c) { RunScan(mm, &c, c.cpu(), c.now()); });
}

void MmCidHooks::QueuePeriodicWork(MmId mm, Nanos period) {
  QueueOnWorker(period, [this, mm, period](CpuContext& ctx) {
    if (mech_.MmUsers(mm) <= 0) return;  // mm dropped: cancel_delayed_work_sync
    RunScan(mm, &ctx, ctx.cpu(), ctx.now());
    QueuePeriodicWork(mm, period);
  });
}

void MmCidHooks::CallRcu(MmId mm) {
  if (serialized_) {  // a housekeeping work item after a modelled grace period
    QueueOnWorker(options_.rcu_grace_ns,
                  [this, mm](CpuContext& c) { RunScan(mm, &c, c.cpu(), c.now()); });
    return;
  }
  if (mm < 0 || static_cast<size_t>(mm) >= rcu_items_.size() || rcu_data_ == nullptr) {
    errors_.fetch_add(1, std::memory_order_relaxed);
    mech_.ScanRequestDone(mm);
    return;
  }
  RcuItem* item = rcu_items_[static_cast<size_t>(mm)].get();
  if (item == nullptr) {  // created at fork time; missing means a bug
    errors_.fetch_add(1, std::memory_order_relaxed);
    mech_.ScanRequestDone(mm);
    return;
  }
  EnsureUrcuRegistered();
  urcu_memb_set_thread_call_rcu_data(static_cast<call_rcu_data*>(rcu_data_));
  urcu_memb_call_rcu(&item->head, [](rcu_head* head) {
    auto* it = reinterpret_cast<RcuItem*>(head);  // head is the first member
    MmCidHooks* self = it->self;
    // Runs on the pinned liburcu worker: which model CPU is it?  The host's
    // CPU number of the worker is not a model CPU; record it as -1 (not an
    // isolated model CPU), which is what I10 asks about.
    self->RunScan(it->mm, nullptr, -1, self->driver_->Now());
  });
}

void MmCidHooks::Dispatch(ScanRequest req) {
  if (placement_ != nullptr) {
    placement_->Dispatch(req.mm, *this);
  } else {
    mech_.ScanRequestDone(req.mm);
  }
}

void MmCidHooks::AddViolation(std::string text) {
  violations_.fetch_add(1, std::memory_order_relaxed);
  MutexLock l(violations_lock_);
  if (first_violations_.size() < 16) first_violations_.push_back(std::move(text));
}

void MmCidHooks::WithdrawRunningId(int cpu) {
  running_id_[static_cast<size_t>(cpu)].store(0, std::memory_order_seq_cst);
}

// seq_cst store, then seq_cst loads of the other CPUs' pairs: of two CPUs
// publishing the same pair, at least one loads the other's store.
void MmCidHooks::PublishRunningId(int cpu, TaskId task, const char* where) {
  if (!Tracked(task)) return;
  const int32_t id = mech_.TaskCid(task);
  const MmId mm = mech_.TaskMm(task);
  if (id < 0 || mm == kNoMm) return;
  const uint64_t key = (static_cast<uint64_t>(mm) + 1) << 32 | static_cast<uint32_t>(id);
  running_id_[static_cast<size_t>(cpu)].store(key, std::memory_order_seq_cst);
  for (int other = 0; other < num_cpus_; ++other) {
    if (other == cpu ||
        running_id_[static_cast<size_t>(other)].load(std::memory_order_seq_cst) != key)
      continue;
    AddViolation(absl::StrCat(where, ": I1: CPUs ", cpu, " and ", other, " both run a task of mm ",
                              mm, " with ID ", id));
  }
}

void MmCidHooks::OnTick(CpuContext& ctx, TaskId curr) {
  if (!Tracked(curr)) return;
  const bool real_check = RealThreadCheck();
  if (real_check) WithdrawRunningId(ctx.cpu());  // the [WQ] kick may re-take the ID
  ScanRequest req = mech_.Tick(ctx.cpu(), curr, ctx.now());
  if (real_check) PublishRunningId(ctx.cpu(), curr, "tick");
  Check("tick");  // the [WQ] kick re-takes IDs in place
  if (req) Dispatch(req);
}

void MmCidHooks::OnContextSwitch(int cpu, TaskId prev, TaskId next, Nanos now) {
  const bool real_check = RealThreadCheck();
  if (real_check) WithdrawRunningId(cpu);
  switcher_.ContextSwitch(cpu, Tracked(prev) ? prev : kNoTask, Tracked(next) ? next : kNoTask, now);
  if (real_check) PublishRunningId(cpu, next, "switch");
  if (tracer_ != nullptr) TraceCid(cpu, next, now);
  Check("switch");
}

void MmCidHooks::OnReturnToUser(CpuContext& ctx, TaskId task) {
  if (!Tracked(task)) return;
  const Driver::KernelSpan span =
      inline_scans_ ? ctx.driver().BeginKernelSpan() : Driver::KernelSpan{};
  ScanResult r;
  ScanRequest req = mech_.ReturnToUser(ctx.cpu(), task, ctx.now(), &r);
  if (r.ran) {
    const Nanos cost = ctx.driver().EndKernelSpan(span, &ctx, r.visits * options_.visit_cost_ns);
    Record(ctx.cpu(), r, cost);
    if (tracer_ != nullptr) {
      tracer_->Instant(ctx.cpu(), ctx.now(), "mm_cid.scan",
                       {{"mm", mech_.TaskMm(task)},
                        {"visits", r.visits},
                        {"reclaimed", r.reclaimed},
                        {"cost_ns", cost},
                        {"task_work", 1}});
    }
    Check("task_work");
  }
  if (tracer_ != nullptr) TraceCid(ctx.cpu(), task, ctx.now());
  if (req) Dispatch(req);
}

void MmCidHooks::OnTaskFork(TaskId parent, TaskId child, int group, Nanos now) {
  MmId mm = kNoMm;
  CpuMask affinity = CpuMask::Full(mech_.num_cpus());
  bool created = false;
  {
    MutexLock l(groups_lock_);
    auto a = group_affinity_.find(group);
    if (a != group_affinity_.end()) affinity = a->second;
    auto it = group_mm_.find(group);
    if (it != group_mm_.end()) {
      mm = it->second;
    } else {
      auto created_mm = mech_.CreateMm(affinity, now);
      if (!created_mm.ok()) {
        errors_.fetch_add(1, std::memory_order_relaxed);
        return;
      }
      mm = *created_mm;
      group_mm_[group] = mm;
      created = true;
    }
  }
  if (!mech_.Fork(parent < 0 ? kNoTask : parent, child, mm, affinity, now).ok()) {
    errors_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  Check("fork");  // owner619: a fork can flip the mode and fix up running tasks
  if (created) {
    // A call_rcu worker exists (a placement prepared it): the mm's rcu head.
    if (rcu_data_ != nullptr && static_cast<size_t>(mm) < rcu_items_.size()) {
      auto item = std::make_unique<RcuItem>();
      item->self = this;
      item->mm = mm;
      rcu_items_[static_cast<size_t>(mm)] = std::move(item);
    }
    if (placement_ != nullptr && driver_ != nullptr) placement_->OnMmCreated(mm, *this);
  }
}

void MmCidHooks::OnTaskExit(int cpu, TaskId task, Nanos now) {
  if (!Tracked(task)) return;
  if (RealThreadCheck() && cpu >= 0 && cpu < num_cpus_) WithdrawRunningId(cpu);
  if (!mech_.Exit(cpu, task, now).ok()) errors_.fetch_add(1, std::memory_order_relaxed);
  Check("exit");
}

void MmCidHooks::OnMigrate(TaskId task, int from, int to, Nanos now) {
  if (!Tracked(task)) return;
  mech_.Migrate(task, from, to, now);
  Check("migrate");
}

void MmCidHooks::OnAffinityChange(TaskId task, const CpuMask& mask, Nanos now) {
  // A task whose fork the mechanism refused (counted in errors()) is unknown
  // to it: nothing to update.
  if (!Tracked(task) || mech_.TaskMm(task) == kNoMm) return;
  if (!mech_.SetAffinity(task, mask, now).ok()) errors_.fetch_add(1, std::memory_order_relaxed);
  Check("affinity");  // owner619: affinity growth can flip the mode
}

int64_t MmCidHooks::ScansOn(int cpu) const {
  if (cpu < 0 || cpu >= num_cpus_ || per_cpu_ == nullptr) return 0;
  return per_cpu_[cpu].scans.load(std::memory_order_relaxed);
}

int64_t MmCidHooks::ScansOnIsolatedCpus() const {
  int64_t n = 0;
  for (int c : isolated_) n += ScansOn(c);
  return n;
}

int64_t MmCidHooks::TotalScans() const { return mech_.Stats().scans; }
int64_t MmCidHooks::TotalVisits() const { return mech_.Stats().slot_visits; }

Nanos MmCidHooks::IsolatedMaxStallNs() const {
  Nanos m = 0;
  for (int c : isolated_) m = std::max(m, per_cpu_[c].max_scan_ns.load(std::memory_order_relaxed));
  return m;
}

Nanos MmCidHooks::MaxScanNs() const {
  Nanos m = outside_max_scan_ns_.load(std::memory_order_relaxed);
  for (int c = 0; c < num_cpus_; ++c)
    m = std::max(m, per_cpu_[c].max_scan_ns.load(std::memory_order_relaxed));
  return m;
}

}  // namespace isolation::mm_cid
