// SPDX-License-Identifier: GPL-2.0-or-later
// scan_path.h (mm_cid module, not installed): which loop the lazy design's
// compaction scan (task_mm_cid_work()) runs.  The design resolves its scope
// and granularity once, at construction: a pair of built-in classes listed
// below gets a loop instantiated for it, the strategies' methods and the
// per-chunk visitor inlined (the fixed part of a small scan); any other
// pair -- a strategy registered from outside the library -- runs the
// generic loop through the virtual ScopeStrategy / GranularityStrategy
// calls.  Both are one template (designs/lazy_design.h, ScanLoop), so they visit the
// same slots in the same order and free the same IDs.  No kernel
// counterpart: the kernel compiles one loop.
//
// The inlined paths are the product of two type lists: a new built-in scope
// on the fast path is its class (scope_mask.h style: final, kName,
// ForEachInline) plus one entry in InlineScopes.
//
// Thread safety: ScanPathOf() reads a value fixed at construction.

#ifndef ISOLATION_LIB_MM_CID_SCAN_PATH_H_
#define ISOLATION_LIB_MM_CID_SCAN_PATH_H_

#include <cstddef>
#include <string>
#include <tuple>
#include <utility>

#include "isolation/mm_cid/mm_cid.h"
#include "mm_cid/batch.h"
#include "mm_cid/scope_mask.h"

namespace isolation::mm_cid::internal {

// The built-in classes whose pairs get an inlined scan loop.
using InlineScopes = std::tuple<ScanPossible, ScanAllowed, ScanCidmask>;
using InlineGranularities = std::tuple<BatchFull, BatchN>;

inline constexpr int kInlineGranularities =
    static_cast<int>(std::tuple_size_v<InlineGranularities>);
inline constexpr int kInlineScanPaths =
    static_cast<int>(std::tuple_size_v<InlineScopes>) * kInlineGranularities;
// A scan path: the index of a (scope, granularity) pair of the lists above,
// or kGenericScanPath.
using ScanPath = int;
inline constexpr ScanPath kGenericScanPath = -1;

template <size_t kPath>
using PathScope = std::tuple_element_t<kPath / kInlineGranularities, InlineScopes>;
template <size_t kPath>
using PathGranularity = std::tuple_element_t<kPath % kInlineGranularities, InlineGranularities>;

// The path of the pair whose dynamic types are listed (the classes are
// final: not by name, a registry entry may make any class), once per design.
inline ScanPath ChooseScanPath(const ScopeStrategy* scope, const GranularityStrategy* granularity) {
  return [&]<size_t... kPath>(std::index_sequence<kPath...>) {
    ScanPath path = kGenericScanPath;
    ((path == kGenericScanPath && dynamic_cast<const PathScope<kPath>*>(scope) != nullptr &&
              dynamic_cast<const PathGranularity<kPath>*>(granularity) != nullptr
          ? (path = static_cast<ScanPath>(kPath))
          : 0),
     ...);
    return path;
  }
  (std::make_index_sequence<kInlineScanPaths>{});
}

// Whether every call of `path` starts a whole pass at 0 (its granularity's
// kWholePass); false for the generic path.
inline bool IsWholePassPath(ScanPath path) {
  return [&]<size_t... kPath>(std::index_sequence<kPath...>) {
    return ((path == static_cast<ScanPath>(kPath) && PathGranularity<kPath>::kWholePass) || ...);
  }
  (std::make_index_sequence<kInlineScanPaths>{});
}

// "scan_possible+batch_full", ...; "generic".
inline std::string ScanPathName(ScanPath path) {
  std::string name = "generic";
  [&]<size_t... kPath>(std::index_sequence<kPath...>) {
    ((path == static_cast<ScanPath>(kPath)
          ? (void)(name = std::string(PathScope<kPath>::kName) + "+" +
                          std::string(PathGranularity<kPath>::kName))
          : (void)0),
     ...);
  }
  (std::make_index_sequence<kInlineScanPaths>{});
  return name;
}

// Implemented by the designs that have a compaction scan.
class ScanPathInfo {
 public:
  virtual ScanPath scan_path() const = 0;

 protected:
  ~ScanPathInfo() = default;
};

// The path `m` runs; kGenericScanPath for a design without the choice.
inline ScanPath ScanPathOf(const MmCid& m) {
  const auto* info = dynamic_cast<const ScanPathInfo*>(&m);
  return info != nullptr ? info->scan_path() : kGenericScanPath;
}

}  // namespace isolation::mm_cid::internal

#endif  // ISOLATION_LIB_MM_CID_SCAN_PATH_H_
