// SPDX-License-Identifier: GPL-2.0-or-later
// topology_experiment.h (internal): `isolab topology`, the model machine and
// its isolation, as a function (topology_experiment.cc).  It has no options
// of its own.  Thread safety: see experiment.h.

#ifndef ISOLATION_LIB_EXPERIMENTS_TOPOLOGY_EXPERIMENT_H_
#define ISOLATION_LIB_EXPERIMENTS_TOPOLOGY_EXPERIMENT_H_

#include "absl/status/statusor.h"
#include "experiments/experiment.h"

namespace isolation::experiments {

// Errors: the model machine's (a bad --topology, --isolcpus, --nohz_full).
absl::StatusOr<ExperimentReport> RunTopologyExperiment(const CommonOptions& common,
                                                       Progress& progress);

}  // namespace isolation::experiments

#endif  // ISOLATION_LIB_EXPERIMENTS_TOPOLOGY_EXPERIMENT_H_
