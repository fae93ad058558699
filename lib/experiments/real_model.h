// SPDX-License-Identifier: GPL-2.0-or-later
// real_model.h (internal): the machine the real-thread part of an experiment
// runs, sized to the host.  One place, used by every experiment that starts
// the real-thread driver (tmigr's noise meter, idle's --idle_driver=real
// workloads), so that no real-thread figure comes from a model squeezed onto
// fewer host CPUs than it has.
//
// The rule (docs/architecture.md, "Real threads sized to the host"):
//   - h = the host CPUs this process may run on (sched_getaffinity), or
//     CommonOptions::host_cpus when a test injects a host size.
//   - --topology=host: the host's own topology and isolation (isolcpus=,
//     nohz_full= as booted), unchanged: one thread per host CPU.
//   - otherwise n = min(h, CPUs of the modelled machine), or --real_cpus
//     when given.  The model is a flat "pu:n" machine that keeps the
//     modelled machine's roles: with I isolated CPUs among N, it has
//     k = clamp(round(n * (N - I) / N), 1, n - 1) housekeeping CPUs 0..k-1
//     and isolates k..n-1 (isolcpus=domain; nohz_full too if the modelled
//     machine has nohz_full); with no isolated CPU (or n = 1) every CPU is
//     housekeeping.  The seeds' machine (4 housekeeping of 128) on a 2-CPU
//     host: CPU 0 housekeeping, CPU 1 isolated; on an 8-CPU host: CPU 0
//     housekeeping, 1-7 isolated.
//   - model CPU i runs on the i-th host CPU (1:1 pinning, RealThreadDriver's
//     map) as long as n <= h.  n > h (only from --real_cpus, or a
//     --topology=host restricted by a smaller affinity) is oversubscribed:
//     refused (InvalidArgument, isolab exits 2) unless
//     --allow_oversubscribed, and then every figure is labelled
//     OVERSUBSCRIBED.
//
// Thread safety: pure functions of their arguments (HostUsableCpus reads
// this process's affinity).

#ifndef ISOLATION_LIB_EXPERIMENTS_REAL_MODEL_H_
#define ISOLATION_LIB_EXPERIMENTS_REAL_MODEL_H_

#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "absl/status/statusor.h"
#include "experiments/experiment.h"
#include "isolation/core/cpumask.h"
#include "isolation/core/isolation_config.h"
#include "isolation/core/topology.h"

namespace isolation::experiments {

// How the real-thread model was chosen.
enum class RealModelKind {
  kHostSized,   // min(host CPUs, modelled CPUs), the modelled machine's roles
  kRequested,   // --real_cpus=N
  kHostLayout,  // --topology=host: the host's own layout and isolation
};

struct RealThreadModel {
  RealThreadModel(Topology t, IsolationConfig i)
      : topology(std::move(t)), isolation(std::move(i)) {}
  RealModelKind kind = RealModelKind::kHostSized;
  Topology topology;            // the real-thread machine (n CPUs)
  IsolationConfig isolation;    // its isolation
  int host_cpus = 0;            // h
  CpuMask housekeeping{1};      // its housekeeping CPUs
  CpuMask isolated{1};          // its isolated CPUs (CpuIsIsolated)
  bool oversubscribed = false;  // n > h: model CPUs share host CPUs
  // One line for tables, e.g. "real threads: host-sized model, 2 CPUs
  // (housekeeping 0, isolated 1), 1:1 pinning on 2 host CPUs"; starts with
  // "OVERSUBSCRIBED" when oversubscribed.
  std::string label;
  // "" or "OVERSUBSCRIBED " : the prefix of every row of figures.
  std::string row_prefix() const { return oversubscribed ? "OVERSUBSCRIBED " : ""; }
  int cpus() const { return topology.num_cpus(); }
  // {"kind", "cpus", "host_cpus", "housekeeping", "isolated", "nohz_full",
  //  "pinning", "oversubscribed", "label"}: JSON "real_thread_model".
  nlohmann::json Json() const;
};

// The host CPUs a thread of this process can be pinned to (UsableHostCpus,
// core/host.h: the affinity mask plus the isolcpus= CPUs); at least 1.
int HostUsableCpus();

// The real-thread model for an experiment whose modelled machine is
// `model` with `isolation`, under `options` (topology, real_cpus,
// allow_oversubscribed, host_cpus).  Errors: --real_cpus outside
// 0..kMaxCpus (InvalidArgument naming it); an oversubscribed model without
// allow_oversubscribed (InvalidArgument naming both sizes and
// --allow_oversubscribed); the topology's.
absl::StatusOr<RealThreadModel> HostSizedModel(const CommonOptions& options, const Topology& model,
                                               const IsolationConfig& isolation);

// The CPU count HostSizedModel would give (for cost estimates): --real_cpus,
// else min(host, modelled) CPUs, the modelled count for --topology=host.
int RealModelCpus(const CommonOptions& options, const Topology& model);
// `runs` real-thread runs of `ms` each on `cpus` model CPUs (experiment.h:
// RunCost): the wall time, one thread's start-up and stack per model CPU,
// and, oversubscribed, the hand-offs of threads that spin on shared host
// CPUs, which grow as (cpus / host CPUs)^3 (measured: 1000 model CPUs on 2
// host CPUs, 13 s per 150 ms run).
RunCost RealThreadRunCost(const CommonOptions& options, int cpus, double ms, int runs);

}  // namespace isolation::experiments

#endif  // ISOLATION_LIB_EXPERIMENTS_REAL_MODEL_H_
