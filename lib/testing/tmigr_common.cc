// SPDX-License-Identifier: GPL-2.0-or-later
// The tmigr conformance kit: variant names, traits, set-ups and the table of
// checks (testing/tmigr.h).

#include "testing/tmigr_common.h"

#include <cctype>

#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "isolation/core/isolation_config.h"
#include "isolation/core/topology.h"
#include "isolation/tmigr/variants.h"

namespace isolation::testing {

std::string TmigrVariant::ToString() const {
  return hierarchy == "mainline" ? participation : absl::StrCat(participation, "/", hierarchy);
}

void PrintTo(const TmigrVariant& v, std::ostream* os) { *os << v.ToString(); }

TmigrVariant TmigrVariantFromSpec(std::string_view spec) {
  TmigrVariant v;
  const size_t slash = spec.find('/');
  v.participation = std::string(spec.substr(0, slash));
  if (slash != std::string_view::npos) v.hierarchy = std::string(spec.substr(slash + 1));
  return v;
}

absl::StatusOr<TmigrVariant> ParseTmigrVariant(std::string_view spec) {
  const std::vector<std::string> parts =
      absl::StrSplit(absl::string_view(spec.data(), spec.size()), '/');
  if (parts.size() > 2 || parts[0].empty() || (parts.size() == 2 && parts[1].empty())) {
    return absl::InvalidArgumentError(
        absl::StrCat("tmigr variant '", std::string(spec), "': want participation[/hierarchy]"));
  }
  TmigrVariant v = TmigrVariantFromSpec(spec);
  auto p = tmigr::ParticipationRegistry().Find(v.participation);
  if (!p.ok()) return p.status();
  auto h = tmigr::HierarchyRegistry().Find(v.hierarchy);
  if (!h.ok()) return h.status();
  v.participation = (*p)->name;
  v.hierarchy = (*h)->name;
  return v;
}

absl::StatusOr<bool> IsTmigrNegativeControl(const TmigrVariant& variant) {
  auto p = tmigr::ParticipationRegistry().Find(variant.participation);
  if (!p.ok()) return p.status();
  auto h = tmigr::HierarchyRegistry().Find(variant.hierarchy);
  if (!h.ok()) return h.status();
  return (*p)->negative_control || (*h)->negative_control;
}

std::vector<TmigrVariant> RegisteredTmigrVariants() {
  std::vector<TmigrVariant> out;
  for (const std::string& name : tmigr::ParticipationRegistry().Names()) {
    const TmigrVariant v{name, "mainline"};
    // "mainline" is no negative control; the check keeps it so should it change.
    if (auto control = IsTmigrNegativeControl(v); control.ok() && !*control) out.push_back(v);
  }
  return out;
}

std::string TmigrParamName(const ::testing::TestParamInfo<TmigrVariant>& info) {
  std::string s = info.param.ToString();
  for (char& c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return s;
}

absl::StatusOr<TmigrTraits> TraitsOf(const TmigrVariant& variant) {
  auto entry = tmigr::ParticipationRegistry().Find(variant.participation);
  if (!entry.ok()) return entry.status();
  std::unique_ptr<tmigr::Participation> p = (*entry)->factory();
  if (p == nullptr)
    return absl::InternalError(absl::StrCat("participation '", variant.participation, "': null"));
  return TmigrTraits{p->excludes_isolated_cpus(), p->flushes_unisolation_first()};
}

const std::vector<TmigrCheck>& TmigrChecks() {
  static const std::vector<TmigrCheck> checks = {
      // TmigrScenarios
      {"S1_Trees", CheckS1Trees, false},
      {"S2_GrowingTop", CheckS2GrowingTop, false},
      {"S3_NumaMismatch", CheckS3NumaMismatch, false},
      {"S4_FirstActivation", CheckS4FirstActivation, false},
      {"S5_HandOver", CheckS5HandOver, false},
      {"S6_LocalTimerFirst", CheckS6LocalTimerFirst, false},
      {"S7_S8_LastCpuIdlesAndIdlePuller", CheckS7S8LastCpuIdlesAndIdlePuller, false},
      {"S9_ActivePull", CheckS9ActivePull, false},
      {"S10_SameExpiryOtherCpu", CheckS10SameExpiryOtherCpu, false},
      {"S11_GhostTimer", CheckS11GhostTimer, false},
      {"S14_QuickCheck", CheckS14QuickCheck, false},
      {"S15_SingleLevelEarlyReturn", CheckS15SingleLevelEarlyReturn, false},
      {"S16_OfflineLastActive", CheckS16OfflineLastActive, false},
      {"RemoteExpiryHandsNoGlobalBehindLocal", CheckRemoteExpiryHandsNoGlobalBehindLocal, false},
      {"I5_LastIdleCpuWakesForTheFirstTimer", CheckI5LastIdleCpuWakesForTheFirstTimer, false},
      // TmigrRaces
      {"S12_RaceR1AllSchedules", CheckS12RaceR1AllSchedules, false},
      {"S13_RaceR2AllSchedules", CheckS13RaceR2AllSchedules, false},
      {"S28_RaceR4AllSchedules", CheckS28RaceR4AllSchedules, false},
      {"S17_HotplugVsIdleAllSchedules", CheckS17HotplugVsIdleAllSchedules, false},
      {"I2_TwoServicersExpireOnce", CheckI2TwoServicersExpireOnce, false},
      {"HandleRemoteStopsWhenChildBecameMigrator", CheckHandleRemoteStopsWhenChildBecameMigrator,
       false},
      // TmigrIsolation
      {"S18_BootIsolation", CheckS18BootIsolation, false},
      {"S19_NohzFullStaysAvailable", CheckS19NohzFullStaysAvailable, false},
      {"S20_TickCpuStays", CheckS20TickCpuStays, false},
      {"S21_CpusetChange", CheckS21CpusetChange, false},
      {"S21_BootIsolatedStayOut", CheckS21BootIsolatedStayOut, false},
      {"S22_OfflineOnlineIsolated", CheckS22OfflineOnlineIsolated, false},
      {"S22_CpusetIsolatedStaysOutOnHotplug", CheckS22CpusetIsolatedStaysOutOnHotplug, false},
      {"S23_HousekeepingRule", CheckS23HousekeepingRule, false},
      // TmigrStress
      {"I1_I12_RandomSchedulesCpg2", CheckRandomSchedulesCpg2, true},
      {"I1_I12_RandomSchedulesCpg8", CheckRandomSchedulesCpg8, true},
      {"I1_I12_RandomSchedulesIdleHeavy", CheckRandomSchedulesIdleHeavy, true},
      {"S27_RealThreads", CheckS27RealThreads, true},
      {"SimulatorHousekeepingTimers", CheckSimulatorHousekeepingTimers, true},
      {"S26_IsolatedTimersPulledByHousekeeping", CheckS26IsolatedTimersPulledByHousekeeping, true},
      {"S24_S26_OslatSeed", CheckS24OslatSeed, true},
  };
  return checks;
}

namespace tmigr_internal {

tmigr::Options OptionsOf(const TmigrVariant& v, int children_per_group) {
  tmigr::Options o;
  o.participation = v.participation;
  o.hierarchy = v.hierarchy;
  o.children_per_group = children_per_group;
  return o;
}

absl::StatusOr<Fixture> Make(const TmigrVariant& v, std::vector<int> node_of,
                             int children_per_group) {
  Fixture f;
  f.backend = std::make_unique<RecordingBackend>(static_cast<int>(node_of.size()));
  auto tm =
      TimerMigration::Create(std::move(node_of), OptionsOf(v, children_per_group), f.backend.get());
  if (!tm.ok()) return tm.status();
  f.tm = std::move(*tm);
  return f;
}

absl::StatusOr<Fixture> MakeUp(const TmigrVariant& v, int ncpus, int children_per_group,
                               int nnodes) {
  std::vector<int> node_of(static_cast<size_t>(ncpus));
  const int per = (ncpus + nnodes - 1) / nnodes;
  for (int c = 0; c < ncpus; ++c) node_of[static_cast<size_t>(c)] = c / per;
  auto f = Make(v, std::move(node_of), children_per_group);
  if (!f.ok()) return f.status();
  for (int c = 0; c < ncpus; ++c) {
    if (absl::Status s = f->tm->BringUpCpu(c); !s.ok()) return s;
  }
  return f;
}

absl::StatusOr<Fixture> MakeIsolated(const TmigrVariant& v, int ncpus, std::string_view cmdline,
                                     bool init, std::unique_ptr<RecordingBackend> backend) {
  Fixture f;
  f.backend = backend != nullptr ? std::move(backend) : std::make_unique<RecordingBackend>(ncpus);
  auto tm = TimerMigration::Create(std::vector<int>(static_cast<size_t>(ncpus), 0), OptionsOf(v),
                                   f.backend.get());
  if (!tm.ok()) return tm.status();
  f.tm = std::move(*tm);
  for (int c = 0; c < ncpus; ++c) {
    if (absl::Status s = f.tm->BringUpCpu(c); !s.ok()) return s;
  }
  auto topo = Topology::FromSynthetic(absl::StrCat("pu:", ncpus));
  if (!topo.ok()) return topo.status();
  auto iso = IsolationConfig::FromBootParams(*topo, cmdline);
  if (!iso.ok()) return iso.status();
  if (absl::Status s = f.tm->SetIsolation(*iso); !s.ok()) return s;
  if (init) f.tm->InitIsolation();
  return f;
}

absl::StatusOr<std::unique_ptr<tmigr::TimerSystem>> MakeTimerSystem(const TmigrVariant& v,
                                                                    std::vector<int> node_of,
                                                                    int children_per_group,
                                                                    bool record_lock_order,
                                                                    Nanos jiffy) {
  tmigr::Options o = OptionsOf(v, children_per_group);
  o.record_lock_order = record_lock_order;
  return tmigr::TimerSystem::Create(std::move(node_of), o, tmigr::TimerSystem::Config{jiffy});
}

std::string StateString(const tmigr::GroupState& s) {
  return absl::StrFormat("active=0x%02x migrator=0x%02x seq=%u", s.active, s.migrator, s.seq);
}

}  // namespace tmigr_internal
}  // namespace isolation::testing
