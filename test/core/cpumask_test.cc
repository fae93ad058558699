// SPDX-License-Identifier: GPL-2.0-or-later
// CpuMask and AtomicCpuMask operations against a std::vector<bool> reference
// on random masks of the sizes where word boundaries matter.

#include "absl/strings/str_cat.h"
#include "isolation/core/cpumask.h"

#include <gtest/gtest.h>

#include <atomic>
#include <random>
#include <thread>
#include <vector>

namespace isolation {
namespace {

using Ref = std::vector<bool>;

// Densities from sparse to full, so that searches cross empty words.
Ref RandomRef(std::mt19937_64& rng, int nbits) {
  static constexpr double kDensities[] = {0.0, 0.01, 0.1, 0.5, 0.9, 1.0};
  std::uniform_int_distribution<int> pick(0, 5);
  const double p = kDensities[pick(rng)];
  std::bernoulli_distribution bit(p);
  Ref r(static_cast<size_t>(nbits));
  for (int i = 0; i < nbits; ++i) r[static_cast<size_t>(i)] = bit(rng);
  return r;
}

CpuMask FromRef(const Ref& r) {
  CpuMask m(static_cast<int>(r.size()));
  for (size_t i = 0; i < r.size(); ++i) {
    if (r[i]) m.Set(static_cast<int>(i));
  }
  return m;
}

int RefNext(const Ref& r, int n) {
  for (int i = n + 1; i < static_cast<int>(r.size()); ++i) {
    if (r[static_cast<size_t>(i)]) return i;
  }
  return static_cast<int>(r.size());
}

int RefNextZero(const Ref& r, int n) {
  for (int i = n + 1; i < static_cast<int>(r.size()); ++i) {
    if (!r[static_cast<size_t>(i)]) return i;
  }
  return static_cast<int>(r.size());
}

int RefWeight(const Ref& r) {
  int w = 0;
  for (bool b : r) w += b ? 1 : 0;
  return w;
}

void ExpectMatches(const CpuMask& m, const Ref& r) {
  ASSERT_EQ(m.nbits(), static_cast<int>(r.size()));
  for (size_t i = 0; i < r.size(); ++i) ASSERT_EQ(m.Test(static_cast<int>(i)), r[i]) << "bit " << i;
  // No stray bits beyond nbits in the last word.
  if (!m.words().empty()) {
    EXPECT_EQ(m.words().back() & ~cpumask_internal::LastWordMask(m.nbits()), 0u);
  }
}

class CpuMaskVsReference : public ::testing::TestWithParam<int> {};

TEST_P(CpuMaskVsReference, SearchesMatchBitByBitReference) {
  const int n = GetParam();
  std::mt19937_64 rng(0xC0FFEE + static_cast<uint64_t>(n));
  for (int round = 0; round < 40; ++round) {
    const Ref r = RandomRef(rng, n);
    const Ref o = RandomRef(rng, n);
    const CpuMask m = FromRef(r);
    const CpuMask other = FromRef(o);
    ExpectMatches(m, r);
    EXPECT_EQ(m.Weight(), RefWeight(r));
    EXPECT_EQ(m.Empty(), RefWeight(r) == 0);
    EXPECT_EQ(m.First(), RefNext(r, -1));
    EXPECT_EQ(m.FirstZero(), RefNextZero(r, -1));
    std::uniform_int_distribution<int> pos(-1, n - 1);
    for (int k = 0; k < 64; ++k) {
      const int p = pos(rng);
      EXPECT_EQ(m.Next(p), RefNext(r, p)) << "n=" << n << " p=" << p;
      EXPECT_EQ(m.NextZero(p), RefNextZero(r, p));
      const int next = RefNext(r, p);
      const int wrap = next < n ? next : RefNext(r, -1);
      EXPECT_EQ(m.NextWrap(p), wrap);
      Ref both(r.size());
      for (size_t i = 0; i < r.size(); ++i) both[i] = r[i] && o[i];
      EXPECT_EQ(m.NextAnd(p, other), RefNext(both, p));
    }
    // Nth against the reference order.
    std::vector<int> set_bits;
    for (int i = 0; i < n; ++i) {
      if (r[static_cast<size_t>(i)]) set_bits.push_back(i);
    }
    for (size_t k = 0; k < set_bits.size(); k += 1 + set_bits.size() / 16) {
      EXPECT_EQ(m.Nth(static_cast<int>(k)), set_bits[k]);
    }
    EXPECT_GE(m.Nth(static_cast<int>(set_bits.size())), n);
    // Iteration visits exactly the set bits in order.
    std::vector<int> seen;
    for (int cpu : m) seen.push_back(cpu);
    EXPECT_EQ(seen, set_bits);
    // Set algebra.
    Ref a(r.size()), u(r.size()), d(r.size()), x(r.size()), c(r.size());
    bool subset = true, intersects = false;
    int weight_and = 0;
    for (size_t i = 0; i < r.size(); ++i) {
      a[i] = r[i] && o[i];
      u[i] = r[i] || o[i];
      d[i] = r[i] && !o[i];
      x[i] = r[i] != o[i];
      c[i] = !r[i];
      if (r[i] && !o[i]) subset = false;
      if (r[i] && o[i]) intersects = true;
      weight_and += (r[i] && o[i]) ? 1 : 0;
    }
    ExpectMatches(m & other, a);
    ExpectMatches(m | other, u);
    ExpectMatches(CpuMask::AndNot(m, other), d);
    CpuMask mx = m;
    ExpectMatches(mx.Xor(other), x);
    CpuMask mc = m;
    ExpectMatches(mc.Complement(), c);
    EXPECT_EQ(m.IsSubsetOf(other), subset);
    EXPECT_EQ(m.Intersects(other), intersects);
    EXPECT_EQ(m.WeightAnd(other), weight_and);
    EXPECT_EQ(m.Equal(other), r == o);
    EXPECT_TRUE(m.Equal(FromRef(r)));
    CpuMask copy(n);
    copy.CopyFrom(m);
    EXPECT_EQ(copy, m);
    // ForEachCpuWrap visits every set bit once, starting at `start`.
    const int start = n == 0 ? 0 : std::uniform_int_distribution<int>(0, n - 1)(rng);
    std::vector<int> wrapped;
    ForEachCpuWrap(m, start, [&](int cpu) {
      wrapped.push_back(cpu);
      return true;
    });
    std::vector<int> expected;
    for (int cpu : set_bits) {
      if (cpu >= start) expected.push_back(cpu);
    }
    for (int cpu : set_bits) {
      if (cpu < start) expected.push_back(cpu);
    }
    EXPECT_EQ(wrapped, expected);
  }
}

TEST_P(CpuMaskVsReference, FullRangeOfSetAllClearAll) {
  const int n = GetParam();
  CpuMask full = CpuMask::Full(n);
  EXPECT_EQ(full.Weight(), n);
  EXPECT_EQ(full.FirstZero(), n);
  full.ClearAll();
  EXPECT_TRUE(full.Empty());
  EXPECT_EQ(full.First(), n);
  EXPECT_EQ(full.NextWrap(n / 2), n);  // empty mask: nothing even after wrapping
  CpuMask r = CpuMask::Range(n, n / 3, n - 1);
  EXPECT_EQ(r.Weight(), n - n / 3);
  EXPECT_EQ(CpuMask::Of(n, n - 1).First(), n - 1);
  CpuMask t(n);
  EXPECT_FALSE(t.TestAndSet(n - 1));
  EXPECT_TRUE(t.TestAndSet(n - 1));
  EXPECT_TRUE(t.TestAndClear(n - 1));
  EXPECT_FALSE(t.TestAndClear(n - 1));
}

TEST_P(CpuMaskVsReference, AtomicMaskMatchesReference) {
  const int n = GetParam();
  std::mt19937_64 rng(0xA70 + static_cast<uint64_t>(n));
  for (int round = 0; round < 20; ++round) {
    const Ref r = RandomRef(rng, n);
    const CpuMask plain = FromRef(r);
    AtomicCpuMask am(n);
    EXPECT_TRUE(am.Empty());
    for (int i = 0; i < n; ++i) {
      if (r[static_cast<size_t>(i)]) am.Set(i);
    }
    EXPECT_EQ(am.Snapshot(), plain);
    EXPECT_EQ(am.Weight(), RefWeight(r));
    EXPECT_EQ(am.First(), plain.First());
    EXPECT_EQ(am.FirstZero(), plain.FirstZero());
    const CpuMask other = FromRef(RandomRef(rng, n));
    std::uniform_int_distribution<int> pos(-1, n - 1);
    for (int k = 0; k < 32; ++k) {
      const int p = pos(rng);
      EXPECT_EQ(am.Next(p), plain.Next(p));
      EXPECT_EQ(am.NextZero(p), plain.NextZero(p));
      EXPECT_EQ(am.NextAnd(p, other), plain.NextAnd(p, other));
    }
    const int bit = std::uniform_int_distribution<int>(0, n - 1)(rng);
    EXPECT_EQ(am.TestAndSet(bit), plain.Test(bit));
    EXPECT_TRUE(am.Test(bit));
    EXPECT_TRUE(am.TestAndClear(bit));
    EXPECT_FALSE(am.Test(bit));
    am.Store(other);
    EXPECT_EQ(am.Snapshot(), other);
    am.ClearAll();
    EXPECT_TRUE(am.Empty());
  }
}

INSTANTIATE_TEST_SUITE_P(Sizes, CpuMaskVsReference,
                         ::testing::Values(1, 63, 64, 65, 128, 256, 257, 4096, 8192),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return absl::StrCat("Bits", info.param);
                         });

// Two threads claim bits of one word with TestAndSet; every bit must be won
// by exactly one of them (the property mm_cid allocation relies on).
TEST(AtomicCpuMask, TestAndSetClaimsEachBitOnce) {
  constexpr int kBits = 256;
  for (int round = 0; round < 50; ++round) {
    AtomicCpuMask mask(kBits);
    std::vector<int> won[2];
    std::atomic<int> ready{0};
    auto claim = [&](int me) {
      ready.fetch_add(1);
      while (ready.load() < 2) {
      }
      for (int i = 0; i < kBits; ++i) {
        const int bit = me == 0 ? i : kBits - 1 - i;  // opposite directions collide in the middle
        if (!mask.TestAndSet(bit)) won[me].push_back(bit);
      }
    };
    std::thread t0(claim, 0), t1(claim, 1);
    t0.join();
    t1.join();
    ASSERT_EQ(won[0].size() + won[1].size(), static_cast<size_t>(kBits));
    std::vector<int> owner(kBits, 0);
    for (int m = 0; m < 2; ++m) {
      for (int b : won[m]) ++owner[static_cast<size_t>(b)];
    }
    for (int b = 0; b < kBits; ++b) ASSERT_EQ(owner[static_cast<size_t>(b)], 1) << "bit " << b;
    EXPECT_EQ(mask.Weight(), kBits);
  }
}

TEST(CpuMask, ZeroBitMaskIsEmptyAndSafe) {
  CpuMask m(0);
  EXPECT_TRUE(m.Empty());
  EXPECT_EQ(m.First(), 0);
  EXPECT_EQ(m.Next(-1), 0);
  EXPECT_EQ(m.ToString(), "");
  EXPECT_EQ(m.ToHexString(), "");
  int visits = 0;
  ForEachCpuWrap(m, 0, [&](int) { return ++visits > 0; });
  EXPECT_EQ(visits, 0);
}

TEST(CpuMask, ForEachCpuWrapStopsWhenAsked) {
  CpuMask m = CpuMask::Full(16);
  std::vector<int> seen;
  ForEachCpuWrap(m, 14, [&](int cpu) {
    seen.push_back(cpu);
    return seen.size() < 4;
  });
  EXPECT_EQ(seen, (std::vector<int>{14, 15, 0, 1}));
}

// The popcnt build of CpuMask's popcount loops (chosen at run time) and the
// portable build give the same answers, and both match the bit-by-bit
// reference, on random masks of every size class; CpuMask uses the one
// ActivePopcountKernels() names, and that is popcnt wherever the CPU has it.
TEST(CpuMaskPopcount, HardwareAndPortableKernelsAgreeOnRandomMasks) {
  const cpumask_internal::PopcountKernels& portable = cpumask_internal::PortablePopcountKernels();
  const cpumask_internal::PopcountKernels* hardware = cpumask_internal::HardwarePopcountKernels();
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("popcnt")) {
    ASSERT_NE(hardware, nullptr);
    EXPECT_STREQ(cpumask_internal::ActivePopcountKernels().name, "popcnt");
  } else {
    EXPECT_EQ(hardware, nullptr);
  }
#endif
  if (hardware == nullptr) GTEST_SKIP() << "no popcnt instruction on this CPU/architecture";
  std::mt19937_64 rng(12);
  for (int nbits : {1, 63, 64, 65, 128, 200, 4096, kMaxCpus}) {
    for (int round = 0; round < 20; ++round) {
      SCOPED_TRACE(absl::StrCat("nbits ", nbits, " round ", round));
      const Ref ra = RandomRef(rng, nbits);
      const Ref rb = RandomRef(rng, nbits);
      const CpuMask a = FromRef(ra);
      const CpuMask b = FromRef(rb);
      AtomicCpuMask atomic(nbits);
      atomic.Store(a);
      const auto wa = a.words();
      const auto wb = b.words();
      const int want = RefWeight(ra);
      int want_and = 0;
      for (size_t i = 0; i < ra.size(); ++i) want_and += (ra[i] && rb[i]) ? 1 : 0;
      for (const cpumask_internal::PopcountKernels* k : {&portable, hardware}) {
        SCOPED_TRACE(k->name);
        ASSERT_EQ(k->weight(wa.data(), wa.size()), want);
        ASSERT_EQ(k->weight_and(wa.data(), wb.data(), wa.size()), want_and);
      }
      // The atomic form reads through the line layout: compare whole masks.
      EXPECT_EQ(atomic.Weight(), want);
      EXPECT_EQ(a.Weight(), want);
      EXPECT_EQ(a.WeightAnd(b), want_and);
      // Nth over every rank, one past the last, and the bit-by-bit reference.
      int rank = 0;
      for (int cpu = 0; cpu < nbits; ++cpu) {
        if (!ra[static_cast<size_t>(cpu)]) continue;
        ASSERT_EQ(portable.nth(wa.data(), wa.size(), rank), cpu) << "rank " << rank;
        ASSERT_EQ(hardware->nth(wa.data(), wa.size(), rank), cpu) << "rank " << rank;
        ASSERT_EQ(a.Nth(rank), cpu) << "rank " << rank;
        ++rank;
      }
      EXPECT_EQ(a.Nth(rank), nbits);
      EXPECT_EQ(portable.nth(wa.data(), wa.size(), rank),
                hardware->nth(wa.data(), wa.size(), rank));
    }
  }
}

}  // namespace
}  // namespace isolation
