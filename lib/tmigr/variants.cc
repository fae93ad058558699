// SPDX-License-Identifier: GPL-2.0-or-later
// The registries of the timer-migration variants (variants.h).  The first
// call of each registry function registers the built-ins.

#include "isolation/tmigr/variants.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "tmigr/builtins.h"

namespace isolation::tmigr {
namespace {

template <typename Factory>
void MustRegister(VariantRegistry<Factory>& registry, VariantEntry<Factory> entry) {
  // Built-in names are fixed and distinct: a failure is a bug in this file.
  const absl::Status s = registry.Register(std::move(entry));
  ISOLATION_CONTRACT(s.ok(), "tmigr built-in variant: %s", std::string(s.message()).c_str());
}

}  // namespace

VariantRegistry<ParticipationFactory>& ParticipationRegistry() {
  static VariantRegistry<ParticipationFactory>* const registry = [] {
    auto* r = new VariantRegistry<ParticipationFactory>("tmigr participation");
    MustRegister(*r, {"v6.9", "TM-ONLINE (v6.9): every online CPU takes part; isolated busy CPUs pull housekeeping timers",
                      false, [] { return MakeV69Participation(); }});
    MustRegister(*r, {"isolation",
                      "TM-ISOL as merged for v6.19 (7dec062cfcf2): domain-isolated CPUs leave the hierarchy "
                      "(nohz_full and tick CPU stay); exclude order un-isolate, flush, isolate",
                      false, [] { return MakeIsolationParticipation(); }});
    MustRegister(*r, {"isolation-v15",
                      "TM-ISOL with the [V15] exclude order: both sets from one snapshot, queued together, "
                      "one flush",
                      false, [] { return MakeIsolationV15Participation(); }});
    MustRegister(*r, {"isolation-no-cpuset-term",
                      "negative control: TM-ISOL predicate without the cpuset term and without the "
                      "HK_TYPE_DOMAIN fold of 03ff73510169; an isolated cpuset CPU rejoins on hotplug (S22)",
                      true, [] { return MakeIsolationNoCpusetTermParticipation(); }});
    return r;
  }();
  return *registry;
}

absl::Status RegisterParticipation(ParticipationEntry entry) {
  return ParticipationRegistry().Register(std::move(entry));
}

VariantRegistry<HierarchyFactory>& HierarchyRegistry() {
  static VariantRegistry<HierarchyFactory>* const registry = [] {
    auto* r = new VariantRegistry<HierarchyFactory>("tmigr hierarchy");
    MustRegister(*r, {"mainline", "the pull model as released: v6.9 with its -rc fixes and the later fixes "
                                  "(setup as in 2519003dd5fb), plus our fix of race R4 (S28)",
                      false, [](HierarchyArgs a) { return MakeMainlineHierarchy(std::move(a)); }});
    MustRegister(*r, {"ghost_timer", "negative control: the ghost timer fixed by f55acb1e44f3 (S11)", true,
                      [](HierarchyArgs a) { return MakeGhostTimerHierarchy(std::move(a)); }});
    MustRegister(*r, {"no_cpu_refresh",
                      "negative control: equal expiry does not refresh the group event's cpu, before "
                      "61f7fdf8fd00 (S10)",
                      true, [](HierarchyArgs a) { return MakeNoCpuRefreshHierarchy(std::move(a)); }});
    MustRegister(*r, {"early_return",
                      "negative control: ignored level-0 event returns early even at the top, the bug "
                      "4b6f4c5a67c0 removed (S15, I5)",
                      true, [](HierarchyArgs a) { return MakeEarlyReturnHierarchy(std::move(a)); }});
    MustRegister(*r, {"quick_check_top_only",
                      "negative control: quick check reads the top level only, before 8ca1836769d7 (S14)", true,
                      [](HierarchyArgs a) { return MakeQuickCheckTopOnlyHierarchy(std::move(a)); }});
    MustRegister(*r, {"no_seq_increment", "negative control: state CAS without seq++, race R1 unprotected (S12)",
                      true, [](HierarchyArgs a) { return MakeNoSeqIncrementHierarchy(std::move(a)); }});
    MustRegister(*r, {"lockless_update_reads",
                      "negative control: event update reads the states before the locks, race R2 "
                      "unprotected (S13)",
                      true, [](HierarchyArgs a) { return MakeLocklessUpdateReadsHierarchy(std::move(a)); }});
    MustRegister(*r, {"kernel_r4",
                      "negative control: tmigr_inactive_up() exactly as in v6.19, race R4 unprotected: a "
                      "non-last idler's late event is not carried upward (S28)",
                      true, [](HierarchyArgs a) { return MakeKernelR4Hierarchy(std::move(a)); }});
    return r;
  }();
  return *registry;
}

absl::Status RegisterHierarchy(HierarchyEntry entry) { return HierarchyRegistry().Register(std::move(entry)); }

std::vector<VariantInfo> ListVariants() {
  std::vector<VariantInfo> out;
  AppendVariantInfos(ParticipationRegistry(), "tmigr", "participation", out);
  AppendVariantInfos(HierarchyRegistry(), "tmigr", "hierarchy", out);
  return out;
}

// ---- compatibility names (tmigr.h) ------------------------------------------
std::string_view VariantName(Variant variant) {
  return variant == Variant::kV69 ? "v6.9" : "isolation";
}

absl::StatusOr<Variant> ParseVariant(std::string_view name) {
  if (name == "v6.9") return Variant::kV69;
  if (name == "isolation") return Variant::kIsolation;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown tmigr variant '", std::string(name), "' (expected v6.9 or isolation)"));
}

}  // namespace isolation::tmigr
