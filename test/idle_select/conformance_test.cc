// SPDX-License-Identifier: GPL-2.0-or-later
// The kit's idle_select conformance suites (testing/idle_select.h) for every
// built-in selector that is not a negative control, exactly as an outside
// project instantiates them for its own: the invariant tests live in the kit.
// The list comes from the registry, so a built-in added there is covered here
// without editing this file.

#include <string>
#include <vector>

#include "isolation/idle_select/selector.h"
#include "isolation/testing/idle_select.h"

ISOLATION_IDLE_SELECT_CONFORMANCE_IN(BuiltIn, ::isolation::idle_select::SelectorNames());
