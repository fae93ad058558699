// SPDX-License-Identifier: GPL-2.0-or-later
// Boot-parameter isolation rules of kernel/sched/isolation.c (v6.19 / 7.0:
// housekeeping_setup() with the HK-ENFORCE check of the timer-migration
// series), applied to a model Topology.
//
// Deviations from the kernel, all deliberate:
//  - a malformed or out-of-range cpulist is an error (InvalidArgument /
//    OutOfRange naming the value and position); the kernel only prints
//    "Housekeeping: nohz_full= or isolcpus= incorrect CPU range" and ignores
//    the parameter;
//  - the boot-CPU fallback is warned about on every setting (the kernel
//    prints it only for the first), since nothing here is silent;
//  - an isolcpus flag with an illegal character is not an error: the kernel
//    rejects the parameter (returns 0, "isolcpus: Invalid flag") and boots
//    on, so we record a warning and ignore the setting;
//  - a setting whose isolated set ends up empty is ignored by the kernel
//    without a message; we record a warning;
//  - HK_TYPE_DOMAIN_BOOT is not modelled separately: housekeeping(kDomain)
//    is the boot-time domain mask, and cpuset isolated partitions are kept in
//    cpuset_isolated() (DomainIsolated() merges both).
//  - the boot CPU is CPU 0; setup_max_cpus is nr_cpu_ids.

#include "isolation/core/isolation_config.h"

