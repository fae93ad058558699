// SPDX-License-Identifier: GPL-2.0-or-later
// V1, V1-eager, V1-tickstop: Aubrey Li's idle cpumask with the scan counter
// of the RFC (SIS_UTIL budget, SIS_PROP floor), and its two upkeep flavours
// (cleared on idle exit too; set only at tick stop, v4/v5).

#include "idle_select/builtin_selectors.h"
#include "idle_select/idle_mask_selector.h"

namespace isolation::idle_select {

absl::StatusOr<std::unique_ptr<IdleSelector>> NewV1(IdleState& state) {
  return std::unique_ptr<IdleSelector>(std::make_unique<V1Selector>(state));
}

absl::StatusOr<std::unique_ptr<IdleSelector>> NewV1Eager(IdleState& state) {
  return std::unique_ptr<IdleSelector>(std::make_unique<ClearOnIdleExit<V1Selector>>(state));
}

absl::StatusOr<std::unique_ptr<IdleSelector>> NewV1TickStop(IdleState& state) {
  return std::unique_ptr<IdleSelector>(std::make_unique<SetAtTickStop<V1Selector>>(state));
}

// Registry entry (registry.cc registers it).
SelectorEntry V1Entry() {
  SelectorEntry e{
      "V1",
      "Aubrey Li's per-LLC idle cpumask (RFC v3-v10): set on idle entry, cleared at the tick; "
      "SIS_UTIL budget with SIS_PROP's floor of 3 probes",
      /*negative_control=*/false, SelectorFactory(&NewV1)};
  return e;
}

// Registry entry (registry.cc registers it).
SelectorEntry V1EagerEntry() {
  SelectorEntry e{"V1-eager", "V1, also cleared on idle exit (no stale-idle window)",
                  /*negative_control=*/false, SelectorFactory(&NewV1Eager)};
  return e;
}

// Registry entry (registry.cc registers it).
SelectorEntry V1TickStopEntry() {
  SelectorEntry e{"V1-tickstop", "V1, set only when the tick stops in idle (Aubrey Li v4/v5)",
                  /*negative_control=*/false, SelectorFactory(&NewV1TickStop)};
  return e;
}

}  // namespace isolation::idle_select
