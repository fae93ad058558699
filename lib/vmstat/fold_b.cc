// SPDX-License-Identifier: GPL-2.0-or-later
// Fold policy B: the seed series (Aaron Tomlin, "[PATCH v8 4/5]
// tick/nohz_full: Ensure quiet_vmstat() is called on exit to user-mode when
// the idle tick is stopped", <20220924152227.819815-5-atomlin@redhat.com>,
// with 2/5 vmstat_dirty, 3/5 the shepherd skipping tick-stopped CPUs and 5/5
// quiet_vmstat on every tick-stop attempt).  docs/vmstat.md, B.

#include <memory>

#include "isolation/vmstat/vmstat.h"
#include "vmstat/builtin.h"

namespace isolation::vmstat::internal {
namespace {

class SeedFold final : public FoldPolicy {
 public:
  FoldPolicyTraits traits() const override {
    FoldPolicyTraits t;
    t.writers_mark_dirty = true;    // vmstat_mark_dirty() in every writer
    t.hooks_return_to_user = true;  // tick_nohz_user_enter_prepare()
    t.shepherd_work = WorkScope::kTickRunning;
    t.return_to_user_folds = ReturnToUserScope::kNohzFullTickStopped;
    t.quiet_folds_dirty = true;
    return t;
  }
  // v8 3/5: skip CPUs whose tick the (racy) remote check sees stopped, queue
  // on the dirty flag instead of need_update().
  ShepherdAction Shepherd(const Vmstat& vm, int cpu,
                          absl::FunctionRef<bool(int)> tick_stopped) const override {
    if (tick_stopped(cpu)) return ShepherdAction::kSkip;
    return vm.Dirty(cpu) ? ShepherdAction::kQueueWork : ShepherdAction::kSkip;
  }
  // quiet_vmstat() gated on `dirty`; with the tick stopped it cancels the
  // pending work (the queued item then finds a stale generation).
  bool QuietVmstat(FoldContext& ctx, int cpu, bool tick_stopped) override {
    if (!ctx.vm().Dirty(cpu)) return false;
    ctx.FoldOwn(cpu);
    if (tick_stopped && ctx.vm().WorkPending(cpu)) ctx.CancelWork(cpu);
    return true;
  }
  // __tick_nohz_user_enter_prepare(): quiet_vmstat() when the tick is stopped.
  bool ReturnToUser(FoldContext& ctx, int cpu, bool tick_stopped) override {
    return tick_stopped && QuietVmstat(ctx, cpu, tick_stopped);
  }
};

}  // namespace

FoldPolicyEntry BPolicy() {
  return FoldPolicyEntry{
      "B",
      "the seed (Tomlin/Tosatti v8, 2022): fold on return to user of a nohz_full CPU "
      "whose tick is stopped; dirty-gated quiet_vmstat",
      false, [] { return std::make_unique<SeedFold>(); }};
}

}  // namespace isolation::vmstat::internal
