// SPDX-License-Identifier: GPL-2.0-or-later
// Fuzz Topology::FromSynthetic (lib/core/synthetic.h).  The input is the
// description itself.  Properties: never crash, never slow (run with
// -timeout; the parser is linear and the build at most kMaxCpus PUs);
// an error is InvalidArgument and quotes the escaped description; an
// accepted machine has 1..kMaxCpus CPUs whose core/LLC/node masks partition
// them; and a small accepted machine (<= 64 CPUs) is exactly what hwloc
// itself builds from the same string (differential check against
// LoadSyntheticWithHwloc, which only ever sees strings the parser accepted).
//
// hwloc 2.9 leaks the 32-byte [numa] attachment record on the error paths
// after hwloc_backend_synthetic_init()'s parse loop ("numa:2 [numa] pu:2").
// The parser rejects all of those, so the reference call should never leak;
// should it ever, the leak is hwloc's, and LSan cannot name hwloc's frames
// (stripped, no frame pointers) to suppress it in a suppressions file.  So
// the reference call alone runs under __lsan_disable(): allocations made
// inside it are not leak-checked here.  synthetic_test checks the same call
// under ASan with leak detection on.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include <sanitizer/lsan_interface.h>

#include "absl/strings/escaping.h"
#include "isolation/core/cpumask.h"
#include "isolation/core/topology.h"
#include "synthetic.h"

namespace {

[[noreturn]] void Fail(const char* what, std::string_view input) {
  std::fprintf(stderr, "topology_fuzz: %s for \"%s\"\n", what,
               absl::CHexEscape(std::string(input)).c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view description(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<isolation::Topology> t = isolation::Topology::FromSynthetic(description);
  if (!t.ok()) {
    if (t.status().code() != absl::StatusCode::kInvalidArgument)
      Fail("error is not InvalidArgument", description);
    const std::string quoted = "\"" + absl::CHexEscape(std::string(description)) + "\"";
    if (std::string(t.status().message()).find(quoted) == std::string::npos)
      Fail("error does not quote the input", description);
    return 0;
  }
  const int n = t->num_cpus();
  if (n < 1 || n > isolation::kMaxCpus) Fail("cpu count out of range", description);
  int in_cores = 0, in_llcs = 0, in_nodes = 0;
  for (int i = 0; i < t->num_cores(); ++i) in_cores += t->core_mask(i).Weight();
  for (int i = 0; i < t->num_llcs(); ++i) in_llcs += t->llc_mask(i).Weight();
  for (int i = 0; i < t->num_nodes(); ++i) in_nodes += t->node_mask(i).Weight();
  if (in_cores != n || in_llcs != n || in_nodes != n)
    Fail("masks do not partition the cpus", description);
  for (int cpu = 0; cpu < n; ++cpu) {
    if (!t->smt_siblings(cpu).IsSubsetOf(t->llc_mask(t->llc_of(cpu))))
      Fail("core split across llcs", description);
    if (t->package_of(cpu) < 0 || t->package_of(cpu) >= t->num_packages())
      Fail("bad package id", description);
  }
  if (n > 64) return 0;
  __lsan_disable();
  absl::StatusOr<isolation::Topology> ref =
      isolation::internal::LoadSyntheticWithHwloc(description);
  __lsan_enable();
  if (!ref.ok()) Fail("hwloc rejects a description we accept", description);
  if (ref->num_cpus() != n) Fail("hwloc counts other cpus", description);
  for (int cpu = 0; cpu < n; ++cpu) {
    if (ref->core_of(cpu) != t->core_of(cpu) || ref->llc_of(cpu) != t->llc_of(cpu) ||
        ref->node_of(cpu) != t->node_of(cpu) || ref->package_of(cpu) != t->package_of(cpu)) {
      Fail("hwloc builds another machine", description);
    }
  }
  return 0;
}
