// SPDX-License-Identifier: GPL-2.0-or-later
// Topology construction: the host through hwloc, synthetic descriptions
// through our own parser (synthetic.cc; hwloc only as the test reference),
// and explicit per-CPU ids.

#include "isolation/core/topology.h"

#include <hwloc.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "synthetic.h"

namespace isolation {
namespace {

struct HwlocDeleter {
  void operator()(hwloc_topology* t) const { hwloc_topology_destroy(t); }
};
using HwlocTopology = std::unique_ptr<hwloc_topology, HwlocDeleter>;

// Index of the ancestor of `pu` of type `type` (its logical index), or -1.
int AncestorIndex(hwloc_topology_t t, hwloc_obj_t pu, hwloc_obj_type_t type) {
  hwloc_obj_t a = hwloc_get_ancestor_obj_by_type(t, type, pu);
  return a == nullptr ? -1 : static_cast<int>(a->logical_index);
}

// Reads a loaded hwloc topology into per-CPU ids.
absl::StatusOr<Topology> FromLoadedHwloc(hwloc_topology_t t, std::string description) {
  const int num_pus = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PU);
  if (num_pus <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("topology \"", description, "\" has no processing units"));
  }
  if (num_pus > kMaxCpus) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "topology \"%s\" has %d cpus, more than the maximum %d", description, num_pus, kMaxCpus));
  }
  const size_t n = static_cast<size_t>(num_pus);
  std::vector<int> core_of(n, -1), llc_of(n, -1), node_of(n, 0), package_of(n, -1);
  std::vector<bool> seen(n, false);
  const bool has_l3 = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_L3CACHE) > 0;
  const bool has_package = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PACKAGE) > 0;
  for (int i = 0; i < num_pus; ++i) {
    hwloc_obj_t pu = hwloc_get_obj_by_type(t, HWLOC_OBJ_PU, static_cast<unsigned>(i));
    const unsigned cpu = pu->os_index;
    if (cpu >= n || seen[cpu]) {
      return absl::InvalidArgumentError(
          absl::StrFormat("topology \"%s\": cpu numbers are not dense 0..%d (found os index %u)",
                          description, num_pus - 1, cpu));
    }
    seen[cpu] = true;
    // A PU without a core parent (odd VMs, "pu:N" descriptions) is its own core.
    const int core = AncestorIndex(t, pu, HWLOC_OBJ_CORE);
    core_of[cpu] = core >= 0 ? core : num_pus + i;
    // LLC: the L3 if the machine reports one, else the package, else the machine.
    int llc = has_l3 ? AncestorIndex(t, pu, HWLOC_OBJ_L3CACHE) : -1;
    if (llc < 0 && has_package) llc = 1000000 + AncestorIndex(t, pu, HWLOC_OBJ_PACKAGE);
    llc_of[cpu] = llc;
    package_of[cpu] = has_package ? AncestorIndex(t, pu, HWLOC_OBJ_PACKAGE) : 0;
  }
  // NUMA nodes are memory children, not CPU ancestors: go through their cpusets.
  const int num_nodes = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_NUMANODE);
  for (int k = 0; k < num_nodes; ++k) {
    hwloc_obj_t node = hwloc_get_obj_by_type(t, HWLOC_OBJ_NUMANODE, static_cast<unsigned>(k));
    if (node == nullptr || node->cpuset == nullptr) continue;
    for (int c = hwloc_bitmap_first(node->cpuset); c >= 0; c = hwloc_bitmap_next(node->cpuset, c)) {
      if (static_cast<size_t>(c) < n) node_of[static_cast<size_t>(c)] = k;
    }
  }
  return Topology::FromIds(internal::DensifyIds(core_of), internal::DensifyIds(llc_of),
                           internal::DensifyIds(node_of), internal::DensifyIds(package_of),
                           std::move(description));
}

}  // namespace

absl::StatusOr<Topology> Topology::FromSynthetic(std::string_view description) {
  // Parsed and built here, never by hwloc: see lib/core/synthetic.h.
  absl::StatusOr<internal::SyntheticMachine> machine = internal::ParseSynthetic(description);
  if (!machine.ok()) return machine.status();
  return internal::BuildSynthetic(*machine, std::string(description));
}

