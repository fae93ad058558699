// SPDX-License-Identifier: GPL-2.0-or-later
// The idle_select kit's long schedules: 10^5 selections on one
// selector instance over schedules built to reach the rare paths, every
// applicable property asserted after every selection; the domain check from
// the declared traits (SelectorTraits::domain); the empty-affinity answer.
// Labels are those of docs/idle_select.md.

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "isolation/idle_select/selector.h"
#include "isolation/testing/idle_select.h"
#include "testing/idle_select_checks.h"

namespace isolation::testing::idle_select_conformance {
namespace {

// The machine: 4 LLCs x 8 cores x 2 threads = 64 CPUs on 2 nodes.
constexpr int kLlcs = 4;
constexpr int kCpusPerLlc = 16;
constexpr int kCpus = kLlcs * kCpusPerLlc;

// The schedule shapes, one per phase in turn.
enum Shape : int {
  kIsolatedFirst,    // isolated CPUs right after the target in scan order (and as prev, recent,
                     // target)
  kLlcIdlePatterns,  // targets in LLCs without an idle CPU while others have one
  kOneCpu,           // affinity of exactly one CPU
  kOneCpuPerLlc,     // affinity of one CPU per LLC
  kDisjointFromLlc,  // affinity disjoint from the target's LLC
  kRandomMix,        // random affinities (nullptr, full, sparse), stale hints, SCHED_IDLE wakees
  kNumShapes,
};

const char* ShapeName(int s) {
  static const char* const kNames[] = {
      "isolated-first",           "llc-idle-patterns",          "one-cpu-affinity",
      "one-cpu-per-llc-affinity", "disjoint-from-llc-affinity", "random-mix"};
  return kNames[s];
}

struct StressPlan {
  uint64_t seed;
  int phases;                // each: one shape x one pattern of LLCs with and without an idle CPU
  int selections_per_phase;  // selections on the one instance per phase
  bool domain_only;          // assert only the domain (D1)
};

class RarePathStress {
 public:
  RarePathStress(const std::string& sel, const StressPlan& plan, Violations& v)
      : plan_(plan), rng_(plan.seed), v_(v) {
    is::Options o;
    o.sched_idle_wakee_rule = true;  // SCHED_IDLE wakees must not get a merely sched-idle CPU
    st_ = StateOrViolation(sel, is::IdleTopology::Uniform(kLlcs, kCpusPerLlc / 2, 2, 2), o, v);
    if (st_ == nullptr) return;
    traits_ = st_->selector().traits();
    iso_ = CpuMask(kCpus);
    claimed_.assign(kCpus, 0);
    llc_has_idle_.assign(kLlcs, true);
  }

  void Run() {
    if (st_ == nullptr) return;
    for (int phase = 0; phase < plan_.phases && v_.size() < 5; ++phase) {
      BeginPhase(phase);
      for (int i = 0; i < plan_.selections_per_phase && v_.size() < 5; ++i) {
        SelectOnce(phase, i);
        const int steps = 1 + static_cast<int>(rng_() % 2);
        for (int s = 0; s < steps; ++s) Step();
      }
      if (!plan_.domain_only) {
        if (std::string e = st_->CheckSubsetInvariant(); !e.empty()) Fail(phase, -1, e);
      }
    }
    if (!v_.empty()) return;
    // The schedule reached what it is built for (a broken schedule fails).
    if (selections_ != int64_t{plan_.phases} * plan_.selections_per_phase) {
      v_.push_back(absl::StrCat("schedule: ", selections_, " selections run"));
    }
    for (int shape = 0; shape < kNumShapes; ++shape) {
      for (int idle = 0; idle < 2; ++idle) {
        if (reached_[shape][idle] == 0) {
          v_.push_back(absl::StrCat("schedule: shape ", ShapeName(shape),
                                    " never woke a task whose target LLC ",
                                    idle != 0 ? "had" : "had no", " idle CPU"));
        }
      }
    }
  }

 private:
  int Rand(int n) { return static_cast<int>(rng_() % static_cast<uint64_t>(n)); }
  bool OneIn(int n) { return Rand(n) == 0; }
  static int HwLlc(int cpu) { return cpu / kCpusPerLlc; }

