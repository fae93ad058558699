// SPDX-License-Identifier: GPL-2.0-or-later
// Tick policy `tick_kick` ([WQ] v13 2/3 <20250613091229.21500-3-gmonaco@redhat.com>,
// task_tick_mm_cid()): once the current task has run more than
// RSEQ_UNPREEMPTED_THRESHOLD (100 ms) since its switch-in, the tick
// (A) forces its return-to-user path when a scan is due and not pending,
// else (B) at most every MM_CID_SCAN_DELAY after its last allocation
// (last_cid_reset) re-takes its ID in place.  Implied by work_unbound and
// work_resume (the series that introduced them carries it).

#include <memory>

#include "mm_cid/builtins.h"

namespace isolation::mm_cid::internal {
namespace {

class TickKick final : public TickPolicy {
 public:
  bool kicks_unpreempted() const override { return true; }
  TickAction OnTick(const TickView& v) const override {
    if (v.ran_for <= kCidPeriodNs) return TickAction::kNone;  // RSEQ_UNPREEMPTED_THRESHOLD
    if (v.scan_due && !v.scan_pending) return TickAction::kForceReturnToUser;  // (A)
    // time_after(jiffies, last_cid_reset + MM_CID_SCAN_DELAY)
    if (v.now <= v.last_cid_reset + kScanDelayNs) return TickAction::kNone;
    return TickAction::kRetakeId;  // (B)
  }
};

}  // namespace

TickPolicyEntry TickKickEntry() {
  return {"tick_kick",
          "[WQ]: a task unpreempted > 100 ms gets its return-to-user path forced, or its ID "
          "re-taken in place",
          /*negative_control=*/false, [] { return std::unique_ptr<TickPolicy>(new TickKick); }};
}

}  // namespace isolation::mm_cid::internal
