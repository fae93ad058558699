// SPDX-License-Identifier: GPL-2.0-or-later
// design_common.h (mm_cid module, not installed): what the three designs
// (lazy_design.h, owner619_design.h, v63_mmlock.cc) share, written once --
// the observers of mm_cid.h, the CheckAlways() entry points, the argument
// contracts of the hot entry points and the defaults of a design that has
// no background work or task walk.  No kernel counterpart: the kernel has
// one design at a time, and the observers are this library's (the kernel's
// state is read in a debugger, not through a call).
//
// DesignCommon<Design> is a CRTP base between MmCid and the design.  It has
// no data member and declares no virtual function of its own, so the
// design's object layout and vtable are those it had deriving from MmCid
// directly: the switcher's layout (switcher.h, internal/layouts.h) and the
// designs' switch and scan loops compile to the same code.  It reads the
// design's state by name, which each design declares:
//   tasks_, cpus_ (arrays of its Task and Cpu with atomic `mm`, `active`
//   and `curr`), limits_ (MmCid::Limits), mms_ (MmRegistry<Mm>), notes_
//   (ChangeNotes), and AlwaysInvariants as a base;
// and the four per-mm reads whose locking differs between designs, as
// static functions of the design: UsersOf, AllowedWeightOf, AllowedOf and
// CidBitsOf (the cid bitmap as the observers read it, anything with
// Weight() and FirstZero()).  A design befriends DesignCommon<Design>.
//
// Thread safety: as mm_cid.h says of each entry point; the observers take
// whatever lock the design's per-mm reads take.

#ifndef ISOLATION_LIB_MM_CID_DESIGNS_DESIGN_COMMON_H_
#define ISOLATION_LIB_MM_CID_DESIGNS_DESIGN_COMMON_H_

#include <algorithm>
#include <atomic>
#include <bit>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "isolation/mm_cid/mm_cid.h"
#include "mm_cid/always_check.h"
#include "mm_cid/internal.h"

namespace isolation::mm_cid::internal {

template <typename Design>
class DesignCommon : public MmCid {
 public:
  using MmCid::MmCid;

  // Observers: an unknown id gives the "none" value documented in mm_cid.h.
  MmId TaskMm(TaskId task) const override {
    return InRange(task) ? self().tasks_[task].mm.load(std::memory_order_relaxed) : kNoMm;
  }
  bool TaskActive(TaskId task) const override {
    return InRange(task) && self().tasks_[task].active.load(std::memory_order_relaxed);
  }
  TaskId CurrentTask(int cpu) const override {
    return cpu >= 0 && cpu < num_cpus_ ? self().cpus_[cpu].curr.load(std::memory_order_relaxed)
                                       : kNoTask;
  }
  int MmUsers(MmId mm) const override {
    const auto* m = GetMm(mm);
    return m != nullptr ? Design::UsersOf(*m) : 0;
  }
  int MmAllowedWeight(MmId mm) const override {
    const auto* m = GetMm(mm);
    return m != nullptr ? Design::AllowedWeightOf(*m) : 0;
  }
  CpuMask MmAllowed(MmId mm) const override {
    const auto* m = GetMm(mm);
    return m != nullptr ? Design::AllowedOf(*m) : CpuMask(num_cpus_);
  }
  int CidmaskWeight(MmId mm) const override {
    const auto* m = GetMm(mm);
    return m != nullptr ? Design::CidBitsOf(*m).Weight() : 0;
  }
  int FirstFreeCid(MmId mm) const override {
    const auto* m = GetMm(mm);
    return m != nullptr ? std::min(Design::CidBitsOf(*m).FirstZero(), num_cpus_) : 0;
  }

  // The whole check, and the one of the parts the journal marked dirty
  // (always_check.h); each design's parts are its AlwaysInvariants.
  std::vector<std::string> CheckAlways() const override {
    return CheckAlwaysFull(Invariants(), num_cpus_);
  }
  std::vector<std::string> CheckAlwaysIncremental() override {
    Design& d = self();
    return d.notes_.Check(Invariants(), num_cpus_, d.limits_.max_tasks, d.limits_.max_mms);
  }

