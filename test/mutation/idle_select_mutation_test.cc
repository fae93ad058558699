// SPDX-License-Identifier: GPL-2.0-or-later
// Mutation test of the idle_select kit: small, plausible
// mutations of the built-in selectors, each a selector class of its own
// written here through the public interfaces (a wrapper around a built-in
// created from the registry, or a SisSelector with one step changed; no
// library file is edited), registered as a negative control and run through
// the kit's checks.  Every mutation must be killed (some check reports a
// violation); the binary prints the per-mutation table and
// "kill rate idle_select: K of N".  The correct built-ins must stay clean on
// the checks added with it (no false positive).
//
// "Rare" mutations misbehave once per arming, armed every kRarePeriod
// selections on one instance (more than the 5000 of the longest
// single-instance schedule the kit had before RarePaths_100kSelections);
// "common" ones whenever their path is taken.

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "isolation/idle_select/selector.h"
#include "isolation/idle_select/sis_selector.h"
#include "isolation/testing/idle_select.h"
#include "isolation/testing/status_matchers.h"

namespace isolation::idle_select {
namespace {

using ::testing::IsEmpty;
namespace kit = ::isolation::testing::idle_select_conformance;

constexpr int kRarePeriod = 6007;

bool Allowed(const WakeTask& t, int c) { return t.affinity == nullptr || t.affinity->Test(c); }

// The wakeup's target after the affinity fallback (SelectionDomain::kTargetLlc).
int EffectiveTarget(const IdleState& st, const WakeTask& t, const WakeContext& ctx) {
  const int target = ctx.target >= 0 ? ctx.target : t.prev_cpu;
  if (Allowed(t, target)) return target;
  if (Allowed(t, t.prev_cpu)) return t.prev_cpu;
  const CpuMask& online = st.topology().online;
  const int c = t.affinity == nullptr ? online.First() : online.FirstAnd(*t.affinity);
  return c < st.num_cpus() ? c : -1;  // -1: no CPU allowed
}

Selection Found(Selection s, int cpu) {
  s.cpu = cpu;
  s.outcome = Outcome::kIdleFound;
  return s;
}

// A built-in (created from the registry) whose every entry point is
// forwarded; Mutate() may change the answer of Select.
class Wrapper : public IdleSelector {
 public:
  Wrapper(IdleState& st, const char* inner) : IdleSelector(st) {
    absl::StatusOr<const SelectorEntry*> e = FindSelector(inner);
    if (e.ok()) {
      absl::StatusOr<std::unique_ptr<IdleSelector>> made = (*e)->factory(st);
      if (made.ok()) inner_ = *std::move(made);
    }
    if (inner_ == nullptr)
      std::abort();  // a built-in that cannot be created here: the test is broken
  }
  SelectorTraits traits() const override { return inner_->traits(); }
  int MaxScanProbes(int nr_idle_scan) const override { return inner_->MaxScanProbes(nr_idle_scan); }
  Selection Select(WakeTask& task, const WakeContext& ctx) override {
    ++calls_;
    if (calls_ % kRarePeriod == 0) armed_ = true;
    return Mutate(task, ctx, inner_->Select(task, ctx));
  }
  void OnIdleEnter(int cpu) override { inner_->OnIdleEnter(cpu); }
  void OnIdleExit(int cpu) override { inner_->OnIdleExit(cpu); }
  void OnIdleRefresh(int cpu) override { inner_->OnIdleRefresh(cpu); }
  void OnTick(int cpu) override { inner_->OnTick(cpu); }
  void OnTickStop(int cpu) override { inner_->OnTickStop(cpu); }
  void OnRebuild() override { inner_->OnRebuild(); }
  std::vector<MaskSnapshot> Masks() const override { return inner_->Masks(); }
  CpuMask IdleHint() const override { return inner_->IdleHint(); }
  std::string CheckQuiescent() const override { return inner_->CheckQuiescent(); }

 protected:
  virtual Selection Mutate(WakeTask& task, const WakeContext& ctx, Selection s) = 0;
  // Rare mutations misbehave only when armed and disarm once they did.
  bool armed() const { return armed_; }
  void Fired() { armed_ = false; }
  const CpuMask& TargetSpan(const WakeTask& t, const WakeContext& ctx) const {
    static const CpuMask kNone;
    const int target = EffectiveTarget(state(), t, ctx);
    const int l = target < 0 ? -1 : state().llc_of(target);
    return l < 0 ? kNone : state().llc_span(l);
  }
  // The first available-idle CPU for which `ok` holds, or -1.
  template <typename Pred>
  int FirstIdle(Pred ok) const {
    for (int c = 0; c < state().num_cpus(); ++c) {
      if (state().AvailableIdleCpu(c) && ok(c)) return c;
    }
    return -1;
  }

