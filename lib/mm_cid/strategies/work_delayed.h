// SPDX-License-Identifier: GPL-2.0-or-later
// work_delayed.h (mm_cid module, not installed): the `work_delayed`
// placement ([DW] v3 <20241216130909.240042-1-gmonaco@redhat.com>), shared
// by strategies/work_delayed.cc and the negative control
// controls/work_delayed_v1.cc (the series' v1, which never re-armed).  A
// per-mm delayed work armed when the mm is created and re-armed every
// MM_CID_SCAN_DELAY while the mm has users, on housekeeping workers;
// mm_cid_next_scan is not used (the re-arm is the rate limit), and neither
// tick nor return to user does anything.

#ifndef ISOLATION_LIB_MM_CID_STRATEGIES_WORK_DELAYED_H_
#define ISOLATION_LIB_MM_CID_STRATEGIES_WORK_DELAYED_H_

#include "isolation/mm_cid/strategies.h"

namespace isolation::mm_cid::internal {

class WorkDelayed : public PlacementStrategy {
 public:
  PlacementTraits traits() const override {
    PlacementTraits t;
    t.rate_limited = false;
    return t;
  }
  ScanAction OnTick(const ScanTrigger&) const override { return ScanAction::kNone; }
  ScanAction OnReturnToUser(const ScanTrigger&) const override { return ScanAction::kNone; }
  bool ScanDue(const ScanTrigger&) const override { return false; }  // no mm_cid_next_scan
  bool ScanPending(const ScanTrigger&) const override { return false; }
  // mm_alloc_cid() + the first queueing of task_mm_cid_work(): the work
  // re-arms itself every MM_CID_SCAN_DELAY until the mm is dropped.
  void OnMmCreated(MmId mm, ScanRunner& runner) const override {
    runner.QueuePeriodicWork(mm, kScanDelayNs);
  }
};

}  // namespace isolation::mm_cid::internal

#endif  // ISOLATION_LIB_MM_CID_STRATEGIES_WORK_DELAYED_H_
