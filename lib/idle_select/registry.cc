// SPDX-License-Identifier: GPL-2.0-or-later
// The idle_select selector registry: the built-ins (registered on first use,
// which also keeps their objects linked from the static library), outside
// registrations, the compatibility names, and `isolab variants` rows.

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "idle_select/builtin_selectors.h"
#include "isolation/idle_select/selector.h"

namespace isolation::idle_select {
namespace {

struct Builtin {
  const char* name;
  const char* description;
  bool negative_control;
  SelectorFactoryFn* factory;
};

// Registration order = the order of every list (suites, benchmarks, isolab).
constexpr Builtin kBuiltins[] = {
    {"V0",
     "mainline select_idle_sibling(): LLC span ∩ affinity from target+1 under the SIS_UTIL budget, "
     "idle-core mode (kernel/sched/fair.c ~v6.15)",
     false, &NewV0},
    {"V1",
     "Aubrey Li's per-LLC idle cpumask (RFC v3-v10): set on idle entry, cleared at the tick; "
     "SIS_UTIL budget with SIS_PROP's floor of 3 probes",
     false, &NewV1},
    {"V1-eager", "V1, also cleared on idle exit (no stale-idle window)", false, &NewV1Eager},
    {"V1-tickstop", "V1, set only when the tick stops in idle (Aubrey Li v4/v5)", false, &NewV1TickStop},
    {"V1-unbounded", "V1 without any probe budget (Aubrey Li v9 2/2, v11 9/9: the -84 % TCP_RR case)", false,
     &NewV1Unbounded},
    {"V2", "two-pass hint (Mel Gorman): the idle mask, then the rest of the span, one SIS_UTIL budget", false,
     &NewV2},
    {"V3", "the idle mask with at most K probes (Vincent Guittot; Options::v3_max_probes, default 4)", false,
     &NewV3},
    {"V4g",
     "sched_ext built-in idle tracking, one global cpu/smt mask pair, claim by test-and-clear "
     "(ext_idle.c @ 0022b328504d)",
     false, &NewV4Global},
    {"V4n", "sched_ext built-in idle tracking with per-NUMA-node masks (SCX_OPS_BUILTIN_IDLE_PER_NODE)", false,
     &NewV4Node},
    {"V5",
     "LLC span minus an overloaded-CPU mask (Abel Wu / Chen Yu SIS_FILTER), applied only when the budget is "
     "below the LLC size",
     false, &NewV5},
    {"V1-trusting",
     "NEGATIVE CONTROL: V1 returning the first idle-mask member without the per-CPU re-check (breaks I4)", true,
     &NewV1Trusting},
    {"V0-norecheck",
     "NEGATIVE CONTROL: V0 whose idle entry sleeps without re-checking the run queue (broken wakeup handshake: "
     "loses wakeups in the simulator's idle-entry window)",
     true, &NewV0NoRecheck},
};

}  // namespace

VariantRegistry<SelectorFactory>& SelectorRegistry() {
  // Function-local static: built-ins registered on first use, no static
  // initialisation order problem.
  static VariantRegistry<SelectorFactory>* registry = [] {
    auto* r = new VariantRegistry<SelectorFactory>("idle_select selector");
    for (const Builtin& b : kBuiltins) {
      // Names are valid and distinct: Register cannot fail here.
      (void)r->Register(SelectorEntry{b.name, b.description, b.negative_control, SelectorFactory(b.factory)});
    }
    return r;
  }();
  return *registry;
}

absl::Status RegisterSelector(SelectorEntry entry) { return SelectorRegistry().Register(std::move(entry)); }

absl::StatusOr<const SelectorEntry*> FindSelector(std::string_view name) {
  // "V4" is docs/idle_select.md's and isolab's name of the global-mask sched_ext variant.
  if (absl::EqualsIgnoreCase(absl::string_view(name.data(), name.size()), "V4")) name = "V4g";
  return SelectorRegistry().Find(name);
}

std::vector<std::string> SelectorNames(bool include_negative_controls) {
  return SelectorRegistry().Names(include_negative_controls);
}

std::vector<VariantInfo> ListVariants() {
  std::vector<VariantInfo> out;
  AppendVariantInfos(SelectorRegistry(), "idle_select", "selector", out);
  return out;
}

// ---------------------------------------------------------------------------
// Compatibility names
// ---------------------------------------------------------------------------

std::string_view VariantName(Variant v) {
  switch (v) {
    case Variant::kV0: return "V0";
    case Variant::kV1: return "V1";
    case Variant::kV1Eager: return "V1-eager";
    case Variant::kV1TickStop: return "V1-tickstop";
    case Variant::kV1Unbounded: return "V1-unbounded";
    case Variant::kV2: return "V2";
    case Variant::kV3: return "V3";
    case Variant::kV4Global: return "V4g";
    case Variant::kV4Node: return "V4n";
    case Variant::kV5: return "V5";
  }
  return "?";
}

absl::StatusOr<Variant> ParseVariant(std::string_view name) {
  if (name == "V4") return Variant::kV4Global;
  for (int i = 0; i <= static_cast<int>(Variant::kV5); ++i) {
    const auto v = static_cast<Variant>(i);
    if (VariantName(v) == name) return v;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown idle_select variant '", std::string(name),
                   "' (expected V0, V1, V1-eager, V1-tickstop, V1-unbounded, V2, V3, V4, V4g, "
                   "V4n or V5)"));
}

namespace {
// MakeSelector()'s handle: forwards the wakeup to the state's own selector.
class SelectorHandle final : public IdleSelector {
 public:
  using IdleSelector::IdleSelector;
  SelectorTraits traits() const override { return state().selector().traits(); }
  int MaxScanProbes(int nr_idle_scan) const override { return state().selector().MaxScanProbes(nr_idle_scan); }
  Selection Select(WakeTask& task, const WakeContext& ctx) override { return state().Select(task, ctx); }
};
}  // namespace

std::unique_ptr<IdleSelector> MakeSelector(IdleState& state) { return std::make_unique<SelectorHandle>(state); }

}  // namespace isolation::idle_select
