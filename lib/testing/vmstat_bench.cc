// SPDX-License-Identifier: GPL-2.0-or-later
// The vmstat benchmark helpers of the kit (testing/vmstat_bench.h).

#include "isolation/testing/vmstat_bench.h"

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <utility>

#include "benchmark/benchmark.h"
#include "isolation/testing/bench.h"
#include "isolation/testing/vmstat.h"
#include "isolation/vmstat/vmstat.h"

namespace isolation::testing {
namespace {

using vmstat::StatKind;
using vmstat::Vmstat;

// 4 CPUs, two zones, every CPU nohz_full (none isolated), as bench/vmstat.
std::unique_ptr<Vmstat> BenchVmstat(benchmark::State& state, const std::string& variant) {
  vmstat::VmstatConfig c;
  c.num_cpus = 4;
  c.zones = {vmstat::ZoneSpec{"DMA32", 0, 262144, 100, 140, 180},
             vmstat::ZoneSpec{"Normal", 0, 16 * 262144, 8192, 10240, 12288}};
  c.isolated = CpuMask(4);
  c.nohz_full = CpuMask::Full(4);
  auto vm = MakeVmstat(variant, c);
  if (!vm.ok()) {
    state.SkipWithError(std::string(vm.status().message()).c_str());
    return nullptr;
  }
  return std::move(vm).value();
}

// One operation on a Vmstat, `n` times; `phase` carries state across batches.
using Op = std::function<void(Vmstat& vm, int64_t n, int64_t& phase)>;

void Register(const std::string& name, const std::string& variant, const std::string& baseline,
              Op op, bool remote_folder = false) {
  benchmark::RegisterBenchmark((name + "/" + variant).c_str(), [variant, baseline, op,
                                                                remote_folder](
                                                                   benchmark::State& state) {
    auto subject = BenchVmstat(state, variant);
    auto base = BenchVmstat(state, baseline);
    if (subject == nullptr || base == nullptr) return;
    std::atomic<bool> stop{false};
    std::thread folder;
    if (remote_folder) {
      folder = std::thread([&] {
        while (!stop.load(std::memory_order_relaxed)) {
          for (Vmstat* vm : {subject.get(), base.get()}) {
            if (vm->FoldCpuRemote(0) == 0) benchmark::DoNotOptimize(vm->NeedUpdate(0));
          }
        }
      });
    }
    int64_t subject_phase = 0, base_phase = 0;
    CompareToBaseline(
        state, [&](int64_t n) { op(*subject, n, subject_phase); },
        [&](int64_t n) { op(*base, n, base_phase); }, baseline);
    stop.store(true, std::memory_order_relaxed);
    if (folder.joinable()) folder.join();
    state.SetLabel(variant + " vs " + baseline);
  })->UseManualTime();
}

// +1, -1, +1, ...: NR_MLOCK of an mlock/munlock loop, never across a threshold.
int64_t Alternate(int64_t& phase) {
  phase ^= 1;
  return phase != 0 ? 1 : -1;
}

}  // namespace

void RegisterVmstatBenchmarks(std::string_view variant_view, std::string_view baseline_view) {
  const std::string variant(variant_view);
  const std::string baseline(baseline_view);
  Register("BM_VmstatMod", variant, baseline, [](Vmstat& vm, int64_t n, int64_t& phase) {
    for (int64_t i = 0; i < n; ++i)
      vm.Mod(0, StatKind::kZone, 1, vmstat::kZoneMlock, Alternate(phase));
  });
  Register("BM_VmstatModIrqsOff", variant, baseline, [](Vmstat& vm, int64_t n, int64_t& phase) {
    for (int64_t i = 0; i < n; ++i)
      vm.ModIrqsOff(0, StatKind::kZone, 1, vmstat::kZoneMlock, Alternate(phase));
  });
  Register("BM_VmstatInc", variant, baseline, [](Vmstat& vm, int64_t n, int64_t&) {
    for (int64_t i = 0; i < n; ++i) vm.Inc(0, StatKind::kNode, 0, 2);
  });
  Register(
      "BM_VmstatModWithRemoteFolder", variant, baseline,
      [](Vmstat& vm, int64_t n, int64_t& phase) {
        for (int64_t i = 0; i < n; ++i)
          vm.Mod(0, StatKind::kZone, 1, vmstat::kZoneMlock, Alternate(phase));
      },
      /*remote_folder=*/true);
  Register("BM_VmstatSyscallHookChain", variant, baseline, [](Vmstat& vm, int64_t n, int64_t&) {
    for (int64_t i = 0; i < n; ++i) {
      vm.Mod(0, StatKind::kZone, 1, vmstat::kZoneMlock, 1);
      benchmark::DoNotOptimize(vm.ReturnToUser(0, true));
      vm.Mod(0, StatKind::kZone, 1, vmstat::kZoneMlock, -1);
      benchmark::DoNotOptimize(vm.ReturnToUser(0, true));
    }
  });
  Register("BM_VmstatReturnToUserClean", variant, baseline, [](Vmstat& vm, int64_t n, int64_t&) {
    for (int64_t i = 0; i < n; ++i) benchmark::DoNotOptimize(vm.ReturnToUser(0, true));
  });
  Register("BM_VmstatTickStopQuietClean", variant, baseline, [](Vmstat& vm, int64_t n, int64_t&) {
    for (int64_t i = 0; i < n; ++i) benchmark::DoNotOptimize(vm.QuietVmstat(0, true));
  });
}

}  // namespace isolation::testing
