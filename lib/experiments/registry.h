// SPDX-License-Identifier: GPL-2.0-or-later
// registry.h (internal): self-registration of experiments.
//
//   namespace { const ExperimentRegistrar kReg(20, [] {
//     return std::make_unique<MmCidExperiment>(); }); }
//
// `order` sets the position in `isolab reproduce` (topology 0, mmcid 20,
// tmigr 30, idle 40, vmstat 50).

#ifndef ISOLATION_LIB_EXPERIMENTS_REGISTRY_H_
#define ISOLATION_LIB_EXPERIMENTS_REGISTRY_H_

#include <functional>
#include <memory>

#include "experiments/experiment.h"

namespace isolation::experiments {

class ExperimentRegistrar {
 public:
  ExperimentRegistrar(int order, std::function<std::unique_ptr<Experiment>()> factory);
};

}  // namespace isolation::experiments

#endif  // ISOLATION_LIB_EXPERIMENTS_REGISTRY_H_
