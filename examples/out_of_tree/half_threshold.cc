// SPDX-License-Identifier: GPL-2.0-or-later
// A vmstat fold policy written outside the library: the seed's policy (B),
// but the return to user of a nohz_full CPU whose tick is stopped folds only
// once some differential is past half its threshold.

#include <memory>

#include "isolation/vmstat/fold_policy.h"
#include "isolation/vmstat/vmstat.h"

namespace my_variants {
namespace {

using isolation::vmstat::FoldContext;
using isolation::vmstat::FoldPolicy;
using isolation::vmstat::FoldPolicyTraits;
using isolation::vmstat::Vmstat;
using isolation::vmstat::WorkScope;

class HalfThreshold final : public FoldPolicy {
 public:
  FoldPolicyTraits traits() const override {
    FoldPolicyTraits t;                         // slot "s8-owner" by default
    t.writers_mark_dirty = true;                // Dirty(cpu) tells the shepherd where to look
    t.hooks_return_to_user = true;              // ReturnToUser is delivered
    t.shepherd_work = WorkScope::kTickRunning;  // the promise the kit checks (I8)
    return t;
  }
  ShepherdAction Shepherd(const Vmstat& vm, int cpu,
                          absl::FunctionRef<bool(int)> tick_stopped) const override {
    if (tick_stopped(cpu) || !vm.Dirty(cpu)) return ShepherdAction::kSkip;
    return ShepherdAction::kQueueWork;
  }
  bool ReturnToUser(FoldContext& ctx, int cpu, bool tick_stopped) override {
    if (!tick_stopped || ctx.vm().MaxThresholdFraction(cpu) <= 0.5) return false;
    ctx.FoldOwn(cpu);
    return true;
  }
};

[[maybe_unused]] const bool kRegistered =
    isolation::vmstat::RegisterFoldPolicy({"B.half", "B, folding on return to user only past t/2",
                                           false, [] { return std::make_unique<HalfThreshold>(); }})
        .ok();

}  // namespace
}  // namespace my_variants
