// SPDX-License-Identifier: GPL-2.0-or-later
// The conformance kit (testing/vmstat.h) on every registered fold policy --
// the built-ins A0, A1, B, B.local, C, D and a policy registered here the
// way an outside project would (one RegisterFoldPolicy call) -- and on two
// pairs that run a policy over another slot representation than its own.
// The negative controls are left out here; vmstat_negative_control_test
// shows that they fail.

#include <memory>
#include <string>

#include "isolation/testing/vmstat.h"
#include "isolation/vmstat/vmstat.h"

namespace {

using isolation::vmstat::FoldContext;
using isolation::vmstat::FoldPolicy;
using isolation::vmstat::FoldPolicyTraits;
using isolation::vmstat::Vmstat;
using isolation::vmstat::WorkScope;

// B's shepherd, but the return to user folds only once some differential is
// past half its threshold (the example of fold_policy.h).
class HalfThreshold final : public FoldPolicy {
 public:
  FoldPolicyTraits traits() const override {
    FoldPolicyTraits t;                 // slot "s8-owner" by default
    t.writers_mark_dirty = true;        // Dirty(cpu) tells us to look
    t.hooks_return_to_user = true;      // ReturnToUser is delivered
    t.shepherd_work = WorkScope::kTickRunning;  // promise (spec I8)
    return t;
  }
  ShepherdAction Shepherd(const Vmstat& vm, int cpu, absl::FunctionRef<bool(int)> tick_stopped) const override {
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
    isolation::vmstat::RegisterFoldPolicy({"test.half", "fold on return to user past t/2 (conformance test)", false,
                                           [] { return std::make_unique<HalfThreshold>(); }})
        .ok();

}  // namespace

ISOLATION_VMSTAT_CONFORMANCE_IN(Registered,
                                ::testing::ValuesIn(isolation::vmstat::FoldPolicyRegistry().Names()));
ISOLATION_VMSTAT_CONFORMANCE_IN(OtherSlot, ::testing::Values("A1:s32-atomic", "B.local:s64-watermark"));
