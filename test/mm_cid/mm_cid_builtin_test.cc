// SPDX-License-Identifier: GPL-2.0-or-later
// What docs/mm_cid.md says about particular built-in variants beyond the generic
// properties the conformance kit checks, measured with the kit's own runs
// (include/isolation/testing/mm_cid.h): S12's exact slot visits per pass of
// each built-in scan scope, and S6's "alloc_v6_4 hands the low IDs to
// whichever CPU runs" (the region bounces between LLCs) -- a behaviour, not
// a promise, so the kit records it and this test asserts it for alloc_v6_4.

#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "isolation/mm_cid/registry.h"
#include "isolation/testing/mm_cid.h"

namespace isolation::mm_cid {
namespace {

namespace kit = ::isolation::testing::mm_cid;

MmCidVariant Lazy(const std::string& scope, const std::string& granularity) {
  MmCidVariant v;
  v.lazy.scope = scope;
  v.lazy.granularity = granularity;
  return v;
}

// S12: P = 128, one task pinned to CPU 77: scan_possible 2P = 256 visits per
// pass, scan_allowed 2 (<= a twentieth of possible), scan_cidmask 2 (and
// wrong: it visits CPU 0, the ID, not CPU 77); batch_8 takes 16 calls for
// scan_possible, one for the others.
TEST(MmCidBuiltins, S12_VisitsPerPassOfEachScope) {
  struct Case {
    const char* scope;
    const char* granularity;
    int visits;
    int calls;
  };
  for (const Case& c :
       {Case{"scan_possible", "batch_full", 256, 1}, Case{"scan_possible", "batch_8", 256, 16},
        Case{"scan_allowed", "batch_full", 2, 1}, Case{"scan_allowed", "batch_8", 2, 1},
        Case{"scan_cidmask", "batch_full", 2, 1}, Case{"scan_cidmask", "batch_8", 2, 1}}) {
    const kit::VisitsRun r = kit::RunVisitsPerPass(Lazy(c.scope, c.granularity), 128, 77);
    EXPECT_THAT(r.invariants, ::testing::IsEmpty()) << c.scope;
    EXPECT_EQ(r.visits, c.visits) << c.scope << " " << c.granularity;
    EXPECT_EQ(r.calls, c.calls) << c.scope << " " << c.granularity;
  }
}

// S6 with alloc_v6_4 and 200 ms gaps: every other slot is older than the
// period when a burst's scan runs, so the lowest free IDs go to whichever CPU
// runs next -- at most 1 + ceil(n/N) IDs circulate (batch_N keeps a parked ID
// for a full pass of bursts) and, one CPU per LLC, the region moves between
// LLCs in more than half of the bursts.  (The per-CPU reuse rate is not the
// signal: with one circulating ID it is trivially 100 %.)
TEST(MmCidBuiltins, S6_AllocV6_4HandsLowIdsToWhicheverCpuRuns) {
  for (const std::string& granularity : {std::string("batch_full"), std::string("batch_8")}) {
    for (const std::string& placement : PlacementRegistry().Names()) {
      MmCidVariant v = Lazy("scan_possible", granularity);
      v.lazy.allocator = "alloc_v6_4";
      v.lazy.placement = placement;
      for (const auto& [n, per_llc] : {std::pair{8, 8}, std::pair{24, 1}}) {
        const kit::BurstRun r =
            kit::RunBursts(v, n, per_llc, 200 * kNsPerMs, 300, 0x56 + static_cast<uint64_t>(n));
        const std::string where = absl::StrCat(v.Name(), " n=", n);
        EXPECT_THAT(r.invariants, ::testing::IsEmpty()) << where;
        const int passes = granularity == "batch_8" ? (n + 7) / 8 : 1;
        EXPECT_LE(r.distinct_ids, 1 + passes) << where;
        if (per_llc == 1) {
          EXPECT_GT(r.llc_moves, r.bursts_counted / 2) << where;
        }
      }
    }
  }
}

}  // namespace
}  // namespace isolation::mm_cid
