// SPDX-License-Identifier: GPL-2.0-or-later
// -----------------------------------------------------------------------------
// cpumask.h
// -----------------------------------------------------------------------------
//
// A CPU bitmap sized at run time (up to 8192 CPUs, the kernel's largest
// NR_CPUS) with the kernel's cpumask vocabulary, and an atomic form for masks
// that several CPUs update concurrently.
//
// Kernel counterpart: include/linux/cpumask.h, lib/find_bit.c, and
// bitmap_parselist()/bitmap_print_to_pagebuf() in lib/bitmap-str.c / lib/bitmap.c.
//
//   CpuMask        plain bitmap; Set/Clear/Test, First/Next/NextWrap/NextAnd/
//                  FirstZero/Nth, Weight, And/Or/AndNot, Equal/IsSubsetOf/
//                  Intersects, range-for iteration, cpulist parse and print.
//   AtomicCpuMask  bitmap of std::atomic<uint64_t> words: Set/Clear (relaxed,
//                  like the kernel's unordered set_bit/clear_bit) and
//                  TestAndSet/TestAndClear (seq_cst, like the kernel's fully
//                  ordered value-returning bitops), word-at-a-time searches.
//
// "None found" is reported as a value >= nbits(), as the kernel reports
// ">= nr_cpu_ids".  Search and iteration are word-at-a-time (count-trailing-
// zeros, popcount).
//
// Thread safety: CpuMask is a value type with no internal synchronisation;
// concurrent const use is safe.  AtomicCpuMask operations are each atomic on
// the word holding the bit; multi-word reads (Weight, Snapshot, searches) are
// not a consistent snapshot of the whole mask, exactly as in the kernel.
//
// Allocation: constructors and the parsers allocate; every other member
// function (including all searches and in-place set algebra) does not.
//
// Contracts: the REQUIRES below (bit in range, search start >= -1, equal
// sizes for set algebra) are the kernel's cpumask contract; they are checked
// with ISOLATION_CONTRACT (contract.h) where checks are on, unchecked in
// Release builds.  Outside input goes through Parse(), which validates.

#ifndef ISOLATION_CPUMASK_H_
#define ISOLATION_CPUMASK_H_

#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "isolation/core/contract.h"

