// SPDX-License-Identifier: GPL-2.0-or-later
// -----------------------------------------------------------------------------
// vmstat/host_check.h
// -----------------------------------------------------------------------------
//
// Cross-check of the per-CPU stat thresholds against the running kernel:
// /proc/zoneinfo prints, for every populated zone, its `managed` pages, its
// `min`/`low` watermarks and one "vm stats threshold: T" line per online
// CPU.  The kernel sets those with refresh_zone_stat_thresholds() to
// calculate_normal_threshold() of the zone's managed pages and
// num_online_cpus() -- or, while kswapd reclaims the node,
// set_pgdat_percpu_threshold() to calculate_pressure_threshold() of the
// min/low watermarks.  The model's formulas are NormalThreshold() and
// PressureThreshold() of vmstat.h; this check feeds them the kernel's own
// inputs and compares.
//
// Kernel counterpart: mm/vmstat.c zoneinfo_show_print(),
// refresh_zone_stat_thresholds(), calculate_normal_threshold(),
// calculate_pressure_threshold().
//
// Thread safety: pure functions.

#ifndef ISOLATION_VMSTAT_HOST_CHECK_H_
#define ISOLATION_VMSTAT_HOST_CHECK_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "isolation/core/host.h"

namespace isolation::vmstat {

struct ZoneinfoZone {
  int node = -1;
  std::string zone;                             // "DMA", "DMA32", "Normal", ...
  int64_t managed = -1;                         // pages
  int64_t min = -1;                             // min_wmark_pages()
  int64_t low = -1;                             // low_wmark_pages()
  std::vector<std::pair<int, int>> thresholds;  // (cpu, vm stats threshold), online CPUs only
};

// Parses /proc/zoneinfo.  Errors: InvalidArgument when a zone header or a
// threshold line cannot be read (the message quotes the line).
absl::StatusOr<std::vector<ZoneinfoZone>> ParseZoneinfo(std::string_view text);

// The check.  `zoneinfo` and `online` (/sys/devices/system/cpu/online) may
// hold errors: the result is then kNotAvailable with the reason.  Each
// populated zone agrees when every online CPU's threshold equals the normal
// threshold of (managed, online CPUs) -- or, all of them, the pressure
// threshold of (low, min, online CPUs), which the detail then says.
HostCheck CheckZoneThresholds(const absl::StatusOr<std::string>& zoneinfo,
                              const absl::StatusOr<std::string>& online, int page_shift);

}  // namespace isolation::vmstat

#endif  // ISOLATION_VMSTAT_HOST_CHECK_H_
