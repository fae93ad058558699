// SPDX-License-Identifier: GPL-2.0-or-later
// Entry-point tests of the vmstat counters that are not the conformance kit's
// (test/vmstat/vmstat_conformance_test.cc runs the kit on every built-in):
// the threshold formulas (S1 vectors, I11 at small low-min gaps), the two
// registries and the compatibility names, and the documented behaviour of
// each built-in fold policy where the policies differ (I8's exact queue
// lists, I9 per policy, S10 and S11 outcomes, B.local's own work).

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "isolation/core/interleave.h"
#include "isolation/testing/status_matchers.h"
#include "isolation/vmstat/vmstat.h"

namespace isolation::vmstat {
namespace {

using ::testing::HasSubstr;

constexpr int64_t kGiB = 262144;  // 4 KiB pages
constexpr int64_t kMiB = 256;

VmstatConfig SmallConfig(const std::string& policy, int cpus, int fixed_threshold = 0) {
  VmstatConfig c;
  c.fold_policy = policy;
  c.num_cpus = cpus;
  c.num_nodes = 2;
  c.zones = {ZoneSpec{"DMA32", 0, 1 * kGiB, 100, 140, 180},
             ZoneSpec{"Normal", 0, 4 * kGiB, 8192, 10240, 12288},
             ZoneSpec{"Normal1", 1, 2 * kGiB, 4096, 5120, 6144}};
  c.zone_items = kMaxZoneItems;
  c.node_items = kMaxNodeItems;
  c.fixed_threshold = fixed_threshold;
  c.isolated = CpuMask(cpus);
  c.nohz_full = CpuMask(cpus);
  for (int cpu = 1; cpu < cpus; ++cpu) {
    c.isolated.Set(cpu);
    c.nohz_full.Set(cpu);
  }
  return c;
}

std::unique_ptr<Vmstat> Make(const VmstatConfig& c) {
  auto vm = Vmstat::Create(c).value();
  return vm;
}

// A LocalWorkQueue test double: records what was armed and cancelled (the
// tests run the items themselves).
struct RecordingLocalQueue : LocalWorkQueue {
  void ArmLocalWork(int cpu, uint64_t generation) override { armed.push_back({cpu, generation}); }
  void CancelLocalWork(int cpu) override { cancelled.push_back(cpu); }
  std::vector<std::pair<int, uint64_t>> armed;
  std::vector<int> cancelled;
};

// The built-in fold policies whose behaviour these tests pin down.
class BuiltInPolicy : public ::testing::TestWithParam<std::string> {};

std::string ParamName(const ::testing::TestParamInfo<std::string>& info) {
  std::string n = info.param;
  for (char& ch : n) {
    if (ch == '-' || ch == '.') ch = '_';  // "B.local" -> B_local (gtest names)
  }
  return n;
}

// ---------------------------------------------------------------------------
// S1 / I11: thresholds.
// ---------------------------------------------------------------------------

// Independent reference of the kernel's integer formulas (loop-based fls).
int RefFls(int64_t x) {
  int r = 0;
  while (x > 0) {
    ++r;
    x >>= 1;
  }
  return r;
}
int RefNormal(int64_t pages, int n) {
  const int64_t mem = pages >> 15;  // 128 MiB in 4 KiB pages
  return static_cast<int>(std::min<int64_t>(125, 2 * RefFls(n) * (1 + RefFls(mem))));
}

TEST(VmstatThresholds, S1_ThresholdVectors) {
  // Spec vectors (4 KiB pages).
  EXPECT_EQ(NormalThreshold(1 * kGiB, 1), 10);
  EXPECT_EQ(NormalThreshold(127 * kMiB, 2), 4);
  EXPECT_EQ(NormalThreshold(4 * kGiB, 4), 42);
  EXPECT_EQ(NormalThreshold(16 * kGiB, 16), 90);
  EXPECT_EQ(NormalThreshold(16 * kGiB, 64), 125);
  EXPECT_EQ(NormalThreshold(16 * kMiB, 64), 14);
  // Full table n x size against the reference.
  for (int n : {1, 2, 4, 8, 16, 64, 512, 1024}) {
    for (int64_t pages : {16 * kMiB, 127 * kMiB, 1 * kGiB, 4 * kGiB, 16 * kGiB, 64 * kGiB}) {
      EXPECT_EQ(NormalThreshold(pages, n), RefNormal(pages, n))
          << n << " cpus, " << pages << " pages";
      EXPECT_LE(NormalThreshold(pages, n), kThresholdCap);
    }
  }
  // Pressure: (low - min) / n with the max(1, ...) floor and the 125 cap.
  EXPECT_EQ(PressureThreshold(20, 8, 1), 12);
  EXPECT_EQ(PressureThreshold(20, 8, 4), 3);
  EXPECT_EQ(PressureThreshold(20, 8, 64), 1);       // floor
  EXPECT_EQ(PressureThreshold(100000, 0, 2), 125);  // cap
  EXPECT_EQ(Fls(0), 0);
  EXPECT_EQ(Fls(1), 1);
  EXPECT_EQ(Fls(128), 8);
}

TEST(VmstatThresholds, I11_DriftMarkSetAndNeverCleared) {
  VmstatConfig c = SmallConfig("A1", 64);
  c.zones = {ZoneSpec{"Normal", 0, 16 * kGiB, 8, 20, 32}};
  c.num_nodes = 1;
  auto vm = Make(c);
  // n * t = 64 * 125 > 12 -> high + n * t.
  EXPECT_EQ(vm->DriftMark(0), 32 + 64 * 125);
  // Shrink to one CPU: t = 2*1*(1+fls(128)) = 18, 18 > 12 still -> updated.
  for (int cpu = 63; cpu >= 1; --cpu) ISOLATION_ASSERT_OK(vm->CpuOffline(cpu));
  EXPECT_EQ(vm->Threshold(0, StatKind::kZone, 0), 18);
  EXPECT_EQ(vm->DriftMark(0), 32 + 18);
  // A zone whose n * t never exceeds low - min keeps mark 0 ...
  VmstatConfig c2 = c;
  c2.num_cpus = 1;
  c2.isolated = CpuMask(1);
  c2.nohz_full = CpuMask(1);
  c2.zones = {ZoneSpec{"Normal", 0, 16 * kGiB, 0, 1000, 2000}};
  auto vm2 = Make(c2);
  EXPECT_EQ(vm2->DriftMark(0), 0);
  // ... and a mark set at large n stays stale when n shrinks below the bound.
  VmstatConfig c3 = c;
  c3.zones = {ZoneSpec{"Normal", 0, 16 * kGiB, 0, 1000, 2000}};
  auto vm3 = Make(c3);
  EXPECT_EQ(vm3->DriftMark(0), 2000 + 64 * 125);
  for (int cpu = 63; cpu >= 1; --cpu) ISOLATION_ASSERT_OK(vm3->CpuOffline(cpu));
  EXPECT_LE(1 * vm3->Threshold(0, StatKind::kZone, 0), 1000);
  // The mark keeps the value of the last refresh where n * t > low - min.
  int64_t expected = 2000 + 64 * 125;
  for (int n = 63; n >= 1; --n) {
    if (n * RefNormal(16 * kGiB, n) > 1000) expected = 2000 + n * RefNormal(16 * kGiB, n);
  }
  EXPECT_LT(expected, 2000 + 64 * 125);
  EXPECT_EQ(vm3->DriftMark(0), expected);  // stale, never cleared
}

// ---------------------------------------------------------------------------
// Built-in policies: I8, I9, S10, S11, B.local.
// ---------------------------------------------------------------------------

TEST_P(BuiltInPolicy, I8_ShepherdNeverWorksOnIsolatedCpus) {
  const std::string s = GetParam();
  auto vm = Make(SmallConfig(s, 8, 100));
  for (int cpu = 0; cpu < 8; ++cpu) vm->Mod(cpu, StatKind::kZone, 1, kZoneMlock, 3);
  std::vector<int> queued;
  // Isolated CPUs 1-7 have their tick stopped (nohz_full, one task).
  vm->Shepherd([](int cpu) { return cpu != 0; }, [&](int cpu, uint64_t) { queued.push_back(cpu); });
  int on_isolated = 0;
  for (int cpu : queued) on_isolated += vm->IsIsolated(cpu) ? 1 : 0;
  if (s == "A0") {
    EXPECT_EQ(on_isolated, 7);  // >= 1 per dirty period
  } else if (s == "A1" || s == "B") {
    EXPECT_EQ(on_isolated, 0);
    EXPECT_EQ(queued, std::vector<int>({0}));
  } else if (s == "B.local") {
    EXPECT_EQ(on_isolated, 0);  // the shepherd ignores nohz_full CPUs
    EXPECT_EQ(queued, std::vector<int>({0}));
    // The only work an isolated CPU gets is the one it armed itself.
    for (int cpu = 1; cpu < 8; ++cpu)
      EXPECT_EQ(vm->Counters(cpu).local_work_arms, 1) << "cpu " << cpu;
    EXPECT_EQ(vm->Counters(0).local_work_arms, 0);
  } else {
    EXPECT_TRUE(queued.empty());  // C/D never queue work anywhere
    for (int cpu = 0; cpu < 8; ++cpu) EXPECT_EQ(vm->MaxAbsDiff(cpu), 0);  // folded remotely
  }
}

TEST_P(BuiltInPolicy, I9_Liveness) {
  const std::string s = GetParam();
  auto vm = Make(SmallConfig(s, 4, 100));
  vm->Mod(2, StatKind::kNode, 0, kNodeWriteback, -4);
  if (s == "A0") {
    std::vector<std::pair<int, uint64_t>> q;
    vm->Shepherd([](int) { return false; }, [&](int c, uint64_t g) { q.push_back({c, g}); });
    ASSERT_EQ(q.size(), 1u);
    EXPECT_TRUE(vm->RunCpuWork(q[0].first, q[0].second));  // folded: re-arms
    EXPECT_EQ(vm->MaxAbsDiff(2), 0);
    EXPECT_FALSE(vm->RunCpuWork(q[0].first, q[0].second));  // nothing moved: dies
    EXPECT_FALSE(vm->WorkPending(2));
    EXPECT_EQ(vm->Counters(2).work_runs, 2);
  } else if (s == "A1") {
    std::vector<int> q;
    vm->Shepherd([](int) { return false; }, [&](int c, uint64_t) { q.push_back(c); });
    EXPECT_TRUE(q.empty());
    EXPECT_FALSE(vm->ReturnToUser(2, true));
    EXPECT_FALSE(vm->QuietVmstat(2, true));  // pending-work gate
    EXPECT_EQ(vm->MaxAbsDiff(2), 4);         // residue stays
  } else if (s == "B") {
    EXPECT_FALSE(vm->ReturnToUser(2, false));  // tick running: nothing
    EXPECT_TRUE(vm->ReturnToUser(2, true));
    EXPECT_EQ(vm->MaxAbsDiff(2), 0);
    EXPECT_EQ(vm->Counters(2).return_to_user_folds, 1);
  } else if (s == "B.local") {
    // The write armed CPU 2's own work; return to user folds (whatever the
    // tick state) and cancels it.  A CPU that stays in the kernel is folded
    // by that work instead (the fallback).
    EXPECT_TRUE(vm->WorkPending(2));
    EXPECT_TRUE(vm->ReturnToUser(2, false));
    EXPECT_EQ(vm->MaxAbsDiff(2), 0);
    EXPECT_FALSE(vm->WorkPending(2));
    EXPECT_EQ(vm->Counters(2).return_to_user_folds, 1);
    RecordingLocalQueue q;
    vm->SetLocalWorkQueue(&q);
    vm->Mod(2, StatKind::kNode, 0, kNodeWriteback, -4);
    ASSERT_EQ(q.armed.size(), 1u);
    EXPECT_EQ(q.armed[0].first, 2);
    EXPECT_TRUE(vm->RunCpuWork(2, q.armed[0].second));  // folded: re-arms (stays pending)
    EXPECT_EQ(vm->MaxAbsDiff(2), 0);
    EXPECT_FALSE(vm->RunCpuWork(2, q.armed[0].second));  // nothing moved: dies
    EXPECT_FALSE(vm->WorkPending(2));
    EXPECT_EQ(vm->Counters(2).work_runs, 2);
    vm->SetLocalWorkQueue(nullptr);
  } else {
    vm->Shepherd([](int) { return true; }, [](int, uint64_t) {});
    EXPECT_EQ(vm->MaxAbsDiff(2), 0);
    EXPECT_EQ(vm->Counters(2).remote_folds, 1);
  }
}

// S10: the customer stall.  52 CPUs, 48 nohz_full; 69 free pages in
// differentials of isolated CPUs, shared value 0; watermarks 8/20/32.
TEST_P(BuiltInPolicy, S10_CustomerStallReplica) {
  const std::string s = GetParam();
  VmstatConfig c;
  c.fold_policy = s;
  c.num_cpus = 52;
  c.zones = {ZoneSpec{"Normal", 0, 64 * kGiB, 8, 20, 32}};
  c.isolated = CpuMask(52);
  c.nohz_full = CpuMask(52);
  for (int cpu = 4; cpu < 52; ++cpu) {
    c.isolated.Set(cpu);
    c.nohz_full.Set(cpu);
  }
  auto vm = Make(c);
  for (int k = 0; k < 69; ++k) vm->Inc(4 + k % 48, StatKind::kZone, 0, kZoneFreePages);
  // The isolated CPUs return to user with the tick stopped, then a shepherd pass.
  for (int cpu = 4; cpu < 52; ++cpu) vm->ReturnToUser(cpu, true);
  std::vector<std::pair<int, uint64_t>> q;
  vm->Shepherd([&](int cpu) { return cpu >= 4; },
               [&](int cpu, uint64_t g) {
                 q.push_back({cpu, g});
               });
  for (auto [cpu, g] : q) vm->RunCpuWork(cpu, g);
  const bool cheap_allows =
      vm->Read(StatKind::kZone, 0, kZoneFreePages) > 8 / 2;  // allow_direct_reclaim
  const bool snapshot_allows = vm->ReadSnapshot(StatKind::kZone, 0, kZoneFreePages) > 8 / 2;
  const bool kswapd_balanced = vm->ReadSnapshot(StatKind::kZone, 0, kZoneFreePages) > 32;
  EXPECT_TRUE(snapshot_allows);
  EXPECT_TRUE(kswapd_balanced);
  if (s == "A1") {
    EXPECT_FALSE(cheap_allows)
        << "A1 keeps the residue: cheap readers stall (hence the v6.5 snapshot fix)";
  } else {
    EXPECT_TRUE(cheap_allows) << s << " removes the residue";
  }
}

// S11: dirty a CPU and stop its tick before the shepherd queued its work.
TEST_P(BuiltInPolicy, S11_QuietGateRace) {
  const std::string s = GetParam();
  auto vm = Make(SmallConfig(s, 2, 100));
  vm->Mod(1, StatKind::kZone, 1, kZoneMlock, 9);
  const bool folded = vm->QuietVmstat(1, true);
  if (s == "A0" || s == "A1") {
    EXPECT_FALSE(folded);
    EXPECT_EQ(vm->MaxAbsDiff(1), 9);  // the pending-work gate returns early
  } else if (s == "B" || s == "B.local") {
    EXPECT_TRUE(folded);
    EXPECT_EQ(vm->MaxAbsDiff(1), 0);  // the dirty gate folds
  } else {
    EXPECT_FALSE(folded);  // C/D rely on the remote fold
  }
}

// B.local (docs/vmstat.md; I8, I9, I10): a nohz_full CPU arms its own work on the
// first clean->dirty transition only (not while pending, not once offline);
// return to user folds and cancels it; idle entry (quiet_vmstat) only folds;
// the shepherd never queues on it.  Fails if every write armed, if the arm
// ignored the pending bit, if return to user kept the work, or if idle entry
// cancelled it.
TEST(VmstatWork, BLocal_ArmOnFirstDirtyCancelOnReturnToUser) {
  auto vm = Make(SmallConfig("B.local", 4, 100));
  RecordingLocalQueue q;
  vm->SetLocalWorkQueue(&q);
  // CPU 0 is not nohz_full: the shepherd's business, never armed locally.
  vm->Mod(0, StatKind::kZone, 1, kZoneMlock, 3);
  EXPECT_TRUE(q.armed.empty());
  // First dirty episode on CPU 2: one arm for many writes.
  for (int k = 0; k < 5; ++k) vm->Mod(2, StatKind::kZone, 1, kZoneMlock, 1);
  ASSERT_EQ(q.armed.size(), 1u);
  EXPECT_EQ(q.armed[0].first, 2);
  EXPECT_TRUE(vm->Dirty(2));
  std::vector<int> shepherd_queued;
  vm->Shepherd([](int) { return false; },
               [&](int cpu, uint64_t) { shepherd_queued.push_back(cpu); });
  EXPECT_EQ(shepherd_queued, std::vector<int>({0}));
  // Idle entry folds but keeps the work armed.
  EXPECT_TRUE(vm->QuietVmstat(2, true));
  EXPECT_EQ(vm->MaxAbsDiff(2), 0);
  EXPECT_TRUE(vm->WorkPending(2));
  EXPECT_TRUE(q.cancelled.empty());
  // Dirty again while the work is pending: no second arm.
  vm->Mod(2, StatKind::kZone, 1, kZoneMlock, 1);
  EXPECT_EQ(q.armed.size(), 1u);
  // Return to user: fold and cancel; the armed item is now stale.
  EXPECT_TRUE(vm->ReturnToUser(2, false));
  EXPECT_EQ(vm->MaxAbsDiff(2), 0);
  EXPECT_FALSE(vm->WorkPending(2));
  EXPECT_EQ(q.cancelled, std::vector<int>({2}));
  EXPECT_FALSE(vm->RunCpuWork(2, q.armed[0].second));
  EXPECT_EQ(vm->Counters(2).work_runs, 0);
  // A clean return to user with nothing pending does nothing.
  EXPECT_FALSE(vm->ReturnToUser(2, true));
  EXPECT_EQ(q.cancelled.size(), 1u);
  // Next episode arms again; going offline cancels it and nothing re-arms.
  vm->Mod(2, StatKind::kNode, 0, 3, 2);
  ASSERT_EQ(q.armed.size(), 2u);
  EXPECT_EQ(vm->Counters(2).local_work_arms, 2);
  ISOLATION_ASSERT_OK(vm->CpuOffline(2));
  EXPECT_EQ(q.cancelled, std::vector<int>({2, 2}));
  EXPECT_FALSE(vm->WorkPending(2));
  EXPECT_FALSE(vm->RunCpuWork(2, q.armed[1].second));
  EXPECT_EQ(vm->Counters(2).work_runs, 0);
  vm->SetLocalWorkQueue(nullptr);
}

// ---- the inline writer front end (Vmstat::Writer) ---------------------------------------

TEST(VmstatWriter, InlineFastPathForEveryLibrarySlotButTheNegativeControl) {
  for (const auto& [policy, slot, inline_path] :
       std::vector<std::tuple<std::string, std::string, bool>>{{"A1", "s8-owner", true},
                                                               {"C", "s32-atomic", true},
                                                               {"D", "s64-watermark", true},
                                                               {"C.xadd", "s32-xadd", true},
                                                               {"C.addo", "s32-scaled", true},
                                                               {"C-plain", "s32-plain", false}}) {
    VmstatConfig c = SmallConfig(policy, 2);
    c.slot = slot;
    auto vm = Make(c);
    ISOLATION_ASSERT_OK_AND_ASSIGN(auto w, vm->Writer(1));
    EXPECT_EQ(w.inline_fast_path(), inline_path) << policy << ":" << slot;
    EXPECT_EQ(&w.vm(), vm.get());
    // WithSlotForm hands the form-specialised writer of the same CPU.
    EXPECT_EQ(w.WithSlotForm([](auto sw) { return sw.cpu(); }), 1) << policy;
  }
}

// Mod(+2^52) repeated wrapped the global counter to a negative value (read
// as 0) after 2^11 calls; the shared and global counters saturate at the
// int64 bounds instead and saturated_adds() says so.  Every slot (D's
// running sum wraps modulo 2^64 and its differential stays exact), through
// Mod and through the writer, both directions.
TEST(VmstatCounters, HugeModsSaturateInsteadOfWrapping) {
  constexpr int64_t kHuge = int64_t{1} << 52;
  for (const auto& [policy, slot] :
       std::vector<std::pair<std::string, std::string>>{{"A1", "s8-owner"},
                                                        {"C", "s32-atomic"},
                                                        {"D", "s64-watermark"},
                                                        {"C.xadd", "s32-xadd"},
                                                        {"C.addo", "s32-scaled"},
                                                        {"C-plain", "s32-plain"}}) {
    for (const int64_t sign : {int64_t{1}, int64_t{-1}}) {
      for (const bool through_writer : {false, true}) {
        SCOPED_TRACE(policy + ":" + slot + (sign > 0 ? " +" : " -") +
                     (through_writer ? " writer" : " Mod"));
        VmstatConfig c = SmallConfig(policy, 2);
        c.slot = slot;
        auto vm = Make(c);
        ISOLATION_ASSERT_OK_AND_ASSIGN(auto w, vm->Writer(0));
        for (int i = 0; i < 4096; ++i) {
          through_writer ? w.Mod(StatKind::kZone, 1, kZoneMlock, sign * kHuge)
                         : vm->Mod(0, StatKind::kZone, 1, kZoneMlock, sign * kHuge);
        }
        const int64_t bound = sign > 0 ? INT64_MAX : INT64_MIN;
        EXPECT_EQ(vm->GlobalRaw(StatKind::kZone, kZoneMlock), bound);
        EXPECT_EQ(vm->SharedRaw(StatKind::kZone, 1, kZoneMlock), bound);
        EXPECT_EQ(vm->ReadGlobal(StatKind::kZone, kZoneMlock), sign > 0 ? INT64_MAX : 0);
        EXPECT_GT(vm->saturated_adds(), 0);
        EXPECT_LE(std::abs(vm->Diff(0, StatKind::kZone, 1, kZoneMlock)),
                  vm->Threshold(0, StatKind::kZone, 1));
        // Saturation is not sticky: the way back is ordinary arithmetic.
        vm->Mod(0, StatKind::kZone, 1, kZoneMlock, -sign * kHuge);
        EXPECT_EQ(vm->GlobalRaw(StatKind::kZone, kZoneMlock), bound - sign * kHuge);
      }
    }
  }
  // Counts far from the bounds never saturate.
  auto vm = Make(SmallConfig("B", 2));
  for (int i = 0; i < 1000; ++i) vm->Mod(0, StatKind::kZone, 1, kZoneMlock, kHuge);
  EXPECT_EQ(vm->GlobalRaw(StatKind::kZone, kZoneMlock), 1000 * kHuge);
  EXPECT_EQ(vm->saturated_adds(), 0);
}

// The fast path below the threshold stores the sum and nothing else; the
// update that passes it folds out of line exactly as Vmstat::Mod does.
TEST(VmstatWriter, BelowThresholdInlineAboveFoldsLikeMod) {
  for (const char* policy : {"A1", "C", "D", "C.xadd", "C.addo"}) {
    auto vm = Make(SmallConfig(policy, 2, 10));
    VmstatWriter w = vm->Writer(1).value();
    w.Mod(StatKind::kZone, 1, kZoneMlock, 7);
    w.Mod(StatKind::kZone, 1, kZoneMlock, 3);  // |10| <= t: stays per-CPU
    EXPECT_EQ(vm->Diff(1, StatKind::kZone, 1, kZoneMlock), 10) << policy;
    EXPECT_EQ(vm->SharedRaw(StatKind::kZone, 1, kZoneMlock), 0) << policy;
    EXPECT_EQ(vm->Counters(1).threshold_folds, 0) << policy;
    w.Mod(StatKind::kZone, 1, kZoneMlock, 1);  // 11 > t: all of it to the shared side
    EXPECT_EQ(vm->Diff(1, StatKind::kZone, 1, kZoneMlock), 0) << policy;
    EXPECT_EQ(vm->SharedRaw(StatKind::kZone, 1, kZoneMlock), 11) << policy;
    EXPECT_EQ(vm->GlobalRaw(StatKind::kZone, kZoneMlock), 11) << policy;
    EXPECT_EQ(vm->Counters(1).threshold_folds, 1) << policy;
    // Inc past t: the overstep leaves the slot at -t/2.
    for (int k = 0; k < 11; ++k) w.Inc(StatKind::kNode, 1, 2);
    EXPECT_EQ(vm->Diff(1, StatKind::kNode, 1, 2), -5) << policy;
    EXPECT_EQ(vm->SharedRaw(StatKind::kNode, 1, 2), 16) << policy;
    w.Dec(StatKind::kNode, 1, 2);
    EXPECT_EQ(vm->Diff(1, StatKind::kNode, 1, 2), -6) << policy;
    EXPECT_EQ(vm->Diff(0, StatKind::kNode, 1, 2), 0) << policy;  // only its own CPU
  }
}

// ---- s32-scaled (C.addo): the unit arithmetic ----------------------------------------

// Every threshold, every differential it holds, every delta the fast path
// takes: the locked add overflows exactly when the kernel's |x + delta| > t
// test folds, and the word -- wrapped or not -- decodes to x + delta.
TEST(VmstatScaledSlot, OverflowIsTheThresholdTestAndWrappedWordsDecode) {
  int64_t checked = 0;
  for (int t = 1; t <= kThresholdCap; ++t) {
    const uint32_t k = internal::ScaledUnit(t);
    ASSERT_TRUE(internal::ScaledUnitIsExact(t)) << t;
    ASSERT_EQ(internal::ScaledThresholdOf(k), t);
    for (int64_t x = -t; x <= t; ++x) {
      ASSERT_EQ(internal::ScaledDecode(internal::ScaledEncode(x, k)), x) << "t " << t;
      for (int64_t d = -t; d <= t; ++d) {
        std::atomic<uint64_t> w{internal::ScaledEncode(x, k)};
        const bool overflowed = internal::ScaledAddOverflows(w, d * static_cast<int64_t>(k));
        ASSERT_EQ(overflowed, std::abs(x + d) > t) << "t " << t << " x " << x << " d " << d;
        ASSERT_EQ(internal::ScaledDecode(w.load()), x + d) << "t " << t << " x " << x << " d " << d;
        ASSERT_EQ(static_cast<uint32_t>(w.load()), k) << "the add left the unit";
        ++checked;
      }
    }
  }
  EXPECT_EQ(checked, 2667125);  // sum over t = 1..125 of (2t + 1)^2
  // t = 0 has no unit (every update folds, through the CAS path).
  EXPECT_EQ(internal::ScaledUnit(0), 0u);
  EXPECT_EQ(internal::ScaledDecode(0), 0);
}

// A threshold drop leaves every item that the new threshold does not hold
// in its old unit until its own next update folds it (the kernel's
// behaviour, S4), also when another item of the same zone is updated
// first; a rise rescales the zone and the fast path takes over again.
TEST(VmstatScaledSlot, ThresholdDropFoldsEachItemOnItsOwnTouch) {
  VmstatConfig c;
  c.fold_policy = "C.addo";
  c.num_cpus = 64;
  c.zones = {ZoneSpec{"Normal", 0, 16 * kGiB, 8, 20, 32}};
  auto vm = Make(c);
  ASSERT_EQ(vm->Threshold(0, StatKind::kZone, 0), 125);
  VmstatWriter w = vm->Writer(0).value();
  w.Mod(StatKind::kZone, 0, 1, 100);
  w.Mod(StatKind::kZone, 0, 2, 100);
  w.Mod(StatKind::kZone, 0, 3, -2);
  ISOLATION_ASSERT_OK(vm->SetPressure(0, true));
  ASSERT_EQ(vm->Threshold(0, StatKind::kZone, 0), 1);
  w.Inc(StatKind::kZone, 0, 1);  // item 1 folds 101
  EXPECT_EQ(vm->Diff(0, StatKind::kZone, 0, 1), 0);
  EXPECT_EQ(vm->SharedRaw(StatKind::kZone, 0, 1), 101);
  EXPECT_EQ(vm->Diff(0, StatKind::kZone, 0, 2), 100) << "I3: an untouched item of the zone stays";
  EXPECT_EQ(vm->Diff(0, StatKind::kZone, 0, 3), -2);
  EXPECT_EQ(vm->SharedRaw(StatKind::kZone, 0, 2), 0);
  vm->FoldCpuRemote(0);  // a remote fold takes the old-unit items too
  EXPECT_EQ(vm->SharedRaw(StatKind::kZone, 0, 2), 100);
  EXPECT_EQ(vm->SharedRaw(StatKind::kZone, 0, 3), -2);
  w.Inc(StatKind::kZone, 0, 2);  // 1 <= t: stays
  EXPECT_EQ(vm->Diff(0, StatKind::kZone, 0, 2), 1);
  w.Inc(StatKind::kZone, 0, 2);  // 2 > t: folds, overstep 0
  EXPECT_EQ(vm->Diff(0, StatKind::kZone, 0, 2), 0);
  EXPECT_EQ(vm->SharedRaw(StatKind::kZone, 0, 2), 102);
  ISOLATION_ASSERT_OK(vm->SetPressure(0, false));
  for (int i = 0; i < 125; ++i) w.Inc(StatKind::kZone, 0, 4);
  EXPECT_EQ(vm->Diff(0, StatKind::kZone, 0, 4), 125);
  EXPECT_EQ(vm->SharedRaw(StatKind::kZone, 0, 4), 0);
  w.Inc(StatKind::kZone, 0, 4);  // 126 > 125: folds 126 + 62, parks at -62
  EXPECT_EQ(vm->Diff(0, StatKind::kZone, 0, 4), -62);
  EXPECT_EQ(vm->SharedRaw(StatKind::kZone, 0, 4), 188);
  EXPECT_EQ(vm->ReadGlobalSnapshot(StatKind::kZone, 4), 126);
}

// Every schedule of the owner's rescale (the first update after a threshold
// change) against a remote fold of the same CPU, at the points of both CAS
// loops: nothing lost or counted twice, whichever CAS wins, for a threshold
// drop (items left in their old unit) and a rise (items re-encoded).
TEST(VmstatScaledSlot, RescaleAgainstRemoteFoldEveryInterleaving) {
  for (const bool drop : {true, false}) {
    struct Run {
      std::unique_ptr<Vmstat> vm;
      bool wrote = false;
    };
    std::shared_ptr<Run> run;
    // Items 1..3 of CPU 0 hold 100, -50, 1 (drop: under t = 125, then t = 1)
    // or 1, -1, 1 (rise: under t = 1, then t = 125); the writer's Inc of
    // item 3 is the first update under the new threshold.
    const std::array<int64_t, 3> prefill =
        drop ? std::array<int64_t, 3>{100, -50, 1} : std::array<int64_t, 3>{1, -1, 1};
    auto make = [&](Interleaver& il) {
      run = std::make_shared<Run>();
      VmstatConfig c;
      c.fold_policy = "C.addo";
      c.num_cpus = 64;
      c.zones = {ZoneSpec{"Normal", 0, 16 * kGiB, 8, 20, 32}};
      run->vm = Make(c);
      if (!drop) {
        ISOLATION_ASSERT_OK(run->vm->SetPressure(0, true));
      }
      for (int i = 0; i < 3; ++i)
        run->vm->Mod(0, StatKind::kZone, 0, i + 1, prefill[static_cast<size_t>(i)]);
      ISOLATION_ASSERT_OK(run->vm->SetPressure(0, drop));
      std::shared_ptr<Run> self = run;
      il.Add("writer", [self] {
        self->vm->Writer(0).value().Inc(StatKind::kZone, 0, 3);
        self->wrote = true;
      });
      il.Add("folder", [self] { self->vm->FoldCpuRemote(0); });
    };
    auto check = [&](const std::vector<std::string>& log) {
      std::string schedule;
      for (const std::string& e : log) schedule += e + " ";
      const int t = run->vm->Threshold(0, StatKind::kZone, 0);
      for (int item = 1; item <= 3; ++item) {
        const int64_t want =
            prefill[static_cast<size_t>(item - 1)] + (item == 3 && run->wrote ? 1 : 0);
        const int64_t diff = run->vm->Diff(0, StatKind::kZone, 0, item);
        EXPECT_EQ(run->vm->SharedRaw(StatKind::kZone, 0, item) + diff, want)
            << (drop ? "drop" : "rise") << ", item " << item << ": " << schedule;
        if (item == 3 || !drop) {
          EXPECT_LE(std::abs(diff), t) << "item " << item << ": " << schedule;
        }
      }
    };
    auto runs = Interleaver::Explore(make, check);
    ISOLATION_ASSERT_OK(runs);
  }
}

// B.local through the writer: the clean->dirty transition (out of line) arms
// the CPU's own work once per dirty episode, as Vmstat::Mod does.
TEST(VmstatWriter, BLocalArmsOnFirstDirtyThroughTheWriter) {
  auto vm = Make(SmallConfig("B.local", 4, 100));
  RecordingLocalQueue q;
  vm->SetLocalWorkQueue(&q);
  VmstatWriter w = vm->Writer(2).value();
  for (int k = 0; k < 5; ++k) w.Mod(StatKind::kZone, 1, kZoneMlock, 1);
  ASSERT_EQ(q.armed.size(), 1u);
  EXPECT_EQ(q.armed[0].first, 2);
  EXPECT_TRUE(vm->Dirty(2));
  EXPECT_TRUE(vm->ReturnToUser(2, false));  // fold, clean, cancel
  EXPECT_FALSE(vm->Dirty(2));
  w.Inc(StatKind::kNode, 0, 3);  // next episode
  EXPECT_EQ(q.armed.size(), 2u);
  EXPECT_TRUE(vm->Dirty(2));
  vm->SetLocalWorkQueue(nullptr);
}

TEST(VmstatConfig, RejectsBadInput) {
  VmstatConfig c = SmallConfig("A1", 4);
  c.zone_items = 0;
  EXPECT_FALSE(Vmstat::Create(c).ok());
  c = SmallConfig("A1", 4);
  c.zones[0].node = 5;
  EXPECT_FALSE(Vmstat::Create(c).ok());
  c = SmallConfig("A1", 4);
  c.isolated = CpuMask(3);
  EXPECT_FALSE(Vmstat::Create(c).ok());
  EXPECT_FALSE(ParseFoldPolicy("E").ok());
  EXPECT_EQ(ParseFoldPolicy("b").value(), "B");
  EXPECT_EQ(ParseFoldPolicy("C-plain").value(), "C-plain");
}

// ---------------------------------------------------------------------------
// The registries: both axes listed with descriptions and the
// negative-control flag; parse, register from outside, pair validation.
// ---------------------------------------------------------------------------

TEST(VmstatRegistry, ListsEveryBuiltInOfBothAxes) {
  std::vector<std::string> policies, controls, slots, slot_controls;
  for (const VariantInfo& v : ListVariants()) {
    EXPECT_EQ(v.mechanism, "vmstat");
    EXPECT_FALSE(v.description.empty()) << v.name;
    if (v.axis == "fold_policy") {
      policies.push_back(v.name);
      if (v.negative_control) controls.push_back(v.name);
    } else {
      ASSERT_EQ(v.axis, "slot") << v.name;
      slots.push_back(v.name);
      if (v.negative_control) slot_controls.push_back(v.name);
    }
  }
  // Built-ins first, in this order (a policy registered by another test of
  // this binary may follow).
  ASSERT_GE(policies.size(), 10u);
  EXPECT_EQ(std::vector<std::string>(policies.begin(), policies.begin() + 10),
            (std::vector<std::string>{"A0", "A1", "A0.cancel", "B", "B.local", "C", "D", "C.xadd",
                                      "C.addo", "C-plain"}));
  EXPECT_EQ(controls, std::vector<std::string>{"C-plain"});
  EXPECT_EQ(slots, (std::vector<std::string>{"s8-owner", "s32-atomic", "s64-watermark", "s32-xadd",
                                             "s32-scaled", "s32-plain"}));
  EXPECT_EQ(slot_controls, std::vector<std::string>{"s32-plain"});
  // The suites' list leaves the controls out.
  const std::vector<std::string> names = FoldPolicyRegistry().Names();
  EXPECT_EQ(std::count(names.begin(), names.end(), "C-plain"), 0);
  EXPECT_EQ(std::count(names.begin(), names.end(), "D"), 1);
}

TEST(VmstatRegistry, ParseTakesRegisteredNamesAndOldSpellings) {
  EXPECT_EQ(ParseFoldPolicy("b.LOCAL").value(), "B.local");
  EXPECT_EQ(ParseFoldPolicy("B-local").value(), "B.local");
  EXPECT_EQ(ParseFoldPolicy("Blocal").value(), "B.local");
  EXPECT_EQ(ParseFoldPolicy("c-plain-negative-control").value(), "C-plain");
  const auto bad = ParseFoldPolicy("Q");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("'Q'"));
  EXPECT_THAT(std::string(bad.status().message()),
              HasSubstr("A0, A1, A0.cancel, B, B.local, C, D, C.xadd, C.addo, C-plain"));
  // The library's own policies, in any spelling ParseFoldPolicy takes; an
  // outside registration is not one (registered_test covers that side).
  for (const char* builtin : {"A0", "b-local", "C.xadd", "C.addo", "c-plain-negative-control"}) {
    EXPECT_TRUE(IsBuiltinFoldPolicy(builtin)) << builtin;
  }
  EXPECT_FALSE(IsBuiltinFoldPolicy("Q"));
}

TEST(VmstatRegistry, CreateResolvesBothAxesAndRejectsBadPairs) {
  VmstatConfig c = SmallConfig("b.local", 2);
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto vm, Vmstat::Create(c));
  EXPECT_EQ(vm->fold_policy_name(), "B.local");
  EXPECT_EQ(vm->slot_name(), "s8-owner");
  EXPECT_TRUE(vm->policy_traits().notify_first_dirty);
  EXPECT_FALSE(vm->slot_traits().remote_foldable);
  for (const auto& [policy, slot] :
       std::vector<std::pair<std::string, std::string>>{{"C", "s32-atomic"},
                                                        {"D", "s64-watermark"},
                                                        {"C.xadd", "s32-xadd"},
                                                        {"C.addo", "s32-scaled"},
                                                        {"C-plain", "s32-plain"},
                                                        {"A0", "s8-owner"}}) {
    ISOLATION_ASSERT_OK_AND_ASSIGN(auto v, Vmstat::Create(SmallConfig(policy, 2)));
    EXPECT_EQ(v->slot_name(), slot) << policy;
  }
  // An owner-only policy may run over an atomic slot ...
  c = SmallConfig("A1", 2);
  c.slot = "S32-Atomic";
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto a1c, Vmstat::Create(c));
  EXPECT_EQ(a1c->slot_name(), "s32-atomic");
  // ... a remote fold may not run over an owner-only slot.
  c = SmallConfig("C", 2);
  c.slot = "s8-owner";
  auto bad = Vmstat::Create(c);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("'C' folds remotely"));
  c.slot = "s7";
  EXPECT_THAT(std::string(Vmstat::Create(c).status().message()), HasSubstr("'s7'"));
  c = SmallConfig("nope", 2);
  EXPECT_THAT(std::string(Vmstat::Create(c).status().message()), HasSubstr("'nope'"));
}

