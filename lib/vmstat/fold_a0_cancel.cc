// SPDX-License-Identifier: GPL-2.0-or-later
// Fold policy A0.cancel: A0's shepherd with quiet_vmstat() as Christoph
// Lameter wrote it in 0eb77e988032 ("vmstat: make vmstat_updater deferrable
// again and shut down on idle", Dec 2015): switch the CPU's vmstat_update
// off -- cancel_delayed_work() if it was on -- and fold until
// refresh_cpu_vm_stats() reports nothing changed.  Michal Hocko's
// f01f17d3705b ("mm, vmstat: make quiet_vmstat lighter", Jan 2016) replaced
// it with today's gate (return unless the work is pending and need_update(),
// never cancel: too costly on the idle path), which A0 and A1 model.  Then
// the call sat in the idle loop; 62cb1188ed86 (v4.15) moved it to the
// tick-stop path, where this library calls every policy's QuietVmstat.

#include <memory>

#include "vmstat/builtin.h"
#include "vmstat/fold_mainline.h"

namespace isolation::vmstat::internal {
namespace {

class QuietCancelsFold final : public MainlineFold {
 public:
  FoldPolicyTraits traits() const override {
    FoldPolicyTraits t = MainlineFold::traits();
    t.quiet_folds_dirty = true;  // no pending-work gate
    return t;
  }
  // quiet_vmstat() of 0eb77e988032.  True when a pass moved a global item.
  bool QuietVmstat(FoldContext& ctx, int cpu, bool tick_stopped) override {
    (void)tick_stopped;
    if (ctx.vm().WorkPending(cpu)) ctx.CancelWork(cpu);
    // Only the owner writes its differentials, so the second pass finds
    // nothing (Lameter's answer to Andrew Morton's "will this terminate").
    bool folded = false;
    while (ctx.FoldOwn(cpu) != 0) folded = true;
    return folded;
  }
};

}  // namespace

FoldPolicyEntry A0CxlPolicy() {
  FoldPolicyEntry e{"A0.cancel",
                    "A0 with 0eb77e988032's quiet_vmstat (2015): cancel the CPU's pending "
                    "vmstat_update and fold, no gate; replaced by f01f17d3705b",
                    false, [] { return std::make_unique<QuietCancelsFold>(); }};
  e.default_row = false;  // a step of kernel history, run by name
  return e;
}

}  // namespace isolation::vmstat::internal
