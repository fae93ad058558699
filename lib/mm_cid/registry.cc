// SPDX-License-Identifier: GPL-2.0-or-later
// The registries of mm_cid's axes (registry.h): built-ins registered at each
// registry's first use, outside registration, strategy construction from a
// LazyConfig, and the enumerations the suites, benchmarks and isolab read.

#include "isolation/mm_cid/registry.h"

#include <cctype>
#include <initializer_list>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "mm_cid/builtins.h"

namespace isolation::mm_cid {
namespace {

// Each registry lives for the process (never destroyed: no destruction-order
// hazard with other statics that may still enumerate).
template <typename Factory>
VariantRegistry<Factory>* NewRegistry(const char* axis,
                                      std::initializer_list<VariantEntry<Factory> (*)()> builtins) {
  auto* registry = new VariantRegistry<Factory>(axis);
  // Built-in names are constant and valid: registering them cannot fail.
  RegisterBuiltins(*registry, builtins).IgnoreError();
  return registry;
}

// builtins.h's lists as initializer lists of entry functions.
#define ISOLATION_MM_CID_ADDRESS_(entry) &internal::entry,

// "batch_8" -> the family "batch_N" with n = 8.
struct FamilyName {
  std::string family;
  int n = 0;
};
bool SplitFamily(std::string_view name, FamilyName& out) {
  const size_t us = name.rfind('_');
  if (us == std::string_view::npos || us + 1 >= name.size()) return false;
  const std::string_view digits = name.substr(us + 1);
  for (char c : digits) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  }
  out.family = absl::StrCat(std::string(name.substr(0, us)), "_N");
  return absl::SimpleAtoi(absl::string_view(digits.data(), digits.size()), &out.n);
}

// A family entry's name at parameter n ("batch_N", 8 -> "batch_8").
std::string FamilyMember(const std::string& family, int n) {
  if (family.size() >= 2 && family.compare(family.size() - 2, 2, "_N") == 0) {
    return absl::StrCat(family.substr(0, family.size() - 2), "_", n);
  }
  return family;
}

struct GranularityPick {
  const GranularityEntry* entry = nullptr;
  int n = 0;
};
absl::StatusOr<GranularityPick> FindGranularity(std::string_view name) {
  absl::StatusOr<const GranularityEntry*> exact = GranularityRegistry().Find(name);
  if (exact.ok()) return GranularityPick{*exact, 0};
  FamilyName f;
  if (SplitFamily(name, f)) {
    absl::StatusOr<const GranularityEntry*> family = GranularityRegistry().Find(f.family);
    if (family.ok()) return GranularityPick{*family, f.n};
  }
  return exact.status();
}

template <typename T>
absl::Status NotNull(const std::unique_ptr<T>& p, std::string_view axis, const std::string& name) {
  if (p != nullptr) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("mm_cid ", std::string(axis), " '", name, "': its factory returned no object"));
}

// The first design (registration order) that is built on the lazy axes and
// is not a negative control: where the enumerations plug strategies in.
std::string LazyAxesDesign() {
  for (const DesignEntry* e : DesignRegistry().All()) {
    if (e->factory.traits.lazy_axes && !e->negative_control) return e->name;
  }
  return MmCidVariant{}.design;
}

template <typename Factory>
std::vector<const VariantEntry<Factory>*> Correct(const VariantRegistry<Factory>& r) {
  std::vector<const VariantEntry<Factory>*> out;
  for (const auto* e : r.All()) {
    if (!e->negative_control) out.push_back(e);
  }
  return out;
}

std::string EnumeratedName(const GranularityEntry& e) {
  return FamilyMember(e.name, e.factory.enumerate_n);
}

}  // namespace