  // --- transitions (the claim bookkeeping of I5: any idle edge of a CPU
  // opens a new idle period) ---------------------------------------------------
  void Busy(int c, bool settle) {
    claimed_[static_cast<size_t>(c)] = 0;
    MakeBusy(*st_, c);
    if (settle) st_->Tick(c);
  }
  void Idle(int c, bool stop_tick) {
    claimed_[static_cast<size_t>(c)] = 0;
    st_->SetNrRunning(c, 0);
    st_->SetNrSchedIdle(c, 0);
    st_->SetWakePending(c, false);
    st_->IdleEnter(c);
    if (stop_tick) st_->TickStop(c);
  }
  // A state in which `c` is not a candidate for any wakee (an LLC without an
  // idle CPU): busy (hint stale or settled), overloaded, or idle with a
  // wakeup in flight or landed (the idle task still current).
  void NotIdle(int c) {
    switch (Rand(5)) {
      case 0:
        Busy(c, false);
        break;  // masks cleared at the tick stay stale
      case 1:
        Busy(c, true);
        break;
      case 2:
        Busy(c, false);
        st_->SetNrRunning(c, 3);  // overloaded (V5's filter)
        st_->Tick(c);
        break;
      case 3:
        Idle(c, true);
        st_->SetWakePending(c, true);
        break;
      case 4:
        Idle(c, OneIn(2));
        st_->Enqueue(c);  // the wakeup landed, the switch is to come
        break;
    }
  }
  void AnyState(int c) {
    switch (Rand(8)) {
      case 0:
      case 1:
        Idle(c, true);
        break;
      case 2:
        Idle(c, false);
        break;  // a short idle: the tick keeps running
      case 3:
        Busy(c, OneIn(2));
        st_->SetNrSchedIdle(c, 1);  // runs only a SCHED_IDLE task
        break;
      case 4:
        if (st_->cpu(c).curr_is_idle) {
          claimed_[static_cast<size_t>(c)] = 0;
          st_->IdleRefresh(c);  // another idle-loop pass
        } else {
          st_->Tick(c);
        }
        break;
      default:
        NotIdle(c);
        break;
    }
  }
  bool Housekeeping(int c) const { return !iso_.Test(c); }
  bool HasAvailableIdle(int llc) const {
    for (int c = llc * kCpusPerLlc; c < (llc + 1) * kCpusPerLlc; ++c) {
      if (Housekeeping(c) && st_->AvailableIdleCpu(c)) return true;
    }
    return false;
  }
  int RandomHousekeeping(int llc) {
    for (;;) {
      const int c = llc * kCpusPerLlc + Rand(kCpusPerLlc);
      if (Housekeeping(c)) return c;
    }
  }

  // One transition of one CPU that keeps the phase's LLC pattern.
  void Step() {
    const int c = Rand(kCpus);
    const int l = HwLlc(c);
    if (!Housekeeping(c)) {
      OneIn(2) ? Idle(c, OneIn(2)) : NotIdle(c);
    } else if (!llc_has_idle_[static_cast<size_t>(l)]) {
      OneIn(4) ? st_->Tick(c) : NotIdle(c);
    } else {
      AnyState(c);
    }
    if (llc_has_idle_[static_cast<size_t>(l)] && !HasAvailableIdle(l))
      Idle(RandomHousekeeping(l), OneIn(2));
  }

  void Rebuild(int cycle) {
    iso_ = CpuMask(kCpus);
    for (int l = 0; l < kLlcs; ++l) {
      const int base = l * kCpusPerLlc;
      const int o = (cycle * 5 + l * 3) % kCpusPerLlc;
      iso_.Set(base + o);
      iso_.Set(base + (o + 1) % kCpusPerLlc);
      if (cycle % 4 == 3) iso_.Set(base + (o + 7) % kCpusPerLlc);
    }
    if (absl::Status s = st_->Rebuild(iso_); !s.ok()) v_.push_back("rebuild: " + s.ToString());
    // The CPU just before each isolated one in its LLC's scan order
    // (target + 1, wrapping inside the LLC): a scan over anything but the
    // housekeeping span meets the isolated CPU first.
    before_iso_.clear();
    for (int c : iso_) {
      const int b = c % kCpusPerLlc == 0 ? c + kCpusPerLlc - 1 : c - 1;
      if (Housekeeping(b)) before_iso_.push_back(b);
    }
  }

