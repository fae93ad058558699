// SPDX-License-Identifier: GPL-2.0-or-later
// common_flags.h (isolab): the flags every subcommand shares (--topology,
// --isolcpus, --nohz_full, --seed, --quick, --json) and their mapping to
// experiments::CommonOptions.  Defaults: CommonOptions' (the seeds' 128-CPU
// machine, "package:2 l3cache:4 core:16 pu:1", isolcpus=1-31,33-63,65-95,97-127).
// Thread safety: reads the global absl flags; call from one thread.

#ifndef ISOLATION_TOOLS_ISOLAB_COMMON_FLAGS_H_
#define ISOLATION_TOOLS_ISOLAB_COMMON_FLAGS_H_

#include <cstdint>
#include <string>

#include "absl/flags/declare.h"
#include "experiments/experiment.h"

ABSL_DECLARE_FLAG(std::string, topology);
ABSL_DECLARE_FLAG(std::string, isolcpus);
ABSL_DECLARE_FLAG(std::string, nohz_full);
ABSL_DECLARE_FLAG(uint64_t, seed);
ABSL_DECLARE_FLAG(bool, quick);
ABSL_DECLARE_FLAG(bool, json);
ABSL_DECLARE_FLAG(int32_t, real_cpus);
ABSL_DECLARE_FLAG(bool, allow_oversubscribed);
ABSL_DECLARE_FLAG(bool, force);

namespace isolation::isolab {

// --topology, --isolcpus, --nohz_full, --seed, --quick, --real_cpus,
// --allow_oversubscribed as CommonOptions
// (trace and hist are left at their defaults: isolab opens the trace file
// from the --trace* flags, look_flags.h).  Values are checked where they
// are used (experiments::LoadTopology, LoadIsolation).
experiments::CommonOptions CommonOptionsFromFlags();

}  // namespace isolation::isolab

#endif  // ISOLATION_TOOLS_ISOLAB_COMMON_FLAGS_H_