VariantRegistry<DesignFactory>& DesignRegistry() {
  static auto* registry = NewRegistry<DesignFactory>(
      "mm_cid design", {ISOLATION_MM_CID_DESIGNS(ISOLATION_MM_CID_ADDRESS_)});
  return *registry;
}
VariantRegistry<AllocatorFactory>& AllocatorRegistry() {
  static auto* registry = NewRegistry<AllocatorFactory>(
      "mm_cid allocator", {ISOLATION_MM_CID_ALLOCATORS(ISOLATION_MM_CID_ADDRESS_)});
  return *registry;
}
VariantRegistry<ScopeFactory>& ScopeRegistry() {
  static auto* registry = NewRegistry<ScopeFactory>(
      "mm_cid scan scope", {ISOLATION_MM_CID_SCOPES(ISOLATION_MM_CID_ADDRESS_)});
  return *registry;
}
VariantRegistry<GranularityFactory>& GranularityRegistry() {
  static auto* registry = NewRegistry<GranularityFactory>(
      "mm_cid scan granularity", {ISOLATION_MM_CID_GRANULARITIES(ISOLATION_MM_CID_ADDRESS_)});
  return *registry;
}
VariantRegistry<PlacementFactory>& PlacementRegistry() {
  static auto* registry = NewRegistry<PlacementFactory>(
      "mm_cid placement", {ISOLATION_MM_CID_PLACEMENTS(ISOLATION_MM_CID_ADDRESS_)});
  return *registry;
}
VariantRegistry<TickPolicyFactory>& TickPolicyRegistry() {
  static auto* registry = NewRegistry<TickPolicyFactory>(
      "mm_cid tick policy", {ISOLATION_MM_CID_TICK_POLICIES(ISOLATION_MM_CID_ADDRESS_)});
  return *registry;
}
#undef ISOLATION_MM_CID_ADDRESS_

absl::Status RegisterDesign(DesignEntry entry) {
  return DesignRegistry().Register(std::move(entry));
}
absl::Status RegisterAllocator(AllocatorEntry entry) {
  return AllocatorRegistry().Register(std::move(entry));
}
absl::Status RegisterScope(ScopeEntry entry) { return ScopeRegistry().Register(std::move(entry)); }
absl::Status RegisterGranularity(GranularityEntry entry) {
  return GranularityRegistry().Register(std::move(entry));
}
absl::Status RegisterPlacement(PlacementEntry entry) {
  return PlacementRegistry().Register(std::move(entry));
}
absl::Status RegisterTickPolicy(TickPolicyEntry entry) {
  return TickPolicyRegistry().Register(std::move(entry));
}

absl::StatusOr<LazyStrategies> MakeLazyStrategies(const LazyConfig& config) {
  LazyStrategies s;
  absl::StatusOr<const AllocatorEntry*> allocator = AllocatorRegistry().Find(config.allocator);
  if (!allocator.ok()) return allocator.status();
  s.allocator = (*allocator)->factory();
  if (absl::Status st = NotNull(s.allocator, "allocator", (*allocator)->name); !st.ok()) return st;
  absl::StatusOr<const ScopeEntry*> scope = ScopeRegistry().Find(config.scope);
  if (!scope.ok()) return scope.status();
  s.scope = (*scope)->factory();
  if (absl::Status st = NotNull(s.scope, "scan scope", (*scope)->name); !st.ok()) return st;
  absl::StatusOr<GranularityPick> granularity = FindGranularity(config.granularity);
  if (!granularity.ok()) return granularity.status();
  absl::StatusOr<std::unique_ptr<GranularityStrategy>> g =
      granularity->entry->factory.create(granularity->n);
  if (!g.ok()) return g.status();
  s.granularity = std::move(*g);
  if (absl::Status st = NotNull(s.granularity, "scan granularity", config.granularity); !st.ok())
    return st;
  absl::StatusOr<const PlacementEntry*> placement = PlacementRegistry().Find(config.placement);
  if (!placement.ok()) return placement.status();
  s.placement = (*placement)->factory();
  if (absl::Status st = NotNull(s.placement, "placement", (*placement)->name); !st.ok()) return st;
  // A placement that carries the [WQ] kick uses the registered tick_kick.
  const std::string tick_name =
      s.placement->traits().tick_kick ? std::string("tick_kick") : config.tick;
  absl::StatusOr<const TickPolicyEntry*> tick = TickPolicyRegistry().Find(tick_name);
  if (!tick.ok()) return tick.status();
  s.tick = (*tick)->factory();
  if (absl::Status st = NotNull(s.tick, "tick policy", (*tick)->name); !st.ok()) return st;
  s.negative_control = (*allocator)->negative_control || (*scope)->negative_control ||
                       granularity->entry->negative_control || (*placement)->negative_control ||
                       (*tick)->negative_control;
  return s;
}

