// SPDX-License-Identifier: GPL-2.0-or-later
// subcommands.h (isolab): one subcommand per experiment.  Each
// <experiment>_flags.cc defines the experiment's flags (defaults: its options
// struct's), maps them to the options struct and runs the experiment
// function (lib/experiments/<experiment>_experiment.h).  Thread safety: reads
// the global absl flags; call from one thread.

#ifndef ISOLATION_TOOLS_ISOLAB_SUBCOMMANDS_H_
#define ISOLATION_TOOLS_ISOLAB_SUBCOMMANDS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "experiments/experiment.h"
#include "experiments/hostcheck.h"
#include "experiments/idle_experiment.h"
#include "experiments/mmcid_experiment.h"
#include "experiments/tmigr_experiment.h"
#include "experiments/replay_experiment.h"
#include "experiments/vmstat_experiment.h"

namespace isolation::isolab {

struct Subcommand {
  std::string name;     // e.g. "idle"
  std::string summary;  // one line for `isolab help`
  // The flags it reads, in --help order.  isolab adds --json, --quick,
  // --seed and the --trace*/--plot* flags (look_flags.h).  With "isolcpus"
  // among them the subcommand models a machine, and isolab prints the
  // configuration's warnings before the run.
  std::vector<std::string> flags;
  // Maps the flags to the experiment's options and runs it.  Errors: a bad
  // value (InvalidArgument naming the flag, isolab exits 2), a failed run.
  absl::StatusOr<experiments::ExperimentReport> (*run)(const experiments::CommonOptions& common,
                                                       experiments::Progress& progress);
  // What `run` is expected to cost with the current flags (experiment.h:
  // RunCost), computed before the run: isolab refuses a run past the budget
  // without --force.  Errors: as `run`'s for the values it reads.
  absl::StatusOr<experiments::RunCost> (*estimate)(const experiments::CommonOptions& common);
};

// Every subcommand, in `isolab reproduce` order: topology, mmcid, tmigr,
// idle, vmstat, hostcheck.
std::vector<Subcommand> AllSubcommands();

Subcommand TopologySubcommand();
Subcommand MmCidSubcommand();
Subcommand TmigrSubcommand();
Subcommand IdleSubcommand();
Subcommand VmstatSubcommand();
Subcommand HostcheckSubcommand();
// Not part of `isolab reproduce` (they take a file / a command):
Subcommand ReplaySubcommand();
// `isolab run --workload=rtapp:FILE` (run_flags.cc).
Subcommand RunSubcommand();
// --workload on a mechanism's subcommand (mmcid, tmigr, idle, vmstat): the
// mechanism it names ("" for other subcommands); whether --workload was
// given; and the restriction of `run` to that mechanism's rows.
std::string WorkloadMechanismOf(const std::string& subcommand);
bool WorkloadGiven();
void RestrictWorkloadTo(const std::string& mechanism);
// `isolab noise`: oslat beside the noise meter on a host CPU (noise_flags.cc).
Subcommand NoiseSubcommand();
// `isolab replay FILE`: FILE into --replay_file.
void SetReplayFile(const std::string& file);
// `isolab record [flags] [-- command...]`; returns the exit status.
int RecordMain(const std::vector<std::string>& args);

// Each experiment's options from its flags.  Errors: a list flag that does
// not parse (InvalidArgument naming the flag and its value).
absl::StatusOr<experiments::MmCidExperimentOptions> MmCidOptionsFromFlags();
absl::StatusOr<experiments::TmigrExperimentOptions> TmigrOptionsFromFlags();
absl::StatusOr<experiments::IdleExperimentOptions> IdleOptionsFromFlags();
absl::StatusOr<experiments::VmstatExperimentOptions> VmstatOptionsFromFlags();

}  // namespace isolation::isolab

#endif  // ISOLATION_TOOLS_ISOLAB_SUBCOMMANDS_H_