namespace isolation {

inline constexpr int kMaxCpus = 8192;  // kernel CONFIG_NR_CPUS maximum

namespace cpumask_internal {
inline constexpr int kWordBits = 64;
constexpr int WordsFor(int nbits) { return (nbits + kWordBits - 1) / kWordBits; }
constexpr uint64_t LastWordMask(int nbits) {
  const int rem = nbits % kWordBits;
  return rem == 0 ? ~uint64_t{0} : (uint64_t{1} << rem) - 1;
}

// Population-count loops over word arrays (Weight, WeightAnd, Nth).
//
// Built for baseline x86-64 (no -mpopcnt), std::popcount is a libgcc call
// per word; the x86 `popcnt` instruction is ~10x faster but absent on some
// older CPUs.  So on x86 without __POPCNT__ the loops live in
// cpumask_popcount.cc in two builds, one with __attribute__((target("popcnt")))
// and one portable, and the first call picks one by
// __builtin_cpu_supports("popcnt") and stores it: never an illegal
// instruction, one indirect call per mask operation after that (Weight() of
// a mask of up to 4 words counts inline once popcnt is chosen).  Elsewhere
// (-mpopcnt/-march=native, or another architecture) std::popcount is already
// the instruction and the loops stay inline.
// AtomicCpuMask's storage: one cache line of words.
inline constexpr int kAtomicWordsPerLine = 8;
struct alignas(64) AtomicWordLine {
  std::atomic<uint64_t> w[kAtomicWordsPerLine];
};

struct PopcountKernels {
  int (*weight)(const uint64_t* words, size_t n);
  int (*weight_and)(const uint64_t* a, const uint64_t* b, size_t n);
  // Over the first n words of `lines`, loaded relaxed.
  int (*weight_atomic)(const AtomicWordLine* lines, size_t n);
  // Index of the nth (0-based) set bit, or n * 64 when there are fewer.
  int (*nth)(const uint64_t* words, size_t n, int nth);
  const char* name;  // "popcnt" or "portable"
};
// The build compiled without the popcnt instruction (the loops before run-time
// dispatch); always callable.
const PopcountKernels& PortablePopcountKernels();
// The build with the popcnt instruction, or nullptr where this CPU (or this
// architecture/compiler) has none.
const PopcountKernels* HardwarePopcountKernels();
// The kernels CpuMask uses in this process (resolved on first use).
const PopcountKernels& ActivePopcountKernels();

#if (defined(__x86_64__) || defined(__i386__)) && !defined(__POPCNT__)
#define ISOLATION_CPUMASK_POPCOUNT_DISPATCH 1
// Starts at a resolver that replaces itself with the chosen kernels on first
// use; constant-initialised, so usable from other static initialisers.
// Relaxed: every value it ever holds points to immutable constant data.
extern std::atomic<const PopcountKernels*> active_popcount;
inline const PopcountKernels& Popcount() {
  return *active_popcount.load(std::memory_order_relaxed);
}
#if defined(__x86_64__)
#define ISOLATION_CPUMASK_INLINE_POPCNT 1
// The popcnt kernels, exposed so that Weight() of a short mask can see they
// were chosen and count inline, as the kernel's hweight64() does once
// ALTERNATIVE patched popcnt in: for 1-4 words the indirect call costs more
// than the count (the compaction scan's cidmask weight, docs/performance.md
// goal 2).
extern const PopcountKernels popcnt_kernels;
inline constexpr size_t kInlineWeightMaxWords = 4;
// The instruction itself (__builtin_popcountll is a libgcc call without
// -mpopcnt); executed only where active_popcount points at popcnt_kernels,
// i.e. after __builtin_cpu_supports("popcnt") said yes.
inline int PopcntInstruction(uint64_t w) {
  uint64_t r;
  __asm__("popcntq %1, %0" : "=r"(r) : "rm"(w));
  return static_cast<int>(r);
}
#endif
#endif
}  // namespace cpumask_internal

// -----------------------------------------------------------------------------
// CpuMask
// -----------------------------------------------------------------------------
class CpuMask {
 public:
  // An empty mask of zero bits; assign or construct with a size before use.
  CpuMask() = default;
  // REQUIRES: 0 <= nbits <= kMaxCpus (use Parse() for outside input).
  // Without contract checks a size outside the range is clamped into it.
  explicit CpuMask(int nbits)
      : nbits_(CheckedBits(nbits)),
        words_(static_cast<size_t>(cpumask_internal::WordsFor(nbits_)), 0) {}

  static CpuMask Full(int nbits) {
    CpuMask m(nbits);
    m.SetAll();
    return m;
  }
  // Bits [first, last] set. REQUIRES: 0 <= first <= last < nbits.
  static CpuMask Range(int nbits, int first, int last) {
    CpuMask m(nbits);
    ISOLATION_CONTRACT(first >= 0 && first <= last && last < m.nbits_,
                       "CpuMask::Range [%d, %d] of %d bits", first, last, nbits);
    for (int c = first; c <= last; ++c) m.Set(c);
    return m;
  }
  // A mask with exactly `cpu` set.  REQUIRES: 0 <= cpu < nbits.
  static CpuMask Of(int nbits, int cpu) {
    CpuMask m(nbits);
    m.Set(cpu);
    return m;
  }

  // Parses the kernel cpulist syntax exactly as bitmap_parselist() accepts it
  // (lib/bitmap-str.c): items `A`, `A-B` or `A-B:used/group`, where `N` as a
  // number means the last bit (nbits-1), and `all` (any case, may carry
  // `:used/group`).  Like the kernel, items are separated by any run of
  // commas and whitespace ("1,,2", ",1" and "1," are accepted), the string
  // ends at '\0' or at a '\n' right after an item, and an empty string gives
  // an empty mask.  Errors (never a crash, on any input) name the input, the
  // byte position and the bad token: InvalidArgument for what the kernel
  // rejects with -EINVAL (junk such as "0x3" or "1-x", reversed range, group
  // 0, used > group), OutOfRange for -ERANGE (cpu >= nbits) and -EOVERFLOW
  // (a number that does not fit 32 bits).  REQUIRES nothing: nbits outside
  // [0, kMaxCpus] is an InvalidArgument error too.
  static absl::StatusOr<CpuMask> Parse(std::string_view list, int nbits);
  // The same, appending to *notes (when not null) one line for each thing
  // the kernel accepts without a word but a user would not expect: a
  // `:used/group` stride that wraps 32 bits ("1-3:1/4294967295" sets cpu
  // 0), text after the '\n' or '\0' that ends the list ("1\n2" is {1}).
  static absl::StatusOr<CpuMask> Parse(std::string_view list, int nbits,
                                       std::vector<std::string>* notes);

