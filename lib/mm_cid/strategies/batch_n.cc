// SPDX-License-Identifier: GPL-2.0-or-later
// Granularity family `batch_N` ([BATCH] <20250716160603.138385-9-gmonaco@redhat.com>,
// CONFIG_RSEQ_CID_SCAN_BATCH, default 8): each call visits the next N CPUs of
// the scope in each loop, claimed by a CAS on the mm's cursor
// (mm_cid_scan_batch); only a call starting at position 0 is rate limited,
// and a full pass takes ceil(size / N) calls.

#include <memory>

#include "absl/strings/str_cat.h"
#include "isolation/core/cpumask.h"
#include "mm_cid/batch.h"
#include "mm_cid/builtins.h"

namespace isolation::mm_cid::internal {

// The class: batch.h (shared with the lazy design's inlined scan).
GranularityEntry BatchNEntry() {
  GranularityFactory factory;
  factory.create = [](int n) -> absl::StatusOr<std::unique_ptr<GranularityStrategy>> {
    if (n < 1 || n > kMaxCpus) {
      return absl::InvalidArgumentError(
          absl::StrCat("mm_cid: batch ", n, " outside [1, ", kMaxCpus, "]"));
    }
    return std::unique_ptr<GranularityStrategy>(new BatchN(n));
  };
  factory.enumerate_n = 8;  // the default, batch_8
  return {"batch_N",
          "[BATCH]: N CPUs of the scope per call (batch_8 ...), rate limit only at cursor 0",
          /*negative_control=*/false, std::move(factory)};
}

}  // namespace isolation::mm_cid::internal
