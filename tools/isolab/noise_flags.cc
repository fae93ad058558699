// SPDX-License-Identifier: GPL-2.0-or-later
// `isolab noise`: the flags of experiments::RunNoiseExperiment.

#include <string>

#include "absl/flags/flag.h"
#include "core/status_macros.h"
#include "experiments/noise_experiment.h"
#include "isolab/flag_parser.h"
#include "isolab/subcommands.h"

using isolation::experiments::NoiseExperimentOptions;

ABSL_FLAG(int32_t, noise_cpu, NoiseExperimentOptions{}.cpu,
          "Host CPU both tools measure on (-1: the first isolated CPU, else the highest usable)");
ABSL_FLAG(int64_t, noise_seconds, NoiseExperimentOptions{}.seconds,
          "Seconds each tool measures, each round, 1..3600 (quick: 1)");
ABSL_FLAG(int32_t, noise_rounds, NoiseExperimentOptions{}.rounds,
          "Rounds of oslat then the meter (alternating which goes first), 1..100 (quick: 1)");
ABSL_FLAG(int32_t, noise_buckets, NoiseExperimentOptions{}.buckets,
          "Histogram buckets of 1 us, the last including overflows (oslat -b), 5..1024");
ABSL_FLAG(std::string, oslat_program, NoiseExperimentOptions{}.oslat,
          "The oslat program (Debian rt-tests): a path or a name in PATH");

ISOLAB_FLAG_RANGE(noise_cpu, -1, isolation::kMaxCpus - 1);
ISOLAB_FLAG_RANGE(noise_seconds, 1, 3600);
ISOLAB_FLAG_RANGE(noise_rounds, 1, 100);
ISOLAB_FLAG_RANGE(noise_buckets, 5, 1024);

namespace isolation::isolab {
namespace {

NoiseExperimentOptions NoiseOptionsFromFlags() {
  NoiseExperimentOptions o;
  o.cpu = absl::GetFlag(FLAGS_noise_cpu);
  o.seconds = absl::GetFlag(FLAGS_noise_seconds);
  o.rounds = absl::GetFlag(FLAGS_noise_rounds);
  o.buckets = absl::GetFlag(FLAGS_noise_buckets);
  o.oslat = absl::GetFlag(FLAGS_oslat_program);
  return o;
}

}  // namespace

Subcommand NoiseSubcommand() {
  return {"noise",
          "The library's noise meter beside rt-tests' oslat on the same host CPU, round by "
          "round, both in oslat's format, with their Maximum and Average ratios (needs oslat: "
          "tools/bootstrap.sh noise installs rt-tests)",
          {"json", "noise_cpu", "noise_seconds", "noise_rounds", "noise_buckets", "oslat_program"},
          [](const experiments::CommonOptions& common,
             experiments::Progress& progress) -> absl::StatusOr<experiments::ExperimentReport> {
            return experiments::RunNoiseExperiment(common, NoiseOptionsFromFlags(), progress);
          },
          [](const experiments::CommonOptions& common) -> absl::StatusOr<experiments::RunCost> {
            return experiments::EstimateNoiseExperiment(common, NoiseOptionsFromFlags());
          }};
}

}  // namespace isolation::isolab