  // Canonical cpulist: ascending, ranges collapsed ("1-31,33-63"); "" if empty.
  std::string ToString() const;
  // Kernel hex form as in /proc/irq/*/smp_affinity ("ffffffff,fffffffe").
  std::string ToHexString() const;

  int nbits() const { return nbits_; }
  std::span<const uint64_t> words() const { return words_; }
  std::span<uint64_t> mutable_words() { return words_; }

  // REQUIRES for the single-bit operations: 0 <= cpu < nbits().
  void Set(int cpu) {
    CheckBit(cpu);
    words_[Word(cpu)] |= Bit(cpu);
  }
  void Clear(int cpu) {
    CheckBit(cpu);
    words_[Word(cpu)] &= ~Bit(cpu);
  }
  void Assign(int cpu, bool value) { value ? Set(cpu) : Clear(cpu); }
  bool Test(int cpu) const {
    CheckBit(cpu);
    return (words_[Word(cpu)] & Bit(cpu)) != 0;
  }
  // Test() that accepts any int: false outside [0, nbits()).  For observers
  // that take a CPU number from outside.
  bool TestInRange(int cpu) const { return cpu >= 0 && cpu < nbits_ && Test(cpu); }
  // Non-atomic test-and-modify (kernel __cpumask_test_and_set_cpu style).
  bool TestAndSet(int cpu) {
    const bool old = Test(cpu);
    Set(cpu);
    return old;
  }
  bool TestAndClear(int cpu) {
    const bool old = Test(cpu);
    Clear(cpu);
    return old;
  }
  void SetAll() {
    for (auto& w : words_) w = ~uint64_t{0};
    TrimLastWord();
  }
  void ClearAll() {
    for (auto& w : words_) w = 0;
  }

  // First set bit, or >= nbits() if none (cpumask_first).
  int First() const { return Next(-1); }
  // First set bit strictly after `n` (n may be -1), or >= nbits() (cpumask_next).
  // REQUIRES for every search: n >= -1.
  int Next(int n) const {
    CheckStart(n);
    int start = n + 1;
    if (start >= nbits_) return nbits_;
    size_t w = static_cast<size_t>(start / cpumask_internal::kWordBits);
    uint64_t word = words_[w] & (~uint64_t{0} << (start % cpumask_internal::kWordBits));
    while (true) {
      if (word != 0) {
        const int bit = static_cast<int>(w) * cpumask_internal::kWordBits + std::countr_zero(word);
        return bit < nbits_ ? bit : nbits_;
      }
      if (++w >= words_.size()) return nbits_;
      word = words_[w];
    }
  }
  // First set bit after `n`, wrapping to bit 0 (cpumask_next_wrap as of
  // v6.14); returns >= nbits() only if the mask is empty.
  int NextWrap(int n) const {
    const int c = Next(n);
    return c < nbits_ ? c : First();
  }
  // First bit set in both this and `other` strictly after `n` (cpumask_next_and).
  int NextAnd(int n, const CpuMask& other) const {
    CheckStart(n);
    int start = n + 1;
    const int limit = nbits_ < other.nbits_ ? nbits_ : other.nbits_;
    if (start >= limit) return nbits_;
    size_t w = static_cast<size_t>(start / cpumask_internal::kWordBits);
    uint64_t word =
        (words_[w] & other.words_[w]) & (~uint64_t{0} << (start % cpumask_internal::kWordBits));
    const size_t nw = static_cast<size_t>(cpumask_internal::WordsFor(limit));
    while (true) {
      if (word != 0) {
        const int bit = static_cast<int>(w) * cpumask_internal::kWordBits + std::countr_zero(word);
        return bit < limit ? bit : nbits_;
      }
      if (++w >= nw) return nbits_;
      word = words_[w] & other.words_[w];
    }
  }
  int FirstAnd(const CpuMask& other) const { return NextAnd(-1, other); }
  // First clear bit strictly after `n`, or >= nbits() (find_next_zero_bit).
  int NextZero(int n) const {
    CheckStart(n);
    int start = n + 1;
    if (start >= nbits_) return nbits_;
    size_t w = static_cast<size_t>(start / cpumask_internal::kWordBits);
    uint64_t word = ~words_[w] & (~uint64_t{0} << (start % cpumask_internal::kWordBits));
    while (true) {
      if (word != 0) {
        const int bit = static_cast<int>(w) * cpumask_internal::kWordBits + std::countr_zero(word);
        return bit < nbits_ ? bit : nbits_;
      }
      if (++w >= words_.size()) return nbits_;
      word = ~words_[w];
    }
  }
  int FirstZero() const { return NextZero(-1); }
  // The n-th (0-based) set bit, or >= nbits() (cpumask_nth).
  int Nth(int n) const {
#if defined(ISOLATION_CPUMASK_POPCOUNT_DISPATCH)
    const int bit = cpumask_internal::Popcount().nth(words_.data(), words_.size(), n);
    return bit < nbits_ ? bit : nbits_;
#endif
    for (size_t w = 0; w < words_.size(); ++w) {
      uint64_t word = words_[w];
      const int pc = std::popcount(word);
      if (n >= pc) {
        n -= pc;
        continue;
      }
      while (n-- > 0) word &= word - 1;
      return static_cast<int>(w) * cpumask_internal::kWordBits + std::countr_zero(word);
    }
    return nbits_;
  }

