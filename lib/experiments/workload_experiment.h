// SPDX-License-Identifier: GPL-2.0-or-later
// workload_experiment.h (internal): `isolab run --workload=rtapp:FILE`, a
// user's workload on the model machine under every mechanism's variants.
//
// For each mechanism asked and each of its rows, a fresh simulator on the
// model machine (--topology, --isolcpus, --nohz_full, --seed) runs the
// workload with that variant's adapter attached, so the variant places,
// switches and times the workload's threads (closed loop), and the row
// reports the workload's figures (wake-ups, timer misses and latency, the
// interruptions and longest stall of isolated CPUs) beside the mechanism's
// (and, for a recording, the closed loop's run time and wake-ups against the
// recording's: workload/recorded.h):
//   mm_cid       scans, scans on isolated CPUs, the longest scan stall there
//   tmigr        timer callbacks on isolated CPUs (the hierarchy's pulls);
//                one housekeeping task per housekeeping CPU arms the global
//                timers (a delayed-work analogue, as in `isolab tmigr`)
//   idle_select  selections, the share that found an idle CPU, migrations
//   vmstat       vmstat_update runs on isolated CPUs, the largest residue;
//                each kernel entry of a workload thread changes one zone
//                counter by one page (alternately +1 and -1)
// Thread safety: see experiment.h.

#ifndef ISOLATION_LIB_EXPERIMENTS_WORKLOAD_EXPERIMENT_H_
#define ISOLATION_LIB_EXPERIMENTS_WORKLOAD_EXPERIMENT_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "experiments/experiment.h"

namespace isolation::experiments {

struct WorkloadExperimentOptions {
  // --workload: "rtapp:FILE" (rt-app JSON) or "trace:FILE" (a recording that
  // replay reads: trace.dat, trace-cmd report or perf script text, as a
  // closed-loop workload; --topology and --isolcpus left at "seed" then mean
  // the recorded machine and isolation).
  std::string workload;
  // --cpu_scale: a recording's run times are multiplied by this (0.5: model
  // CPUs twice as fast as the recorded ones).  (0, 100]; 1 for rt-app.
  double cpu_scale = 1.0;
  // --run_mechanisms: any of mm_cid, tmigr, idle_select, vmstat.
  std::vector<std::string> mechanisms = {"mm_cid", "tmigr", "idle_select", "vmstat"};
  // Rows per mechanism (--mmcid_variants, --tmigr_variants, --idle_variants,
  // --vmstat_strategies); a mechanism absent here gets its default rows
  // (mm_cid: the covering subset of its registered variants).
  std::map<std::string, std::vector<std::string>> variants;
  // --variants: names of any mechanism's variants, each resolved against
  // every registry (mm_cid, tmigr, idle_select, vmstat); it chooses the rows
  // of the mechanisms it names and leaves the others out.  A name two
  // registries know is refused (use the mechanism's own flag).
  std::vector<std::string> any_variants;
  // --run_duration_ms: 0 = the description's duration (a recording: its own
  // length, the only choice); an rt-app description that runs until its
  // threads end is bounded by 60 s.  1..3600000 otherwise.
  int64_t duration_ms = 0;
  // --osnoise_top: after each row, an `rtla osnoise top` table of the
  // isolated CPUs (every CPU when none is) from the model's counters
  // (FormatRtlaOsnoiseTop).  With --hist (CommonOptions::hist), each rt-app
  // row also prints an `rtla timerlat hist` table of its timer latencies.
  bool osnoise_top = false;
};

// Errors: InvalidArgument naming the flag (--workload without "rtapp:",
// --run_mechanisms with an unknown name, an unregistered variant); the
// workload file's errors (naming the file, task and key); the machine's.
absl::StatusOr<RunCost> EstimateWorkloadExperiment(const CommonOptions& common,
                                                   const WorkloadExperimentOptions& options);
absl::StatusOr<ExperimentReport> RunWorkloadExperiment(const CommonOptions& common,
                                                       const WorkloadExperimentOptions& options,
                                                       Progress& progress);

}  // namespace isolation::experiments

#endif  // ISOLATION_LIB_EXPERIMENTS_WORKLOAD_EXPERIMENT_H_
