// SPDX-License-Identifier: GPL-2.0-or-later
// The vmstat kit's check list (testing/vmstat.h, vmstat_conformance): every
// TEST_P of the three suites by its name, the property, its schedule size,
// when it applies (from FoldPolicyTraits) and how to run it.

#include <utility>

#include "absl/status/status.h"
#include "isolation/vmstat/slot.h"
#include "testing/vmstat_common.h"

namespace isolation::testing::vmstat_conformance {
namespace {

using Fn = Violations (*)(std::string_view);
// What a check needs the policy to promise (its NotApplicable reason).
enum class Needs { kNothing, kRemoteFolds, kQuietFoldsDirty };

struct Entry {
  Check check;
  Fn fn;
  Needs needs;
};

Violations Random(std::string_view v) { return CheckVmstatRandomSchedules(v); }
Violations Dense(std::string_view v) { return CheckVmstatDenseRandomSchedules(v); }
Violations Lockstep(std::string_view v) { return CheckVmstatWriterLockstep(v); }
Violations Census(std::string_view v) { return CheckVmstatNoiseCensus(v); }

const std::vector<Entry>& Entries() {
  static const std::vector<Entry>* const entries = new std::vector<Entry>{
      // VmstatApiConformance
      {{"S1_I11_Thresholds", "VmstatApiConformance",
        "S1 thresholds per CPU; I11 drift mark as CPUs go offline", "4 and 64 CPUs, 63 offlines",
        "always"},
       CheckVmstatThresholds,
       Needs::kNothing},
      {{"S2_Overstep", "VmstatApiConformance",
        "S2: a threshold crossing folds t/2 past it (overstep knob both ways)", "8 fixed vectors",
        "always"},
       CheckVmstatOverstep,
       Needs::kNothing},
      {{"S3_ModPath", "VmstatApiConformance", "S3: mod_*_state folds the whole differential past t",
        "fixed vectors", "always"},
       CheckVmstatModPath,
       Needs::kNothing},
      {{"I5_FoldCadence", "VmstatApiConformance", "I5: threshold folds per update cadence",
        "500 updates per case", "always"},
       CheckVmstatFoldCadence,
       Needs::kNothing},
      {{"S4_I3_ThresholdDrop", "VmstatApiConformance",
        "S4/I3: |d| <= t after a threshold drop (pressure)", "fixed vectors", "always"},
       CheckVmstatThresholdDrop,
       Needs::kNothing},
      {{"S5_I4_DriftDemo", "VmstatApiConformance", "S5/I4: |global - true| <= sum of thresholds",
        "fixed vectors", "always"},
       CheckVmstatDriftDemo,
       Needs::kNothing},
      {{"I6_Refresh", "VmstatApiConformance", "I6: refresh_cpu_vm_stats leaves every slot 0",
        "fixed vectors", "always"},
       CheckVmstatRefresh,
       Needs::kNothing},
      {{"I10_Hotplug", "VmstatApiConformance",
        "I10: an offline CPU's residue is folded, thresholds follow n",
        "4 CPUs, one offline/online", "always"},
       CheckVmstatHotplug,
       Needs::kNothing},
      {{"S10_CustomerStall", "VmstatApiConformance",
        "S10: the shepherd's work on isolated CPUs as promised (I8)", "fixed vectors", "always"},
       CheckVmstatCustomerStall,
       Needs::kNothing},
      {{"S11_QuietGate", "VmstatApiConformance",
        "S11: quiet_vmstat folds a dirty CPU whatever its pending work", "fixed vectors",
        "quiet_folds_dirty"},
       CheckVmstatQuietGate,
       Needs::kQuietFoldsDirty},
      {{"RemoteFoldNeedUpdateFilterKnob", "VmstatApiConformance",
        "the remote_fold_need_update_filter knob: only need_update() CPUs are folded",
        "fixed vectors", "folds_remotely"},
       CheckVmstatNeedUpdateFilter,
       Needs::kRemoteFolds},
      {{"I1_I3_I4_I6_I8_I9_I10_RandomSchedules", "VmstatApiConformance",
        "random schedules over every entry point: I1 (no count lost) after every step, i.e. at "
        "every fold; I3 after "
        "every update; I8/I9 at every shepherd pass and return to user; I4, I9 at the end",
        "40 seeds x 3000 steps (1-8 CPUs)", "always"},
       Random,
       Needs::kNothing},
      {{"I1_I8_I9_DenseRandomSchedules", "VmstatApiConformance",
        "the random schedules dense in the rare paths: I8/I9 at every shepherd decision and return "
        "to user, I1 "
        "after every step",
        "10 seeds x 8000 steps (2-4 CPUs, half isolated; 20% shepherd passes, 20% returns to user)",
        "always"},
       Dense,
       Needs::kNothing},
      {{"I7_I2_RemoteFoldInterleavings", "VmstatApiConformance",
        "I7/I2: a writer against a remote fold, every schedule of the interleave points",
        "6 scenarios, all schedules", "folds_remotely"},
       CheckVmstatRemoteFoldInterleavings,
       Needs::kRemoteFolds},
      {{"I9_I2_OwnerShepherdInterleavings", "VmstatApiConformance",
        "I9/I2: the owner's quiet_vmstat / return to user against a shepherd pass, every schedule",
        "4 scenarios, all schedules", "always"},
       CheckVmstatOwnerShepherdInterleavings,
       Needs::kNothing},
      {{"I1_WriterFrontEndInLockStepWithVmstat", "VmstatApiConformance",
        "Vmstat::Writer and Vmstat's writers agree on every observable after every step",
        "24 seeds x 2000 steps", "always"},
       Lockstep,
       Needs::kNothing},
      // VmstatSimConformance
      {{"S7_RtInitPattern", "VmstatSimConformance",
        "S7: an RT task's init dirtying is folded as promised", "8 CPUs, 8 P simulated", "always"},
       CheckVmstatRtInit,
       Needs::kNothing},
      {{"S9_IdleEntry", "VmstatSimConformance", "S9: idle entry (quiet_vmstat) folds as promised",
        "8 CPUs, ~P simulated", "always"},
       CheckVmstatIdleEntry,
       Needs::kNothing},
      {{"S12_InterruptDirtying", "VmstatSimConformance",
        "S12: interrupt dirtying on isolated CPUs is folded", "8 CPUs, 5 P simulated", "always"},
       CheckVmstatInterruptDirtying,
       Needs::kNothing},
      {{"S13_NeverReturnsToUser", "VmstatSimConformance",
        "S13: a kernel-bound dirty CPU is folded within 2 P + a shepherd run where promised",
        "8 CPUs, 5 P simulated", "always (expectations from folds_kernel_bound_cpus)"},
       CheckVmstatKernelBound,
       Needs::kNothing},
      {{"S14_StatRefreshVsSpinningTask", "VmstatSimConformance",
        "S14: stat_refresh against a spinning task", "8 CPUs, ~12 P simulated", "always"},
       CheckVmstatStatRefresh,
       Needs::kNothing},
      {{"S15_I10_Hotplug", "VmstatSimConformance", "S15/I10: hotplug under the simulator",
        "8 CPUs, 8 P simulated", "always"},
       CheckVmstatSimHotplug,
       Needs::kNothing},
      {{"S17_NoiseCensusSimulatedHour", "VmstatSimConformance",
        "S17: I1, I4 (every second), I8 and the promised folds over random dirtying",
        "8 CPUs, 3600 s simulated (P = 1 s)", "always"},
       Census,
       Needs::kNothing},
      // VmstatRealConformance
      {{"S6_StressConservation", "VmstatRealConformance",
        "S6/I1: 3 writer threads and a shepherd, conservation", "3 threads x 120 ms", "always"},
       CheckVmstatStressConservation,
       Needs::kNothing},
      {{"I7_I2_RemoteFoldRealThreads", "VmstatRealConformance",
        "I7/I2: a writer thread against a remote folder", "2 threads x 150 ms", "folds_remotely"},
       CheckVmstatRemoteFoldRealThreads,
       Needs::kRemoteFolds},
      {{"S6_StressConservationThroughWriter", "VmstatRealConformance",
        "S6/I1 with every update through a VmstatWriter", "3 threads x 120 ms", "always"},
       CheckVmstatStressConservationThroughWriter,
       Needs::kNothing},
      {{"I7_I2_RemoteFoldRealThreadsThroughWriter", "VmstatRealConformance",
        "I7/I2 with the writer's updates through a VmstatWriter", "2 threads x 150 ms",
        "folds_remotely"},
       CheckVmstatRemoteFoldRealThreadsThroughWriter,
       Needs::kRemoteFolds},
      {{"S6_S7_I8_I10_RealThreadDriver", "VmstatRealConformance",
        "S6/S7 on RealThreadDriver: I1, I8, I10", "250 ms of real time", "always"},
       CheckVmstatRealDriver,
       Needs::kNothing},
      {{"S8_ReturnToUserHookChain", "VmstatRealConformance",
        "S8: the hook chain folds per dirtying syscall where promised, never on a clean CPU",
        "20000 mlock/munlock iterations", "always (expectations from return_to_user_folds)"},
       CheckVmstatHookChain,
       Needs::kNothing},
  };
  return *entries;
}

const Entry* Find(std::string_view name) {
  for (const Entry& e : Entries()) {
    if (e.check.name == name) return &e;
  }
  return nullptr;
}

}  // namespace

const std::vector<Check>& AllChecks() {
  static const std::vector<Check>* const checks = [] {
    auto* out = new std::vector<Check>;
    for (const Entry& e : Entries()) out->push_back(e.check);
    return out;
  }();
  return *checks;
}

absl::StatusOr<std::string> NotApplicable(std::string_view name, std::string_view variant) {
  const Entry* e = Find(name);
  if (e == nullptr) return absl::NotFoundError(vmstat_kit::Cat("no vmstat check '", name, "'"));
  auto traits = VmstatPolicyTraits(variant);
  if (!traits.ok()) return traits.status();
  switch (e->needs) {
    case Needs::kNothing:
      return std::string();
    case Needs::kRemoteFolds:
      return traits->folds_remotely
                 ? std::string()
                 : std::string("the fold policy does not fold remotely (folds_remotely = false)");
    case Needs::kQuietFoldsDirty:
      return traits->quiet_folds_dirty
                 ? std::string()
                 : std::string("the fold policy does not promise quiet_folds_dirty");
  }
  return std::string();
}

Violations Run(std::string_view name, std::string_view variant) {
  const Entry* e = Find(name);
  if (e == nullptr) return {vmstat_kit::Cat(variant, ": no vmstat check '", name, "'")};
  return e->fn(variant);
}

std::vector<std::pair<std::string, Violations>> RunAll(std::string_view variant) {
  std::vector<std::pair<std::string, Violations>> out;
  for (const Entry& e : Entries()) {
    auto why = NotApplicable(e.check.name, variant);
    if (!why.ok()) {
      out.push_back({e.check.name, {vmstat_kit::Cat(variant, ": ", why.status().message())}});
      continue;
    }
    if (!why->empty()) continue;
    Violations v = e.fn(variant);
    if (!v.empty()) out.push_back({e.check.name, std::move(v)});
  }
  return out;
}

std::string CurrentCheckName() {
  const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
  if (info == nullptr) return "";
  const std::string name = info->name();  // "S2_Overstep/B_local"
  return name.substr(0, name.find('/'));
}

}  // namespace isolation::testing::vmstat_conformance

