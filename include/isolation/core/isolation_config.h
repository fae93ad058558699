// SPDX-License-Identifier: GPL-2.0-or-later
// -----------------------------------------------------------------------------
// isolation_config.h
// -----------------------------------------------------------------------------
//
// Which CPUs are isolated and from what: the kernel boot parameters
// `isolcpus=` (flags `nohz`, `domain`, `managed_irq`, and the bare-list form,
// which means `domain`) and `nohz_full=`, plus cpuset isolated partitions set
// at run time.  From them it derives the housekeeping mask of each type, the
// nohz timekeeper ("tick") CPU, and cpu_is_isolated().
//
// Kernel counterpart: kernel/sched/isolation.c (housekeeping_setup,
// housekeeping_isolcpus_setup, housekeeping_nohz_full_setup,
// housekeeping_cpumask), include/linux/sched/isolation.h (enum hk_type,
// cpu_is_isolated), kernel/time/tick-sched.c (tick_nohz_full_setup and the
// timekeeper choice), and the housekeeping-enforcement rule of the v6.19
// timer-migration series (see shared spec tmigr.md, HK-ENFORCE).
//
// Rules applied, each reported as a Warning (never silently):
//  - a setting that would leave no present housekeeping CPU gets the boot CPU
//    back ("Housekeeping: must include one present CPU, using boot CPU:%d");
//  - a second setting must agree with the first on the CPUs they both cover
//    ("nohz_full= must match isolcpus=") -- it is dropped otherwise;
//  - HK-ENFORCE: when nohz_full= and isolcpus=domain are both given, some
//    present CPU must be in neither, else the *later* setting is dropped;
//  - an unknown but well-formed isolcpus flag is skipped with a warning; a
//    flag with characters other than letters and '_' rejects the parameter
//    (warning; the setting is ignored and parsing goes on, as the kernel
//    boots on);
//  - a setting that isolates no CPU (empty list, or only the boot CPU after
//    the fallback) is ignored with a warning.
// Boot parameters (FromBootParams, FromHost) are read as the kernel reads
// them, leniencies included: a malformed or out-of-range cpulist is ignored
// with the kernel's "Housekeeping: nohz_full= or isolcpus= incorrect CPU
// range" among the warnings; an unknown isolcpus flag that ends the
// parameter makes the kernel read on into the next word of the command line
// (housekeeping_isolcpus_setup()'s `str++` past next_arg()'s NUL), which is
// reproduced with a warning naming the quirk; "--" ends the kernel's part.
// Flags (FromFlags, ApplyIsolcpus, ApplyNohzFull) are strict: a malformed
// cpulist is an InvalidArgument error (a CPU beyond the topology OutOfRange)
// naming the parameter, the value and the byte position.
//
// Thread safety: a value type.  SetCpusetIsolated() must not run concurrently
// with readers; mechanisms copy the masks they need.

#ifndef ISOLATION_ISOLATION_CONFIG_H_
#define ISOLATION_ISOLATION_CONFIG_H_

#include <array>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "isolation/core/contract.h"
#include "isolation/core/cpumask.h"
#include "isolation/core/topology.h"

namespace isolation {

// Housekeeping types (enum hk_type).  nohz_full= and isolcpus=nohz remove
// CPUs from every "kernel noise" type (kTick, kTimer, kRcu, kMisc, kWq,
// kKthread, kSched); isolcpus=domain from kDomain; isolcpus=managed_irq from
// kManagedIrq.
enum class HousekeepingType {
  kDomain = 0,
  kTick,
  kTimer,
  kRcu,
  kMisc,
  kWq,
  kKthread,
  kSched,
  kManagedIrq,
};
inline constexpr int kNumHousekeepingTypes = 9;
// "domain", "tick", "timer", "rcu", "misc", "wq", "kthread", "sched", "managed_irq".
std::string_view HousekeepingTypeName(HousekeepingType type);

struct IsolationWarning {
  std::string parameter;  // e.g. "isolcpus=domain,1-7"
  std::string message;    // the kernel's wording where it has one
};

class IsolationConfig {
 public:
  // No isolation: every type's housekeeping mask is every possible CPU.
  explicit IsolationConfig(const Topology& topology);

