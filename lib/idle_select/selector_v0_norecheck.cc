// SPDX-License-Identifier: GPL-2.0-or-later
// V0-norecheck, a NEGATIVE CONTROL: mainline V0 whose idle entry skips the
// go-idle half of the wakeup handshake -- the CPU publishes itself idle and
// sleeps without re-checking its run queue (SelectorTraits::
// idle_entry_recheck false; IdleSelectHooks answers Hooks::IdleRecheck with
// it).  With the simulator's idle-entry window (SimOptions::idle_entry_cost)
// an enqueue that lands inside the window is then never run until a later
// event on that CPU: a lost wakeup.  Its placements are V0's.  Registered
// (flagged negative_control) so that the kit's
// Sim_ConcurrentWakeups_NoLostWakeup and the `stacking` table of
// `isolab idle` can be shown to catch it.

#include <memory>

#include "idle_select/builtin_selectors.h"
#include "isolation/idle_select/sis_selector.h"

namespace isolation::idle_select {
namespace {

class V0NoRecheckSelector final : public SisSelector {
 public:
  using SisSelector::SisSelector;
  SelectorTraits traits() const override {
    SelectorTraits t = SisSelector::traits();
    t.idle_entry_recheck = false;  // the broken handshake
    return t;
  }
};

}  // namespace

absl::StatusOr<std::unique_ptr<IdleSelector>> NewV0NoRecheck(IdleState& state) {
  return std::unique_ptr<IdleSelector>(std::make_unique<V0NoRecheckSelector>(state));
}

// Registry entry (registry.cc registers it).
SelectorEntry V0NoRecheckEntry() {
  SelectorEntry e{"V0-norecheck",
                  "NEGATIVE CONTROL: V0 whose idle entry sleeps without re-checking the run queue "
                  "(broken wakeup handshake: "
                  "loses wakeups in the simulator's idle-entry window)",
                  /*negative_control=*/true, SelectorFactory(&NewV0NoRecheck)};
  return e;
}

}  // namespace isolation::idle_select
