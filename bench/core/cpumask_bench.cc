// SPDX-License-Identifier: GPL-2.0-or-later
// CpuMask search cost: word-at-a-time iteration (for_each_cpu via Next) and
// Weight (popcount) against a naive bit-by-bit Test() loop, at 128 and 4096
// CPUs, sparse (2%), half (50%) and dense (100%) masks.
//
//   bench/core/cpumask_bench --benchmark_min_time=0.05
//
// Each *_VsNaive / *_Scaling benchmark times both loops over the same mask
// inside one run (thread CPU time, batches of 256 calls) and reports
// word_ns, naive_ns per call and `speedup` = naive / word-at-a-time, so the
// ratio does not depend on comparing separate runs.
//
// BM_WeightVsPopcntPerWord (goal 4 of docs/performance.md): CpuMask::Weight() against
// one popcnt instruction per word of the same mask (64 for 4096 bits, the
// hardware limit), with `ratio_to_popcnt_per_word`;
// BM_WeightPortableVsPopcntPerWord does the same for the portable loop that
// Weight() was before run-time dispatch (libgcc's __popcountdi2 per word on
// baseline x86-64), so before and after are in one
// run.  Both need a CPU with popcnt (skipped with an error otherwise).

#include <benchmark/benchmark.h>

#include <time.h>

#include <cstdint>
#include <random>

#include "isolation/core/cpumask.h"
#include "isolation/testing/bench.h"

