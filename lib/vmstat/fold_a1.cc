// SPDX-License-Identifier: GPL-2.0-or-later
// Fold policy A1: mainline since v6.5 (be5e015d107d "vmstat: skip periodic
// vmstat update for isolated CPUs") -- A0 whose vmstat_shepherd() skips
// cpu_is_isolated() CPUs; their residue stays until a threshold overflow,
// stat_refresh or offline (docs/vmstat.md, A1).

#include <memory>

#include "vmstat/builtin.h"
#include "vmstat/fold_mainline.h"

namespace isolation::vmstat::internal {
namespace {

class SkipIsolatedFold final : public MainlineFold {
 public:
  FoldPolicyTraits traits() const override {
    FoldPolicyTraits t = MainlineFold::traits();
    t.shepherd_work = WorkScope::kNotIsolated;
    t.folds_kernel_bound_cpus = false;  // an isolated CPU's residue stays
    return t;
  }
  ShepherdAction Shepherd(const Vmstat& vm, int cpu,
                          absl::FunctionRef<bool(int)> tick_stopped) const override {
    if (vm.IsIsolated(cpu)) return ShepherdAction::kSkip;  // be5e015d107d
    return MainlineFold::Shepherd(vm, cpu, tick_stopped);
  }
};

}  // namespace

FoldPolicyEntry A1Policy() {
  return FoldPolicyEntry{"A1",
                         "mainline >= 6.5 (be5e015d107d): the shepherd skips isolated CPUs; their "
                         "residue stays, bounded by the threshold",
                         false, [] { return std::make_unique<SkipIsolatedFold>(); }};
}

}  // namespace isolation::vmstat::internal
