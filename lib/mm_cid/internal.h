// SPDX-License-Identifier: GPL-2.0-or-later
// internal.h (mm_cid module, not installed): factories of the two designs.

#ifndef ISOLATION_LIB_MM_CID_INTERNAL_H_
#define ISOLATION_LIB_MM_CID_INTERNAL_H_

#include <memory>

#include "absl/status/statusor.h"
#include "isolation/mm_cid.h"

namespace isolation::mm_cid::internal {

absl::StatusOr<std::unique_ptr<MmCid>> CreateLazy(int num_cpus, const MmCidConfig& config,
                                                  MmCid::Limits limits);
absl::StatusOr<std::unique_ptr<MmCid>> CreateOwner619(int num_cpus, const MmCidConfig& config,
                                                      MmCid::Limits limits);

}  // namespace isolation::mm_cid::internal

#endif  // ISOLATION_LIB_MM_CID_INTERNAL_H_
