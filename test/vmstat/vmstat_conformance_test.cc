// SPDX-License-Identifier: GPL-2.0-or-later
// The conformance kit (testing/vmstat.h) on every registered fold policy --
// the built-ins A0, A1, B, B.local, C, D, C.xadd, C.addo and the outside project's policy of
// examples/out_of_tree (one RegisterFoldPolicy call) -- and on two
// pairs that run a policy over another slot representation than its own.
// The negative controls are left out here; vmstat_negative_control_test
// shows that they fail.

#include <string>

#include "isolation/testing/vmstat.h"
#include "isolation/vmstat/fold_policy.h"

// B.half (B, folding on return to user only past t/2) is registered by
// examples/out_of_tree/half_threshold.cc, compiled into this test: the same
// file an outside project builds against the installed kit.

ISOLATION_VMSTAT_CONFORMANCE_IN(Registered,
                                ::testing::ValuesIn(isolation::vmstat::FoldPolicyRegistry().Names()));
ISOLATION_VMSTAT_CONFORMANCE_IN(OtherSlot, ::testing::Values("A1:s32-atomic", "B.local:s64-watermark"));
