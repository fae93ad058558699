// SPDX-License-Identifier: GPL-2.0-or-later
// Internal to lib/idle_select: the list of the built-in selectors, one per
// selector_*.cc file.  registry.cc registers them on the registry's first
// use, which also keeps them linked from the static library.

#ifndef ISOLATION_LIB_IDLE_SELECT_BUILTIN_SELECTORS_H_
#define ISOLATION_LIB_IDLE_SELECT_BUILTIN_SELECTORS_H_

#include <memory>

#include "absl/status/statusor.h"
#include "isolation/idle_select/selector.h"

namespace isolation::idle_select {

// The built-in selectors in registration order (the order of every list:
// suites, benchmarks, isolab), one line each: X(<entry function>), defined
// in the selector's file (description, negative-control flag, label,
// aliases).  A new built-in is its file plus one line here.
#define ISOLATION_IDLE_SELECT_BUILTINS(X)                             \
  X(V0Entry)          /* sis_selector.cc */                           \
  X(V1Entry)          /* selector_v1.cc */                            \
  X(V1EagerEntry)     /* selector_v1.cc */                            \
  X(V1TickStopEntry)  /* selector_v1.cc */                            \
  X(V1UnboundedEntry) /* selector_v1_unbounded.cc */                  \
  X(V2Entry)          /* selector_v2.cc */                            \
  X(V3Entry)          /* selector_v3.cc */                            \
  X(V4GlobalEntry)    /* selector_v4.cc */                            \
  X(V4NodeEntry)      /* selector_v4.cc */                            \
  X(V5Entry)          /* selector_v5.cc */                            \
  X(V0TargetEntry)    /* selector_v0_from_target.cc */                \
  X(V1TrustingEntry)  /* selector_v1_trusting.cc, negative control */ \
  X(V0NoRecheckEntry) /* selector_v0_norecheck.cc, negative control */

#define ISOLATION_IDLE_SELECT_DECLARE_(entry) SelectorEntry entry();
ISOLATION_IDLE_SELECT_BUILTINS(ISOLATION_IDLE_SELECT_DECLARE_)
#undef ISOLATION_IDLE_SELECT_DECLARE_

}  // namespace isolation::idle_select

#endif  // ISOLATION_LIB_IDLE_SELECT_BUILTIN_SELECTORS_H_
