// SPDX-License-Identifier: GPL-2.0-or-later
// The vmstat conformance suite on the direct API (testing/vmstat.h):
// thresholds (S1, I11), the writers (S2, S3, I5, S4, S5, I3, I4), folds
// (I6), hotplug (I10), S10, S11, the remote-fold filter knob and the seeded
// random schedules (I1, I3, I4, I6, I8, I9, I10).  The forced interleavings
// are in vmstat_interleave.cc; their tests are here.

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "testing/vmstat_common.h"

namespace isolation::testing {

using namespace vmstat_kit;  // NOLINT(build/namespaces): the kit's own helpers

namespace {

using vmstat::kMaxZoneItems;
using vmstat::kNodeWriteback;
using vmstat::kThresholdCap;
using vmstat::kZoneFreePages;
using vmstat::kZoneMlock;
using vmstat::NormalThreshold;

template <typename A, typename B, typename... Ctx>
bool ExpectEq(Report& r, const A& got, const B& want, const char* what, const Ctx&... ctx) {
  if (got == want) return true;
  r.Fail(what, ": got ", got, ", want ", want, ctx...);
  return false;
}

}  // namespace

// ---- S1 per CPU, I11 -------------------------------------------------------------------

Violations CheckVmstatThresholds(std::string_view variant) {
  Report r("S1/I11 thresholds", variant);
  if (auto vm = MakeOrFail(r, variant, SmallConfig(4))) {
    for (int cpu = 0; cpu < 4; ++cpu) {
      ExpectEq(r, vm->Threshold(cpu, StatKind::kZone, 0), NormalThreshold(1 * kGiB, 4),
               "S1 DMA32 threshold");
      ExpectEq(r, vm->Threshold(cpu, StatKind::kZone, 1), NormalThreshold(4 * kGiB, 4),
               "S1 Normal threshold");
      // A node's threshold is the largest of its zones'.
      ExpectEq(r, vm->Threshold(cpu, StatKind::kNode, 0), NormalThreshold(4 * kGiB, 4),
               "S1 node 0 = max of zones");
      ExpectEq(r, vm->Threshold(cpu, StatKind::kNode, 1), NormalThreshold(2 * kGiB, 4),
               "S1 node 1");
    }
  }
  // I11: n * t > low - min -> high + n * t; never cleared when n shrinks.
  VmstatConfig c = SmallConfig(64);
  c.num_nodes = 1;
  c.zones = {ZoneSpec{"Normal", 0, 16 * kGiB, 0, 1000, 2000}};
  if (auto vm = MakeOrFail(r, variant, c)) {
    ExpectEq(r, vm->DriftMark(0), 2000 + 64 * 125, "I11 drift mark at 64 CPUs");
    int64_t expected = 2000 + 64 * 125;
    for (int cpu = 63; cpu >= 1; --cpu) {
      if (!vm->CpuOffline(cpu).ok()) {
        r.Fail("CpuOffline(", cpu, ") failed");
        break;
      }
      const int n = cpu;  // CPUs 0..cpu-1 still online
      const int t = NormalThreshold(16 * kGiB, n);
      if (static_cast<int64_t>(n) * t > 1000) expected = 2000 + static_cast<int64_t>(n) * t;
      ExpectEq(r, vm->DriftMark(0), expected, "I11 drift mark (set only when n * t > low - min)",
               " at n = ", n);
    }
    r.Expect(expected < 2000 + 64 * 125 && NormalThreshold(16 * kGiB, 1) <= 1000,
             "I11 scenario does not reach a stale mark");
  }
  c.zones = {ZoneSpec{"Normal", 0, 16 * kGiB, 0, 100000, 200000}};
  if (auto vm = MakeOrFail(r, variant, c)) ExpectEq(r, vm->DriftMark(0), 0, "I11 mark never set");
  return r.Take();
}

// ---- S2, overstep knob -----------------------------------------------------------------

Violations CheckVmstatOverstep(std::string_view variant) {
  Report r("S2 overstep", variant);
  for (bool overstep : {true, false}) {
    for (bool irqsoff : {false, true}) {
      for (int dir : {1, -1}) {
        VmstatConfig c = SmallConfig(2, 10);
        c.overstep = overstep;
        auto vm = MakeOrFail(r, variant, c);
        if (vm == nullptr) return r.Take();
        const std::string how = Cat(irqsoff ? " (IrqsOff" : " (", dir > 0 ? "inc" : "dec",
                                    overstep ? ", overstep on)" : ", overstep off)");
        auto step = [&] {
          if (irqsoff) {
            dir > 0 ? vm->IncIrqsOff(0, StatKind::kZone, 1, kZoneMlock)
                    : vm->DecIrqsOff(0, StatKind::kZone, 1, kZoneMlock);
          } else {
            dir > 0 ? vm->Inc(0, StatKind::kZone, 1, kZoneMlock)
                    : vm->Dec(0, StatKind::kZone, 1, kZoneMlock);
          }
        };
        auto shared = [&] { return vm->SharedRaw(StatKind::kZone, 1, kZoneMlock); };
        for (int i = 0; i < 10; ++i) step();
        ExpectEq(r, shared(), 0, "no fold within t = 10 steps", how);
        step();  // 11th: pushes v + t/2 = 16 and parks at -t/2 (overstep), or 11 and 0
        const int park = overstep ? 5 : 0;
        ExpectEq(r, shared(), dir * (11 + park), "first fold at the 11th step", how);
        ExpectEq(r, vm->Diff(0, StatKind::kZone, 1, kZoneMlock), -dir * park,
                 "slot after the first fold", how);
        // The next fold comes after t + park + 1 steps.
        for (int i = 0; i < 10 + park; ++i) step();
        ExpectEq(r, shared(), dir * (11 + park), "no second fold before t + t/2 + 1 more", how);
        step();
        ExpectEq(r, shared(), dir * 2 * (11 + park), "second fold", how);
        ExpectEq(r, vm->GlobalRaw(StatKind::kZone, kZoneMlock), dir * 2 * (11 + park),
                 "global = zone", how);
        ExpectEq(r, shared() + vm->Diff(0, StatKind::kZone, 1, kZoneMlock), dir * (22 + park),
                 "I1 after the folds", how);
      }
    }
  }
  return r.Take();
}

// ---- S3 ------------------------------------------------------------------------------------

Violations CheckVmstatModPath(std::string_view variant) {
  Report r("S3 mod path", variant);
  for (bool irqsoff : {false, true}) {
    auto vm = MakeOrFail(r, variant, SmallConfig(2, 10));
    if (vm == nullptr) break;
    const char* how = irqsoff ? " (ModIrqsOff)" : " (Mod)";
    auto mod = [&](int64_t d) {
      irqsoff ? vm->ModIrqsOff(0, StatKind::kZone, 1, kZoneMlock, d)
              : vm->Mod(0, StatKind::kZone, 1, kZoneMlock, d);
    };
    auto shared = [&] { return vm->SharedRaw(StatKind::kZone, 1, kZoneMlock); };
    auto diff = [&] { return vm->Diff(0, StatKind::kZone, 1, kZoneMlock); };
    mod(7);
    ExpectEq(r, diff(), 7, "+7 stays in the slot", how);
    ExpectEq(r, shared(), 0, "+7 not folded", how);
    mod(7);
    ExpectEq(r, shared(), 14, "+7 +7 folds 14", how);
    ExpectEq(r, diff(), 0, "slot 0 after a mod fold", how);
    mod(512);
    ExpectEq(r, shared(), 526, "a 512-page folio folds at once", how);
    ExpectEq(r, diff(), 0, "slot 0 after the folio", how);
    mod(-600);
    ExpectEq(r, shared(), -74, "negative shared value", how);
    ExpectEq(r, vm->Read(StatKind::kZone, 1, kZoneMlock), 0, "cheap read clamped at 0", how);
  }
  return r.Take();
}

// ---- I5, overstep knob ---------------------------------------------------------------------

Violations CheckVmstatFoldCadence(std::string_view variant) {
  Report r("I5 fold cadence", variant);
  for (bool overstep : {true, false}) {
    for (int t : {1, 2, 5, 10, 33, 64, 125}) {
      VmstatConfig c = SmallConfig(1, t);
      c.overstep = overstep;
      auto vm = MakeOrFail(r, variant, c);
      if (vm == nullptr) return r.Take();
      const int park = overstep ? t / 2 : 0;
      std::vector<int> fold_at;
      int64_t last = 0;
      for (int i = 1; i <= 20 * (t + 2); ++i) {
        vm->Inc(0, StatKind::kNode, 0, 3);
        const int64_t s = vm->SharedRaw(StatKind::kNode, 0, 3);
        if (s != last) {
          ExpectEq(r, s - last, t + 1 + park, "increments: each fold adds t + 1 + overstep",
                   " (t = ", t, ")");
          fold_at.push_back(i);
          last = s;
        }
      }
      if (!r.Expect(fold_at.size() >= 2, "fewer than two folds", " (t = ", t, ")")) continue;
      ExpectEq(r, fold_at[0], t + 1, "first fold at the (t+1)-th increment", " (t = ", t, ")");
      for (size_t k = 1; k < fold_at.size(); ++k) {
        ExpectEq(r, fold_at[k] - fold_at[k - 1], t + park + 1, "fold period", " (t = ", t, ")");
      }
      // mod of delta: a shared update whenever the running sum exceeds t.
      auto vm2 = MakeOrFail(r, variant, c);
      if (vm2 == nullptr) return r.Take();
      std::mt19937_64 rng(static_cast<uint64_t>(t));
      int64_t running = 0, shared = 0;
      for (int i = 0; i < 500; ++i) {
        const int64_t d = static_cast<int64_t>(rng() % 7) - 3;
        vm2->Mod(0, StatKind::kZone, 0, 2, d);
        running += d;
        if (std::abs(running) > t) {
          shared += running;
          running = 0;
        }
        if (!ExpectEq(r, vm2->SharedRaw(StatKind::kZone, 0, 2), shared, "mod: shared", " (t = ", t,
                      ", i = ", i, ")") ||
            !ExpectEq(r, vm2->Diff(0, StatKind::kZone, 0, 2), running, "mod: slot", " (t = ", t,
                      ", i = ", i, ")")) {
          break;
        }
      }
    }
  }
  return r.Take();
}

// ---- S4, I3 --------------------------------------------------------------------------------

Violations CheckVmstatThresholdDrop(std::string_view variant) {
  Report r("S4 threshold drop", variant);
  VmstatConfig c = SmallConfig(64);
  c.num_nodes = 1;
  c.zones = {ZoneSpec{"Normal", 0, 16 * kGiB, 8, 20, 32}};
  auto vm = MakeOrFail(r, variant, c);
  if (vm == nullptr) return r.Take();
  ExpectEq(r, vm->Threshold(0, StatKind::kZone, 0), 125, "normal threshold at 64 CPUs, 16 GiB");
  for (int cpu = 0; cpu < 4; ++cpu) vm->Mod(cpu, StatKind::kZone, 0, kZoneFreePages, 125);
  if (!vm->SetPressure(0, true).ok()) r.Fail("SetPressure(0, true) failed");
  ExpectEq(r, vm->Threshold(0, StatKind::kZone, 0), 1, "pressure threshold max(1, 12 / 64)");
  for (int cpu = 0; cpu < 4; ++cpu) {
    ExpectEq(r, vm->Diff(cpu, StatKind::kZone, 0, kZoneFreePages), 125, "I3: untouched slots stay",
             " (cpu ", cpu, ")");
  }
  vm->Inc(0, StatKind::kZone, 0, kZoneFreePages);  // first touch folds
  ExpectEq(r, vm->Diff(0, StatKind::kZone, 0, kZoneFreePages), 0, "the first touch folds");
  ExpectEq(r, vm->SharedRaw(StatKind::kZone, 0, kZoneFreePages), 126, "folded value");
  vm->Inc(0, StatKind::kZone, 0, kZoneFreePages);
  r.Expect(std::abs(vm->Diff(0, StatKind::kZone, 0, kZoneFreePages)) <= 1, "I3 with the new t = 1");
  if (!vm->SetPressure(0, false).ok()) r.Fail("SetPressure(0, false) failed");
  ExpectEq(r, vm->Threshold(0, StatKind::kZone, 0), 125, "normal threshold restored");
  ExpectEq(r, vm->Diff(1, StatKind::kZone, 0, kZoneFreePages), 125, "restoring changes no slot");
  return r.Take();
}

// ---- S5, I4 --------------------------------------------------------------------------------

Violations CheckVmstatDriftDemo(std::string_view variant) {
  Report r("S5 drift demo", variant);
  VmstatConfig c = SmallConfig(128);
  c.num_nodes = 1;
  c.zones = {ZoneSpec{"Normal", 0, 16 * kGiB, 8192, 10240, 12288}};
  auto vm = MakeOrFail(r, variant, c);
  if (vm == nullptr) return r.Take();
  for (int cpu = 0; cpu < 128; ++cpu) vm->Mod(cpu, StatKind::kZone, 0, kZoneFreePages, 125);
  ExpectEq(r, vm->Read(StatKind::kZone, 0, kZoneFreePages), 0, "cheap read");
  ExpectEq(r, vm->ReadSnapshot(StatKind::kZone, 0, kZoneFreePages), 16000, "snapshot");
  ExpectEq(r, vm->ReadGlobalSnapshot(StatKind::kZone, kZoneFreePages), 16000, "global snapshot");
  int64_t bound = 0;
  for (int cpu = 0; cpu < 128; ++cpu) bound += vm->Threshold(cpu, StatKind::kZone, 0);
  r.Expect(16000 - vm->GlobalRaw(StatKind::kZone, kZoneFreePages) <= bound,
           "I4: |G - T| <= sum of thresholds");
  return r.Take();
}

// ---- I6 ------------------------------------------------------------------------------------

Violations CheckVmstatRefresh(std::string_view variant) {
  Report r("I6 refresh", variant);
  auto vm = MakeOrFail(r, variant, SmallConfig(2, 50));
  if (vm == nullptr) return r.Take();
  vm->Mod(0, StatKind::kZone, 0, 1, 5);
  vm->Mod(0, StatKind::kZone, 1, 1, -5);  // cancels across zones
  ExpectEq(r, vm->RefreshCpu(0), 0, "fold_diff counts global items only (cross-zone cancellation)");
  r.Expect(!vm->NeedUpdate(0), "need_update after a refresh");
  ExpectEq(r, vm->SharedRaw(StatKind::kZone, 0, 1), 5, "zone 0 got its +5");
  vm->Mod(0, StatKind::kZone, 0, 2, 3);
  vm->Mod(0, StatKind::kNode, 1, 4, 3);
  vm->Inc(0, StatKind::kNode, 0, 4);
  ExpectEq(r, vm->RefreshCpu(0), 2, "fold_diff: one zone item, one node item");
  ExpectEq(r, vm->MaxAbsDiff(0), 0, "every slot 0 after the refresh");
  const FoldPolicyTraits& t = vm->policy_traits();
  if (t.writers_mark_dirty || t.notify_first_dirty) {
    vm->Inc(0, StatKind::kZone, 0, 0);
    r.Expect(vm->Dirty(0), "a writer did not mark the CPU dirty (writers_mark_dirty)");
    if (t.quiet_folds_dirty) {
      r.Expect(vm->QuietVmstat(0, true),
               "quiet_vmstat of a dirty CPU did not fold (quiet_folds_dirty)");
      r.Expect(!vm->Dirty(0), "dirty after the fold");
      ExpectEq(r, vm->MaxAbsDiff(0), 0, "dirty == false => every slot 0");
    }
  }
  return r.Take();
}

// ---- I10 -----------------------------------------------------------------------------------

Violations CheckVmstatHotplug(std::string_view variant) {
  Report r("I10 hotplug", variant);
  auto vm = MakeOrFail(r, variant, SmallConfig(4));
  if (vm == nullptr) return r.Take();
  WorkLedger ledger;
  vm->SetLocalWorkQueue(&ledger);
  Truth truth;
  for (int cpu = 0; cpu < 4; ++cpu) {
    vm->Mod(cpu, StatKind::kZone, 1, kZoneMlock, 2 + cpu);
    truth.Add(StatKind::kZone, 1, kZoneMlock, 2 + cpu);
  }
  vm->Shepherd([](int) { return false; }, [&](int c, uint64_t g) { ledger.Queue(c, g); });
  std::string where;
  if (!vm->CpuOffline(3).ok()) r.Fail("CpuOffline(3) failed");
  ExpectEq(r, vm->MaxAbsDiff(3), 0, "the dead CPU's slots are 0");
  ExpectEq(r, ConservationError(*vm, truth, &where), 0, "I1 after the offline fold ", where);
  ExpectEq(r, vm->Threshold(0, StatKind::kZone, 1), NormalThreshold(4 * kGiB, 3),
           "thresholds for n = 3");
  r.Expect(!vm->WorkPending(3), "work still pending on the dead CPU");
  const int64_t runs_before = vm->Counters(3).work_runs;
  r.Expect(ledger.Drain(*vm), "work items did not settle");
  ExpectEq(r, vm->Counters(3).work_runs, runs_before, "a cancelled item of the dead CPU ran");
  r.Expect(!vm->CpuOffline(3).ok(), "offlining a dead CPU succeeded");
  if (!vm->CpuOnline(3).ok()) r.Fail("CpuOnline(3) failed");
  ExpectEq(r, vm->Threshold(3, StatKind::kZone, 1), NormalThreshold(4 * kGiB, 4),
           "thresholds for n = 4");
  where.clear();
  ExpectEq(r, ConservationError(*vm, truth, &where), 0, "I1 after online ", where);
  vm->SetLocalWorkQueue(nullptr);
  return r.Take();
}

// ---- S10 -----------------------------------------------------------------------------------

Violations CheckVmstatCustomerStall(std::string_view variant) {
  Report r("S10 customer stall", variant);
  VmstatConfig c;
  c.num_cpus = 52;
  c.zones = {ZoneSpec{"Normal", 0, 64 * kGiB, 8, 20, 32}};
  c.isolated = CpuMask(52);
  c.nohz_full = CpuMask(52);
  for (int cpu = 4; cpu < 52; ++cpu) {
    c.isolated.Set(cpu);
    c.nohz_full.Set(cpu);
  }
  auto vm = MakeOrFail(r, variant, c);
  if (vm == nullptr) return r.Take();
  WorkLedger ledger;
  vm->SetLocalWorkQueue(&ledger);
  for (int k = 0; k < 69; ++k) vm->Inc(4 + k % 48, StatKind::kZone, 0, kZoneFreePages);
  // The isolated CPUs return to user with the tick stopped, then a shepherd
  // pass (which sees their ticks stopped) and the work it queued.
  for (int cpu = 4; cpu < 52; ++cpu) vm->ReturnToUser(cpu, true);
  vm->Shepherd([](int cpu) { return cpu >= 4; },
               [&](int cpu, uint64_t g) { ledger.Queue(cpu, g); });
  ledger.Drain(*vm);
  const bool snapshot_allows = vm->ReadSnapshot(StatKind::kZone, 0, kZoneFreePages) > 8 / 2;
  const bool kswapd_balanced = vm->ReadSnapshot(StatKind::kZone, 0, kZoneFreePages) > 32;
  r.Expect(snapshot_allows, "the snapshot predicate (allow_direct_reclaim, v6.5) blocks");
  r.Expect(kswapd_balanced, "kswapd's snapshot does not see the 69 pages");
  // The residue is gone where the policy promises to fold those CPUs:
  // return to user of a nohz_full tick-stopped CPU, a shepherd that folds
  // remotely, or one whose work reaches every CPU.
  const FoldPolicyTraits& t = vm->policy_traits();
  const bool promised = t.return_to_user_folds != ReturnToUserScope::kNone || t.folds_remotely ||
                        t.shepherd_work == WorkScope::kAnyCpu;
  if (promised) {
    r.Expect(vm->Read(StatKind::kZone, 0, kZoneFreePages) > 8 / 2,
             "the cheap read still misses the residue although the policy promises to fold it");
  }
  vm->SetLocalWorkQueue(nullptr);
  return r.Take();
}

// ---- S11 -----------------------------------------------------------------------------------

Violations CheckVmstatQuietGate(std::string_view variant) {
  Report r("S11 quiet gate", variant);
  auto vm = MakeOrFail(r, variant, SmallConfig(2, 100));
  if (vm == nullptr || !vm->policy_traits().quiet_folds_dirty) return r.Take();
  // Dirty a CPU and stop its tick before any shepherd queued its work.
  vm->Mod(1, StatKind::kZone, 1, kZoneMlock, 9);
  r.Expect(vm->QuietVmstat(1, true), "quiet_vmstat did not fold a dirty CPU without pending work");
  ExpectEq(r, vm->MaxAbsDiff(1), 0, "residue after quiet_vmstat");
  return r.Take();
}

// ---- the remote_fold_need_update_filter knob ---------------------------------------------

Violations CheckVmstatNeedUpdateFilter(std::string_view variant) {
  Report r("remote_fold_need_update_filter", variant);
  for (bool filter : {true, false}) {
    VmstatConfig c = SmallConfig(8, 100);
    c.remote_fold_need_update_filter = filter;
    auto vm = MakeOrFail(r, variant, c);
    if (vm == nullptr || !vm->policy_traits().folds_remotely) return r.Take();
    const char* how = filter ? " (filter on)" : " (filter off)";
    for (int cpu : {1, 4, 6}) vm->Mod(cpu, StatKind::kNode, 1, 2, cpu);
    int queued = 0;
    const int handled = vm->Shepherd([](int) { return false; }, [&](int, uint64_t) { ++queued; });
    ExpectEq(r, queued, 0, "per-CPU work queued by a remote-fold shepherd", how);
    // With the filter only the three dirty CPUs are visited; without it
    // every online CPU is folded (C's unconditional remote fold).
    ExpectEq(r, handled, filter ? 3 : 8, "CPUs the shepherd folded", how);
    for (int cpu = 0; cpu < 8; ++cpu) {
      ExpectEq(r, vm->MaxAbsDiff(cpu), 0, "residue after the remote pass", how, " cpu ", cpu);
      const bool dirty = cpu == 1 || cpu == 4 || cpu == 6;
      ExpectEq(r, vm->Counters(cpu).remote_folds, dirty ? 1 : 0,
               "remote folds that moved something", how, " cpu ", cpu);
    }
    ExpectEq(r, vm->SharedRaw(StatKind::kNode, 1, 2), 1 + 4 + 6, "folded values", how);
  }
  return r.Take();
}

// ---- random schedules ----------------------------------------------------------------------

namespace {

// `dense`: 2-4 CPUs, the odd ones isolated and nohz_full, no hotplug or pressure; 40% updates, 20%
// shepherd passes, 20% returns to user, 10% quiet_vmstat, 10% queued work: the paths where a fold
// can be skipped come up tens of thousands of times.  The queued-work step runs every queued item.
constexpr int kDenseOps[10] = {5, 25, 33, 40, 60, 60, 70, 78, 86, 86};

Violations RandomSchedules(std::string_view label, std::string_view variant, int seeds, int steps,
                           bool dense) {
  Report r(label, variant);
  FoldPolicyTraits traits;
  if (!TraitsOrFail(r, variant, &traits)) return r.Take();
  for (uint64_t seed = 1; seed <= static_cast<uint64_t>(seeds) && !r.failed(); ++seed) {
    std::mt19937_64 rng(seed);
    const int cpus = dense ? 2 + static_cast<int>(rng() % 3) : 1 + static_cast<int>(rng() % 8);
    const int fixed = seed % 3 == 0 ? static_cast<int>(1 + rng() % 20) : 0;
    VmstatConfig c = SmallConfig(cpus, fixed);
    c.overstep = seed % 5 != 4;                        // the knob, both ways
    c.remote_fold_need_update_filter = seed % 2 == 0;  // the knob, both ways
    if (dense) {
      // Half the CPUs housekeeping (even), half isolated and nohz_full (odd):
      // both sides of every scope get the decisions.
      c.isolated = CpuMask(cpus);
      c.nohz_full = CpuMask(cpus);
      for (int x = 1; x < cpus; x += 2) {
        c.isolated.Set(x);
        c.nohz_full.Set(x);
      }
    }
    auto vm = MakeOrFail(r, variant, c);
    if (vm == nullptr) break;
    const bool plain_irqsoff = vm->slot_traits().irqs_off_writers_plain;
    WorkLedger ledger;
    vm->SetLocalWorkQueue(&ledger);
    Truth truth;
    std::vector<int> online;
    for (int i = 0; i < cpus; ++i) online.push_back(i);
    bool pressure = false;
    const std::string at_seed = Cat(" (seed ", seed, ")");
    for (int step = 0; step < steps && !r.failed(); ++step) {
      const std::string at = Cat(" (seed ", seed, ", step ", step, ")");
      const int cpu = online[rng() % online.size()];
      const StatKind k = rng() % 2 ? StatKind::kZone : StatKind::kNode;
      const int inst = static_cast<int>(rng() % static_cast<uint64_t>(vm->num_instances(k)));
      const int item = static_cast<int>(rng() % static_cast<uint64_t>(vm->num_items(k)));
      const int op = dense ? kDenseOps[rng() % 10] : static_cast<int>(rng() % 100);
      const bool ts = rng() % 2 == 0;
      const int64_t before = std::abs(vm->Diff(cpu, k, inst, item));
      bool update = false;
      bool own_direction_only = false;  // __inc/__dec of an s8 slot (see I3)
      if (op < 20) {
        const int64_t d = static_cast<int64_t>(rng() % 41) - 20 + (rng() % 50 == 0 ? 512 : 0);
        vm->Mod(cpu, k, inst, item, d);
        truth.Add(k, inst, item, d);
        update = true;
      } else if (op < 30) {
        const bool up = rng() % 2 == 0;
        up ? vm->Inc(cpu, k, inst, item) : vm->Dec(cpu, k, inst, item);
        truth.Add(k, inst, item, up ? 1 : -1);
        update = true;
      } else if (op < 36) {
        const int64_t d = static_cast<int64_t>(rng() % 21) - 10;
        vm->ModIrqsOff(cpu, k, inst, item, d);
        truth.Add(k, inst, item, d);
        update = true;
      } else if (op < 44) {
        const bool up = rng() % 2 == 0;
        up ? vm->IncIrqsOff(cpu, k, inst, item) : vm->DecIrqsOff(cpu, k, inst, item);
        truth.Add(k, inst, item, up ? 1 : -1);
        update = true;
        own_direction_only = plain_irqsoff;
      } else if (op < 48) {
        vm->RefreshCpu(cpu);
        ExpectEq(r, vm->MaxAbsDiff(cpu), 0, "I6: slots after refresh_cpu_vm_stats", at);
      } else if (op < 52) {
        const int other = online[rng() % online.size()];
        const int64_t before_other = vm->MaxAbsDiff(other);
        vm->FoldCpuRemote(other);
        ExpectEq(r, vm->MaxAbsDiff(other), vm->slot_traits().remote_foldable ? 0 : before_other,
                 "slots after FoldCpuRemote (0 if remote-foldable, untouched otherwise)", at);
      } else if (op < 64) {
        // A shepherd pass with random remote tick states.
        std::vector<bool> stopped(static_cast<size_t>(cpus));
        std::vector<int64_t> dirty_before(static_cast<size_t>(cpus));
        std::vector<bool> pending_before(static_cast<size_t>(cpus));
        for (int x = 0; x < cpus; ++x) {
          stopped[static_cast<size_t>(x)] = rng() % 2 == 0;
          dirty_before[static_cast<size_t>(x)] = vm->MaxAbsDiff(x);
          pending_before[static_cast<size_t>(x)] = vm->WorkPending(x);
        }
        std::vector<bool> queued(static_cast<size_t>(cpus), false);
        vm->Shepherd([&](int x) { return static_cast<bool>(stopped[static_cast<size_t>(x)]); },
                     [&](int x, uint64_t g) {
                       queued[static_cast<size_t>(x)] = true;
                       ledger.Queue(x, g);
                     });
        for (int x : online) {
          const size_t i = static_cast<size_t>(x);
          const bool in_scope = InShepherdScope(traits.shepherd_work, *vm, x, stopped[i]);
          if (queued[i] && !in_scope) {
            r.Fail("I8: the shepherd queued work on cpu ", x, " outside its scope (",
                   ScopeName(traits.shepherd_work), ")", at);
          }
          if (in_scope && dirty_before[i] != 0 && !pending_before[i] && !queued[i]) {
            r.Fail("I9: the shepherd did not queue work on dirty cpu ", x, " within its scope (",
                   ScopeName(traits.shepherd_work), ")", at);
          }
          if (traits.folds_remotely) {
            ExpectEq(r, vm->MaxAbsDiff(x), 0, "I9: residue after a remote-fold shepherd pass", at,
                     " cpu ", x);
          }
        }
      } else if (op < 74) {
        if (dense) {
          // Every queued item runs (a fold's re-queue too): pending bits
          // clear often, so the shepherd decides on dirty CPUs often.
          r.Expect(ledger.Drain(*vm), "work items never settled", at);
        } else if (ledger.size() > 0) {
          ledger.RunAt(*vm, rng() % ledger.size());
        }
      } else if (op < 82) {
        vm->QuietVmstat(cpu, ts);
        if (traits.quiet_folds_dirty)
          ExpectEq(r, vm->MaxAbsDiff(cpu), 0, "S11: residue after quiet_vmstat", at);
      } else if (op < 90) {
        vm->ReturnToUser(cpu, ts);
        if (InReturnToUserScope(traits.return_to_user_folds, *vm, cpu, ts)) {
          ExpectEq(r, vm->MaxAbsDiff(cpu), 0, "I9: residue after return to user", at);
          if (traits.return_to_user_cancels_work)
            r.Expect(!vm->WorkPending(cpu), "I9: work pending after return to user", at);
        }
      } else if (op < 94) {
        if (online.size() > 1) {
          if (!vm->CpuOffline(cpu).ok()) r.Fail("CpuOffline(", cpu, ") failed", at);
          online.erase(std::find(online.begin(), online.end(), cpu));
          ExpectEq(r, vm->MaxAbsDiff(cpu), 0, "I10: the dead CPU's slots", at);
          r.Expect(!vm->WorkPending(cpu), "I10: work pending on the dead CPU", at);
          if (fixed == 0 && !pressure) {
            ExpectEq(r, vm->Threshold(online[0], StatKind::kZone, 1),
                     NormalThreshold(4 * kGiB, static_cast<int>(online.size())),
                     "I10: thresholds for the new n", at);
          }
        }
      } else if (op < 97) {
        for (int x = 0; x < cpus; ++x) {
          if (std::find(online.begin(), online.end(), x) == online.end()) {
            if (!vm->CpuOnline(x).ok()) r.Fail("CpuOnline(", x, ") failed", at);
            online.push_back(x);
            break;
          }
        }
      } else {
        const bool on = rng() % 2 == 0;
        if (!vm->SetPressure(static_cast<int>(rng() % 2), on).ok())
          r.Fail("SetPressure failed", at);
        pressure = pressure || on;
      }
      std::string where;
      if (ConservationError(*vm, truth, &where) != 0) r.Fail("I1: ", where, at);
      if (update) {
        // I3: |d| <= t after an update.  Exception (kernel behaviour): an
        // s8 slot's __inc/__dec test only the direction they move in, so
        // after a threshold drop a slot beyond -t that is incremented stays
        // beyond the new t -- but never grows past its old magnitude.
        const int t = vm->Threshold(cpu, k, inst);
        const int64_t after = std::abs(vm->Diff(cpu, k, inst, item));
        if (!own_direction_only) {
          r.Expect(after <= t, "I3: |d| ", after, " > t ", t, " after an update", at);
        } else {
          r.Expect(after <= std::max<int64_t>(t, before), "I3: |d| grew past max(t, before)", at);
        }
        r.Expect(after <= kThresholdCap, "I3: |d| beyond 125", at);
      }
      // I6 (dirty-flag policies): a clean flag means empty slots.
      if (traits.writers_mark_dirty || traits.notify_first_dirty) {
        for (int x : online) {
          if (!vm->Dirty(x) && vm->MaxAbsDiff(x) != 0)
            r.Fail("I6: cpu ", x, " has residue but its dirty flag is clear", at);
        }
      }
      // I9 (folds_kernel_bound_cpus): every dirty CPU has a way to be folded
      // without returning to user: remote folds, its pending work, or the
      // shepherd's scope.
      if (traits.folds_kernel_bound_cpus && vm->IsOnline(cpu) && vm->MaxAbsDiff(cpu) != 0) {
        r.Expect(traits.folds_remotely || vm->WorkPending(cpu) ||
                     InShepherdScope(traits.shepherd_work, *vm, cpu, /*tick_stopped=*/false),
                 "I9: dirty cpu ", cpu, " has no pending work and is outside the shepherd's scope",
                 at);
      }
    }
    // I4 on every zone item.
    for (int z = 0; z < vm->num_zones(); ++z) {
      int64_t bound = 0;
      for (int x : online) bound += vm->Threshold(x, StatKind::kZone, z);
      for (int it = 0; it < kMaxZoneItems; ++it) {
        r.Expect(
            std::abs(vm->SharedRaw(StatKind::kZone, z, it) - truth.Get(StatKind::kZone, z, it)) <=
                std::max<int64_t>(bound, 125 * cpus),
            "I4: |G - T| beyond the sum of thresholds, zone ", z, " item ", it, at_seed);
      }
    }
    // I9: every queued or armed item runs; afterwards no pending bit is left
    // without an item that would clear it.
    r.Expect(ledger.Drain(*vm), "work items never settled", at_seed);
    for (int x = 0; x < cpus; ++x)
      r.Expect(!vm->WorkPending(x), "I9: pending bit of cpu ", x, " stranded", at_seed);
    std::string where;
    if (ConservationError(*vm, truth, &where) != 0)
      r.Fail("I1 after running every item: ", where, at_seed);
    vm->SetLocalWorkQueue(nullptr);
  }
  return r.Take();
}

}  // namespace

Violations CheckVmstatRandomSchedules(std::string_view variant, int seeds, int steps) {
  return RandomSchedules("random schedules", variant, seeds, steps, /*dense=*/false);
}

Violations CheckVmstatDenseRandomSchedules(std::string_view variant, int seeds, int steps) {
  return RandomSchedules("dense random schedules", variant, seeds, steps, /*dense=*/true);
}

// ---- the suite --------------------------------------------------------------------------------

int VmstatApiConformanceAnchor() { return 0; }

// A binary may link the kit without instantiating every suite.
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(VmstatApiConformance);

namespace {

TEST_P(VmstatApiConformance, S1_I11_Thresholds) { ISOLATION_VMSTAT_RUN_CHECK(); }
TEST_P(VmstatApiConformance, S2_Overstep) { ISOLATION_VMSTAT_RUN_CHECK(); }
TEST_P(VmstatApiConformance, S3_ModPath) { ISOLATION_VMSTAT_RUN_CHECK(); }
TEST_P(VmstatApiConformance, I5_FoldCadence) { ISOLATION_VMSTAT_RUN_CHECK(); }
TEST_P(VmstatApiConformance, S4_I3_ThresholdDrop) { ISOLATION_VMSTAT_RUN_CHECK(); }
TEST_P(VmstatApiConformance, S5_I4_DriftDemo) { ISOLATION_VMSTAT_RUN_CHECK(); }
TEST_P(VmstatApiConformance, I6_Refresh) { ISOLATION_VMSTAT_RUN_CHECK(); }
TEST_P(VmstatApiConformance, I10_Hotplug) { ISOLATION_VMSTAT_RUN_CHECK(); }
TEST_P(VmstatApiConformance, S10_CustomerStall) { ISOLATION_VMSTAT_RUN_CHECK(); }
TEST_P(VmstatApiConformance, S11_QuietGate) { ISOLATION_VMSTAT_RUN_CHECK(); }
TEST_P(VmstatApiConformance, RemoteFoldNeedUpdateFilterKnob) { ISOLATION_VMSTAT_RUN_CHECK(); }
TEST_P(VmstatApiConformance, I1_I3_I4_I6_I8_I9_I10_RandomSchedules) {
  ISOLATION_VMSTAT_RUN_CHECK();
}
TEST_P(VmstatApiConformance, I1_I8_I9_DenseRandomSchedules) { ISOLATION_VMSTAT_RUN_CHECK(); }
TEST_P(VmstatApiConformance, I7_I2_RemoteFoldInterleavings) { ISOLATION_VMSTAT_RUN_CHECK(); }
TEST_P(VmstatApiConformance, I9_I2_OwnerShepherdInterleavings) { ISOLATION_VMSTAT_RUN_CHECK(); }
TEST_P(VmstatApiConformance, I1_WriterFrontEndInLockStepWithVmstat) {
  ISOLATION_VMSTAT_RUN_CHECK();
}

}  // namespace
}  // namespace isolation::testing
