// SPDX-License-Identifier: GPL-2.0-or-later
// -----------------------------------------------------------------------------
// mm_cid/variant.h
// -----------------------------------------------------------------------------
//
// Which mm_cid variant to build: a registered design (registry.h) and, for
// the designs built on the lazy axes, one registered strategy per axis
// (strategies.h).  The configuration of each design is its own struct: the
// lazy design's is LazyConfig; owner619 and v63_mmlock take none (their
// historical fix toggles are registered designs of their own, flagged as
// negative controls).
//
//   MmCidVariant v;                              //
//   lazy+alloc_v6_14+scan_possible+batch_full+work_taskwork v.lazy.scope = "scan_allowed"; // any
//   registered scope, built-in or not auto m = MmCid::Create(128, v); auto w =
//   ParseVariant("lazy+alloc_v6_13+batch_8+work_rcu");   // axes in any order, defaults elsewhere
//
// Kernel counterpart: none (the kernel picks its variant at build time);
// the names are the identifiers of docs/mm_cid.md ("Variants and their spec
// identifiers").
//
// Thread-safety contract: plain values.  Name() and ParseVariant() read the
// registries (registry.h), which are thread-safe.

#ifndef ISOLATION_MM_CID_VARIANT_H_
#define ISOLATION_MM_CID_VARIANT_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace isolation::mm_cid {

// The lazy design's axes, each naming a registered strategy (registry.h).
struct LazyConfig {
  std::string allocator = "alloc_v6_14";
  std::string scope = "scan_possible";
  std::string granularity = "batch_full";  // or "batch_<N>" (the batch_N family), e.g. "batch_8"
  std::string placement = "work_taskwork";
  // no_tick_kick | tick_kick; a placement whose traits say tick_kick
  // (work_unbound, work_resume) implies tick_kick whatever this says.
  std::string tick = "no_tick_kick";
  bool operator==(const LazyConfig&) const = default;
};

struct MmCidVariant {
  std::string design = "lazy";
  LazyConfig lazy;  // read only by designs whose DesignTraits::lazy_axes is set
  bool operator==(const MmCidVariant&) const = default;

  // The spec identifier: "lazy+alloc_v6_14+scan_possible+batch_full+work_taskwork"
  // (+tick_kick where it is a choice), "owner619", "owner619_direct".  For
  // a design that is not registered, the fields as given.
  std::string Name() const;
};

// Parses a Name(): the design first, then the lazy axes' strategy names in
// any order (each token is looked up in every axis's registry; an omitted
// axis keeps its default).  The flat names of the deprecated MmCidConfig parse too
// ("owner619+owner619_direct", "...+lazy_no_dekker_fences": a later design
// token replaces the design).  Errors: NotFound naming the unknown token and
// listing the registered names; InvalidArgument for an empty name, two
// tokens of one axis, or axes after a design that has none.
absl::StatusOr<MmCidVariant> ParseVariant(std::string_view name);

}  // namespace isolation::mm_cid

#endif  // ISOLATION_MM_CID_VARIANT_H_
