// SPDX-License-Identifier: GPL-2.0-or-later
// synthetic.h (internal, not installed): the parser behind
// Topology::FromSynthetic.
//
// hwloc's synthetic loader (hwloc/topology-synthetic.c) is far too slow to
// be handed untrusted strings: it reads any arity with strtoul (so
// "pu:0x4e20" is 20000 PUs), builds every object before anyone can check the
// size, and inserts each object by walking its parent's whole child list, so
// loading costs about objects x widest level x cpuset words ("pu:8192" takes
// ~47 s, "core:8192 pu:1" ~98 s with hwloc 2.9).  So the description is
// parsed here, completely, by a strict grammar that accepts a subset of
// hwloc's language, and the topology is built from the parse without hwloc.
// Anything outside the subset, and any machine of more than kMaxCpus PUs, is
// an InvalidArgument error naming the string and the byte position.
//
// Accepted grammar (whitespace = ' ' or '\n', as hwloc skips between items):
//   description := ws* item (ws+ item)* ws*
//   item        := level | "[" numa-name ["(" "memory=" size ")"] "]"
//   level       := type ":" count ["(" attr (" " attr)* ")"]
//   type        := package | pack | socket | numa | numanode | node |
//                  l3 | l3cache | l2 | l2cache | l1 | l1d | l1cache | l1dcache |
//                  core | pu                                 (lower case)
//   count       := [1-9][0-9]* | "0x" hexdigits | "0X" hexdigits   (>= 1)
//   attr        := "memory=" size (non-cache levels) | "size=" size (caches)
//                | "indexes=" index-spec              (pu level only)
//   size        := [0-9]+ ["kB" | "MB" | "GB" | "TB" (any case)]
//   index-spec  := n ("," n)*          explicit os index of every PU
//                | n "*" n (":" n "*" n)*   interleaving loops (step*count)
//                | type (":" type)*    interleaving by level, e.g. core:pack
// Levels appear top-down, each type at most once, package above the caches,
// caches in order l3, l2, l1 above core, a numa level (or one [numa]
// attachment, not both) anywhere above core, and pu last.  The interleaving
// and explicit-index semantics follow hwloc_synthetic_process_indexes();
// hwloc silently drops an indexes= it cannot use, we reject it, and we also
// require the resulting PU numbering to be a permutation of 0..N-1.
//
// LoadSyntheticWithHwloc is the reference the tests and the fuzzer compare
// against: hwloc itself, no pre-check.  Only call it with small descriptions.
//
// Thread safety: pure functions.

#ifndef ISOLATION_LIB_CORE_SYNTHETIC_H_
#define ISOLATION_LIB_CORE_SYNTHETIC_H_

#include <cstdint>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "isolation/core/topology.h"

namespace isolation::internal {

enum class SyntheticType { kPackage, kNuma, kL3, kL2, kL1, kCore, kPu };

struct SyntheticLevel {
  SyntheticType type;
  int arity;  // objects of this level per object of the level above (>= 1)
};

struct SyntheticMachine {
  std::vector<SyntheticLevel> levels;  // top-down; the last one is kPu
  // Where a "[numa]" item is attached: 0 = the machine (before every level),
  // k = after levels[k - 1] (one NUMA node per object of that level);
  // -1 = none (a numa level, or hwloc's single default node).
  int numa_attach_depth = -1;
  int num_pus = 0;
  // OS index (CPU number) of the i-th PU in depth-first order.
  std::vector<int> pu_os_index;
};

// Parses `description` (see the grammar above).  Errors: InvalidArgument
// naming the escaped description, the byte position and what was expected,
// or the PU count when it exceeds kMaxCpus.  Runs in time linear in the
// length of the description plus the PU count (at most kMaxCpus).
absl::StatusOr<SyntheticMachine> ParseSynthetic(std::string_view description);

// Renumbers arbitrary ids densely from 0 in order of first appearance.
std::vector<int> DensifyIds(const std::vector<int>& ids);

// The topology of a parsed machine (per-PU core/LLC/node/package ids).
absl::StatusOr<Topology> BuildSynthetic(const SyntheticMachine& machine, std::string description);

// hwloc_topology_set_synthetic + load, read like FromHost reads the host.
// Reference for tests only: hwloc's cost is superlinear in the PU count.
absl::StatusOr<Topology> LoadSyntheticWithHwloc(std::string_view description);

}  // namespace isolation::internal

#endif  // ISOLATION_LIB_CORE_SYNTHETIC_H_