#include <cctype>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace isolation {
namespace {

constexpr unsigned Flag(HousekeepingType t) { return 1u << static_cast<unsigned>(t); }
constexpr unsigned kDomainFlag = Flag(HousekeepingType::kDomain);
constexpr unsigned kManagedIrqFlag = Flag(HousekeepingType::kManagedIrq);
// HK_FLAG_KERNEL_NOISE: every type that nohz_full= isolates from.
constexpr unsigned kKernelNoiseFlags = Flag(HousekeepingType::kTick) | Flag(HousekeepingType::kTimer) |
                                       Flag(HousekeepingType::kRcu) | Flag(HousekeepingType::kMisc) |
                                       Flag(HousekeepingType::kWq) | Flag(HousekeepingType::kKthread) |
                                       Flag(HousekeepingType::kSched);

int FirstFlag(unsigned flags) {
  for (int t = 0; t < kNumHousekeepingTypes; ++t) {
    if (flags & (1u << t)) return t;
  }
  return kNumHousekeepingTypes;
}

bool IsAlpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

// Flag words of an isolcpus= setting, in ToCmdline order.
std::string IsolcpusFlagsText(unsigned flags) {
  std::string out;
  if (flags & kKernelNoiseFlags) out += "nohz,";
  if (flags & kDomainFlag) out += "domain,";
  if (flags & kManagedIrqFlag) out += "managed_irq,";
  return out;
}

absl::StatusOr<std::string> ReadFileOrEmpty(const char* path) {
  std::ifstream in(path);
  if (!in.is_open()) return std::string();
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

std::string_view HousekeepingTypeName(HousekeepingType type) {
  switch (type) {
    case HousekeepingType::kDomain: return "domain";
    case HousekeepingType::kTick: return "tick";
    case HousekeepingType::kTimer: return "timer";
    case HousekeepingType::kRcu: return "rcu";
    case HousekeepingType::kMisc: return "misc";
    case HousekeepingType::kWq: return "wq";
    case HousekeepingType::kKthread: return "kthread";
    case HousekeepingType::kSched: return "sched";
    case HousekeepingType::kManagedIrq: return "managed_irq";
  }
  return "unknown";
}

IsolationConfig::IsolationConfig(const Topology& topology)
    : num_cpus_(topology.num_cpus()),
      boot_cpu_(0),
      present_(topology.present()),
      isolcpus_domain_(topology.num_cpus()),
      nohz_full_(topology.num_cpus()),
      cpuset_isolated_(topology.num_cpus()) {
  for (auto& m : housekeeping_) m = topology.possible();
  Recompute();
}

// housekeeping_setup()
absl::Status IsolationConfig::ApplySetting(std::string_view parameter, std::string_view list_text,
                                           unsigned type_flags) {
  const std::string param(parameter);
  absl::StatusOr<CpuMask> parsed = CpuMask::Parse(list_text, num_cpus_);
  if (!parsed.ok()) {
    return absl::Status(parsed.status().code(),
                        absl::StrCat(param, ": ", parsed.status().message()));
  }
  CpuMask non_housekeeping = *std::move(parsed);
  CpuMask staging = CpuMask::AndNot(CpuMask::Full(num_cpus_), non_housekeeping);

  if (staging.FirstAnd(present_) >= num_cpus_) {
    staging.Set(boot_cpu_);
    non_housekeeping.Clear(boot_cpu_);
    warnings_.push_back({param, absl::StrFormat("Housekeeping: must include one present CPU, using boot CPU:%d",
                                                boot_cpu_)});
  }
  if (non_housekeeping.Empty()) {
    warnings_.push_back({param, "no CPU left to isolate; setting ignored"});
    return absl::OkStatus();
  }

  if (configured_flags_ != 0) {
    // Second setup call: shared types must agree.
    const unsigned common = type_flags & configured_flags_;
    for (int t = 0; t < kNumHousekeepingTypes; ++t) {
      if ((common & (1u << t)) && !staging.Equal(housekeeping_[static_cast<size_t>(t)])) {
        warnings_.push_back({param, "Housekeeping: nohz_full= must match isolcpus="});
        return absl::OkStatus();
      }
    }
    // HK-ENFORCE: some present CPU must be neither nohz_full nor
    // domain-isolated, else the later setting is dropped.
    const int earlier = FirstFlag(configured_flags_ & (kKernelNoiseFlags | kDomainFlag));
    const bool current_relevant = (type_flags & (kKernelNoiseFlags | kDomainFlag)) != 0;
    if (earlier != kNumHousekeepingTypes && current_relevant) {
      CpuMask both = present_;
      both.And(staging).And(housekeeping_[static_cast<size_t>(earlier)]);
      if (both.Empty()) {
        warnings_.push_back({param, absl::StrCat("Housekeeping: must include one present CPU neither in "
                                                 "nohz_full= nor in isolcpus=domain, ignoring setting ",
                                                 std::string(list_text))});
        return absl::OkStatus();
      }
    }
  }
  const unsigned new_flags = type_flags & ~configured_flags_;
  for (int t = 0; t < kNumHousekeepingTypes; ++t) {
    if (new_flags & (1u << t)) housekeeping_[static_cast<size_t>(t)] = staging;
  }
  configured_flags_ |= type_flags;
  accepted_.push_back(param.substr(0, param.find('=') + 1) +
                      (param.rfind("isolcpus=", 0) == 0 ? IsolcpusFlagsText(type_flags) : std::string()) +
                      non_housekeeping.ToString());
  Recompute();
  return absl::OkStatus();
}

// housekeeping_isolcpus_setup()
absl::Status IsolationConfig::ApplyIsolcpus(std::string_view value) {
  const std::string param = absl::StrCat("isolcpus=", std::string(value));
  unsigned flags = 0;
  size_t pos = 0;
  auto starts_with = [&](std::string_view word) { return value.substr(pos, word.size()) == word; };
  while (pos < value.size() && IsAlpha(value[pos])) {
    if (starts_with("nohz,")) {
      pos += 5;
      flags |= kKernelNoiseFlags;
      continue;
    }
    if (starts_with("domain,")) {
      pos += 7;
      flags |= kDomainFlag;
      continue;
    }
    if (starts_with("managed_irq,")) {
      pos += 12;
      flags |= kManagedIrqFlag;
      continue;
    }
    // Unknown sub-parameter: skip it if it is a well-formed word.
    const size_t begin = pos;
    bool illegal = false;
    while (pos < value.size() && value[pos] != ',') {
      if (!IsAlpha(value[pos]) && value[pos] != '_') illegal = true;
      ++pos;
    }
    const std::string word(value.substr(begin, pos - begin));
    if (illegal) {
      warnings_.push_back({param, absl::StrCat("isolcpus: Invalid flag ", word, "; parameter ignored")});
      return absl::OkStatus();
    }
    warnings_.push_back({param, absl::StrCat("isolcpus: Skipped unknown flag ", word)});
    if (pos < value.size()) ++pos;  // the ','
  }
  if (flags == 0) flags = kDomainFlag;  // bare list = domain
  return ApplySetting(param, value.substr(pos), flags);
}

// housekeeping_nohz_full_setup()
absl::Status IsolationConfig::ApplyNohzFull(std::string_view value) {
  return ApplySetting(absl::StrCat("nohz_full=", std::string(value)), value, kKernelNoiseFlags);
}

// The command line is split like the kernel's next_arg(): words are
// separated by whitespace outside double quotes, and a value wrapped in
// quotes (isolcpus="domain,1-3") has them removed.
absl::StatusOr<IsolationConfig> IsolationConfig::FromBootParams(const Topology& topology, std::string_view cmdline) {
  IsolationConfig config(topology);
  auto is_space = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
  size_t pos = 0;
  while (pos < cmdline.size()) {
    while (pos < cmdline.size() && is_space(cmdline[pos])) ++pos;
    const size_t begin = pos;
    bool in_quote = false;
    while (pos < cmdline.size() && (in_quote || !is_space(cmdline[pos]))) {
      if (cmdline[pos] == '"') in_quote = !in_quote;
      ++pos;
    }
    std::string_view word = cmdline.substr(begin, pos - begin);
    if (!word.empty() && word.front() == '"') {  // "param=value" quoted as a whole
      word.remove_prefix(1);
      if (!word.empty() && word.back() == '"') word.remove_suffix(1);
    }
    const size_t eq = word.find('=');
    if (eq == std::string_view::npos) continue;
    const std::string_view name = word.substr(0, eq);
    std::string_view value = word.substr(eq + 1);
    if (!value.empty() && value.front() == '"') {
      value.remove_prefix(1);
      if (!value.empty() && value.back() == '"') value.remove_suffix(1);
    }
    absl::Status s;
    if (name == "isolcpus") {
      s = config.ApplyIsolcpus(value);
    } else if (name == "nohz_full") {
      s = config.ApplyNohzFull(value);
    }
    if (!s.ok()) return s;
  }
  return config;
}

absl::StatusOr<IsolationConfig> IsolationConfig::FromFlags(const Topology& topology, std::string_view isolcpus,
                                                           std::string_view nohz_full) {
  IsolationConfig config(topology);
  if (!isolcpus.empty()) {
    absl::Status s = config.ApplyIsolcpus(isolcpus);
    if (!s.ok()) return s;
  }
  if (!nohz_full.empty()) {
    absl::Status s = config.ApplyNohzFull(nohz_full);
    if (!s.ok()) return s;
  }
  return config;
}

absl::StatusOr<IsolationConfig> IsolationConfig::FromHost(const Topology& topology) {
  absl::StatusOr<std::string> cmdline = ReadFileOrEmpty("/proc/cmdline");
  if (!cmdline.ok()) return cmdline.status();
  absl::StatusOr<IsolationConfig> config = FromBootParams(topology, *cmdline);
  if (!config.ok()) return config;
  // Cross-check with what the running kernel reports (sysfs lists end in
  // '\n', which the cpulist grammar accepts).  A mismatch is a warning: the
  // sysfs view also reflects e.g. CONFIG_NO_HZ_FULL=n.
  struct Check {
    const char* path;
    CpuMask expected;
  };
  const Check checks[] = {{"/sys/devices/system/cpu/isolated", config->isolcpus_domain()},
                          {"/sys/devices/system/cpu/nohz_full", config->nohz_full()}};
  for (const Check& c : checks) {
    absl::StatusOr<std::string> text = ReadFileOrEmpty(c.path);
    if (!text.ok() || text->empty()) continue;
    if (*text == "(null)\n") continue;  // nohz_full when CONFIG_NO_HZ_FULL is off
    absl::StatusOr<CpuMask> mask = CpuMask::Parse(*text, topology.num_cpus());
    if (!mask.ok()) {
      config->warnings_.push_back({c.path, std::string(mask.status().message())});
    } else if (!mask->Equal(c.expected)) {
      config->warnings_.push_back({c.path, absl::StrCat("kernel reports \"", mask->ToString(),
                                                        "\" but the command line gives \"",
                                                        c.expected.ToString(), "\"")});
    }
  }
  return config;
}

absl::Status IsolationConfig::SetCpusetIsolated(const CpuMask& isolated) {
  if (isolated.nbits() != num_cpus_) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "cpuset isolated mask \"%s\" has %d bits, the topology %d cpus", isolated.ToString(), isolated.nbits(),
        num_cpus_));
  }
  cpuset_isolated_ = isolated;
  return absl::OkStatus();
}

