// SPDX-License-Identifier: GPL-2.0-or-later
// The idle_select selector registry: the built-ins (registered on first use,
// which also keeps their objects linked from the static library), outside
// registrations, and `isolab variants` rows.

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "idle_select/builtin_selectors.h"
#include "isolation/idle_select/selector.h"

namespace isolation::idle_select {

VariantRegistry<SelectorFactory>& SelectorRegistry() {
  // Function-local static: built-ins registered on first use, no static
  // initialisation order problem.
  static VariantRegistry<SelectorFactory>* registry = [] {
    auto* r = new VariantRegistry<SelectorFactory>("idle_select selector");
    // Names are valid and distinct: registering them cannot fail.
#define ISOLATION_IDLE_SELECT_ADDRESS_(entry) &entry,
    (void)RegisterBuiltins(*r, {ISOLATION_IDLE_SELECT_BUILTINS(ISOLATION_IDLE_SELECT_ADDRESS_)});
#undef ISOLATION_IDLE_SELECT_ADDRESS_
    return r;
  }();
  return *registry;
}

absl::Status RegisterSelector(SelectorEntry entry) {
  return SelectorRegistry().Register(std::move(entry));
}

absl::StatusOr<const SelectorEntry*> FindSelector(std::string_view name) {
  return SelectorRegistry().Find(name);  // "V4" is an alias of V4g
}

std::vector<std::string> SelectorNames(bool include_negative_controls) {
  return SelectorRegistry().Names(include_negative_controls);
}

std::vector<VariantInfo> ListVariants() {
  std::vector<VariantInfo> out;
  AppendVariantInfos(SelectorRegistry(), "idle_select", "selector", out);
  return out;
}

namespace {
// MakeSelector()'s handle: forwards the wakeup to the state's own selector.
class SelectorHandle final : public IdleSelector {
 public:
  using IdleSelector::IdleSelector;
  SelectorTraits traits() const override { return state().selector().traits(); }
  int MaxScanProbes(int nr_idle_scan) const override {
    return state().selector().MaxScanProbes(nr_idle_scan);
  }
  Selection Select(WakeTask& task, const WakeContext& ctx) override {
    return state().Select(task, ctx);
  }
};
}  // namespace

std::unique_ptr<IdleSelector> MakeSelector(IdleState& state) {
  return std::make_unique<SelectorHandle>(state);
}

}  // namespace isolation::idle_select
