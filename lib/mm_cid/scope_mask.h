// SPDX-License-Identifier: GPL-2.0-or-later
// scope_mask.h (mm_cid module, not installed): the built-in scan scopes
// (strategies.h: ScopeStrategy) -- walking the scope in CPU order in chunks,
// over a range of CPU numbers (scan_possible) or over a mask of the mm
// (scan_allowed, scan_cidmask).
//
// Each built-in has two entry points doing the same walk: the virtual
// ForEach() every caller may use (the visitor through absl::FunctionRef),
// and ForEachInline(), a template the lazy design's scan instantiates with
// its visitor when it recognises the built-in at construction (the
// fixed part of a small scan, docs/performance.md goal 2; designs/lazy_design.h, ScanPath).  Both
// are the templates below, so they visit the same CPUs in the same order
// (scan_allowed's inline walk hands each CPU over as it is found: kEach,
// and walks a whole pass word by word: ForEachInMaskWholePass).
//
// Thread safety: stateless, immutable objects (strategies.h).

#ifndef ISOLATION_LIB_MM_CID_SCOPE_MASK_H_
#define ISOLATION_LIB_MM_CID_SCOPE_MASK_H_

#include <algorithm>
#include <bit>
#include <cstdint>
#include <string_view>

#include "isolation/mm_cid/strategies.h"

namespace isolation::mm_cid::internal {

// CPUs handed to the visitor per call: a chunk is collected before any of
// its CPUs is visited, so a visit that clears mask bits does not change the
// chunk being walked.
inline constexpr int kScopeChunk = 64;

// Positions [start, start + count) of the range [0, num_cpus).
template <typename Visit>
inline void ForEachInRange(int num_cpus, int start, int count, Visit&& visit) {
  int buf[kScopeChunk];
  const int end = std::min(num_cpus, start + std::max(count, 0));
  for (int c = std::max(start, 0); c < end;) {
    int n = 0;
    while (n < kScopeChunk && c < end) buf[n++] = c++;
    visit(static_cast<const int*>(buf), n);
  }
}

// A scope that is a mask of the mm, walked in CPU order
// (for_each_cpu(cpu, mask) in the proposals).  The walk finds the next set
// bit as AtomicCpuMask::Next() does, but loads each word of the mask at most
// once between two visits instead of once per bit searched (the fixed
// part of a small scan, docs/performance.md goal 2): after a visit every word is
// loaded again, so a visit that clears bits (scan_cidmask) is seen exactly
// as before, and a concurrent change between two visits is seen as if it
// happened after the later of the loads it skipped -- an order the
// per-bit loads could also have observed.
//
// kEach: visit each CPU as soon as the walk has found the next one, instead
// of collecting the chunk first (no buffer: measured ~3.5 ns of a 2-visit
// scan_allowed call).  The same CPUs in the same order, with the same word
// loads between cache resets (every kScopeChunk CPUs); a word may be loaded
// after an earlier CPU's visit rather than before it, which matters only if
// the visit changes the mask -- so only for masks the visit never writes
// (scan_allowed's union; not scan_cidmask's ID bitmap, which a reclaim
// clears).  A concurrent change is then seen as if it happened before the
// later load, an order the chunked walk could also have observed.
template <bool kEach = false, typename Visit>
inline void ForEachInMask(const AtomicCpuMask& set, int num_cpus, int start, int count,
                          Visit&& visit) {
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
  for (int i = 0; i < start && c < num_cpus; ++i) c = next(c);
  int buf[kScopeChunk];
  int left = count;
  while (left > 0 && c < num_cpus) {
    int n = 0;
    if constexpr (kEach) {
      (void)buf;
      while (n < kScopeChunk && left > 0 && c < num_cpus) {
        const int cpu = c;
        ++n;
        --left;
        c = next(c);
        visit(&cpu, 1);
      }
    } else {
      while (n < kScopeChunk && left > 0 && c < num_cpus) {
        buf[n++] = c;
        --left;
        c = next(c);
      }
      visit(static_cast<const int*>(buf), n);
    }
    cached_w = -1;  // the visit may have changed the mask
  }
}

// A whole pass over a mask the visits never write (scan_allowed's union):
// each word loaded once, its CPUs visited in order as its bits are found.
// The same CPUs in the same order as ForEachInMask<kEach> over [0, nbits);
// a concurrent change is seen as if it happened before or after the one load
// of its word, an order the chunked walk could also have observed.  For the
// fixed part of a small scan: a batch_full scan_allowed call walks no cursor, window or chunk.
template <typename Visit>
inline void ForEachInMaskWholePass(const AtomicCpuMask& set, int num_cpus, Visit&& visit) {
  const int limit = std::min(num_cpus, set.nbits());
  const int nwords = set.nwords();
  for (int w = 0; w < nwords; ++w) {
    for (uint64_t bits = set.LoadWord(w); bits != 0; bits &= bits - 1) {
      const int cpu = w * 64 + std::countr_zero(bits);
      if (cpu >= limit) return;
      visit(&cpu, 1);
    }
  }
}

// `scan_possible` (mainline, [LF]): for_each_possible_cpu.
class ScanPossible final : public ScopeStrategy {
 public:
  static constexpr std::string_view kName = "scan_possible";  // its registry entry's name
  int Size(const ScanSet& mm) const override { return mm.num_cpus; }
  void ForEach(const ScanSet& mm, int start, int count,
               absl::FunctionRef<void(const int* cpus, int n)> visit) const override {
    ForEachInline(mm, start, count, visit);
  }
  template <typename Visit>
  void ForEachInline(const ScanSet& mm, int start, int count, Visit&& visit) const {
    ForEachInRange(mm.num_cpus, start, count, visit);
  }
};

// `scan_allowed` ([SEED] thread): the mm's grow-only CPU union.
class ScanAllowed final : public ScopeStrategy {
 public:
  static constexpr std::string_view kName = "scan_allowed";
  int Size(const ScanSet& mm) const override { return mm.allowed->Weight(); }
  void ForEach(const ScanSet& mm, int start, int count,
               absl::FunctionRef<void(const int* cpus, int n)> visit) const override {
    ForEachInMask(*mm.allowed, mm.num_cpus, start, count, visit);  // chunks, as the interface says
  }
  template <typename Visit>
  void ForEachInline(const ScanSet& mm, int start, int count, Visit&& visit) const {
    // The visit never writes the union: each CPU as found (kEach above), a
    // whole pass word by word.
    if (start == 0 && count >= mm.num_cpus) {
      ForEachInMaskWholePass(*mm.allowed, mm.num_cpus, visit);
      return;
    }
    ForEachInMask</*kEach=*/true>(*mm.allowed, mm.num_cpus, start, count, visit);
  }
};

// `scan_cidmask` (negative control, patch 1/2 of [SEED]): the ID bitmap
// read as CPU numbers.
class ScanCidmask final : public ScopeStrategy {
 public:
  static constexpr std::string_view kName = "scan_cidmask";
  int Size(const ScanSet& mm) const override { return std::max(1, mm.cidmask->Weight()); }
  void ForEach(const ScanSet& mm, int start, int count,
               absl::FunctionRef<void(const int* cpus, int n)> visit) const override {
    ForEachInline(mm, start, count, visit);
  }
  template <typename Visit>
  void ForEachInline(const ScanSet& mm, int start, int count, Visit&& visit) const {
    ForEachInMask(*mm.cidmask, mm.num_cpus, start, count, visit);
  }
};

}  // namespace isolation::mm_cid::internal

#endif  // ISOLATION_LIB_MM_CID_SCOPE_MASK_H_
