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

// The names of `entries`.
template <typename Entry>
std::vector<std::string> NamesOf(const std::vector<const Entry*>& entries) {
  std::vector<std::string> out;
  out.reserve(entries.size());
  for (const Entry* e : entries) out.push_back(e->name);
  return out;
}

// Registered outside the library, not negative controls.
template <typename Factory>
std::vector<std::string> Outside(const VariantRegistry<Factory>& registry) {
  return NamesOf(registry.FromOrigin(VariantOrigin::kOutside));
}

template <typename Factory>
std::vector<RowVariant> Rows(const VariantRegistry<Factory>& registry) {
  std::vector<RowVariant> out;
  for (const VariantEntry<Factory>* e : registry.DefaultRows())
    out.push_back({e->name, e->row_label(), e->negative_control});
  return out;
}

template <typename Factory>
std::string Help(const VariantRegistry<Factory>& registry,
                 std::string_view controls_label = "negative controls, only by name") {
  std::vector<std::string> names, controls;
  for (const VariantEntry<Factory>* e : registry.All())
    (e->negative_control ? controls : names).push_back(e->name);
  std::string out = absl::StrCat("registered: ", absl::StrJoin(names, ", "));
  if (!controls.empty())
    absl::StrAppend(&out, "; ", Absl(controls_label), ": ", absl::StrJoin(controls, ", "));
  return out;
}

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
  auto e = mm_cid::AllocatorRegistry().Find(name);
  if (!e.ok()) return BadName(flag, e.status());
  return (*e)->name;
}

std::vector<std::string> OutsideSelectors() { return Outside(idle_select::SelectorRegistry()); }
std::vector<std::string> OutsideFoldPolicies() { return Outside(vmstat::FoldPolicyRegistry()); }
std::vector<std::string> OutsideParticipations() { return Outside(tmigr::ParticipationRegistry()); }
std::vector<std::string> OutsideScopes() { return Outside(mm_cid::ScopeRegistry()); }
std::vector<std::string> OutsidePlacements() { return Outside(mm_cid::PlacementRegistry()); }

std::vector<std::string> DefaultIdleVariants() {
  return NamesOf(idle_select::SelectorRegistry().DefaultRows());
}
std::vector<std::string> DefaultVmstatStrategies() {
  return NamesOf(vmstat::FoldPolicyRegistry().DefaultRows());
}
std::vector<std::string> DefaultTmigrVariants() {
  return NamesOf(tmigr::ParticipationRegistry().DefaultRows());
}
std::vector<RowVariant> DefaultScopeRows() { return Rows(mm_cid::ScopeRegistry()); }
std::vector<RowVariant> DefaultPlacementRows() { return Rows(mm_cid::PlacementRegistry()); }

std::string RegisteredSelectorsHelp() { return Help(idle_select::SelectorRegistry()); }
std::string RegisteredFoldPoliciesHelp() {
  return Help(vmstat::FoldPolicyRegistry(), "negative controls, test fixtures not run here");
}
std::string RegisteredParticipationsHelp() { return Help(tmigr::ParticipationRegistry()); }
std::string RegisteredAllocatorsHelp() { return Help(mm_cid::AllocatorRegistry()); }

}  // namespace isolation::experiments
