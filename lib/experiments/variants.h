// SPDX-License-Identifier: GPL-2.0-or-later
// variants.h (internal): `isolab variants`, every registered variant of every
// mechanism's variant axes, read from the registries (core/registry.h) through
// each mechanism's ListVariants(): built-ins, negative controls and whatever
// outside code registered before the call.
// Thread safety: the registries are thread-safe; so are these functions.

#ifndef ISOLATION_LIB_EXPERIMENTS_VARIANTS_H_
#define ISOLATION_LIB_EXPERIMENTS_VARIANTS_H_

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "isolation/core/registry.h"

namespace isolation::experiments {

// Every registered variant: mm_cid (design, allocator, scope, granularity,
// placement, tick), tmigr, idle_select (selector), then vmstat
// (fold_policy, slot), each axis in registration order.
std::vector<VariantInfo> AllRegisteredVariants();

// One row per variant: mechanism, axis, name, "negative control" or "",
// description; columns aligned.
std::string VariantsText(const std::vector<VariantInfo>& variants);

// {"variants": [{"mechanism", "axis", "name", "description",
// "negative_control"}]}.
nlohmann::json VariantsJson(const std::vector<VariantInfo>& variants);

}  // namespace isolation::experiments

#endif  // ISOLATION_LIB_EXPERIMENTS_VARIANTS_H_