// The spellings isolab accepted before the registry are the entries'
// aliases; a config names its policy in any case.
TEST(VmstatRegistry, AliasesAndCaseInsensitiveNames) {
  EXPECT_EQ(ParseFoldPolicy("B-local").value(), "B.local");
  EXPECT_EQ(ParseFoldPolicy("BLOCAL").value(), "B.local");
  EXPECT_EQ(ParseFoldPolicy("d").value(), "D");
  EXPECT_TRUE(IsBuiltinFoldPolicy("b-local"));
  VmstatConfig c = SmallConfig("c", 2);
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto vm, Vmstat::Create(c));
  EXPECT_EQ(vm->fold_policy_name(), "C");
  EXPECT_EQ(vm->slot_name(), "s32-atomic");
}

// A policy from outside the library: one call registers it, then Create,
// Parse and the lists know it.  (The conformance test runs the whole kit on
// one; this checks the registry's side.)
class FoldsNothing final : public FoldPolicy {
 public:
  FoldPolicyTraits traits() const override {
    FoldPolicyTraits t;
    t.shepherd_work = WorkScope::kNoCpu;
    return t;
  }
  ShepherdAction Shepherd(const Vmstat&, int, absl::FunctionRef<bool(int)>) const override {
    return ShepherdAction::kSkip;
  }
};

