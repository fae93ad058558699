// SPDX-License-Identifier: GPL-2.0-or-later
// The conformance kit's mm_cid suites (include/isolation/testing/mm_cid.h)
// for every built-in variant, from the registries: the direct-API,
// scan and simulator suites over every combination of the registered
// variants that are not negative controls (registry.h: AllVariants(), 62
// with the built-ins), the exhaustive-schedule and long / real-thread
// suites over a covering set in which every registered variant of every
// axis appears (CoveringVariants(), 12), to keep the CI time bounded.  The
// negative controls are shown failing the same checks in
// mm_cid_negative_controls_test.cc.

#include "isolation/mm_cid/registry.h"
#include "isolation/testing/mm_cid.h"

ISOLATION_MM_CID_DIRECT_CONFORMANCE(Builtin, ::isolation::mm_cid::AllVariants());
ISOLATION_MM_CID_SCAN_CONFORMANCE(Builtin, ::isolation::mm_cid::AllVariants());
ISOLATION_MM_CID_SIM_CONFORMANCE(Builtin, ::isolation::mm_cid::AllVariants());
ISOLATION_MM_CID_RACE_CONFORMANCE(Builtin, ::isolation::mm_cid::CoveringVariants());
ISOLATION_MM_CID_STRESS_CONFORMANCE(Builtin, ::isolation::mm_cid::CoveringVariants());
