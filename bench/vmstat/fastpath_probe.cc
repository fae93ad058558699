// SPDX-License-Identifier: GPL-2.0-or-later
// vmstat_fastpath_probe: each fast path of the inline writer, and the
// kernel's __mod_zone_page_state / __inc_zone_state sequence compiled here
// (kernel_shape.h), as one out-of-line function per update, called
// kCalls times with updates that never fold.  Run under callgrind
// (bench/vmstat/fastpath_instructions.py does), each function's own
// instruction count divided by kCalls is its fast path's length in
// instructions: a figure of the compiler and the code, the same on every
// host, beside the benchmarks' nanoseconds, which are the host's.
//
//   vmstat_fastpath_probe POLICY    one policy's writer (A0, A1, B, C, D, ...)
//   vmstat_fastpath_probe kernel    the kernel-shaped reference
//
// The functions take the per-CPU state as its callers hold it (a writer;
// the zone, whose per-CPU pointer the kernel offsets with %gs) and the item
// and delta as arguments, so the index arithmetic is in the count.

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>

#include "isolation/vmstat/vmstat.h"
#include "kernel_shape.h"

namespace isolation::vmstat {
namespace {

constexpr int kCalls = 100000;
constexpr int kZoneNormal = 1;
constexpr int kNodeItem = 2;

// Nothing may fold in kCalls calls: the threshold's zone is large.
std::unique_ptr<Vmstat> MakeVm(const std::string& policy) {
  VmstatConfig c;
  c.fold_policy = policy;
  c.num_cpus = 4;
  c.zones = {ZoneSpec{"DMA32", 0, 262144, 100, 140, 180},
             ZoneSpec{"Normal", 0, 16 * 262144, 8192, 10240, 12288}};
  c.isolated = CpuMask(4);
  c.nohz_full = CpuMask::Full(4);
  auto vm = Vmstat::Create(c);
  if (!vm.ok()) {
    std::fprintf(stderr, "vmstat_fastpath_probe: %s\n", vm.status().ToString().c_str());
    return nullptr;
  }
  return std::move(vm).value();
}

}  // namespace

// The probes.  Their names are what fastpath_instructions.py looks for.
// Out of line and opaque to interprocedural constant propagation, so that
// the item and delta stay arguments: GCC's noipa; clang has none, and does
// not specialise a function of external linkage (these are not in the
// anonymous namespace for that reason).
#if defined(__clang__)
#define ISOLATION_PROBE [[gnu::noinline]]
#else
#define ISOLATION_PROBE [[gnu::noipa]]
#endif
// As the kernel's functions, these take the zone: one load of its per-CPU
// pointer is in the count.
ISOLATION_PROBE void ProbeKernelMod(const bench::KernelShapeZone& zone, int item, long delta) {
  bench::KernelShapeMod(*zone.per_cpu_zonestats, item, delta);
}
ISOLATION_PROBE void ProbeKernelInc(const bench::KernelShapeZone& zone, int item) {
  bench::KernelShapeInc(*zone.per_cpu_zonestats, item);
}
ISOLATION_PROBE void ProbeWriterMod(VmstatWriter& w, int item, int64_t delta) {
  w.Mod(StatKind::kZone, kZoneNormal, item, delta);
}
ISOLATION_PROBE void ProbeWriterInc(VmstatWriter& w, int item) { w.Inc(StatKind::kNode, 0, item); }
template <typename W>
ISOLATION_PROBE void ProbeSlotWriterMod(W& w, int item, int64_t delta) {
  w.Mod(StatKind::kZone, kZoneNormal, item, delta);
}
template <typename W>
ISOLATION_PROBE void ProbeSlotWriterInc(W& w, int item) {
  w.Inc(StatKind::kNode, 0, item);
}

namespace {

int RunKernel() {
  bench::KernelShapeZoneStat pcp;
  pcp.stat_threshold.store(64, std::memory_order_relaxed);
  const bench::KernelShapeZone zone{&pcp};
  // Mod alternates +1 / -1; Inc is followed by a Mod(-1) so that it never
  // reaches the threshold (the Mod calls are counted separately).
  for (int i = 0; i < kCalls; ++i) ProbeKernelMod(zone, kZoneMlock, (i & 1) != 0 ? -1 : 1);
  for (int i = 0; i < kCalls; ++i) {
    ProbeKernelInc(zone, kNodeItem);
    bench::KernelShapeMod(pcp, kNodeItem, -1);
  }
  return 0;
}

int RunPolicy(const std::string& policy) {
  auto vm = MakeVm(policy);
  if (vm == nullptr) return 1;
  auto writer = vm->Writer(0);
  if (!writer.ok()) {
    std::fprintf(stderr, "vmstat_fastpath_probe: %s\n", writer.status().ToString().c_str());
    return 1;
  }
  VmstatWriter w = *writer;
  std::printf("policy %s: writer form %d, inline fast path %s\n", policy.c_str(),
              static_cast<int>(w.form()), w.inline_fast_path() ? "yes" : "no");
  for (int i = 0; i < kCalls; ++i) ProbeWriterMod(w, kZoneMlock, (i & 1) != 0 ? -1 : 1);
  for (int i = 0; i < kCalls; ++i) {
    ProbeWriterInc(w, kNodeItem);
    vm->Mod(0, StatKind::kNode, 0, kNodeItem, -1);
  }
  w.WithSlotForm([&](auto s) {
    for (int i = 0; i < kCalls; ++i) ProbeSlotWriterMod(s, kZoneMlock, (i & 1) != 0 ? -1 : 1);
    for (int i = 0; i < kCalls; ++i) {
      ProbeSlotWriterInc(s, kNodeItem);
      vm->Mod(0, StatKind::kNode, 0, kNodeItem, -1);
    }
  });
  if (const int64_t folds = vm->Counters(0).threshold_folds; folds != 0) {
    std::fprintf(
        stderr,
        "vmstat_fastpath_probe: %s folded %lld times; the counts would include slow paths\n",
        policy.c_str(), static_cast<long long>(folds));
    return 1;
  }
  return 0;
}

}  // namespace
}  // namespace isolation::vmstat

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s POLICY|kernel  (calls each probe %d times)\n", argv[0],
                 isolation::vmstat::kCalls);
    return 2;
  }
  const std::string what = argv[1];
  std::printf("calls per probe: %d\n", isolation::vmstat::kCalls);
  return what == "kernel" ? isolation::vmstat::RunKernel() : isolation::vmstat::RunPolicy(what);
}