absl::StatusOr<VariantTraits> DescribeVariant(const MmCidVariant& variant) {
  absl::StatusOr<const DesignEntry*> design = DesignRegistry().Find(variant.design);
  if (!design.ok()) return design.status();
  VariantTraits t;
  t.design = (*design)->factory.traits;
  t.negative_control = (*design)->negative_control;
  if (!t.design.lazy_axes) return t;
  absl::StatusOr<LazyStrategies> s = MakeLazyStrategies(variant.lazy);
  if (!s.ok()) return s.status();
  t.allocator = s->allocator->traits();
  t.placement = s->placement->traits();
  t.batch = s->granularity->batch();
  t.tick_kick = s->tick->kicks_unpreempted();
  t.negative_control = t.negative_control || s->negative_control;
  return t;
}

std::vector<MmCidVariant> AllVariants() {
  std::vector<MmCidVariant> out;
  for (const DesignEntry* d : Correct(DesignRegistry())) {
    if (!d->factory.traits.lazy_axes) {
      MmCidVariant v;
      v.design = d->name;
      out.push_back(v);
      continue;
    }
    for (const AllocatorEntry* a : Correct(AllocatorRegistry())) {
      for (const ScopeEntry* s : Correct(ScopeRegistry())) {
        for (const GranularityEntry* g : Correct(GranularityRegistry())) {
          for (const PlacementEntry* p : Correct(PlacementRegistry())) {
            MmCidVariant v;
            v.design = d->name;
            v.lazy.allocator = a->name;
            v.lazy.scope = s->name;
            v.lazy.granularity = EnumeratedName(*g);
            v.lazy.placement = p->name;
            out.push_back(v);
          }
        }
      }
    }
  }
  return out;
}

std::vector<MmCidVariant> CoveringVariants() {
  std::vector<MmCidVariant> out;
  auto add = [&out](const MmCidVariant& v) {
    for (const MmCidVariant& x : out) {
      if (x == v) return;
    }
    out.push_back(v);
  };
  MmCidVariant base;
  base.design = LazyAxesDesign();
  add(base);
  for (const DesignEntry* d : Correct(DesignRegistry())) {
    MmCidVariant v;
    v.design = d->name;
    add(v);
  }
  for (const AllocatorEntry* a : Correct(AllocatorRegistry())) {
    MmCidVariant v = base;
    v.lazy.allocator = a->name;
    add(v);
  }
  for (const ScopeEntry* s : Correct(ScopeRegistry())) {
    MmCidVariant v = base;
    v.lazy.scope = s->name;
    add(v);
  }
  for (const GranularityEntry* g : Correct(GranularityRegistry())) {
    MmCidVariant v = base;
    v.lazy.granularity = EnumeratedName(*g);
    add(v);
  }
  for (const PlacementEntry* p : Correct(PlacementRegistry())) {
    MmCidVariant v = base;
    v.lazy.placement = p->name;
    add(v);
  }
  for (const TickPolicyEntry* t : Correct(TickPolicyRegistry())) {
    MmCidVariant v = base;
    v.lazy.tick = t->name;
    add(v);
  }
  return out;
}

std::vector<MmCidVariant> NegativeControlVariants() {
  std::vector<MmCidVariant> out;
  MmCidVariant base;
  base.design = LazyAxesDesign();
  for (const DesignEntry* d : DesignRegistry().All()) {
    if (!d->negative_control) continue;
    MmCidVariant v;
    v.design = d->name;
    out.push_back(v);
  }
  for (const AllocatorEntry* e : AllocatorRegistry().All()) {
    if (!e->negative_control) continue;
    MmCidVariant v = base;
    v.lazy.allocator = e->name;
    out.push_back(v);
  }
  for (const ScopeEntry* e : ScopeRegistry().All()) {
    if (!e->negative_control) continue;
    MmCidVariant v = base;
    v.lazy.scope = e->name;
    out.push_back(v);
  }
  for (const GranularityEntry* e : GranularityRegistry().All()) {
    if (!e->negative_control) continue;
    MmCidVariant v = base;
    v.lazy.granularity = EnumeratedName(*e);
    out.push_back(v);
  }
  for (const PlacementEntry* e : PlacementRegistry().All()) {
    if (!e->negative_control) continue;
    MmCidVariant v = base;
    v.lazy.placement = e->name;
    out.push_back(v);
  }
  for (const TickPolicyEntry* e : TickPolicyRegistry().All()) {
    if (!e->negative_control) continue;
    MmCidVariant v = base;
    v.lazy.tick = e->name;
    out.push_back(v);
  }
  return out;
}