 private:
  std::unique_ptr<IdleSelector> inner_;
  int64_t calls_ = 0;
  bool armed_ = false;
};

bool InSpan(const CpuMask& span, int c) { return span.nbits() != 0 && span.Test(c); }

// --- out-of-domain picks ---------------------------------------------------------
// No idle CPU in the target's LLC: an idle allowed CPU of another LLC (the
// SIS_NODE-style spill), once per arming.
class SpillLlcRare final : public Wrapper {
 public:
  explicit SpillLlcRare(IdleState& st) : Wrapper(st, "V0") {}
  Selection Mutate(WakeTask& t, const WakeContext& ctx, Selection s) override {
    if (!armed() || s.idle_found()) return s;
    const CpuMask& span = TargetSpan(t, ctx);
    const int c = FirstIdle(
        [&](int x) { return Allowed(t, x) && state().llc_of(x) >= 0 && !InSpan(span, x); });
    if (c < 0) return s;
    Fired();
    return Found(s, c);
  }
};
// The same whenever V1's scan found nothing.
class SpillLlc final : public Wrapper {
 public:
  explicit SpillLlc(IdleState& st) : Wrapper(st, "V1") {}
  Selection Mutate(WakeTask& t, const WakeContext& ctx, Selection s) override {
    if (s.idle_found()) return s;
    const CpuMask& span = TargetSpan(t, ctx);
    const int c = FirstIdle(
        [&](int x) { return Allowed(t, x) && state().llc_of(x) >= 0 && !InSpan(span, x); });
    return c < 0 ? s : Found(s, c);
  }
};
// select_idle_cpu()'s candidate set one CPU too long: the span plus the CPU
// after its last one (an off-by-one in the scan bound).
class SpanEndOffByOne final : public SisSelector {
 public:
  using SisSelector::SisSelector;

