// SPDX-License-Identifier: GPL-2.0-or-later
// hostcheck.h (internal): every cross-check of the model against the
// running kernel, in one place for `isolab hostcheck` and its tests.  The
// checks themselves live with what they check (core/host.h: isolation
// masks; vmstat/host_check.h: stat thresholds; tmigr/host_check.h:
// hierarchy levels; mm_cid/host_check.h: rseq mm_cid); this file only reads
// the host's files and runs them.  Thread safety: call from one thread.

#ifndef ISOLATION_LIB_EXPERIMENTS_HOSTCHECK_H_
#define ISOLATION_LIB_EXPERIMENTS_HOSTCHECK_H_

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/status/statusor.h"
#include "experiments/experiment.h"
#include "isolation/core/host.h"

namespace isolation::experiments {

struct HostCheckOptions {
  std::string root;  // prefix for /proc and /sys ("" = the real ones; tests use a fake tree)
  std::string kmsg = "/dev/kmsg";  // the kernel log
  int page_shift = -1;             // -1: from sysconf(_SC_PAGESIZE)
  bool mm_cid = true;              // run the rseq mm_cid check (starts threads)
};

std::vector<HostCheck> RunHostChecks(const HostCheckOptions& options = {});

// One block per check: verdict, name, model / kernel values, detail.
std::string HostChecksText(const std::vector<HostCheck>& checks, const std::string& kernel_release);
nlohmann::json HostChecksJson(const std::vector<HostCheck>& checks,
                              const std::string& kernel_release);

// `isolab hostcheck`: RunHostChecks(options) as a report; each disagreement
// counts as an invariant violation.  `common` is not used (the checks are
// about the host, not the model machine).
absl::StatusOr<ExperimentReport> RunHostcheckExperiment(const CommonOptions& common,
                                                        const HostCheckOptions& options,
                                                        Progress& progress);

}  // namespace isolation::experiments

#endif  // ISOLATION_LIB_EXPERIMENTS_HOSTCHECK_H_
