// SPDX-License-Identifier: GPL-2.0-or-later
// V0-from-target: mainline select_idle_cpu() as it was before 56498cfb045d
// ("sched/fair: Avoid a second scan of target in select_idle_cpu", v5.15):
// the LLC scan wraps from target itself, so target, already probed by
// select_idle_sibling(), is probed again and spends one unit of the SIS_UTIL
// budget.  The kernel test robot reported -5.4 % netperf for the change, so
// both starts are worth timing side by side.  Everything else is V0.
// Unlike Options::scan_from_target_plus_one, which moves every scan-style
// selector, this is one selector, so it can run beside V0 in one table.

#include "idle_select/builtin_selectors.h"
#include "idle_select/state_internal.h"
#include "isolation/idle_select/sis_selector.h"

namespace isolation::idle_select {
namespace {

class V0FromTargetSelector final : public SisSelector {
 public:
  using SisSelector::SisSelector;

 protected:
  // select_idle_cpu() with for_each_cpu_wrap(cpu, cpus, target).
  int SelectIdleCpu(const LlcScan& scan) override {
    IdleState& st = state();
    CpuMask& cpus = Scratch(0);
    cpus.CopyFrom(st.topology().llc_span[static_cast<size_t>(scan.llc)]);
    if (scan.task.affinity != nullptr) cpus.And(*scan.task.affinity);
    // SIS_UTIL budget, as V0: budget 0 is "none" at once.
    int nr = IdleStateAccess::Llc(st, scan.llc).nr_idle_scan.load(std::memory_order_relaxed) + 1;
    if (nr <= 1) return -1;
    int idle_cpu = -1;
    const int i = ScanCpus(scan, cpus, scan.target, nr, idle_cpu, /*from_hint=*/false);
    return FinishScan(scan, i, idle_cpu);
  }
};

}  // namespace

absl::StatusOr<std::unique_ptr<IdleSelector>> NewV0FromTarget(IdleState& state) {
  return std::unique_ptr<IdleSelector>(std::make_unique<V0FromTargetSelector>(state));
}

// Registry entry (registry.cc registers it).
SelectorEntry V0TargetEntry() {
  SelectorEntry e{"V0-from-target",
                  "V0 with the LLC scan starting at target itself, as select_idle_cpu() did "
                  "before 56498cfb045d (v5.15)",
                  /*negative_control=*/false, SelectorFactory(&NewV0FromTarget)};
  e.default_row = false;  // a step of kernel history, run by name
  return e;
}

}  // namespace isolation::idle_select
