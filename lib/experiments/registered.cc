// SPDX-License-Identifier: GPL-2.0-or-later
#include "experiments/registered.h"

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "isolation/core/registry.h"
#include "isolation/idle_select/selector.h"
#include "isolation/mm_cid/registry.h"
#include "isolation/tmigr/variants.h"
#include "isolation/vmstat/vmstat.h"

namespace isolation::experiments {
namespace {

absl::string_view Absl(std::string_view s) { return absl::string_view(s.data(), s.size()); }

// A registry's error (NotFound "unknown <axis> 'x' (registered: ...)") as
// the flag's InvalidArgument.
absl::Status BadName(std::string_view flag, const absl::Status& s) {
  return absl::InvalidArgumentError(absl::StrCat(Absl(flag), ": ", s.message()));
}

// Non-negative-control entries of `registry` for which `builtin` is false.
template <typename Factory, typename IsBuiltin>
std::vector<std::string> Outside(const VariantRegistry<Factory>& registry, IsBuiltin builtin) {
  std::vector<std::string> out;
  for (const VariantEntry<Factory>* e : registry.All()) {
    if (!e->negative_control && !builtin(e->name)) out.push_back(e->name);
  }
  return out;
}

template <typename Factory>
std::string Help(const VariantRegistry<Factory>& registry,
                 std::string_view controls_label = "negative controls, only by name") {
  std::vector<std::string> names, controls;
  for (const VariantEntry<Factory>* e : registry.All()) (e->negative_control ? controls : names).push_back(e->name);
  std::string out = absl::StrCat("registered: ", absl::StrJoin(names, ", "));
  if (!controls.empty()) absl::StrAppend(&out, "; ", Absl(controls_label), ": ", absl::StrJoin(controls, ", "));
  return out;
}

std::vector<std::string> Concat(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// The enum parsers of the compatibility names know exactly the built-ins
// (idle_select's negative controls V1-trusting and V0-norecheck excepted,
// which no default list takes anyway); tmigr's enum knows two of its four.
bool BuiltinSelector(const std::string& name) { return idle_select::ParseVariant(name).ok(); }
bool BuiltinFoldPolicy(const std::string& name) { return vmstat::IsBuiltinFoldPolicy(name); }
bool BuiltinParticipation(const std::string& name) {
  return name == "v6.9" || name == "isolation" || name == "isolation-v15" || name == "isolation-no-cpuset-term";
}
bool BuiltinScope(const std::string& name) { return mm_cid::ParseScanScope(name).ok(); }
bool BuiltinPlacement(const std::string& name) { return mm_cid::ParsePlacement(name).ok(); }

}  // namespace

absl::StatusOr<std::string> ResolveSelector(std::string_view flag, std::string_view name) {
  auto e = idle_select::FindSelector(name);
  if (!e.ok()) return BadName(flag, e.status());
  return (*e)->name;
}

absl::StatusOr<std::string> ResolveFoldPolicy(std::string_view flag, std::string_view name) {
  auto n = vmstat::ParseFoldPolicy(name);
  if (!n.ok()) return BadName(flag, n.status());
  return *n;
}

absl::StatusOr<std::string> ResolveParticipation(std::string_view flag, std::string_view name) {
  auto e = tmigr::ParticipationRegistry().Find(name);
  if (!e.ok()) return BadName(flag, e.status());
  return (*e)->name;
}

absl::StatusOr<std::string> ResolveAllocator(std::string_view flag, std::string_view name) {
  // The built-ins' command-line spellings first (mm_cid.h: ParseAllocator).
  if (auto a = mm_cid::ParseAllocator(name); a.ok()) return std::string(mm_cid::AllocatorName(*a));
  auto e = mm_cid::AllocatorRegistry().Find(name);
  if (!e.ok()) return BadName(flag, e.status());
  return (*e)->name;
}

std::vector<std::string> OutsideSelectors() { return Outside(idle_select::SelectorRegistry(), BuiltinSelector); }
std::vector<std::string> OutsideFoldPolicies() { return Outside(vmstat::FoldPolicyRegistry(), BuiltinFoldPolicy); }
std::vector<std::string> OutsideParticipations() {
  return Outside(tmigr::ParticipationRegistry(), BuiltinParticipation);
}
std::vector<std::string> OutsideScopes() { return Outside(mm_cid::ScopeRegistry(), BuiltinScope); }
std::vector<std::string> OutsidePlacements() { return Outside(mm_cid::PlacementRegistry(), BuiltinPlacement); }

std::vector<std::string> DefaultIdleVariants() {
  return Concat({"V0", "V1", "V1-eager", "V1-tickstop", "V1-unbounded", "V2", "V3", "V4", "V4n", "V5"},
                OutsideSelectors());
}
std::vector<std::string> DefaultVmstatStrategies() { return Concat({"A0", "A1", "B", "C"}, OutsideFoldPolicies()); }
std::vector<std::string> DefaultTmigrVariants() { return Concat({"v6.9", "isolation"}, OutsideParticipations()); }

std::string RegisteredSelectorsHelp() { return Help(idle_select::SelectorRegistry()); }
std::string RegisteredFoldPoliciesHelp() {
  return Help(vmstat::FoldPolicyRegistry(), "negative controls, test fixtures not run here");
}
std::string RegisteredParticipationsHelp() { return Help(tmigr::ParticipationRegistry()); }
std::string RegisteredAllocatorsHelp() { return Help(mm_cid::AllocatorRegistry()); }

}  // namespace isolation::experiments