 protected:
  int SelectIdleCpu(const LlcScan& scan) override {
    const IdleState& st = state();
    CpuMask& cpus = Scratch(0);
    cpus.CopyFrom(st.llc_span(scan.llc));
    int last = -1;
    for (int c : cpus) last = c;
    if (last + 1 < st.num_cpus()) cpus.Set(last + 1);
    if (scan.task.affinity != nullptr) cpus.And(*scan.task.affinity);
    int nr = st.nr_idle_scan(scan.llc) + 1;
    if (nr <= 1) return -1;
    int idle_cpu = -1;
    const int i = ScanCpus(scan, cpus, ScanStart(scan.target), nr, idle_cpu, /*from_hint=*/false);
    return FinishScan(scan, i, idle_cpu);
  }
};
// recent_used_cpu taken without the cache test (cpus_share_cache dropped).
class RecentAnyLlc final : public SisSelector {
 public:
  using SisSelector::SisSelector;
  Selection Select(WakeTask& t, const WakeContext& ctx) override {
    const int target = EffectiveTarget(state(), t, ctx);
    if (target < 0) return SisSelector::Select(t, ctx);
    const int recent = t.recent_used_cpu;
    const bool early =
        Candidate(target, t) ||
        (t.prev_cpu != target && Allowed(t, t.prev_cpu) &&
         state().topology().SharesCache(t.prev_cpu, target) && Candidate(t.prev_cpu, t));
    if (!early && recent >= 0 && recent != t.prev_cpu && recent != target && Allowed(t, recent) &&
        Candidate(recent, t)) {
      t.recent_used_cpu = t.prev_cpu;
      return Found(Selection(), recent);
    }
    return SisSelector::Select(t, ctx);
  }
};

// --- affinity --------------------------------------------------------------------
// Once per arming: an idle CPU of the target's LLC outside the affinity.
class IgnoreAffinityRare final : public Wrapper {
 public:
  explicit IgnoreAffinityRare(IdleState& st) : Wrapper(st, "V0") {}
  Selection Mutate(WakeTask& t, const WakeContext& ctx, Selection s) override {
    if (!armed() || t.affinity == nullptr) return s;
    const CpuMask& span = TargetSpan(t, ctx);
    const int c = FirstIdle([&](int x) { return !Allowed(t, x) && InSpan(span, x); });
    if (c < 0) return s;
    Fired();
    return Found(s, c);
  }
};
// V5 whose fallback scans the span without the affinity.
class IgnoreAffinity final : public Wrapper {
 public:
  explicit IgnoreAffinity(IdleState& st) : Wrapper(st, "V5") {}
  Selection Mutate(WakeTask& t, const WakeContext& ctx, Selection s) override {
    if (s.idle_found()) return s;
    const CpuMask& span = TargetSpan(t, ctx);
    const int c = FirstIdle([&](int x) { return InSpan(span, x); });
    return c < 0 ? s : Found(s, c);
  }
};
// The empty affinity answered with CPU 0 as idle (the pre-fix built-ins).
class EmptyAffinityPick final : public Wrapper {
 public:
  explicit EmptyAffinityPick(IdleState& st) : Wrapper(st, "V0") {}
  Selection Mutate(WakeTask& t, const WakeContext&, Selection s) override {
    if (t.affinity == nullptr || !t.affinity->Empty()) return s;
    return Found(s, 0);
  }
};

// --- isolation -------------------------------------------------------------------
// Once per arming: an idle domain-isolated CPU that is not the target.
class IsolatedRare final : public Wrapper {
 public:
  explicit IsolatedRare(IdleState& st) : Wrapper(st, "V0") {}
  Selection Mutate(WakeTask& t, const WakeContext& ctx, Selection s) override {
    if (!armed()) return s;
    const CpuMask& iso = state().topology().domain_isolated;
    const int target = EffectiveTarget(state(), t, ctx);
    const int c = FirstIdle(
        [&](int x) { return iso.nbits() != 0 && iso.Test(x) && x != target && Allowed(t, x); });
    if (c < 0) return s;
    Fired();
    return Found(s, c);
  }
};
// V2 whose fallback scans the physical LLC (hw_llc_span) from target + 1,
// isolated CPUs included.
class HwSpanScan final : public Wrapper {
 public:
  explicit HwSpanScan(IdleState& st) : Wrapper(st, "V2") {}
  Selection Mutate(WakeTask& t, const WakeContext& ctx, Selection s) override {
    if (s.idle_found()) return s;
    const IdleTopology& topo = state().topology();
    const int target = EffectiveTarget(state(), t, ctx);
    if (target < 0) return s;
    const CpuMask& hw =
        topo.hw_llc_span[static_cast<size_t>(topo.hw_llc_of[static_cast<size_t>(target)])];
    const int n = state().num_cpus();
    for (int k = 1; k <= n; ++k) {
      const int c = (target + k) % n;
      if (hw.Test(c) && Allowed(t, c) && state().AvailableIdleCpu(c)) return Found(s, c);
    }
    return s;
  }
};

// --- busy CPUs returned as idle ----------------------------------------------------
// Once per arming: a busy allowed CPU of the target's LLC reported idle.
class BusyAsIdleRare final : public Wrapper {
 public:
  explicit BusyAsIdleRare(IdleState& st) : Wrapper(st, "V1") {}
  Selection Mutate(WakeTask& t, const WakeContext& ctx, Selection s) override {
    if (!armed()) return s;
    const CpuMask& span = TargetSpan(t, ctx);
    for (int c : span) {
      if (Allowed(t, c) && !state().AvailableIdleCpu(c) && !state().SchedIdleCpu(c)) {
        Fired();
        return Found(s, c);
      }
    }
    return s;
  }
};
// V3 whose fallback trusts its idle mask (no per-CPU re-check).
class StaleHintTrusted final : public Wrapper {
 public:
  explicit StaleHintTrusted(IdleState& st) : Wrapper(st, "V3") {}
  Selection Mutate(WakeTask& t, const WakeContext& ctx, Selection s) override {
    if (s.idle_found()) return s;
    const CpuMask& span = TargetSpan(t, ctx);
    for (int c : IdleHint()) {
      if (InSpan(span, c) && Allowed(t, c)) return Found(s, c);
    }
    return s;
  }
};

// --- claims ----------------------------------------------------------------------
// Once per arming: the last CPU claimed is returned as claimed again (its
// bit was not cleared by the first claim).
class DoubleClaimRare final : public Wrapper {
 public:
  explicit DoubleClaimRare(IdleState& st) : Wrapper(st, "V4g") {}
  Selection Mutate(WakeTask& t, const WakeContext& ctx, Selection s) override {
    const int last = last_;
    if (s.claimed) last_ = s.cpu;
    if (!armed() || last < 0 || !Allowed(t, last) || s.cpu == last) return s;
    const std::vector<int>& node = state().topology().node_of;
    if (ctx.node_restricted &&
        node[static_cast<size_t>(last)] != node[static_cast<size_t>(t.prev_cpu)])
      return s;
    Fired();
    s = Found(s, last);
    s.claimed = true;
    return s;
  }

