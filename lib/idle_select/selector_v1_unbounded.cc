// SPDX-License-Identifier: GPL-2.0-or-later
// V1-unbounded: the idle mask without any probe budget (Aubrey Li v9 2/2,
// v11 9/9, which dropped the depth limit: the -84 % TCP_RR report).

#include <climits>

#include "idle_select/builtin_selectors.h"
#include "idle_select/idle_mask_selector.h"

namespace isolation::idle_select {
namespace {

class V1UnboundedSelector final : public IdleMaskSelector {
 public:
  using IdleMaskSelector::IdleMaskSelector;

 protected:
  int ScanCounter(int nr_idle_scan) const override {
    (void)nr_idle_scan;
    return INT_MAX;
  }
};

}  // namespace

absl::StatusOr<std::unique_ptr<IdleSelector>> NewV1Unbounded(IdleState& state) {
  return std::unique_ptr<IdleSelector>(std::make_unique<V1UnboundedSelector>(state));
}

// Registry entry (registry.cc registers it).
SelectorEntry V1UnboundedEntry() {
  SelectorEntry e{"V1-unbounded",
                  "V1 without any probe budget (Aubrey Li v9 2/2, v11 9/9: the -84 % TCP_RR case)",
                  /*negative_control=*/false, SelectorFactory(&NewV1Unbounded)};
  return e;
}

}  // namespace isolation::idle_select
