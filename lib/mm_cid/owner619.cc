// SPDX-License-Identifier: GPL-2.0-or-later
// The `owner619` design (6.19 rewrite): not built yet.

#include "absl/status/status.h"
#include "mm_cid/internal.h"

namespace isolation::mm_cid::internal {

absl::StatusOr<std::unique_ptr<MmCid>> CreateOwner619(int num_cpus, const MmCidConfig& config,
                                                      MmCid::Limits limits) {
  (void)num_cpus;
  (void)config;
  (void)limits;
  return absl::UnimplementedError("mm_cid: design owner619 is not built yet");
}

}  // namespace isolation::mm_cid::internal
