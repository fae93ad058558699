// SPDX-License-Identifier: GPL-2.0-or-later
// schbench-like batch wake (message tasks wake their workers; wake -> run
// latency), see workload.h.

#include <algorithm>
#include <memory>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "idle_select/workload_internal.h"
#include "isolation/idle_select/workload.h"

namespace isolation::idle_select {

using workload_internal::CheckWorkload;
using workload_internal::Drive;
using workload_internal::RunState;
using workload_internal::SpawnOn;
using workload_internal::StartCpus;

absl::StatusOr<WorkloadResult> RunSchbench(Driver& d, IdleSelectHooks* hooks,
                                           const SchbenchParams& p, Nanos timeout,
                                           const CpuMask& cpus) {
  if (p.message_tasks < 1 || p.workers_per_message < 1 || p.rounds < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("schbench: bad parameters message_tasks=", p.message_tasks,
                     " workers=", p.workers_per_message, " rounds=", p.rounds));
  }
  if (absl::Status st = CheckWorkload(
          d, "schbench", int64_t{p.message_tasks} * (1 + int64_t{p.workers_per_message}), 0,
          timeout, cpus);
      !st.ok()) {
    return st;
  }
  struct Msg {
    Mutex mu;
    std::vector<int> list ABSL_GUARDED_BY(mu);  // worker indexes waiting to be woken
    bool waiting ABSL_GUARDED_BY(mu) = false;   // the message task is blocked
    std::atomic<TaskId> id{kIdleTask};
    int finished ABSL_GUARDED_BY(mu) = 0;
  };
  struct Worker {
    std::atomic<TaskId> id{kIdleTask};
    std::atomic<bool> released{false};
    std::atomic<Nanos> wake_ns{0};
    int rounds = 0;
    bool queued = false;
    std::vector<Nanos> lat;
  };
  struct Shared {
    RunState rs;
    std::vector<std::unique_ptr<Msg>> msgs;
    std::vector<std::unique_ptr<Worker>> workers;
  };
  auto sh = std::make_shared<Shared>();
  const int nw = p.message_tasks * p.workers_per_message;
  for (int m = 0; m < p.message_tasks; ++m) sh->msgs.push_back(std::make_unique<Msg>());
  for (int w = 0; w < nw; ++w) sh->workers.push_back(std::make_unique<Worker>());
  sh->rs.remaining.store(p.message_tasks + nw, std::memory_order_relaxed);
  sh->rs.start_ns = d.Now();
  const std::vector<int> start = StartCpus(d, cpus);
  int rr = 0;
  const int per = p.workers_per_message;
  for (int m = 0; m < p.message_tasks; ++m) {
    auto body = MakeTaskBody([sh, m, per](TaskContext& ctx) -> Step {
      Msg& msg = *sh->msgs[static_cast<size_t>(m)];
      std::vector<int> batch;
      {
        MutexLock lock(msg.mu);
        if (msg.list.empty()) {
          if (msg.finished == per) {
            sh->rs.TaskDone(ctx.now());
            return Step::Exit();
          }
          msg.waiting = true;
          return Step::Block();
        }
        batch.swap(msg.list);
      }
      for (int w : batch) {
        Worker& wk = *sh->workers[static_cast<size_t>(w)];
        wk.wake_ns.store(ctx.now(), std::memory_order_relaxed);
        wk.released.store(true, std::memory_order_release);
        ctx.driver().Wake(wk.id.load(std::memory_order_relaxed), ctx.cpu());
        sh->rs.operations.fetch_add(1, std::memory_order_relaxed);
      }
      return Step::Run(1 * kNsPerUs);
    });
    auto id = SpawnOn(d, hooks, absl::StrCat("sb-msg-", m),
                      start[static_cast<size_t>(rr++ % static_cast<int>(start.size()))], cpus,
                      std::move(body));
    if (!id.ok()) return id.status();
    sh->msgs[static_cast<size_t>(m)]->id.store(*id, std::memory_order_relaxed);
  }
  for (int w = 0; w < nw; ++w) {
    const int m = w / per;
    auto body =
        MakeTaskBody([sh, w, m, rounds = p.rounds, think = p.think_ns](TaskContext& ctx) -> Step {
          Worker& wk = *sh->workers[static_cast<size_t>(w)];
          Msg& msg = *sh->msgs[static_cast<size_t>(m)];
          if (wk.queued) {
            if (!wk.released.load(std::memory_order_acquire)) return Step::Block();  // spurious
            wk.queued = false;
            wk.released.store(false, std::memory_order_relaxed);
            wk.lat.push_back(ctx.now() - wk.wake_ns.load(std::memory_order_relaxed));
            ++wk.rounds;
            return Step::Run(think);
          }
          bool wake_msg = false;
          const bool last = wk.rounds == rounds;
          {
            MutexLock lock(msg.mu);
            if (last) {
              ++msg.finished;
            } else {
              msg.list.push_back(w);
            }
            wake_msg = msg.waiting;
            msg.waiting = false;
          }
          if (wake_msg) ctx.driver().Wake(msg.id.load(std::memory_order_relaxed), ctx.cpu());
          if (last) {
            sh->rs.TaskDone(ctx.now());
            return Step::Exit();
          }
          wk.queued = true;
          return Step::Block();
        });
    auto id = SpawnOn(d, hooks, absl::StrCat("sb-worker-", w),
                      start[static_cast<size_t>(rr++ % static_cast<int>(start.size()))], cpus,
                      std::move(body));
    if (!id.ok()) return id.status();
    sh->workers[static_cast<size_t>(w)]->id.store(*id, std::memory_order_relaxed);
  }
  auto r = Drive(d, sh->rs, timeout);
  if (!r.ok()) return r;
  for (const auto& w : sh->workers)
    r->latencies.insert(r->latencies.end(), w->lat.begin(), w->lat.end());
  return r;
}

}  // namespace isolation::idle_select
