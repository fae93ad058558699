// SPDX-License-Identifier: GPL-2.0-or-later
// -----------------------------------------------------------------------------
// host.h
// -----------------------------------------------------------------------------
//
// Reading what the running kernel exposes (procfs, sysfs, the kernel log)
// and comparing it with the model: the shared vocabulary of the host
// cross-checks (`isolab hostcheck` and the host tests), and the check of the
// isolation masks.  Mechanism-specific checks live with their mechanism
// (vmstat/zoneinfo.h, tmigr/host_check.h) and return the same HostCheck.
//
// Kernel counterpart: what the checks read.  /proc/cmdline
// (saved_command_line plus '\n'), /sys/devices/system/cpu/possible,
// /sys/devices/system/cpu/isolated (drivers/base/cpu.c: possible CPUs not
// in housekeeping_cpumask(HK_TYPE_DOMAIN[_BOOT]), i.e. isolcpus=domain),
// /sys/devices/system/cpu/nohz_full (tick_nohz_full_mask; absent without
// CONFIG_NO_HZ_FULL, "(null)" when never set with off-stack cpumasks),
// /dev/kmsg (printk records "prio,seq,usec,flags;text").
//
// Errors never crash: a file that cannot be read is a Status naming the
// path and the reason (NotFound, PermissionDenied, ...), and a check whose
// data is missing is HostVerdict::kNotAvailable with the reason.
//
// Thread safety: free functions without shared state.

#ifndef ISOLATION_CORE_HOST_H_
#define ISOLATION_CORE_HOST_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "isolation/core/isolation_config.h"

namespace isolation {

// The whole file.  Errors: NotFound (absent), PermissionDenied, or the
// errno class of the failure; the message names the path.
absl::StatusOr<std::string> ReadHostFile(const std::string& path);

// The host CPUs a thread of this process can be pinned to, ascending: the
// process's affinity mask (sched_getaffinity, which reflects the cgroup
// cpuset) plus every CPU of /sys/devices/system/cpu/isolated that a thread
// can actually be pinned to.  The isolated CPUs matter on a machine booted
// with isolcpus=: the kernel starts init (and so every process) with only the
// housekeeping CPUs in its mask, yet a thread may still move onto an isolated
// CPU, which is what a real-thread experiment on such a host must do.  Each
// isolated CPU outside the mask is probed by a short-lived thread
// (pthread_setaffinity_np), so a cpuset that forbids it leaves it out.
// `isolated_path` is for tests.  Errors: Internal when sched_getaffinity
// fails or nothing is usable.
absl::StatusOr<std::vector<int>> UsableHostCpus(
    const std::string& isolated_path = "/sys/devices/system/cpu/isolated");

// The text of every record the kernel log (default /dev/kmsg) still holds,
// one per line, oldest first.  Errors: PermissionDenied (dmesg_restrict
// without CAP_SYSLOG), NotFound, or the errno class.
absl::StatusOr<std::string> ReadKernelLog(const std::string& kmsg_path = "/dev/kmsg");

// /proc/cmdline minus the '\n' that proc appends (the kernel parsed the
// line without it).
std::string HostCommandLine(std::string_view proc_cmdline);

enum class HostVerdict { kAgree, kDisagree, kNotAvailable };
// "agree", "disagree", "not available".
std::string_view HostVerdictName(HostVerdict verdict);

struct HostCheck {
  std::string name;  // e.g. "isolation: isolcpus domain vs /sys/devices/system/cpu/isolated"
  HostVerdict verdict = HostVerdict::kNotAvailable;
  std::string model;   // what the model computes
  std::string kernel;  // what the running kernel reports
  std::string detail;  // why not available, or how the two were compared
};

// The files the isolation check reads; each may hold an error.
struct HostIsolationInputs {
  absl::StatusOr<std::string> cmdline;    // /proc/cmdline
  absl::StatusOr<std::string> possible;   // /sys/devices/system/cpu/possible
  absl::StatusOr<std::string> isolated;   // /sys/devices/system/cpu/isolated
  absl::StatusOr<std::string> nohz_full;  // /sys/devices/system/cpu/nohz_full
};
// Reads them under `root` ("" = the real filesystem; tests pass a fake tree).
HostIsolationInputs ReadHostIsolationInputs(const std::string& root = "");

// `model` (built from the same command line) against the kernel's
// isolated and nohz_full files: one HostCheck each.  nohz_full also agrees
// when the kernel's mask is the model's minus the boot CPU, which
// tick_nohz_init() clears under CONFIG_PM_SLEEP_SMP ("NO_HZ: Clearing 0
// from nohz_full range for timekeeping").
std::vector<HostCheck> CompareIsolationWithHost(const IsolationConfig& model,
                                                const HostIsolationInputs& in);

// The whole isolation check: a model machine of nr_cpu_ids CPUs (from
// `possible`), IsolationConfig::FromBootParams of the command line (told
// whether CONFIG_NO_HZ_FULL is there), then CompareIsolationWithHost.  The
// model's boot-parameter warnings are appended to the details.
std::vector<HostCheck> CheckIsolationAgainstHost(const HostIsolationInputs& in);

}  // namespace isolation

#endif  // ISOLATION_CORE_HOST_H_
