// SPDX-License-Identifier: GPL-2.0-or-later
// Tick policy `no_tick_kick` (mainline v6.4-v6.18): the tick does nothing
// for a long-running task beyond what the placement does; a thread that
// never switches keeps its ID until it does (S13).

#include <memory>

#include "mm_cid/builtins.h"

namespace isolation::mm_cid::internal {
namespace {

class NoTickKick final : public TickPolicy {
 public:
  bool kicks_unpreempted() const override { return false; }
  TickAction OnTick(const TickView&) const override { return TickAction::kNone; }
};

}  // namespace

TickPolicyEntry NoTickKickEntry() {
  return {"no_tick_kick", "mainline: no special tick handling of never-preempted tasks",
          /*negative_control=*/false, [] { return std::unique_ptr<TickPolicy>(new NoTickKick); }};
}

}  // namespace isolation::mm_cid::internal