  int Weight() const {
#if defined(ISOLATION_CPUMASK_POPCOUNT_DISPATCH)
    const cpumask_internal::PopcountKernels& kernels = cpumask_internal::Popcount();
#if defined(ISOLATION_CPUMASK_INLINE_POPCNT)
    if (words_.size() <= cpumask_internal::kInlineWeightMaxWords &&
        &kernels == &cpumask_internal::popcnt_kernels) {
      int n = 0;
      for (uint64_t w : words_) n += cpumask_internal::PopcntInstruction(w);
      return n;
    }
#endif
    return kernels.weight(words_.data(), words_.size());
#else
    int n = 0;
    for (uint64_t w : words_) n += std::popcount(w);
    return n;
#endif
  }
  bool Empty() const {
    for (uint64_t w : words_) {
      if (w != 0) return false;
    }
    return true;
  }

  // In-place set algebra; `other` must have the same nbits() (REQUIRES).
  CpuMask& And(const CpuMask& other) {
    CheckSameSize(other);
    for (size_t i = 0; i < words_.size(); ++i) words_[i] &= other.words_[i];
    return *this;
  }
  CpuMask& Or(const CpuMask& other) {
    CheckSameSize(other);
    for (size_t i = 0; i < words_.size(); ++i) words_[i] |= other.words_[i];
    return *this;
  }
  CpuMask& AndNot(const CpuMask& other) {
    CheckSameSize(other);
    for (size_t i = 0; i < words_.size(); ++i) words_[i] &= ~other.words_[i];
    return *this;
  }
  CpuMask& Xor(const CpuMask& other) {
    CheckSameSize(other);
    for (size_t i = 0; i < words_.size(); ++i) words_[i] ^= other.words_[i];
    return *this;
  }
  CpuMask& Complement() {
    for (auto& w : words_) w = ~w;
    TrimLastWord();
    return *this;
  }
  // Copy `other`'s bits into this mask of the same size, without allocating.
  void CopyFrom(const CpuMask& other) {
    CheckSameSize(other);
    for (size_t i = 0; i < words_.size(); ++i) words_[i] = other.words_[i];
  }
  friend CpuMask operator&(CpuMask a, const CpuMask& b) { return std::move(a.And(b)); }
  friend CpuMask operator|(CpuMask a, const CpuMask& b) { return std::move(a.Or(b)); }
  static CpuMask AndNot(CpuMask a, const CpuMask& b) { return std::move(a.AndNot(b)); }

