// SPDX-License-Identifier: GPL-2.0-or-later
// -----------------------------------------------------------------------------
// vmstat/internal/cells.h
// -----------------------------------------------------------------------------
//
// Internal: no API stability; not for use outside the library and the inline
// writer (vmstat/writer.h), which is why it is installed at all.  The
// per-CPU differential cells and their blocks as the slot code
// (lib/vmstat/slot_impl.h) lays them out, the s32-scaled encoding and its
// locked add (inline asm on x86-64).  The writer's slot forms over them are
// vmstat/internal/forms.h.
//
// Kernel counterpart: struct per_cpu_zonestat / per_cpu_nodestat's
// vm_stat_diff[] (include/linux/mmzone.h); the other cells are the
// library's own representations.
//
// Thread-safety: layouts and pure functions; who may write each cell is
// vmstat.h's contract.

#ifndef ISOLATION_VMSTAT_INTERNAL_CELLS_H_
#define ISOLATION_VMSTAT_INTERNAL_CELLS_H_

#include <array>
#include <atomic>
#include <cstdint>

#include "isolation/core/contract.h"
#include "isolation/vmstat/items.h"

namespace isolation::vmstat {

// The per-CPU differential layouts the inline writer front end (VmstatWriter)
// shares with the library's slot code (lib/vmstat/slot_impl.h): one cell per
// item, one cache-line-aligned block of kMaxNodeItems cells per (CPU, zone or
// node), blocks CPU-major.  Not for use outside the library and VmstatWriter.
namespace internal {
struct OwnerS8Cell {
  std::atomic<int8_t> d{0};
};
struct S32Cell {
  std::atomic<int32_t> d{0};
};
struct WatermarkCell {
  std::atomic<int64_t> slot{0};    // written only by the owner
  std::atomic<int64_t> folded{0};  // advanced by CAS by any folder
};
// The watermark words are running sums that may wrap (2^11 updates of 2^52
// do): they are added and subtracted modulo 2^64, where slot - folded (the
// small differential) stays exact.
inline int64_t WrapAdd(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
inline int64_t WrapSub(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
}
// a + b pinned to the int64 bounds.
inline int64_t SaturatingAdd(int64_t a, int64_t b) {
  int64_t sum;
  if (__builtin_add_overflow(a, b, &sum)) return b > 0 ? INT64_MAX : INT64_MIN;
  return sum;
}
template <typename Cell>
struct alignas(64) CellBlock {
  std::array<Cell, kMaxNodeItems> c;
};

// s32-scaled (C.addo, ours): the differential x is stored as the s32 x * k
// in the high half of a 64-bit word whose low half holds k, the unit, chosen
// per threshold t so that x * k fits an s32 exactly when |x| <= t.  Adding
// delta * k with one locked 64-bit add then sets the CPU's signed-overflow
// flag exactly when the kernel's |x + delta| > t test would fold: the
// update is `lock add` + `jo`, no result read back, no threshold compare.
// k is odd, so a wrapped value (the add that overflowed, before its fold
// takes it) is never a multiple of k and decodes unambiguously (below).
// Each item word carries its own k, so a folder on another CPU decodes it
// without any other load; k changes only by the owner (ScaledS32Cell::w is
// written by the owner's add, the owner's rescale and the folders' CAS,
// which keeps k).
struct ScaledS32Cell {
  std::atomic<uint64_t> w{0};  // x * k (s32) << 32 | k; 0 = never scaled (x = 0)
};
// The owner's unit for the block's items: k | t << 32, with t the threshold
// the items were scaled for; kScaledNoFastPath (t = 511, never a threshold)
// until the first update scales them, and for t = 0 (every update folds).
inline constexpr uint64_t kScaledNoFastPath = uint64_t{511} << 32;
template <>
struct alignas(64) CellBlock<ScaledS32Cell> {
  std::atomic<uint64_t> scale{kScaledNoFastPath};  // written by the owner only
  std::array<ScaledS32Cell, kMaxNodeItems> c;
};
inline constexpr int64_t kScaledS32Max = (int64_t{1} << 31) - 1;
// The unit of threshold t (0 for t <= 0: no scaled fast path): the largest
// odd k with t * k <= 2^31 - 1.  Then (t + 1) * k > 2^31, so |x| = t + 1
// leaves the s32 on either side (ScaledUnitIsExact checks every t <= 125).
constexpr uint32_t ScaledUnit(int t) {
  if (t <= 0) return 0;
  const int64_t k = kScaledS32Max / t;
  return static_cast<uint32_t>(k % 2 == 0 ? k - 1 : k);
}
// The threshold a unit was chosen for: k = floor(M / t) or one less, and
// M / (t + 1) < k, so floor(M / k) = t.
constexpr int ScaledThresholdOf(uint32_t k) {
  return k == 0 ? 0 : static_cast<int>(kScaledS32Max / k);
}
constexpr bool ScaledUnitIsExact(int t) {
  const int64_t k = ScaledUnit(t);
  return k > 1 && k % 2 == 1 && t * k <= kScaledS32Max && (t + 1) * k > kScaledS32Max + 1 &&
         ScaledThresholdOf(static_cast<uint32_t>(k)) == t;
}
constexpr bool ScaledUnitsAreExact() {
  for (int t = 1; t <= kThresholdCap; ++t) {
    if (!ScaledUnitIsExact(t)) return false;
  }
  return true;
}
static_assert(ScaledUnitsAreExact(),
              "s32-scaled: a threshold <= kThresholdCap without an exact unit");
// The word of differential x (|x| <= ScaledThresholdOf(k); x = 0 when k = 0).
constexpr uint64_t ScaledEncode(int64_t x, uint32_t k) {
  return static_cast<uint64_t>(static_cast<uint32_t>(x * static_cast<int64_t>(k))) << 32 | k;
}
// The differential a word holds, also right after an add that overflowed:
// the s32 wrapped by 2^32 up (sum below -2^31) or down (above 2^31 - 1),
// which leaves it 2^32 mod k resp. -2^32 mod k above a multiple of k, never
// on one (k odd and > 1), and the two differ (k does not divide 2^33).
inline int64_t ScaledDecode(uint64_t w) {
  const int64_t s = static_cast<int32_t>(static_cast<uint32_t>(w >> 32));
  const int64_t k = static_cast<uint32_t>(w);
  if (k <= 1) return s;  // never scaled: s is 0
  constexpr int64_t kWrap = int64_t{1} << 32;
  int64_t r = s % k;
  if (r < 0) r += k;
  if (r == 0) return s / k;
  if (r == kWrap % k) return (s - kWrap) / k;  // wrapped up: the sum was s - 2^32
  // Any other residue is no word the slot code writes.
  ISOLATION_CONTRACT(r == (k - kWrap % k) % k,
                     "vmstat s32-scaled: word %#x is no differential in unit %d", w, k);
  return (s + kWrap) / k;  // wrapped down: s + 2^32
}
// The fast path's add: w += dk * 2^32 (the low half, k, unchanged), true if
// the s32 overflowed -- exactly when |x + delta| passed the threshold.
// REQUIRES |dk| <= 2^31 - 1.  On x86-64 `lock add` + `jo` (the flag of the
// 64-bit add is the s32's: nothing carries out of the low half); elsewhere,
// and under TSan (which cannot see inline asm), fetch_add and the same test
// on the value it returns.
#if defined(__x86_64__) && !defined(__SANITIZE_THREAD__) && !defined(ISOLATION_TSAN) && \
    !ISOLATION_INTERNAL_HAS_FEATURE(thread_sanitizer)
#define ISOLATION_VMSTAT_SCALED_ADD_ASM 1
#else
#define ISOLATION_VMSTAT_SCALED_ADD_ASM 0
#endif
inline bool ScaledAddOverflows(std::atomic<uint64_t>& w, int64_t dk) {
  const uint64_t add = static_cast<uint64_t>(dk) << 32;
#if ISOLATION_VMSTAT_SCALED_ADD_ASM
  // Relaxed in effect (a locked add on x86 orders more than needed; the
  // slot's single modification order against the folders' CAS is what
  // conserves the counts, as C's CAS).  No "memory" clobber: nothing but the
  // word is touched, and nothing else needs ordering around it.  The flag
  // comes out as an output operand (=@cco), not through asm goto: GCC 12.2
  // is among the versions the kernel keeps asm goto with outputs off for.
  // Both dialects spelled, for -masm=intel.
  bool overflowed;
  asm volatile("lock add{q %2, %0| %0, %2}" : "+m"(w), "=@cco"(overflowed) : "r"(add) : "cc");
  return overflowed;
#else
  // Relaxed: as the locked add above.
  const int64_t old = static_cast<int64_t>(w.fetch_add(add, std::memory_order_relaxed));
  int64_t sum;
  return __builtin_add_overflow(old, static_cast<int64_t>(add), &sum);
#endif
}
}  // namespace internal

}  // namespace isolation::vmstat

#endif  // ISOLATION_VMSTAT_INTERNAL_CELLS_H_
