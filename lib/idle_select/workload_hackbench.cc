// SPDX-License-Identifier: GPL-2.0-or-later
// hackbench-like groups (rt-tests hackbench.c): senders write every receiver
// of their group through a bounded pipe, see workload.h.

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
using workload_internal::Jitter;
using workload_internal::RunState;
using workload_internal::SpawnOn;
using workload_internal::StartCpus;

absl::StatusOr<WorkloadResult> RunHackbench(Driver& d, IdleSelectHooks* hooks,
                                            const HackbenchParams& p, Nanos timeout,
                                            const CpuMask& cpus) {
  if (p.groups < 1 || p.senders < 1 || p.messages < 1 || p.channel_capacity < 1) {
    return absl::InvalidArgumentError(absl::StrCat("hackbench: bad parameters groups=", p.groups,
                                                   " senders=", p.senders, " messages=", p.messages,
                                                   " capacity=", p.channel_capacity));
  }
  if (absl::Status st = CheckWorkload(d, "hackbench", int64_t{p.groups} * p.senders * 2,
                                      p.work_jitter_pct, timeout, cpus);
      !st.ok()) {
    return st;
  }
  struct Shared {
    RunState rs;
    std::vector<std::unique_ptr<Channel>> channels;  // one per receiver
  };
  auto sh = std::make_shared<Shared>();
  const int receivers = p.senders;
  for (int i = 0; i < p.groups * receivers; ++i)
    sh->channels.push_back(std::make_unique<Channel>(p.channel_capacity));
  sh->rs.remaining.store(p.groups * (p.senders + receivers), std::memory_order_relaxed);
  sh->rs.start_ns = d.Now();
  const std::vector<int> start = StartCpus(d, cpus);
  int rr = 0;
  for (int g = 0; g < p.groups; ++g) {
    for (int r = 0; r < receivers; ++r) {
      Channel* ch = sh->channels[static_cast<size_t>(g * receivers + r)].get();
      const int64_t total = int64_t{p.senders} * p.messages;
      auto received = std::make_shared<int64_t>(0);
      auto body = MakeTaskBody([sh, ch, total, received, work = p.work_per_message,
                                jit = p.work_jitter_pct](TaskContext& ctx) -> Step {
        if (*received == total) {
          sh->rs.TaskDone(ctx.now());
          return Step::Exit();
        }
        if (!ch->TryRead(ctx.driver(), ctx.task(), ctx.cpu())) return Step::Block();
        ++*received;
        sh->rs.operations.fetch_add(1, std::memory_order_relaxed);
        return Step::Run(Jitter(ctx, work, jit));
      });
      auto id = SpawnOn(d, hooks, absl::StrCat("hb-recv-", g, "-", r),
                        start[static_cast<size_t>(rr++ % static_cast<int>(start.size()))], cpus,
                        std::move(body));
      if (!id.ok()) return id.status();
    }
    for (int s = 0; s < p.senders; ++s) {
      struct SenderState {
        int next = 0;
        int round = 0;
      };
      auto st = std::make_shared<SenderState>();
      auto body =
          MakeTaskBody([sh, st, g, receivers, messages = p.messages, work = p.work_per_message,
                        jit = p.work_jitter_pct](TaskContext& ctx) -> Step {
            if (st->round == messages) {
              sh->rs.TaskDone(ctx.now());
              return Step::Exit();
            }
            Channel* ch = sh->channels[static_cast<size_t>(g * receivers + st->next)].get();
            if (!ch->TryWrite(ctx.driver(), ctx.task(), ctx.cpu())) return Step::Block();
            if (++st->next == receivers) {
              st->next = 0;
              ++st->round;
            }
            return Step::Run(Jitter(ctx, work, jit));
          });
      auto id = SpawnOn(d, hooks, absl::StrCat("hb-send-", g, "-", s),
                        start[static_cast<size_t>(rr++ % static_cast<int>(start.size()))], cpus,
                        std::move(body));
      if (!id.ok()) return id.status();
    }
  }
  return Drive(d, sh->rs, timeout);
}

}  // namespace isolation::idle_select
