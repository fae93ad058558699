// SPDX-License-Identifier: GPL-2.0-or-later
// SisSelector: mainline select_idle_sibling() (built-in "V0") and the pieces
// of select_idle_cpu() that derived selectors reuse.

#include "isolation/idle_select/sis_selector.h"

#include "idle_select/builtin_selectors.h"
#include "idle_select/state_internal.h"

namespace isolation::idle_select {
namespace {

bool AllowedIn(const CpuMask* affinity, int cpu) {
  return affinity == nullptr || affinity->Test(cpu);
}

// select_fallback_rq() analogue when neither target nor prev is allowed.
int FirstAllowed(const IdleState& st, const CpuMask* affinity) {
  const CpuMask& online = st.topology().online;
  const int c = affinity == nullptr ? online.First() : online.FirstAnd(*affinity);
  return c < st.num_cpus() ? c : online.First();
}

}  // namespace

SelectorTraits SisSelector::traits() const {
  SelectorTraits t;
  t.claims_cpus = false;
  t.idle_core_hint = true;
  t.idle_hint_clear = HintClear::kNoHint;
  return t;
}

void SisSelector::OnIdleEnter(int cpu) {
  if (state().options().smt_preference) state().UpdateIdleCore(cpu);
}

CpuMask& SisSelector::Scratch(int which) const {
  return internal::ScratchMask(which, state().num_cpus());
}

bool SisSelector::Candidate(int cpu, const WakeTask& task) const {
  const IdleState& st = state();
  if (internal::AvailableIdleCpu(st, cpu)) return true;
  if (task.sched_idle && st.options().sched_idle_wakee_rule) return false;
  return internal::SchedIdleCpu(st, cpu);
}

int SisSelector::ScanStart(int target) const {
  int start = state().options().scan_from_target_plus_one ? target + 1 : target;
  if (start >= state().num_cpus()) start = 0;
  return start;
}

Selection SisSelector::Select(WakeTask& task, const WakeContext& ctx) {
  IdleState& st = state();
  Selection sel;
  const CpuMask* aff = task.affinity;
  const int prev = task.prev_cpu;
  int target = ctx.target >= 0 ? ctx.target : prev;
  // No online CPU allowed: nothing to return (I6), rather than a CPU outside
  // the affinity reported as idle.  The whole-mask test only when neither
  // target nor prev is an allowed online CPU (the kernel never sees an empty
  // affinity, so its fast path pays nothing for this).
  if (aff != nullptr) {
    const CpuMask& online = st.topology().online;
    const auto allowed_online = [&](int cpu) {
      return aff->TestInRange(cpu) && online.TestInRange(cpu);
    };
    if (!allowed_online(target) && !allowed_online(prev) && !aff->Intersects(online)) return sel;
  }
  if (!AllowedIn(aff, target)) target = AllowedIn(aff, prev) ? prev : FirstAllowed(st, aff);
  const IdleTopology& topo = st.topology();

  auto found = [&](int cpu) {
    sel.cpu = cpu;
    sel.outcome = Outcome::kIdleFound;
    return sel;
  };
  // 1. target itself.
  if (Candidate(target, task)) return found(target);
  // 2. prev, if it shares target's cache.
  if (prev != target && AllowedIn(aff, prev) && topo.SharesCache(prev, target) &&
      Candidate(prev, task)) {
    return found(prev);
  }
  // (3. the per-CPU-kthread shortcut is not modelled.)
  // 4. recent_used_cpu; then p->recent_used_cpu = prev.
  const int recent = task.recent_used_cpu;
  task.recent_used_cpu = prev;
  if (recent >= 0 && recent != prev && recent != target && AllowedIn(aff, recent) &&
      topo.SharesCache(recent, target) && Candidate(recent, task)) {
    return found(recent);
  }
  // 6. target without sd_llc (domain-isolated): target.
  const int l = st.llc_of(target);
  sel.cpu = target;
  if (l < 0) return sel;
  // 7. SMT: the idle-core hint, else an idle sibling of prev.
  bool has_idle_core = false;
  if (topo.smt_width > 1 && st.options().smt_preference) {
    has_idle_core = IdleStateAccess::Llc(st, l).has_idle_cores.load(std::memory_order_relaxed) != 0;
    if (!has_idle_core && topo.SharesCache(prev, target)) {
      const int i = SelectIdleSmt(task, prev, topo.llc_span[static_cast<size_t>(l)], sel);
      if (i >= 0) return found(i);
    }
  }
  // 8. select_idle_cpu().
  const int i = SelectIdleCpu(LlcScan{task, l, target, has_idle_core, sel});
  if (i >= 0) return found(i);
  // 9. fallback: target.
  sel.cpu = target;
  sel.outcome = Outcome::kFallback;
  return sel;
}

int SisSelector::SelectIdleSmt(const WakeTask& task, int prev, const CpuMask& span,
                               Selection& sel) const {
  for (int sib : state().topology().siblings(prev)) {
    if (sib == prev || !span.Test(sib) || !Allowed(task, sib)) continue;
    ++sel.probes;
    if (Candidate(sib, task)) return sib;
  }
  return -1;
}

// select_idle_core(): the whole core of `cpu` idle -> cpu; remember the first
// idle sibling in `cpus`; drop the core from `cpus`.
int SisSelector::SelectIdleCore(const WakeTask& task, int cpu, CpuMask& cpus, int& idle_cpu,
                                Selection& sel) const {
  const IdleState& st = state();
  bool idle = true;
  for (int sib : st.topology().siblings(cpu)) {
    ++sel.probes;
    if (!internal::AvailableIdleCpu(st, sib)) {
      idle = false;
      if (idle_cpu == -1) {
        if (Candidate(sib, task) && cpus.Test(sib)) {
          idle_cpu = sib;
          break;
        }
        continue;
      }
      break;
    }
    if (idle_cpu == -1 && cpus.Test(sib)) idle_cpu = sib;
  }
  if (idle) return cpu;
  cpus.AndNot(st.topology().siblings(cpu));
  return -1;
}

int SisSelector::ScanCpus(const LlcScan& scan, CpuMask& cpus, int start, int& nr, int& idle_cpu,
                          bool from_hint) {
  Selection& sel = scan.sel;
  int result = -1;
  ForEachCpuWrap(cpus, start, [&](int cpu) {
    if (scan.has_idle_core) {
      const int i = SelectIdleCore(scan.task, cpu, cpus, idle_cpu, sel);
      if (i >= 0) {
        result = i;
        return false;
      }
      if (from_hint && !internal::AvailableIdleCpu(state(), cpu)) ++sel.stale_hits;
      return true;
    }
    if (--nr <= 0) return false;
    ++sel.probes;
    if (Candidate(cpu, scan.task)) {
      result = cpu;
      return false;
    }
    if (from_hint) ++sel.stale_hits;
    return true;
  });
  return result;
}

int SisSelector::FinishScan(const LlcScan& scan, int found, int idle_cpu) {
  if (found >= 0) return found;
  // A complete idle-core scan that found no idle core clears the hint (I9).
  if (scan.has_idle_core) state().ClearIdleCores(scan.llc);
  return idle_cpu;
}

// Mainline select_idle_cpu(): LLC span ∩ affinity under the SIS_UTIL budget.
int SisSelector::SelectIdleCpu(const LlcScan& scan) {
  IdleState& st = state();
  CpuMask& cpus = Scratch(0);
  cpus.CopyFrom(st.topology().llc_span[static_cast<size_t>(scan.llc)]);
  if (scan.task.affinity != nullptr) cpus.And(*scan.task.affinity);
  // SIS_UTIL: nr = nr_idle_scan + 1; budget 0 -> "none" at once, even in
  // idle-core mode, and without clearing the hint (I8, I9).
  int nr = IdleStateAccess::Llc(st, scan.llc).nr_idle_scan.load(std::memory_order_relaxed) + 1;
  if (nr <= 1) return -1;
  int idle_cpu = -1;
  const int i = ScanCpus(scan, cpus, ScanStart(scan.target), nr, idle_cpu, /*from_hint=*/false);
  return FinishScan(scan, i, idle_cpu);
}

absl::StatusOr<std::unique_ptr<IdleSelector>> NewV0(IdleState& state) {
  return std::unique_ptr<IdleSelector>(std::make_unique<SisSelector>(state));
}

// Registry entry (registry.cc registers it).
SelectorEntry V0Entry() {
  SelectorEntry e{"V0",
                  "mainline select_idle_sibling(): LLC span ∩ affinity from target+1 under the "
                  "SIS_UTIL budget, "
                  "idle-core mode (kernel/sched/fair.c ~v6.15)",
                  /*negative_control=*/false, SelectorFactory(&NewV0)};
  return e;
}

}  // namespace isolation::idle_select
