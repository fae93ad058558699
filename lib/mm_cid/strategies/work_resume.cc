// SPDX-License-Identifier: GPL-2.0-or-later
// Placement `work_resume` ([BATCH]): the scan is called directly from the
// rseq return-to-user path (notify resume) after every switch-in of a task
// of the mm, on that CPU; it carries the [WQ] tick kick so that a task that
// never switches still reaches that path.

#include <memory>

#include "mm_cid/builtins.h"

namespace isolation::mm_cid::internal {
namespace {

class WorkResume final : public PlacementStrategy {
 public:
  PlacementTraits traits() const override {
    PlacementTraits t;
    t.tick_kick = true;
    t.runs_on_trigger_cpu = true;
    return t;
  }
  ScanAction OnTick(const ScanTrigger&) const override { return ScanAction::kNone; }
  ScanAction OnReturnToUser(const ScanTrigger& t) const override {
    return t.switched_in && t.active ? ScanAction::kRunHere : ScanAction::kNone;
  }
  bool ScanPending(const ScanTrigger&) const override { return false; }
};

}  // namespace

PlacementEntry WorkResumeEntry() {
  PlacementEntry e{"work_resume",
                   "[BATCH]: scan directly on the rseq return to user after each switch-in (with "
                   "the [WQ] tick kick)",
                   /*negative_control=*/false,
                   [] { return std::unique_ptr<PlacementStrategy>(new WorkResume); }};
  e.aliases = {"resume"};
  e.default_row = false;  // run by name: the seeds' placement table compares the others
  return e;
}

}  // namespace isolation::mm_cid::internal