 private:
  int last_ = -1;
};
// V4n that, finding nothing to claim, "claims" prev without the test.
class ClaimWithoutTest final : public Wrapper {
 public:
  explicit ClaimWithoutTest(IdleState& st) : Wrapper(st, "V4n") {}
  Selection Mutate(WakeTask& t, const WakeContext&, Selection s) override {
    if (s.cpu >= 0 || !Allowed(t, t.prev_cpu)) return s;
    s = Found(s, t.prev_cpu);
    s.claimed = true;
    return s;
  }
};

// --- order and budget ------------------------------------------------------------
// An idle prev sharing the cache taken before an idle target.
class PrevBeforeTarget final : public Wrapper {
 public:
  explicit PrevBeforeTarget(IdleState& st) : Wrapper(st, "V1") {}
  Selection Mutate(WakeTask& t, const WakeContext& ctx, Selection s) override {
    const int target = EffectiveTarget(state(), t, ctx);
    const int prev = t.prev_cpu;
    if (target >= 0 && s.cpu == target && prev != target && Allowed(t, prev) &&
        state().topology().SharesCache(prev, target) && state().AvailableIdleCpu(prev)) {
      return Found(s, prev);
    }
    return s;
  }
};
// select_idle_cpu() with nr = nr_idle_scan + 2: one probe over the budget,
// and a probe at budget 0 (SIS_UTIL's cut lost).
class BudgetOffByOne final : public SisSelector {
 public:
  using SisSelector::SisSelector;

