// SPDX-License-Identifier: GPL-2.0-or-later
// Mutation test of the vmstat conformance kit: small, plausible
// mutations of the built-in fold policies, each a FoldPolicy of its own that
// wraps a built-in (made from FoldPolicyRegistry()) and injects one bug,
// registered through RegisterFoldPolicy as a negative control.  The kit's
// check list (vmstat_conformance::AllChecks) runs on each, in list order, until
// a check reports a violation: the mutation is killed.  Every mutation must be.
//
// Rare forms fire on one relevant event in kRarePeriod (process-wide count of
// the events where the bug can show, e.g. "a return to user of a dirty
// nohz_full CPU whose tick is stopped"), so the kit must reach the rare path
// thousands of times to see them; each prints how often it fired.

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "isolation/testing/status_matchers.h"
#include "isolation/testing/vmstat.h"
#include "isolation/vmstat/fold_policy.h"
#include "isolation/vmstat/vmstat.h"
#include "kill_table.h"

namespace isolation::vmstat {
namespace {

using mutation_test::Trigger;

constexpr int64_t kRarePeriod = 5000;

// Forwards everything to a built-in policy; mutations override one step.
class Wrapped : public FoldPolicy {
 public:
  explicit Wrapped(const char* builtin)
      : inner_((*FoldPolicyRegistry().Find(builtin))->factory()) {}
  FoldPolicyTraits traits() const override { return inner_->traits(); }
  ShepherdAction Shepherd(const Vmstat& vm, int cpu,
                          absl::FunctionRef<bool(int)> tick_stopped) const override {
    return inner_->Shepherd(vm, cpu, tick_stopped);
  }
  bool QuietVmstat(FoldContext& ctx, int cpu, bool tick_stopped) override {
    return inner_->QuietVmstat(ctx, cpu, tick_stopped);
  }
  bool ReturnToUser(FoldContext& ctx, int cpu, bool tick_stopped) override {
    return inner_->ReturnToUser(ctx, cpu, tick_stopped);
  }
  void OnFirstDirty(FoldContext& ctx, int cpu) override { inner_->OnFirstDirty(ctx, cpu); }
  bool RequeueLocally(const Vmstat& vm, int cpu) const override {
    return inner_->RequeueLocally(vm, cpu);
  }

 protected:
  FoldPolicy& inner() const { return *inner_; }

