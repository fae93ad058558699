// SPDX-License-Identifier: GPL-2.0-or-later
// V5 (Abel Wu's overloaded-CPU filter, v3/v4; Chen Yu's SIS_FILTER draft):
// the LLC span minus a per-LLC mask of overloaded CPUs (>= 2 runnable
// non-SCHED_IDLE tasks, written at the tick, test before write), applied only
// outside idle-core mode and, by Abel's rule (Options::v5_only_when_budget_short),
// only when the SIS_UTIL budget is below the LLC size.

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "idle_select/builtin_selectors.h"
#include "idle_select/state_internal.h"
#include "isolation/idle_select/sis_selector.h"

namespace isolation::idle_select {
namespace {

class V5Selector final : public SisSelector {
 public:
  explicit V5Selector(IdleState& state) : SisSelector(state) {
    for (int l = 0; l < state.num_llcs(); ++l) {
      auto m = std::make_unique<LlcMask>();
      m->overloaded.Reset(state.num_cpus());
      llcs_.push_back(std::move(m));
    }
  }

  // Overloaded: >= 2 runnable non-SCHED_IDLE tasks (the utilisation terms of
  // the draft are not modelled).  Test before write (I12).
  void OnTick(int cpu) override {
    IdleState& st = state();
    const int l = st.llc_of(cpu);
    if (l < 0) return;
    const CpuIdleState& s = IdleStateAccess::Cpu(st, cpu);
    const bool over = s.nr_running.load(std::memory_order_relaxed) -
                          s.nr_sched_idle.load(std::memory_order_relaxed) >=
                      2;
    AtomicCpuMask& m = llcs_[static_cast<size_t>(l)]->overloaded;
    if (m.Test(cpu) != over) {
      over ? m.Set(cpu) : m.Clear(cpu);
      st.CountSharedWrite(cpu);
    }
  }

  void OnRebuild() override {
    for (auto& m : llcs_) m->overloaded.ClearAll();  // sd_init(): empty
  }

  std::vector<MaskSnapshot> Masks() const override {
    std::vector<MaskSnapshot> out;
    for (size_t l = 0; l < llcs_.size(); ++l) {
      out.push_back({"overloaded", static_cast<int>(l), llcs_[l]->overloaded.Snapshot()});
    }
    return out;
  }

  std::string CheckQuiescent() const override {
    for (size_t l = 0; l < llcs_.size(); ++l) {
      const CpuMask m = llcs_[l]->overloaded.Snapshot();
      if (!m.IsSubsetOf(state().topology().llc_span[l])) {
        return absl::StrCat("I1: overloaded mask of LLC ", l, " = ", m.ToString(),
                            " not within its span");
      }
    }
    return "";
  }

 protected:
  int SelectIdleCpu(const LlcScan& scan) override {
    IdleState& st = state();
    CpuMask& cpus = Scratch(0);
    cpus.CopyFrom(st.topology().llc_span[static_cast<size_t>(scan.llc)]);
    if (scan.task.affinity != nullptr) cpus.And(*scan.task.affinity);
    const LlcShared& llc = IdleStateAccess::Llc(st, scan.llc);
    const int budget = llc.nr_idle_scan.load(std::memory_order_relaxed);
    int nr = budget + 1;
    if (nr <= 1) return -1;  // SIS_UTIL's cut (I8)
    if (!scan.has_idle_core && (!st.options().v5_only_when_budget_short || budget < llc.weight)) {
      CpuMask& over = Scratch(1);
      llcs_[static_cast<size_t>(scan.llc)]->overloaded.SnapshotInto(over);
      cpus.AndNot(over);
    }
    int idle_cpu = -1;
    const int i = ScanCpus(scan, cpus, ScanStart(scan.target), nr, idle_cpu, /*from_hint=*/false);
    return FinishScan(scan, i, idle_cpu);
  }

 private:
  struct LlcMask {
    AtomicCpuMask overloaded;  // its own line-aligned allocation
  };
  std::vector<std::unique_ptr<LlcMask>> llcs_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<IdleSelector>> NewV5(IdleState& state) {
  return std::unique_ptr<IdleSelector>(std::make_unique<V5Selector>(state));
}

// Registry entry (registry.cc registers it).
SelectorEntry V5Entry() {
  SelectorEntry e{"V5",
                  "LLC span minus an overloaded-CPU mask (Abel Wu / Chen Yu SIS_FILTER), applied "
                  "only when the budget is "
                  "below the LLC size",
                  /*negative_control=*/false, SelectorFactory(&NewV5)};
  return e;
}

}  // namespace isolation::idle_select
