// SPDX-License-Identifier: GPL-2.0-or-later
// The registries of vmstat's two axes (fold_policy.h, slot.h).  Built-ins are
// registered by the first call of each registry function (a function-local
// static: no static-initialisation order, and the built-ins are referenced
// from here, so a static link never drops them).

#include <algorithm>
#include <array>
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "isolation/core/contract.h"
#include "isolation/vmstat/vmstat.h"
#include "vmstat/builtin.h"

namespace isolation::vmstat {
namespace {

// A built-in that does not register is a bug of this file, not input
// (registry_test lists every built-in, so it cannot go unnoticed).
void MustRegister(const absl::Status& status) {
  ISOLATION_CONTRACT(status.ok(), "vmstat: a built-in variant failed to register: %s",
                     std::string(status.message()));
  (void)status;
}

VariantRegistry<SlotFactory>& MutableSlotRegistry() {
  // Never destroyed, as FoldPolicyRegistry's.
  static VariantRegistry<SlotFactory>* const registry = [] {
    auto* r = new VariantRegistry<SlotFactory>("vmstat slot");
    MustRegister(r->Register(internal::S8OwnerSlot()));
    MustRegister(r->Register(internal::S32AtomicSlot()));
    MustRegister(r->Register(internal::S64WatermarkSlot()));
    MustRegister(r->Register(internal::S32XaddSlot()));
    MustRegister(r->Register(internal::S32ScaledSlot()));
    MustRegister(r->Register(internal::S32PlainSlot()));
    return r;
  }();
  return *registry;
}

// The enum of the compatibility names, in registration order of the names.
constexpr std::array<std::pair<Strategy, std::string_view>, 7> kStrategyNames = {{
    {Strategy::kA0, "A0"},
    {Strategy::kA1, "A1"},
    {Strategy::kB, "B"},
    {Strategy::kBLocal, "B.local"},
    {Strategy::kC, "C"},
    {Strategy::kD, "D"},
    {Strategy::kCPlainWriterNegativeControl, "C-plain"},
}};

}  // namespace

namespace {
// How many entries the registry held when its built-ins were in: they are
// registered first, when it is made (Names() is in registration order).
size_t& BuiltinFoldPolicyCount() {
  static size_t count = 0;
  return count;
}
}  // namespace

VariantRegistry<FoldPolicyFactory>& FoldPolicyRegistry() {
  // Never destroyed: entries may be read until exit, static destructors
  // included.
  static VariantRegistry<FoldPolicyFactory>* const registry = [] {
    auto* r = new VariantRegistry<FoldPolicyFactory>("vmstat fold policy");
    MustRegister(r->Register(internal::A0Policy()));
    MustRegister(r->Register(internal::A1Policy()));
    MustRegister(r->Register(internal::BPolicy()));
    MustRegister(r->Register(internal::BLocalPolicy()));
    for (FoldPolicyEntry& e : internal::RemotePolicies()) MustRegister(r->Register(std::move(e)));
    BuiltinFoldPolicyCount() = r->Names(/*include_negative_controls=*/true).size();
    return r;
  }();
  return *registry;
}

bool IsBuiltinFoldPolicy(std::string_view name) {
  auto canonical = ParseFoldPolicy(name);  // makes the registry
  if (!canonical.ok()) return false;
  const std::vector<std::string> names = FoldPolicyRegistry().Names(/*include_negative_controls=*/true);
  const auto it = std::find(names.begin(), names.end(), *canonical);
  return static_cast<size_t>(it - names.begin()) < BuiltinFoldPolicyCount();
}

const VariantRegistry<SlotFactory>& SlotRegistry() { return MutableSlotRegistry(); }

absl::Status RegisterFoldPolicy(FoldPolicyEntry entry) {
  // A policy over a negative-control slot breaks what that slot breaks: it
  // is a negative control itself, or it would join the default lists
  // unnoticed.
  if (!entry.negative_control && entry.factory) {
    const std::unique_ptr<FoldPolicy> probe = entry.factory();
    if (probe != nullptr) {
      const std::string slot(probe->traits().slot);
      if (auto s = SlotRegistry().Find(slot); s.ok() && (*s)->negative_control) {
        return absl::InvalidArgumentError(absl::StrCat(
            "vmstat fold policy '", absl::CHexEscape(entry.name), "': its default slot '", slot,
            "' is a negative control; register the policy with negative_control = true (it is one too)"));
      }
    }
  }
  return FoldPolicyRegistry().Register(std::move(entry));
}

absl::StatusOr<std::string> ParseFoldPolicy(std::string_view name) {
  // Spellings of the library before the registry (isolab command lines).
  const std::string upper = absl::AsciiStrToUpper(std::string(name));
  std::string_view wanted = name;
  if (upper == "B-LOCAL" || upper == "BLOCAL") wanted = "B.local";
  if (upper == "C-PLAIN-NEGATIVE-CONTROL") wanted = "C-plain";
  auto entry = FoldPolicyRegistry().Find(wanted);
  if (!entry.ok()) return absl::InvalidArgumentError(entry.status().message());
  return (*entry)->name;
}

std::vector<VariantInfo> ListVariants() {
  std::vector<VariantInfo> out;
  AppendVariantInfos(FoldPolicyRegistry(), "vmstat", "fold_policy", out);
  AppendVariantInfos(SlotRegistry(), "vmstat", "slot", out);
  return out;
}

std::string_view StrategyName(Strategy s) {
  for (const auto& [value, name] : kStrategyNames) {
    if (value == s) return name;
  }
  return "?";
}

absl::StatusOr<Strategy> ParseStrategy(std::string_view name) {
  auto canonical = ParseFoldPolicy(name);
  if (!canonical.ok()) return canonical.status();
  for (const auto& [value, n] : kStrategyNames) {
    if (n == *canonical) return value;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("vmstat fold policy '", *canonical, "' has no compatibility enum value; use its name"));
}

}  // namespace isolation::vmstat
