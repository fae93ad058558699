// SPDX-License-Identifier: GPL-2.0-or-later
// replay_experiment.h (internal): `isolab replay FILE` as a function -- a
// recorded kernel trace (replay/readers.h) played by the replay driver
// (replay/replay_driver.h) through every registered variant of each
// mechanism, with per variant its figures on the recorded workload and, for
// the variant of the recorded kernel's version, the share of the kernel's
// own decisions it reproduces.  What each mechanism compares:
// replay_mechanisms.h and docs/replay.md.  Thread safety: experiment.h.

#ifndef ISOLATION_LIB_EXPERIMENTS_REPLAY_EXPERIMENT_H_
#define ISOLATION_LIB_EXPERIMENTS_REPLAY_EXPERIMENT_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "experiments/experiment.h"

namespace isolation::experiments {

struct ReplayExperimentOptions {
  std::string file;             // the recording (isolab replay FILE)
  std::string format = "auto";  // --replay_format: auto | dat | report | perf
  // What the file may not say (a flag the file contradicts is refused unless
  // it is the machine's --topology, which wins with a note):
  int cpus = 0;                    // --replay_cpus
  std::string kernel;              // --replay_kernel, e.g. "6.18"
  int hz = 0;                      // --replay_hz (0: the file's, else 250 with a note)
  std::string recorded_isolcpus;   // --recorded_isolcpus: the kernel's isolcpus= ("" = the file's,
                                   // else none)
  std::string recorded_nohz_full;  // --recorded_nohz_full
  // --replay_mechanisms: which mechanisms replay.
  std::vector<std::string> mechanisms = {"mm_cid", "tmigr", "idle_select", "vmstat"};
  bool negative_controls = false;  // --replay_negative_controls: rows for them too
  int disagreements = 5;      // --replay_disagreements: first disagreements printed per mechanism
  int64_t max_bad_lines = 0;  // --replay_max_bad_lines: malformed text lines tolerated
  // --replay_mm_cid_tasks: threads of mms created in the recording that the
  // mm_cid models hold (a quarter as many mms); later ones are not modelled,
  // counted.  Memory: about 0.15 KiB per task per mm_cid variant.
  int mm_cid_tasks = 4096;
  // --replay_check_every: the adapters' invariant checks after every n-th event.
  int check_every = 16;
  // The usual variant flags (--mmcid_variants, --tmigr_variants,
  // --idle_variants, --vmstat_strategies), keyed by mechanism name: only
  // these rows replay (a negative control named here replays too).  A
  // mechanism absent from the map replays every registered variant.
  // Errors: a name that is not registered is InvalidArgument naming the flag.
  std::map<std::string, std::vector<std::string>> variants;
};

// The what-if: CommonOptions::isolcpus / nohz_full other than "seed" give
// the variants that isolation instead of the recorded kernel's (agreement is
// then not computed: the model no longer runs the recorded kernel's
// configuration); CommonOptions::topology other than "seed" is the machine.
// Errors: InvalidArgument naming the file and place (reader), the flag and
// value (options), a machine that does not fit the recording.
// What RunReplayExperiment(common, options) is expected to cost (experiment.h:
// RunCost), from the file's size.  Errors: CheckOptions', a file that cannot
// be read.
absl::StatusOr<RunCost> EstimateReplayExperiment(const CommonOptions& common,
                                                 const ReplayExperimentOptions& options);
absl::StatusOr<ExperimentReport> RunReplayExperiment(const CommonOptions& common,
                                                     const ReplayExperimentOptions& options,
                                                     Progress& progress);

}  // namespace isolation::experiments

#endif  // ISOLATION_LIB_EXPERIMENTS_REPLAY_EXPERIMENT_H_
