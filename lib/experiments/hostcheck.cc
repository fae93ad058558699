// SPDX-License-Identifier: GPL-2.0-or-later
//
// `isolab hostcheck [--json]`: runs every cross-check of the model against
// the running kernel that the host allows and prints agree / disagree /
// not available (with why) for each.  Also rows of `isolab reproduce`.

#include "experiments/hostcheck.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <bit>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "isolation/mm_cid/host_check.h"
#include "isolation/tmigr/host_check.h"
#include "isolation/vmstat/host_check.h"

namespace isolation::experiments {

std::vector<HostCheck> RunHostChecks(const HostCheckOptions& options) {
  const std::string& root = options.root;
  std::vector<HostCheck> checks = CheckIsolationAgainstHost(ReadHostIsolationInputs(root));
  const int page_shift = options.page_shift >= 0
                             ? options.page_shift
                             : std::countr_zero(static_cast<unsigned long>(sysconf(_SC_PAGESIZE)));
  checks.push_back(vmstat::CheckZoneThresholds(
      ReadHostFile(root + "/proc/zoneinfo"), ReadHostFile(root + "/sys/devices/system/cpu/online"),
      page_shift));
  checks.push_back(tmigr::CheckHierarchyLevels(
      ReadKernelLog(options.kmsg), ReadHostFile(root + "/sys/devices/system/cpu/possible"),
      ReadHostFile(root + "/sys/devices/system/node/possible")));
  if (options.mm_cid) checks.push_back(mm_cid::CheckHostMmCid());
  return checks;
}

std::string HostChecksText(const std::vector<HostCheck>& checks,
                           const std::string& kernel_release) {
  std::string out = absl::StrCat("the model against the running kernel (", kernel_release, ")\n");
  int counts[3] = {0, 0, 0};
  for (const HostCheck& c : checks) {
    ++counts[static_cast<int>(c.verdict)];
    absl::StrAppend(&out, "\n", std::string(HostVerdictName(c.verdict)), ": ", c.name, "\n");
    if (!c.model.empty()) absl::StrAppend(&out, "  model:  ", c.model, "\n");
    if (!c.kernel.empty()) absl::StrAppend(&out, "  kernel: ", c.kernel, "\n");
    absl::StrAppend(&out,
                    c.verdict == HostVerdict::kNotAvailable ? "  why:    " : "  how:    ", c.detail,
                    "\n");
  }
  absl::StrAppend(&out, "\n", counts[0], " agree, ", counts[1], " disagree, ", counts[2],
                  " not available\n");
  return out;
}

nlohmann::json HostChecksJson(const std::vector<HostCheck>& checks,
                              const std::string& kernel_release) {
  nlohmann::json j;
  j["kernel_release"] = kernel_release;
  j["checks"] = nlohmann::json::array();
  int counts[3] = {0, 0, 0};
  for (const HostCheck& c : checks) {
    ++counts[static_cast<int>(c.verdict)];
    j["checks"].push_back({{"name", c.name},
                           {"verdict", std::string(HostVerdictName(c.verdict))},
                           {"model", c.model},
                           {"kernel", c.kernel},
                           {"detail", c.detail}});
  }
  j["agree"] = counts[0];
  j["disagree"] = counts[1];
  j["not_available"] = counts[2];
  return j;
}

namespace {

std::string KernelRelease() {
  utsname u;
  if (uname(&u) != 0) return "unknown kernel";
  return absl::StrCat(u.sysname, " ", u.release);
}

}  // namespace

absl::StatusOr<ExperimentReport> RunHostcheckExperiment(const CommonOptions& common,
                                                        const HostCheckOptions& options,
                                                        Progress& progress) {
  (void)common;
  progress.Update("reading the host", 0.0);
  const std::vector<HostCheck> checks = RunHostChecks(options);
  progress.Done();
  const std::string release = KernelRelease();
  ExperimentReport report;
  report.json = HostChecksJson(checks, release);
  report.text = HostChecksText(checks, release);
  // A disagreement is the model getting the kernel wrong: a failure (exit 1),
  // like an invariant violation.  Checks the host does not allow are not.
  for (const HostCheck& c : checks) {
    if (c.verdict == HostVerdict::kDisagree) ++report.invariant_violations;
    report.rows.push_back({"hostcheck", c.name, c.kernel.empty() ? "(not exposed)" : c.kernel,
                           absl::StrCat(std::string(HostVerdictName(c.verdict)),
                                        c.model.empty() ? "" : ": model ", c.model)});
  }
  // The host, not the model machine: no configuration warnings.
  FinishReport({}, report);
  return report;
}

}  // namespace isolation::experiments
