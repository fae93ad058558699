// SPDX-License-Identifier: GPL-2.0-or-later
// Timer-migration hierarchy costs versus CPU count (8 ... 4096), per variant:
//   BM_IdleEntryExit  tmigr_cpu_deactivate() + tmigr_cpu_activate() of the only
//                     active CPU (the walk reaches the root both ways);
//   BM_NewTimer       tmigr_cpu_new_timer() of an idle CPU in an idle branch
//                     (alternating expiries, so every call walks);
//   BM_RemoteExpiry   an idle CPU queues its timer, the migrator of its group
//                     expires it remotely (tmigr_handle_remote());
//   BM_IdleEntryExitCompare  both variants in one loop, ratio counter.
// Single-threaded (uncontended) costs of the data structure, on this host.
// The isolation variant runs with a quarter of the CPUs housekeeping (the
// others domain-isolated), so its hierarchy holds fewer available CPUs.

#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "isolation/core/clock.h"
#include "isolation/core/isolation_config.h"
#include "isolation/tmigr/tmigr.h"
#include "isolation/core/topology.h"

namespace isolation::tmigr {
namespace {

struct Bench {
  NullBackend backend;
  std::unique_ptr<TimerMigration> tm;
  std::vector<int> hk;  // available CPUs
};

// All CPUs up, then every available CPU idle except `keep_active`.
std::unique_ptr<Bench> Build(Variant variant, int ncpus, int keep_active) {
  auto b = std::make_unique<Bench>();
  Options o;
  o.variant = variant;
  auto tm = TimerMigration::Create(std::vector<int>(static_cast<size_t>(ncpus), 0), o, &b->backend);
  if (!tm.ok()) return nullptr;
  b->tm = std::move(*tm);
  for (int c = 0; c < ncpus; ++c) {
    if (!b->tm->BringUpCpu(c).ok()) return nullptr;
  }
  if (variant == Variant::kIsolation) {
    auto topo = Topology::FromSynthetic(absl::StrCat("pu:", ncpus));
    if (!topo.ok()) return nullptr;
    CpuMask isolated(ncpus);
    for (int c = 0; c < ncpus; ++c) {
      if (c % 4 != 0) isolated.Set(c);
    }
    auto iso = IsolationConfig::FromFlags(*topo, isolated.ToString(), "");
    if (!iso.ok()) return nullptr;
    b->tm->SetIsolation(*iso);
    b->tm->InitIsolation();
  }
  for (int c = 0; c < ncpus; ++c) {
    if (b->tm->IsAvailable(c)) b->hk.push_back(c);
  }
  for (int c : b->hk) {
    if (c != keep_active) b->tm->Deactivate(c, kNanosMax);
  }
  return b;
}

void BM_IdleEntryExit(benchmark::State& state, Variant variant) {
  const int n = static_cast<int>(state.range(0));
  auto b = Build(variant, n, 0);
  if (!b) {
    state.SkipWithError("setup failed");
    return;
  }
  for (auto _ : state) {
    benchmark::DoNotOptimize(b->tm->Deactivate(0, kNanosMax));
    b->tm->Activate(0);
  }
  state.SetComplexityN(n);
  state.SetLabel(std::string(VariantName(variant)));
  state.counters["levels"] = b->tm->root() ? b->tm->root()->level + 1 : 0;
}

void BM_NewTimer(benchmark::State& state, Variant variant) {
  const int n = static_cast<int>(state.range(0));
  auto b = Build(variant, n, 0);
  if (!b || b->hk.size() < 2) {
    state.SkipWithError("setup failed");
    return;
  }
  const int cpu = b->hk.back();  // idle, in the branch farthest from CPU 0
  Nanos t = 1'000'000;
  for (auto _ : state) {
    t += 2;  // a different expiry every call: every call walks
    benchmark::DoNotOptimize(b->tm->NewTimer(cpu, t));
  }
  state.SetComplexityN(n);
  state.SetLabel(std::string(VariantName(variant)));
}

void BM_RemoteExpiry(benchmark::State& state, Variant variant) {
  const int n = static_cast<int>(state.range(0));
  auto b = Build(variant, n, 0);
  if (!b || b->hk.size() < 2) {
    state.SkipWithError("setup failed");
    return;
  }
  const int idle_cpu = b->hk[1];  // same level-0 group as CPU 0 when n allows
  b->tm->Activate(idle_cpu);
  Nanos t = 1000;
  for (auto _ : state) {
    b->tm->Deactivate(idle_cpu, t);  // queue its global timer
    b->tm->HandleRemote(0, t);       // the migrator expires it
    b->tm->Activate(idle_cpu);
    t += 1000;
  }
  state.SetComplexityN(n);
  state.SetLabel(std::string(VariantName(variant)));
  state.counters["remote_expiries"] = static_cast<double>(b->tm->counters().remote_expiries.load());
}

void BM_IdleEntryExitCompare(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  auto a = Build(Variant::kV69, n, 0);
  auto i = Build(Variant::kIsolation, n, 0);
  if (!a || !i) {
    state.SkipWithError("setup failed");
    return;
  }
  constexpr int kBatch = 64;
  Nanos ta = 0, ti = 0;
  int64_t ops = 0;
  for (auto _ : state) {
    Nanos t0 = MonotonicNanos();
    for (int k = 0; k < kBatch; ++k) {
      a->tm->Deactivate(0, kNanosMax);
      a->tm->Activate(0);
    }
    Nanos t1 = MonotonicNanos();
    for (int k = 0; k < kBatch; ++k) {
      i->tm->Deactivate(0, kNanosMax);
      i->tm->Activate(0);
    }
    Nanos t2 = MonotonicNanos();
    ta += t1 - t0;
    ti += t2 - t1;
    ops += kBatch;
  }
  state.counters["v69_ns"] = static_cast<double>(ta) / static_cast<double>(ops);
  state.counters["isolation_ns"] = static_cast<double>(ti) / static_cast<double>(ops);
  state.counters["isolation_over_v69"] = ta > 0 ? static_cast<double>(ti) / static_cast<double>(ta) : 0;
  state.SetComplexityN(n);
}

#define TMIGR_BENCH(fn)                                                                     \
  BENCHMARK_CAPTURE(fn, v6_9, Variant::kV69)->RangeMultiplier(2)->Range(8, 4096)->Complexity(); \
  BENCHMARK_CAPTURE(fn, isolation, Variant::kIsolation)->RangeMultiplier(2)->Range(8, 4096)->Complexity()
TMIGR_BENCH(BM_IdleEntryExit);
TMIGR_BENCH(BM_NewTimer);
TMIGR_BENCH(BM_RemoteExpiry);
#undef TMIGR_BENCH
BENCHMARK(BM_IdleEntryExitCompare)->RangeMultiplier(8)->Range(8, 4096)->Complexity();

}  // namespace
}  // namespace isolation::tmigr
