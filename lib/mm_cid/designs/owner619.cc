// SPDX-License-Identifier: GPL-2.0-or-later
// The `owner619` design with every fix of the 6.19 series and its 7.0-rc4
// follow-ups: TRANSIT hand-overs (4327fb13fa47), the single mode word with
// two fences (47ee94efccf6), the per-mm user list and the 7.0 fork order.
// The design itself is owner619_design.h.

#include "mm_cid/builtins.h"
#include "mm_cid/designs/owner619_design.h"

namespace isolation::mm_cid::internal {

DesignEntry Owner619DesignEntry() {
  return {"owner619",
          "6.19 rewrite (+7.0-rc4 fixes): per-task / per-CPU ownership modes, TRANSIT, no "
          "background work",
          /*negative_control=*/false,
          DesignFactory{[](int num_cpus, const LazyConfig&, const MmCid::Limits& limits) {
                          return MakeOwner619Design<owner619_design::MainlineFixes>(num_cpus,
                                                                                    limits);
                        },
                        Owner619Traits()}};
}

}  // namespace isolation::mm_cid::internal
