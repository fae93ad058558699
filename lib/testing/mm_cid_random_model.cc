// SPDX-License-Identifier: GPL-2.0-or-later
// The random-schedule model of the mm_cid direct-API checks, see
// mm_cid_random_model.h.

#include "testing/mm_cid_random_model.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace isolation::testing::mm_cid::internal {

using isolation::mm_cid::kNoMm;
using isolation::mm_cid::kNoTask;
using isolation::mm_cid::MmCidSwitcher;

RandomModel::RandomModel(int p_, const MmCidVariant& v, uint64_t seed, bool via_switcher)
    : p(p_), rng(seed), curr(static_cast<size_t>(p_), kNoTask) {
  auto r = MmCid::Create(p, v, MmCid::Limits{512, 256});
  if (!r.ok()) {
    violations.push_back(absl::StrCat("Create: ", r.status().ToString()));
    return;
  }
  m = std::move(*r);
  runner = std::make_unique<DirectScanRunner>(*m);
  if (via_switcher) switcher = std::make_unique<MmCidSwitcher>(*m);
  absl::StatusOr<VariantTraits> t = isolation::mm_cid::DescribeVariant(v);
  if (!t.ok()) {
    violations.push_back(absl::StrCat("DescribeVariant: ", t.status().ToString()));
    return;
  }
  watch = std::make_unique<AllocationWatch>(*m, *t);
}

void RandomModel::SwitchHook(int cpu, TaskId prev, TaskId next) {
  if (switcher != nullptr) {
    switcher->ContextSwitch(cpu, prev, next, now);
  } else {
    m->ContextSwitch(cpu, prev, next, now);
  }
}

CpuMask RandomModel::RandomAffinity() {
  const int kind = Rand(4);
  if (kind == 0) return CpuMask::Full(p);
  if (kind == 1) return CpuMask::Of(p, Rand(p));
  CpuMask mask(p);
  const int n = 1 + Rand(p);
  for (int i = 0; i < n; ++i) mask.Set(Rand(p));
  return mask;
}

void RandomModel::EnsureCounters(MmId mm) {
  while (static_cast<int>(counters.size()) <= mm) counters.emplace_back(static_cast<size_t>(p), 0);
}

bool RandomModel::Spawn(MmId mm, TaskId parent) {
  if (next_task >= 500) return false;
  TaskId t = next_task++;
  T& task = tasks.emplace_back();
  task.affinity = RandomAffinity();
  if (mm == kNoMm) {
    auto r = m->CreateMm(task.affinity, now);
    if (!r.ok()) {
      violations.push_back(absl::StrCat("CreateMm: ", r.status().ToString()));
      return false;
    }
    mm = *r;
    runner->MmCreated(mm, now);
  }
  EnsureCounters(mm);
  task.mm = mm;
  task.cpu = task.affinity.First();
  task.alive = true;
  if (absl::Status s = m->Fork(parent, t, mm, task.affinity, now); !s.ok()) {
    violations.push_back(absl::StrCat("Fork: ", s.ToString()));
  }
  return true;
}

void RandomModel::SwitchOut(int cpu) {
  TaskId prev = curr[static_cast<size_t>(cpu)];
  if (prev == kNoTask) return;
  T& t = tasks[static_cast<size_t>(prev)];
  if (t.pending >= 0) {
    const int32_t id = m->TaskCid(prev);
    if (id >= 0 && id < p) {
      counters[static_cast<size_t>(t.mm)][static_cast<size_t>(id)] = t.pending;
      ++increments;
    }
    t.pending = -1;
  }
}

void RandomModel::SwitchIn(TaskId next) {
  if (next == kNoTask) return;
  T& t = tasks[static_cast<size_t>(next)];
  const int32_t id = m->TaskCid(next);
  if (id >= 0 && id < p && m->TaskActive(next)) {
    t.pending = counters[static_cast<size_t>(t.mm)][static_cast<size_t>(id)] + 1;
  }
}

void RandomModel::ContextSwitch(int cpu, TaskId next) {
  SwitchOut(cpu);
  if (watch != nullptr && next != kNoTask) watch->Before(next);
  SwitchHook(cpu, curr[static_cast<size_t>(cpu)], next);
  curr[static_cast<size_t>(cpu)] = next;
  if (watch != nullptr && next != kNoTask) watch->After(next, violations);
  SwitchIn(next);
}

std::vector<TaskId> RandomModel::QueuedOn(int cpu) {
  std::vector<TaskId> v;
  for (size_t i = 0; i < tasks.size(); ++i) {
    if (tasks[i].alive && tasks[i].cpu == cpu &&
        curr[static_cast<size_t>(cpu)] != static_cast<TaskId>(i)) {
      v.push_back(static_cast<TaskId>(i));
    }
  }
  return v;
}

