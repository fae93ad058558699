// SPDX-License-Identifier: GPL-2.0-or-later
// The selection strategies: the CFS family (V0, V1*, V2, V3, V5) and the
// sched_ext claim (V4g / V4n).

#include <algorithm>
#include <atomic>
#include <climits>
#include <memory>

#include "isolation/idle_select/idle_select.h"
#include "isolation/core/interleave.h"

namespace isolation::idle_select {
namespace {

bool Allowed(const CpuMask* affinity, int cpu) { return affinity == nullptr || affinity->Test(cpu); }

// select_fallback_rq() analogue when neither target nor prev is allowed.
int FirstAllowed(const IdleState& st, const CpuMask* affinity) {
  const CpuMask& online = st.topology().online;
  const int c = affinity == nullptr ? online.First() : online.FirstAnd(*affinity);
  return c < st.num_cpus() ? c : online.First();
}

// Select()'s contract (idle_select.h REQUIRES): compiled in only where
// contract checks are on (contract.h).
void ContractWake(const IdleState& st, const WakeTask& task, const WakeContext& ctx) {
  const int n = st.num_cpus();
  ISOLATION_CONTRACT(task.prev_cpu >= 0 && task.prev_cpu < n, "idle_select Select: prev_cpu %d outside [0, %d)",
                     task.prev_cpu, n);
  ISOLATION_CONTRACT(task.recent_used_cpu >= -1 && task.recent_used_cpu < n,
                     "idle_select Select: recent_used_cpu %d outside [-1, %d)", task.recent_used_cpu, n);
  ISOLATION_CONTRACT(ctx.target >= -1 && ctx.target < n, "idle_select Select: target %d outside [-1, %d)",
                     ctx.target, n);
  ISOLATION_CONTRACT(ctx.waker_cpu >= -1 && ctx.waker_cpu < n, "idle_select Select: waker_cpu %d outside [-1, %d)",
                     ctx.waker_cpu, n);
  ISOLATION_CONTRACT(task.affinity == nullptr || task.affinity->nbits() == n,
                     "idle_select Select: affinity of %d bits for %d cpus",
                     task.affinity == nullptr ? n : task.affinity->nbits(), n);
}

// What every selector holds: the shared state and its variant.
class SelectorBase : public IdleSelector {
 public:
  SelectorBase(IdleState& st, Variant v) : st_(st), v_(v) {}
  Variant variant() const override { return v_; }

 protected:
  IdleState& st_;
  Variant v_;
};

// ---------------------------------------------------------------------------
// CFS family: select_idle_sibling() with pluggable select_idle_cpu() sets.
// ---------------------------------------------------------------------------
class CfsSelector final : public SelectorBase {
 public:
  using SelectorBase::SelectorBase;

  Selection Select(WakeTask& task, const WakeContext& ctx) override {
    ContractWake(st_, task, ctx);
    Selection sel;
    const CpuMask* aff = task.affinity;
    const int prev = task.prev_cpu;
    int target = ctx.target >= 0 ? ctx.target : prev;
    if (!Allowed(aff, target)) target = Allowed(aff, prev) ? prev : FirstAllowed(st_, aff);
    const IdleTopology& topo = st_.topology();

    auto found = [&](int cpu) {
      sel.cpu = cpu;
      sel.outcome = Outcome::kIdleFound;
      return sel;
    };
    // 1. target itself.
    if (Candidate(target, task)) return found(target);
    // 2. prev, if it shares target's cache.
    if (prev != target && Allowed(aff, prev) && topo.SharesCache(prev, target) && Candidate(prev, task)) {
      return found(prev);
    }
    // (3. the per-CPU-kthread shortcut is not modelled.)
    // 4. recent_used_cpu; then p->recent_used_cpu = prev.
    const int recent = task.recent_used_cpu;
    task.recent_used_cpu = prev;
    if (recent >= 0 && recent != prev && recent != target && Allowed(aff, recent) &&
        topo.SharesCache(recent, target) && Candidate(recent, task)) {
      return found(recent);
    }
    // 6. target without sd_llc (domain-isolated): target.
    const int l = st_.llc_of(target);
    sel.cpu = target;
    if (l < 0) return sel;
    LlcShared& llc = st_.llc(l);
    // 7. SMT: the idle-core hint, else an idle sibling of prev.
    bool has_idle_core = false;
    if (topo.smt_width > 1 && st_.options().smt_preference) {
      has_idle_core = llc.has_idle_cores.load(std::memory_order_relaxed) != 0;
      if (!has_idle_core && topo.SharesCache(prev, target)) {
        const int i = SelectIdleSmt(task, prev, llc.span, sel);
        if (i >= 0) return found(i);
      }
    }
    // 8. select_idle_cpu().
    const int i = SelectIdleCpu(task, llc, has_idle_core, target, sel);
    if (i >= 0) return found(i);
    // 9. fallback: target.
    sel.cpu = target;
    sel.outcome = Outcome::kFallback;
    return sel;
  }

