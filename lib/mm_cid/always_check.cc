// SPDX-License-Identifier: GPL-2.0-or-later
// The full and the incremental form of MmCid::CheckAlways() (always_check.h).

#include "mm_cid/always_check.h"

#include <atomic>
#include <unordered_set>

#include "absl/strings/str_cat.h"

namespace isolation::mm_cid::internal {
namespace {

std::string DuplicateId(const CpuCheck& r, int cpu) {
  return absl::StrCat("I1: ID ", r.id, " of mm ", r.mm, " held twice (CPU ", cpu, ")");
}

std::atomic<bool> audit_on{false};
std::atomic<int64_t> audit_mismatches{0};

}  // namespace

void SetIncrementalCheckAudit(bool on) { audit_on.store(on, std::memory_order_relaxed); }
int64_t IncrementalCheckAuditMismatches() {
  return audit_mismatches.load(std::memory_order_relaxed);
}

void IncrementalAlwaysCheck::Audit(const AlwaysInvariants& inv, int task_bound,
                                   int mm_bound) const {
  int64_t bad = 0;
  for (int c = 0; c < num_cpus_; ++c) {
    Findings before(nullptr);
    Findings after(nullptr);
    const CpuCheck now = inv.CheckCpu(c, before, after);
    const CpuState& st = cpus_[static_cast<size_t>(c)];
    const bool same = now.task == st.seen.task && now.unique == st.seen.unique &&
                      (!now.unique || (now.mm == st.seen.mm && now.id == st.seen.id)) &&
                      (before.found() || after.found()) == st.violated;
    bad += same ? 0 : 1;
  }
  for (TaskId t = 0; t < task_bound; ++t) {
    Findings f(nullptr);
    inv.CheckTask(t, f);
    bad += f.found() == (task_violated_[static_cast<size_t>(t)] != 0) ? 0 : 1;
  }
  for (MmId m = 0; m < mm_bound; ++m) {
    Findings f(nullptr);
    inv.CheckMm(m, f);
    bad += f.found() == (mm_violated_[static_cast<size_t>(m)] != 0) ? 0 : 1;
  }
  audit_mismatches.fetch_add(bad, std::memory_order_relaxed);
}

std::vector<std::string> CheckAlwaysFull(const AlwaysInvariants& inv, int num_cpus) {
  std::vector<std::string> v;
  std::unordered_set<uint64_t> seen;  // I1: (mm, ID) of the running tasks so far
  for (int c = 0; c < num_cpus; ++c) {
    Findings before(&v);
    std::vector<std::string> after_text;
    Findings after(&after_text);
    const CpuCheck r = inv.CheckCpu(c, before, after);
    if (r.unique && !seen.insert((static_cast<uint64_t>(static_cast<uint32_t>(r.mm)) << 32) |
                                 static_cast<uint32_t>(r.id))
                         .second) {
      v.push_back(DuplicateId(r, c));
    }
    v.insert(v.end(), after_text.begin(), after_text.end());
  }
  for (TaskId t = 0; t < inv.TaskBound(); ++t) {
    Findings f(&v);
    inv.CheckTask(t, f);
  }
  for (MmId m = 0; m < inv.MmBound(); ++m) {
    Findings f(&v);
    inv.CheckMm(m, f);
  }
  Findings g(&v);
  inv.CheckGlobal(g);
  return v;
}

IncrementalAlwaysCheck::IncrementalAlwaysCheck(int num_cpus, int max_tasks, int max_mms)
    : num_cpus_(num_cpus),
      max_tasks_(max_tasks),
      max_mms_(max_mms),
      id_journal_bound_(static_cast<size_t>(4 * num_cpus + 64)),
      cpu_dirty_(static_cast<size_t>(num_cpus), 0),
      task_dirty_(static_cast<size_t>(max_tasks), 0),
      mm_dirty_(static_cast<size_t>(max_mms), 0),
      cpus_(static_cast<size_t>(num_cpus)),
      task_violated_(static_cast<size_t>(max_tasks), 0),
      mm_violated_(static_cast<size_t>(max_mms), 0),
      task_head_(static_cast<size_t>(max_tasks), -1),
      task_lists_(num_cpus),
      owner_head_(static_cast<size_t>(max_mms)),
      owner_lists_(num_cpus) {}

void IncrementalAlwaysCheck::CpuLists::Insert(int& head, int cpu) {
  const auto c = static_cast<size_t>(cpu);
  next_[c] = head;
  prev_[c] = -1;
  if (head >= 0) prev_[static_cast<size_t>(head)] = cpu;
  head = cpu;
}

void IncrementalAlwaysCheck::CpuLists::Remove(int& head, int cpu) {
  const auto c = static_cast<size_t>(cpu);
  if (prev_[c] >= 0) {
    next_[static_cast<size_t>(prev_[c])] = next_[c];
  } else {
    head = next_[c];
  }
  if (next_[c] >= 0) prev_[static_cast<size_t>(next_[c])] = prev_[c];
  next_[c] = prev_[c] = -1;
}

int* IncrementalAlwaysCheck::OwnerHead(MmId mm, int32_t id, bool create) {
  if (mm >= 0 && mm < max_mms_ && id >= 0 && id < num_cpus_) {
    std::vector<int>& heads = owner_head_[static_cast<size_t>(mm)];
    if (static_cast<size_t>(id) >= heads.size()) {
      if (!create) return nullptr;
      heads.resize(static_cast<size_t>(id) + 1, -1);
    }
    return &heads[static_cast<size_t>(id)];
  }
  if (!create) {
    auto it = owner_head_far_.find(Key(mm, id));
    return it == owner_head_far_.end() ? nullptr : &it->second;
  }
  return &owner_head_far_.try_emplace(Key(mm, id), -1).first->second;
}

void IncrementalAlwaysCheck::ReevaluateCpu(const AlwaysInvariants& inv, int cpu) {
  CpuState& st = cpus_[static_cast<size_t>(cpu)];
  // Withdraw what the previous evaluation contributed.
  if (st.seen.task >= 0 && st.seen.task < max_tasks_) {
    task_lists_.Remove(task_head_[static_cast<size_t>(st.seen.task)], cpu);
  }
  if (st.seen.unique) {
    int* head = OwnerHead(st.seen.mm, st.seen.id, /*create=*/false);
    if (!owner_lists_.Alone(cpu)) --duplicate_holders_;
    owner_lists_.Remove(*head, cpu);
    if (*head < 0 &&
        !(st.seen.mm >= 0 && st.seen.mm < max_mms_ && st.seen.id >= 0 && st.seen.id < num_cpus_)) {
      owner_head_far_.erase(Key(st.seen.mm, st.seen.id));
    }
  }
  if (st.violated) --cpus_violated_;
  // Evaluate now and contribute.
  Findings before(nullptr);
  Findings after(nullptr);
  st.seen = inv.CheckCpu(cpu, before, after);
  st.violated = before.found() || after.found();
  if (st.violated) ++cpus_violated_;
  if (st.seen.task >= 0 && st.seen.task < max_tasks_) {
    task_lists_.Insert(task_head_[static_cast<size_t>(st.seen.task)], cpu);
  }
  if (st.seen.unique) {
    int* head = OwnerHead(st.seen.mm, st.seen.id, /*create=*/true);
    if (*head >= 0) ++duplicate_holders_;
    owner_lists_.Insert(*head, cpu);
  }
}

bool IncrementalAlwaysCheck::AnyViolation(const AlwaysInvariants& inv) {
  if (all_dirty_) {
    all_dirty_ = false;
    dirty_ids_.clear();
    for (int c = 0; c < num_cpus_; ++c) MarkCpu(c);
    for (TaskId t = 0; t < max_tasks_; ++t) NoteTask(t);
    for (MmId m = 0; m < max_mms_; ++m) NoteMm(m);
  }
  // A bitmap change can only affect the CPUs that held that ID.
  for (uint64_t key : dirty_ids_) {
    const int* head =
        OwnerHead(static_cast<MmId>(key >> 32), static_cast<int32_t>(key & 0xFFFFFFFFu), false);
    for (int c = head == nullptr ? -1 : *head; c >= 0; c = owner_lists_.Next(c)) MarkCpu(c);
  }
  dirty_ids_.clear();
  const int task_bound = inv.TaskBound();
  for (TaskId t : dirty_tasks_) {
    task_dirty_[static_cast<size_t>(t)] = 0;
    for (int c = task_head_[static_cast<size_t>(t)]; c >= 0; c = task_lists_.Next(c)) MarkCpu(c);
    if (t >= task_bound) continue;  // never forked: nothing to check
    Findings f(nullptr);
    inv.CheckTask(t, f);
    char& was = task_violated_[static_cast<size_t>(t)];
    tasks_violated_ += static_cast<int>(f.found()) - was;
    was = f.found() ? 1 : 0;
  }
  dirty_tasks_.clear();
  for (int c : dirty_cpus_) {
    cpu_dirty_[static_cast<size_t>(c)] = 0;
    ReevaluateCpu(inv, c);
  }
  dirty_cpus_.clear();
  const int mm_bound = inv.MmBound();
  for (MmId m : dirty_mms_) {
    mm_dirty_[static_cast<size_t>(m)] = 0;
    if (m >= mm_bound) continue;  // not created yet
    Findings f(nullptr);
    inv.CheckMm(m, f);
    char& was = mm_violated_[static_cast<size_t>(m)];
    mms_violated_ += static_cast<int>(f.found()) - was;
    was = f.found() ? 1 : 0;
  }
  dirty_mms_.clear();
  if (audit_on.load(std::memory_order_relaxed)) Audit(inv, task_bound, mm_bound);
  Findings g(nullptr);
  inv.CheckGlobal(g);
  return g.found() || cpus_violated_ > 0 || duplicate_holders_ > 0 || tasks_violated_ > 0 ||
         mms_violated_ > 0;
}

}  // namespace isolation::mm_cid::internal
