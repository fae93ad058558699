// SPDX-License-Identifier: GPL-2.0-or-later
// V4g / V4n: sched_ext built-in idle tracking (kernel/sched/ext_idle.c @
// 0022b328504d): claimable `cpu` / `smt` masks, one global pair (V4g) or one
// per NUMA node (V4n, SCX_OPS_BUILTIN_IDLE_PER_NODE), kept on both idle edges
// (update_builtin_idle) and searched in scx_select_cpu_dfl() order.

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "idle_select/builtin_selectors.h"
#include "idle_select/state_internal.h"
#include "isolation/core/interleave.h"
#include "isolation/core/store_buffer.h"

namespace isolation::idle_select {
namespace {

// The `cpu` mask of a scope: bits set on idle entry (set_bit: a relaxed RMW),
// cleared on exit, claimed with a fully ordered test-and-clear.  Its accesses
// go through the store-buffer model (core/store_buffer.h) so that the
// lost-wakeup handshake of V4 users (S16) can be shown to need its fences:
// the idle-entry publish is the store half of an unordered RMW that the
// publisher's later loads may overtake.  Outside a StoreBufferModel each
// access is the plain atomic plus one relaxed flag load.
class ClaimMask {
 public:
  explicit ClaimMask(int nbits)
      : nbits_(nbits),
        nwords_((nbits + 63) / 64),
        lines_(new Line[static_cast<size_t>((nwords_ + 7) / 8 + 1)]) {
    for (int i = 0; i < nwords_; ++i) word(i).store(0, std::memory_order_relaxed);
  }

  // set_bit() on idle entry: relaxed (the kernel's is unordered).
  void Publish(int cpu) {
    std::atomic<uint64_t>& w = word(cpu / 64);
    const uint64_t old = w.fetch_or(Bit(cpu), std::memory_order_relaxed);
    if (store_buffer_internal::Active()) {
      store_buffer_internal::AfterRmw(&w, /*delayed=*/true);
      if ((old & Bit(cpu)) == 0) store_buffer_internal::DelayVisibility(&w, old);
    }
  }
  // clear_bit() on idle exit: relaxed.
  void Retract(int cpu) {
    std::atomic<uint64_t>& w = word(cpu / 64);
    w.fetch_and(~Bit(cpu), std::memory_order_relaxed);
    if (store_buffer_internal::Active()) store_buffer_internal::AfterRmw(&w, /*delayed=*/false);
  }
  // The claim: seq_cst, because the kernel's test_and_clear_bit is fully
  // ordered; exactly one claimer sees the bit set per idle period (I5).
  bool TestAndClear(int cpu) {
    std::atomic<uint64_t>& w = word(cpu / 64);
    const uint64_t old = w.fetch_and(~Bit(cpu), std::memory_order_seq_cst);
    if (store_buffer_internal::Active()) store_buffer_internal::AfterRmw(&w, /*delayed=*/false);
    return (old & Bit(cpu)) != 0;
  }
  bool Test(int cpu) const { return (Load(cpu / 64) & Bit(cpu)) != 0; }
  bool Empty() const {
    for (int i = 0; i < nwords_; ++i) {
      if (Load(i) != 0) return false;
    }
    return true;
  }
  // Word-by-word relaxed copy (not a consistent snapshot, as the kernel's
  // cpumask scans).
  void SnapshotInto(CpuMask& out) const {
    auto w = out.mutable_words();
    for (int i = 0; i < nwords_; ++i) w[static_cast<size_t>(i)] = Load(i);
  }
  CpuMask Snapshot() const {
    CpuMask m(nbits_);
    SnapshotInto(m);
    return m;
  }

 private:
  struct alignas(64) Line {
    std::atomic<uint64_t> w[8];
  };
  static uint64_t Bit(int cpu) { return uint64_t{1} << (cpu % 64); }
  std::atomic<uint64_t>& word(int i) const { return lines_[static_cast<size_t>(i / 8)].w[i % 8]; }
  uint64_t Load(int i) const { return store_buffer::Load(word(i), std::memory_order_relaxed); }

