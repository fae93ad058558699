// SPDX-License-Identifier: GPL-2.0-or-later
// Placement `work_delayed` ([DW] v3 <20241216130909.240042-1-gmonaco@redhat.com>):
// per-mm delayed work armed when the mm is created and re-armed every
// MM_CID_SCAN_DELAY while the mm has users, on housekeeping workers;
// mm_cid_next_scan is not used (the re-arm is the rate limit), and neither
// tick nor return to user does anything.

#include <memory>

#include "mm_cid/builtins.h"
#include "mm_cid/strategies/work_delayed.h"

namespace isolation::mm_cid::internal {

// The class: strategies/work_delayed.h (shared with the control work_delayed_v1).
PlacementEntry WorkDelayedEntry() {
  PlacementEntry e{"work_delayed",
                   "[DW]: per-mm delayed work re-armed every 100 ms on housekeeping workers",
                   /*negative_control=*/false,
                   [] { return std::unique_ptr<PlacementStrategy>(new WorkDelayed); }};
  e.default_row = false;  // run by name: the seeds' placement table compares the others
  return e;
}

}  // namespace isolation::mm_cid::internal