// A policy over the negative-control slot s32-plain registered as a normal
// variant joined the default lists without a word; now it must say it is a
// negative control.
class OverPlainSlot final : public FoldPolicy {
 public:
  FoldPolicyTraits traits() const override {
    FoldPolicyTraits t;
    t.slot = "s32-plain";
    t.shepherd_work = WorkScope::kNoCpu;
    return t;
  }
  ShepherdAction Shepherd(const Vmstat&, int, absl::FunctionRef<bool(int)>) const override {
    return ShepherdAction::kSkip;
  }
};

TEST(VmstatRegistry, PolicyOverANegativeControlSlotMustBeOne) {
  const absl::Status refused = RegisterFoldPolicy(
      {"test.plain", "over s32-plain", false, [] { return std::make_unique<OverPlainSlot>(); }});
  EXPECT_EQ(refused.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(refused.message()),
              ::testing::HasSubstr("default slot 's32-plain' is a negative control"));
  const std::vector<std::string> before =
      FoldPolicyRegistry().Names(/*include_negative_controls=*/true);
  EXPECT_EQ(std::count(before.begin(), before.end(), "test.plain"), 0);
  ASSERT_TRUE(RegisterFoldPolicy({"test.plain", "over s32-plain", true,
                                  [] { return std::make_unique<OverPlainSlot>(); }})
                  .ok());
  const std::vector<std::string> defaults = FoldPolicyRegistry().Names();
  EXPECT_EQ(std::count(defaults.begin(), defaults.end(), "test.plain"), 0);
}

