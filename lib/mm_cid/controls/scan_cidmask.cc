// SPDX-License-Identifier: GPL-2.0-or-later
// Scan scope `scan_cidmask` -- WRONG, a negative control: patch 1/2 of
// [SEED] (with the intended for_each_cpu) walks the CPUs whose *number* is a
// set bit of the mm's ID bitmap.  The bitmap indexes IDs, not CPUs, so a
// slot on CPU c is visited only when c happens to be a reserved ID:
// uniqueness holds (why the seed's stress runs passed), idle reclaim and
// compaction do not (I7, I8, S4).

#include <algorithm>
#include <memory>

#include "mm_cid/builtins.h"
#include "mm_cid/scope_mask.h"

namespace isolation::mm_cid::internal {

// The class: scope_mask.h (shared with the lazy design's inlined scan).
ScopeEntry ScanCidmaskEntry() {
  ScopeEntry e{"scan_cidmask",
               "negative control: the ID bitmap read as CPU numbers (patch 1/2 of [SEED]); breaks "
               "idle reclaim and "
               "compaction (I7, I8)",
               /*negative_control=*/true,
               [] { return std::unique_ptr<ScopeStrategy>(new ScanCidmask); }};
  e.label = "cidmask";
  e.aliases = {"cidmask"};
  // The scan tables show the broken scope beside the two correct ones.
  e.default_row = true;
  return e;
}

}  // namespace isolation::mm_cid::internal
