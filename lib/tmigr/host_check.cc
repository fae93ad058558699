// SPDX-License-Identifier: GPL-2.0-or-later
// tmigr_init()'s boot message against ComputeSizing() (see tmigr/host_check.h).

#include "isolation/tmigr/host_check.h"

#include <cstdio>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "isolation/core/cpumask.h"
#include "isolation/tmigr/tmigr.h"

namespace isolation::tmigr {

absl::StatusOr<TmigrBootMessage> FindTmigrBootMessage(std::string_view kernel_log) {
  static constexpr std::string_view kPrefix = "Timer migration: ";
  const size_t at = kernel_log.rfind(kPrefix);
  if (at == std::string_view::npos) {
    return absl::NotFoundError("no \"Timer migration:\" line in the kernel log");
  }
  size_t eol = kernel_log.find('\n', at);
  if (eol == std::string_view::npos) eol = kernel_log.size();
  const std::string line(kernel_log.substr(at, eol - at));
  TmigrBootMessage m;
  int consumed = 0;
  if (std::sscanf(
          line.c_str(),
          "Timer migration: %d hierarchy levels; %d children per group; %d crossnode level%n",
          &m.levels, &m.children_per_group, &m.crossnode_level, &consumed) != 3 ||
      consumed == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot read the tmigr boot line \"", line, "\""));
  }
  return m;
}

HostCheck CheckHierarchyLevels(const absl::StatusOr<std::string>& kernel_log,
                               const absl::StatusOr<std::string>& possible_cpus,
                               const absl::StatusOr<std::string>& possible_nodes) {
  HostCheck check{"tmigr: hierarchy levels vs the kernel's \"Timer migration:\" boot line",
                  HostVerdict::kNotAvailable, "", "", ""};
  if (!possible_cpus.ok()) {
    check.detail = std::string(possible_cpus.status().message());
    return check;
  }
  absl::StatusOr<CpuMask> cpus = CpuMask::Parse(*possible_cpus, kMaxCpus);
  if (!cpus.ok() || cpus->Empty()) {
    check.detail =
        absl::StrCat("/sys/devices/system/cpu/possible: cannot parse \"", *possible_cpus, "\"");
    return check;
  }
  int nnodes = 1;  // no /sys/devices/system/node: !CONFIG_NUMA, num_possible_nodes() == 1
  if (possible_nodes.ok()) {
    absl::StatusOr<CpuMask> nodes = CpuMask::Parse(*possible_nodes, kMaxCpus);  // a nodemask list
    if (!nodes.ok() || nodes->Empty()) {
      check.detail =
          absl::StrCat("/sys/devices/system/node/possible: cannot parse \"", *possible_nodes, "\"");
      return check;
    }
    nnodes = nodes->Weight();
  } else if (!absl::IsNotFound(possible_nodes.status())) {
    check.detail = std::string(possible_nodes.status().message());
    return check;
  }
  const int ncpus = cpus->Weight();
  if (ncpus == 1) {
    check.detail =
        "1 possible CPU: tmigr_init() returns before sizing the hierarchy and prints nothing";
    return check;
  }
  const Sizing s = ComputeSizing(ncpus, nnodes, kMaxChildrenPerGroup);
  check.model = absl::StrFormat("%d hierarchy levels; %d children per group; %d crossnode level",
                                s.levels, kMaxChildrenPerGroup, s.crossnode_level);
  if (!kernel_log.ok()) {
    check.detail = std::string(kernel_log.status().message());
    return check;
  }
  absl::StatusOr<TmigrBootMessage> m = FindTmigrBootMessage(*kernel_log);
  if (!m.ok()) {
    check.detail =
        absl::IsNotFound(m.status())
            ? "no \"Timer migration:\" line in the kernel log (kernel older than 6.9, or the boot "
              "messages have been overwritten in the ring buffer)"
            : std::string(m.status().message());
    return check;
  }
  check.kernel = absl::StrFormat("%d hierarchy levels; %d children per group; %d crossnode level",
                                 m->levels, m->children_per_group, m->crossnode_level);
  check.verdict = m->levels == s.levels && m->children_per_group == kMaxChildrenPerGroup &&
                          m->crossnode_level == s.crossnode_level
                      ? HostVerdict::kAgree
                      : HostVerdict::kDisagree;
  check.detail = absl::StrFormat(
      "ComputeSizing(%d possible cpus, %d possible nodes): cpus per node %d, %d cpu "
      "level(s) + %d node level(s)",
      ncpus, nnodes, s.cpus_per_node, s.cpu_levels, s.node_levels);
  return check;
}

}  // namespace isolation::tmigr