  void BeginPhase(int phase) {
    shape_ = phase % kNumShapes;
    const int cycle = phase / kNumShapes;
    const int pattern = cycle % (1 << kLlcs);  // bit l: LLC l has an idle CPU
    if (phase % kNumShapes == 0) Rebuild(cycle);
    for (int l = 0; l < kLlcs; ++l) {
      static constexpr int kBudgets[] = {0, 1, 2, 3, 8, 16};
      (void)st_->SetBudget(l, kBudgets[Rand(6)]);
      llc_has_idle_[static_cast<size_t>(l)] = ((pattern >> l) & 1) != 0;
      const bool exactly_one = OneIn(2);
      for (int c = l * kCpusPerLlc; c < (l + 1) * kCpusPerLlc; ++c) {
        if (!Housekeeping(c)) {
          OneIn(2) ? Idle(c, true) : NotIdle(c);  // isolated: idle half the time
        } else if (!llc_has_idle_[static_cast<size_t>(l)] || exactly_one) {
          NotIdle(c);
        } else {
          AnyState(c);
        }
      }
      if (llc_has_idle_[static_cast<size_t>(l)] && (exactly_one || !HasAvailableIdle(l))) {
        Idle(RandomHousekeeping(l), OneIn(2));
      }
      if (OneIn(3)) (void)st_->SetIdleCoresHint(l, true);  // true or false hints
    }
  }

  int IdleCpuOutside(int llc) {
    std::vector<int> idle;
    for (int c = 0; c < kCpus; ++c) {
      if (HwLlc(c) != llc && st_->AvailableIdleCpu(c)) idle.push_back(c);
    }
    return idle.empty() ? Rand(kCpus)
                        : idle[static_cast<size_t>(Rand(static_cast<int>(idle.size())))];
  }
  int LlcWithoutIdle() {
    std::vector<int> none;
    for (int l = 0; l < kLlcs; ++l) {
      if (!llc_has_idle_[static_cast<size_t>(l)]) none.push_back(l);
    }
    return none.empty() ? Rand(kLlcs)
                        : none[static_cast<size_t>(Rand(static_cast<int>(none.size())))];
  }

  // The wakeup of this shape: task, context and affinity (aff_ or nullptr).
  const CpuMask* MakeWakeup(is::WakeTask& t, is::WakeContext& ctx) {
    t.prev_cpu = Rand(kCpus);
    t.recent_used_cpu = OneIn(4) ? -1 : Rand(kCpus);
    t.sched_idle = OneIn(4);
    ctx.target = OneIn(8) ? -1 : Rand(kCpus);
    ctx.waker_cpu = OneIn(4) ? -1 : Rand(kCpus);
    ctx.sync = OneIn(3);
    ctx.node_restricted = OneIn(4);
    aff_ = CpuMask::Full(kCpus);
    switch (shape_) {
      case kIsolatedFirst: {
        if (!before_iso_.empty() && !OneIn(4)) {
          ctx.target = before_iso_[static_cast<size_t>(Rand(static_cast<int>(before_iso_.size())))];
        } else if (OneIn(2)) {
          ctx.target = iso_.Nth(Rand(iso_.Weight()));
        }
        if (OneIn(2)) t.recent_used_cpu = iso_.Nth(Rand(iso_.Weight()));
        if (OneIn(4)) t.prev_cpu = iso_.Nth(Rand(iso_.Weight()));
        return OneIn(2) ? nullptr : &aff_;
      }
      case kLlcIdlePatterns: {
        const int l = LlcWithoutIdle();
        ctx.target = l * kCpusPerLlc + Rand(kCpusPerLlc);
        if (OneIn(2)) t.prev_cpu = l * kCpusPerLlc + Rand(kCpusPerLlc);
        if (OneIn(2)) t.recent_used_cpu = IdleCpuOutside(l);
        return OneIn(2) ? nullptr : &aff_;
      }
      case kOneCpu: {
        const int tgt = ctx.target >= 0 ? ctx.target : t.prev_cpu;
        int only = Rand(kCpus);
        switch (Rand(5)) {
          case 0:
            only = tgt;
            break;
          case 1:
            only = t.prev_cpu;
            break;
          case 2:
            only = iso_.Nth(Rand(iso_.Weight()));
            break;
          case 3:
            only = IdleCpuOutside(HwLlc(tgt));
            break;
          default:
            break;
        }
        aff_ = CpuMask(kCpus);
        aff_.Set(only);
        return &aff_;
      }
      case kOneCpuPerLlc: {
        aff_ = CpuMask(kCpus);
        for (int l = 0; l < kLlcs; ++l) {
          int pick = l * kCpusPerLlc + Rand(kCpusPerLlc);
          if (OneIn(2)) {
            for (int c = l * kCpusPerLlc; c < (l + 1) * kCpusPerLlc; ++c) {
              if (st_->AvailableIdleCpu(c)) pick = c;
            }
          }
          aff_.Set(pick);
        }
        return &aff_;
      }
      case kDisjointFromLlc: {
        const int tgt = ctx.target >= 0 ? ctx.target : t.prev_cpu;
        const int l = HwLlc(tgt);
        aff_.AndNot(CpuMask::Range(kCpus, l * kCpusPerLlc, (l + 1) * kCpusPerLlc - 1));
        if (OneIn(3)) {  // and another LLC
          const int m = (l + 1 + Rand(kLlcs - 1)) % kLlcs;
          aff_.AndNot(CpuMask::Range(kCpus, m * kCpusPerLlc, (m + 1) * kCpusPerLlc - 1));
        }
        if (OneIn(2)) t.prev_cpu = IdleCpuOutside(l);
        return &aff_;
      }
      default: {
        const int mode = Rand(4);
        if (mode == 0) return nullptr;
        if (mode == 1) return &aff_;
        aff_ = CpuMask(kCpus);
        for (int c = 0; c < kCpus; ++c) {
          if (Rand(mode == 2 ? 2 : 8) == 0) aff_.Set(c);
        }
        if (aff_.Empty()) aff_.Set(Rand(kCpus));
        return &aff_;
      }
    }
  }

