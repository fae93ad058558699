// SPDX-License-Identifier: GPL-2.0-or-later
// look_flags.h (isolab): the flags for looking at a run -- timeline traces
// (--trace, --trace_max_events, --trace_cpus), figures (--plot,
// --plot_format) and rtla-style noise histograms (--hist, --bucket_size,
// --entries, --no_zero_lines) -- defined and validated here, in one place,
// into experiments::LookOptions (lib/experiments/look_options.h).
// Thread safety: reads the global absl flags; call from one thread.

#ifndef ISOLATION_TOOLS_ISOLAB_LOOK_FLAGS_H_
#define ISOLATION_TOOLS_ISOLAB_LOOK_FLAGS_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "experiments/look_options.h"

namespace isolation::isolab {

// From the flags.  Errors (InvalidArgument) name the flag and its value:
// --trace_max_events out of [1, 100000000], a malformed --trace_cpus, an
// unknown --plot_format, a --plot directory that cannot be created or
// written, a histogram shape out of range.  (An unwritable --trace path
// fails in experiments::OpenTrace.)
absl::StatusOr<experiments::LookOptions> LookOptionsFromFlags();

// Flags every subcommand takes (--trace*) and those of subcommands with
// figures (--plot*: mmcid, tmigr, idle, vmstat, reproduce).
std::vector<std::string> LookFlagNames(std::string_view subcommand);
// The histogram flags, for experiments that run the noise meter.
std::vector<std::string> HistFlagNames();

}  // namespace isolation::isolab

#endif  // ISOLATION_TOOLS_ISOLAB_LOOK_FLAGS_H_
