// SPDX-License-Identifier: GPL-2.0-or-later
// Every invariant suite of the installed kit on this project's variants: one
// macro per mechanism.  And the kit catching a broken variant.

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "isolation/testing/idle_select.h"
#include "isolation/testing/vmstat.h"

ISOLATION_IDLE_SELECT_CONFORMANCE(Mine, "last_idle_hint");
ISOLATION_VMSTAT_CONFORMANCE(Mine, "B.half");

namespace {

// The broken copy trusts its hint: I4 ("a CPU returned as idle passes the
// fresh per-CPU check") reports it.
TEST(MyVariants, TheKitCatchesTheTrustingCopy) {
  EXPECT_THAT(
      isolation::testing::idle_select_conformance::Run("I4_HintOnly", "last_idle_hint_trusting"),
      ::testing::Not(::testing::IsEmpty()));
  EXPECT_THAT(isolation::testing::idle_select_conformance::Run("I4_HintOnly", "last_idle_hint"),
              ::testing::IsEmpty());
}

}  // namespace
