// SPDX-License-Identifier: GPL-2.0-or-later
// Negative control `owner619_split_mode`: owner619's mode as it was before
// 47ee94efccf6 ("sched: Fix MM CID mode switch on weakly ordered systems"):
// separate `percpu` and `transit` words, written without the two fences
// around the fixup, so a weakly ordered reader can take a half-published
// transition for a stable mode (S9 under the store-buffer model; I14).

#include "mm_cid/builtins.h"
#include "mm_cid/designs/owner619_design.h"

namespace isolation::mm_cid::internal {
namespace {

struct SplitMode : owner619_design::MainlineFixes {
  static constexpr bool kModeWord = false;
};

}  // namespace

DesignEntry Owner619SplitModeDesignEntry() {
  return {"owner619_split_mode",
          "negative control: owner619 with split percpu/transit mode words and no fences "
          "(pre-47ee94efccf6; "
          "S9, I14)",
          /*negative_control=*/true,
          DesignFactory{[](int num_cpus, const LazyConfig&, const MmCid::Limits& limits) {
                          return MakeOwner619Design<SplitMode>(num_cpus, limits);
                        },
                        Owner619Traits()}};
}

}  // namespace isolation::mm_cid::internal
