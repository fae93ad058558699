// SPDX-License-Identifier: GPL-2.0-or-later
// vmstat on the real-thread driver (bounded: ~0.3 s of real time per
// strategy): pinned CPU threads make syscalls that update counters with the
// tick stopped, the shepherd runs on the housekeeping CPU.  Asserted without
// any timing assumption: I1 exact after each RunFor (the CPU threads are
// parked), I10 across a hotplug between runs, and I8 for the strategies whose
// isolation does not depend on a racy remote check (A1, C, D).

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "isolation/core/isolation_config.h"
#include "isolation/runtime/real_driver.h"
#include "isolation/core/topology.h"
#include "isolation/vmstat/vmstat.h"
#include "isolation/vmstat/hooks.h"

namespace isolation::vmstat {
namespace {

class VmstatRealP : public ::testing::TestWithParam<Strategy> {};

TEST_P(VmstatRealP, S6_S7_RealThreads_I1_I8_I10) {
  const Strategy s = GetParam();
  auto topo = Topology::FromSynthetic("package:1 core:4 pu:1");
  ASSERT_TRUE(topo.ok()) << topo.status();
  auto iso = IsolationConfig::FromFlags(*topo, "1-3", "1-3");
  ASSERT_TRUE(iso.ok()) << iso.status();
  VmstatConfig c;
  c.strategy = s;
  c.num_cpus = 4;
  c.zones = {ZoneSpec{"Normal", 0, 16 * 262144, 8192, 10240, 12288}};
  c.stat_interval = 20 * kNsPerMs;
  c.isolated = CpuMask::Range(4, 1, 3);
  c.nohz_full = iso->nohz_full();
  auto vm_or = Vmstat::Create(c);
  ASSERT_TRUE(vm_or.ok());
  std::unique_ptr<Vmstat> vm = std::move(vm_or).value();
  VmstatHooks hooks(*vm);
  RealDriverOptions opt;
  opt.hz = 250;
  auto drv_or = RealThreadDriver::Create(*topo, *iso, opt);
  ASSERT_TRUE(drv_or.ok()) << drv_or.status();
  std::unique_ptr<RealThreadDriver> drv = std::move(drv_or).value();
  drv->AddHooks(&hooks);

  // Per-CPU true counts, each written only by its CPU's thread.
  struct alignas(64) Truth {
    int64_t mlock = 0;
    int64_t anon = 0;
  };
  std::vector<Truth> truth(4);
  for (int cpu = 0; cpu < 4; ++cpu) {
    auto n = std::make_shared<int64_t>(0);
    TaskSpec t;
    t.name = "app";
    t.cpu = cpu;
    t.affinity = CpuMask::Of(4, cpu);
    t.body = MakeTaskBody([&, n, cpu](TaskContext& ctx) {
      const int64_t i = (*n)++;
      if (i < 3000 || cpu == 0) {
        ctx.Syscall([&, i](CpuContext& k) {
          const int64_t d = i % 2 == 0 ? 1 : -1;
          vm->Mod(k.cpu(), StatKind::kZone, 0, kZoneMlock, d);
          truth[static_cast<size_t>(k.cpu())].mlock += d;
          if (i % 16 == 0) {
            vm->Inc(k.cpu(), StatKind::kNode, 0, 1);
            truth[static_cast<size_t>(k.cpu())].anon += 1;
          }
        });
        return cpu == 0 ? Step::Sleep(200 * kNsPerUs) : Step::Run(5 * kNsPerUs);
      }
      if (i == 3000) {
        ctx.Syscall([&](CpuContext& k) {  // RT start-up burst, then spin
          vm->Mod(k.cpu(), StatKind::kZone, 0, kZoneMlock, 7);
          truth[static_cast<size_t>(k.cpu())].mlock += 7;
        });
      }
      return Step::Run(1 * kNsPerMs);
    });
    ASSERT_TRUE(drv->Spawn(std::move(t)).ok());
  }
  auto conservation = [&] {
    int64_t mlock = 0, anon = 0;
    for (const Truth& t : truth) {
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
           std::abs(vm->GlobalRaw(StatKind::kZone, kZoneMlock) - vm->SharedRaw(StatKind::kZone, 0, kZoneMlock));
  };
  ASSERT_TRUE(drv->RunFor(150 * kNsPerMs).ok());
  EXPECT_EQ(conservation(), 0);
  // Hotplug between runs (the driver parks its threads): I10.
  ASSERT_TRUE(drv->SetCpuOnline(3, false).ok());
  EXPECT_FALSE(vm->IsOnline(3));
  EXPECT_EQ(vm->MaxAbsDiff(3), 0);
  EXPECT_EQ(conservation(), 0);
  EXPECT_EQ(vm->Threshold(0, StatKind::kZone, 0), NormalThreshold(16 * 262144, 3));
  ASSERT_TRUE(drv->RunFor(100 * kNsPerMs).ok());
  EXPECT_EQ(conservation(), 0);
  if (s == Strategy::kA1 || s == Strategy::kC || s == Strategy::kD) {
    for (int cpu = 1; cpu < 4; ++cpu) EXPECT_EQ(vm->Counters(cpu).work_runs, 0) << "cpu " << cpu;
  }
  hooks.Stop();
}

INSTANTIATE_TEST_SUITE_P(AllStrategies, VmstatRealP, ::testing::ValuesIn(kCorrectStrategies),
                         [](const ::testing::TestParamInfo<Strategy>& info) {
                           std::string n(StrategyName(info.param));
                           for (char& ch : n) {
                             if (ch == '.') ch = '_';  // "B.local" -> B_local (gtest names)
                           }
                           return n;
                         });

}  // namespace
}  // namespace isolation::vmstat