  int nbits_;
  int nwords_;
  std::unique_ptr<Line[]> lines_;
};

class ScxSelector final : public IdleSelector {
 public:
  ScxSelector(IdleState& state, bool per_node)
      : IdleSelector(state), per_node_(per_node), cpus_(static_cast<size_t>(state.num_cpus())) {
    const IdleTopology& topo = state.topology();
    const int n = state.num_cpus();
    const int scopes = per_node_ ? static_cast<int>(topo.node_span.size()) : 1;
    for (int s = 0; s < scopes; ++s) scopes_.push_back(std::make_unique<Scope>(n));
    // scx_idle_enable(): masks reset to the online CPUs (every CPU starts idle).
    for (int cpu = 0; cpu < n; ++cpu) {
      if (!topo.online.Test(cpu)) continue;
      Scope& m = scope(ScopeOf(cpu));
      m.cpu.Publish(cpu);
      if (topo.siblings(cpu).IsSubsetOf(topo.online)) m.smt.Set(cpu);
    }
  }

  SelectorTraits traits() const override {
    SelectorTraits t;
    t.claims_cpus = true;
    t.domain = SelectionDomain::kAnyAllowed;  // LLC, node, then anywhere
    t.idle_core_hint = false;
    t.idle_hint_clear = HintClear::kOnIdleExit;
    return t;
  }

  void OnIdleEnter(int cpu) override { UpdateIdle(cpu, true); }
  void OnIdleExit(int cpu) override { UpdateIdle(cpu, false); }
  // pick_task_idle() while idle: refresh without notifying (a2a3374c47c4).
  void OnIdleRefresh(int cpu) override {
    if (state().options().scx_idle_refresh && internal::CurrIsIdle(state(), cpu))
      UpdateIdle(cpu, true);
  }

  Selection Select(WakeTask& task, const WakeContext& ctx) override;

  std::vector<MaskSnapshot> Masks() const override {
    std::vector<MaskSnapshot> out;
    for (size_t s = 0; s < scopes_.size(); ++s) {
      out.push_back({"cpu", static_cast<int>(s), scopes_[s]->cpu.Snapshot()});
      out.push_back({"smt", static_cast<int>(s), scopes_[s]->smt.Snapshot()});
    }
    return out;
  }
  CpuMask IdleHint() const override {
    CpuMask all(state().num_cpus());
    for (const auto& s : scopes_) all.Or(s->cpu.Snapshot());
    return all;
  }
  // I1 (quiescent): smt ⊆ cpu ⊆ online, smt holds whole cores.
  std::string CheckQuiescent() const override {
    const IdleTopology& topo = state().topology();
    for (const auto& s : scopes_) {
      const CpuMask cpu = s->cpu.Snapshot();
      const CpuMask smt = s->smt.Snapshot();
      if (!cpu.IsSubsetOf(topo.online))
        return absl::StrCat("I1: scx cpu mask ", cpu.ToString(), " not online");
      if (!smt.IsSubsetOf(cpu)) {
        return absl::StrCat("I1: scx smt ", smt.ToString(), " not within cpu ", cpu.ToString());
      }
      for (int c : smt) {
        if (!topo.siblings(c).IsSubsetOf(cpu)) {
          return absl::StrCat("I1: scx smt holds CPU ", c, " whose core is not all idle");
        }
      }
    }
    return "";
  }

 private:
  struct Scope {
    explicit Scope(int n) : cpu(n), smt(n) {}
    ClaimMask cpu;      // idle logical CPUs
    AtomicCpuMask smt;  // CPUs whose whole core is idle
  };
  // The "any and distribute" cursor of wakeups running on this CPU.
  struct alignas(64) CpuSlot {
    std::atomic<int32_t> cursor{-1};
  };

  int ScopeOf(int cpu) const {
    return per_node_ ? state().topology().node_of[static_cast<size_t>(cpu)] : 0;
  }
  Scope& scope(int s) const { return *scopes_[static_cast<size_t>(s)]; }
  int num_scopes() const { return static_cast<int>(scopes_.size()); }

  void UpdateIdle(int cpu, bool idle);
  bool Claim(int cpu, Selection& sel);
  int PickIn(int scope, const CpuMask& allowed, const CpuMask* span, bool core,
             std::atomic<int32_t>& cursor_ref, Selection& sel);
  int PickAnywhere(const CpuMask& allowed, const CpuMask* llc_span, const CpuMask* node_span,
                   int prev, bool core, bool node_restricted, std::atomic<int32_t>& cursor,
                   Selection& sel);

