// SPDX-License-Identifier: GPL-2.0-or-later
// The registries of the timer-migration variants (variants.h).  The first
// call of each registry function registers the built-ins.

#include "isolation/tmigr/variants.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "tmigr/builtins.h"

namespace isolation::tmigr {
namespace {

template <typename Factory>
void MustRegister(VariantRegistry<Factory>& registry, VariantEntry<Factory> entry) {
  // Built-in names are fixed and distinct: a failure is a bug in this file.
  const absl::Status s = registry.Register(std::move(entry));
  ISOLATION_CONTRACT(s.ok(), "tmigr built-in variant: %s", std::string(s.message()).c_str());
}

}  // namespace

VariantRegistry<ParticipationFactory>& ParticipationRegistry() {
  static VariantRegistry<ParticipationFactory>* const registry = [] {
    auto* r = new VariantRegistry<ParticipationFactory>("tmigr participation");
    MustRegister(*r, AsBuiltin(V69ParticipationEntry()));
    MustRegister(*r, AsBuiltin(IsolationParticipationEntry()));
    MustRegister(*r, AsBuiltin(IsolationV15ParticipationEntry()));
    MustRegister(*r, AsBuiltin(IsolationNoCpusetTermParticipationEntry()));
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
    MustRegister(*r, AsBuiltin(MainlineHierarchyEntry()));
    MustRegister(*r, AsBuiltin(GhostTimerHierarchyEntry()));
    MustRegister(*r, AsBuiltin(NoCpuRefreshHierarchyEntry()));
    MustRegister(*r, AsBuiltin(EarlyReturnHierarchyEntry()));
    MustRegister(*r, AsBuiltin(QuickCheckTopOnlyHierarchyEntry()));
    MustRegister(*r, AsBuiltin(NoSeqIncrementHierarchyEntry()));
    MustRegister(*r, AsBuiltin(LocklessUpdateReadsHierarchyEntry()));
    MustRegister(*r, AsBuiltin(KernelR4HierarchyEntry()));
    return r;
  }();
  return *registry;
}

absl::Status RegisterHierarchy(HierarchyEntry entry) { return HierarchyRegistry().Register(std::move(entry)); }

std::vector<VariantInfo> ListVariants() {
  std::vector<VariantInfo> out;
  AppendVariantInfos(ParticipationRegistry(), "tmigr", "participation", out);
  AppendVariantInfos(HierarchyRegistry(), "tmigr", "hierarchy", out);
  return out;
}

}  // namespace isolation::tmigr
