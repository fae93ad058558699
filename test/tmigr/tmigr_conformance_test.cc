// SPDX-License-Identifier: GPL-2.0-or-later
// The conformance kit's tmigr suites (isolation/testing/tmigr.h) for every
// built-in variant that is not a negative control: the invariant and
// scenario tests of the hierarchy live in the kit, so an outside project
// runs exactly these on its own variant.

#include "isolation/testing/tmigr.h"

ISOLATION_TMIGR_CONFORMANCE_VALUES(BuiltIn, ::testing::ValuesIn(isolation::testing::RegisteredTmigrVariants()));