  // What the kernel was built with, where it changes the outcome.
  struct BootOptions {
    // CONFIG_NO_HZ_FULL: without it the kernel ignores nohz_full= and
    // isolcpus=nohz ("Housekeeping: nohz unsupported").
    bool no_hz_full = true;
  };
  // Parses a kernel command line the way the kernel does (parse_args(),
  // next_arg(), obsolete_checksetup(), housekeeping_*_setup()): only
  // isolcpus= and nohz_full= are interpreted, in command-line order; the
  // line ends at a NUL byte (warned) and the kernel's part at "--".  Never
  // fails on bad values: what the kernel ignores is ignored, with the
  // kernel's message among the warnings (see above).  The StatusOr is kept
  // for API stability.
  static absl::StatusOr<IsolationConfig> FromBootParams(const Topology& topology,
                                                        std::string_view cmdline,
                                                        BootOptions options);
  static absl::StatusOr<IsolationConfig> FromBootParams(const Topology& topology,
                                                        std::string_view cmdline) {
    return FromBootParams(topology, cmdline, BootOptions());
  }
  // Convenience for flags: either string may be empty.  isolcpus is parsed
  // before nohz_full (the seeds' order).
  static absl::StatusOr<IsolationConfig> FromFlags(const Topology& topology,
                                                   std::string_view isolcpus,
                                                   std::string_view nohz_full);
  // The host's own configuration: FromBootParams of /proc/cmdline (an
  // unreadable one counts as empty, with a warning), told whether the kernel
  // has CONFIG_NO_HZ_FULL (/sys/devices/system/cpu/nohz_full exists); where
  // /sys/devices/system/cpu/{isolated,nohz_full} disagree with the result, a
  // warning says so (see host.h, CompareIsolationWithHost).
  static absl::StatusOr<IsolationConfig> FromHost(const Topology& topology);

  // Apply one parameter (the part after '=') with the kernel's rules, but
  // strictly: a malformed or out-of-range cpulist is an error.
  absl::Status ApplyIsolcpus(std::string_view value);
  absl::Status ApplyNohzFull(std::string_view value);

  // Run-time cpuset isolated partitions (cpuset.cpus.partition=isolated).
  // They count as domain-isolated for cpu_is_isolated() and for the
  // isolation-aware mechanisms.  Errors: CPUs outside the topology.
  absl::Status SetCpusetIsolated(const CpuMask& isolated);
  const CpuMask& cpuset_isolated() const { return cpuset_isolated_; }

  // REQUIRES: `type` is one of the enumerators (contract-checked).
  const CpuMask& housekeeping(HousekeepingType type) const {
    ISOLATION_CONTRACT(static_cast<unsigned>(type) < kNumHousekeepingTypes, "housekeeping type %d",
                       static_cast<int>(type));
    return housekeeping_[static_cast<size_t>(type)];
  }
  // false for a CPU outside [0, num_cpus()).
  bool IsHousekeeping(int cpu, HousekeepingType type) const {
    return housekeeping(type).TestInRange(cpu);
  }
  // CPUs removed from the domain by isolcpus (boot-time; not cpuset).
  const CpuMask& isolcpus_domain() const { return isolcpus_domain_; }
  // CPUs given in nohz_full= (or isolcpus=nohz).
  const CpuMask& nohz_full() const { return nohz_full_; }
  bool nohz_full_enabled() const { return !nohz_full_.Empty(); }
  // Domain-isolated at boot or in a cpuset isolated partition.
  CpuMask DomainIsolated() const;
  // cpu_is_isolated(): not domain or not tick housekeeping, or in an isolated
  // cpuset partition.  false for a CPU outside [0, num_cpus()) (no CPU is
  // isolated that does not exist).
  bool CpuIsIsolated(int cpu) const;
  // The nohz timekeeper (tick_do_timer_cpu) while nohz_full runs: the first
  // tick-housekeeping online CPU (the boot CPU in practice); -1 without
  // nohz_full (the duty then moves among CPUs).
  int tick_cpu() const { return tick_cpu_; }

  const std::vector<IsolationWarning>& warnings() const { return warnings_; }
  int num_cpus() const { return num_cpus_; }
  // "isolcpus=... nohz_full=..." equivalent of the accepted settings.
  std::string ToCmdline() const;

 private:
  IsolationConfig() = default;
  absl::Status ApplySetting(std::string_view parameter, std::string_view list_text,
                            unsigned type_flags, bool lenient);
  absl::Status IsolcpusSetup(std::string_view param, const std::string& buf, size_t str, bool boot);
  void Recompute();

  int num_cpus_ = 0;
  int boot_cpu_ = 0;
  bool no_hz_full_ = true;     // CONFIG_NO_HZ_FULL
  size_t cmdline_length_ = 0;  // FromBootParams: bytes of the command line proper
  CpuMask present_;
  std::array<CpuMask, kNumHousekeepingTypes> housekeeping_;
  unsigned configured_flags_ = 0;  // bit per HousekeepingType already set by a parameter
  CpuMask isolcpus_domain_, nohz_full_, cpuset_isolated_;
  int tick_cpu_ = -1;
  std::vector<IsolationWarning> warnings_;
  std::vector<std::string> accepted_;  // accepted parameters, for ToCmdline
};

}  // namespace isolation

#endif  // ISOLATION_ISOLATION_CONFIG_H_