  bool Equal(const CpuMask& other) const {
    return nbits_ == other.nbits_ && words_ == other.words_;
  }
  friend bool operator==(const CpuMask& a, const CpuMask& b) { return a.Equal(b); }
  bool IsSubsetOf(const CpuMask& other) const {
    CheckSameSize(other);
    for (size_t i = 0; i < words_.size(); ++i) {
      if ((words_[i] & ~other.words_[i]) != 0) return false;
    }
    return true;
  }
  bool Intersects(const CpuMask& other) const {
    CheckSameSize(other);
    for (size_t i = 0; i < words_.size(); ++i) {
      if ((words_[i] & other.words_[i]) != 0) return true;
    }
    return false;
  }
  int WeightAnd(const CpuMask& other) const {
    CheckSameSize(other);
#if defined(ISOLATION_CPUMASK_POPCOUNT_DISPATCH)
    return cpumask_internal::Popcount().weight_and(words_.data(), other.words_.data(),
                                                   words_.size());
#else
    int n = 0;
    for (size_t i = 0; i < words_.size(); ++i) n += std::popcount(words_[i] & other.words_[i]);
    return n;
#endif
  }

  // for (int cpu : mask) visits set bits in ascending order (for_each_cpu).
  // The iterator keeps the unvisited bits of the current word, so stepping
  // within a word is clear-lowest-bit + count-trailing-zeros rather than a
  // fresh Next() search (which re-derives the word from the position and
  // serialises on it; measured in bench/core/cpumask_bench).
  class Iterator {
   public:
    Iterator(const CpuMask* m, int cpu) : m_(m), cpu_(cpu) {
      if (cpu_ < m_->nbits_) {
        w_ = static_cast<size_t>(cpu_ / cpumask_internal::kWordBits);
        // Bits above cpu_ in its word (cpu_ itself is the current position).
        rest_ = m_->words_[w_] & ~((uint64_t{2} << (cpu_ % cpumask_internal::kWordBits)) - 1);
      }
    }
    int operator*() const { return cpu_; }
    Iterator& operator++() {
      while (rest_ == 0) {
        if (++w_ >= m_->words_.size()) {
          cpu_ = m_->nbits_;
          return *this;
        }
        rest_ = m_->words_[w_];
      }
      const int bit = static_cast<int>(w_) * cpumask_internal::kWordBits + std::countr_zero(rest_);
      rest_ &= rest_ - 1;
      cpu_ = bit < m_->nbits_ ? bit : m_->nbits_;
      return *this;
    }
    bool operator!=(const Iterator& o) const { return cpu_ != o.cpu_; }
    bool operator==(const Iterator& o) const { return cpu_ == o.cpu_; }

   private:
    const CpuMask* m_;
    int cpu_;
    size_t w_ = 0;
    uint64_t rest_ = 0;
  };
  Iterator begin() const { return Iterator(this, First()); }
  Iterator end() const { return Iterator(this, nbits_); }

 private:
  static int CheckedBits(int nbits) {
    ISOLATION_CONTRACT(nbits >= 0 && nbits <= kMaxCpus, "CpuMask of %d bits, outside [0, %d]",
                       nbits, kMaxCpus);
    return nbits < 0 ? 0 : (nbits > kMaxCpus ? kMaxCpus : nbits);
  }
  void CheckBit(int cpu) const {
    ISOLATION_CONTRACT(cpu >= 0 && cpu < nbits_, "cpu %d outside the mask's [0, %d)", cpu, nbits_);
  }
  void CheckStart(int n) const { ISOLATION_CONTRACT(n >= -1, "search start %d < -1", n); }
  void CheckSameSize(const CpuMask& other) const {
    ISOLATION_CONTRACT(other.nbits_ == nbits_, "masks of %d and %d bits", nbits_, other.nbits_);
  }
  static size_t Word(int cpu) { return static_cast<size_t>(cpu) / cpumask_internal::kWordBits; }
  static uint64_t Bit(int cpu) { return uint64_t{1} << (cpu % cpumask_internal::kWordBits); }
  void TrimLastWord() {
    if (!words_.empty()) words_.back() &= cpumask_internal::LastWordMask(nbits_);
  }

