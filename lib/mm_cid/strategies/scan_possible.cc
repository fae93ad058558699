// SPDX-License-Identifier: GPL-2.0-or-later
// Scan scope `scan_possible` (mainline, [LF]): both passes of
// task_mm_cid_work() visit every possible CPU (for_each_possible_cpu):
// 2 * P slot visits per pass.

#include <memory>

#include "mm_cid/builtins.h"
#include "mm_cid/scope_mask.h"

namespace isolation::mm_cid::internal {

// The class: scope_mask.h (shared with the lazy design's inlined scan).
ScopeEntry ScanPossibleEntry() {
  ScopeEntry e{
      "scan_possible", "mainline: both passes over every possible CPU (2P visits per pass)",
      /*negative_control=*/false, [] { return std::unique_ptr<ScopeStrategy>(new ScanPossible); }};
  e.label = "possible";
  e.aliases = {"possible"};
  return e;
}

}  // namespace isolation::mm_cid::internal
