// SPDX-License-Identifier: GPL-2.0-or-later
// Negative control `work_delayed_v1`: the first revision of [DW], "[PATCH]
// sched: Move task_mm_cid_work to mm delayed work"
// <20241205083110.180134-2-gmonaco@redhat.com>.  It took the scan off the
// tick (task_tick_mm_cid() removed) and queued the mm's delayed work once
// (schedule_delayed_work() in init_sched_mm_cid()), but task_mm_cid_work()
// lost the line that re-queues it: one pass 100 ms after the arm, then none.
// Its author called it "fundamentally broken" for that
// <4c067b75e06aadd34eff5b60fc7c59967aa30809.camel@redhat.com>, the rseq
// selftests still passed (uniqueness holds), and v2 lists "Re-arm the
// delayed_work at each invocation" <20241213095407.271357-1-gmonaco@redhat.com>.
// The kit sees the passes stop (I9: passes go on).
//
// v1 armed the work where a single-threaded task forks (init_sched_mm_cid's
// mm_users == 1 branch); a placement sees mm creation only, so the arm is
// there.  v1 still read mm_cid_next_scan, set to the same now + 100 ms as the
// arm, which its single run passes: the class keeps work_delayed's
// `rate_limited = false` so that a later fork cannot refuse that run.

#include <memory>

#include "mm_cid/builtins.h"
#include "mm_cid/strategies/work_delayed.h"

namespace isolation::mm_cid::internal {
namespace {

class WorkDelayedV1 final : public WorkDelayed {
 public:
  // init_sched_mm_cid(): schedule_delayed_work(&mm->mm_cid_work, 100 ms),
  // and task_mm_cid_work() never queues it again.
  void OnMmCreated(MmId mm, ScanRunner& runner) const override {
    runner.QueueWork(mm, kScanDelayNs);
  }
};

}  // namespace

PlacementEntry DelayedV1Entry() {
  return {"work_delayed_v1",
          "negative control: [DW] v1 <20241205083110.180134-2-gmonaco@redhat.com>, per-mm "
          "delayed work armed once and never re-armed: one pass, then none (I9)",
          /*negative_control=*/true,
          [] { return std::unique_ptr<PlacementStrategy>(new WorkDelayedV1); }};
}

}  // namespace isolation::mm_cid::internal
