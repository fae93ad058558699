// SPDX-License-Identifier: GPL-2.0-or-later
// mm_cid_internal.h (conformance kit, not installed): what the mm_cid suite
// files share besides the public testing/mm_cid.h.

#ifndef ISOLATION_LIB_TESTING_MM_CID_INTERNAL_H_
#define ISOLATION_LIB_TESTING_MM_CID_INTERNAL_H_

#include <memory>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "isolation/testing/mm_cid.h"

namespace isolation::testing::mm_cid::internal {

// S13's expectations from a variant's traits (direct API and simulator):
// without a tick kick the busy survivor keeps its ID; with it, a compacting
// variant re-takes it to 0 within `kick_bound` of the last exit; after its
// next schedin a compacting variant holds 0, a non-compacting one its start
// ID; a variant with a scan scanned while it was busy, one without did not.
Violations NeverPreemptedExpectations(const VariantTraits& t, int32_t start_id, int32_t id_end_of_busy,
                                      Nanos changed_after_last_exit, int32_t id_after_schedin, int64_t scans,
                                      int64_t kick_retakes, Nanos kick_bound);

// MmCid::Create(cpus, v) for a check that reports into `invariants`: the
// mechanism, or nullptr with the creation error recorded there.
inline std::unique_ptr<isolation::mm_cid::MmCid> CreateOrRecord(const MmCidVariant& v, int cpus,
                                                                 Violations& invariants) {
  auto created = isolation::mm_cid::MmCid::Create(cpus, v);
  if (!created.ok()) {
    invariants.push_back(created.status().ToString());
    return nullptr;
  }
  return *std::move(created);
}

// Forks tasks cpus-1 .. 0 of `mm` in that order, task k pinned to CPU k (the
// first without a parent, the others from it); owner619 allocates IDs at
// fork, so there CPU k's task gets ID cpus-1-k.  A failed fork is recorded in
// `invariants`.
void ForkOnePerCpuReversed(isolation::mm_cid::MmCid& m, isolation::mm_cid::MmId mm, int cpus, Nanos now,
                           Violations& invariants);

// A property the variant declares is checked both ways: declared, the check
// finds nothing; declared not to hold, the check must find something.
inline void ExpectDeclared(bool declared, const Violations& property, const std::string& what) {
  if (declared) {
    EXPECT_THAT(property, ::testing::IsEmpty()) << what;
  } else {
    EXPECT_THAT(property, ::testing::Not(::testing::IsEmpty()))
        << what << ": the variant declares it does not hold, yet it held";
  }
}

}  // namespace isolation::testing::mm_cid::internal

#endif  // ISOLATION_LIB_TESTING_MM_CID_INTERNAL_H_
