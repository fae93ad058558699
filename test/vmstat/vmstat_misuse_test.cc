// SPDX-License-Identifier: GPL-2.0-or-later
// Misuse of the vmstat API, for every registered fold
// policy, negative control included: Create
// bounds every size before allocating and names the bad value; readers,
// folders, the deferred machinery and the per-CPU observers give 0 / false /
// zero counters for an index out of range and change nothing; hotplug and
// SetPressure return errors; the writers (the hot path) fail their contract
// check naming the value (death tests where the checks are compiled in).

#include <cctype>
#include <climits>
#include <memory>
#include <string>
#include <vector>

#include "common/contract_death.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "isolation/testing/status_matchers.h"
#include "isolation/vmstat/hooks.h"
#include "isolation/vmstat/vmstat.h"

namespace isolation::vmstat {
namespace {

using ::testing::HasSubstr;
using testing_internal::Opaque;

constexpr int kCpus = 4;

VmstatConfig Config(const std::string& policy) {
  VmstatConfig c;
  c.fold_policy = policy;
  c.num_cpus = kCpus;
  c.num_nodes = 2;
  c.zones = {ZoneSpec{}, ZoneSpec{}};
  c.zones[1].node = 1;
  c.nohz_full = CpuMask::Range(kCpus, 1, 3);
  c.isolated = CpuMask::Range(kCpus, 1, 3);
  return c;
}

std::unique_ptr<Vmstat> Make(const std::string& s) {
  auto vm = Vmstat::Create(Config(s)).value();
  return vm;
}

class VmstatMisuse : public ::testing::TestWithParam<std::string> {};

// ---- Create -----------------------------------------------------------------------------

TEST_P(VmstatMisuse, CreateBoundsSizesBeforeAllocatingNamingTheValue) {
  struct Case {
    const char* what;
    void (*edit)(VmstatConfig&);
    const char* named;
  };
  const Case cases[] = {
      {"num_cpus 0", [](VmstatConfig& c) { c.num_cpus = 0; }, "num_cpus 0"},
      {"num_cpus INT_MAX", [](VmstatConfig& c) { c.num_cpus = INT_MAX; }, "num_cpus 2147483647"},
      {"num_nodes INT_MAX", [](VmstatConfig& c) { c.num_nodes = INT_MAX; }, "num_nodes 2147483647"},
      {"num_nodes 0", [](VmstatConfig& c) { c.num_nodes = 0; }, "num_nodes 0"},
      {"too many zones", [](VmstatConfig& c) { c.zones.assign(kMaxZones + 1, ZoneSpec{}); },
       "5121 zones"},
      {"no zones", [](VmstatConfig& c) { c.zones.clear(); }, "0 zones"},
      {"zone node", [](VmstatConfig& c) { c.zones[0].node = 7; }, "node 7"},
      {"zone items", [](VmstatConfig& c) { c.zone_items = 13; }, "zone_items 13"},
      {"node items", [](VmstatConfig& c) { c.node_items = 0; }, "node_items 0"},
      {"mask size", [](VmstatConfig& c) { c.isolated = CpuMask::Full(64); }, "64 bits"},
      {"interval", [](VmstatConfig& c) { c.stat_interval = -1; }, "stat_interval -1"},
      {"page shift", [](VmstatConfig& c) { c.page_shift = 40; }, "page_shift 40"},
      {"watermarks", [](VmstatConfig& c) { c.zones[0].min_wmark = 1 << 30; },
       "watermarks out of order"},
      {"fold policy", [](VmstatConfig& c) { c.fold_policy = "Z9"; }, "fold policy 'Z9'"},
      {"slot", [](VmstatConfig& c) { c.slot = "s99"; }, "slot 's99'"},
  };
  for (const Case& k : cases) {
    VmstatConfig c = Config(GetParam());
    k.edit(c);
    auto vm = Vmstat::Create(c);
    ASSERT_FALSE(vm.ok()) << k.what;
    EXPECT_EQ(vm.status().code(), absl::StatusCode::kInvalidArgument) << k.what;
    EXPECT_THAT(vm.status().message(), HasSubstr(k.named)) << k.what;
  }
}

TEST_P(VmstatMisuse, CreateRejectsZonesBeyondTheAddressSpace) {
  VmstatConfig c = Config(GetParam());
  c.zones[1].managed_pages = kMaxZonePages + 1;
  EXPECT_THAT(Vmstat::Create(c).status().message(), HasSubstr("4503599627370497 pages"));
  c = Config(GetParam());
  c.zones[0].high_wmark = INT64_MAX;  // high + drift overflowed in the threshold refresh
  EXPECT_THAT(Vmstat::Create(c).status().message(),
              HasSubstr("high watermark 9223372036854775807"));
}

// ---- readers and observers --------------------------------------------------------------

TEST_P(VmstatMisuse, ReadsOfUnknownInstancesAndItemsAreZero) {
  auto vm = Make(GetParam());
  vm->Mod(0, StatKind::kZone, 0, 0, 1000);
  vm->Mod(1, StatKind::kNode, 1, 2, 7);
  const StatKind bogus = static_cast<StatKind>(9);
  for (StatKind kind : {StatKind::kZone, StatKind::kNode, bogus}) {
    for (int instance : {-1, 2, 1000, INT_MAX}) {
      EXPECT_EQ(vm->Read(kind, instance, 0), 0) << instance;
      EXPECT_EQ(vm->ReadSnapshot(kind, instance, 0), 0) << instance;
      EXPECT_EQ(vm->SharedRaw(kind, instance, 0), 0) << instance;
      EXPECT_EQ(vm->Diff(0, kind, instance, 0), 0) << instance;
      EXPECT_EQ(vm->Threshold(0, kind, instance), 0) << instance;
    }
    for (int item : {-1, 16, 99, INT_MIN}) {
      EXPECT_EQ(vm->Read(kind, 0, item), 0) << item;
      EXPECT_EQ(vm->ReadGlobal(kind, item), 0) << item;
      EXPECT_EQ(vm->ReadGlobalSnapshot(kind, item), 0) << item;
      EXPECT_EQ(vm->GlobalRaw(kind, item), 0) << item;
      EXPECT_EQ(vm->Diff(0, kind, 0, item), 0) << item;
    }
  }
  EXPECT_EQ(vm->Read(StatKind::kZone, 5, 0), 0);  // an unknown zone reads 0
  EXPECT_EQ(vm->DriftMark(-1), 0);
  EXPECT_EQ(vm->DriftMark(2), 0);
  EXPECT_EQ(vm->ReadGlobalSnapshot(StatKind::kZone, 0), 1000);
  EXPECT_EQ(vm->ReadSnapshot(StatKind::kNode, 1, 2), 7);
}

TEST_P(VmstatMisuse, PerCpuObserversOfUnknownCpusAreFalseOrZero) {
  auto vm = Make(GetParam());
  for (int cpu : {-1, kCpus, 77, INT_MAX, INT_MIN}) {
    EXPECT_FALSE(vm->IsOnline(cpu)) << cpu;  // IsOnline(-1) read out of bounds before
    EXPECT_FALSE(vm->IsIsolated(cpu)) << cpu;
    EXPECT_FALSE(vm->IsNohzFull(cpu)) << cpu;
    EXPECT_FALSE(vm->WorkPending(cpu)) << cpu;
    EXPECT_FALSE(vm->Dirty(cpu)) << cpu;
    EXPECT_FALSE(vm->NeedUpdate(cpu)) << cpu;
    EXPECT_EQ(vm->MaxAbsDiff(cpu), 0) << cpu;
    EXPECT_EQ(vm->Threshold(cpu, StatKind::kZone, 0), 0) << cpu;
    const CpuCounters c = vm->Counters(cpu);
    EXPECT_EQ(c.work_runs + c.cancelled_work_runs + c.quiet_calls + c.remote_folds, 0) << cpu;
  }
}

// ---- folders and deferred machinery ------------------------------------------------------

TEST_P(VmstatMisuse, DeferredCallsOnUnknownCpusDoNothing) {
  auto vm = Make(GetParam());
  vm->Mod(1, StatKind::kZone, 0, 0, 3);
  const int64_t diff = vm->Diff(1, StatKind::kZone, 0, 0);
  for (int cpu : {-1, kCpus, 77, INT_MAX}) {
    EXPECT_FALSE(vm->RunCpuWork(cpu, 0)) << cpu;  // RunCpuWork(-1) read out of bounds before
    EXPECT_FALSE(vm->ReturnToUser(cpu, true)) << cpu;
    EXPECT_FALSE(vm->QuietVmstat(cpu, true)) << cpu;
    EXPECT_EQ(vm->RefreshCpu(cpu), 0) << cpu;
    EXPECT_EQ(vm->FoldCpuRemote(cpu), 0) << cpu;
  }
  EXPECT_EQ(vm->Diff(1, StatKind::kZone, 0, 0), diff);
  for (int cpu = 0; cpu < kCpus; ++cpu) EXPECT_EQ(vm->Counters(cpu).work_runs, 0);
}

TEST_P(VmstatMisuse, HotplugAndPressureOfUnknownIdsAreErrors) {
  auto vm = Make(GetParam());
  for (int cpu : {-1, kCpus, INT_MAX}) {
    EXPECT_THAT(vm->CpuOffline(cpu).message(), HasSubstr(absl::StrCat("cpu ", cpu))) << cpu;
    EXPECT_THAT(vm->CpuOnline(cpu).message(), HasSubstr(absl::StrCat("cpu ", cpu))) << cpu;
  }
  EXPECT_THAT(vm->SetPressure(2, true).message(), HasSubstr("node 2"));
  EXPECT_THAT(vm->SetPressure(-1, true).message(), HasSubstr("node -1"));
  EXPECT_EQ(vm->online_cpus(), kCpus);
}

// ---- writers: contract checks --------------------------------------------------------------

TEST_P(VmstatMisuse, ModOnCpuBeyondTheMachineViolatesContract) {
  auto vm = Make(GetParam());
  EXPECT_CONTRACT_DEATH(vm->Mod(Opaque(kCpus), StatKind::kZone, 0, 0, 1),
                        "vmstat Mod.cpu 4, zone 0, item 0");
}

TEST_P(VmstatMisuse, IncOfUnknownZoneViolatesContract) {
  auto vm = Make(GetParam());
  EXPECT_CONTRACT_DEATH(vm->Inc(0, StatKind::kZone, Opaque(9), 0),
                        "vmstat Inc.cpu 0, zone 9, item 0");
}

TEST_P(VmstatMisuse, DecOfUnknownItemViolatesContract) {
  auto vm = Make(GetParam());
  EXPECT_CONTRACT_DEATH(vm->Dec(0, StatKind::kNode, 1, Opaque(99)),
                        "vmstat Dec.cpu 0, node 1, item 99");
}

TEST_P(VmstatMisuse, IrqsOffWritersCheckTheirContractToo) {
  auto vm = Make(GetParam());
  EXPECT_CONTRACT_DEATH(vm->ModIrqsOff(Opaque(-1), StatKind::kZone, 0, 0, 5), "ModIrqsOff.cpu -1");
  EXPECT_CONTRACT_DEATH(vm->IncIrqsOff(0, StatKind::kZone, Opaque(-2), 0),
                        "IncIrqsOff.cpu 0, zone -2");
  EXPECT_CONTRACT_DEATH(vm->DecIrqsOff(0, StatKind::kZone, 0, Opaque(12)),
                        "DecIrqsOff.cpu 0, zone 0, item 12");
}

TEST_P(VmstatMisuse, ModOfAnAbsurdDeltaViolatesContract) {
  auto vm = Make(GetParam());
  EXPECT_CONTRACT_DEATH(vm->Mod(0, StatKind::kZone, 0, 0, Opaque(INT64_MAX)),
                        "Mod: delta 9223372036854775807");
}

// ---- the inline writer front end -----------------------------------------------------------

TEST_P(VmstatMisuse, WriterOfUnknownCpuIsAnErrorNamingIt) {
  auto vm = Make(GetParam());
  for (int cpu : {-1, kCpus, INT_MAX}) {
    auto w = vm->Writer(cpu);
    ASSERT_FALSE(w.ok()) << cpu;
    EXPECT_EQ(w.status().code(), absl::StatusCode::kInvalidArgument) << cpu;
    EXPECT_THAT(w.status().message(), HasSubstr(absl::StrCat("Writer(cpu ", cpu, ")"))) << cpu;
  }
  for (int cpu = 0; cpu < kCpus; ++cpu) {
    ISOLATION_ASSERT_OK_AND_ASSIGN(auto w, vm->Writer(cpu));
    EXPECT_EQ(w.cpu(), cpu);
  }
}

TEST_P(VmstatMisuse, WriterModOfUnknownZoneViolatesContract) {
  auto vm = Make(GetParam());
  VmstatWriter w = vm->Writer(1).value();
  EXPECT_CONTRACT_DEATH(w.Mod(StatKind::kZone, Opaque(2), 0, 1),
                        "vmstat Writer Mod.cpu 1, zone 2, item 0");
}

TEST_P(VmstatMisuse, WriterIncAndDecOfUnknownItemsViolateContract) {
  auto vm = Make(GetParam());
  VmstatWriter w = vm->Writer(0).value();
  EXPECT_CONTRACT_DEATH(w.Inc(StatKind::kNode, 0, Opaque(kMaxNodeItems)),
                        "vmstat Writer Inc.cpu 0, node 0, item 16");
  EXPECT_CONTRACT_DEATH(w.Dec(StatKind::kZone, Opaque(-1), 0),
                        "vmstat Writer Dec.cpu 0, zone -1, item 0");
  EXPECT_CONTRACT_DEATH(w.Dec(StatKind::kNode, 2, 0), "vmstat Writer Dec.cpu 0, node 2, item 0");
}

TEST_P(VmstatMisuse, WriterModOfAnAbsurdDeltaViolatesContract) {
  auto vm = Make(GetParam());
  VmstatWriter w = vm->Writer(0).value();
  EXPECT_CONTRACT_DEATH(w.Mod(StatKind::kZone, 0, 0, Opaque(INT64_MIN)),
                        "Writer Mod: delta -9223372036854775808");
}

TEST_P(VmstatMisuse, SlotWriterOfAnotherFormViolatesContract) {
  auto vm = Make(GetParam());
  const VmstatWriter w = vm->Writer(0).value();
  // Not the writer's own form (kVirtual is never the built-ins' except the
  // negative control's, so pick whichever differs).
  if (w.form() == internal::WriterForm::kWatermark) {
    EXPECT_CONTRACT_DEATH((void)VmstatSlotWriter<internal::WriterForm::kOwnerS8>{w},
                          "VmstatSlotWriter<1> made from a writer of form 3");
  } else {
    EXPECT_CONTRACT_DEATH((void)VmstatSlotWriter<internal::WriterForm::kWatermark>{w},
                          "VmstatSlotWriter<3> made from a writer of form");
  }
}

// B's writers mark the CPU dirty (A1's do not): a slot writer that skips the
// mark may not be made from B's writer; one that marks may wrap A1's.
TEST(VmstatSlotWriterMarks, SkippingTheDirtyMarkOfAMarkingWriterViolatesContract) {
  auto vm = Make("B");
  const VmstatWriter w = vm->Writer(0).value();
  ASSERT_TRUE(w.marks_dirty());
  ASSERT_EQ(w.form(), internal::WriterForm::kOwnerS8);
  using NoMarks = VmstatSlotWriter<internal::WriterForm::kOwnerS8, false>;
  EXPECT_CONTRACT_DEATH((void)NoMarks{w},
                        "VmstatSlotWriter<1, no marks> made from a writer that marks dirty");
}

TEST(VmstatSlotWriterMarks, MarkingANonMarkingWriterStillCounts) {
  auto vm = Make("A1");
  const VmstatWriter w = vm->Writer(0).value();
  ASSERT_FALSE(w.marks_dirty());
  ASSERT_EQ(w.form(), internal::WriterForm::kOwnerS8);
  // Allowed (the flag it tests is always set): the same counts, no mark.
  const int64_t before = vm->ReadSnapshot(StatKind::kZone, 0, 0);
  VmstatSlotWriter<internal::WriterForm::kOwnerS8, true> sw{w};
  sw.Mod(StatKind::kZone, 0, 0, 3);
  sw.Inc(StatKind::kZone, 0, 0);
  EXPECT_EQ(vm->ReadSnapshot(StatKind::kZone, 0, 0), before + 4);
  EXPECT_FALSE(vm->Dirty(0));
}

// ---- threshold formulas ------------------------------------------------------------------------

TEST(VmstatFormulaMisuse, ExtremeInputsDoNotOverflow) {
  EXPECT_EQ(PressureThreshold(INT64_MAX, INT64_MIN, 4), kThresholdCap);
  EXPECT_EQ(PressureThreshold(INT64_MIN, INT64_MAX, 4), 1);
  EXPECT_EQ(PressureThreshold(100, 0, 0), 100);
  EXPECT_EQ(NormalThreshold(INT64_MAX, INT_MAX), kThresholdCap);
  EXPECT_GE(NormalThreshold(-5, -5), 0);
}

TEST(VmstatFormulaMisuse, PageShiftBeyond27ViolatesContract) {
  EXPECT_CONTRACT_DEATH((void)NormalThreshold(1 << 20, 4, Opaque(40)), "page_shift 40 outside");
}

// ---- the driver adapter ----------------------------------------------------------------------

TEST_P(VmstatMisuse, HooksIgnoreNeverYieldsOfUnknownCpus) {
  auto vm = Make(GetParam());
  VmstatHooks hooks(*vm);
  for (int cpu : {-1, kCpus, INT_MAX}) {
    hooks.SetNeverYields(cpu, true);
    hooks.SetNeverYields(cpu, false);
  }
  SUCCEED();
}

INSTANTIATE_TEST_SUITE_P(
    AllPolicies, VmstatMisuse,
    ::testing::ValuesIn(FoldPolicyRegistry().Names(/*include_negative_controls=*/true)),
    [](const ::testing::TestParamInfo<std::string>& info) {
      std::string n = info.param;
      for (char& ch : n) {
        if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
      }
      return n;
    });

}  // namespace
}  // namespace isolation::vmstat
