// SPDX-License-Identifier: GPL-2.0-or-later
// The idle-mask base (Aubrey Li's per-LLC idle cpumask): upkeep and scan.

#include "idle_select/idle_mask_selector.h"

#include <algorithm>
#include <climits>

#include "absl/strings/str_cat.h"

namespace isolation::idle_select {

IdleMaskSelector::IdleMaskSelector(IdleState& state)
    : SisSelector(state), cpus_(static_cast<size_t>(state.num_cpus())) {
  for (int l = 0; l < state.num_llcs(); ++l) {
    auto m = std::make_unique<LlcMask>();
    m->idle_cpus.Reset(state.num_cpus());
    llcs_.push_back(std::move(m));
  }
}

SelectorTraits IdleMaskSelector::traits() const {
  SelectorTraits t = SisSelector::traits();
  t.idle_hint_clear = HintClear::kAtTick;
  return t;
}

int IdleMaskSelector::MaxScanProbes(int nr_idle_scan) const {
  const int nr = ScanCounter(nr_idle_scan);
  if (nr == INT_MAX) return kUnboundedProbes;
  return std::max(0, nr - 1);
}

void IdleMaskSelector::OnIdleEnter(int cpu) {
  SisSelector::OnIdleEnter(cpu);
  Update(cpu, true);
}

void IdleMaskSelector::OnTick(int cpu) {
  // sched_tick(): rq->idle_balance = idle_cpu(cpu); update(idle_balance).
  Update(cpu, internal::IdleCpu(state(), cpu));
}

void IdleMaskSelector::OnRebuild() {
  const IdleState& st = state();
  for (int l = 0; l < st.num_llcs(); ++l)
    mask(l).Store(st.topology().llc_span[static_cast<size_t>(l)]);
  if (st.options().v1_reset_state_on_rebuild) {
    for (CpuSlot& c : cpus_) c.last_idle_state = 1;
  }
}

void IdleMaskSelector::Update(int cpu, bool idle) {
  IdleState& st = state();
  CpuSlot& slot = cpus_[static_cast<size_t>(cpu)];
  const uint8_t now = (idle || internal::SchedIdleCpu(st, cpu)) ? 1 : 0;
  if (now == slot.last_idle_state) return;  // I12: no write without change
  const int l = st.llc_of(cpu);
  if (l < 0) return;  // I13: no sd_llc, no shared write
  // Relaxed: a fresh per-CPU check always follows a mask read (I4).
  if (now) {
    mask(l).Set(cpu);
  } else {
    mask(l).Clear(cpu);
  }
  slot.last_idle_state = now;
  st.CountSharedWrite(cpu);
}

void IdleMaskSelector::MaskCandidates(const LlcScan& scan, CpuMask& cpus) const {
  mask(scan.llc).SnapshotInto(cpus);
  cpus.And(state().topology().llc_span[static_cast<size_t>(scan.llc)]);
  if (scan.task.affinity != nullptr) cpus.And(*scan.task.affinity);
}

int IdleMaskSelector::SelectIdleCpu(const LlcScan& scan) {
  CpuMask& cpus = Scratch(0);
  MaskCandidates(scan, cpus);
  int nr = ScanCounter(Budget(scan.llc));
  if (nr <= 1) return -1;  // SIS_UTIL's cut, where the counter has no floor
  int idle_cpu = -1;
  const int i = ScanCpus(scan, cpus, ScanStart(scan.target), nr, idle_cpu, /*from_hint=*/true);
  return FinishScan(scan, i, idle_cpu);
}

std::vector<MaskSnapshot> IdleMaskSelector::Masks() const {
  std::vector<MaskSnapshot> out;
  for (int l = 0; l < state().num_llcs(); ++l) out.push_back({"idle_cpus", l, mask(l).Snapshot()});
  return out;
}

CpuMask IdleMaskSelector::IdleHint() const {
  CpuMask all(state().num_cpus());
  for (int l = 0; l < state().num_llcs(); ++l) all.Or(mask(l).Snapshot());
  return all;
}

std::string IdleMaskSelector::CheckQuiescent() const {
  for (int l = 0; l < state().num_llcs(); ++l) {
    const CpuMask m = mask(l).Snapshot();
    const CpuMask& span = state().topology().llc_span[static_cast<size_t>(l)];
    if (!m.IsSubsetOf(span)) {
      return absl::StrCat("I1: idle mask of LLC ", l, " = ", m.ToString(), " not within span ",
                          span.ToString());
    }
  }
  return "";
}

int V1Selector::ScanCounter(int nr_idle_scan) const {
  // The RFC's V1 ran under SIS_PROP, whose nr never fell below 4: no
  // budget-0 cut, at least 3 CPU-mode probes (Options::v1_min_nr).
  return std::max(nr_idle_scan + 1, state().options().v1_min_nr);
}

}  // namespace isolation::idle_select
