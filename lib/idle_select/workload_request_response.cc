// SPDX-License-Identifier: GPL-2.0-or-later
// netperf-RR analogue: client/server pairs with a wire delay, see workload.h.

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

absl::StatusOr<WorkloadResult> RunRequestResponse(Driver& d, IdleSelectHooks* hooks,
                                                  const RequestResponseParams& p, Nanos timeout,
                                                  const CpuMask& cpus) {
  if (p.pairs < 1 || p.transactions < 1 || p.work_per_message < 0 || p.net_delay_ns < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "request/response: bad parameters pairs=", p.pairs, " transactions=", p.transactions,
        " work=", p.work_per_message, " net_delay=", p.net_delay_ns));
  }
  if (absl::Status st = CheckWorkload(d, "request/response", int64_t{p.pairs} * 2,
                                      p.work_jitter_pct, timeout, cpus);
      !st.ok()) {
    return st;
  }
  struct Pair {
    Channel request{1}, response{1};
  };
  struct Shared {
    RunState rs;
    std::vector<std::unique_ptr<Pair>> pairs;
  };
  auto sh = std::make_shared<Shared>();
  for (int i = 0; i < p.pairs; ++i) sh->pairs.push_back(std::make_unique<Pair>());
  sh->rs.remaining.store(2 * p.pairs, std::memory_order_relaxed);
  sh->rs.start_ns = d.Now();
  const std::vector<int> start = StartCpus(d, cpus);
  int rr = 0;
  for (int i = 0; i < p.pairs; ++i) {
    for (int side = 0; side < 2; ++side) {
      // Client (side 0): work, wire, send request, wait for the response.
      // Server (side 1): wait for a request, work, wire, send the response.
      enum Phase { kWork, kWire, kSend, kWait };
      struct SideState {
        Phase phase;
        int done = 0;
      };
      auto st = std::make_shared<SideState>(SideState{side == 0 ? kWork : kWait});
      Pair* pair = sh->pairs[static_cast<size_t>(i)].get();
      auto body =
          MakeTaskBody([sh, st, pair, side, n = p.transactions, work = p.work_per_message,
                        wire = p.net_delay_ns, jit = p.work_jitter_pct](TaskContext& ctx) -> Step {
            Channel& out = side == 0 ? pair->request : pair->response;
            Channel& in = side == 0 ? pair->response : pair->request;
            for (;;) {
              switch (st->phase) {
                case kWork:
                  st->phase = kWire;
                  return Step::Run(Jitter(ctx, work, jit));
                case kWire:
                  st->phase = kSend;
                  if (wire > 0) return Step::Sleep(Jitter(ctx, wire, jit));
                  break;
                case kSend:
                  // Capacity 1 and strict alternation: the partner has consumed
                  // the previous message, so the write cannot fail.
                  if (!out.TryWrite(ctx.driver(), ctx.task(), ctx.cpu())) return Step::Block();
                  if (side == 1 && ++st->done == n) {
                    sh->rs.TaskDone(ctx.now());
                    return Step::Exit();
                  }
                  st->phase = kWait;
                  break;
                case kWait:
                  if (side == 0 && st->done == n) {
                    sh->rs.TaskDone(ctx.now());
                    return Step::Exit();
                  }
                  if (!in.TryRead(ctx.driver(), ctx.task(), ctx.cpu())) return Step::Block();
                  if (side == 0) {
                    ++st->done;
                    sh->rs.operations.fetch_add(1, std::memory_order_relaxed);
                    if (st->done == n) {
                      sh->rs.TaskDone(ctx.now());
                      return Step::Exit();
                    }
                  }
                  st->phase = kWork;
                  break;
              }
            }
          });
      auto id = SpawnOn(d, hooks, absl::StrCat(side == 0 ? "rr-client-" : "rr-server-", i),
                        start[static_cast<size_t>(rr++ % static_cast<int>(start.size()))], cpus,
                        std::move(body));
      if (!id.ok()) return id.status();
    }
  }
  return Drive(d, sh->rs, timeout);
}

}  // namespace isolation::idle_select
