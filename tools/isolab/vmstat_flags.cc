// SPDX-License-Identifier: GPL-2.0-or-later
// `isolab vmstat`: the flags of experiments::RunVmstatExperiment.

#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "core/status_macros.h"
#include "experiments/vmstat_experiment.h"
#include "isolab/flag_parser.h"
#include "isolab/subcommands.h"

using isolation::experiments::VmstatExperimentOptions;

ABSL_FLAG(
    std::string, vmstat_strategies, absl::StrJoin(VmstatExperimentOptions{}.strategies, ","),
    absl::StrCat(
        "Comma-separated fold policies to run, e.g. A0, A1, B, C, D (D is the library's own idea; ",
        isolation::experiments::RegisteredFoldPoliciesHelp(), ")"));
ABSL_FLAG(int32_t, vmstat_syscalls, VmstatExperimentOptions{}.syscalls,
          "Simulator: mlock/munlock-like syscalls per isolated CPU before the RT start-up");
ABSL_FLAG(int32_t, vmstat_spin_ms, VmstatExperimentOptions{}.spin_ms,
          "Simulator: user-mode spin after the RT start-up, in model milliseconds");
ABSL_FLAG(int32_t, vmstat_stat_interval_ms, VmstatExperimentOptions{}.stat_interval_ms,
          "sysctl_stat_interval P in milliseconds");
ABSL_FLAG(int32_t, vmstat_host_iterations, VmstatExperimentOptions{}.host_iterations,
          "Host: mlock+munlock iterations per strategy for syscall_ns_median");
ABSL_FLAG(bool, vmstat_real_syscall, VmstatExperimentOptions{}.real_syscall,
          "Host: issue a real mlock/munlock pair per iteration (falls back to getppid if denied)");

// Documented ranges, checked by the flag parser for every subcommand (flag_parser.h).
ISOLAB_FLAG_RANGE(vmstat_syscalls, 0, 10000000);
ISOLAB_FLAG_RANGE(vmstat_spin_ms, 1, 3600000);
ISOLAB_FLAG_RANGE(vmstat_stat_interval_ms, 1, 60000);
ISOLAB_FLAG_RANGE(vmstat_host_iterations, 0, 100000000);

namespace isolation::isolab {

absl::StatusOr<VmstatExperimentOptions> VmstatOptionsFromFlags() {
  VmstatExperimentOptions o;
  ISOLATION_ASSIGN_OR_RETURN(
      o.strategies, ParseNameListFlag("vmstat_strategies", absl::GetFlag(FLAGS_vmstat_strategies)));
  o.syscalls = absl::GetFlag(FLAGS_vmstat_syscalls);
  o.spin_ms = absl::GetFlag(FLAGS_vmstat_spin_ms);
  o.stat_interval_ms = absl::GetFlag(FLAGS_vmstat_stat_interval_ms);
  o.host_iterations = absl::GetFlag(FLAGS_vmstat_host_iterations);
  o.real_syscall = absl::GetFlag(FLAGS_vmstat_real_syscall);
  return o;
}

Subcommand VmstatSubcommand() {
  return {"vmstat",
          "Deferred vmstat folding on isolated CPUs: interruptions, residue and syscall cost per "
          "strategy "
          "(A0/A1/B/C[/D])",
          {"topology", "isolcpus", "nohz_full", "seed", "quick", "json", "vmstat_strategies",
           "vmstat_syscalls", "vmstat_spin_ms", "vmstat_stat_interval_ms", "vmstat_host_iterations",
           "vmstat_real_syscall", "real_cpus", "allow_oversubscribed"},
          [](const experiments::CommonOptions& common,
             experiments::Progress& progress) -> absl::StatusOr<experiments::ExperimentReport> {
            ISOLATION_ASSIGN_OR_RETURN(VmstatExperimentOptions options, VmstatOptionsFromFlags());
            return experiments::RunVmstatExperiment(common, options, progress);
          },
          [](const experiments::CommonOptions& common) -> absl::StatusOr<experiments::RunCost> {
            ISOLATION_ASSIGN_OR_RETURN(experiments::VmstatExperimentOptions options,
                                       VmstatOptionsFromFlags());
            return experiments::EstimateVmstatExperiment(common, options);
          }};
}

}  // namespace isolation::isolab