namespace internal {

absl::StatusOr<Topology> LoadSyntheticWithHwloc(std::string_view description) {
  const std::string desc(description);
  hwloc_topology_t raw = nullptr;
  if (hwloc_topology_init(&raw) != 0) return absl::InternalError("hwloc_topology_init failed");
  HwlocTopology t(raw);
  // set_synthetic overrides HWLOC_SYNTHETIC/HWLOC_XMLFILE in the environment.
  if (hwloc_topology_set_synthetic(raw, desc.c_str()) != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid hwloc synthetic topology \"", absl::CHexEscape(desc), "\""));
  }
  if (hwloc_topology_load(raw) != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("hwloc could not load synthetic topology \"", desc, "\""));
  }
  return FromLoadedHwloc(raw, desc);
}

}  // namespace internal

absl::StatusOr<Topology> Topology::FromHost() {
  hwloc_topology_t raw = nullptr;
  if (hwloc_topology_init(&raw) != 0) return absl::InternalError("hwloc_topology_init failed");
  HwlocTopology t(raw);
  // hwloc_topology_load() consults HWLOC_SYNTHETIC / HWLOC_XMLFILE /
  // HWLOC_FSROOT when no backend was chosen, and forces that backend even
  // past a component blacklist; there is no public way to force the native
  // one, and unsetenv() is not thread-safe.  So the host path refuses a
  // redirected load instead of silently modelling another machine.
  if (hwloc_topology_load(raw) != 0)
    return absl::InternalError("hwloc_topology_load of the host failed");
  if (!hwloc_topology_is_thissystem(raw)) {
    const char* synthetic = std::getenv("HWLOC_SYNTHETIC");
    const char* xml = std::getenv("HWLOC_XMLFILE");
    return absl::FailedPreconditionError(
        absl::StrCat("hwloc did not load this machine (is_thissystem == 0); the environment "
                     "redirects it: HWLOC_SYNTHETIC=\"",
                     synthetic ? synthetic : "", "\" HWLOC_XMLFILE=\"", xml ? xml : "",
                     "\" -- unset them, or use a synthetic description explicitly"));
  }
  return FromLoadedHwloc(raw, "host");
}

absl::StatusOr<Topology> Topology::FromFlag(std::string_view spec) {
  if (spec == "host") return FromHost();
  return FromSynthetic(spec);
}