  int nbits_ = 0;
  std::vector<uint64_t> words_;
};

// for_each_cpu_wrap(cpu, mask, start): calls fn(cpu) for each set bit,
// starting at `start` (inclusive) and wrapping; fn returns false to stop.
template <typename Fn>
inline void ForEachCpuWrap(const CpuMask& mask, int start, Fn&& fn) {
  const int n = mask.nbits();
  if (n == 0) return;
  for (int c = mask.Next(start - 1); c < n; c = mask.Next(c)) {
    if (!fn(c)) return;
  }
  for (int c = mask.First(); c < start && c < n; c = mask.Next(c)) {
    if (!fn(c)) return;
  }
}

// -----------------------------------------------------------------------------
// AtomicCpuMask
// -----------------------------------------------------------------------------
//
// Memory ordering: Set()/Clear() are relaxed by default (kernel set_bit and
// clear_bit are unordered); TestAndSet()/TestAndClear() default to seq_cst
// (kernel test_and_set_bit is fully ordered).  Every operation takes an
// explicit std::memory_order for callers that need something else and say why.
// The word array is cache-line aligned so that a small mask is one line.
class AtomicCpuMask {
 public:
  AtomicCpuMask() = default;
  explicit AtomicCpuMask(int nbits) { Reset(nbits); }
  AtomicCpuMask(const AtomicCpuMask&) = delete;
  AtomicCpuMask& operator=(const AtomicCpuMask&) = delete;

  // Re-sizes and clears; not concurrent-safe.
  // REQUIRES: 0 <= nbits <= kMaxCpus (clamped without contract checks), and
  // for the bit operations below 0 <= cpu < nbits(), searches n >= -1, masks
  // of the same size; checked as CpuMask's are.
  void Reset(int nbits) {
    ISOLATION_CONTRACT(nbits >= 0 && nbits <= kMaxCpus, "AtomicCpuMask of %d bits, outside [0, %d]",
                       nbits, kMaxCpus);
    nbits = nbits < 0 ? 0 : (nbits > kMaxCpus ? kMaxCpus : nbits);
    nbits_ = nbits;
    nwords_ = cpumask_internal::WordsFor(nbits);
    const size_t n = nwords_ == 0 ? 1 : static_cast<size_t>(nwords_);
    words_.reset(new Line[(n + kWordsPerLine - 1) / kWordsPerLine]);
    for (int i = 0; i < nwords_; ++i) word(i).store(0, std::memory_order_relaxed);
  }
  int nbits() const { return nbits_; }

  void Set(int cpu, std::memory_order mo = std::memory_order_relaxed) {
    CheckBit(cpu);
    word(cpu / 64).fetch_or(Bit(cpu), mo);
  }
  void Clear(int cpu, std::memory_order mo = std::memory_order_relaxed) {
    CheckBit(cpu);
    word(cpu / 64).fetch_and(~Bit(cpu), mo);
  }
  bool Test(int cpu, std::memory_order mo = std::memory_order_relaxed) const {
    CheckBit(cpu);
    return (word(cpu / 64).load(mo) & Bit(cpu)) != 0;
  }
  bool TestAndSet(int cpu, std::memory_order mo = std::memory_order_seq_cst) {
    CheckBit(cpu);
    return (word(cpu / 64).fetch_or(Bit(cpu), mo) & Bit(cpu)) != 0;
  }
  bool TestAndClear(int cpu, std::memory_order mo = std::memory_order_seq_cst) {
    CheckBit(cpu);
    return (word(cpu / 64).fetch_and(~Bit(cpu), mo) & Bit(cpu)) != 0;
  }
  uint64_t LoadWord(int w, std::memory_order mo = std::memory_order_relaxed) const {
    return word(w).load(mo);
  }
  int nwords() const { return nwords_; }

