// SPDX-License-Identifier: GPL-2.0-or-later
// The vmstat conformance suite on real threads (testing/vmstat.h), each run
// bounded to a fraction of a second and asserting no timing: S6 (stress
// conservation), I7 (a writer against a remote folder thread), the
// RealThreadDriver run (I1, I8, I10) and S8 (the return-to-user hook chain:
// the work it does per syscall, and its cost reported in ns and cycles).

#include <time.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

#include "isolation/runtime/real_driver.h"
#include "isolation/testing/machine.h"
#include "isolation/testing/status_matchers.h"
#include "isolation/testing/violations.h"
#include "isolation/vmstat/hooks.h"
#include "testing/vmstat_common.h"

namespace isolation::testing {

using namespace vmstat_kit;  // NOLINT(build/namespaces): the kit's own helpers
using vmstat::kZoneMlock;
using vmstat::NormalThreshold;

namespace {

uint64_t CycleCounter() {
#if defined(__x86_64__) || defined(__i386__)
  return __rdtsc();
#elif defined(__aarch64__)
  uint64_t v;
  asm volatile("mrs %0, cntvct_el0" : "=r"(v));
  return v;
#else
  return 0;
#endif
}

int64_t ThreadCpuNs() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

}  // namespace

// ---- S6 ------------------------------------------------------------------------------------

namespace {

// S6; `through_writer`: every update goes through the CPU's VmstatWriter
// (Dec instead of DecIrqsOff, which the writer does not have).
Violations StressConservation(std::string_view check, std::string_view variant,
                              bool through_writer) {
  Report r(check, variant);
  constexpr int kWriters = 3;
  auto vm = MakeOrFail(r, variant, SmallConfig(kWriters + 1, 0));
  if (vm == nullptr) return r.Take();
  std::vector<vmstat::VmstatWriter> cpu_writers;
  for (int w = 0; w < kWriters && through_writer; ++w) {
    auto writer = vm->Writer(w);
    if (!writer.ok()) {
      r.Fail("Writer(", w, "): ", writer.status().message());
      return r.Take();
    }
    cpu_writers.push_back(*writer);
  }
  std::atomic<bool> stop{false};
  std::vector<Truth> truths(kWriters);
  std::vector<std::atomic<uint64_t>> mailbox(kWriters + 1);
  // CPU kWriters is housekeeping: the shepherd, snapshot readers, and (for
  // remote-fold policies) the remote folds.  Work it queues for CPU w is
  // handed over through mailbox[w]; CPU w runs it itself.
  std::thread shepherd([&] {
    while (!stop.load(std::memory_order_acquire)) {
      vm->Shepherd([](int) { return false; },
                   [&](int cpu, uint64_t g) {
                     mailbox[static_cast<size_t>(cpu)].store(g, std::memory_order_release);
                   });
      (void)vm->ReadSnapshot(StatKind::kZone, 1, kZoneMlock);
      std::this_thread::yield();
    }
  });
  std::vector<std::thread> writers;
  for (int w = 0; w < kWriters; ++w) {
    writers.emplace_back([&, w] {
      std::mt19937_64 rng(100 + static_cast<uint64_t>(w));
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(120);
      Truth& truth = truths[static_cast<size_t>(w)];
      for (int i = 0;; ++i) {
        const StatKind k = rng() % 2 ? StatKind::kZone : StatKind::kNode;
        const int inst = static_cast<int>(rng() % static_cast<uint64_t>(vm->num_instances(k)));
        const int item = static_cast<int>(rng() % 4);
        const int op = static_cast<int>(rng() % 10);
        if (op < 4) {
          const int64_t d = static_cast<int64_t>(rng() % 9) - 4;
          through_writer ? cpu_writers[static_cast<size_t>(w)].Mod(k, inst, item, d)
                         : vm->Mod(w, k, inst, item, d);
          truth.Add(k, inst, item, d);
        } else if (op < 6) {
          through_writer ? cpu_writers[static_cast<size_t>(w)].Inc(k, inst, item)
                         : vm->Inc(w, k, inst, item);
          truth.Add(k, inst, item, 1);
        } else if (op < 8) {
          through_writer ? cpu_writers[static_cast<size_t>(w)].Dec(k, inst, item)
                         : vm->DecIrqsOff(w, k, inst, item);
          truth.Add(k, inst, item, -1);
        } else if (op == 8) {
          if (vm->WorkPending(w))
            vm->RunCpuWork(w, mailbox[static_cast<size_t>(w)].load(std::memory_order_acquire));
          vm->ReturnToUser(w, true);
        } else {
          vm->QuietVmstat(w, true);
        }
        if ((i & 1023) == 0 && std::chrono::steady_clock::now() > deadline) break;
      }
    });
  }
  for (auto& t : writers) t.join();
  stop.store(true, std::memory_order_release);
  shepherd.join();
  Truth all;
  for (const Truth& t : truths) all.Merge(t);
  std::string where;
  if (ConservationError(*vm, all, &where) != 0) r.Fail("I1 after joining: ", where);
  return r.Take();
}

}  // namespace

Violations CheckVmstatStressConservation(std::string_view variant) {
  return StressConservation("S6 stress conservation", variant, false);
}
Violations CheckVmstatStressConservationThroughWriter(std::string_view variant) {
  return StressConservation("S6 stress conservation through the writer", variant, true);
}

// ---- I7 on real threads -----------------------------------------------------------------------

namespace {

// One writer thread (CPU 0's context) against a remote folder thread, for
// `budget`; returns the conservation error after joining.  A racy probe
// while both run checks I2: the folder's exchange-then-add window can hide
// at most one slot value (|d| <= t + |delta|) from the reader, and the
// reader's two loads can straddle one writer fold (another t + |delta|).
// `through_writer`: CPU 0's updates go through its VmstatWriter.
int64_t WriterVsRemoteFolder(Report& r, std::string_view variant, std::chrono::milliseconds budget,
                             bool through_writer) {
  constexpr int kT = 6;
  VmstatConfig c = SmallConfig(2, kT);
  c.zone_items = 2;
  c.node_items = 1;
  auto vm = MakeOrFail(r, variant, c);
  if (vm == nullptr) return -1;
  auto writer = vm->Writer(0);
  if (!writer.ok()) {
    r.Fail("Writer(0): ", writer.status().message());
    return -1;
  }
  std::atomic<bool> stop{false};
  std::thread folder([&] {
    while (!stop.load(std::memory_order_acquire)) vm->FoldCpuRemote(0);
  });
  const auto deadline = std::chrono::steady_clock::now() + budget;
  std::mt19937_64 rng(7);
  int64_t local = 0;
  int64_t worst_probe = 0;
  for (int64_t i = 0;; ++i) {
    const int64_t d = static_cast<int64_t>(rng() % 5) - 1;  // drifts upward
    through_writer ? writer->Mod(StatKind::kZone, 0, 1, d) : vm->Mod(0, StatKind::kZone, 0, 1, d);
    local += d;
    if ((i & 0xffff) == 0xffff) {
      if (std::chrono::steady_clock::now() > deadline) break;
      const int64_t probe =
          vm->SharedRaw(StatKind::kZone, 0, 1) + vm->Diff(0, StatKind::kZone, 0, 1);
      worst_probe = std::max(worst_probe, std::abs(probe - local));
    }
  }
  stop.store(true, std::memory_order_release);
  folder.join();
  constexpr int64_t kProbeBound = 2 * (kT + 3 + kT / 2);  // two operations in flight, |delta| <= 3
  r.Expect(worst_probe <= kProbeBound, "I2: a racy probe saw ", worst_probe, " pages in flight (> ",
           kProbeBound, ")");
  Truth truth;
  truth.Add(StatKind::kZone, 0, 1, local);
  return ConservationError(*vm, truth);
}

}  // namespace

Violations CheckVmstatRemoteFoldRealThreads(std::string_view variant) {
  Report r("I7 remote fold on real threads", variant);
  FoldPolicyTraits t;
  if (!TraitsOrFail(r, variant, &t) || !t.folds_remotely) return r.Take();
  const int64_t err = WriterVsRemoteFolder(r, variant, std::chrono::milliseconds(150), false);
  r.Expect(err == 0, "I7: ", err, " units lost or counted twice under a concurrent remote fold");
  return r.Take();
}

Violations CheckVmstatRemoteFoldRealThreadsThroughWriter(std::string_view variant) {
  Report r("I7 remote fold on real threads, through the writer", variant);
  FoldPolicyTraits t;
  if (!TraitsOrFail(r, variant, &t) || !t.folds_remotely) return r.Take();
  const int64_t err = WriterVsRemoteFolder(r, variant, std::chrono::milliseconds(150), true);
  r.Expect(err == 0, "I7: ", err, " units lost or counted twice under a concurrent remote fold");
  return r.Take();
}

// ---- the RealThreadDriver run ---------------------------------------------------------------

Violations CheckVmstatRealDriver(std::string_view variant) {
  Report r("S6/S7 RealThreadDriver", variant);
  auto machine =
      MachineBuilder().Topology("package:1 core:4 pu:1").Isolcpus("1-3").NohzFull("1-3").Build();
  if (!machine.ok()) {
    r.Fail("machine: ", machine.status().message());
    return r.Take();
  }
  VmstatConfig c;
  c.num_cpus = 4;
  c.zones = {ZoneSpec{"Normal", 0, 16 * kGiB, 8192, 10240, 12288}};
  c.stat_interval = 20 * kNsPerMs;
  c.isolated = CpuMask::Range(4, 1, 3);
  c.nohz_full = machine->isolation.nohz_full();
  auto vm = MakeOrFail(r, variant, c);
  if (vm == nullptr) return r.Take();
  vmstat::VmstatHooks hooks(*vm);
  RealDriverOptions opt;
  opt.hz = 250;
  auto drv_or = machine->RealThreads(opt);
  if (!drv_or.ok()) {
    r.Fail("driver: ", drv_or.status().message());
    return r.Take();
  }
  std::unique_ptr<RealThreadDriver> drv = std::move(drv_or).value();
  drv->AddHooks(&hooks);
  // Per-CPU true counts, each written only by its CPU's thread.
  struct alignas(64) CpuTruth {
    int64_t mlock = 0;
    int64_t anon = 0;
  };
  std::vector<CpuTruth> truth(4);
  Vmstat* v = vm.get();
  for (int cpu = 0; cpu < 4; ++cpu) {
    auto n = std::make_shared<int64_t>(0);
    TaskSpec t;
    t.name = "app";
    t.cpu = cpu;
    t.affinity = CpuMask::Of(4, cpu);
    t.body = MakeTaskBody([v, &truth, n, cpu](TaskContext& ctx) {
      const int64_t i = (*n)++;
      if (i < 3000 || cpu == 0) {
        ctx.Syscall([v, &truth, i](CpuContext& k) {
          const int64_t d = i % 2 == 0 ? 1 : -1;
          v->Mod(k.cpu(), StatKind::kZone, 0, kZoneMlock, d);
          truth[static_cast<size_t>(k.cpu())].mlock += d;
          if (i % 16 == 0) {
            v->Inc(k.cpu(), StatKind::kNode, 0, 1);
            truth[static_cast<size_t>(k.cpu())].anon += 1;
          }
        });
        return cpu == 0 ? Step::Sleep(200 * kNsPerUs) : Step::Run(5 * kNsPerUs);
      }
      if (i == 3000) {
        ctx.Syscall([v, &truth](CpuContext& k) {  // RT start-up burst, then spin
          v->Mod(k.cpu(), StatKind::kZone, 0, kZoneMlock, 7);
          truth[static_cast<size_t>(k.cpu())].mlock += 7;
        });
      }
      return Step::Run(1 * kNsPerMs);
    });
    if (!drv->Spawn(std::move(t)).ok()) r.Fail("spawn failed");
  }
  auto conservation = [&] {
    int64_t mlock = 0, anon = 0;
    for (const CpuTruth& t : truth) {
      mlock += t.mlock;
      anon += t.anon;
    }
    int64_t x = vm->SharedRaw(StatKind::kZone, 0, kZoneMlock);
    int64_t y = vm->SharedRaw(StatKind::kNode, 0, 1);
    for (int cpu = 0; cpu < 4; ++cpu) {
      if (!vm->IsOnline(cpu)) continue;
      x += vm->Diff(cpu, StatKind::kZone, 0, kZoneMlock);
      y += vm->Diff(cpu, StatKind::kNode, 0, 1);
    }
    return std::abs(x - mlock) + std::abs(y - anon) +
           std::abs(vm->GlobalRaw(StatKind::kZone, kZoneMlock) -
                    vm->SharedRaw(StatKind::kZone, 0, kZoneMlock));
  };
  if (!r.Expect(drv->RunFor(150 * kNsPerMs).ok(), "RunFor failed")) return r.Take();
  r.Expect(conservation() == 0, "I1 after the first run (threads parked)");
  // Hotplug between runs (the driver parks its threads): I10.
  r.Expect(drv->SetCpuOnline(3, false).ok(), "SetCpuOnline(3, false) failed");
  r.Expect(!vm->IsOnline(3) && vm->MaxAbsDiff(3) == 0,
           "I10: the dead CPU is online or has residue");
  r.Expect(conservation() == 0, "I1 after the offline fold");
  r.Expect(vm->Threshold(0, StatKind::kZone, 0) == NormalThreshold(16 * kGiB, 3),
           "I10: thresholds for n = 3");
  if (!r.Expect(drv->RunFor(100 * kNsPerMs).ok(), "RunFor failed")) return r.Take();
  r.Expect(conservation() == 0, "I1 after the second run");
  // I8 where it does not hang on the racy remote tick check.
  const WorkScope scope = vm->policy_traits().shepherd_work;
  if (scope == WorkScope::kNotIsolated || scope == WorkScope::kNotNohzFull ||
      scope == WorkScope::kNoCpu) {
    for (int cpu = 1; cpu < 4; ++cpu) {
      r.Expect(vm->Counters(cpu).shepherd_queued == 0,
               "I8: the shepherd queued work on isolated nohz_full cpu ", cpu);
    }
  }
  hooks.Stop();
  return r.Take();
}

// ---- S8 ------------------------------------------------------------------------------------

absl::StatusOr<VmstatHookChainCost> MeasureVmstatHookChain(std::string_view variant,
                                                           int iterations) {
  VmstatConfig c;
  c.num_cpus = 4;
  c.zones = {ZoneSpec{"Normal", 0, 64 * kGiB, 16384, 20480, 24576}};
  c.isolated = CpuMask::Range(4, 1, 3);
  c.nohz_full = c.isolated;
  auto made = MakeVmstat(variant, c);
  if (!made.ok()) return made.status();
  Vmstat& vm = **made;
  // The housekeeping shepherd runs meanwhile, every millisecond, seeing
  // the isolated CPUs' ticks stopped (as the experiment's host run does).
  std::atomic<bool> stop{false};
  std::thread shepherd([&] {
    while (!stop.load(std::memory_order_acquire)) {
      vm.Shepherd([](int cpu) { return cpu != 0; }, [](int, uint64_t) {});
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  });
  constexpr int kCpu = 1;  // isolated, nohz_full, tick stopped
  const int64_t folds0 = vm.Counters(kCpu).return_to_user_folds;
  const uint64_t c0 = CycleCounter();
  const int64_t t0 = ThreadCpuNs();
  for (int i = 0; i < iterations; ++i) {
    vm.Mod(kCpu, StatKind::kZone, 0, kZoneMlock, 1);  // in-kernel part of mlock
    vm.ReturnToUser(kCpu, true);
    vm.Mod(kCpu, StatKind::kZone, 0, kZoneMlock, -1);  // munlock
    vm.ReturnToUser(kCpu, true);
  }
  const int64_t t1 = ThreadCpuNs();
  const uint64_t c1 = CycleCounter();
  stop.store(true, std::memory_order_release);
  shepherd.join();
  VmstatHookChainCost cost;
  cost.syscalls = 2 * static_cast<int64_t>(iterations);
  cost.ns_per_syscall =
      static_cast<double>(t1 - t0) / static_cast<double>(std::max<int64_t>(1, cost.syscalls));
  cost.cycles_per_syscall =
      static_cast<double>(c1 - c0) / static_cast<double>(std::max<int64_t>(1, cost.syscalls));
  cost.return_to_user_folds = vm.Counters(kCpu).return_to_user_folds - folds0;
  // The flag check alone: returns to user of a clean CPU.
  vm.RefreshCpu(kCpu);
  vm.ReturnToUser(kCpu, true);  // clears a dirty flag left behind, if any
  const int64_t folds1 = vm.Counters(kCpu).return_to_user_folds;
  for (int i = 0; i < 1000; ++i) vm.ReturnToUser(kCpu, true);
  cost.clean_hook_folds = vm.Counters(kCpu).return_to_user_folds - folds1;
  // I1: every +1 had its -1.
  int64_t x = vm.SharedRaw(StatKind::kZone, 0, kZoneMlock);
  for (int cpu = 0; cpu < 4; ++cpu) x += vm.Diff(cpu, StatKind::kZone, 0, kZoneMlock);
  if (x != 0) return absl::InternalError(Cat("I1: NR_MLOCK off by ", x, " after the loop"));
  return cost;
}

Violations CheckVmstatHookChain(std::string_view variant) {
  Report r("S8 return-to-user hook chain", variant);
  auto cost = MeasureVmstatHookChain(variant, 20000);
  if (!cost.ok()) {
    r.Fail(cost.status().message());
    return r.Take();
  }
  FoldPolicyTraits t;
  if (!TraitsOrFail(r, variant, &t)) return r.Take();
  // Every syscall moves NR_MLOCK by one page (never across a threshold), so
  // each leaves the CPU dirty: a policy folding this CPU on return to user
  // folds once per syscall, one that does not hook it never.
  if (t.return_to_user_folds != ReturnToUserScope::kNone && !t.folds_remotely) {
    r.Expect(cost->return_to_user_folds == cost->syscalls, "return-to-user folds ",
             cost->return_to_user_folds, " for ", cost->syscalls,
             " dirtying syscalls (want one each)");
  }
  if (!t.hooks_return_to_user) {
    r.Expect(cost->return_to_user_folds == 0,
             "folds on return to user by a policy that does not hook it");
  }
  r.Expect(cost->clean_hook_folds == 0, "the hook folded a clean CPU ", cost->clean_hook_folds,
           " times");
  r.Expect(cost->ns_per_syscall > 0, "no time measured");
  return r.Take();
}

// ---- the suite ---------------------------------------------------------------------------------

int VmstatRealConformanceAnchor() { return 0; }

// A binary may link the kit without instantiating every suite.
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(VmstatRealConformance);

namespace {

TEST_P(VmstatRealConformance, S6_StressConservation) { ISOLATION_VMSTAT_RUN_CHECK(); }
TEST_P(VmstatRealConformance, I7_I2_RemoteFoldRealThreads) { ISOLATION_VMSTAT_RUN_CHECK(); }
TEST_P(VmstatRealConformance, S6_StressConservationThroughWriter) { ISOLATION_VMSTAT_RUN_CHECK(); }
TEST_P(VmstatRealConformance, I7_I2_RemoteFoldRealThreadsThroughWriter) {
  ISOLATION_VMSTAT_RUN_CHECK();
}
TEST_P(VmstatRealConformance, S6_S7_I8_I10_RealThreadDriver) { ISOLATION_VMSTAT_RUN_CHECK(); }
TEST_P(VmstatRealConformance, S8_ReturnToUserHookChain) {
  ISOLATION_VMSTAT_SKIP_IF_NOT_APPLICABLE();
  ISOLATION_EXPECT_NO_VIOLATIONS(CheckVmstatHookChain(GetParam()));
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto cost, MeasureVmstatHookChain(GetParam(), 20000));
  // Reported, not asserted (no timing assertions in tests).
  RecordProperty("ns_per_syscall", std::to_string(cost.ns_per_syscall));
  RecordProperty("cycles_per_syscall", std::to_string(cost.cycles_per_syscall));
  std::printf(
      "S8 %s: hook chain %.1f ns, %.0f cycles per syscall (update + return to user), %lld folds in "
      "%lld "
      "syscalls\n",
      GetParam().c_str(), cost.ns_per_syscall, cost.cycles_per_syscall,
      static_cast<long long>(cost.return_to_user_folds), static_cast<long long>(cost.syscalls));
}

}  // namespace
}  // namespace isolation::testing
