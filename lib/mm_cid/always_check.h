// SPDX-License-Identifier: GPL-2.0-or-later
// always_check.h (mm_cid module, not installed): the invariants every design
// checks at any point (MmCid::CheckAlways()), split into per-CPU, per-task,
// per-mm and global parts, and an incremental form of the check
// (MmCid::CheckAlwaysIncremental()) that re-evaluates only the parts whose
// inputs changed since its previous call.  No kernel counterpart: this is
// test instrumentation.
//
// Why: CheckAlways() walks every CPU, task and mm; after every simulator
// event that is O(P) per event, O(P^2) per simulated second on a machine
// whose event rate grows with P.  The incremental check keeps, per CPU, the
// (mm, ID) its running task held at the last evaluation, an owner table
// (mm, ID) -> CPUs for I1 (uniqueness costs O(1) per ID change instead of
// an all-pairs pass), and counts of the parts found violating.  A design
// reports its writes of checked state with the Note* calls (a no-op branch
// until the incremental check is enabled); the next check re-evaluates
// exactly the CPUs, tasks and mms those writes can affect:
//   NoteCpu(c)    rq->curr of c, or a slot of c (any mm), changed;
//   NoteTask(t)   a field of t (mm, active, ID, CPU) changed -- resolved to
//                 the CPUs t ran on at the last evaluation (CPUs it runs on
//                 now were noted by the switch that put it there);
//   NoteId(m, k)  bit k of m's ID bitmap changed -- resolved to the CPUs
//                 whose running task held (m, k) at the last evaluation, and
//                 m's per-mm part;
//   NoteMm(m)     a per-mm counter changed.
// The per-part functions are the same code CheckAlways() runs, so the
// incremental check finds a violation exactly when CheckAlways() does; when
// it finds one, CheckAlwaysIncremental() returns the full CheckAlways() list,
// so both return the same vector at every call (test/mm_cid/
// mm_cid_incremental_check_test.cc asserts that after every event).
//
// Thread safety: the Note* calls are made from the design's entry points;
// once enabled, the instance must be driven from one thread at a time
// (the simulator) -- the journal is not synchronised.  Exact when checked
// at a point where every store is visible (always on the simulator; after
// StoreBufferModel::DrainAll() under the store-buffer model).

#ifndef ISOLATION_LIB_MM_CID_ALWAYS_CHECK_H_
#define ISOLATION_LIB_MM_CID_ALWAYS_CHECK_H_

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "isolation/mm_cid/mm_cid.h"

namespace isolation::mm_cid::internal {

// Where a check part writes what it finds: only whether anything was found
// (incremental re-evaluation), or also the text (CheckAlways()).
class Findings {
 public:
  explicit Findings(std::vector<std::string>* out) : out_(out) {}
  template <typename MakeText>
  void Add(MakeText make_text) {
    found_ = true;
    if (out_ != nullptr) out_->push_back(make_text());
  }
  bool found() const { return found_; }

 private:
  std::vector<std::string>* out_;
  bool found_ = false;
};

// What a CPU's part of the check saw.
struct CpuCheck {
  TaskId task = kNoTask;  // rq->curr (active or not); kNoTask if idle
  MmId mm = kNoMm;        // with `unique`: the running task's mm and ID
  int32_t id = -1;
  bool unique = false;  // (mm, id) takes part in I1 (uniqueness per mm)
};

// The parts of one design's CheckAlways(), in report order: for each CPU
// `before`, the I1 line if (mm, id) was already seen on a lower CPU, `after`;
// then each task, each mm, the global part.
class AlwaysInvariants {
 public:
  virtual ~AlwaysInvariants() = default;
  virtual CpuCheck CheckCpu(int cpu, Findings& before, Findings& after) const = 0;
  virtual int TaskBound() const { return 0; }  // tasks checked: [0, TaskBound())
  virtual void CheckTask(TaskId task, Findings& f) const {
    (void)task;
    (void)f;
  }
  virtual int MmBound() const { return 0; }  // mms checked: [0, MmBound())
  virtual void CheckMm(MmId mm, Findings& f) const {
    (void)mm;
    (void)f;
  }
  virtual void CheckGlobal(Findings& f) const { (void)f; }
};

// CheckAlways(): every part, with the texts.
std::vector<std::string> CheckAlwaysFull(const AlwaysInvariants& inv, int num_cpus);

// Test support (process-wide, off by default): while on, every incremental
// check also re-evaluates every part from scratch and counts the parts whose
// remembered evaluation differs -- a write the design did not note, even one
// that did not change whether anything is violated.
void SetIncrementalCheckAudit(bool on);
int64_t IncrementalCheckAuditMismatches();

class IncrementalAlwaysCheck {
 public:
  IncrementalAlwaysCheck(int num_cpus, int max_tasks, int max_mms);

