// SPDX-License-Identifier: GPL-2.0-or-later
// Granularity `batch_full` (mainline): every task_mm_cid_work() call is a
// whole pass over the scope, and every call is rate limited.

#include <memory>

#include "mm_cid/batch.h"
#include "mm_cid/builtins.h"

namespace isolation::mm_cid::internal {

// The class: batch.h (shared with the lazy design's inlined scan).
GranularityEntry BatchFullEntry() {
  GranularityFactory factory;
  factory.create = [](int) -> absl::StatusOr<std::unique_ptr<GranularityStrategy>> {
    return std::unique_ptr<GranularityStrategy>(new BatchFull);
  };
  return {"batch_full", "mainline: a whole pass per call (up to 2P visits at once)",
          /*negative_control=*/false, std::move(factory)};
}

}  // namespace isolation::mm_cid::internal
