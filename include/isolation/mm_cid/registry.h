// SPDX-License-Identifier: GPL-2.0-or-later
// -----------------------------------------------------------------------------
// mm_cid/registry.h
// -----------------------------------------------------------------------------
//
// The registries of mm_cid's variant axes: designs (lazy, owner619,
// v63_mmlock, and the negative controls lazy_no_dekker_fences,
// owner619_direct, owner619_walk619, owner619_split_mode) and the lazy
// design's strategies (strategies.h): allocators, scan scopes, scan
// granularities, placements, tick policies.  Everything that lists, parses
// or enumerates variants reads them -- ParseVariant(), MmCid::Create(), the
// conformance kit's parameter lists (testing/mm_cid.h), the benchmarks,
// `isolab variants` -- so one Register*() call from outside the library
// gives a new strategy or design every suite, benchmark and table row:
//
//   class MyScope : public isolation::mm_cid::ScopeStrategy { ... };
//   absl::Status s = isolation::mm_cid::RegisterScope(
//       {"scan_mine", "visits ... (my patch)", /*negative_control=*/false,
//        [] { return std::unique_ptr<isolation::mm_cid::ScopeStrategy>(new MyScope); }});
//   auto m = isolation::mm_cid::MmCid::Create(64, "lazy+scan_mine");
//
// A whole new design registers a DesignFactory (its create function gets
// the LazyConfig when its traits say lazy_axes, and may ignore it otherwise).
//
// Kernel counterpart: none; the built-ins' files name theirs.
//
// Thread-safety contract: every function may be called from any thread (the
// registries lock internally; core/registry.h).  Each registry is created,
// with its built-ins registered, at its first use (a function-local static:
// no static-initialisation order problem, and the built-ins are linked from a
// static library because this file's code references them).  Register
// outside strategies before enumerating (for GoogleTest: before
// InitGoogleTest, e.g. from a namespace-scope initializer).

#ifndef ISOLATION_MM_CID_REGISTRY_H_
#define ISOLATION_MM_CID_REGISTRY_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "isolation/core/registry.h"
#include "isolation/mm_cid/mm_cid.h"
#include "isolation/mm_cid/strategies.h"
#include "isolation/mm_cid/variant.h"