 private:
  std::unique_ptr<FoldPolicy> inner_;
};

// ---- the mutations ----------------------------------------------------------------------

// B: return to user skips the fold when the tick is stopped (the seed's
// __tick_nohz_user_enter_prepare hook lost).  Common: always.
class BReturnToUserSkipped final : public Wrapped {
 public:
  BReturnToUserSkipped() : Wrapped("B") {}
  bool ReturnToUser(FoldContext&, int, bool) override { return false; }
};

// B: the same, once in kRarePeriod returns to user of a dirty CPU whose tick
// is stopped.
Trigger rare_rtu(kRarePeriod);
class BReturnToUserSkippedRarely final : public Wrapped {
 public:
  BReturnToUserSkippedRarely() : Wrapped("B") {}
  bool ReturnToUser(FoldContext& ctx, int cpu, bool tick_stopped) override {
    if (tick_stopped && ctx.vm().Dirty(cpu) && rare_rtu.Fire()) return false;
    return Wrapped::ReturnToUser(ctx, cpu, tick_stopped);
  }
};

// A1: the shepherd skips a dirty CPU in its scope (no work pending), once in
// kRarePeriod such decisions.
Trigger rare_shepherd(kRarePeriod);
class A1ShepherdSkipsDirtyRarely final : public Wrapped {
 public:
  A1ShepherdSkipsDirtyRarely() : Wrapped("A1") {}
  ShepherdAction Shepherd(const Vmstat& vm, int cpu,
                          absl::FunctionRef<bool(int)> tick_stopped) const override {
    const ShepherdAction a = Wrapped::Shepherd(vm, cpu, tick_stopped);
    if (a == ShepherdAction::kQueueWork && !vm.WorkPending(cpu) && rare_shepherd.Fire())
      return ShepherdAction::kSkip;
    return a;
  }
};

// A0: the shepherd skips the last CPU (a loop bound off by one).  Common.
class A0ShepherdSkipsLastCpu final : public Wrapped {
 public:
  A0ShepherdSkipsLastCpu() : Wrapped("A0") {}
  ShepherdAction Shepherd(const Vmstat& vm, int cpu,
                          absl::FunctionRef<bool(int)> tick_stopped) const override {
    if (vm.num_cpus() > 1 && cpu == vm.num_cpus() - 1) return ShepherdAction::kSkip;
    return Wrapped::Shepherd(vm, cpu, tick_stopped);
  }
};

// A1: need_update() with a threshold off by one: a differential of +-1 is
// taken as clean, so the shepherd never queues work for it.
class A1NeedUpdateOffByOne final : public Wrapped {
 public:
  A1NeedUpdateOffByOne() : Wrapped("A1") {}
  ShepherdAction Shepherd(const Vmstat& vm, int cpu,
                          absl::FunctionRef<bool(int)> tick_stopped) const override {
    if (vm.MaxAbsDiff(cpu) <= 1) return ShepherdAction::kSkip;
    return Wrapped::Shepherd(vm, cpu, tick_stopped);
  }
};

// B: quiet_vmstat gated on the pending work (mainline's gate) although the
// policy promises the dirty gate (quiet_folds_dirty, S11).
class BQuietGatedOnPendingWork final : public Wrapped {
 public:
  BQuietGatedOnPendingWork() : Wrapped("B") {}
  bool QuietVmstat(FoldContext& ctx, int cpu, bool tick_stopped) override {
    if (!ctx.vm().WorkPending(cpu)) return false;
    return Wrapped::QuietVmstat(ctx, cpu, tick_stopped);
  }
};

// B.local: a fold that drops the differential: return to user cancels the
// armed work and reports a fold, but folds only a CPU past half its
// threshold; a smaller residue stays with no work armed (its dirty flag is
// still set, so no first-dirty write arms it again).  Common.
class BLocalReturnToUserDropsSmallResidue final : public Wrapped {
 public:
  BLocalReturnToUserDropsSmallResidue() : Wrapped("B.local") {}
  bool ReturnToUser(FoldContext& ctx, int cpu, bool tick_stopped) override {
    if (ctx.vm().MaxThresholdFraction(cpu) > 0.5)
      return Wrapped::ReturnToUser(ctx, cpu, tick_stopped);
    if (ctx.vm().WorkPending(cpu)) ctx.CancelWork(cpu);
    return ctx.vm().Dirty(cpu);
  }
};

// B.local: the first dirtying write does not arm the CPU's own work, once
// in kRarePeriod first-dirty events of nohz_full CPUs: a kernel-bound CPU
// keeps its residue for ever (folds_kernel_bound_cpus, I9).
Trigger rare_arm(kRarePeriod);
class BLocalFirstDirtyArmDroppedRarely final : public Wrapped {
 public:
  BLocalFirstDirtyArmDroppedRarely() : Wrapped("B.local") {}
  void OnFirstDirty(FoldContext& ctx, int cpu) override {
    if (ctx.vm().IsNohzFull(cpu) && rare_arm.Fire()) return;
    Wrapped::OnFirstDirty(ctx, cpu);
  }
};

// C: the remote fold racing the owner: C's policy over the plain
// load/store writer slot (someone "simplified" the CAS away).  Common; the
// policy's default slot is a negative control, so it must be registered as one.
class CRemoteFoldRacingPlainOwner final : public Wrapped {
 public:
  CRemoteFoldRacingPlainOwner() : Wrapped("C") {}
  FoldPolicyTraits traits() const override {
    FoldPolicyTraits t = Wrapped::traits();
    t.slot = "s32-plain";
    return t;
  }
};

// B: the shepherd skips a dirty CPU whose tick runs, once in kRarePeriod
// in-scope decisions (racing the remote tick check the wrong way).
Trigger rare_b_shepherd(kRarePeriod);
class BShepherdSkipsRunningTickRarely final : public Wrapped {
 public:
  BShepherdSkipsRunningTickRarely() : Wrapped("B") {}
  ShepherdAction Shepherd(const Vmstat& vm, int cpu,
                          absl::FunctionRef<bool(int)> tick_stopped) const override {
    const ShepherdAction a = Wrapped::Shepherd(vm, cpu, tick_stopped);
    if (a == ShepherdAction::kQueueWork && !vm.WorkPending(cpu) && rare_b_shepherd.Fire())
      return ShepherdAction::kSkip;
    return a;
  }
};

struct Mutation {
  std::string name;
  std::string bug_class;
  bool rare;
  FoldPolicyFactory factory;
  const Trigger* trigger = nullptr;  // rare forms
};

const std::vector<Mutation>& Mutations() {
  static const auto* const m = new std::vector<Mutation>{
      {"mut.B.rtu-skipped", "return-to-user fold skipped when the tick is stopped", false,
       [] { return std::make_unique<BReturnToUserSkipped>(); }},
      {"mut.B.rtu-skipped-rare", "return-to-user fold skipped when the tick is stopped", true,
       [] { return std::make_unique<BReturnToUserSkippedRarely>(); }, &rare_rtu},
      {"mut.A1.shepherd-skips-dirty-rare", "shepherd skipping a dirty CPU", true,
       [] { return std::make_unique<A1ShepherdSkipsDirtyRarely>(); }, &rare_shepherd},
      {"mut.B.shepherd-skips-dirty-rare", "shepherd skipping a dirty CPU", true,
       [] { return std::make_unique<BShepherdSkipsRunningTickRarely>(); }, &rare_b_shepherd},
      {"mut.A0.shepherd-skips-last-cpu", "shepherd skipping a dirty CPU", false,
       [] { return std::make_unique<A0ShepherdSkipsLastCpu>(); }},
      {"mut.A1.need-update-off-by-one", "threshold off by one", false,
       [] { return std::make_unique<A1NeedUpdateOffByOne>(); }},
      {"mut.B.quiet-gated-on-pending", "quiet_vmstat gate (S11)", false,
       [] { return std::make_unique<BQuietGatedOnPendingWork>(); }},
      {"mut.Blocal.rtu-drops-small-residue", "a fold that drops a differential", false,
       [] { return std::make_unique<BLocalReturnToUserDropsSmallResidue>(); }},
      {"mut.Blocal.first-dirty-arm-dropped-rare",
       "a fold that drops a differential (kernel-bound CPU)", true,
       [] { return std::make_unique<BLocalFirstDirtyArmDroppedRarely>(); }, &rare_arm},
      {"mut.C.remote-fold-racing-plain-owner", "remote fold racing the owner", false,
       [] { return std::make_unique<CRemoteFoldRacingPlainOwner>(); }},
  };
  return *m;
}

// The mutations as the kill table takes them.
std::vector<mutation_test::MutationCase> Cases() {
  std::vector<mutation_test::MutationCase> cases;
  for (const Mutation& m : Mutations()) cases.push_back({m.name, m.bug_class, m.rare, m.trigger});
  return cases;
}

class VmstatMutation : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    for (const Mutation& m : Mutations()) {
      const absl::Status s = RegisterFoldPolicy(
          {m.name, "mutation: " + m.bug_class, /*negative_control=*/true, m.factory});
      ISOLATION_ASSERT_OK(s);
    }
  }
};

// Each mutation through the kit's list, in order, up to the first check that
// reports a violation.
TEST_F(VmstatMutation, EveryMutationIsKilled) {
  mutation_test::ExpectEveryMutationKilled(
      "vmstat", Cases(), testing::vmstat_conformance::AllChecks(),
      [](std::string_view check, std::string_view variant) {
        return testing::vmstat_conformance::NotApplicable(check, variant);
      },
      [](std::string_view check, std::string_view variant) {
        return testing::vmstat_conformance::Run(check, variant);
      });
}

// A mutation over a negative-control slot cannot join the default lists:
// registering it as an ordinary policy is refused with a message.
TEST_F(VmstatMutation, APolicyOverANegativeControlSlotIsRefusedUnlessFlagged) {
  const absl::Status s =
      RegisterFoldPolicy({"mut.C.plain-unflagged", "", /*negative_control=*/false,
                          [] { return std::make_unique<CRemoteFoldRacingPlainOwner>(); }});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  for (const std::string& name : FoldPolicyRegistry().Names())
    EXPECT_NE(name.rfind("mut.", 0), 0u) << name;
}

}  // namespace
}  // namespace isolation::vmstat
