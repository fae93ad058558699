// SPDX-License-Identifier: GPL-2.0-or-later
// V3 (Vincent Guittot, Jun 2021): the idle mask, at most K probes
// (Options::v3_max_probes, the old SIS_PROP floor of 4); not gated by
// SIS_UTIL (a library choice: the proposal predates it).

#include "idle_select/builtin_selectors.h"
#include "idle_select/idle_mask_selector.h"

namespace isolation::idle_select {
namespace {

class V3Selector final : public IdleMaskSelector {
 public:
  using IdleMaskSelector::IdleMaskSelector;

 protected:
  int ScanCounter(int nr_idle_scan) const override {
    (void)nr_idle_scan;
    return state().options().v3_max_probes + 1;
  }
};

}  // namespace

absl::StatusOr<std::unique_ptr<IdleSelector>> NewV3(IdleState& state) {
  return std::unique_ptr<IdleSelector>(std::make_unique<V3Selector>(state));
}

// Registry entry (registry.cc registers it).
SelectorEntry V3Entry() {
  SelectorEntry e{
      "V3",
      "the idle mask with at most K probes (Vincent Guittot; Options::v3_max_probes, default 4)",
      /*negative_control=*/false, SelectorFactory(&NewV3)};
  return e;
}

}  // namespace isolation::idle_select