std::vector<VariantInfo> ListVariants() {
  std::vector<VariantInfo> out;
  AppendVariantInfos(DesignRegistry(), "mm_cid", "design", out);
  AppendVariantInfos(AllocatorRegistry(), "mm_cid", "allocator", out);
  AppendVariantInfos(ScopeRegistry(), "mm_cid", "scope", out);
  AppendVariantInfos(GranularityRegistry(), "mm_cid", "granularity", out);
  AppendVariantInfos(PlacementRegistry(), "mm_cid", "placement", out);
  AppendVariantInfos(TickPolicyRegistry(), "mm_cid", "tick", out);
  return out;
}

// ---- variant names (variant.h) ----------------------------------------------

std::string MmCidVariant::Name() const {
  absl::StatusOr<const DesignEntry*> d = DesignRegistry().Find(design);
  if (!d.ok() || !(*d)->factory.traits.lazy_axes) return design;
  std::string n = absl::StrCat(design, "+", lazy.allocator, "+", lazy.scope, "+", lazy.granularity,
                               "+", lazy.placement);
  if (lazy.tick != LazyConfig{}.tick) {
    // Implied by work_unbound / work_resume, so only printed where it is a choice.
    bool implied = false;
    if (absl::StatusOr<const PlacementEntry*> p = PlacementRegistry().Find(lazy.placement);
        p.ok()) {
      const std::unique_ptr<PlacementStrategy> placement = (*p)->factory();
      implied = placement != nullptr && placement->traits().tick_kick && lazy.tick == "tick_kick";
    }
    if (!implied) absl::StrAppend(&n, "+", lazy.tick);
  }
  return n;
}

