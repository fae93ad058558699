// SPDX-License-Identifier: GPL-2.0-or-later
// The `lazy` design as the kernel ships it (v6.4-v6.18): the Dekker pairing
// of the lazy put -- both fences, or a compiler barrier and membarrier(2)
// (MakeMainlineLazyDesign, BarrierMode) -- and the strategies its LazyConfig
// names.  The design
// itself is lazy_design.h.

#include "mm_cid/builtins.h"
#include "mm_cid/designs/lazy_design.h"

namespace isolation::mm_cid::internal {

DesignEntry LazyDesignEntry() {
  DesignTraits traits;
  traits.lazy_axes = true;
  return {"lazy",
          "v6.4-v6.18: per-(mm, CPU) slots with lazy put and a periodic compaction scan "
          "(223baf9d17f2); "
          "axes allocator/scope/granularity/placement/tick",
          /*negative_control=*/false,
          DesignFactory{[](int num_cpus, const LazyConfig& config, const MmCid::Limits& limits) {
                          return MakeMainlineLazyDesign(num_cpus, config, limits);
                        },
                        traits}};
}

}  // namespace isolation::mm_cid::internal
