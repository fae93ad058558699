// SPDX-License-Identifier: GPL-2.0-or-later
// Internal to lib/idle_select: the factories of the built-in selectors, one
// per selector_*.cc file.  registry.cc registers them on the registry's first
// use, which also keeps them linked from the static library.

#ifndef ISOLATION_LIB_IDLE_SELECT_BUILTIN_SELECTORS_H_
#define ISOLATION_LIB_IDLE_SELECT_BUILTIN_SELECTORS_H_

#include <memory>

#include "absl/status/statusor.h"
#include "isolation/idle_select/selector.h"

namespace isolation::idle_select {

absl::StatusOr<std::unique_ptr<IdleSelector>> NewV0(IdleState& state);           // sis_selector.cc
absl::StatusOr<std::unique_ptr<IdleSelector>> NewV1(IdleState& state);           // selector_v1.cc
absl::StatusOr<std::unique_ptr<IdleSelector>> NewV1Eager(IdleState& state);      // selector_v1.cc
absl::StatusOr<std::unique_ptr<IdleSelector>> NewV1TickStop(IdleState& state);   // selector_v1.cc
absl::StatusOr<std::unique_ptr<IdleSelector>> NewV1Unbounded(IdleState& state);  // selector_v1_unbounded.cc
absl::StatusOr<std::unique_ptr<IdleSelector>> NewV2(IdleState& state);           // selector_v2.cc
absl::StatusOr<std::unique_ptr<IdleSelector>> NewV3(IdleState& state);           // selector_v3.cc
absl::StatusOr<std::unique_ptr<IdleSelector>> NewV4Global(IdleState& state);     // selector_v4.cc
absl::StatusOr<std::unique_ptr<IdleSelector>> NewV4Node(IdleState& state);       // selector_v4.cc
absl::StatusOr<std::unique_ptr<IdleSelector>> NewV5(IdleState& state);           // selector_v5.cc
// Negative control: V1 without the per-CPU re-check (breaks I4).
absl::StatusOr<std::unique_ptr<IdleSelector>> NewV1Trusting(IdleState& state);   // selector_v1_trusting.cc
// Negative control: V0 whose idle entry skips the run-queue re-check (loses
// wakeups in the simulator's idle-entry window).
absl::StatusOr<std::unique_ptr<IdleSelector>> NewV0NoRecheck(IdleState& state);  // selector_v0_norecheck.cc

// The registry entries, one per built-in, each defined in the file of its
// selector (description, negative-control flag, origin, label, aliases);
// registry.cc registers them in this order.
SelectorEntry V0Entry();           // sis_selector.cc
SelectorEntry V1Entry();           // selector_v1.cc
SelectorEntry V1EagerEntry();      // selector_v1.cc
SelectorEntry V1TickStopEntry();   // selector_v1.cc
SelectorEntry V1UnboundedEntry();  // selector_v1_unbounded.cc
SelectorEntry V2Entry();           // selector_v2.cc
SelectorEntry V3Entry();           // selector_v3.cc
SelectorEntry V4GlobalEntry();     // selector_v4.cc
SelectorEntry V4NodeEntry();       // selector_v4.cc
SelectorEntry V5Entry();           // selector_v5.cc
SelectorEntry V1TrustingEntry();   // selector_v1_trusting.cc (negative control)
SelectorEntry V0NoRecheckEntry();  // selector_v0_norecheck.cc (negative control)

}  // namespace isolation::idle_select

#endif  // ISOLATION_LIB_IDLE_SELECT_BUILTIN_SELECTORS_H_