namespace isolation {
namespace {

CpuMask MakeMask(int nbits, int density_percent) {
  CpuMask m(nbits);
  std::mt19937_64 rng(42);
  std::uniform_int_distribution<int> pct(0, 99);
  for (int c = 0; c < nbits; ++c) {
    if (pct(rng) < density_percent) m.Set(c);
  }
  return m;
}

int64_t SumByNext(const CpuMask& m) {
  int64_t sum = 0;
  for (int cpu : m) sum += cpu;
  return sum;
}

int64_t SumByTest(const CpuMask& m) {
  int64_t sum = 0;
  const int n = m.nbits();
  for (int cpu = 0; cpu < n; ++cpu) {
    if (m.Test(cpu)) sum += cpu;
  }
  return sum;
}

int WeightByTest(const CpuMask& m) {
  int w = 0;
  const int n = m.nbits();
  for (int cpu = 0; cpu < n; ++cpu) w += m.Test(cpu) ? 1 : 0;
  return w;
}

void SetLabels(benchmark::State& state, const CpuMask& m) {
  state.counters["cpus"] = static_cast<double>(m.nbits());
  state.counters["set"] = static_cast<double>(m.Weight());
}

void BM_IterateNext(benchmark::State& state) {
  const CpuMask m = MakeMask(static_cast<int>(state.range(0)), static_cast<int>(state.range(1)));
  for (auto _ : state) {
    benchmark::DoNotOptimize(&m);
    benchmark::DoNotOptimize(SumByNext(m));
  }
  SetLabels(state, m);
}

void BM_IterateNaive(benchmark::State& state) {
  const CpuMask m = MakeMask(static_cast<int>(state.range(0)), static_cast<int>(state.range(1)));
  for (auto _ : state) {
    benchmark::DoNotOptimize(&m);
    benchmark::DoNotOptimize(SumByTest(m));
  }
  SetLabels(state, m);
}

void BM_Weight(benchmark::State& state) {
  const CpuMask m = MakeMask(static_cast<int>(state.range(0)), static_cast<int>(state.range(1)));
  for (auto _ : state) {
    benchmark::DoNotOptimize(&m);
    benchmark::DoNotOptimize(m.Weight());
  }
  SetLabels(state, m);
}

void BM_WeightNaive(benchmark::State& state) {
  const CpuMask m = MakeMask(static_cast<int>(state.range(0)), static_cast<int>(state.range(1)));
  for (auto _ : state) {
    benchmark::DoNotOptimize(&m);
    benchmark::DoNotOptimize(WeightByTest(m));
  }
  SetLabels(state, m);
}

// Times `fast` and `naive` alternately in batches of `reps` and reports the
// ratio of their total times.
// Thread CPU time rather than wall time: the host is shared, and preemption
// would otherwise land in whichever loop happened to be running.
int64_t ThreadCpuNanos() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

template <typename Fast, typename Naive>
void RunVsNaive(benchmark::State& state, const CpuMask& m, Fast fast, Naive naive) {
  constexpr int kReps = 256;
  int64_t fast_total = 0, naive_total = 0;
  for (auto _ : state) {
    const int64_t t0 = ThreadCpuNanos();
    for (int r = 0; r < kReps; ++r) {
      benchmark::DoNotOptimize(&m);
      benchmark::DoNotOptimize(fast(m));
    }
    const int64_t t1 = ThreadCpuNanos();
    for (int r = 0; r < kReps; ++r) {
      benchmark::DoNotOptimize(&m);
      benchmark::DoNotOptimize(naive(m));
    }
    const int64_t t2 = ThreadCpuNanos();
    fast_total += t1 - t0;
    naive_total += t2 - t1;
  }
  const double calls = static_cast<double>(state.iterations()) * kReps;
  const double fast_ns = static_cast<double>(fast_total) / calls;
  const double naive_ns = static_cast<double>(naive_total) / calls;
  state.counters["word_ns"] = fast_ns;
  state.counters["naive_ns"] = naive_ns;
  state.counters["speedup"] = fast_ns > 0 ? naive_ns / fast_ns : 0;
  SetLabels(state, m);
}

void BM_IterateVsNaive(benchmark::State& state) {
  const CpuMask m = MakeMask(static_cast<int>(state.range(0)), static_cast<int>(state.range(1)));
  RunVsNaive(state, m, SumByNext, SumByTest);
}

void BM_WeightVsNaive(benchmark::State& state) {
  const CpuMask m = MakeMask(static_cast<int>(state.range(0)), static_cast<int>(state.range(1)));
  RunVsNaive(
      state, m, [](const CpuMask& x) { return x.Weight(); }, WeightByTest);
}

// Scaling over CPU count at a fixed sparse density (the isolation case:
// a few housekeeping CPUs among many).
void BM_IterateScaling(benchmark::State& state) {
  const CpuMask m = MakeMask(static_cast<int>(state.range(0)), 2);
  RunVsNaive(state, m, SumByNext, SumByTest);
}

#if defined(__x86_64__) || defined(__i386__)
// The hardware limit: one popcnt per word, nothing else.  noinline so that
// the compiler cannot fold it into the caller's (baseline) code.
__attribute__((target("popcnt"), noinline)) int PopcntPerWord(const uint64_t* words, size_t n) {
  int total = 0;
  for (size_t i = 0; i < n; ++i) total += __builtin_popcountll(words[i]);
  return total;
}
bool CpuHasPopcnt() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("popcnt");
}
#else
int PopcntPerWord(const uint64_t* words, size_t n) {
  int total = 0;
  for (size_t i = 0; i < n; ++i) total += std::popcount(words[i]);
  return total;
}
bool CpuHasPopcnt() { return true; }
#endif

template <typename Subject>
void RunVsPopcntPerWord(benchmark::State& state, const CpuMask& m, Subject subject) {
  if (!CpuHasPopcnt()) {
    state.SkipWithError("this CPU has no popcnt instruction");
    return;
  }
  const auto words = m.words();
  testing::CompareToBaseline(
      state,
      [&](int64_t n) {
        for (int64_t i = 0; i < n; ++i) {
          benchmark::DoNotOptimize(&m);
          benchmark::DoNotOptimize(subject(m));
        }
      },
      [&](int64_t n) {
        for (int64_t i = 0; i < n; ++i) {
          benchmark::DoNotOptimize(words.data());
          benchmark::DoNotOptimize(PopcntPerWord(words.data(), words.size()));
        }
      },
      "popcnt_per_word");
  SetLabels(state, m);
  state.SetLabel(cpumask_internal::ActivePopcountKernels().name);
}

void BM_WeightVsPopcntPerWord(benchmark::State& state) {
  const CpuMask m = MakeMask(static_cast<int>(state.range(0)), 50);
  RunVsPopcntPerWord(state, m, [](const CpuMask& x) { return x.Weight(); });
}

void BM_WeightPortableVsPopcntPerWord(benchmark::State& state) {
  const CpuMask m = MakeMask(static_cast<int>(state.range(0)), 50);
  const auto& portable = cpumask_internal::PortablePopcountKernels();
  RunVsPopcntPerWord(state, m, [&](const CpuMask& x) {
    return portable.weight(x.words().data(), x.words().size());
  });
}

void SizesAndDensities(benchmark::internal::Benchmark* b) {
  b->ArgNames({"cpus", "density"});
  for (int cpus : {128, 4096}) {
    for (int density : {2, 50, 100}) b->Args({cpus, density});
  }
}

BENCHMARK(BM_IterateNext)->Apply(SizesAndDensities);
BENCHMARK(BM_IterateNaive)->Apply(SizesAndDensities);
BENCHMARK(BM_Weight)->Apply(SizesAndDensities);
BENCHMARK(BM_WeightNaive)->Apply(SizesAndDensities);
BENCHMARK(BM_IterateVsNaive)->Apply(SizesAndDensities);
BENCHMARK(BM_WeightVsNaive)->Apply(SizesAndDensities);
BENCHMARK(BM_WeightVsPopcntPerWord)->ArgName("cpus")->Arg(128)->Arg(4096)->UseManualTime();
BENCHMARK(BM_WeightPortableVsPopcntPerWord)->ArgName("cpus")->Arg(128)->Arg(4096)->UseManualTime();
BENCHMARK(BM_IterateScaling)->ArgName("cpus")->RangeMultiplier(4)->Range(64, 8192);

}  // namespace
}  // namespace isolation
