// SPDX-License-Identifier: GPL-2.0-or-later
// common_flags.h (internal): flags shared by isolab subcommands.
//
// Defaults mirror the seeds' machine: 128 CPUs as "package:2 l3cache:4
// core:16 pu:1" and isolcpus=1-31,33-63,65-95,97-127.

#ifndef ISOLATION_LIB_EXPERIMENTS_COMMON_FLAGS_H_
#define ISOLATION_LIB_EXPERIMENTS_COMMON_FLAGS_H_

#include <cstdint>
#include <string>

#include "absl/flags/declare.h"
#include "absl/status/statusor.h"
#include "isolation/core/isolation_config.h"
#include "isolation/core/topology.h"

ABSL_DECLARE_FLAG(std::string, topology);
ABSL_DECLARE_FLAG(std::string, isolcpus);
ABSL_DECLARE_FLAG(std::string, nohz_full);
ABSL_DECLARE_FLAG(uint64_t, seed);
ABSL_DECLARE_FLAG(bool, quick);
ABSL_DECLARE_FLAG(bool, json);

namespace isolation::experiments {

inline constexpr char kSeedTopology[] = "package:2 l3cache:4 core:16 pu:1";
inline constexpr char kSeedIsolcpus[] = "1-31,33-63,65-95,97-127";

// Topology from --topology ("host" or synthetic).
absl::StatusOr<Topology> TopologyFromFlags();
// IsolationConfig from --isolcpus / --nohz_full against `topology`.
absl::StatusOr<IsolationConfig> IsolationFromFlags(const Topology& topology);

}  // namespace isolation::experiments

#endif  // ISOLATION_LIB_EXPERIMENTS_COMMON_FLAGS_H_
