// SPDX-License-Identifier: GPL-2.0-or-later
// /proc/zoneinfo against calculate_normal_threshold() /
// calculate_pressure_threshold() (see vmstat/host_check.h).

#include "isolation/vmstat/host_check.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "isolation/core/cpumask.h"
#include "isolation/vmstat/vmstat.h"

namespace isolation::vmstat {
namespace {

// absl 20220623 has its own string_view; this file works in it.
using absl::string_view;

string_view Trim(string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

absl::Status BadLine(string_view line) {
  return absl::InvalidArgumentError(
      absl::StrCat("/proc/zoneinfo: cannot read line \"", std::string(line), "\""));
}

}  // namespace

// zoneinfo_show_print()
absl::StatusOr<std::vector<ZoneinfoZone>> ParseZoneinfo(std::string_view text) {
  std::vector<ZoneinfoZone> zones;
  int cpu = -1;
  for (string_view raw : absl::StrSplit(string_view(text.data(), text.size()), '\n')) {
    const string_view line = Trim(raw);
    if (line.empty()) continue;
    if (absl::ConsumePrefix(&raw, "Node ")) {
      // "Node %d, zone %8s"
      const std::vector<string_view> parts = absl::StrSplit(raw, absl::MaxSplits(',', 1));
      ZoneinfoZone z;
      if (parts.size() != 2 || !absl::SimpleAtoi(parts[0], &z.node)) return BadLine(line);
      string_view zone = Trim(parts[1]);
      if (!absl::ConsumePrefix(&zone, "zone")) return BadLine(line);
      z.zone = std::string(Trim(zone));
      if (z.zone.empty()) return BadLine(line);
      zones.push_back(std::move(z));
      cpu = -1;
      continue;
    }
    if (zones.empty()) continue;
    ZoneinfoZone& z = zones.back();
    string_view rest = line;
    if (absl::ConsumePrefix(&rest, "vm stats threshold:")) {
      int threshold = 0;
      if (cpu < 0 || !absl::SimpleAtoi(Trim(rest), &threshold)) return BadLine(line);
      z.thresholds.emplace_back(cpu, threshold);
      continue;
    }
    if (absl::ConsumePrefix(&rest, "cpu:")) {
      if (!absl::SimpleAtoi(Trim(rest), &cpu)) return BadLine(line);
      continue;
    }
    // "        managed  %lu" and the watermarks: a word, spaces, a number.
    const std::vector<string_view> words = absl::StrSplit(line, ' ', absl::SkipEmpty());
    if (words.size() != 2) continue;
    int64_t* field = words[0] == "managed" ? &z.managed
                     : words[0] == "min"   ? &z.min
                     : words[0] == "low"   ? &z.low
                                           : nullptr;
    if (field != nullptr && !absl::SimpleAtoi(words[1], field)) return BadLine(line);
  }
  return zones;
}

HostCheck CheckZoneThresholds(const absl::StatusOr<std::string>& zoneinfo,
                              const absl::StatusOr<std::string>& online, int page_shift) {
  HostCheck check{"vmstat: per-CPU stat thresholds vs /proc/zoneinfo", HostVerdict::kNotAvailable,
                  "", "", ""};
  if (!zoneinfo.ok()) {
    check.detail = std::string(zoneinfo.status().message());
    return check;
  }
  if (!online.ok()) {
    check.detail = std::string(online.status().message());
    return check;
  }
  absl::StatusOr<CpuMask> online_mask = CpuMask::Parse(*online, kMaxCpus);
  if (!online_mask.ok() || online_mask->Empty()) {
    check.detail = absl::StrCat("/sys/devices/system/cpu/online: cannot parse \"", *online, "\"");
    return check;
  }
  const int online_cpus = online_mask->Weight();
  absl::StatusOr<std::vector<ZoneinfoZone>> zones = ParseZoneinfo(*zoneinfo);
  if (!zones.ok()) {
    check.detail = std::string(zones.status().message());
    return check;
  }
  std::vector<std::string> model, kernel, notes;
  bool any = false, all_agree = true;
  for (const ZoneinfoZone& z : *zones) {
    if (z.thresholds.empty()) continue;  // unpopulated: no pagesets printed
    const std::string name = absl::StrCat("node", z.node, "/", z.zone);
    if (z.managed < 0) {
      check.detail =
          absl::StrCat("/proc/zoneinfo: zone ", name, " has thresholds but no managed count");
      return check;
    }
    any = true;
    const int normal = NormalThreshold(z.managed, online_cpus, page_shift);
    const int pressure =
        z.low >= 0 && z.min >= 0 ? PressureThreshold(z.low, z.min, online_cpus) : -1;
    bool all_normal = true, all_pressure = pressure >= 0;
    std::vector<std::string> seen;
    for (const auto& [cpu, threshold] : z.thresholds) {
      all_normal = all_normal && threshold == normal;
      all_pressure = all_pressure && threshold == pressure;
      seen.push_back(absl::StrCat("cpu", cpu, "=", threshold));
    }
    model.push_back(absl::StrCat(name, " ", normal));
    kernel.push_back(absl::StrCat(name, " ", absl::StrJoin(seen, ",")));
    if (all_normal) continue;
    if (all_pressure) {
      notes.push_back(absl::StrCat(
          name, ": pressure threshold ", pressure,
          " = (low - min) / online cpus (kswapd is reclaiming: set_pgdat_percpu_threshold)"));
      continue;
    }
    all_agree = false;
    notes.push_back(
        absl::StrCat(name, ": kernel thresholds differ from normal ", normal, " (managed ",
                     z.managed, " pages, ", online_cpus, " online cpus)",
                     pressure >= 0 ? absl::StrCat(" and from pressure ", pressure) : ""));
  }
  if (!any) {
    check.detail = "/proc/zoneinfo has no \"vm stats threshold\" lines (CONFIG_SMP=n?)";
    return check;
  }
  check.verdict = all_agree ? HostVerdict::kAgree : HostVerdict::kDisagree;
  check.model = absl::StrJoin(model, "; ");
  check.kernel = absl::StrJoin(kernel, "; ");
  check.detail =
      absl::StrCat("calculate_normal_threshold() = min(125, 2*fls(", online_cpus,
                   " online cpus)*(1+fls(managed >> ", 27 - page_shift, "))) per populated zone",
                   notes.empty() ? "" : "; ", absl::StrJoin(notes, "; "));
  return check;
}

}  // namespace isolation::vmstat