  static bool Allowed(const CpuMask* aff, int c) { return aff == nullptr || aff->Test(c); }
  // __select_idle_cpu()'s fresh check for this wakee (the 2026 rule on).
  bool Candidate(int c, const is::WakeTask& t) const {
    return st_->AvailableIdleCpu(c) || (st_->SchedIdleCpu(c) && !t.sched_idle);
  }
  // The target after the affinity fallback (SelectionDomain::kTargetLlc).
  int EffectiveTarget(const is::WakeTask& t, const is::WakeContext& ctx) const {
    const int target = ctx.target >= 0 ? ctx.target : t.prev_cpu;
    if (Allowed(t.affinity, target)) return target;
    if (Allowed(t.affinity, t.prev_cpu)) return t.prev_cpu;
    const CpuMask& online = st_->topology().online;
    return t.affinity == nullptr ? online.First() : online.FirstAnd(*t.affinity);
  }

  std::string Describe(const is::WakeTask& t, const is::WakeContext& ctx, int recent_before) const {
    return absl::StrCat("prev ", t.prev_cpu, ", target ", ctx.target, ", recent_used_cpu ",
                        recent_before, ", waker ", ctx.waker_cpu, ctx.sync ? " sync" : "",
                        ctx.node_restricted ? " node_restricted" : "",
                        t.sched_idle ? ", SCHED_IDLE wakee" : "", ", affinity ",
                        t.affinity == nullptr ? "all" : t.affinity->ToString(), ", isolated ",
                        iso_.ToString());
  }
  std::string CpuState(int c) const {
    const is::CpuSnapshot s = st_->cpu(c);
    return absl::StrCat("cpu ", c, " {curr_is_idle ", s.curr_is_idle, ", nr_running ", s.nr_running,
                        ", nr_sched_idle ", s.nr_sched_idle, ", ttwu_pending ", s.ttwu_pending,
                        "}");
  }
  void Fail(int phase, int i, const std::string& what) {
    v_.push_back(absl::StrCat("phase ", phase, " (", ShapeName(phase % kNumShapes), ") selection ",
                              i, " of ", plan_.selections_per_phase, ": ", what));
  }

