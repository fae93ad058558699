// SPDX-License-Identifier: GPL-2.0-or-later
// CpuMask's population-count loops, in a portable build and (on x86) a build
// with the popcnt instruction, chosen at run time (cpumask.h explains why).
//
// Kernel counterpart: the kernel patches hweight64() at boot through
// ALTERNATIVE (arch/x86/include/asm/arch_hweight.h): popcnt where
// X86_FEATURE_POPCNT is set, __sw_hweight64 otherwise.  Here the choice is a
// function pointer set on first use from __builtin_cpu_supports("popcnt").

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "isolation/core/cpumask.h"

namespace isolation::cpumask_internal {
namespace {

// The loop bodies, instantiated below once per instruction set.  The
// builtin is called directly (not std::popcount) so that even an unoptimised
// build expands it inside the function carrying the target attribute.
#define ISOLATION_POPCOUNT_KERNELS(SUFFIX, ATTR)                                                \
  ATTR int Weight##SUFFIX(const uint64_t* words, size_t n) {                                    \
    int total = 0;                                                                              \
    for (size_t i = 0; i < n; ++i) total += __builtin_popcountll(words[i]);                     \
    return total;                                                                               \
  }                                                                                             \
  ATTR int WeightAnd##SUFFIX(const uint64_t* a, const uint64_t* b, size_t n) {                  \
    int total = 0;                                                                              \
    for (size_t i = 0; i < n; ++i) total += __builtin_popcountll(a[i] & b[i]);                  \
    return total;                                                                               \
  }                                                                                             \
  ATTR int WeightAtomic##SUFFIX(const AtomicWordLine* lines, size_t n) {                        \
    int total = 0;                                                                              \
    for (size_t i = 0; i < n; ++i) {                                                            \
      total +=                                                                                  \
          __builtin_popcountll(lines[i / kAtomicWordsPerLine].w[i % kAtomicWordsPerLine].load(  \
              std::memory_order_relaxed));                                                      \
    }                                                                                           \
    return total;                                                                               \
  }                                                                                             \
  /* CpuMask::Nth before dispatch, word for word (cpumask_nth). */                              \
  ATTR int Nth##SUFFIX(const uint64_t* words, size_t n, int nth) {                              \
    for (size_t w = 0; w < n; ++w) {                                                            \
      uint64_t word = words[w];                                                                 \
      const int pc = __builtin_popcountll(word);                                                \
      if (nth >= pc) {                                                                          \
        nth -= pc;                                                                              \
        continue;                                                                               \
      }                                                                                         \
      while (nth-- > 0) word &= word - 1;                                                       \
      return static_cast<int>(w) * kWordBits + (word == 0 ? kWordBits : __builtin_ctzll(word)); \
    }                                                                                           \
    return static_cast<int>(n) * kWordBits;                                                     \
  }

ISOLATION_POPCOUNT_KERNELS(Portable, )

constexpr PopcountKernels kPortable{WeightPortable, WeightAndPortable, WeightAtomicPortable,
                                    NthPortable, "portable"};

#if defined(__x86_64__) || defined(__i386__)
#define ISOLATION_HAVE_POPCNT_KERNELS 1
ISOLATION_POPCOUNT_KERNELS(Popcnt, __attribute__((target("popcnt"))))

#if defined(ISOLATION_CPUMASK_INLINE_POPCNT)
// CpuMask's inline short-mask path (cpumask.h) compares active_popcount with
// the address of popcnt_kernels: kPopcnt is that object, not a copy.
}  // namespace
constinit const PopcountKernels popcnt_kernels{WeightPopcnt, WeightAndPopcnt, WeightAtomicPopcnt,
                                               NthPopcnt, "popcnt"};
namespace {
constexpr const PopcountKernels& kPopcnt = popcnt_kernels;
#else
constexpr PopcountKernels kPopcnt{WeightPopcnt, WeightAndPopcnt, WeightAtomicPopcnt, NthPopcnt,
                                  "popcnt"};
#endif

bool CpuHasPopcnt() {
  // May run before constructors (a static initialiser using a CpuMask); the
  // GCC manual asks for __builtin_cpu_init() first in that case.
  __builtin_cpu_init();
  return __builtin_cpu_supports("popcnt");
}
#endif
#undef ISOLATION_POPCOUNT_KERNELS

const PopcountKernels& Choose() {
#if defined(ISOLATION_HAVE_POPCNT_KERNELS)
  if (CpuHasPopcnt()) return kPopcnt;
#endif
  return kPortable;
}

#if defined(ISOLATION_CPUMASK_POPCOUNT_DISPATCH)
// The resolver: the first call of each kind picks, stores and forwards.
// Racing first calls store the same value.
const PopcountKernels& Resolve() {
  const PopcountKernels& k = Choose();
  active_popcount.store(&k, std::memory_order_relaxed);
  return k;
}
int ResolveWeight(const uint64_t* words, size_t n) { return Resolve().weight(words, n); }
int ResolveWeightAnd(const uint64_t* a, const uint64_t* b, size_t n) {
  return Resolve().weight_and(a, b, n);
}
int ResolveWeightAtomic(const AtomicWordLine* lines, size_t n) {
  return Resolve().weight_atomic(lines, n);
}
int ResolveNth(const uint64_t* words, size_t n, int nth) { return Resolve().nth(words, n, nth); }
constexpr PopcountKernels kResolver{ResolveWeight, ResolveWeightAnd, ResolveWeightAtomic,
                                    ResolveNth, "unresolved"};
#endif

}  // namespace

#if defined(ISOLATION_CPUMASK_POPCOUNT_DISPATCH)
constinit std::atomic<const PopcountKernels*> active_popcount{&kResolver};
#endif

const PopcountKernels& PortablePopcountKernels() { return kPortable; }

const PopcountKernels* HardwarePopcountKernels() {
#if defined(ISOLATION_HAVE_POPCNT_KERNELS)
  static const bool has_popcnt = CpuHasPopcnt();
  return has_popcnt ? &kPopcnt : nullptr;
#else
  return nullptr;
#endif
}

const PopcountKernels& ActivePopcountKernels() {
#if defined(ISOLATION_CPUMASK_POPCOUNT_DISPATCH)
  const PopcountKernels* k = active_popcount.load(std::memory_order_relaxed);
  return k == &kResolver ? Resolve() : *k;
#else
  // std::popcount inline in cpumask.h is already the instruction (or the
  // only one there is): the portable loops are what CpuMask runs.
  return kPortable;
#endif
}

}  // namespace isolation::cpumask_internal
