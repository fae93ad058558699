// SPDX-License-Identifier: GPL-2.0-or-later
// What the message-passing workloads share: the channel (a pipe between
// user-level tasks) and the helpers of workload_internal.h.

#include <algorithm>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "idle_select/workload_internal.h"
#include "isolation/core/mutex.h"
#include "isolation/idle_select/workload.h"

namespace isolation::idle_select {

bool Channel::TryWrite(Driver& d, TaskId self, int waker_cpu) {
  TaskId to_wake = kIdleTask;
  {
    MutexLock lock(mu_);
    if (count_ >= capacity_) {
      if (std::find(waiting_writers_.begin(), waiting_writers_.end(), self) ==
          waiting_writers_.end()) {
        waiting_writers_.push_back(self);
      }
      return false;
    }
    ++count_;
    // A writer that was recorded earlier and got through on a re-check is
    // no longer waiting (else a later read would wake it instead of a real
    // waiter).
    std::erase(waiting_writers_, self);
    if (!waiting_readers_.empty()) {
      to_wake = waiting_readers_.front();
      waiting_readers_.pop_front();
    }
  }
  if (to_wake != kIdleTask) d.Wake(to_wake, waker_cpu);
  return true;
}

bool Channel::TryRead(Driver& d, TaskId self, int waker_cpu) {
  TaskId to_wake = kIdleTask;
  {
    MutexLock lock(mu_);
    if (count_ == 0) {
      if (std::find(waiting_readers_.begin(), waiting_readers_.end(), self) ==
          waiting_readers_.end()) {
        waiting_readers_.push_back(self);
      }
      return false;
    }
    --count_;
    std::erase(waiting_readers_, self);
    if (!waiting_writers_.empty()) {
      to_wake = waiting_writers_.front();
      waiting_writers_.pop_front();
    }
  }
  if (to_wake != kIdleTask) d.Wake(to_wake, waker_cpu);
  return true;
}

namespace workload_internal {

Nanos Jitter(TaskContext& ctx, Nanos base, int pct) {
  if (pct <= 0 || base <= 0) return base;
  const Nanos span =
      base / 100 * pct + base % 100 * pct / 100;  // base * pct / 100 without overflow
  const uint64_t draw = ctx.rng()() % (2 * static_cast<uint64_t>(span) + 1);
  return SaturatingAdd(
      base - span, static_cast<Nanos>(std::min<uint64_t>(draw, static_cast<uint64_t>(kNanosMax))));
}

absl::Status CheckWorkload(const Driver& d, const char* name, int64_t tasks, int jitter_pct,
                           Nanos timeout, const CpuMask& cpus) {
  if (tasks < 1 || tasks > kMaxHarnessTasks) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ": ", tasks, " tasks, outside [1, ", kMaxHarnessTasks, "]"));
  }
  if (jitter_pct < 0 || jitter_pct > 100) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ": work_jitter_pct ", jitter_pct, " outside [0, 100]"));
  }
  if (timeout < 0)
    return absl::InvalidArgumentError(absl::StrCat(name, ": negative timeout ", timeout));
  if (cpus.nbits() != 0 && cpus.nbits() != d.num_cpus()) {
    return absl::InvalidArgumentError(absl::StrCat(name, ": cpu mask of ", cpus.nbits(),
                                                   " bits for a machine of ", d.num_cpus()));
  }
  if (!cpus.Empty() && !cpus.Intersects(d.topology().online())) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ": cpu mask '", cpus.ToString(), "' has no online cpu"));
  }
  return absl::OkStatus();
}

std::vector<int> StartCpus(const Driver& d, const CpuMask& cpus) {
  std::vector<int> out;
  const CpuMask& online = d.topology().online();
  for (int c = 0; c < d.num_cpus(); ++c) {
    if (online.Test(c) && (cpus.nbits() == 0 || cpus.Empty() || cpus.Test(c))) out.push_back(c);
  }
  return out;
}

absl::StatusOr<TaskId> SpawnOn(Driver& d, IdleSelectHooks* hooks, std::string name, int cpu,
                               const CpuMask& cpus, std::unique_ptr<TaskBody> body) {
  TaskSpec spec;
  spec.name = std::move(name);
  spec.cpu = cpu;
  if (cpus.nbits() == d.num_cpus() && !cpus.Empty()) spec.affinity = cpus;
  spec.body = std::move(body);
  auto id = d.Spawn(std::move(spec));
  if (!id.ok()) return id.status();
  if (hooks != nullptr) {
    absl::Status s = hooks->RegisterTask(*id, cpus.nbits() == d.num_cpus() ? cpus : CpuMask());
    if (!s.ok()) return s;
  }
  return *id;
}

absl::StatusOr<WorkloadResult> Drive(Driver& d, RunState& rs, Nanos timeout) {
  const Nanos step = d.poll_interval();
  while (rs.remaining.load(std::memory_order_acquire) > 0 && d.Now() - rs.start_ns < timeout) {
    absl::Status s = d.RunFor(step);
    if (!s.ok()) return s;
  }
  WorkloadResult r;
  r.completed = rs.remaining.load(std::memory_order_acquire) == 0;
  r.duration_ns =
      r.completed ? rs.end_ns.load(std::memory_order_acquire) - rs.start_ns : d.Now() - rs.start_ns;
  r.operations = rs.operations.load(std::memory_order_relaxed);
  return r;
}

}  // namespace workload_internal
}  // namespace isolation::idle_select
