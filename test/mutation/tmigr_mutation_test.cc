// SPDX-License-Identifier: GPL-2.0-or-later
// Mutation test of the tmigr conformance kit: small, plausible
// mutations of the built-in variants written through the public strategy
// interfaces (tmigr/variants.h): participations derived from the merged
// IsolationAwareParticipation, and hierarchies that decorate "mainline"
// (ForwardingTimerMigration) and drop or bend one call.  Each is registered
// as a negative control and run through the kit's check list
// (tmigr_conformance::AllChecks) in order until a check reports a violation.
// Every mutation must be killed.
//
// Rare forms fire on one relevant call in kRarePeriod (a process-wide count:
// the kit's checks build many short-lived hierarchies); each prints how
// often it fired.

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
#include "isolation/testing/tmigr.h"
#include "isolation/tmigr/tmigr.h"
#include "isolation/tmigr/variants.h"
#include "kill_table.h"

namespace isolation::tmigr {
namespace {

using mutation_test::Trigger;

constexpr int64_t kRarePeriod = 5000;

// ---- participation mutations ------------------------------------------------------------

// The isolate loop stops one CPU short: the highest CPU to isolate is left
// available.  Common.
class IsolatedCpuLeftAvailable final : public IsolationAwareParticipation {
 public:
  void Exclude(const CpuMask& exclude, ExclusionOps& ops) const override {
    CpuMask unisolate = ops.OnlineMask();
    unisolate.AndNot(exclude);
    unisolate.AndNot(ops.AvailableMask());
    for (int c : unisolate) ops.QueueSetAvailable(c);
    ops.Flush();
    std::vector<int> isolate;
    for (int c : IsolateSet(exclude, ops.AvailableMask(), ops.inputs())) isolate.push_back(c);
    for (size_t i = 0; i + 1 < isolate.size(); ++i) ops.QueueClearAvailable(isolate[i]);
    ops.Flush();
  }
};

// The predicate forgets nohz_full: an isolated nohz_full CPU leaves the
// hierarchy (S19).  Common.
class NohzFullTermForgotten final : public IsolationAwareParticipation {
 public:
  bool IsIsolated(int cpu, const IsolationInputs& in) const override {
    return in.domain_isolated.Test(cpu) || in.cpuset_isolated.Test(cpu);
  }
  void Exclude(const CpuMask& exclude, ExclusionOps& ops) const override {
    CpuMask unisolate = ops.OnlineMask();
    unisolate.AndNot(exclude);
    unisolate.AndNot(ops.AvailableMask());
    for (int c : unisolate) ops.QueueSetAvailable(c);
    ops.Flush();
    CpuMask isolate = exclude;
    isolate.And(ops.AvailableMask());
    for (int c : isolate) ops.QueueClearAvailable(c);
    ops.Flush();
  }
};

// Isolation applied before un-isolation (the order of the merged series
// reversed), while still declaring flushes_unisolation_first.  Common.
class ExcludeOrderReversed final : public IsolationAwareParticipation {
 public:
  void Exclude(const CpuMask& exclude, ExclusionOps& ops) const override {
    for (int c : IsolateSet(exclude, ops.AvailableMask(), ops.inputs())) ops.QueueClearAvailable(c);
    ops.Flush();
    CpuMask unisolate = ops.OnlineMask();
    unisolate.AndNot(exclude);
    unisolate.AndNot(ops.AvailableMask());
    for (int c : unisolate) ops.QueueSetAvailable(c);
    ops.Flush();
  }
};

// An isolated CPU rejoins when it comes online once in a few times the
// predicate is asked (a stale read of the isolation inputs).  Rare for its
// event (hotplug is itself rare): one call in 8.
Trigger rare_rejoin(8);
class IsolatedCpuRejoinsSometimes final : public IsolationAwareParticipation {
 public:
  bool IsIsolated(int cpu, const IsolationInputs& in) const override {
    const bool isolated = IsolationAwareParticipation::IsIsolated(cpu, in);
    if (isolated && rare_rejoin.Fire()) return false;
    return isolated;
  }
};

// ---- hierarchy mutations (decorators of mainline) ----------------------------------------

std::unique_ptr<TimerMigration> Mainline(HierarchyArgs a) {
  return (*HierarchyRegistry().Find("mainline"))->factory(std::move(a));
}

// Going idle is not reported to the hierarchy once in kRarePeriod
// deactivations: a migrator that idles hands nothing over, and the groups
// count an idle CPU as active (no one pulls the timers it owns).
Trigger rare_deactivate(kRarePeriod);
class HandOverDroppedRarely final : public ForwardingTimerMigration {
 public:
  using ForwardingTimerMigration::ForwardingTimerMigration;
  Nanos Deactivate(int cpu, Nanos next_global) override {
    if (rare_deactivate.Fire()) return next_global;  // the CPU still wakes for its own timer
    return ForwardingTimerMigration::Deactivate(cpu, next_global);
  }
};

// The same on every deactivation of the level-0 migrator... every
// deactivation at all.  Common.
class HandOverDropped final : public ForwardingTimerMigration {
 public:
  using ForwardingTimerMigration::ForwardingTimerMigration;
  Nanos Deactivate(int, Nanos next_global) override { return next_global; }
};

// A new first timer of an idle CPU is not propagated (the group's next
// expiry not refreshed), once in kRarePeriod new-timer calls with a timer.
Trigger rare_new_timer(kRarePeriod);
class NextExpiryNotRefreshedRarely final : public ForwardingTimerMigration {
 public:
  using ForwardingTimerMigration::ForwardingTimerMigration;
  Nanos NewTimer(int cpu, Nanos next_global) override {
    if (next_global != kNanosMax && rare_new_timer.Fire()) return kNanosMax;
    return ForwardingTimerMigration::NewTimer(cpu, next_global);
  }
};

// Common form: no new timer of an idle CPU reaches the hierarchy.
class NextExpiryNotRefreshed final : public ForwardingTimerMigration {
 public:
  using ForwardingTimerMigration::ForwardingTimerMigration;
  Nanos NewTimer(int, Nanos) override { return kNanosMax; }
};

// The migrator never expires an idle CPU's timers (handle_remote skipped).
// Common.
class IdleTimersNeverExpired final : public ForwardingTimerMigration {
 public:
  using ForwardingTimerMigration::ForwardingTimerMigration;
  bool RequiresHandleRemote(int, Nanos) override { return false; }
};

// The last CPU to idle forgets to program the wake-up the hierarchy hands
// it, once in kRarePeriod deactivations that returned one.
Trigger rare_wakeup(kRarePeriod);
class LastIdlerForgetsWakeupRarely final : public ForwardingTimerMigration {
 public:
  using ForwardingTimerMigration::ForwardingTimerMigration;
  Nanos Deactivate(int cpu, Nanos next_global) override {
    const Nanos r = ForwardingTimerMigration::Deactivate(cpu, next_global);
    if (r != kNanosMax && rare_wakeup.Fire()) return kNanosMax;
    return r;
  }
};

// Leaving idle is not reported once in kRarePeriod activations: the CPU
// runs with its tick while the hierarchy counts it idle.
Trigger rare_activate(kRarePeriod);
class ActivateDroppedRarely final : public ForwardingTimerMigration {
 public:
  using ForwardingTimerMigration::ForwardingTimerMigration;
  void Activate(int cpu) override {
    if (rare_activate.Fire()) return;
    ForwardingTimerMigration::Activate(cpu);
  }
};

// The quick check says "nothing to wait for" (an idle CPU's event ignored).
// Common.
class QuickCheckIgnoresHierarchy final : public ForwardingTimerMigration {
 public:
  using ForwardingTimerMigration::ForwardingTimerMigration;
  Nanos QuickCheck(int, Nanos) override { return kNanosMax; }
};

// name: "participation[/hierarchy]".
using Mutation = mutation_test::MutationCase;

template <typename T>
HierarchyEntry Decorator(std::string name, std::string what) {
  return {std::move(name), "mutation: " + what, /*negative_control=*/true,
          [](HierarchyArgs a) -> std::unique_ptr<TimerMigration> {
            return std::make_unique<T>(Mainline(std::move(a)));
          }};
}
template <typename T>
ParticipationEntry Part(std::string name, std::string what) {
  return {std::move(name), "mutation: " + what, /*negative_control=*/true,
          [] { return std::unique_ptr<Participation>(std::make_unique<T>()); }};
}

const std::vector<Mutation>& Mutations() {
  static const auto* const m = new std::vector<Mutation>{
      {"mut.isolated-left-available", "isolated CPU left available", false},
      {"mut.nohz-full-term-forgotten", "isolated CPU predicate (nohz_full leaves)", false},
      {"mut.exclude-order-reversed", "exclude order (isolate before un-isolate)", false},
      {"mut.isolated-rejoins-sometimes", "isolated CPU left available (on hotplug)", true,
       &rare_rejoin},
      {"isolation/mut.handover-dropped", "migrator hand-over dropped", false},
      {"isolation/mut.handover-dropped-rare", "migrator hand-over dropped", true, &rare_deactivate},
      {"v6.9/mut.next-expiry-not-refreshed", "a group's next expiry not refreshed", false},
      {"v6.9/mut.next-expiry-not-refreshed-rare", "a group's next expiry not refreshed", true,
       &rare_new_timer},
      {"v6.9/mut.idle-timers-never-expired", "an idle CPU's timer never expired", false},
      {"v6.9/mut.last-idler-forgets-wakeup-rare", "an idle CPU's timer never expired (no wake-up)",
       true, &rare_wakeup},
      {"isolation/mut.activate-dropped-rare", "migrator hand-over (activation) dropped", true,
       &rare_activate},
      {"v6.9/mut.quick-check-ignores-hierarchy", "quick check", false},
  };
  return *m;
}

class TmigrMutation : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const std::vector<absl::Status> all = {
        RegisterParticipation(Part<IsolatedCpuLeftAvailable>("mut.isolated-left-available",
                                                             "isolate loop one short")),
        RegisterParticipation(
            Part<NohzFullTermForgotten>("mut.nohz-full-term-forgotten", "no nohz_full term")),
        RegisterParticipation(
            Part<ExcludeOrderReversed>("mut.exclude-order-reversed", "isolate first")),
        RegisterParticipation(
            Part<IsolatedCpuRejoinsSometimes>("mut.isolated-rejoins-sometimes", "stale predicate")),
        RegisterHierarchy(
            Decorator<HandOverDropped>("mut.handover-dropped", "deactivate not reported")),
        RegisterHierarchy(Decorator<HandOverDroppedRarely>("mut.handover-dropped-rare",
                                                           "deactivate not reported, rarely")),
        RegisterHierarchy(Decorator<NextExpiryNotRefreshed>("mut.next-expiry-not-refreshed",
                                                            "new timer dropped")),
        RegisterHierarchy(Decorator<NextExpiryNotRefreshedRarely>(
            "mut.next-expiry-not-refreshed-rare", "new timer dropped, rarely")),
        RegisterHierarchy(
            Decorator<IdleTimersNeverExpired>("mut.idle-timers-never-expired", "no handle_remote")),
        RegisterHierarchy(Decorator<LastIdlerForgetsWakeupRarely>(
            "mut.last-idler-forgets-wakeup-rare", "wake-up dropped, rarely")),
        RegisterHierarchy(Decorator<ActivateDroppedRarely>("mut.activate-dropped-rare",
                                                           "activate not reported, rarely")),
        RegisterHierarchy(Decorator<QuickCheckIgnoresHierarchy>("mut.quick-check-ignores-hierarchy",
                                                                "quick check")),
    };
    for (const absl::Status& s : all) ISOLATION_ASSERT_OK(s);
  }
};

TEST_F(TmigrMutation, EveryMutationIsKilled) {
  mutation_test::ExpectEveryMutationKilled(
      "tmigr", Mutations(), testing::tmigr_conformance::AllChecks(),
      [](std::string_view check, std::string_view variant) {
        return testing::tmigr_conformance::NotApplicable(check, variant);
      },
      [](std::string_view check, std::string_view variant) {
        return testing::tmigr_conformance::Run(check, variant);
      });
}

// A variant composed with a negative-control part is one: the kit says so,
// and the default lists never hold it.
TEST_F(TmigrMutation, ACompositionWithANegativeControlPartIsOne) {
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto v,
                                 testing::ParseTmigrVariant("isolation/mut.handover-dropped"));
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto control, testing::IsTmigrNegativeControl(v));
  EXPECT_TRUE(control);
  for (const testing::TmigrVariant& d : testing::RegisteredTmigrVariants()) {
    EXPECT_NE(d.participation.rfind("mut.", 0), 0u) << d.ToString();
    EXPECT_NE(d.hierarchy.rfind("mut.", 0), 0u) << d.ToString();
  }
}

}  // namespace
}  // namespace isolation::tmigr
