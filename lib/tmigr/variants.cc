// SPDX-License-Identifier: GPL-2.0-or-later
// The registries of the timer-migration variants (variants.h).  The first
// call of each registry function registers the built-ins.

#include "isolation/tmigr/variants.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "tmigr/builtins.h"

namespace isolation::tmigr {
namespace {

void MustRegister(const absl::Status& s) {
  // Built-in names are fixed and distinct: a failure is a bug of builtins.h.
  ISOLATION_CONTRACT(s.ok(), "tmigr built-in variant: %s", std::string(s.message()).c_str());
  (void)s;
}

}  // namespace

VariantRegistry<ParticipationFactory>& ParticipationRegistry() {
  static VariantRegistry<ParticipationFactory>* const registry = [] {
    auto* r = new VariantRegistry<ParticipationFactory>("tmigr participation");
#define ISOLATION_TMIGR_ADDRESS_(entry) &entry,
    MustRegister(RegisterBuiltins(*r, {ISOLATION_TMIGR_PARTICIPATIONS(ISOLATION_TMIGR_ADDRESS_)}));
#undef ISOLATION_TMIGR_ADDRESS_
    return r;
  }();
  return *registry;
}

absl::Status RegisterParticipation(ParticipationEntry entry) {
  return ParticipationRegistry().Register(std::move(entry));
}

VariantRegistry<HierarchyFactory>& HierarchyRegistry() {
  static VariantRegistry<HierarchyFactory>* const registry = [] {
    auto* r = new VariantRegistry<HierarchyFactory>("tmigr hierarchy");
#define ISOLATION_TMIGR_ADDRESS_(entry) &entry,
    MustRegister(RegisterBuiltins(*r, {ISOLATION_TMIGR_HIERARCHIES(ISOLATION_TMIGR_ADDRESS_)}));
#undef ISOLATION_TMIGR_ADDRESS_
    return r;
  }();
  return *registry;
}

absl::Status RegisterHierarchy(HierarchyEntry entry) {
  return HierarchyRegistry().Register(std::move(entry));
}

std::vector<VariantInfo> ListVariants() {
  std::vector<VariantInfo> out;
  AppendVariantInfos(ParticipationRegistry(), "tmigr", "participation", out);
  AppendVariantInfos(HierarchyRegistry(), "tmigr", "hierarchy", out);
  return out;
}

}  // namespace isolation::tmigr
