// SPDX-License-Identifier: GPL-2.0-or-later
// Scan scope `scan_allowed` (proposed in [SEED]'s discussion): both passes
// visit the mm's CPU union (mm_cpus_allowed).  Sound because the union only
// grows and is extended before a thread can run on a new CPU, so a slot can
// hold an ID only on a CPU of the union.

#include <algorithm>
#include <memory>

#include "mm_cid/builtins.h"
#include "mm_cid/scope_mask.h"

namespace isolation::mm_cid::internal {

// The class: scope_mask.h (shared with the lazy design's inlined scan).
ScopeEntry ScanAllowedEntry() {
  ScopeEntry e{
      "scan_allowed",
      "both passes over the mm's grow-only CPU union (2 * nr_cpus_allowed visits; [SEED] thread)",
      /*negative_control=*/false, [] { return std::unique_ptr<ScopeStrategy>(new ScanAllowed); }};
  e.label = "allowed";
  e.aliases = {"allowed"};
  return e;
}

}  // namespace isolation::mm_cid::internal