namespace isolation::testing {

absl::StatusOr<bool> IsVmstatNegativeControl(std::string_view variant) {
  auto v = VmstatVariant::Parse(variant);
  if (!v.ok()) return v.status();
  auto policy = vmstat::FoldPolicyRegistry().Find(v->fold_policy);
  if (!policy.ok()) return policy.status();
  std::string slot = v->slot;
  if (slot.empty()) {
    const std::unique_ptr<vmstat::FoldPolicy> p = (*policy)->factory();
    if (p == nullptr)
      return absl::InternalError(vmstat_kit::Cat("fold policy '", v->fold_policy, "': null"));
    slot = std::string(p->traits().slot);
  }
  auto s = vmstat::SlotRegistry().Find(slot);
  if (!s.ok()) return s.status();
  return (*policy)->negative_control || (*s)->negative_control;
}

std::string VmstatNotApplicable(std::string_view check, std::string_view variant) {
  // The names before the list (CheckVmstat* without the prefix).
  static const std::pair<std::string_view, std::string_view> kOldNames[] = {
      {"RemoteFoldInterleavings", "I7_I2_RemoteFoldInterleavings"},
      {"RemoteFoldRealThreads", "I7_I2_RemoteFoldRealThreads"},
      {"RemoteFoldRealThreadsThroughWriter", "I7_I2_RemoteFoldRealThreadsThroughWriter"},
      {"NeedUpdateFilter", "RemoteFoldNeedUpdateFilterKnob"},
      {"QuietGate", "S11_QuietGate"},
  };
  std::string_view name = check;
  for (const auto& [old_name, new_name] : kOldNames) {
    if (check == old_name) name = new_name;
  }
  auto why = vmstat_conformance::NotApplicable(name, variant);
  return why.ok() ? *why : "";  // the check itself reports a creation error
}

}  // namespace isolation::testing
