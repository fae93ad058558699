// SPDX-License-Identifier: GPL-2.0-or-later
#include "experiments/real_model.h"

#include <sched.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "isolation/core/host.h"

namespace isolation::experiments {
namespace {

std::string KindName(RealModelKind kind) {
  switch (kind) {
    case RealModelKind::kHostSized:
      return "host-sized";
    case RealModelKind::kRequested:
      return "requested";
    case RealModelKind::kHostLayout:
      return "host";
  }
  return "?";
}

std::string ListOrNone(const CpuMask& mask) {
  return mask.Empty() ? std::string("none") : mask.ToString();
}

}  // namespace

int HostUsableCpus() {
  absl::StatusOr<std::vector<int>> cpus = UsableHostCpus();
  return cpus.ok() ? static_cast<int>(cpus->size()) : 1;
}

nlohmann::json RealThreadModel::Json() const {
  return {{"kind", KindName(kind)},
          {"cpus", cpus()},
          {"host_cpus", host_cpus},
          {"housekeeping", housekeeping.ToString()},
          {"isolated", isolated.ToString()},
          {"nohz_full", isolation.nohz_full().ToString()},
          {"pinning", oversubscribed ? "shared (round-robin over the host CPUs)" : "1:1"},
          {"oversubscribed", oversubscribed},
          {"label", label}};
}

int RealModelCpus(const CommonOptions& options, const Topology& model) {
  if (options.real_cpus > 0) return options.real_cpus;
  if (model.description() == "host") return model.num_cpus();
  const int h = options.host_cpus > 0 ? options.host_cpus : HostUsableCpus();
  return std::min(h, model.num_cpus());
}

RunCost RealThreadRunCost(const CommonOptions& options, int cpus, double ms, int runs) {
  // ~0.2 ms to start and join a pinned thread, ~256 KiB resident each
  // (stack touched, per-CPU data), measured on the reference host.
  const int h = std::max(1, options.host_cpus > 0 ? options.host_cpus : HostUsableCpus());
  const double share = static_cast<double>(cpus) / h;
  // Without allow_oversubscribed such a model is refused before it runs
  // (HostSizedModel): its error, not a cost, is the answer.
  const double handoffs =
      cpus > h && options.allow_oversubscribed ? 1.1e-7 * share * share * share : 0;
  return {runs * (ms / 1000.0 + cpus * 2e-4 + handoffs), cpus * 256.0 * 1024 + 16e6,
          absl::StrCat("real threads: ", runs, " runs x ", ms, " ms on ", cpus, " CPUs",
                       cpus > h ? absl::StrCat(" sharing ", h, " host CPUs") : "")};
}

absl::StatusOr<RealThreadModel> HostSizedModel(const CommonOptions& options, const Topology& model,
                                               const IsolationConfig& isolation) {
  if (options.real_cpus < 0 || options.real_cpus > kMaxCpus) {
    return absl::InvalidArgumentError(
        absl::StrCat("--real_cpus=", options.real_cpus, ": want 0 (host-sized) or 1..", kMaxCpus));
  }
  if (options.host_cpus < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("host_cpus=", options.host_cpus, ": want 0 (this host) or more"));
  }
  const int h = options.host_cpus > 0 ? options.host_cpus : HostUsableCpus();
  const bool host_layout = model.description() == "host" && options.real_cpus == 0;
  RealModelKind kind = host_layout             ? RealModelKind::kHostLayout
                       : options.real_cpus > 0 ? RealModelKind::kRequested
                                               : RealModelKind::kHostSized;
  const int big_n = model.num_cpus();
  const int n = host_layout             ? big_n
                : options.real_cpus > 0 ? options.real_cpus
                                        : std::min(h, big_n);
  if (n > h && !options.allow_oversubscribed) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the real-thread model would have ", n, " CPUs (",
        host_layout ? "--topology=host" : absl::StrCat("--real_cpus=", options.real_cpus),
        ") but this host offers ", h,
        " usable CPUs: oversubscribed real threads share host CPUs and their timings are not "
        "representative; "
        "use a model of at most ",
        h,
        " CPUs (--real_cpus=0 sizes it to the host) or give --allow_oversubscribed "
        "to run it anyway, labelled OVERSUBSCRIBED"));
  }
  std::optional<RealThreadModel> out;
  if (host_layout) {
    out.emplace(model, isolation);
  } else {
    // The modelled machine's roles at size n.
    int isolated_model = 0;
    for (int cpu = 0; cpu < big_n; ++cpu) isolated_model += isolation.CpuIsIsolated(cpu) ? 1 : 0;
    int housekeeping = n;
    if (isolated_model > 0 && n >= 2) {
      const double share = static_cast<double>(big_n - isolated_model) / static_cast<double>(big_n);
      housekeeping = std::clamp(static_cast<int>(std::lround(share * n)), 1, n - 1);
    }
    ISOLATION_ASSIGN_OR_RETURN(Topology topo, Topology::FromSynthetic(absl::StrCat("pu:", n)));
    std::string isolcpus, nohz_full;
    if (housekeeping < n) {
      isolcpus = CpuMask::Range(n, housekeeping, n - 1).ToString();
      if (!isolation.nohz_full().Empty()) nohz_full = isolcpus;
    }
    ISOLATION_ASSIGN_OR_RETURN(IsolationConfig iso,
                               IsolationConfig::FromFlags(topo, isolcpus, nohz_full));
    out.emplace(std::move(topo), std::move(iso));
  }
  RealThreadModel& m = *out;
  m.kind = kind;
  m.host_cpus = h;
  m.oversubscribed = m.cpus() > h;
  m.housekeeping = CpuMask(m.cpus());
  m.isolated = CpuMask(m.cpus());
  for (int cpu = 0; cpu < m.cpus(); ++cpu) {
    (m.isolation.CpuIsIsolated(cpu) ? m.isolated : m.housekeeping).Set(cpu);
  }
  const std::string what =
      kind == RealModelKind::kHostLayout ? "the host's own layout and isolation (--topology=host)"
      : kind == RealModelKind::kRequested
          ? absl::StrCat("requested model (--real_cpus=", options.real_cpus, ")")
          : std::string("host-sized model");
  const std::string shape = absl::StrCat(
      m.cpus(), " CPUs (housekeeping ", ListOrNone(m.housekeeping), ", isolated ",
      ListOrNone(m.isolated), m.isolation.nohz_full().Empty() ? "" : ", nohz_full", ")");
  if (m.oversubscribed) {
    m.label =
        absl::StrCat("OVERSUBSCRIBED real threads: ", what, ", ", shape, " on ", h,
                     " host CPUs (--allow_oversubscribed): model CPUs share host CPUs, timings not "
                     "representative");
  } else {
    m.label = absl::StrCat("real threads: ", what, ", ", shape, ", 1:1 pinning on ", m.cpus(),
                           " of ", h, " host CPUs");
  }
  return std::move(*out);
}

}  // namespace isolation::experiments