  void SelectOnce(int phase, int i) {
    is::WakeTask t;
    is::WakeContext ctx;
    t.affinity = MakeWakeup(t, ctx);
    const int recent_before = t.recent_used_cpu;
    const int tgt = EffectiveTarget(t, ctx);
    const bool scan = !traits_.claims_cpus;
    ++reached_[shape_][Housekeeping(tgt) && HasAvailableIdle(HwLlc(tgt)) ? 1 : 0];
    // I7's expectation, from the state before the selection.
    int want = -1;
    bool returns_early = false;  // at target or prev: recent_used_cpu untouched
    if (scan && !plan_.domain_only) {
      const is::IdleTopology& topo = st_->topology();
      const int prev = t.prev_cpu;
      if (Candidate(tgt, t)) {
        want = tgt;
        returns_early = true;
      } else if (prev != tgt && Allowed(t.affinity, prev) && topo.SharesCache(prev, tgt) &&
                 Candidate(prev, t)) {
        want = prev;
        returns_early = true;
      } else if (recent_before >= 0 && recent_before != prev && recent_before != tgt &&
                 Allowed(t.affinity, recent_before) && topo.SharesCache(recent_before, tgt) &&
                 Candidate(recent_before, t)) {
        want = recent_before;
      }
    }
    // I8's limit where the selection can only probe in CPU mode: the
    // target's LLC exists, its idle-core hint is clear and prev does not
    // share it (no select_idle_smt() probe, which the budget does not bound).
    int probe_limit = is::kUnboundedProbes;
    if (scan && !plan_.domain_only) {
      const int l = st_->llc_of(tgt);
      if (l >= 0 && !st_->has_idle_cores(l) && !st_->topology().SharesCache(t.prev_cpu, tgt)) {
        probe_limit = st_->selector().MaxScanProbes(st_->nr_idle_scan(l));
      }
    }
    const is::Selection s = st_->Select(t, ctx);
    ++selections_;
    const int c = s.cpu;
    auto fail = [&](const std::string& what) {
      Fail(phase, i, what + " (" + Describe(t, ctx, recent_before) + ")");
    };

    // D1: the declared domain.
    if (c >= 0 && c < kCpus) {
      if (traits_.domain == is::SelectionDomain::kTargetLlc) {
        const int l = st_->llc_of(tgt);
        if (c != tgt && (l < 0 || !st_->llc_span(l).Test(c))) {
          fail(absl::StrCat("D1: cpu ", c, " outside the declared domain (target ", tgt,
                            l < 0 ? " without sd_llc"
                                  : absl::StrCat(" and its LLC span ", st_->llc_span(l).ToString()),
                            ")"));
        }
      } else if (ctx.node_restricted) {
        const std::vector<int>& node = st_->topology().node_of;
        if (node[static_cast<size_t>(c)] != node[static_cast<size_t>(t.prev_cpu)]) {
          fail(absl::StrCat("D1: node-restricted wakeup got cpu ", c, " of node ",
                            node[static_cast<size_t>(c)], ", prev ", t.prev_cpu, " is on node ",
                            node[static_cast<size_t>(t.prev_cpu)]));
        }
      }
    }
    if (plan_.domain_only) {
      AfterSelection(s);
      return;
    }
    // I6: a CPU (scan style), a CPU or none (claim style).
    if (c < (scan ? 0 : -1) || c >= kCpus) {
      fail(absl::StrCat("I6: returned cpu ", c));
      return;
    }
    // I3: allowed and online.
    if (c >= 0 && (!Allowed(t.affinity, c) || !st_->topology().online.Test(c))) {
      fail(absl::StrCat("I3: cpu ", c, " not allowed"));
    }
    if (scan) {
      if (s.claimed) fail(absl::StrCat("scan-style selector claimed cpu ", c));
      // I4: returned as idle -> passes the fresh per-CPU check now.
      if (s.idle_found() && !Candidate(c, t)) fail("I4: returned as idle " + CpuState(c));
      // The fallback is the target.
      if (!s.idle_found() && c != tgt)
        fail(absl::StrCat("fallback to cpu ", c, ", not the target ", tgt));
      // I2: a domain-isolated CPU only as the target.
      if (iso_.Test(c) && c != tgt)
        fail(absl::StrCat("I2: isolated cpu ", c, " returned for target ", tgt));
      // I8: CPU-mode probes within the declared bound.
      if (s.probes > probe_limit) {
        fail(absl::StrCat("I8: ", s.probes, " probes, limit MaxScanProbes(",
                          st_->nr_idle_scan(st_->llc_of(tgt)), ") = ", probe_limit));
      }
      // I7: target, prev, recent_used_cpu in that order.
      if (want >= 0 && c != want) {
        fail(absl::StrCat("I7: got cpu ", c, ", want ", want, " (", CpuState(want), ")"));
      } else {
        // Left untouched when target or prev won, else rewritten to prev.
        const int want_recent = returns_early ? recent_before : t.prev_cpu;
        if (t.recent_used_cpu != want_recent) {
          fail(absl::StrCat("I7: recent_used_cpu ", t.recent_used_cpu,
                            " after the selection, want ", want_recent));
        }
      }
    } else {
      if (s.claimed != s.idle_found()) {
        fail(absl::StrCat("claim style: claimed ", s.claimed, " but idle_found ", s.idle_found()));
      }
      if (s.claimed) {
        // I5: one claim per idle period, of a CPU whose idle task runs.
        if (!st_->cpu(c).curr_is_idle) fail("I5: claimed a CPU that is not idle: " + CpuState(c));
        if (claimed_[static_cast<size_t>(c)] != 0) {
          fail(absl::StrCat("I5: cpu ", c, " claimed twice in one idle period"));
        }
      } else if (c >= 0 && !(ctx.sync && c == ctx.waker_cpu)) {
        fail(absl::StrCat("claim style: cpu ", c,
                          " returned without a claim and not the sync waker"));
      }
    }
    AfterSelection(s);
  }