TEST(VmstatRegistry, OutsidePolicyAppearsEverywhere) {
  ASSERT_TRUE(RegisterFoldPolicy({"test.nothing", "folds nothing (registry test)", false,
                                  [] { return std::make_unique<FoldsNothing>(); }})
                  .ok());
  EXPECT_EQ(RegisterFoldPolicy(
                {"TEST.NOTHING", "again", false, [] { return std::make_unique<FoldsNothing>(); }})
                .code(),
            absl::StatusCode::kAlreadyExists);
  EXPECT_FALSE(
      RegisterFoldPolicy({"bad name", "x", false, [] { return std::make_unique<FoldsNothing>(); }})
          .ok());
  EXPECT_EQ(ParseFoldPolicy("Test.Nothing").value(), "test.nothing");
  const std::vector<std::string> names = FoldPolicyRegistry().Names();
  EXPECT_EQ(std::count(names.begin(), names.end(), "test.nothing"), 1);
  bool listed = false;
  for (const VariantInfo& v : ListVariants())
    listed = listed || (v.name == "test.nothing" && v.axis == "fold_policy");
  EXPECT_TRUE(listed);
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto vm, Vmstat::Create(SmallConfig("test.nothing", 2)));
  vm->Mod(1, StatKind::kZone, 0, 0, 3);
  EXPECT_EQ(
      vm->Shepherd([](int) { return false; }, [](int, uint64_t) { ADD_FAILURE() << "queued"; }), 0);
  EXPECT_EQ(vm->MaxAbsDiff(1), 3);
  // It is the user's, not a built-in, and a default row unless it says otherwise.
  EXPECT_FALSE(IsBuiltinFoldPolicy("test.nothing"));
  ISOLATION_ASSERT_OK_AND_ASSIGN(const FoldPolicyEntry* entry,
                                 FoldPolicyRegistry().Find("test.nothing"));
  EXPECT_EQ(entry->origin, VariantOrigin::kOutside);
  EXPECT_TRUE(entry->is_default_row());
}

INSTANTIATE_TEST_SUITE_P(BuiltIns, BuiltInPolicy,
                         ::testing::Values("A0", "A1", "B", "B.local", "C", "D", "C.xadd",
                                           "C.addo"),
                         ParamName);

}  // namespace
}  // namespace isolation::vmstat