namespace isolation::mm_cid {

// Properties a design declares; the conformance kit decides which
// expectation of a scenario applies from these, never from the name.
struct DesignTraits {
  // Built from a LazyConfig (strategies.h): has a compaction scan, a
  // placement and the lazy axes' strategies.
  bool lazy_axes = false;
  // A forked child holds an ID before its first switch-in (owner619's
  // per-task mode allocates at fork).
  bool ids_at_fork = false;
  // IDs compact at the next schedin, without any scan (owner619: a schedin
  // converges below max_cids; v63_mmlock: put at switch-out, first zero at
  // switch-in).
  bool converges_at_schedin = false;
  // Per-task / per-CPU ownership modes switched by user thresholds
  // (owner619): S7's pools must cross them both ways.
  bool ownership_modes = false;
  // The bound S3 asserts on the IDs of an mm whose union is A CPUs and which
  // has U users: min(U, A) (kUsersAndAllowed: lazy, v63_mmlock), or
  // max_cids = min(opt + opt/4, P) with opt = min(U, A) (kMaxCids: owner619).
  enum class IdBound { kUsersAndAllowed, kMaxCids };
  IdBound id_bound = IdBound::kUsersAndAllowed;
};

using DesignCreate = absl::AnyInvocable<absl::StatusOr<std::unique_ptr<MmCid>>(
    int num_cpus, const LazyConfig& lazy, const MmCid::Limits& limits) const>;
struct DesignFactory {
  DesignCreate create;
  DesignTraits traits;
  explicit operator bool() const { return static_cast<bool>(create); }
};
using DesignEntry = VariantEntry<DesignFactory>;

using AllocatorFactory = absl::AnyInvocable<std::unique_ptr<AllocatorStrategy>() const>;
using ScopeFactory = absl::AnyInvocable<std::unique_ptr<ScopeStrategy>() const>;
using PlacementFactory = absl::AnyInvocable<std::unique_ptr<PlacementStrategy>() const>;
using TickPolicyFactory = absl::AnyInvocable<std::unique_ptr<TickPolicy>() const>;
// Granularities may be parameterised: an entry whose name ends in "_N" is a
// family -- "batch_N" makes "batch_8" with n = 8 (n outside [1, kMaxCpus] is
// the factory's InvalidArgument); an entry named otherwise gets n = 0.
// `enumerate_n` is the parameter the enumerations below use (the
// default, batch_8).
struct GranularityFactory {
  absl::AnyInvocable<absl::StatusOr<std::unique_ptr<GranularityStrategy>>(int n) const> create;
  int enumerate_n = 0;
  explicit operator bool() const { return static_cast<bool>(create); }
};
using AllocatorEntry = VariantEntry<AllocatorFactory>;
using ScopeEntry = VariantEntry<ScopeFactory>;
using GranularityEntry = VariantEntry<GranularityFactory>;
using PlacementEntry = VariantEntry<PlacementFactory>;
using TickPolicyEntry = VariantEntry<TickPolicyFactory>;

VariantRegistry<DesignFactory>& DesignRegistry();
VariantRegistry<AllocatorFactory>& AllocatorRegistry();
VariantRegistry<ScopeFactory>& ScopeRegistry();
VariantRegistry<GranularityFactory>& GranularityRegistry();
VariantRegistry<PlacementFactory>& PlacementRegistry();
VariantRegistry<TickPolicyFactory>& TickPolicyRegistry();

// Registration from outside the library (core/registry.h's errors: empty or
// malformed name, a name taken -- case-insensitively -- null factory).
absl::Status RegisterDesign(DesignEntry entry);
absl::Status RegisterAllocator(AllocatorEntry entry);
absl::Status RegisterScope(ScopeEntry entry);
absl::Status RegisterGranularity(GranularityEntry entry);
absl::Status RegisterPlacement(PlacementEntry entry);
absl::Status RegisterTickPolicy(TickPolicyEntry entry);

// The strategies of one LazyConfig, made from the registries.
struct LazyStrategies {
  std::unique_ptr<AllocatorStrategy> allocator;
  std::unique_ptr<ScopeStrategy> scope;
  std::unique_ptr<GranularityStrategy> granularity;
  std::unique_ptr<PlacementStrategy> placement;
  std::unique_ptr<TickPolicy> tick;  // `tick_kick` when the placement implies it
  bool negative_control = false;     // one of them is a registered negative control
};
// Errors: NotFound naming an unknown strategy (and listing the registered
// ones), InvalidArgument from a family's factory (e.g. "batch_0").
absl::StatusOr<LazyStrategies> MakeLazyStrategies(const LazyConfig& config);

// Everything the conformance kit needs to know about a variant.
struct VariantTraits {
  DesignTraits design;
  AllocatorTraits allocator;      // lazy axes only
  PlacementTraits placement;      // lazy axes only
  int batch = 0;                  // GranularityStrategy::batch()
  bool tick_kick = false;         // the effective tick policy is `tick_kick`
  bool negative_control = false;  // the design or a strategy is a registered negative control
};
absl::StatusOr<VariantTraits> DescribeVariant(const MmCidVariant& variant);

// Enumerations over the registries (registration order).
// Every combination of the variants that are not negative controls: each
// design without lazy axes once; each lazy-axes design with every allocator
// x scope x granularity x placement (families at their enumerate_n, the
// default tick policy).  With the built-ins: 3 x 2 x 2 x 5 + 2 = 62.
std::vector<MmCidVariant> AllVariants();
// A covering subset: the default lazy variant, then each non-control design
// and each non-control strategy of every axis (tick policies included) once,
// the other axes at their defaults -- every registered variant runs, at a
// fraction of the combinations (for the long-running suites).
std::vector<MmCidVariant> CoveringVariants();
// One variant per registered negative control: the control with every other
// axis at its default (a control design with the default LazyConfig).
std::vector<MmCidVariant> NegativeControlVariants();

// `isolab variants` rows: every entry of every axis (mechanism "mm_cid";
// axes design, allocator, scope, granularity, placement, tick).
std::vector<VariantInfo> ListVariants();

}  // namespace isolation::mm_cid

#endif  // ISOLATION_MM_CID_REGISTRY_H_
