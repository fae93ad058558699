// SPDX-License-Identifier: GPL-2.0-or-later
// scan_path.h (mm_cid module, not installed): which loop the lazy design's
// compaction scan (task_mm_cid_work()) runs.  The design resolves its scope
// and granularity once, at construction: a built-in pair (scope_mask.h,
// batch.h) gets a loop instantiated for it, the strategies' methods and the
// per-chunk visitor inlined (the fixed part of a small scan,
// docs/performance.md goal 2); any other pair -- a strategy registered from outside the library
// -- runs the generic loop through the virtual ScopeStrategy /
// GranularityStrategy calls.  Both are one template (lazy_design.h,
// ScanLoop), so they visit the same slots in the same order and free the
// same IDs.  No kernel counterpart: the kernel compiles one loop.
//
// Thread safety: ScanPathOf() reads a value fixed at construction.

#ifndef ISOLATION_LIB_MM_CID_SCAN_PATH_H_
#define ISOLATION_LIB_MM_CID_SCAN_PATH_H_

#include "isolation/mm_cid/mm_cid.h"

namespace isolation::mm_cid::internal {

enum class ScanPath {
  kGeneric,  // virtual strategy calls, the visitor through absl::FunctionRef
  kPossibleFull,
  kPossibleBatchN,
  kAllowedFull,
  kAllowedBatchN,
  kCidmaskFull,
  kCidmaskBatchN,
};

inline const char* ScanPathName(ScanPath p) {
  switch (p) {
    case ScanPath::kGeneric: return "generic";
    case ScanPath::kPossibleFull: return "scan_possible+batch_full";
    case ScanPath::kPossibleBatchN: return "scan_possible+batch_N";
    case ScanPath::kAllowedFull: return "scan_allowed+batch_full";
    case ScanPath::kAllowedBatchN: return "scan_allowed+batch_N";
    case ScanPath::kCidmaskFull: return "scan_cidmask+batch_full";
    case ScanPath::kCidmaskBatchN: return "scan_cidmask+batch_N";
  }
  return "?";
}

// Implemented by the designs that have a compaction scan.
class ScanPathInfo {
 public:
  virtual ScanPath scan_path() const = 0;

 protected:
  ~ScanPathInfo() = default;
};

// The path `m` runs; kGeneric for a design without the choice.
inline ScanPath ScanPathOf(const MmCid& m) {
  const auto* info = dynamic_cast<const ScanPathInfo*>(&m);
  return info != nullptr ? info->scan_path() : ScanPath::kGeneric;
}

}  // namespace isolation::mm_cid::internal

#endif  // ISOLATION_LIB_MM_CID_SCAN_PATH_H_
