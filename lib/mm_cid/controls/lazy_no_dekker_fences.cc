// SPDX-License-Identifier: GPL-2.0-or-later
// Negative control `lazy_no_dekker_fences`: the lazy design without the two
// full fences of its Dekker pairing -- after ContextSwitch publishes rq->curr
// (smp_mb__after_switch_mm(), fe90f3967bdb) and after a reclaimer's CAS to
// LAZY (sched_mm_cid_remote_clear(), the migration steal).  Only a
// StoreBufferModel (core/store_buffer.h) makes the difference visible: a
// remote clear then frees an ID a running task holds (I4).  Same axes as
// `lazy` (lazy_design.h).

#include "mm_cid/builtins.h"
#include "mm_cid/designs/lazy_design.h"

namespace isolation::mm_cid::internal {
namespace {

struct NoDekkerFences {
  static constexpr BarrierMode kMode = BarrierMode::kNone;
  static constexpr SwitchForm kSwitchForm =
      SwitchForm::kVirtual;  // the switcher forwards every switch
  static void AfterPublishCurr() {}
  static void AfterLazyCas() {}
};

}  // namespace

DesignEntry LazyNoDekkerFencesDesignEntry() {
  DesignTraits traits;
  traits.lazy_axes = true;
  return {
      "lazy_no_dekker_fences",
      "negative control: lazy without the two Dekker fences of the lazy put (I4 fails under the "
      "store-buffer model)",
      /*negative_control=*/true,
      DesignFactory{[](int num_cpus, const LazyConfig& config, const MmCid::Limits& limits) {
                      return MakeLazyDesign<NoDekkerFences>(num_cpus, config, limits);
                    },
                    traits}};
}

}  // namespace isolation::mm_cid::internal