 protected:
  int SelectIdleCpu(const LlcScan& scan) override {
    const IdleState& st = state();
    CpuMask& cpus = Scratch(0);
    cpus.CopyFrom(st.llc_span(scan.llc));
    if (scan.task.affinity != nullptr) cpus.And(*scan.task.affinity);
    int nr = st.nr_idle_scan(scan.llc) + 2;
    int idle_cpu = -1;
    const int i = ScanCpus(scan, cpus, ScanStart(scan.target), nr, idle_cpu, /*from_hint=*/false);
    return FinishScan(scan, i, idle_cpu);
  }
};

struct Mutation {
  const char* name;
  const char* bug_class;
  const char* frequency;  // "rare" or "common"
  SelectorEntry entry;
};

template <typename T>
Mutation M(const char* name, const char* bug_class, const char* frequency,
           const char* description) {
  return {name, bug_class, frequency,
          SelectorEntryOf<T>(name, description, /*negative_control=*/true)};
}

std::vector<Mutation> Mutations() {
  return {
      M<SpillLlcRare>("mut-V0-spill-llc-rare", "out-of-domain pick", "rare",
                      "MUTATION: V0, once per 6007 selections an idle CPU of another LLC when its "
                      "LLC has none"),
      M<SpillLlc>("mut-V1-spill-llc", "out-of-domain pick", "common",
                  "MUTATION: V1 whose fallback takes an idle CPU of another LLC"),
      M<SpanEndOffByOne>("mut-V0-span-end-off-by-one", "off-by-one in scan bound (out of domain)",
                         "common", "MUTATION: V0 scanning its LLC span plus the CPU after it"),
      M<RecentAnyLlc>("mut-V0-recent-any-llc", "out-of-domain pick (recent_used_cpu)", "common",
                      "MUTATION: V0 taking an idle recent_used_cpu without the cache test"),
      M<IgnoreAffinityRare>(
          "mut-V0-ignore-affinity-rare", "ignoring affinity", "rare",
          "MUTATION: V0, once per 6007 selections an idle CPU of the LLC outside the affinity"),
      M<IgnoreAffinity>("mut-V5-ignore-affinity", "ignoring affinity", "common",
                        "MUTATION: V5 whose fallback scans the span without the affinity"),
      M<EmptyAffinityPick>("mut-V0-empty-affinity", "empty-affinity pick", "common",
                           "MUTATION: V0 answering an empty affinity with CPU 0 as idle"),
      M<IsolatedRare>("mut-V0-isolated-rare", "returning an isolated CPU", "rare",
                      "MUTATION: V0, once per 6007 selections an idle domain-isolated CPU"),
      M<HwSpanScan>("mut-V2-hw-span", "returning an isolated CPU", "common",
                    "MUTATION: V2 whose fallback scans the physical LLC, isolated CPUs included"),
      M<BusyAsIdleRare>(
          "mut-V1-busy-as-idle-rare", "busy CPU returned as idle", "rare",
          "MUTATION: V1, once per 6007 selections a busy CPU of the LLC reported idle"),
      M<StaleHintTrusted>(
          "mut-V3-stale-hint", "stale hint trusted", "common",
          "MUTATION: V3 whose fallback returns an idle-mask member without the re-check"),
      M<DoubleClaimRare>(
          "mut-V4g-double-claim-rare", "claim without clearing", "rare",
          "MUTATION: V4g, once per 6007 selections the last claimed CPU claimed again"),
      M<ClaimWithoutTest>(
          "mut-V4n-claim-without-test", "busy CPU returned as claimed", "common",
          "MUTATION: V4n 'claiming' prev without the test-and-clear when nothing was claimed"),
      M<PrevBeforeTarget>("mut-V1-prev-before-target", "wakeup order", "common",
                          "MUTATION: V1 taking an idle prev before an idle target"),
      M<BudgetOffByOne>("mut-V0-budget-off-by-one", "off-by-one in scan bound (budget)", "common",
                        "MUTATION: V0 with nr = nr_idle_scan + 2"),
  };
}

// The checks of the direct-API suite (IdleSelectConformance) that apply to
// `selector`, with their violations.  The race and simulator suites are left
// out to keep the binary's runtime modest; every mutation here is a
// placement bug the direct suite sees.
std::vector<std::pair<std::string, kit::Violations>> RunDirectSuite(const std::string& selector) {
  std::vector<std::pair<std::string, kit::Violations>> out;
  for (const kit::Check& c : kit::AllChecks()) {
    if (c.suite != "IdleSelectConformance") continue;
    absl::StatusOr<std::string> skip = kit::NotApplicable(c.name, selector);
    if (!skip.ok()) {
      out.emplace_back(c.name, kit::Violations{skip.status().ToString()});
      continue;
    }
    if (!skip->empty()) continue;
    kit::Violations v = kit::Run(c.name, selector);
    if (!v.empty()) out.emplace_back(c.name, std::move(v));
  }
  return out;
}

TEST(IdleSelectMutation, EveryMutationIsKilled) {
  std::vector<Mutation> mutations = Mutations();
  for (Mutation& m : mutations) {
    ISOLATION_ASSERT_OK(RegisterSelector(m.entry)) << m.name;
  }
  int killed = 0;
  std::printf("| mutation | bug class | rare/common | killed by |\n|---|---|---|---|\n");
  for (const Mutation& m : mutations) {
    SCOPED_TRACE(m.name);
    const auto failed = RunDirectSuite(m.name);
    std::vector<std::string> by;
    for (const auto& [check, v] : failed) by.push_back(check);
    if (!failed.empty()) ++killed;
    std::printf("| %s | %s | %s | %s |\n", m.name, m.bug_class, m.frequency,
                failed.empty() ? "SURVIVED" : absl::StrJoin(by, ", ").c_str());
    if (!failed.empty())
      std::printf("    e.g. %s: %s\n", failed.front().first.c_str(),
                  failed.front().second.front().c_str());
    EXPECT_FALSE(failed.empty()) << "mutation " << m.name << " survived the kit";
  }
  std::printf("kill rate idle_select: %d of %zu\n", killed, mutations.size());
}

// No false positive: the correct built-ins pass the checks added with the
// mutation test.
TEST(IdleSelectMutation, BuiltInsPassTheNewChecks) {
  for (const std::string& sel : SelectorNames()) {
    for (const char* check :
         {"I6_EmptyAffinityNoCpu", "D1_DomainFromTraits", "RarePaths_100kSelections"}) {
      EXPECT_THAT(kit::Run(check, sel), IsEmpty()) << check << " on " << sel;
    }
  }
}

}  // namespace
}  // namespace isolation::idle_select
