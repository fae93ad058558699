// SPDX-License-Identifier: GPL-2.0-or-later
// V1-trusting, a NEGATIVE CONTROL: V1 that returns the first idle-mask member
// after target without the fresh per-CPU check of __select_idle_cpu().  The
// mask is only cleared at the tick, so this returns CPUs that are running a
// task (a broken I4).  It is registered (flagged negative_control) so that a
// test can show the conformance suite catches it.

#include "idle_select/builtin_selectors.h"
#include "idle_select/idle_mask_selector.h"

namespace isolation::idle_select {
namespace {

class V1TrustingSelector final : public V1Selector {
 public:
  using V1Selector::V1Selector;

 protected:
  int SelectIdleCpu(const LlcScan& scan) override {
    CpuMask& cpus = Scratch(0);
    MaskCandidates(scan, cpus);
    int chosen = -1;
    ForEachCpuWrap(cpus, ScanStart(scan.target), [&](int cpu) {
      chosen = cpu;  // trusted: no Candidate() re-check
      return false;
    });
    return chosen;
  }
};

}  // namespace

absl::StatusOr<std::unique_ptr<IdleSelector>> NewV1Trusting(IdleState& state) {
  return std::unique_ptr<IdleSelector>(std::make_unique<V1TrustingSelector>(state));
}

// Registry entry (registry.cc registers it).
SelectorEntry V1TrustingEntry() {
  SelectorEntry e{"V1-trusting",
                  "NEGATIVE CONTROL: V1 returning the first idle-mask member without the per-CPU "
                  "re-check (breaks I4)",
                  /*negative_control=*/true, SelectorFactory(&NewV1Trusting)};
  return e;
}

}  // namespace isolation::idle_select
