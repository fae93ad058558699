// SPDX-License-Identifier: GPL-2.0-or-later
// The load sweep: one workload sized to a share of the driver's CPUs, see
// workload.h.

#include <algorithm>
#include <memory>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "isolation/idle_select/workload.h"

namespace isolation::idle_select {

std::string_view LoadWorkloadName(LoadWorkload w) {
  switch (w) {
    case LoadWorkload::kHackbench:
      return "hackbench";
    case LoadWorkload::kPipe:
      return "pipe";
    case LoadWorkload::kSchbench:
      return "schbench";
    case LoadWorkload::kRequestResponse:
      return "rr";
  }
  return "?";
}

absl::StatusOr<LoadPointResult> RunLoadPoint(Driver& d, IdleSelectHooks& hooks, LoadWorkload w,
                                             int load_pct, Nanos window) {
  if (load_pct < 1 || load_pct > 1000 || window <= 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "load point: load_pct=", load_pct, " window=", window, " (need 1..1000 % and window > 0)"));
  }
  const int n = std::max(1, d.topology().online().Weight() * load_pct / 100);
  LoadPointResult out;
  absl::StatusOr<WorkloadResult> r;
  const double window_ms = static_cast<double>(window) / static_cast<double>(kNsPerMs);
  switch (w) {
    case LoadWorkload::kHackbench: {
      HackbenchParams p;
      p.senders = std::max(1, n / 2);
      p.messages = 20;
      p.work_jitter_pct = 20;
      out.tasks = 2 * p.senders;
      r = RunHackbench(d, &hooks, p, 20 * window);
      if (r.ok()) out.value = static_cast<double>(r->duration_ns) / static_cast<double>(kNsPerMs);
      break;
    }
    case LoadWorkload::kPipe: {
      PipeParams p;
      p.pairs = n;
      p.round_trips = 1 << 30;
      p.work_jitter_pct = 20;
      out.tasks = 2 * n;
      r = RunPipe(d, &hooks, p, window);
      if (r.ok()) out.value = static_cast<double>(r->operations) / window_ms;
      break;
    }
    case LoadWorkload::kRequestResponse: {
      RequestResponseParams p;
      p.pairs = n;
      p.transactions = 1 << 30;
      out.tasks = 2 * n;
      r = RunRequestResponse(d, &hooks, p, window);
      if (r.ok()) out.value = static_cast<double>(r->operations) / window_ms;
      break;
    }
    case LoadWorkload::kSchbench: {
      SchbenchParams p;
      p.message_tasks = 2;
      p.workers_per_message = std::max(1, n / 2);
      p.rounds = 30;
      p.think_ns = 100 * kNsPerUs;
      out.tasks = p.message_tasks * (1 + p.workers_per_message);
      r = RunSchbench(d, &hooks, p, 20 * window);
      if (r.ok()) {
        std::vector<Nanos> lat = r->latencies;
        if (!lat.empty()) {
          const size_t k = std::min(lat.size() - 1, lat.size() * 99 / 100);
          std::nth_element(lat.begin(), lat.begin() + static_cast<std::ptrdiff_t>(k), lat.end());
          out.value = static_cast<double>(lat[k]) / static_cast<double>(kNsPerUs);
        }
      }
      break;
    }
  }
  if (!r.ok()) return r.status();
  out.completed = r->completed;
  out.counters = hooks.counters();
  return out;
}

}  // namespace isolation::idle_select
