// SPDX-License-Identifier: GPL-2.0-or-later
// -----------------------------------------------------------------------------
// topology.h
// -----------------------------------------------------------------------------
//
// The *model* machine the mechanisms run on: its CPUs, SMT siblings, last-level
// caches, NUMA nodes, and which CPUs are possible, present and online.  It is
// built either from the host (hwloc) or from an hwloc synthetic description
// such as "package:2 l3cache:4 core:16 pu:1", so a 128- or 4096-CPU machine can
// be modelled on a 2-CPU host.
//
// Kernel counterpart: the topology masks of include/linux/topology.h and
// kernel/sched/topology.c (cpu_smt_mask, per-CPU sd_llc_id / llc span,
// cpu_to_node / cpumask_of_node) and the possible/present/online masks of
// include/linux/cpumask.h; CPU hotplug changes the online mask at run time.
//
// The model topology is kept apart from the host topology used for pinning:
// a synthetic hwloc topology binds nothing (hwloc_set_cpubind is a silent
// no-op there), so the real-thread driver pins through its own host topology
// (see real_driver.h), never through this object.
//
// CPU numbering follows hwloc's OS indexes: consecutive SMT siblings by default;
// "pu:2(indexes=core:pack)" numbers siblings like Intel servers (core L#0 =
// PUs {0, N}).  Every PU of the description is possible, present and, at
// construction, online.
//
// Memory: linear in the number of CPUs for cores -- a core is stored as its
// list of CPUs, not as an N-bit mask (with "pu:1" there are N cores, and N
// masks of N bits made set-up quadratic: 8 MiB at 8192 CPUs) -- while each
// LLC and NUMA node keeps an N-bit CpuMask (there are few of them).  The
// kernel keeps a per-CPU cpu_smt_mask; here smt_siblings()/core_mask() build
// that mask on demand (it allocates), and core_cpus() is the allocation-free
// form for hot paths.
//
// Thread safety: const member functions may be called concurrently; SetOnline
// must not run concurrently with any other member function (the drivers
// serialise hotplug).

#ifndef ISOLATION_TOPOLOGY_H_
#define ISOLATION_TOPOLOGY_H_

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "isolation/core/contract.h"
#include "isolation/core/cpumask.h"

namespace isolation {

// MAX_NUMNODES with the largest NODES_SHIFT (10): the bound on NUMA node ids
// that sizing code (timer-migration hierarchy, vmstat nodes) accepts.
inline constexpr int kMaxNumaNodes = 1024;

class Topology {
 public:
  // Parses an hwloc synthetic string (hwloc_topology_set_synthetic syntax)
  // and builds the machine hwloc would build from it, without handing the
  // string to hwloc (whose loader takes minutes on wide levels).  Accepted:
  // a strict subset of hwloc's language, e.g. "package:2 l3cache:4 core:16
  // pu:2", "numa:2 core:8 pu:1", "pack:1 [numa] core:4 pu:2",
  // "pack:2 core:4 pu:2(indexes=core:pack)", hex counts ("pu:0x10"); the
  // full grammar is in lib/core/synthetic.h.  Errors (InvalidArgument) name
  // the escaped string and the byte position; anything outside the grammar,
  // embedded NULs, and a machine of more than kMaxCpus PUs are rejected
  // after a scan linear in the length of the string.  A description without
  // a cache level gets one LLC per package (or per machine), as the kernel
  // does when no shared cache is reported.
  static absl::StatusOr<Topology> FromSynthetic(std::string_view description);
  // The host machine as hwloc sees it (restricted to CPUs this process may
  // use; their numbers must be dense from 0).  Never silently redirected:
  // if HWLOC_SYNTHETIC/HWLOC_XMLFILE in the environment make hwloc load
  // something else, FailedPrecondition naming the variables.
  static absl::StatusOr<Topology> FromHost();
  // "host" or a synthetic description.
  static absl::StatusOr<Topology> FromFlag(std::string_view spec);

  // Number of possible CPUs (nr_cpu_ids); every mask of this topology has
  // this many bits.
  int num_cpus() const { return num_cpus_; }
  int num_cores() const { return static_cast<int>(core_start_.size()) - 1; }
  int num_llcs() const { return static_cast<int>(llc_masks_.size()); }
  int num_nodes() const { return static_cast<int>(node_masks_.size()); }
  int num_packages() const { return num_packages_; }