absl::StatusOr<MmCidVariant> ParseVariant(std::string_view name) {
  if (name.empty()) return absl::InvalidArgumentError("mm_cid: empty variant name");
  std::vector<std::string_view> tokens;
  for (size_t pos = 0;;) {
    const size_t plus = name.find('+', pos);
    tokens.push_back(
        name.substr(pos, plus == std::string_view::npos ? std::string_view::npos : plus - pos));
    if (plus == std::string_view::npos) break;
    pos = plus + 1;
  }
  const std::string whole(name);
  absl::StatusOr<const DesignEntry*> first = DesignRegistry().Find(tokens[0]);
  if (!first.ok()) {
    return absl::NotFoundError(
        absl::StrCat("mm_cid variant '", whole, "': ", first.status().message()));
  }
  MmCidVariant v;
  v.design = (*first)->name;
  std::string lazy_token;  // the first axis token (for the error if the design has no axes)
  bool seen[5] = {false, false, false, false, false};
  for (size_t i = 1; i < tokens.size(); ++i) {
    const std::string_view token = tokens[i];
    if (token.empty())
      return absl::InvalidArgumentError(absl::StrCat("mm_cid variant '", whole, "': empty token"));
    const std::string t(token);
    int matches = 0;
    int axis = -1;  // 0 allocator, 1 scope, 2 granularity, 3 placement, 4 tick, 5 design
    std::string canonical;
    if (absl::StatusOr<const DesignEntry*> e = DesignRegistry().Find(token); e.ok()) {
      ++matches, axis = 5, canonical = (*e)->name;
    }
    if (absl::StatusOr<const AllocatorEntry*> e = AllocatorRegistry().Find(token); e.ok()) {
      ++matches, axis = 0, canonical = (*e)->name;
    }
    if (absl::StatusOr<const ScopeEntry*> e = ScopeRegistry().Find(token); e.ok()) {
      ++matches, axis = 1, canonical = (*e)->name;
    }
    if (absl::StatusOr<GranularityPick> e = FindGranularity(token); e.ok()) {
      ++matches, axis = 2,
                 canonical = e->n == 0 ? e->entry->name : FamilyMember(e->entry->name, e->n);
    }
    if (absl::StatusOr<const PlacementEntry*> e = PlacementRegistry().Find(token); e.ok()) {
      ++matches, axis = 3, canonical = (*e)->name;
    }
    if (absl::StatusOr<const TickPolicyEntry*> e = TickPolicyRegistry().Find(token); e.ok()) {
      ++matches, axis = 4, canonical = (*e)->name;
    }
    if (matches == 0) {
      return absl::NotFoundError(absl::StrCat(
          "mm_cid variant '", whole, "': unknown token '", t,
          "' (designs: ", absl::StrJoin(DesignRegistry().Names(true), ", "),
          "; allocators: ", absl::StrJoin(AllocatorRegistry().Names(true), ", "),
          "; scopes: ", absl::StrJoin(ScopeRegistry().Names(true), ", "),
          "; granularities: ", absl::StrJoin(GranularityRegistry().Names(true), ", "),
          "; placements: ", absl::StrJoin(PlacementRegistry().Names(true), ", "),
          "; tick policies: ", absl::StrJoin(TickPolicyRegistry().Names(true), ", "), ")"));
    }
    if (matches > 1) {
      return absl::InvalidArgumentError(absl::StrCat("mm_cid variant '", whole, "': token '", t,
                                                     "' is registered on more than one axis"));
    }
    if (axis == 5) {  // a flat name's control suffix: "owner619+owner619_direct"
      // Replacing a negative-control design by a mainline one would drop the
      // control silently: the name says control, the variant would not be.
      absl::StatusOr<const DesignEntry*> before = DesignRegistry().Find(v.design);
      absl::StatusOr<const DesignEntry*> after = DesignRegistry().Find(canonical);
      if (before.ok() && after.ok() && (*before)->negative_control && !(*after)->negative_control) {
        return absl::InvalidArgumentError(
            absl::StrCat("mm_cid variant '", whole, "': design token '", t,
                         "' would replace the negative control ", v.design,
                         " (a variant using a negative-control part is one itself)"));
      }
      v.design = canonical;
      continue;
    }
    if (seen[axis]) {
      return absl::InvalidArgumentError(
          absl::StrCat("mm_cid variant '", whole, "': two tokens of one axis (second: '", t, "')"));
    }
    seen[axis] = true;
    if (lazy_token.empty()) lazy_token = t;
    std::string* field[] = {&v.lazy.allocator, &v.lazy.scope, &v.lazy.granularity,
                            &v.lazy.placement, &v.lazy.tick};
    *field[axis] = canonical;
  }
  absl::StatusOr<const DesignEntry*> design = DesignRegistry().Find(v.design);
  if (!lazy_token.empty() && design.ok() && !(*design)->factory.traits.lazy_axes) {
    return absl::InvalidArgumentError(absl::StrCat("mm_cid variant '", whole, "': design ",
                                                   v.design, " has no lazy axes (token '",
                                                   lazy_token, "')"));
  }
  // A negative-control tick policy the placement overrides (its traits imply
  // tick_kick) would be dropped silently, and the variant with it.
  if (seen[4]) {
    absl::StatusOr<const TickPolicyEntry*> tick = TickPolicyRegistry().Find(v.lazy.tick);
    absl::StatusOr<const PlacementEntry*> placement = PlacementRegistry().Find(v.lazy.placement);
    if (tick.ok() && (*tick)->negative_control && placement.ok()) {
      const std::unique_ptr<PlacementStrategy> p = (*placement)->factory();
      if (p != nullptr && p->traits().tick_kick && (*tick)->name != "tick_kick") {
        return absl::InvalidArgumentError(
            absl::StrCat("mm_cid variant '", whole, "': placement ", v.lazy.placement,
                         " implies tick_kick, which would replace the "
                         "negative-control tick policy ",
                         v.lazy.tick, " (a variant using a negative-control part is one itself)"));
      }
    }
  }
  return v;
}

}  // namespace isolation::mm_cid
