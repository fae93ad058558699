// SPDX-License-Identifier: GPL-2.0-or-later
// Placement `work_unbound` ([WQ] v7-v13, "sched: Move task_mm_cid_work to mm
// work_struct"): the return-to-user path queues the mm's work item on the
// unbound workqueue when a scan is due and none is pending; it runs on a
// housekeeping worker.  Carries the [WQ] tick kick.

#include <memory>

#include "mm_cid/builtins.h"

namespace isolation::mm_cid::internal {
namespace {

class WorkUnbound final : public PlacementStrategy {
 public:
  PlacementTraits traits() const override {
    PlacementTraits t;
    t.tick_kick = true;
    return t;
  }
  ScanAction OnTick(const ScanTrigger&) const override { return ScanAction::kNone; }
  ScanAction OnReturnToUser(const ScanTrigger& t) const override {
    if (!t.active || t.now < t.next_scan) return ScanAction::kNone;
    // relaxed: the flag only keeps one work item per mm in flight.
    if (t.mm_work_pending->exchange(true, std::memory_order_relaxed)) return ScanAction::kNone;
    return ScanAction::kRequest;
  }
  bool ScanPending(const ScanTrigger& t) const override {
    return t.mm_work_pending != nullptr && t.mm_work_pending->load(std::memory_order_relaxed);
  }
  void Dispatch(MmId mm, ScanRunner& runner) const override { runner.QueueWork(mm, 0); }
};

}  // namespace

PlacementEntry WorkUnboundEntry() {
  PlacementEntry e{"work_unbound",
                   "[WQ]: per-mm work on the unbound workqueue, queued from return to user when "
                   "due (housekeeping "
                   "workers; with the tick kick)",
                   /*negative_control=*/false,
                   [] { return std::unique_ptr<PlacementStrategy>(new WorkUnbound); }};
  e.label = "workqueue";
  e.aliases = {"workqueue"};
  return e;
}

}  // namespace isolation::mm_cid::internal
