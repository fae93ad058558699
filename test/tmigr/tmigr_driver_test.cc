// SPDX-License-Identifier: GPL-2.0-or-later
// The hierarchy under both drivers through TmigrHooks: on the simulator
// (deterministic, several seeds) and on real threads (bounded, a few hundred
// ms): housekeeping timers run exactly once, never on an unavailable CPU for
// another, and the isolated busy CPU pulls them only under v6.9.

#include <memory>

#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "isolation/real_driver.h"
#include "isolation/sim.h"
#include "isolation/tmigr_hooks.h"
#include "isolation/tmigr_timers.h"

namespace isolation::tmigr {
namespace {

struct DriverRun {
  int64_t on_isolated = 0;
  int64_t pulled_by_isolated = 0;
  int64_t timers_run = 0;
  int64_t twice = 0;
  std::vector<std::string> violations;
};

// 4 model CPUs: 0 housekeeping (nohz idle, delayed work), 1-3 isolated busy.
DriverRun RunOn(bool simulated, Variant variant, uint64_t seed, Nanos duration) {
  DriverRun out;
  auto topo = Topology::FromSynthetic("pu:4");
  EXPECT_TRUE(topo.ok());
  auto iso = IsolationConfig::FromFlags(*topo, "1-3", "");
  EXPECT_TRUE(iso.ok());
  std::unique_ptr<Driver> driver;
  if (simulated) {
    SimOptions so;
    so.seed = seed;
    auto d = Simulator::Create(*topo, *iso, so);
    EXPECT_TRUE(d.ok()) << d.status();
    driver = std::move(*d);
  } else {
    RealDriverOptions ro;
    ro.hz = 1000;
    auto d = RealThreadDriver::Create(*topo, *iso, ro);
    EXPECT_TRUE(d.ok()) << d.status();
    driver = std::move(*d);
  }
  Options o;
  o.variant = variant;
  auto ts = TimerSystem::Create(*topo, o, TimerSystem::Config{driver->tick_period()});
  EXPECT_TRUE(ts.ok());
  (*ts)->tmigr().SetIsolation(*iso);
  EXPECT_TRUE((*ts)->BootAll().ok());
  (*ts)->tmigr().InitIsolation();
  TmigrHooks hooks(**ts, TmigrHooks::Config{5 * kNsPerUs});
  driver->AddHooks(&hooks);
  driver->SetTickMode(0, TickMode::kNohzIdle);
  for (int c = 1; c < 4; ++c) driver->SetTickMode(c, TickMode::kPeriodic);
  TaskSpec hk;
  hk.name = "hk";
  hk.cpu = 0;
  hk.affinity = CpuMask::Of(4, 0);
  hk.body = hooks.MakeHousekeepingTask(0, 10 * kNsPerMs, 100 * kNsPerUs, 4 * kNsPerMs);
  EXPECT_TRUE(driver->Spawn(std::move(hk)).ok());
  for (int c = 1; c < 4; ++c) {
    TaskSpec busy;
    busy.name = "busy";
    busy.cpu = c;
    busy.affinity = CpuMask::Of(4, c);
    busy.body = MakeTaskBody([](TaskContext&) { return Step::Run(kNsPerMs); });
    EXPECT_TRUE(driver->Spawn(std::move(busy)).ok());
  }
  EXPECT_TRUE(driver->RunFor(duration).ok());
  for (int c = 1; c < 4; ++c) {
    out.on_isolated += hooks.callbacks_on(c);
    out.pulled_by_isolated += hooks.remote_callbacks_on(c);
  }
  out.timers_run = (*ts)->timers_run();
  for (const TimerRecord& t : (*ts)->timers()) out.twice += t.runs.load() > 1;
  out.violations.push_back(absl::StrCat("runtime ", (*ts)->runtime_violations()));
  if ((*ts)->runtime_violations() == 0) out.violations.clear();
  driver.reset();  // joins the CPU threads before the hooks go away
  return out;
}

TEST(TmigrDriver, SimulatorBothVariants) {
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    const DriverRun v69 = RunOn(true, Variant::kV69, seed, 300 * kNsPerMs);
    EXPECT_GT(v69.timers_run, 0);
    EXPECT_GT(v69.pulled_by_isolated, 0) << seed;  // CPU 1 is the migrator of GRP0:0
    EXPECT_EQ(v69.twice, 0);
    EXPECT_EQ(absl::StrJoin(v69.violations, "\n"), "");
    const DriverRun isol = RunOn(true, Variant::kIsolation, seed, 300 * kNsPerMs);
    EXPECT_GT(isol.timers_run, 0);
    EXPECT_EQ(isol.on_isolated, 0) << seed;
    EXPECT_EQ(isol.twice, 0);
    EXPECT_EQ(absl::StrJoin(isol.violations, "\n"), "");
  }
}

TEST(TmigrDriver, S27_RealThreadsBounded) {
  for (Variant v : kAllVariants) {
    const DriverRun r = RunOn(false, v, 1, 200 * kNsPerMs);
    EXPECT_EQ(r.twice, 0) << VariantName(v);
    EXPECT_EQ(absl::StrJoin(r.violations, "\n"), "") << VariantName(v);
    if (v == Variant::kIsolation) {
      EXPECT_EQ(r.on_isolated, 0);
    }
  }
}

}  // namespace
}  // namespace isolation::tmigr