  void NoteCpu(int cpu) {
    if (all_dirty_ || cpu < 0 || cpu >= num_cpus_ || cpu_dirty_[static_cast<size_t>(cpu)]) return;
    cpu_dirty_[static_cast<size_t>(cpu)] = 1;
    dirty_cpus_.push_back(cpu);
  }
  void NoteTask(TaskId t) {
    if (all_dirty_ || t < 0 || t >= max_tasks_ || task_dirty_[static_cast<size_t>(t)]) return;
    task_dirty_[static_cast<size_t>(t)] = 1;
    dirty_tasks_.push_back(t);
  }
  void NoteMm(MmId mm) {
    if (all_dirty_ || mm < 0 || mm >= max_mms_ || mm_dirty_[static_cast<size_t>(mm)]) return;
    mm_dirty_[static_cast<size_t>(mm)] = 1;
    dirty_mms_.push_back(mm);
  }
  void NoteId(MmId mm, int id) {
    if (all_dirty_) return;
    NoteMm(mm);
    // Unbounded growth between checks would be a leak: past a bound the
    // next check re-evaluates everything (as the first one does).
    if (dirty_ids_.size() >= id_journal_bound_) {
      all_dirty_ = true;
      return;
    }
    dirty_ids_.push_back(Key(mm, id));
  }

  // Re-evaluates the parts of `inv` noted since the previous call (all of
  // them on the first call); true if any part is violated now.
  bool AnyViolation(const AlwaysInvariants& inv);

 private:
  struct CpuState {
    CpuCheck seen;
    bool violated = false;  // a finding other than I1
  };
  // Lists of CPUs threaded through per-CPU links; a CPU is in at most one
  // list of a kind at a time (it has one rq->curr, one running (mm, ID)).
  class CpuLists {
   public:
    explicit CpuLists(int num_cpus)
        : next_(static_cast<size_t>(num_cpus), -1), prev_(static_cast<size_t>(num_cpus), -1) {}
    void Insert(int& head, int cpu);
    void Remove(int& head, int cpu);
    bool Alone(int cpu) const {
      return next_[static_cast<size_t>(cpu)] < 0 && prev_[static_cast<size_t>(cpu)] < 0;
    }
    int Next(int cpu) const { return next_[static_cast<size_t>(cpu)]; }

