// SPDX-License-Identifier: GPL-2.0-or-later
// The argument checks of the scheduler model (sched_model.h), shared by the
// simulator and the real-thread driver so both name a bad value the same way.

#include "runtime/sched_model.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace isolation::sched {

absl::Status CheckDriverSetup(const char* driver, int hz, Nanos timeslice, int topology_cpus,
                              int isolation_cpus) {
  if (hz <= 0 || hz > 100000) {
    return absl::InvalidArgumentError(
        absl::StrCat(driver, ": hz must be in [1, 100000], got ", hz));
  }
  if (timeslice <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(driver, ": timeslice must be > 0 ns, got ", timeslice));
  }
  if (isolation_cpus != topology_cpus) {
    return absl::InvalidArgumentError(absl::StrCat(driver, ": isolation config has ",
                                                   isolation_cpus, " CPUs but the topology has ",
                                                   topology_cpus));
  }
  if (topology_cpus <= 0)
    return absl::InvalidArgumentError(absl::StrCat(driver, ": empty topology"));
  return absl::OkStatus();
}

absl::StatusOr<CpuMask> CheckSpawn(TaskSpec& spec, int num_cpus, bool cpu_online) {
  if (spec.cpu < 0 || spec.cpu >= num_cpus) {
    return absl::InvalidArgumentError(absl::StrCat("Spawn(", spec.name, "): cpu ", spec.cpu,
                                                   " out of range [0, ", num_cpus, ")"));
  }
  if (!cpu_online) {
    return absl::InvalidArgumentError(
        absl::StrCat("Spawn(", spec.name, "): cpu ", spec.cpu, " is offline"));
  }
  CpuMask affinity =
      spec.affinity.nbits() == 0 ? CpuMask::Full(num_cpus) : std::move(spec.affinity);
  if (affinity.nbits() != num_cpus) {
    return absl::InvalidArgumentError(absl::StrCat("Spawn(", spec.name, "): affinity has ",
                                                   affinity.nbits(), " bits, machine has ",
                                                   num_cpus));
  }
  if (!affinity.Test(spec.cpu)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Spawn(", spec.name, "): affinity ", affinity.ToString(), " excludes cpu ", spec.cpu));
  }
  if (spec.body == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("Spawn(", spec.name, "): no task body"));
  }
  return affinity;
}

absl::Status CheckAffinity(bool task_known, TaskId task, const CpuMask& mask, int num_cpus,
                           bool any_online) {
  if (!task_known) return absl::InvalidArgumentError(absl::StrCat("SetAffinity: no task ", task));
  if (mask.nbits() != num_cpus) {
    return absl::InvalidArgumentError(
        absl::StrCat("SetAffinity: mask has ", mask.nbits(), " bits, machine has ", num_cpus));
  }
  if (!any_online) {
    return absl::InvalidArgumentError(
        absl::StrCat("SetAffinity: mask '", mask.ToString(), "' has no online CPU"));
  }
  return absl::OkStatus();
}

absl::Status CheckHotplugCpu(int cpu, int num_cpus) {
  if (cpu < 0 || cpu >= num_cpus) {
    return absl::InvalidArgumentError(
        absl::StrCat("SetCpuOnline: cpu ", cpu, " out of range [0, ", num_cpus, ")"));
  }
  return absl::OkStatus();
}

absl::Status CheckRunFor(Nanos duration, Nanos now, const char* time_name) {
  if (duration < 0)
    return absl::InvalidArgumentError(absl::StrCat("RunFor: negative duration ", duration));
  // kNanosMax is "never": a window reaching it would process periodic ticks
  // without end (and its end would not fit the clock).
  if (duration >= kNanosMax - now) {
    return absl::InvalidArgumentError(absl::StrCat("RunFor: duration ", duration, " ns from time ",
                                                   now, " reaches the end of ", time_name,
                                                   " (kNanosMax = never)"));
  }
  return absl::OkStatus();
}

}  // namespace isolation::sched