CpuMask IsolationConfig::DomainIsolated() const { return isolcpus_domain_ | cpuset_isolated_; }

// cpu_is_isolated()
bool IsolationConfig::CpuIsIsolated(int cpu) const {
  if (cpu < 0 || cpu >= num_cpus_) return false;
  return !IsHousekeeping(cpu, HousekeepingType::kDomain) || !IsHousekeeping(cpu, HousekeepingType::kTick) ||
         cpuset_isolated_.Test(cpu);
}

void IsolationConfig::Recompute() {
  const CpuMask full = CpuMask::Full(num_cpus_);
  isolcpus_domain_ = (configured_flags_ & kDomainFlag)
                         ? CpuMask::AndNot(full, housekeeping(HousekeepingType::kDomain))
                         : CpuMask(num_cpus_);
  nohz_full_ = (configured_flags_ & kKernelNoiseFlags) ? CpuMask::AndNot(full, housekeeping(HousekeepingType::kTick))
                                                       : CpuMask(num_cpus_);
  // tick_do_timer_cpu under nohz_full: the boot CPU, which the fallback
  // above keeps in tick housekeeping whenever no other present CPU is.
  tick_cpu_ = -1;
  if (!nohz_full_.Empty()) {
    const int c = housekeeping(HousekeepingType::kTick).FirstAnd(present_);
    tick_cpu_ = c < num_cpus_ ? c : -1;
  }
}

std::string IsolationConfig::ToCmdline() const {
  std::string out;
  for (const std::string& a : accepted_) {
    if (!out.empty()) out.push_back(' ');
    out += a;
  }
  return out;
}

}  // namespace isolation
