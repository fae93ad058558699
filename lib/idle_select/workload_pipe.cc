// SPDX-License-Identifier: GPL-2.0-or-later
// sched-pipe ping-pong (perf bench sched pipe), see workload.h.

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

absl::StatusOr<WorkloadResult> RunPipe(Driver& d, IdleSelectHooks* hooks, const PipeParams& p,
                                       Nanos timeout, const CpuMask& cpus) {
  if (p.round_trips < 1 || p.pairs < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("pipe: round_trips=", p.round_trips, " pairs=", p.pairs));
  }
  if (absl::Status st =
          CheckWorkload(d, "pipe", int64_t{p.pairs} * 2, p.work_jitter_pct, timeout, cpus);
      !st.ok()) {
    return st;
  }
  struct PairChannels {
    Channel ab{1}, ba{1};
  };
  struct Shared {
    RunState rs;
    std::vector<std::unique_ptr<PairChannels>> pairs;
  };
  auto sh = std::make_shared<Shared>();
  for (int i = 0; i < p.pairs; ++i) sh->pairs.push_back(std::make_unique<PairChannels>());
  sh->rs.remaining.store(2 * p.pairs, std::memory_order_relaxed);
  sh->rs.start_ns = d.Now();
  const std::vector<int> start = StartCpus(d, cpus);
  for (int pair = 0; pair < p.pairs; ++pair) {
    PairChannels* ch = sh->pairs[static_cast<size_t>(pair)].get();
    for (int side = 0; side < 2; ++side) {
      struct SideState {
        int done = 0;
        bool wrote = false;  // A: wrote this round; B: read this round
      };
      auto st = std::make_shared<SideState>();
      auto body = MakeTaskBody([sh, ch, st, side, n = p.round_trips, work0 = p.work_per_message,
                                jit = p.work_jitter_pct](TaskContext& ctx) -> Step {
        const Nanos work = Jitter(ctx, work0, jit);
        if (st->done == n) {
          sh->rs.TaskDone(ctx.now());
          return Step::Exit();
        }
        Channel& out = side == 0 ? ch->ab : ch->ba;
        Channel& in = side == 0 ? ch->ba : ch->ab;
        if (side == 0) {
          // A: write, then block on the reply.
          if (!st->wrote) {
            if (!out.TryWrite(ctx.driver(), ctx.task(), ctx.cpu())) return Step::Block();
            st->wrote = true;
            return Step::Run(work);
          }
          if (!in.TryRead(ctx.driver(), ctx.task(), ctx.cpu())) return Step::Block();
          st->wrote = false;
          ++st->done;
          sh->rs.operations.fetch_add(1, std::memory_order_relaxed);
          return Step::Run(work);
        }
        // B: read, then reply.
        if (!st->wrote) {
          if (!in.TryRead(ctx.driver(), ctx.task(), ctx.cpu())) return Step::Block();
          st->wrote = true;
          return Step::Run(work);
        }
        if (!out.TryWrite(ctx.driver(), ctx.task(), ctx.cpu())) return Step::Block();
        st->wrote = false;
        ++st->done;
        return Step::Run(work);
      });
      const int slot = (2 * pair + side) % static_cast<int>(start.size());
      auto id = SpawnOn(d, hooks, side == 0 ? "pipe-a" : "pipe-b", start[static_cast<size_t>(slot)],
                        cpus, std::move(body));
      if (!id.ok()) return id.status();
    }
  }
  return Drive(d, sh->rs, timeout);
}

}  // namespace isolation::idle_select
