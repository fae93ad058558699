// SPDX-License-Identifier: GPL-2.0-or-later
// noise_experiment.h (internal): `isolab noise`, the library's real-thread
// noise meter (runtime/noise_meter.h) beside rt-tests' `oslat` on the same
// host CPU, in the same run, printed in oslat's own format.
//
// Each round runs both on the CPU for the same duration, one after the
// other (never at once: two spinners on one CPU would measure each other),
// alternating which goes first so that neither always runs on the warmer
// or the quieter half.  Each tool's result is printed in oslat's format
// (bucket counts, "(including overflows)", Minimum, Average, Maximum,
// Max-Min, Duration), then a table of every round's Maximum and Average
// for both and the meter/oslat ratios, with their medians.  The host's noise
// is in both figures: what is compared is the two instruments, not the host.
//
// Units: oslat rounds every gap up to whole microseconds (a 40 ns gap
// counts in its "001 (us)" bucket, its Minimum is 1 us, its Average is the
// mean of the rounded gaps).  The meter's bucket k holds gaps in [k, k+1) us
// and is printed with oslat's label k+1, so the two histograms line up (a
// gap of exactly k us differs by one bucket); its Minimum and Maximum are
// rounded up and its Average is the mean of the labels, as oslat's; the
// JSON also has its unrounded average (exact_avg_us).
//
// Thread safety: see experiment.h.  Starts `oslat` as a child process
// (fork + execvp, its output captured) and one pinned spinning thread.

#ifndef ISOLATION_LIB_EXPERIMENTS_NOISE_EXPERIMENT_H_
#define ISOLATION_LIB_EXPERIMENTS_NOISE_EXPERIMENT_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "experiments/experiment.h"
#include "isolation/runtime/noise_meter.h"

namespace isolation::experiments {

struct NoiseExperimentOptions {
  // --noise_cpu: the host CPU both measure on; -1 = the first isolated CPU
  // the host boots with (isolcpus=, nohz_full=), else the highest CPU this
  // process may run on (a warning says it is not isolated).
  int cpu = -1;
  int64_t seconds = 5;  // --noise_seconds: each tool, each round, 1..3600 (quick: 1)
  int rounds = 3;       // --noise_rounds: 1..100 (quick: 1)
  int buckets = 32;     // --noise_buckets: oslat -b, 5..1024 (oslat 2.40 refuses 4)
  // --oslat_program: the oslat program (rt-tests); a path or a name looked
  // up in PATH.  Tests point it at a stand-in.
  std::string oslat = "oslat";
};

// One tool's figures, in oslat's units.
struct OslatFigures {
  int64_t min_us = 0;
  double avg_us = 0;
  int64_t max_us = 0;
  double duration_s = 0;
  std::vector<int64_t> buckets;  // buckets[i]: oslat's "i+1 (us)"; the last includes overflows
  double exact_avg_us = -1;      // the meter's: its average gap before rounding (-1: oslat's)
};

// oslat's text for `f` ("    001 (us):\t 26084321" ... "    Duration:\t 1.002 (sec)");
// `zero_omit` leaves out empty buckets but the last, as oslat -z does.
std::string OslatText(const OslatFigures& f, bool zero_omit = false);
// oslat's table for several CPUs, one column each as oslat prints a
// multi-CPU run ("        Core:\t 1 2 3", then each bucket line and
// Minimum ... Duration with one value per CPU).  oslat's "Counter Freq" line
// is left out: the model has no TSC.  REQUIRES: the same bucket count for
// every column (else the shortest is used).
std::string OslatTable(const std::vector<std::pair<int, OslatFigures>>& per_cpu,
                       bool zero_omit = false);
// A noise meter's result in oslat's units (1 us buckets; bucket k printed
// as k + 1).  Errors: a histogram of another bucket size (InvalidArgument
// naming --bucket_size).
absl::StatusOr<OslatFigures> OslatFiguresOf(const NoiseResult& result);
// The figures of oslat's --json output (rt-tests 2.x: thread."0".min, avg,
// max, duration, histogram).  Errors: InvalidArgument naming what is
// missing or malformed.
absl::StatusOr<OslatFigures> ParseOslatJson(const std::string& json, int buckets);

// What RunNoiseExperiment costs (2 x rounds x seconds of wall time).
absl::StatusOr<RunCost> EstimateNoiseExperiment(const CommonOptions& common,
                                                const NoiseExperimentOptions& options);
// Errors: InvalidArgument naming the flag (--noise_seconds=0, --noise_cpu=7
// not allowed for this process); NotFound when oslat cannot be run
// (naming it, and the Debian package rt-tests); Internal when oslat fails
// (its exit status and output).
absl::StatusOr<ExperimentReport> RunNoiseExperiment(const CommonOptions& common,
                                                    const NoiseExperimentOptions& options,
                                                    Progress& progress);

}  // namespace isolation::experiments

#endif  // ISOLATION_LIB_EXPERIMENTS_NOISE_EXPERIMENT_H_