   private:
    std::vector<int> next_, prev_;
  };
  static uint64_t Key(MmId mm, int32_t id) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(mm)) << 32) | static_cast<uint32_t>(id);
  }
  // Head of the I1 holder list of (mm, id); nullptr with create == false if
  // it has none.  IDs below P of a real mm live in a per-mm array, others
  // (only ever seen in a broken variant) in a map.
  int* OwnerHead(MmId mm, int32_t id, bool create);
  void MarkCpu(int cpu) {
    if (cpu_dirty_[static_cast<size_t>(cpu)]) return;
    cpu_dirty_[static_cast<size_t>(cpu)] = 1;
    dirty_cpus_.push_back(cpu);
  }
  void ReevaluateCpu(const AlwaysInvariants& inv, int cpu);
  void Audit(const AlwaysInvariants& inv, int task_bound, int mm_bound) const;

  const int num_cpus_;
  const int max_tasks_;
  const int max_mms_;
  const size_t id_journal_bound_;
  bool all_dirty_ = true;
  std::vector<int> dirty_cpus_;
  std::vector<TaskId> dirty_tasks_;
  std::vector<MmId> dirty_mms_;
  std::vector<uint64_t> dirty_ids_;
  std::vector<char> cpu_dirty_, task_dirty_, mm_dirty_;
  std::vector<CpuState> cpus_;
  std::vector<char> task_violated_, mm_violated_;
  // The CPUs each task was rq->curr of at the last evaluation (one, unless
  // a caller switched a task in on two CPUs): a list head per task.
  std::vector<int> task_head_;
  CpuLists task_lists_;
  // I1 owner table: (mm, ID) -> the CPUs whose running task held it at
  // their last evaluation.
  std::vector<std::vector<int>> owner_head_;          // [mm][id], id < P
  std::unordered_map<uint64_t, int> owner_head_far_;  // any other (mm, id)
  CpuLists owner_lists_;
  int64_t cpus_violated_ = 0;
  int64_t tasks_violated_ = 0;
  int64_t mms_violated_ = 0;
  int64_t duplicate_holders_ = 0;  // sum over (mm, ID) of holders - 1
};

// What a design embeds: the Note* calls, no-ops until Enable().
class ChangeNotes {
 public:
  void Cpu(int cpu) {
    if (check_ != nullptr) check_->NoteCpu(cpu);
  }
  void Task(TaskId t) {
    if (check_ != nullptr) check_->NoteTask(t);
  }
  void Id(MmId mm, int id) {
    if (check_ != nullptr) check_->NoteId(mm, id);
  }
  void Mm(MmId mm) {
    if (check_ != nullptr) check_->NoteMm(mm);
  }
  // A migration that may write both CPUs' slots (one branch).
  void Migrate(TaskId t, int from, int to) {
    if (__builtin_expect(check_ != nullptr, 0)) NoteMigrate(t, from, to);
  }
  // A context switch on `cpu`: one load and a not-taken branch on the switch
  // path while no check is attached; the journal writes are out of line, so
  // the switch keeps neither their calls nor their register pressure.
  void Switch(int cpu, TaskId prev, TaskId next) {
    if (__builtin_expect(check_ != nullptr, 0)) NoteSwitch(cpu, prev, next);
  }
  // Whether a check is attached (the switch paths branch on it once and keep
  // their journaled form out of line).
  bool Enabled() const { return check_ != nullptr; }
  // Enabled() as a flag the inline switch front end reads (switcher.h).
  const bool* EnabledFlag() const { return &enabled_; }
  // MmCid::CheckAlwaysIncremental() of a design.
  std::vector<std::string> Check(const AlwaysInvariants& inv, int num_cpus, int max_tasks,
                                 int max_mms) {
    if (check_ == nullptr) {
      check_ = std::make_unique<IncrementalAlwaysCheck>(num_cpus, max_tasks, max_mms);
      enabled_ = true;
    }
    if (!check_->AnyViolation(inv)) return {};
    return CheckAlwaysFull(inv, num_cpus);
  }

 private:
  [[gnu::cold, gnu::noinline]] void NoteMigrate(TaskId t, int from, int to) {
    check_->NoteTask(t);
    check_->NoteCpu(from);
    check_->NoteCpu(to);
  }
  [[gnu::cold, gnu::noinline]] void NoteSwitch(int cpu, TaskId prev, TaskId next) {
    check_->NoteCpu(cpu);
    check_->NoteTask(prev);
    check_->NoteTask(next);
  }

  // Plain pointer semantics: set once by the (single) checking thread.
  std::unique_ptr<IncrementalAlwaysCheck> check_;
  bool enabled_ = false;  // check_ != nullptr
};

}  // namespace isolation::mm_cid::internal

#endif  // ISOLATION_LIB_MM_CID_ALWAYS_CHECK_H_