  void AfterSelection(const is::Selection& s) {
    if (s.cpu < 0) return;
    if (s.claimed) claimed_[static_cast<size_t>(s.cpu)] = 1;
    // The task runs there half of the time (claim style: the kick is
    // answered); else the CPU stays as it is (a claimed CPU stays claimed
    // until its next idle-loop pass).
    if ((s.claimed || s.idle_found()) && OneIn(2)) {
      Busy(s.cpu, OneIn(2));
      const int l = HwLlc(s.cpu);
      if (llc_has_idle_[static_cast<size_t>(l)] && !HasAvailableIdle(l))
        Idle(RandomHousekeeping(l), OneIn(2));
    }
  }

  StressPlan plan_;
  std::mt19937_64 rng_;
  Violations& v_;
  std::unique_ptr<is::IdleState> st_;
  is::SelectorTraits traits_;
  CpuMask iso_;
  CpuMask aff_;
  std::vector<int> before_iso_;
  std::vector<char> claimed_;       // claimed in the CPU's current idle period (I5)
  std::vector<bool> llc_has_idle_;  // the phase's pattern, per LLC
  int shape_ = 0;
  int64_t selections_ = 0;
  int64_t reached_[kNumShapes][2] = {};  // per shape: target's LLC without / with an idle CPU
};

}  // namespace

// 250 phases x 400 selections = 100,000 selections on one instance.
Violations CheckRarePaths(const std::string& sel) {
  Violations v;
  RarePathStress stress(
      sel, {.seed = 27, .phases = 250, .selections_per_phase = 400, .domain_only = false}, v);
  stress.Run();
  return v;
}

// 96 phases (each shape with each of the 16 LLC patterns) x 150 selections.
Violations CheckDomain(const std::string& sel) {
  Violations v;
  RarePathStress stress(
      sel, {.seed = 2027, .phases = 96, .selections_per_phase = 150, .domain_only = true}, v);
  stress.Run();
  return v;
}

// I6: an affinity without an online CPU never yields a CPU.
Violations CheckEmptyAffinity(const std::string& sel) {
  Violations v;
  for (int m = 0; m < 2 && v.empty(); ++m) {
    auto st = StateOrViolation(
        sel, m == 0 ? is::IdleTopology::Uniform(1, 8) : is::IdleTopology::Uniform(4, 8, 2, 2), {},
        v);
    if (st == nullptr) return v;
    const int n = st->num_cpus();
    std::mt19937_64 rng(static_cast<uint64_t>(m) + 1);
    const CpuMask empty(n);
    for (int state = 0; state < 4 && v.size() < 5; ++state) {
      for (int c = 0; c < n; ++c) {
        const bool idle = state == 0 || (state == 2 && c == 0) || (state == 3 && rng() % 2 == 0);
        idle ? MakeIdle(*st, c) : MakeBusySettled(*st, c);
      }
      for (int i = 0; i < 64 && v.size() < 5; ++i) {
        is::WakeTask t{
            .prev_cpu = RandomCpu(*st, rng),
            .recent_used_cpu = static_cast<int>(rng() % static_cast<uint64_t>(n + 1)) - 1,
            .affinity = &empty};
        const is::WakeContext ctx{
            .target = static_cast<int>(rng() % static_cast<uint64_t>(n + 1)) - 1,
            .waker_cpu = static_cast<int>(rng() % static_cast<uint64_t>(n + 1)) - 1,
            .sync = (rng() & 1) != 0,
            .node_restricted = rng() % 4 == 0};
        const is::Selection s = st->Select(t, ctx);
        if (s.cpu != -1 || s.idle_found() || s.claimed) {
          v.push_back(absl::StrCat("I6: empty affinity on ", n, " cpus (machine state ", state,
                                   ", prev ", t.prev_cpu, ", target ", ctx.target, "): got cpu ",
                                   s.cpu, s.idle_found() ? " as idle" : "",
                                   s.claimed ? " claimed" : "", ", want -1 (none)"));
        }
      }
    }
  }
  return v;
}

}  // namespace isolation::testing::idle_select_conformance