  const CpuMask& possible() const { return possible_; }
  const CpuMask& present() const { return present_; }
  const CpuMask& online() const { return online_; }
  // false for a CPU outside [0, num_cpus()) (cpu_online() of no CPU).
  bool IsOnline(int cpu) const { return online_.TestInRange(cpu); }

  // REQUIRES for the per-CPU and per-id accessors: 0 <= cpu < num_cpus(),
  // ids below num_cores() / num_llcs() / num_nodes() (checked with
  // ISOLATION_CONTRACT, contract.h).
  int core_of(int cpu) const { return core_of_[CpuIndex(cpu)]; }
  int llc_of(int cpu) const { return llc_of_[CpuIndex(cpu)]; }
  int node_of(int cpu) const { return node_of_[CpuIndex(cpu)]; }
  int package_of(int cpu) const { return package_of_[CpuIndex(cpu)]; }
  // The CPUs of `core` (its SMT siblings), ascending.  No allocation: the
  // form for hot paths.
  std::span<const int> core_cpus(int core) const {
    const size_t k = IdIndex(core, static_cast<size_t>(num_cores()), "core");
    return std::span<const int>(core_cpus_)
        .subspan(static_cast<size_t>(core_start_[k]),
                 static_cast<size_t>(core_start_[k + 1] - core_start_[k]));
  }
  // SMT siblings of `cpu`, including `cpu` itself (cpu_smt_mask), and the
  // CPUs of `core`, as masks of num_cpus() bits built on each call: they
  // allocate, so hot paths use core_of()/core_cpus() instead.
  CpuMask smt_siblings(int cpu) const { return core_mask(core_of(cpu)); }
  CpuMask core_mask(int core) const;
  const CpuMask& llc_mask(int llc) const {
    return llc_masks_[IdIndex(llc, llc_masks_.size(), "llc")];
  }
  const CpuMask& node_mask(int node) const {
    return node_masks_[IdIndex(node, node_masks_.size(), "node")];
  }
  // Same LLC (cpus_share_cache).
  bool SharesCache(int a, int b) const { return llc_of(a) == llc_of(b); }
  int smt_width() const { return smt_width_; }

  // CPU hotplug.  Errors: cpu out of range; taking the last online CPU down.
  absl::Status SetOnline(int cpu, bool online);

  // The description this topology was built from ("host" for the host).
  const std::string& description() const { return description_; }
  // A one-line summary, e.g. "128 cpus, 128 cores, 8 llcs, 1 numa node".
  std::string Summary() const;

  // Builds a topology from explicit per-CPU ids (for tests and embedders).
  // All vectors have one entry per CPU; ids are dense from 0.
  static absl::StatusOr<Topology> FromIds(std::vector<int> core_of, std::vector<int> llc_of,
                                          std::vector<int> node_of, std::vector<int> package_of,
                                          std::string description);

 private:
  Topology() = default;
  size_t CpuIndex(int cpu) const {
    ISOLATION_CONTRACT(cpu >= 0 && cpu < num_cpus_, "cpu %d outside the topology's [0, %d)", cpu,
                       num_cpus_);
    return static_cast<size_t>(cpu);
  }
  static size_t IdIndex(int id, size_t n, const char* what) {
    ISOLATION_CONTRACT(id >= 0 && static_cast<size_t>(id) < n, "%s id %d outside [0, %d)", what, id,
                       n);
    return static_cast<size_t>(id);
  }

  std::string description_;
  int num_cpus_ = 0;
  int num_packages_ = 0;
  int smt_width_ = 1;
  CpuMask possible_, present_, online_;
  std::vector<int> core_of_, llc_of_, node_of_, package_of_;
  // The CPUs of core k are core_cpus_[core_start_[k] .. core_start_[k + 1]),
  // ascending (num_cores() + 1 offsets).
  std::vector<int> core_cpus_;
  std::vector<int> core_start_ = {0};
  std::vector<CpuMask> llc_masks_, node_masks_;
};

}  // namespace isolation

#endif  // ISOLATION_TOPOLOGY_H_
