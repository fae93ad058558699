// SPDX-License-Identifier: GPL-2.0-or-later
// registered.h (internal): how the experiments name variants -- through the
// mechanisms' registries (core/registry.h), so a variant registered by the
// binary that runs isolab (isolab/isolab.h) is accepted by every variant
// option and shows as a row.
//
//  - Resolve*: one name (case-insensitive, as the registry) to its registered
//    spelling; an unknown name is InvalidArgument naming the flag and the
//    value and listing the registered names.
//  - Outside*: the registered variants whose origin is outside the library
//    and that are not negative controls (a user's), in registration order.
//  - Default*: the options structs' default lists and the experiments'
//    default rows: the entries whose `is_default_row()` holds (the seeds'
//    built-ins, and a user's variant unless it is a negative control or
//    says otherwise), in registration order.  Read at call time; nothing
//    here lists a name.
//
// Thread safety: the registries are thread-safe; so are these functions.

#ifndef ISOLATION_LIB_EXPERIMENTS_REGISTERED_H_
#define ISOLATION_LIB_EXPERIMENTS_REGISTERED_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace isolation::experiments {

// Registered spellings.  `flag` prefixes the error ("--idle_variants").
absl::StatusOr<std::string> ResolveSelector(std::string_view flag,
                                            std::string_view name);  // idle_select
absl::StatusOr<std::string> ResolveFoldPolicy(std::string_view flag,
                                              std::string_view name);  // vmstat
absl::StatusOr<std::string> ResolveParticipation(std::string_view flag,
                                                 std::string_view name);  // tmigr
absl::StatusOr<std::string> ResolveAllocator(std::string_view flag,
                                             std::string_view name);  // mm_cid

// Registered outside the library, not negative controls.
std::vector<std::string> OutsideSelectors();
std::vector<std::string> OutsideFoldPolicies();
std::vector<std::string> OutsideParticipations();
std::vector<std::string>
OutsideScopes();  // mm_cid scan scopes: rows of the scan and compaction tables
std::vector<std::string> OutsidePlacements();  // mm_cid placements: rows of the placement table

// The defaults of --idle_variants, --vmstat_strategies, --tmigr_variants.
std::vector<std::string> DefaultIdleVariants();
std::vector<std::string> DefaultVmstatStrategies();
std::vector<std::string> DefaultTmigrVariants();

// A default row: the registered name and the label its rows show.
struct RowVariant {
  std::string name;
  std::string label;
  bool negative_control = false;
};
std::vector<RowVariant> DefaultScopeRows();  // mm_cid scan scopes: the scan and compaction tables
std::vector<RowVariant> DefaultPlacementRows();  // mm_cid placements: the placement table

// "registered: a, b, c (negative controls: x, y)" for a flag's help text.
std::string RegisteredSelectorsHelp();
std::string RegisteredFoldPoliciesHelp();
std::string RegisteredParticipationsHelp();
std::string RegisteredAllocatorsHelp();

}  // namespace isolation::experiments

#endif  // ISOLATION_LIB_EXPERIMENTS_REGISTERED_H_
