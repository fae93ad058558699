// SPDX-License-Identifier: GPL-2.0-or-later
// `isolab replay FILE`: the flags of experiments::RunReplayExperiment.  FILE
// is the subcommand's one positional argument (isolab.cc puts it in
// --replay_file).

#include <string>
#include <vector>

#include "absl/flags/commandlineflag.h"
#include "absl/flags/flag.h"
#include "absl/flags/reflection.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "core/status_macros.h"
#include "experiments/replay_experiment.h"
#include "isolab/flag_parser.h"
#include "isolab/subcommands.h"
#include "isolation/core/topology.h"

using isolation::experiments::ReplayExperimentOptions;

ABSL_FLAG(std::string, replay_file, "",
          "The recording (also the positional argument: isolab replay FILE)");
ABSL_FLAG(std::string, replay_format, ReplayExperimentOptions{}.format,
          "Format of the recording: auto | dat (trace.dat) | report (trace-cmd report text) | perf "
          "(perf script text)");
ABSL_FLAG(int32_t, replay_cpus, 0,
          "CPU count of the recorded machine, where the file does not say (0: the file's)");
ABSL_FLAG(std::string, replay_kernel, "",
          "Kernel release of the recording, where the file does not say (e.g. 6.18)");
ABSL_FLAG(
    int32_t, replay_hz, 0,
    "CONFIG_HZ of the recorded kernel, where the file does not say (0: the file's, else 250)");
ABSL_FLAG(std::string, recorded_isolcpus, "",
          "isolcpus= the recorded kernel ran with, where the file does not say ('' = the file's, "
          "else none)");
ABSL_FLAG(std::string, recorded_nohz_full, "",
          "nohz_full= the recorded kernel ran with, where the file does not say");
ABSL_FLAG(std::string, replay_mechanisms, absl::StrJoin(ReplayExperimentOptions{}.mechanisms, ","),
          "Mechanisms to replay: mm_cid, tmigr, idle_select, vmstat");
ABSL_FLAG(bool, replay_negative_controls, false,
          "Also replay the registered negative controls (rows marked as such)");
ABSL_FLAG(int32_t, replay_disagreements, ReplayExperimentOptions{}.disagreements,
          "How many of the first disagreements with the kernel to print per mechanism");
ABSL_FLAG(int64_t, replay_max_bad_lines, 0,
          "Malformed text lines to skip (counted) before the reader fails");
ABSL_FLAG(int32_t, replay_mm_cid_tasks, ReplayExperimentOptions{}.mm_cid_tasks,
          "Threads (of mms created in the recording) each mm_cid model holds; later ones are "
          "counted, not modelled");
ABSL_FLAG(int32_t, replay_check_every, ReplayExperimentOptions{}.check_every,
          "Run the adapters' invariant checks after every n-th event (1: after each)");

ABSL_FLAG(
    std::string, mmcid_variants, "",
    "(isolab replay) mm_cid variants to replay, comma-separated, as isolab variants names them "
    "('' = every registered one)");

// Documented ranges, checked by the flag parser for every subcommand (flag_parser.h).
ISOLAB_FLAG_RANGE(replay_cpus, 0, isolation::kMaxCpus);
ISOLAB_FLAG_RANGE(replay_hz, 0, 10000);
ISOLAB_FLAG_RANGE(replay_disagreements, 0, 1000);
ISOLAB_FLAG_RANGE(replay_max_bad_lines, 0, int64_t{1} << 50);
ISOLAB_FLAG_RANGE(replay_mm_cid_tasks, 16, 1048576);
ISOLAB_FLAG_RANGE(replay_check_every, 1, 1048576);

namespace isolation::isolab {

absl::StatusOr<ReplayExperimentOptions> ReplayOptionsFromFlags() {
  ReplayExperimentOptions o;
  o.file = absl::GetFlag(FLAGS_replay_file);
  o.format = absl::GetFlag(FLAGS_replay_format);
  o.cpus = absl::GetFlag(FLAGS_replay_cpus);
  o.kernel = absl::GetFlag(FLAGS_replay_kernel);
  o.hz = absl::GetFlag(FLAGS_replay_hz);
  o.recorded_isolcpus = absl::GetFlag(FLAGS_recorded_isolcpus);
  o.recorded_nohz_full = absl::GetFlag(FLAGS_recorded_nohz_full);
  ISOLATION_ASSIGN_OR_RETURN(
      o.mechanisms, ParseNameListFlag("replay_mechanisms", absl::GetFlag(FLAGS_replay_mechanisms)));
  o.negative_controls = absl::GetFlag(FLAGS_replay_negative_controls);
  o.disagreements = absl::GetFlag(FLAGS_replay_disagreements);
  o.max_bad_lines = absl::GetFlag(FLAGS_replay_max_bad_lines);
  o.mm_cid_tasks = absl::GetFlag(FLAGS_replay_mm_cid_tasks);
  o.check_every = absl::GetFlag(FLAGS_replay_check_every);
  // The flags that choose rows in the other subcommands choose them here
  // too; left at their defaults (which name those subcommands' default rows)
  // every registered variant replays.
  ISOLATION_ASSIGN_OR_RETURN(o.variants, RowFlagsGiven());
  return o;
}

void SetReplayFile(const std::string& file) { absl::SetFlag(&FLAGS_replay_file, file); }

Subcommand ReplaySubcommand() {
  return {"replay",
          "Replay a recorded kernel trace (trace.dat, trace-cmd report or perf script text) "
          "through every "
          "registered variant: figures per variant and agreement with the kernel (isolab replay "
          "FILE; here "
          "--topology and --isolcpus left at 'seed' mean the recording's own machine and "
          "isolation, other "
          "values a what-if)",
          {"topology",
           "isolcpus",
           "nohz_full",
           "seed",
           "json",
           "replay_file",
           "replay_format",
           "replay_cpus",
           "replay_kernel",
           "replay_hz",
           "recorded_isolcpus",
           "recorded_nohz_full",
           "replay_mechanisms",
           "replay_negative_controls",
           "replay_disagreements",
           "replay_max_bad_lines",
           "replay_mm_cid_tasks",
           "replay_check_every",
           "mmcid_variants",
           "tmigr_variants",
           "idle_variants",
           "vmstat_strategies"},
          [](const experiments::CommonOptions& common,
             experiments::Progress& progress) -> absl::StatusOr<experiments::ExperimentReport> {
            ISOLATION_ASSIGN_OR_RETURN(ReplayExperimentOptions options, ReplayOptionsFromFlags());
            return experiments::RunReplayExperiment(common, options, progress);
          },
          [](const experiments::CommonOptions& common) -> absl::StatusOr<experiments::RunCost> {
            ISOLATION_ASSIGN_OR_RETURN(ReplayExperimentOptions options, ReplayOptionsFromFlags());
            return experiments::EstimateReplayExperiment(common, options);
          }};
}

}  // namespace isolation::isolab