  const bool per_node_;
  std::vector<std::unique_ptr<Scope>> scopes_;
  std::vector<CpuSlot> cpus_;
  std::atomic<int32_t> remote_cursor_{-1};  // cursor of wakeups without a waker CPU
};

// update_builtin_idle() (ext_idle.c): cpu bit on both edges, smt = whole
// idle cores.  Port deviation: smt uses atomic word RMW (stricter than the
// kernel's plain word ops); writes are test-before-write.
void ScxSelector::UpdateIdle(int cpu, bool idle) {
  IdleState& st = state();
  Scope& m = scope(ScopeOf(cpu));
  const IdleTopology& topo = st.topology();
  const CpuMask& sibs = topo.siblings(cpu);
  if (idle) {
    if (!m.cpu.Test(cpu)) {
      m.cpu.Publish(cpu);
      st.CountSharedWrite(cpu);
    }
    if (topo.smt_width > 1 && st.options().smt_preference) {
      bool whole = true;
      for (int sib : sibs) whole = whole && m.cpu.Test(sib);
      if (whole) {
        for (int sib : sibs) {
          if (!m.smt.Test(sib)) {
            m.smt.Set(sib);
            st.CountSharedWrite(cpu);
          }
        }
      }
    } else if (topo.smt_width == 1 && !m.smt.Test(cpu)) {
      m.smt.Set(cpu);  // without SMT every idle CPU is an idle core
    }
  } else {
    if (m.cpu.Test(cpu)) {
      m.cpu.Retract(cpu);
      st.CountSharedWrite(cpu);
    }
    for (int sib : sibs) {
      if (m.smt.Test(sib)) {
        m.smt.Clear(sib);
        st.CountSharedWrite(cpu);
      }
    }
  }
}

// scx_idle_test_and_clear_cpu(): drop the core from smt (test before write),
// then the fully ordered test-and-clear of the cpu bit.
bool ScxSelector::Claim(int cpu, Selection& sel) {
  Scope& m = scope(ScopeOf(cpu));
  ++sel.probes;
  if (state().topology().smt_width > 1) {
    for (int sib : state().topology().siblings(cpu)) {
      if (m.smt.Test(sib)) m.smt.Clear(sib);
    }
  }
  ISOLATION_INTERLEAVE_POINT("idle_select.scx_claim.before_test_and_clear");
  if (m.cpu.TestAndClear(cpu)) return true;
  ++sel.claim_failures;
  return false;
}

// pick_idle_cpu_in_node(): any-and-distribute over smt (whole cores) or cpu,
// restricted to `allowed` ∩ `span`, retrying lost claims.
// Memory ordering: relaxed; the cursor only spreads picks, each pick is
// validated by the fully ordered claim.
int ScxSelector::PickIn(int s, const CpuMask& allowed, const CpuMask* span, bool core,
                        std::atomic<int32_t>& cursor_ref, Selection& sel) {
  const int n = state().num_cpus();
  int cursor = cursor_ref.load(std::memory_order_relaxed);
  CpuMask& cand = internal::ScratchMask(1, n);
  for (;;) {
    Scope& m = scope(s);
    if (core) {
      m.smt.SnapshotInto(cand);
    } else {
      m.cpu.SnapshotInto(cand);
    }
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
int ScxSelector::PickAnywhere(const CpuMask& allowed, const CpuMask* llc_span,
                              const CpuMask* node_span, int prev, bool core, bool node_restricted,
                              std::atomic<int32_t>& cursor, Selection& sel) {
  const IdleTopology& topo = state().topology();
  const int start = ScopeOf(prev);
  if (llc_span != nullptr) {
    const int c = PickIn(start, allowed, llc_span, core, cursor, sel);
    if (c >= 0) return c;
  }
  if (node_span != nullptr) {
    const int c = PickIn(start, allowed, node_span, core, cursor, sel);
    if (c >= 0) return c;
  }
  const CpuMask* restrict_to =
      node_restricted
          ? &topo.node_span[static_cast<size_t>(topo.node_of[static_cast<size_t>(prev)])]
          : nullptr;
  int c = PickIn(start, allowed, restrict_to, core, cursor, sel);
  if (c >= 0 || num_scopes() == 1 || node_restricted) return c;
  const int scopes = num_scopes();
  for (int d = 1; d < scopes; ++d) {
    for (int s : {start - d, start + d}) {
      if (s < 0 || s >= scopes) continue;
      c = PickIn(s, allowed, nullptr, core, cursor, sel);
      if (c >= 0) return c;
    }
  }
  return -1;
}

// scx_select_cpu_dfl().
Selection ScxSelector::Select(WakeTask& task, const WakeContext& ctx) {
  IdleState& st = state();
  Selection sel;
  const int n = st.num_cpus();
  const IdleTopology& topo = st.topology();
  const int prev = task.prev_cpu;
  CpuMask& allowed = internal::ScratchMask(0, n);
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
  const int prev_llc = st.llc_of(prev);
  const CpuMask* llc_span = prev_llc >= 0 ? &topo.llc_span[static_cast<size_t>(prev_llc)] : nullptr;
  // scx_idle_update_selcpu_topology(): the LLC step only if the LLC is
  // smaller than the online set; the node step only without per-node masks.
  if (llc_span != nullptr && llc_span->Weight() >= topo.online.Weight()) llc_span = nullptr;
  const CpuMask* node_span =
      &topo.node_span[static_cast<size_t>(topo.node_of[static_cast<size_t>(prev)])];
  if (per_node_ || node_span->Weight() >= topo.online.Weight()) node_span = nullptr;

  // (1) sync wakeup.
  const int waker = ctx.waker_cpu;
  // cpumask_any_and_distribute() keeps its cursor per CPU (the CPU running
  // the wakeup); a wakeup without a waker CPU uses this selector's own.
  std::atomic<int32_t>& cursor =
      waker >= 0 ? cpus_[static_cast<size_t>(waker)].cursor : remote_cursor_;
  if (ctx.sync && waker >= 0) {
    if (allowed.Test(prev) && topo.SharesCache(prev, waker) && Claim(prev, sel))
      return claimed(prev);
    const bool local_empty =
        IdleStateAccess::Cpu(st, waker).nr_running.load(std::memory_order_relaxed) <= 1;
    const bool node_ok = !ctx.node_restricted || topo.node_of[static_cast<size_t>(waker)] ==
                                                     topo.node_of[static_cast<size_t>(prev)];
    if (local_empty && node_ok && !scope(ScopeOf(waker)).cpu.Empty() && allowed.Test(waker)) {
      sel.cpu = waker;  // returned without a claim
      return sel;
    }
  }
  // (2) whole idle cores.
  if (topo.smt_width > 1 && st.options().smt_preference) {
    if (allowed.Test(prev) && scope(ScopeOf(prev)).smt.Test(prev) && Claim(prev, sel))
      return claimed(prev);
    const int c =
        PickAnywhere(allowed, llc_span, node_span, prev, true, ctx.node_restricted, cursor, sel);
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
  const int c =
      PickAnywhere(allowed, llc_span, node_span, prev, false, ctx.node_restricted, cursor, sel);
  if (c >= 0) return claimed(c);
  return sel;  // none: the caller keeps prev, "not idle"
}

absl::StatusOr<std::unique_ptr<IdleSelector>> NewScx(IdleState& state, bool per_node) {
  const CpuMask& boot = state.topology().boot_domain_isolated;
  if (!boot.Empty()) {
    // scx_enable() refuses boot-time isolcpus=domain (9f391f94a173).
    return absl::FailedPreconditionError(
        absl::StrCat("idle_select: variant ", state.selector_name(),
                     " (sched_ext) refuses to load with isolcpus=domain CPUs ", boot.ToString(),
                     "; use an isolated cpuset partition instead"));
  }
  return std::unique_ptr<IdleSelector>(std::make_unique<ScxSelector>(state, per_node));
}

}  // namespace

absl::StatusOr<std::unique_ptr<IdleSelector>> NewV4Global(IdleState& state) {
  return NewScx(state, false);
}
absl::StatusOr<std::unique_ptr<IdleSelector>> NewV4Node(IdleState& state) {
  return NewScx(state, true);
}

// Registry entry (registry.cc registers it).
SelectorEntry V4GlobalEntry() {
  SelectorEntry e{
      "V4g",
      "sched_ext built-in idle tracking, one global cpu/smt mask pair, claim by test-and-clear "
      "(ext_idle.c @ 0022b328504d)",
      /*negative_control=*/false, SelectorFactory(&NewV4Global)};
  e.label = "V4";  // the seeds' name
  e.aliases = {"V4"};
  return e;
}

// Registry entry (registry.cc registers it).
SelectorEntry V4NodeEntry() {
  SelectorEntry e{
      "V4n",
      "sched_ext built-in idle tracking with per-NUMA-node masks (SCX_OPS_BUILTIN_IDLE_PER_NODE)",
      /*negative_control=*/false, SelectorFactory(&NewV4Node)};
  return e;
}

}  // namespace isolation::idle_select
