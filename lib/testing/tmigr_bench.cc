// SPDX-License-Identifier: GPL-2.0-or-later
// Benchmark helpers for the timer-migration hierarchy (testing/tmigr_bench.h).

#include "isolation/testing/tmigr_bench.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "isolation/core/isolation_config.h"
#include "isolation/core/topology.h"
#include "isolation/testing/bench.h"
#include "isolation/testing/tmigr.h"
#include "isolation/tmigr/tmigr.h"

namespace isolation::testing {
namespace {

using tmigr::TimerMigration;

struct Bench {
  tmigr::NullBackend backend;
  std::unique_ptr<TimerMigration> tm;
  std::vector<int> hk;  // available CPUs
};

// All CPUs up, every fourth housekeeping and the others domain-isolated
// after the late init, then every available CPU idle except CPU 0.
absl::StatusOr<std::unique_ptr<Bench>> Build(const std::string& spec, int ncpus) {
  auto variant = ParseTmigrVariant(spec);
  if (!variant.ok()) return variant.status();
  auto b = std::make_unique<Bench>();
  tmigr::Options o;
  o.participation = variant->participation;
  o.hierarchy = variant->hierarchy;
  auto tm = TimerMigration::Create(std::vector<int>(static_cast<size_t>(ncpus), 0), o, &b->backend);
  if (!tm.ok()) return tm.status();
  b->tm = std::move(*tm);
  for (int c = 0; c < ncpus; ++c) {
    if (absl::Status s = b->tm->BringUpCpu(c); !s.ok()) return s;
  }
  auto topo = Topology::FromSynthetic(absl::StrCat("pu:", ncpus));
  if (!topo.ok()) return topo.status();
  CpuMask isolated(ncpus);
  for (int c = 0; c < ncpus; ++c) {
    if (c % 4 != 0) isolated.Set(c);
  }
  auto iso = IsolationConfig::FromFlags(*topo, isolated.ToString(), "");
  if (!iso.ok()) return iso.status();
  if (absl::Status s = b->tm->SetIsolation(*iso); !s.ok()) return s;
  b->tm->InitIsolation();
  for (int c = 0; c < ncpus; ++c) {
    if (b->tm->IsAvailable(c)) b->hk.push_back(c);
  }
  if (b->hk.size() < 2 || b->hk[0] != 0)
    return absl::InternalError("fewer than two available CPUs, or not CPU 0");
  for (int c : b->hk) {
    if (c != 0) b->tm->Deactivate(c, kNanosMax);
  }
  return b;
}

struct Pair {
  std::unique_ptr<Bench> subject, baseline;
};

bool BuildPair(benchmark::State& state, const std::string& variant, const std::string& baseline,
               Pair& out) {
  const int n = static_cast<int>(state.range(0));
  auto s = Build(variant, n);
  auto b = Build(baseline, n);
  if (!s.ok() || !b.ok()) {
    state.SkipWithError((!s.ok() ? s.status() : b.status()).ToString().c_str());
    return false;
  }
  out.subject = std::move(*s);
  out.baseline = std::move(*b);
  return true;
}

void Finish(benchmark::State& state, const Bench& b) {
  const auto snap = b.tm->Snapshot();
  state.counters["levels"] = snap.root.valid() ? snap.root.level + 1 : 0;
}

void IdleEntryExit(benchmark::State& state, const std::string& variant,
                   const std::string& baseline) {
  Pair p;
  if (!BuildPair(state, variant, baseline, p)) return;
  auto run = [](Bench& b, int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
      benchmark::DoNotOptimize(b.tm->Deactivate(0, kNanosMax));
      b.tm->Activate(0);
    }
  };
  CompareToBaseline(
      state, [&](int64_t n) { run(*p.subject, n); }, [&](int64_t n) { run(*p.baseline, n); },
      baseline);
  Finish(state, *p.subject);
}

void NewTimer(benchmark::State& state, const std::string& variant, const std::string& baseline) {
  Pair p;
  if (!BuildPair(state, variant, baseline, p)) return;
  Nanos ts = 1'000'000, tb = 1'000'000;
  auto run = [](Bench& b, Nanos& t, int64_t n) {
    const int cpu = b.hk.back();  // idle, in the branch farthest from CPU 0
    for (int64_t i = 0; i < n; ++i) {
      t += 2;  // a different expiry every call: every call walks
      benchmark::DoNotOptimize(b.tm->NewTimer(cpu, t));
    }
  };
  CompareToBaseline(
      state, [&](int64_t n) { run(*p.subject, ts, n); },
      [&](int64_t n) { run(*p.baseline, tb, n); }, baseline);
  Finish(state, *p.subject);
}

void RemoteExpiry(benchmark::State& state, const std::string& variant,
                  const std::string& baseline) {
  Pair p;
  if (!BuildPair(state, variant, baseline, p)) return;
  // hk[1]: the same level-0 group as CPU 0 when the size allows.
  p.subject->tm->Activate(p.subject->hk[1]);
  p.baseline->tm->Activate(p.baseline->hk[1]);
  Nanos ts = 1000, tb = 1000;
  auto run = [](Bench& b, Nanos& t, int64_t n) {
    const int idle_cpu = b.hk[1];
    for (int64_t i = 0; i < n; ++i) {
      b.tm->Deactivate(idle_cpu, t);  // queue its global timer
      b.tm->HandleRemote(0, t);       // the migrator expires it
      b.tm->Activate(idle_cpu);
      t += 1000;
    }
  };
  CompareToBaseline(
      state, [&](int64_t n) { run(*p.subject, ts, n); },
      [&](int64_t n) { run(*p.baseline, tb, n); }, baseline);
  Finish(state, *p.subject);
  state.counters["remote_expiries"] =
      static_cast<double>(p.subject->tm->counters().remote_expiries.load());
}

}  // namespace

void RegisterTmigrBenchmarks(std::string_view variant, std::string_view baseline, int max_cpus) {
  const std::string v(variant);
  const std::string b(baseline);
  using Fn = void (*)(benchmark::State&, const std::string&, const std::string&);
  const std::pair<const char*, Fn> benches[] = {
      {"IdleEntryExit", IdleEntryExit}, {"NewTimer", NewTimer}, {"RemoteExpiry", RemoteExpiry}};
  for (const auto& [name, fn] : benches) {
    benchmark::RegisterBenchmark(absl::StrCat("tmigr/", name, "/", v).c_str(),
                                 [fn = fn, v, b](benchmark::State& state) { fn(state, v, b); })
        ->UseManualTime()
        ->RangeMultiplier(2)
        ->Range(8, max_cpus);
  }
}

}  // namespace isolation::testing