absl::StatusOr<Topology> Topology::FromIds(std::vector<int> core_of, std::vector<int> llc_of,
                                           std::vector<int> node_of, std::vector<int> package_of,
                                           std::string description) {
  const size_t n = core_of.size();
  if (n == 0 || n > static_cast<size_t>(kMaxCpus)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("topology \"%s\": %d cpus is outside [1, %d]", description, n, kMaxCpus));
  }
  if (llc_of.size() != n || node_of.size() != n || package_of.size() != n) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "topology \"%s\": id vectors differ in length (core %d, llc %d, node %d, package %d)",
        description, n, llc_of.size(), node_of.size(), package_of.size()));
  }
  // Every id vector must use exactly the ids 0..k-1.
  Topology t;
  t.description_ = std::move(description);
  auto count_dense = [&](const std::vector<int>& ids, const char* what) -> absl::StatusOr<int> {
    int max_id = -1;
    for (size_t c = 0; c < n; ++c) {
      if (ids[c] < 0 || ids[c] >= static_cast<int>(n)) {
        return absl::InvalidArgumentError(
            absl::StrFormat("topology \"%s\": cpu %d has %s id %d, outside [0, %d)", t.description_,
                            c, what, ids[c], n));
      }
      max_id = std::max(max_id, ids[c]);
    }
    std::vector<bool> used(static_cast<size_t>(max_id + 1), false);
    for (int id : ids) used[static_cast<size_t>(id)] = true;
    for (size_t i = 0; i < used.size(); ++i) {
      if (!used[i]) {
        return absl::InvalidArgumentError(
            absl::StrFormat("topology \"%s\": %s ids are not dense (no cpu has %s %d)",
                            t.description_, what, what, i));
      }
    }
    return max_id + 1;
  };
  t.num_cpus_ = static_cast<int>(n);
  auto cores = count_dense(core_of, "core");
  if (!cores.ok()) return cores.status();
  auto llcs = count_dense(llc_of, "llc");
  if (!llcs.ok()) return llcs.status();
  auto nodes = count_dense(node_of, "node");
  if (!nodes.ok()) return nodes.status();
  auto packages = count_dense(package_of, "package");
  if (!packages.ok()) return packages.status();
  t.num_packages_ = *packages;
  // Cores as CPU lists (counting sort by core id, CPUs ascending within a
  // core): linear in CPUs, where one N-bit mask per core was quadratic.
  const size_t num_cores = static_cast<size_t>(*cores);
  t.core_start_.assign(num_cores + 1, 0);
  for (size_t c = 0; c < n; ++c) ++t.core_start_[static_cast<size_t>(core_of[c]) + 1];
  for (size_t k = 0; k < num_cores; ++k) t.core_start_[k + 1] += t.core_start_[k];
  t.core_cpus_.assign(n, 0);
  std::vector<int> next_slot(t.core_start_.begin(), t.core_start_.end() - 1);
  for (size_t c = 0; c < n; ++c) {
    const int slot = next_slot[static_cast<size_t>(core_of[c])]++;
    t.core_cpus_[static_cast<size_t>(slot)] = static_cast<int>(c);
  }
  t.llc_masks_.assign(static_cast<size_t>(*llcs), CpuMask(t.num_cpus_));
  t.node_masks_.assign(static_cast<size_t>(*nodes), CpuMask(t.num_cpus_));
  for (size_t c = 0; c < n; ++c) {
    const int cpu = static_cast<int>(c);
    t.llc_masks_[static_cast<size_t>(llc_of[c])].Set(cpu);
    t.node_masks_[static_cast<size_t>(node_of[c])].Set(cpu);
  }
  // A core lies in one LLC, node and package (SMT siblings share them all).
  int smt = 1;
  for (size_t k = 0; k < num_cores; ++k) {
    const size_t f = static_cast<size_t>(t.core_cpus_[static_cast<size_t>(t.core_start_[k])]);
    for (int i = t.core_start_[k] + 1; i < t.core_start_[k + 1]; ++i) {
      const size_t c = static_cast<size_t>(t.core_cpus_[static_cast<size_t>(i)]);
      if (llc_of[c] != llc_of[f] || node_of[c] != node_of[f] || package_of[c] != package_of[f]) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "topology \"%s\": cpus %d and %d share core %d but not its llc/node/package",
            t.description_, f, c, core_of[c]));
      }
    }
    smt = std::max(smt, t.core_start_[k + 1] - t.core_start_[k]);
  }
  t.smt_width_ = smt;
  t.possible_ = CpuMask::Full(t.num_cpus_);
  t.present_ = t.possible_;
  t.online_ = t.possible_;
  t.core_of_ = std::move(core_of);
  t.llc_of_ = std::move(llc_of);
  t.node_of_ = std::move(node_of);
  t.package_of_ = std::move(package_of);
  return t;
}

CpuMask Topology::core_mask(int core) const {
  CpuMask m(num_cpus_);
  for (int cpu : core_cpus(core)) m.Set(cpu);
  return m;
}

absl::Status Topology::SetOnline(int cpu, bool online) {
  if (cpu < 0 || cpu >= num_cpus_) {
    return absl::OutOfRangeError(
        absl::StrFormat("SetOnline: cpu %d is outside [0, %d)", cpu, num_cpus_));
  }
  if (!online && online_.Test(cpu) && online_.Weight() == 1) {
    return absl::FailedPreconditionError(
        absl::StrFormat("SetOnline: cpu %d is the last online cpu", cpu));
  }
  online_.Assign(cpu, online);
  return absl::OkStatus();
}

std::string Topology::Summary() const {
  auto plural = [](int n, const char* one, const char* many) {
    return absl::StrCat(n, " ", n == 1 ? one : many);
  };
  return absl::StrCat(plural(num_cpus_, "cpu", "cpus"), ", ", plural(num_cores(), "core", "cores"),
                      ", ", plural(num_llcs(), "llc", "llcs"), ", ",
                      plural(num_nodes(), "numa node", "numa nodes"), ", ",
                      plural(num_packages_, "package", "packages"));
}

}  // namespace isolation
