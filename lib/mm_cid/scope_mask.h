// SPDX-License-Identifier: GPL-2.0-or-later
// scope_mask.h (mm_cid module, not installed): what the scan scopes share --
// walking the scope in CPU order in chunks (strategies.h: ScopeStrategy),
// over a range of CPU numbers (scan_possible) or over a mask of the mm
// (scan_allowed, scan_cidmask).

#ifndef ISOLATION_LIB_MM_CID_SCOPE_MASK_H_
#define ISOLATION_LIB_MM_CID_SCOPE_MASK_H_

#include <algorithm>
#include <bit>
#include <cstdint>

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

// A scope that is a mask of the mm, walked in CPU order
// (for_each_cpu(cpu, mask) in the proposals).  The walk finds the next set
// bit as AtomicCpuMask::Next() does, but loads each word of the mask at most
// once between two visits instead of once per bit searched (issue #12
// goal 2: the fixed part of a small scan): after a visit every word is
// loaded again, so a visit that clears bits (scan_cidmask) is seen exactly
// as before, and a concurrent change between two visits is seen as if it
// happened after the later of the loads it skipped -- an order the
// per-bit loads could also have observed.
class MaskScope : public ScopeStrategy {
 public:
  void ForEach(const ScanSet& mm, int start, int count,
               absl::FunctionRef<void(const int* cpus, int n)> visit) const final {
    const AtomicCpuMask& set = Mask(mm);
    const int nbits = set.nbits();
    const int nwords = set.nwords();
    int cached_w = -1;  // the word loaded since the last visit, if any
    uint64_t cached = 0;
    // AtomicCpuMask::Next(n), through the cache.
    auto next = [&](int n) {
      const int first = n + 1;
      if (first >= nbits) return nbits;
      int w = first / 64;
      if (w != cached_w) {
        cached = set.LoadWord(w);
        cached_w = w;
      }
      uint64_t v = cached & (~uint64_t{0} << (first % 64));
      while (v == 0) {
        if (++w >= nwords) return nbits;
        cached = set.LoadWord(w);
        cached_w = w;
        v = cached;
      }
      const int bit = w * 64 + std::countr_zero(v);
      return bit < nbits ? bit : nbits;
    };
    int c = next(-1);
    for (int i = 0; i < start && c < mm.num_cpus; ++i) c = next(c);
    int buf[kScopeChunk];
    int left = count;
    while (left > 0 && c < mm.num_cpus) {
      int n = 0;
      while (n < kScopeChunk && left > 0 && c < mm.num_cpus) {
        buf[n++] = c;
        --left;
        c = next(c);
      }
      visit(buf, n);
      cached_w = -1;  // the visit may have changed the mask
    }
  }

 protected:
  virtual const AtomicCpuMask& Mask(const ScanSet& mm) const = 0;
};

}  // namespace isolation::mm_cid::internal

#endif  // ISOLATION_LIB_MM_CID_SCOPE_MASK_H_
