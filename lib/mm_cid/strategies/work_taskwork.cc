// SPDX-License-Identifier: GPL-2.0-or-later
// Placement `work_taskwork` (mainline, v6.4-v6.18): task_tick_mm_cid() queues
// task_mm_cid_work() as task work of the interrupted thread (task_work_add,
// TWA_RESUME) once mm_cid_next_scan has passed; the work runs on that
// thread's return to user -- on its CPU, isolated or not, and never for a
// thread the tick does not hit.

#include <memory>

#include "mm_cid/builtins.h"

namespace isolation::mm_cid::internal {
namespace {

class WorkTaskWork final : public PlacementStrategy {
 public:
  PlacementTraits traits() const override {
    PlacementTraits t;
    t.runs_on_trigger_cpu = true;
    return t;
  }
  ScanAction OnTick(const ScanTrigger& t) const override {
    if (t.task_work_queued->load(std::memory_order_relaxed)) return ScanAction::kNone;
    if (t.now < t.next_scan) return ScanAction::kNone;
    t.task_work_queued->store(true, std::memory_order_relaxed);  // task_work_add(TWA_RESUME)
    return ScanAction::kNone;
  }
  ScanAction OnReturnToUser(const ScanTrigger& t) const override {
    if (!t.task_work_queued->load(std::memory_order_relaxed)) return ScanAction::kNone;
    t.task_work_queued->store(false, std::memory_order_relaxed);  // work->next = work
    return t.active ? ScanAction::kRunHere : ScanAction::kNone;
  }
  bool ScanPending(const ScanTrigger& t) const override {
    return t.task_work_queued->load(std::memory_order_relaxed);
  }
};

}  // namespace

PlacementEntry WorkTaskWorkEntry() {
  PlacementEntry e{"work_taskwork",
                   "mainline: the tick queues task work on the interrupted thread; runs on its "
                   "return to user, on its CPU",
                   /*negative_control=*/false,
                   [] { return std::unique_ptr<PlacementStrategy>(new WorkTaskWork); }};
  e.label = "task";
  e.aliases = {"task"};
  return e;
}

}  // namespace isolation::mm_cid::internal
