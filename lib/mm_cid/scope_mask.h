// SPDX-License-Identifier: GPL-2.0-or-later
// scope_mask.h (mm_cid module, not installed): what the scan scopes share --
// walking the scope in CPU order in chunks (strategies.h: ScopeStrategy),
// over a range of CPU numbers (scan_possible) or over a mask of the mm
// (scan_allowed, scan_cidmask).

#ifndef ISOLATION_LIB_MM_CID_SCOPE_MASK_H_
#define ISOLATION_LIB_MM_CID_SCOPE_MASK_H_

#include <algorithm>

#include "isolation/mm_cid/strategies.h"

namespace isolation::mm_cid::internal {

// CPUs handed to the visitor per call: a chunk is collected before any of
// its CPUs is visited, so a visit that clears mask bits does not change the
// chunk being walked.
inline constexpr int kScopeChunk = 64;

// Positions [start, start + count) of the range [0, num_cpus).
inline void ForEachInRange(int num_cpus, int start, int count,
                           absl::FunctionRef<void(const int* cpus, int n)> visit) {
  int buf[kScopeChunk];
  const int end = std::min(num_cpus, start + std::max(count, 0));
  for (int c = std::max(start, 0); c < end;) {
    int n = 0;
    while (n < kScopeChunk && c < end) buf[n++] = c++;
    visit(buf, n);
  }
}

// A scope that is a mask of the mm, walked in CPU order.
class MaskScope : public ScopeStrategy {
 public:
  void ForEach(const ScanSet& mm, int start, int count,
               absl::FunctionRef<void(const int* cpus, int n)> visit) const final {
    const AtomicCpuMask& set = Mask(mm);
    int c = set.Next(-1);
    for (int i = 0; i < start && c < mm.num_cpus; ++i) c = set.Next(c);
    int buf[kScopeChunk];
    int left = count;
    while (left > 0 && c < mm.num_cpus) {
      int n = 0;
      while (n < kScopeChunk && left > 0 && c < mm.num_cpus) {
        buf[n++] = c;
        --left;
        c = set.Next(c);
      }
      visit(buf, n);
    }
  }

 protected:
  virtual const AtomicCpuMask& Mask(const ScanSet& mm) const = 0;
};

}  // namespace isolation::mm_cid::internal

#endif  // ISOLATION_LIB_MM_CID_SCOPE_MASK_H_
