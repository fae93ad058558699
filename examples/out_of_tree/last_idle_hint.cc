// SPDX-License-Identifier: GPL-2.0-or-later
// An idle_select selector written outside the library: a per-LLC "last CPU
// that went idle" hint tried before mainline's select_idle_cpu() scan, and
// a broken copy of it that trusts the hint without the per-CPU re-check
// (the kit must catch it: invariant I4).

#include <atomic>
#include <memory>
#include <vector>

#include "isolation/idle_select/selector.h"
#include "isolation/idle_select/sis_selector.h"

namespace my_variants {
namespace {

using isolation::idle_select::IdleState;
using isolation::idle_select::SisSelector;

template <bool kRecheck>
class LastIdleHint final : public SisSelector {
 public:
  explicit LastIdleHint(IdleState& s) : SisSelector(s), hint_(static_cast<size_t>(s.num_llcs())) {}
  // The hint is one probe in front of mainline's budget.
  int MaxScanProbes(int budget) const override { return budget + 1; }
  void OnIdleEnter(int cpu) override {
    SisSelector::OnIdleEnter(cpu);  // keeps mainline's idle-core hint
    const int llc = state().llc_of(cpu);
    // Relaxed: a hint, re-checked by Candidate() before it is used.
    if (llc >= 0 && hint_[static_cast<size_t>(llc)].cpu.load(std::memory_order_relaxed) != cpu) {
      hint_[static_cast<size_t>(llc)].cpu.store(cpu, std::memory_order_relaxed);
      state().CountSharedWrite(cpu);  // a shared line (I12)
    }
  }
  void OnRebuild() override {
    for (auto& h : hint_) h.cpu.store(-1, std::memory_order_relaxed);
  }

 protected:
  int SelectIdleCpu(const LlcScan& scan) override {
    const int h = hint_[static_cast<size_t>(scan.llc)].cpu.load(std::memory_order_relaxed);
    if (!scan.has_idle_core && h >= 0 && state().llc_span(scan.llc).Test(h) &&
        Allowed(scan.task, h)) {
      ++scan.sel.probes;
      if (!kRecheck || Candidate(h, scan.task)) return h;
      ++scan.sel.stale_hits;
    }
    return SisSelector::SelectIdleCpu(scan);
  }

 private:
  struct alignas(64) Hint {
    std::atomic<int> cpu{-1};
  };
  std::vector<Hint> hint_;
};

// One call each; afterwards the names work wherever the built-ins' do.
[[maybe_unused]] const bool kRegistered =
    isolation::idle_select::RegisterSelector(
        isolation::idle_select::SelectorEntryOf<LastIdleHint<true>>(
            "last_idle_hint", "per-LLC last-idle hint in front of the mainline scan"))
        .ok() &&
    isolation::idle_select::RegisterSelector(
        isolation::idle_select::SelectorEntryOf<LastIdleHint<false>>(
            "last_idle_hint_trusting", "the same without the re-check (broken)",
            /*negative_control=*/true))
        .ok();

}  // namespace
}  // namespace my_variants
