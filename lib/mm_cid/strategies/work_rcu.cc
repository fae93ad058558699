// SPDX-License-Identifier: GPL-2.0-or-later
// Placement `work_rcu` (patch 2/2 of [SEED]): the tick calls call_rcu()
// instead of queueing task work; the callback runs the scan wherever RCU
// callbacks run -- with rcu_nocbs (implied by nohz_full) on housekeeping
// CPUs.  One rcu head per mm: at most one callback in flight per mm.

#include <memory>

#include "mm_cid/builtins.h"

namespace isolation::mm_cid::internal {
namespace {

class WorkRcu final : public PlacementStrategy {
 public:
  PlacementTraits traits() const override { return PlacementTraits{}; }
  ScanAction OnTick(const ScanTrigger& t) const override {
    if (t.now < t.next_scan) return ScanAction::kNone;
    // relaxed: the flag only keeps one callback per mm in flight.
    if (t.mm_work_pending->exchange(true, std::memory_order_relaxed)) return ScanAction::kNone;
    return ScanAction::kRequest;
  }
  ScanAction OnReturnToUser(const ScanTrigger&) const override { return ScanAction::kNone; }
  bool ScanPending(const ScanTrigger& t) const override {
    return t.mm_work_pending != nullptr && t.mm_work_pending->load(std::memory_order_relaxed);
  }
  void Start(ScanRunner& runner) const override { runner.PrepareRcu(); }
  void Dispatch(MmId mm, ScanRunner& runner) const override { runner.CallRcu(mm); }
};

}  // namespace

PlacementEntry WorkRcuEntry() {
  PlacementEntry e{"work_rcu",
                   "patch 2/2 of [SEED]: the tick calls call_rcu(); the callback scans on an "
                   "offloaded (housekeeping) CPU",
                   /*negative_control=*/false,
                   [] { return std::unique_ptr<PlacementStrategy>(new WorkRcu); }};
  e.label = "rcu";
  e.aliases = {"rcu"};
  return e;
}

}  // namespace isolation::mm_cid::internal
