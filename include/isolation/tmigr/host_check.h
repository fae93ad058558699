// SPDX-License-Identifier: GPL-2.0-or-later
// -----------------------------------------------------------------------------
// tmigr/host_check.h
// -----------------------------------------------------------------------------
//
// Cross-check of the hierarchy sizing against the running kernel.  At boot
// tmigr_init() sizes the hierarchy from num_possible_cpus() and
// num_possible_nodes() and prints
//   "Timer migration: %d hierarchy levels; %d children per group; %d crossnode level"
// (v6.9+; nothing on a 1-CPU machine).  The model's sizing is ComputeSizing()
// of tmigr.h; this check gives it the kernel's possible CPU and node counts
// (/sys/devices/system/cpu/possible, /sys/devices/system/node/possible --
// absent without CONFIG_NUMA, i.e. one node) and compares with that line of
// the kernel log.
//
// Kernel counterpart: kernel/time/timer_migration.c tmigr_init().
//
// Thread safety: pure functions.

#ifndef ISOLATION_TMIGR_HOST_CHECK_H_
#define ISOLATION_TMIGR_HOST_CHECK_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "isolation/core/host.h"

namespace isolation::tmigr {

struct TmigrBootMessage {
  int levels = 0;
  int children_per_group = 0;
  int crossnode_level = 0;
};

// The last "Timer migration: ..." line of a kernel log.  Errors: NotFound
// when there is none; InvalidArgument when the line does not parse.
absl::StatusOr<TmigrBootMessage> FindTmigrBootMessage(std::string_view kernel_log);

// The check; every input may hold an error (-> kNotAvailable with why).
// `possible_nodes` NotFound means one node (no CONFIG_NUMA).
HostCheck CheckHierarchyLevels(const absl::StatusOr<std::string>& kernel_log,
                               const absl::StatusOr<std::string>& possible_cpus,
                               const absl::StatusOr<std::string>& possible_nodes);

}  // namespace isolation::tmigr

#endif  // ISOLATION_TMIGR_HOST_CHECK_H_
