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

// The built-in lists of builtin.h as initializer lists of entry functions.
#define ISOLATION_VMSTAT_ADDRESS_(entry) &internal::entry,
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
    MustRegister(RegisterBuiltins(*r, {ISOLATION_VMSTAT_SLOTS(ISOLATION_VMSTAT_ADDRESS_)}));
    return r;
  }();
  return *registry;
}

}  // namespace

VariantRegistry<FoldPolicyFactory>& FoldPolicyRegistry() {
  // Never destroyed: entries may be read until exit, static destructors
  // included.
  static VariantRegistry<FoldPolicyFactory>* const registry = [] {
    auto* r = new VariantRegistry<FoldPolicyFactory>("vmstat fold policy");
    MustRegister(RegisterBuiltins(*r, {ISOLATION_VMSTAT_FOLD_POLICIES(ISOLATION_VMSTAT_ADDRESS_)}));
    for (FoldPolicyEntry& e : internal::RemotePolicies())
      MustRegister(r->Register(AsBuiltin(std::move(e))));
    return r;
  }();
  return *registry;
}

bool IsBuiltinFoldPolicy(std::string_view name) {
  auto entry = FoldPolicyRegistry().Find(name);
  return entry.ok() && (*entry)->is_builtin();
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
            "' is a negative control; register the policy with negative_control = true (it is one "
            "too)"));
      }
    }
  }
  return FoldPolicyRegistry().Register(std::move(entry));
}

absl::StatusOr<std::string> ParseFoldPolicy(std::string_view name) {
  // Older spellings are the entries' aliases.
  auto entry = FoldPolicyRegistry().Find(name);
  if (!entry.ok()) return absl::InvalidArgumentError(entry.status().message());
  return (*entry)->name;
}

std::vector<VariantInfo> ListVariants() {
  std::vector<VariantInfo> out;
  AppendVariantInfos(FoldPolicyRegistry(), "vmstat", "fold_policy", out);
  AppendVariantInfos(SlotRegistry(), "vmstat", "slot", out);
  return out;
}

#undef ISOLATION_VMSTAT_ADDRESS_

}  // namespace isolation::vmstat
