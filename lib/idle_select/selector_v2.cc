// SPDX-License-Identifier: GPL-2.0-or-later
// V2 (Mel Gorman's two-pass hint, Dec 2020 / Jun 2021): pass 1 over the idle
// mask; if it found nothing, pass 2 over the rest of the span with what is
// left of the same SIS_UTIL budget.  Finds CPUs the mask misses (tick-stop
// gating, SCHED_IDLE lag) without giving up the cheap first pass.

#include "idle_select/builtin_selectors.h"
#include "idle_select/idle_mask_selector.h"

namespace isolation::idle_select {

int V2Selector::SelectIdleCpu(const LlcScan& scan) {
  const int n = state().num_cpus();
  CpuMask& cpus = Scratch(0);
  MaskCandidates(scan, cpus);
  int nr = ScanCounter(Budget(scan.llc));
  if (nr <= 1) return -1;  // SIS_UTIL's cut (I8)
  const int start = ScanStart(scan.target);
  int idle_cpu = -1;
  int i = ScanCpus(scan, cpus, start, nr, idle_cpu, /*from_hint=*/true);
  if (i < 0 && (scan.has_idle_core || nr > 1)) {
    // Pass 2: the rest of the span, with what is left of the budget.
    CpuMask& rest = Scratch(2);
    CpuMask& mask_now = Scratch(3);
    rest.CopyFrom(state().topology().llc_span[static_cast<size_t>(scan.llc)]);
    mask(scan.llc).SnapshotInto(mask_now);
    rest.AndNot(mask_now);
    if (scan.task.affinity != nullptr) rest.And(*scan.task.affinity);
    if (scan.has_idle_core) {
      // Cores already rejected in pass 1 were removed from `cpus`.
      for (int c = 0; c < n; ++c) {
        if (!cpus.Test(c) && mask_now.Test(c)) rest.AndNot(state().topology().siblings(c));
      }
    }
    i = ScanCpus(scan, rest, start, nr, idle_cpu, /*from_hint=*/false);
  }
  return FinishScan(scan, i, idle_cpu);
}

absl::StatusOr<std::unique_ptr<IdleSelector>> NewV2(IdleState& state) {
  return std::unique_ptr<IdleSelector>(std::make_unique<V2Selector>(state));
}

// Registry entry (registry.cc registers it).
SelectorEntry V2Entry() {
  SelectorEntry e{
      "V2",
      "two-pass hint (Mel Gorman): the idle mask, then the rest of the span, one SIS_UTIL budget",
      /*negative_control=*/false, SelectorFactory(&NewV2)};
  return e;
}

}  // namespace isolation::idle_select
