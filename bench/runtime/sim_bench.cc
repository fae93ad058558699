// SPDX-License-Identifier: GPL-2.0-or-later
// Simulator throughput: events per wall second and simulated CPU-seconds per
// wall second, over machine size (scaling curve 16..4096 CPUs), for a
// periodic tick on busy CPUs (4M tick events per simulated second at 4096
// CPUs, HZ 1000) and for a mostly idle nohz machine (idle CPUs cost nothing);
// and set-up time (synthetic topology and simulator, no tasks: a task's
// affinity mask alone grows with the machine) at 8192 against 4096 CPUs in
// one run (`setup_8192_over_4096`, 2.0 if linear; wall time, and the same in
// the thread's CPU time, `setup_8192_over_4096_cpu`, which a shared host's
// other load disturbs much less).

#include <time.h>

#include <chrono>
#include <memory>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "isolation/runtime/sim.h"

namespace isolation {
namespace {

// A simulator of `cpus` CPUs with `busy` (0 ... cpus) tasks that run
// forever, spread evenly (task c on CPU c * (cpus / busy)); nullptr if it
// cannot be created.
std::unique_ptr<Simulator> Make(int cpus, TickMode mode, int busy) {
  // package:P core:C pu:1 with P*C == cpus.
  const int packages = cpus >= 64 ? cpus / 64 : 1;
  const std::string desc = absl::StrCat("package:", packages, " core:", cpus / packages, " pu:1");
  absl::StatusOr<Topology> t = Topology::FromSynthetic(desc);
  if (!t.ok()) return nullptr;
  SimOptions opts;
  opts.default_tick_mode = mode;
  auto sim = Simulator::Create(*t, IsolationConfig(*t), opts);
  if (!sim.ok()) return nullptr;
  for (int c = 0; c < busy; ++c) {
    TaskSpec spec;
    spec.cpu = c * (cpus / busy);
    spec.body = MakeTaskBody([](TaskContext&) { return Step::Run(10 * kNsPerMs); });
    (void)(*sim)->Spawn(std::move(spec));
  }
  return *std::move(sim);
}

// Every CPU busy with one task, periodic tick: the tick dominates.
void BM_SimPeriodicBusy(benchmark::State& state) {
  const int cpus = static_cast<int>(state.range(0));
  int64_t events = 0;
  double sim_cpu_seconds = 0;
  for (auto _ : state) {
    state.PauseTiming();
    auto sim = Make(cpus, TickMode::kPeriodic, /*busy=*/cpus);
    if (sim == nullptr) {
      state.SkipWithError("topology");
      return;
    }
    state.ResumeTiming();
    (void)sim->RunFor(100 * kNsPerMs);
    events += sim->events_processed();
    sim_cpu_seconds += 0.1 * cpus;
    state.PauseTiming();
    sim.reset();
    state.ResumeTiming();
  }
  state.counters["events_per_s"] =
      benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
  state.counters["sim_cpu_s_per_s"] =
      benchmark::Counter(sim_cpu_seconds, benchmark::Counter::kIsRate);
}
BENCHMARK(BM_SimPeriodicBusy)->RangeMultiplier(4)->Range(16, 4096)->Unit(benchmark::kMillisecond);

// nohz_idle machine with 4 busy CPUs (one task each, tick running) and the
// rest idle: cost should not grow with the idle CPUs.
void BM_SimMostlyIdle(benchmark::State& state) {
  const int cpus = static_cast<int>(state.range(0));
  int64_t events = 0;
  for (auto _ : state) {
    state.PauseTiming();
    auto sim = Make(cpus, TickMode::kNohzIdle, /*busy=*/4);
    if (sim == nullptr) {
      state.SkipWithError("topology");
      return;
    }
    state.ResumeTiming();
    (void)sim->RunFor(kNsPerSec);
    events += sim->events_processed();
    state.PauseTiming();
    sim.reset();
    state.ResumeTiming();
  }
  state.counters["events_per_s"] =
      benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_SimMostlyIdle)->RangeMultiplier(4)->Range(16, 4096)->Unit(benchmark::kMillisecond);

// This thread's CPU time (user + system: page faults count), in seconds.
double ThreadCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// Set-up cost of the machine (Make without tasks, + destruction) at 4096 and
// 8192 CPUs, alternately, in one run: linear set-up gives a ratio of 2.
void BM_SimSetupScaling(benchmark::State& state) {
  using Clock = std::chrono::steady_clock;
  double t4096 = 0, t8192 = 0, cpu4096 = 0, cpu8192 = 0;
  for (auto _ : state) {
    const auto t0 = Clock::now();
    const double c0 = ThreadCpuSeconds();
    auto small = Make(4096, TickMode::kPeriodic, /*busy=*/0);
    const bool small_ok = small != nullptr;
    small.reset();
    const auto t1 = Clock::now();
    const double c1 = ThreadCpuSeconds();
    auto large = Make(8192, TickMode::kPeriodic, /*busy=*/0);
    const bool large_ok = large != nullptr;
    large.reset();
    const auto t2 = Clock::now();
    const double c2 = ThreadCpuSeconds();
    if (!small_ok || !large_ok) {
      state.SkipWithError("topology");
      return;
    }
    t4096 += std::chrono::duration<double>(t1 - t0).count();
    t8192 += std::chrono::duration<double>(t2 - t1).count();
    cpu4096 += c1 - c0;
    cpu8192 += c2 - c1;
    state.SetIterationTime(std::chrono::duration<double>(t2 - t0).count());
  }
  const double n = static_cast<double>(state.iterations());
  state.counters["setup_4096_ms"] = t4096 * 1e3 / n;
  state.counters["setup_8192_ms"] = t8192 * 1e3 / n;
  state.counters["setup_8192_over_4096"] = t4096 > 0 ? t8192 / t4096 : 0;
  state.counters["setup_4096_cpu_ms"] = cpu4096 * 1e3 / n;
  state.counters["setup_8192_cpu_ms"] = cpu8192 * 1e3 / n;
  state.counters["setup_8192_over_4096_cpu"] = cpu4096 > 0 ? cpu8192 / cpu4096 : 0;
}
BENCHMARK(BM_SimSetupScaling)->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(5);

}  // namespace
}  // namespace isolation