void RandomModel::Step() {
  now += 1 + Rand(3 * static_cast<int>(kNsPerMs));
  const int cpu = Rand(p);
  const TaskId cur = curr[static_cast<size_t>(cpu)];
  const int ev = Rand(100);
  if (ev < 40) {  // switch to a queued task or idle
    auto q = QueuedOn(cpu);
    TaskId next = q.empty() || Rand(5) == 0
                      ? kNoTask
                      : q[static_cast<size_t>(Rand(static_cast<int>(q.size())))];
    ContextSwitch(cpu, next);
    if (next != kNoTask) runner->ReturnToUser(cpu, next, now);
  } else if (ev < 55) {  // migrate a queued task within its affinity
    auto q = QueuedOn(cpu);
    if (q.empty()) return;
    TaskId t = q[static_cast<size_t>(Rand(static_cast<int>(q.size())))];
    T& task = tasks[static_cast<size_t>(t)];
    int to = task.affinity.Nth(Rand(task.affinity.Weight()));
    if (to == cpu) return;
    m->Migrate(t, cpu, to, now);
    task.cpu = to;
  } else if (ev < 75) {  // tick + return to user
    if (cur == kNoTask) return;
    const int32_t id_before = m->TaskCid(cur);
    if (watch != nullptr) watch->Before(cur);  // the [WQ] kick re-takes IDs in place
    runner->Tick(cpu, cur, now);
    if (watch != nullptr) watch->After(cur, violations);
    if (m->TaskCid(cur) != id_before) {
      // A tick policy re-took the running task's ID; the kernel signals
      // that with rseq_preempt(), which aborts the task's rseq critical
      // section: it restarts, loading counter[new ID].
      tasks[static_cast<size_t>(cur)].pending = -1;
      SwitchIn(cur);
    }
    runner->ReturnToUser(cpu, cur, now);
  } else if (ev < 85) {
    runner->Housekeeping(now);
  } else if (ev < 90) {  // fork: a thread of the current task's mm, or a new process
    if (cur != kNoTask && Rand(2) == 0) {
      Spawn(tasks[static_cast<size_t>(cur)].mm, cur);
    } else {
      Spawn(kNoMm, cur);
    }
  } else if (ev < 94) {  // exit the current task
    if (cur == kNoTask) return;
    SwitchOut(cpu);
    tasks[static_cast<size_t>(cur)].pending = -1;
    if (absl::Status s = m->Exit(cpu, cur, now); !s.ok())
      violations.push_back(absl::StrCat("Exit: ", s.ToString()));
    if (m->TaskCid(cur) != -1)
      violations.push_back(absl::StrCat("I15: task ", cur, " holds an ID after exit"));
    tasks[static_cast<size_t>(cur)].alive = false;
    SwitchHook(cpu, cur, kNoTask);
    curr[static_cast<size_t>(cpu)] = kNoTask;
  } else if (ev < 96) {  // exec: fresh mm
    if (cur == kNoTask) return;
    T& task = tasks[static_cast<size_t>(cur)];
    SwitchOut(cpu);
    auto r = m->Exec(cpu, cur, task.affinity, now);
    if (!r.ok()) {
      violations.push_back(absl::StrCat("Exec: ", r.status().ToString()));
      return;
    }
    task.mm = *r;
    runner->MmCreated(task.mm, now);
    EnsureCounters(task.mm);
    if (m->TaskCid(cur) != 0) {
      violations.push_back(
          absl::StrCat("S10/S1: exec gave task ", cur, " ID ", m->TaskCid(cur), ", not 0"));
    }
    SwitchIn(cur);
  } else {  // affinity change of a queued task (grow or move)
    auto q = QueuedOn(cpu);
    if (q.empty()) return;
    TaskId t = q[static_cast<size_t>(Rand(static_cast<int>(q.size())))];
    T& task = tasks[static_cast<size_t>(t)];
    task.affinity = RandomAffinity();
    if (absl::Status s = m->SetAffinity(t, task.affinity, now); !s.ok()) {
      violations.push_back(absl::StrCat("SetAffinity: ", s.ToString()));
    }
    if (!task.affinity.Test(task.cpu)) {
      const int to = task.affinity.First();
      m->Migrate(t, task.cpu, to, now);
      task.cpu = to;
    }
  }
}

int64_t RandomModel::CounterSum() const {
  int64_t s = 0;
  for (auto& v : counters) {
    for (int64_t x : v) s += x;
  }
  return s;
}

}  // namespace isolation::testing::mm_cid::internal