  // The defaults of a design that walks no tasks and has no background
  // work; the lazy design overrides the work hooks, owner619 ForkVm and
  // Migrate.
  //
  // CLONE_VM without CLONE_THREAD: mm_users counts it like a thread, and a
  // design that walks no task list sees a plain fork into `mm`.
  absl::Status ForkVm(TaskId parent, TaskId child, MmId mm, const CpuMask& affinity,
                      Nanos now) override {
    return self().Fork(parent, child, mm, affinity, now);
  }
  // sched_mm_cid_migrate_from()/_to() where a task that does not run holds
  // nothing a migration moves: the contracts only.
  void Migrate(TaskId task, int from, int to, Nanos now) override {
    (void)now;
    ContractMigrate(task, from, to);
  }
  // task_tick_mm_cid() and the return-to-user hook without compaction:
  // nothing is scanned or queued (the contracts still hold).
  ScanRequest Tick(int cpu, TaskId curr, Nanos now) override {
    (void)now;
    ContractTick(cpu, curr);
    return {};
  }
  ScanRequest ReturnToUser(int cpu, TaskId task, Nanos now, ScanResult* result) override {
    (void)now;
    (void)result;
    ContractReturnToUser(cpu, task);
    return {};
  }
  ScanResult Scan(MmId mm, Nanos now) override {
    (void)mm;
    (void)now;
    return {};
  }

 protected:
  auto* GetMm(MmId id) const { return self().mms_.Get(id); }
  int NumMms() const { return self().mms_.Size(); }
  bool InRange(TaskId t) const { return t >= 0 && t < self().limits_.max_tasks; }

  // The contracts of the hot entry points (mm_cid.h REQUIRES; internal.h),
  // one call per entry point.
  [[gnu::always_inline]] void ContractSwitch(int cpu, TaskId prev, TaskId next) const {
    ContractCpu("ContextSwitch", cpu, num_cpus_);
    ContractTask("ContextSwitch", self().limits_.max_tasks, prev, /*none_ok=*/true);
    ContractTask("ContextSwitch", self().limits_.max_tasks, next, /*none_ok=*/true);
  }
  [[gnu::always_inline]] void ContractMigrate(TaskId task, int from, int to) const {
    ContractTask("Migrate", self().limits_.max_tasks, task, /*none_ok=*/false);
    ContractCpu("Migrate", from, num_cpus_);
    ContractCpu("Migrate", to, num_cpus_);
  }
  [[gnu::always_inline]] void ContractTick(int cpu, TaskId curr) const {
    ContractCpu("Tick", cpu, num_cpus_);
    ContractTask("Tick", self().limits_.max_tasks, curr, /*none_ok=*/true);
  }
  [[gnu::always_inline]] void ContractReturnToUser(int cpu, TaskId task) const {
    ContractCpu("ReturnToUser", cpu, num_cpus_);
    ContractTask("ReturnToUser", self().limits_.max_tasks, task, /*none_ok=*/true);
  }

  // The start of every design's Fork(): the arguments checked
  // (CheckForkArgs, internal.h) and, when they hold, the child recorded in
  // the journal and marked as existing.
  absl::Status BeginFork(TaskId parent, TaskId child, MmId mm_id, const CpuMask& affinity) {
    Design& d = self();
    const int max_tasks = d.limits_.max_tasks;
    const bool child_exists = child >= 0 && child < max_tasks && d.tasks_[child].exists;
    ISOLATION_RETURN_IF_ERROR(CheckForkArgs(parent, child, child_exists, max_tasks, mm_id,
                                            GetMm(mm_id) != nullptr, affinity, num_cpus_));
    d.notes_.Task(child);
    d.tasks_[child].exists = true;
    return absl::OkStatus();
  }