 private:
  // __select_idle_cpu(): available-idle or sched-idle (cookies not modelled).
  bool Candidate(int cpu, const WakeTask& task) const {
    if (st_.AvailableIdleCpu(cpu)) return true;
    if (task.sched_idle && st_.options().sched_idle_wakee_rule) return false;
    return st_.SchedIdleCpu(cpu);
  }

  // select_idle_smt(): a sibling of prev inside the LLC span (isolcpus may
  // split a core), allowed, idle.
  int SelectIdleSmt(const WakeTask& task, int prev, const CpuMask& span, Selection& sel) {
    for (int sib : st_.topology().siblings(prev)) {
      if (sib == prev || !span.Test(sib) || !Allowed(task.affinity, sib)) continue;
      ++sel.probes;
      if (Candidate(sib, task)) return sib;
    }
    return -1;
  }

  // select_idle_core(): the whole core of `cpu` idle -> cpu; remember the
  // first idle sibling in `cpus`; drop the core from `cpus`.
  int SelectIdleCore(const WakeTask& task, int cpu, CpuMask& cpus, int& idle_cpu, Selection& sel) {
    bool idle = true;
    for (int sib : st_.topology().siblings(cpu)) {
      ++sel.probes;
      if (!st_.AvailableIdleCpu(sib)) {
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
    cpus.AndNot(st_.topology().siblings(cpu));
    return -1;
  }

  // One pass of the select_idle_cpu() loop over `cpus` from `start`.
  // `nr` is the kernel's budget counter (nr_idle_scan + 1, decremented
  // before each CPU-mode probe).  Returns a CPU, or -1; `idle_cpu` carries
  // the core-mode fallback.  `from_mask`: candidates came from an idle mask
  // (a failed probe is a stale hit).
  int ScanPass(const WakeTask& task, CpuMask& cpus, int start, bool has_idle_core, int& nr,
               int& idle_cpu, bool from_mask, Selection& sel) {
    int result = -1;
    ForEachCpuWrap(cpus, start, [&](int cpu) {
      if (has_idle_core) {
        const int i = SelectIdleCore(task, cpu, cpus, idle_cpu, sel);
        if (i >= 0) {
          result = i;
          return false;
        }
        if (from_mask && !st_.AvailableIdleCpu(cpu)) ++sel.stale_hits;
        return true;
      }
      if (--nr <= 0) return false;
      ++sel.probes;
      if (Candidate(cpu, task)) {
        result = cpu;
        return false;
      }
      if (from_mask) ++sel.stale_hits;
      return true;
    });
    return result;
  }

  int SelectIdleCpu(const WakeTask& task, LlcShared& llc, bool has_idle_core, int target,
                    Selection& sel) {
    const int n = st_.num_cpus();
    CpuMask& cpus = ScratchMask(0, n);
    const bool mask_variant = UsesIdleMask(v_);
    // Candidate set.
    if (mask_variant) {
      llc.idle_cpus.SnapshotInto(cpus);
      cpus.And(llc.span);
    } else {
      cpus.CopyFrom(llc.span);
    }
    if (task.affinity != nullptr) cpus.And(*task.affinity);
    // Budget.
    const int budget = llc.nr_idle_scan.load(std::memory_order_relaxed);
    int nr;
    switch (v_) {
      case Variant::kV1Unbounded:
        nr = INT_MAX;
        break;
      case Variant::kV3:
        nr = st_.options().v3_max_probes + 1;
        break;
      default:
        nr = budget + 1;
        // The RFC's V1 ran under SIS_PROP, whose nr never fell below 4:
        // no budget-0 cut, at least 3 CPU-mode probes (Options::v1_min_nr).
        if (HasV1ScanFloor(v_)) nr = std::max(nr, st_.options().v1_min_nr);
        // SIS_UTIL: budget 0 -> "none" at once, even in idle-core mode, and
        // without clearing the hint (I8, I9).
        if (nr <= 1) return -1;
        break;
    }
    if (v_ == Variant::kV5 && !has_idle_core &&
        (!st_.options().v5_only_when_budget_short || budget < llc.weight)) {
      CpuMask& over = ScratchMask(1, n);
      llc.overloaded.SnapshotInto(over);
      cpus.AndNot(over);
    }
    int start = st_.options().scan_from_target_plus_one ? target + 1 : target;
    if (start >= n) start = 0;
    int idle_cpu = -1;
    int i = ScanPass(task, cpus, start, has_idle_core, nr, idle_cpu, mask_variant, sel);
    if (i < 0 && v_ == Variant::kV2 && (has_idle_core || nr > 1)) {
      // Pass 2: the rest of the span, with what is left of the budget.
      CpuMask& rest = ScratchMask(2, n);
      CpuMask& mask_now = ScratchMask(3, n);
      rest.CopyFrom(llc.span);
      llc.idle_cpus.SnapshotInto(mask_now);
      rest.AndNot(mask_now);
      if (task.affinity != nullptr) rest.And(*task.affinity);
      if (has_idle_core) {
        // Cores already rejected in pass 1 were removed from `cpus`.
        for (int c = 0; c < n; ++c) {
          if (!cpus.Test(c) && mask_now.Test(c)) rest.AndNot(st_.topology().siblings(c));
        }
      }
      i = ScanPass(task, rest, start, has_idle_core, nr, idle_cpu, false, sel);
    }
    if (i >= 0) return i;
    // A complete idle-core scan that found no idle core clears the hint.
    if (has_idle_core) llc.has_idle_cores.store(0, std::memory_order_relaxed);
    return idle_cpu;
  }
};

// ---------------------------------------------------------------------------
// sched_ext: scx_select_cpu_dfl() over claimable masks.
// ---------------------------------------------------------------------------
class ScxSelector final : public SelectorBase {
 public:
  using SelectorBase::SelectorBase;

  Selection Select(WakeTask& task, const WakeContext& ctx) override {
    ContractWake(st_, task, ctx);
    Selection sel;
    const int n = st_.num_cpus();
    const IdleTopology& topo = st_.topology();
    const int prev = task.prev_cpu;
    CpuMask& allowed = ScratchMask(0, n);
    allowed.CopyFrom(topo.online);
    if (task.affinity != nullptr) allowed.And(*task.affinity);
    auto claimed = [&](int cpu) {
      sel.cpu = cpu;
      sel.claimed = true;
      sel.outcome = Outcome::kIdleFound;
      return sel;
    };
    // Single allowed CPU: only try to claim prev (select_cpu_from_kfunc).
    if (allowed.Weight() == 1) {
      if (allowed.Test(prev) && Claim(prev, sel)) return claimed(prev);
      return sel;
    }
    const bool per_node = v_ == Variant::kV4Node;
    const int prev_llc = st_.llc_of(prev);
    const CpuMask* llc_span = prev_llc >= 0 ? &st_.llc(prev_llc).span : nullptr;
    // scx_idle_update_selcpu_topology(): the LLC step only if the LLC is
    // smaller than the online set; the node step only without per-node masks.
    if (llc_span != nullptr && llc_span->Weight() >= topo.online.Weight()) llc_span = nullptr;
    const CpuMask* node_span = &topo.node_span[static_cast<size_t>(topo.node_of[static_cast<size_t>(prev)])];
    if (per_node || node_span->Weight() >= topo.online.Weight()) node_span = nullptr;

    // (1) sync wakeup.
    const int waker = ctx.waker_cpu;
    // cpumask_any_and_distribute() keeps its cursor per CPU (the CPU running
    // the wakeup); a wakeup without a waker CPU uses this selector's own.
    std::atomic<int32_t>& cursor = waker >= 0 ? st_.cpu_state(waker).distribute_cursor : remote_cursor_;
    if (ctx.sync && waker >= 0) {
      if (allowed.Test(prev) && topo.SharesCache(prev, waker) && Claim(prev, sel)) return claimed(prev);
      const CpuIdleState& ws = st_.cpu_state(waker);
      const bool local_empty = ws.nr_running.load(std::memory_order_relaxed) <= 1;
      const bool node_ok = !ctx.node_restricted || topo.node_of[static_cast<size_t>(waker)] ==
                                                        topo.node_of[static_cast<size_t>(prev)];
      if (local_empty && node_ok && !st_.scx(st_.scx_scope_of(waker)).cpu.Empty() &&
          allowed.Test(waker)) {
        sel.cpu = waker;  // returned without a claim
        return sel;
      }
    }
    // (2) whole idle cores.
    if (topo.smt_width > 1 && st_.options().smt_preference) {
      if (allowed.Test(prev) && st_.scx(st_.scx_scope_of(prev)).smt.Test(prev) && Claim(prev, sel)) {
        return claimed(prev);
      }
      const int c = PickAnywhere(allowed, llc_span, node_span, prev, true, ctx.node_restricted, cursor, sel);
      if (c >= 0) return claimed(c);
    }
    // (3) prev.
    if (allowed.Test(prev) && Claim(prev, sel)) return claimed(prev);
    // (4) an idle sibling of prev (2197cecdb02c).
    if (topo.smt_width > 1) {
      for (int sib : topo.siblings(prev)) {
        if (sib != prev && allowed.Test(sib) && Claim(sib, sel)) return claimed(sib);
      }
    }
    // (5)-(7) LLC, node, anywhere.
    const int c = PickAnywhere(allowed, llc_span, node_span, prev, false, ctx.node_restricted, cursor, sel);
    if (c >= 0) return claimed(c);
    return sel;  // none: the caller keeps prev, "not idle"
  }

 private:
  std::atomic<int32_t> remote_cursor_{-1};  // distribute cursor of wakeups without a waker CPU

  // scx_idle_test_and_clear_cpu(): drop the core from smt (test before
  // write), then the fully ordered test-and-clear of the cpu bit.
  bool Claim(int cpu, Selection& sel) {
    ScxIdleMasks& m = st_.scx(st_.scx_scope_of(cpu));
    ++sel.probes;
    if (st_.topology().smt_width > 1) {
      for (int sib : st_.topology().siblings(cpu)) {
        if (m.smt.Test(sib)) m.smt.Clear(sib);
      }
    }
    ISOLATION_INTERLEAVE_POINT("idle_select.scx_claim.before_test_and_clear");
    // seq_cst: the kernel's test_and_clear_bit is fully ordered; exactly one
    // claimer sees the bit set per idle period (I5).
    if (m.cpu.TestAndClear(cpu)) return true;
    ++sel.claim_failures;
    return false;
  }

  // pick_idle_cpu_in_node(): any-and-distribute over smt (whole cores) or
  // cpu, restricted to `allowed` ∩ `span`, retrying lost claims.
  // Memory ordering: relaxed; the cursor only spreads picks, each pick is
  // validated by the fully ordered claim.
  int PickIn(int scope, const CpuMask& allowed, const CpuMask* span, bool core, std::atomic<int32_t>& cursor_ref,
             Selection& sel) {
    const int n = st_.num_cpus();
    int cursor = cursor_ref.load(std::memory_order_relaxed);
    CpuMask& cand = ScratchMask(1, n);
    for (;;) {
      ScxIdleMasks& m = st_.scx(scope);
      (core ? m.smt : m.cpu).SnapshotInto(cand);
      cand.And(allowed);
      if (span != nullptr) cand.And(*span);
      if (cursor >= n) cursor = -1;
      const int c = cand.NextWrap(cursor);
      if (c >= n) return -1;
      cursor = c;
      cursor_ref.store(c, std::memory_order_relaxed);
      if (Claim(c, sel)) return c;
    }
  }

  // Steps LLC -> node -> anywhere; per-node: start node, then the others by
  // increasing distance (|node - start|, the model's distance).
  int PickAnywhere(const CpuMask& allowed, const CpuMask* llc_span, const CpuMask* node_span, int prev,
                   bool core, bool node_restricted, std::atomic<int32_t>& cursor, Selection& sel) {
    const IdleTopology& topo = st_.topology();
    const int start = st_.scx_scope_of(prev);
    if (llc_span != nullptr) {
      const int c = PickIn(start, allowed, llc_span, core, cursor, sel);
      if (c >= 0) return c;
    }
    if (node_span != nullptr) {
      const int c = PickIn(start, allowed, node_span, core, cursor, sel);
      if (c >= 0) return c;
    }
    const CpuMask* restrict_to =
        node_restricted ? &topo.node_span[static_cast<size_t>(topo.node_of[static_cast<size_t>(prev)])] : nullptr;
    int c = PickIn(start, allowed, restrict_to, core, cursor, sel);
    if (c >= 0 || st_.num_scx_scopes() == 1 || node_restricted) return c;
    const int scopes = st_.num_scx_scopes();
    for (int d = 1; d < scopes; ++d) {
      for (int s : {start - d, start + d}) {
        if (s < 0 || s >= scopes) continue;
        c = PickIn(s, allowed, nullptr, core, cursor, sel);
        if (c >= 0) return c;
      }
    }
    return -1;
  }
};

}  // namespace

std::unique_ptr<IdleSelector> MakeSelector(IdleState& state, Variant variant) {
  if (IsScxVariant(variant)) return std::make_unique<ScxSelector>(state, variant);
  return std::make_unique<CfsSelector>(state, variant);
}

std::unique_ptr<IdleSelector> MakeSelector(IdleState& state) {
  return MakeSelector(state, state.options().variant);
}

}  // namespace isolation::idle_select