  int Next(int n, std::memory_order mo = std::memory_order_relaxed) const {
    ISOLATION_CONTRACT(n >= -1, "search start %d < -1", n);
    int start = n + 1;
    if (start >= nbits_) return nbits_;
    int w = start / 64;
    uint64_t v = word(w).load(mo) & (~uint64_t{0} << (start % 64));
    while (true) {
      if (v != 0) {
        const int bit = w * 64 + std::countr_zero(v);
        return bit < nbits_ ? bit : nbits_;
      }
      if (++w >= nwords_) return nbits_;
      v = word(w).load(mo);
    }
  }
  int First() const { return Next(-1); }
  int NextZero(int n) const {
    ISOLATION_CONTRACT(n >= -1, "search start %d < -1", n);
    int start = n + 1;
    if (start >= nbits_) return nbits_;
    int w = start / 64;
    uint64_t v = ~word(w).load(std::memory_order_relaxed) & (~uint64_t{0} << (start % 64));
    while (true) {
      if (v != 0) {
        const int bit = w * 64 + std::countr_zero(v);
        return bit < nbits_ ? bit : nbits_;
      }
      if (++w >= nwords_) return nbits_;
      v = ~word(w).load(std::memory_order_relaxed);
    }
  }
  int FirstZero() const { return NextZero(-1); }
  // First bit set in both this mask and `other` after n.
  int NextAnd(int n, const CpuMask& other) const {
    ISOLATION_CONTRACT(n >= -1 && other.nbits() == nbits_,
                       "search start %d, masks of %d and %d bits", n, nbits_, other.nbits());
    int start = n + 1;
    if (start >= nbits_) return nbits_;
    int w = start / 64;
    const auto ow = other.words();
    uint64_t v = word(w).load(std::memory_order_relaxed) & ow[static_cast<size_t>(w)] &
                 (~uint64_t{0} << (start % 64));
    while (true) {
      if (v != 0) {
        const int bit = w * 64 + std::countr_zero(v);
        return bit < nbits_ ? bit : nbits_;
      }
      if (++w >= nwords_) return nbits_;
      v = word(w).load(std::memory_order_relaxed) & ow[static_cast<size_t>(w)];
    }
  }
  int Weight() const {
#if defined(ISOLATION_CPUMASK_POPCOUNT_DISPATCH)
    return cpumask_internal::Popcount().weight_atomic(words_.get(), static_cast<size_t>(nwords_));
#else
    int n = 0;
    for (int i = 0; i < nwords_; ++i) n += std::popcount(word(i).load(std::memory_order_relaxed));
    return n;
#endif
  }
  bool Empty() const {
    for (int i = 0; i < nwords_; ++i) {
      if (word(i).load(std::memory_order_relaxed) != 0) return false;
    }
    return true;
  }
  // Word-by-word copy into `out` (same nbits); not a consistent snapshot.
  void SnapshotInto(CpuMask& out) const {
    ISOLATION_CONTRACT(out.nbits() == nbits_, "masks of %d and %d bits", nbits_, out.nbits());
    auto w = out.mutable_words();
    for (int i = 0; i < nwords_; ++i)
      w[static_cast<size_t>(i)] = word(i).load(std::memory_order_relaxed);
  }
  CpuMask Snapshot() const {
    CpuMask m(nbits_);
    SnapshotInto(m);
    return m;
  }
  // Word-by-word relaxed store of `m` (same nbits).
  void Store(const CpuMask& m) {
    ISOLATION_CONTRACT(m.nbits() == nbits_, "masks of %d and %d bits", nbits_, m.nbits());
    const auto w = m.words();
    for (int i = 0; i < nwords_; ++i)
      word(i).store(w[static_cast<size_t>(i)], std::memory_order_relaxed);
  }
  void ClearAll() {
    for (int i = 0; i < nwords_; ++i) word(i).store(0, std::memory_order_relaxed);
  }

 private:
  void CheckBit(int cpu) const {
    ISOLATION_CONTRACT(cpu >= 0 && cpu < nbits_, "cpu %d outside the mask's [0, %d)", cpu, nbits_);
  }
  static constexpr int kWordsPerLine = cpumask_internal::kAtomicWordsPerLine;
  using Line = cpumask_internal::AtomicWordLine;
  static uint64_t Bit(int cpu) { return uint64_t{1} << (cpu % 64); }
  std::atomic<uint64_t>& word(int i) const {
    return words_[i / kWordsPerLine].w[i % kWordsPerLine];
  }

  int nbits_ = 0;
  int nwords_ = 0;
  std::unique_ptr<Line[]> words_;
};

}  // namespace isolation

#endif  // ISOLATION_CPUMASK_H_