  // The start of CheckCpu() every design shares (always_check.h): the
  // task running on CPU `c` (into r.task) and, when it is an active user,
  // its ID checked for I14 (it has one) and I2 (< P) into `before`.
  // Returns that ID, with r.mm, r.id and r.unique set, when the design's
  // own per-CPU checks should go on; -1 when there is nothing more to check.
  int32_t CheckRunningTaskId(int c, Findings& before, CpuCheck& r) const {
    const Design& d = self();
    const TaskId t = d.cpus_[c].curr.load(std::memory_order_relaxed);
    r.task = t;
    if (t == kNoTask || !d.tasks_[t].active.load(std::memory_order_relaxed)) return -1;
    const int32_t k = d.TaskCid(t);
    if (k < 0) {
      before.Add([&] {
        return absl::StrCat("I14/alloc: task ", t, " runs on CPU ", c, " without an ID");
      });
      return -1;
    }
    if (k >= num_cpus_) {
      before.Add([&] { return absl::StrCat("I2: task ", t, " has ID ", k, " >= P"); });
      return -1;
    }
    r.mm = d.tasks_[t].mm.load(std::memory_order_relaxed);
    r.id = k;
    r.unique = true;
    return k;
  }

  // The start of every design's Exec(): sched_mm_cid_before_execve() is
  // the exit put, so the task must run on `cpu` with an mm; the new mm
  // (mm_init_cid()) is made first, so that a refused one leaves the task
  // as it was.  Returns the new mm's id; the task has left its old mm.
  absl::StatusOr<MmId> BeginExec(int cpu, TaskId task, const CpuMask& affinity, Nanos now) {
    Design& d = self();
    ISOLATION_RETURN_IF_ERROR(
        CheckTaskOnCpu("Exec", d.tasks_.get(), d.limits_.max_tasks, task, cpu, num_cpus_));
    if (GetMm(d.tasks_[task].mm.load(std::memory_order_relaxed)) == nullptr)
      return absl::InvalidArgumentError(absl::StrCat("mm_cid: exec of task ", task, " without mm"));
    ISOLATION_ASSIGN_OR_RETURN(const MmId id, d.CreateMm(affinity, now));
    ISOLATION_RETURN_IF_ERROR(d.Exit(cpu, task, now));
    return id;
  }

  // copy_process()'s bad_fork_cleanup_mm for a design whose fork only
  // counts the user (lazy, v63_mmlock): mmput() drops it; the child never
  // ran, so it holds no slot or ID.
  absl::Status RollBackUnrunFork(TaskId child) {
    Design& d = self();
    d.notes_.Task(child);
    return RollBackUnrunChild(d.tasks_.get(), d.limits_.max_tasks, child,
                              [this](MmId id) { return GetMm(id); });
  }

  // The inline switch's view of this design (switcher.h): its form, where
  // its tasks (as `SwitchState`, the layout's task part) and CPUs are, and
  // the journal's flag.  Called from the design's constructor.
  template <typename SwitchState>
  void PublishSwitchLayout(SwitchForm form) {
    Design& d = self();
    using Task = std::remove_reference_t<decltype(d.tasks_[0])>;
    SwitchLayout layout;
    layout.form = form;
    layout.task_shift = static_cast<uint8_t>(std::countr_zero(sizeof(Task)));
    layout.tasks = reinterpret_cast<char*>(static_cast<SwitchState*>(&d.tasks_[0]));
    layout.cpus = d.cpus_.get();
    layout.journaled = d.notes_.EnabledFlag();
    SetSwitchLayout(layout);
  }

 private:
  Design& self() { return static_cast<Design&>(*this); }
  const Design& self() const { return static_cast<const Design&>(*this); }
  const AlwaysInvariants& Invariants() const { return self(); }
};

}  // namespace isolation::mm_cid::internal

#endif  // ISOLATION_LIB_MM_CID_DESIGNS_DESIGN_COMMON_H_
