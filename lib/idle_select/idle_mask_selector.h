// SPDX-License-Identifier: GPL-2.0-or-later
// Internal to lib/idle_select: the shared base of the idle-mask selectors (V1,
// V1-eager, V1-tickstop, V1-unbounded, V2, V3, the V1-trusting control):
// Aubrey Li's per-LLC idle cpumask, set on idle entry and cleared at the
// tick (update_idle_cpumask(), series v6-v8), scanned by select_idle_cpu()
// in place of the LLC span.  The selectors differ in the scan counter (a
// virtual) and in when the mask is written (the two upkeep mixins at the
// end), each in its own selector_*.cc.

#ifndef ISOLATION_LIB_IDLE_SELECT_IDLE_MASK_SELECTOR_H_
#define ISOLATION_LIB_IDLE_SELECT_IDLE_MASK_SELECTOR_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "idle_select/state_internal.h"
#include "isolation/core/cpumask.h"
#include "isolation/idle_select/sis_selector.h"

namespace isolation::idle_select {

class IdleMaskSelector : public SisSelector {
 public:
  explicit IdleMaskSelector(IdleState& state);

  // A CPU leaves the mask at its next tick at the latest (I10).
  SelectorTraits traits() const override;
  // At most ScanCounter(budget) - 1 CPU-mode probes (the kernel's "--nr").
  int MaxScanProbes(int nr_idle_scan) const override;
  // __update_idle_core, then update_idle_cpumask(cpu, idle) in do_idle().
  void OnIdleEnter(int cpu) override;
  // sched_tick(): update_idle_cpumask(cpu, idle_cpu(cpu)).
  void OnTick(int cpu) override;
  // sd_init(): every mask = its LLC's span; last_idle_state kept (rebuild,
  // S10) unless Options::v1_reset_state_on_rebuild.
  void OnRebuild() override;
  std::vector<MaskSnapshot> Masks() const override;  // "idle_cpus" per LLC
  CpuMask IdleHint() const override;
  std::string CheckQuiescent() const override;  // I1: mask ⊆ span

 protected:
  // The kernel's scan counter `nr` at SIS_UTIL budget `nr_idle_scan`
  // (CPU-mode probes stop when --nr reaches 0; nr <= 1: no scan at all).
  virtual int ScanCounter(int nr_idle_scan) const = 0;
  // select_idle_cpu() over idle mask ∩ span ∩ affinity with ScanCounter().
  int SelectIdleCpu(const LlcScan& scan) override;

  // update_idle_cpumask(): write the bit only on a change of
  // `idle || sched_idle_cpu(cpu)` against last_idle_state (I12), never for a
  // CPU without sd_llc (I13).
  void Update(int cpu, bool idle);
  // idle mask ∩ span ∩ affinity into `cpus`.
  void MaskCandidates(const LlcScan& scan, CpuMask& cpus) const;
  AtomicCpuMask& mask(int llc) const { return llcs_[static_cast<size_t>(llc)]->idle_cpus; }
  int Budget(int llc) const {
    return IdleStateAccess::Llc(state(), llc).nr_idle_scan.load(std::memory_order_relaxed);
  }

 private:
  // last_idle_state: owner-only, one line per CPU (the kernel's per-CPU byte).
  struct alignas(64) CpuSlot {
    uint8_t last_idle_state = 1;
  };
  // The mask is its own line-aligned allocation (AtomicCpuMask).
  struct LlcMask {
    AtomicCpuMask idle_cpus;
  };
  std::vector<CpuSlot> cpus_;
  std::vector<std::unique_ptr<LlcMask>> llcs_;
};

// V1-eager upkeep: also cleared on idle exit.
template <typename Base>
class ClearOnIdleExit : public Base {
 public:
  using Base::Base;
  SelectorTraits traits() const override {
    SelectorTraits t = Base::traits();
    t.idle_hint_clear = HintClear::kOnIdleExit;
    return t;
  }
  void OnIdleExit(int cpu) override {
    Base::OnIdleExit(cpu);
    this->Update(cpu, false);
  }
};

// V1-tickstop upkeep (Aubrey Li v4/v5): the bit is set only when the tick
// stops in idle; the tick only clears.
template <typename Base>
class SetAtTickStop : public Base {
 public:
  using Base::Base;
  void OnIdleEnter(int cpu) override {
    SisSelector::OnIdleEnter(cpu);  // the idle-core hint as always
    if (internal::TickStopped(this->state(), cpu)) this->Update(cpu, true);
  }
  void OnTickStop(int cpu) override {
    if (internal::CurrIsIdle(this->state(), cpu)) this->Update(cpu, true);
  }
  void OnTick(int cpu) override {
    if (!internal::IdleCpu(this->state(), cpu)) this->Update(cpu, false);
  }
};

// V1's scan counter: the SIS_UTIL budget with SIS_PROP's floor
// (Options::v1_min_nr; see idle_select.h).
class V1Selector : public IdleMaskSelector {
 public:
  using IdleMaskSelector::IdleMaskSelector;

 protected:
  int ScanCounter(int nr_idle_scan) const override;
};

// V2 (Mel Gorman's two-pass hint): pass 1 over the mask, pass 2 over
// span ∖ mask with what is left of the one SIS_UTIL budget.
class V2Selector : public IdleMaskSelector {
 public:
  using IdleMaskSelector::IdleMaskSelector;

 protected:
  int ScanCounter(int nr_idle_scan) const override { return nr_idle_scan + 1; }
  int SelectIdleCpu(const LlcScan& scan) override;
};

}  // namespace isolation::idle_select

#endif  // ISOLATION_LIB_IDLE_SELECT_IDLE_MASK_SELECTOR_H_
