// SPDX-License-Identifier: GPL-2.0-or-later
// Boot-parameter isolation rules of kernel/sched/isolation.c (v6.19 / 7.0:
// housekeeping_setup() with the HK-ENFORCE check of the timer-migration
// series), applied to a model Topology, and the way the kernel gets there
// from its command line (kernel/params.c parse_args(), lib/cmdline.c
// next_arg(), init/main.c unknown_bootoption() / repair_env_string() /
// obsolete_checksetup()).
//
// Two modes.  FromBootParams() (and FromHost()) read a command line as the
// kernel reads it, leniencies included:
//  - a malformed or out-of-range cpulist: housekeeping_setup() prints
//    "Housekeeping: nohz_full= or isolcpus= incorrect CPU range" and ignores
//    the parameter; so do we (a warning carrying the kernel's message and
//    our parse error);
//  - an unknown isolcpus= flag at the very end of the parameter:
//    housekeeping_isolcpus_setup() skips it with `str++`, which steps over
//    the NUL that next_arg() wrote in place of the separating space, and
//    parsing goes on in the next word of the command line (flags, then the
//    cpulist up to the end of the whole command line);
//  - a parameter given with dashes ("nohz-full=") matches, as
//    obsolete_checksetup() compares with parameqn();
//  - parsing stops at "--" (the rest is for init);
//  - CONFIG_NO_HZ_FULL=n (BootOptions): nohz_full= and isolcpus=nohz are
//    ignored with "Housekeeping: nohz unsupported. Build with CONFIG_NO_HZ_FULL".
// FromFlags() / ApplyIsolcpus() / ApplyNohzFull() are strict: a malformed
// or out-of-range cpulist is an error (InvalidArgument / OutOfRange naming
// the value and the position), as isolab's --isolcpus/--nohz_full must be.
//
// Deviations from the kernel in both modes, all deliberate:
//  - the boot-CPU fallback is warned about on every setting (the kernel
//    prints it only for the first), since nothing here is silent;
//  - a setting whose isolated set ends up empty is ignored by the kernel
//    without a message; we record a warning;
//  - HK_TYPE_DOMAIN_BOOT is not modelled separately: housekeeping(kDomain)
//    is the boot-time domain mask, and cpuset isolated partitions are kept in
//    cpuset_isolated() (DomainIsolated() merges both).
//  - the boot CPU is CPU 0; setup_max_cpus (maxcpus=, nosmp) is nr_cpu_ids;
//    early parameters, bootconfig and the memory past the end of the command
//    line (read by the quirk above only if the last word is an unknown flag)
//    are not modelled: past the end reads as NUL.

#include "isolation/core/isolation_config.h"

#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "isolation/core/host.h"
#include "kernel_ctype.h"

namespace isolation {
namespace {

constexpr unsigned Flag(HousekeepingType t) { return 1u << static_cast<unsigned>(t); }
constexpr unsigned kDomainFlag = Flag(HousekeepingType::kDomain);
constexpr unsigned kManagedIrqFlag = Flag(HousekeepingType::kManagedIrq);
// HK_FLAG_KERNEL_NOISE: every type that nohz_full= isolates from.
constexpr unsigned kKernelNoiseFlags =
    Flag(HousekeepingType::kTick) | Flag(HousekeepingType::kTimer) | Flag(HousekeepingType::kRcu) |
    Flag(HousekeepingType::kMisc) | Flag(HousekeepingType::kWq) | Flag(HousekeepingType::kKthread) |
    Flag(HousekeepingType::kSched);

int FirstFlag(unsigned flags) {
  for (int t = 0; t < kNumHousekeepingTypes; ++t) {
    if (flags & (1u << t)) return t;
  }
  return kNumHousekeepingTypes;
}

// Flag words of an isolcpus= setting, in ToCmdline order.
std::string IsolcpusFlagsText(unsigned flags) {
  std::string out;
  if (flags & kKernelNoiseFlags) out += "nohz,";
  if (flags & kDomainFlag) out += "domain,";
  if (flags & kManagedIrqFlag) out += "managed_irq,";
  return out;
}

// The C string at `pos` of a NUL-padded buffer.
std::string_view CStringAt(const std::string& buf, size_t pos) {
  return pos < buf.size() ? std::string_view(buf.data() + pos, std::strlen(buf.data() + pos))
                          : std::string_view();
}

// strncmp(buf + pos, word, strlen(word)) == 0
bool MatchesAt(const std::string& buf, size_t pos, std::string_view word) {
  return pos <= buf.size() && buf.compare(pos, word.size(), word) == 0;
}

// parameqn(): '-' and '_' are the same character in parameter names.
bool ParamEqN(const std::string& buf, size_t pos, std::string_view name) {
  auto dash2underscore = [](char c) { return c == '-' ? '_' : c; };
  for (size_t i = 0; i < name.size(); ++i) {
    if (pos + i >= buf.size() || dash2underscore(buf[pos + i]) != dash2underscore(name[i]))
      return false;
  }
  return true;
}

std::string Printable(std::string_view text) {
  std::string out;
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\0') {
      out += "\\0";
    } else if (u < 0x20 || u == 0x7f) {
      out += absl::StrFormat("\\x%02x", u);  // never drive the terminal
    } else {
      out.push_back(c);
    }
  }
  return out;
}

// The parameter a warning names: printable, and at most kMaxLabel bytes of
// it, so that a parameter of thousands of unknown flags costs memory in
// proportion to its length, not to its length times its flag count.
std::string ParameterLabel(std::string_view param) {
  constexpr size_t kMaxLabel = 96;
  if (param.size() <= kMaxLabel) return Printable(param);
  return absl::StrCat(Printable(param.substr(0, kMaxLabel)), "... (", param.size(), " bytes)");
}

}  // namespace

std::string_view HousekeepingTypeName(HousekeepingType type) {
  switch (type) {
    case HousekeepingType::kDomain:
      return "domain";
    case HousekeepingType::kTick:
      return "tick";
    case HousekeepingType::kTimer:
      return "timer";
    case HousekeepingType::kRcu:
      return "rcu";
    case HousekeepingType::kMisc:
      return "misc";
    case HousekeepingType::kWq:
      return "wq";
    case HousekeepingType::kKthread:
      return "kthread";
    case HousekeepingType::kSched:
      return "sched";
    case HousekeepingType::kManagedIrq:
      return "managed_irq";
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

// housekeeping_setup().  `list_text` is the cpulist (up to its NUL).
absl::Status IsolationConfig::ApplySetting(std::string_view parameter, std::string_view list_text,
                                           unsigned type_flags, bool lenient) {
  const std::string param(parameter);
  if ((type_flags & kKernelNoiseFlags) && !(configured_flags_ & kKernelNoiseFlags) &&
      !no_hz_full_) {
    warnings_.push_back(
        {ParameterLabel(param), "Housekeeping: nohz unsupported. Build with CONFIG_NO_HZ_FULL"});
    return absl::OkStatus();
  }
  std::vector<std::string> notes;
  absl::StatusOr<CpuMask> parsed = CpuMask::Parse(list_text, num_cpus_, &notes);
  // The kernel says nothing here; we add a note (see CpuMask::Parse).
  if (parsed.ok()) {
    for (std::string& n : notes)
      warnings_.push_back({ParameterLabel(param), absl::StrCat("note: ", n)});
  }
  if (!parsed.ok()) {
    if (lenient) {
      // The kernel prints this and ignores the parameter (returns 0).
      warnings_.push_back(
          {ParameterLabel(param),
           absl::StrCat("Housekeeping: nohz_full= or isolcpus= incorrect CPU range (",
                        parsed.status().message(), "); parameter ignored")});
      return absl::OkStatus();
    }
    return absl::Status(parsed.status().code(),
                        absl::StrCat(ParameterLabel(param), ": ", parsed.status().message()));
  }
  CpuMask non_housekeeping = *std::move(parsed);
  CpuMask staging = CpuMask::AndNot(CpuMask::Full(num_cpus_), non_housekeeping);

  if (staging.FirstAnd(present_) >= num_cpus_) {
    staging.Set(boot_cpu_);
    non_housekeeping.Clear(boot_cpu_);
    warnings_.push_back(
        {ParameterLabel(param),
         absl::StrFormat("Housekeeping: must include one present CPU, using boot CPU:%d",
                         boot_cpu_)});
  }
  if (non_housekeeping.Empty()) {
    warnings_.push_back({ParameterLabel(param), "no CPU left to isolate; setting ignored"});
    return absl::OkStatus();
  }

  if (configured_flags_ != 0) {
    // Second setup call: shared types must agree.
    const unsigned common = type_flags & configured_flags_;
    for (int t = 0; t < kNumHousekeepingTypes; ++t) {
      if ((common & (1u << t)) && !staging.Equal(housekeeping_[static_cast<size_t>(t)])) {
        warnings_.push_back(
            {ParameterLabel(param), "Housekeeping: nohz_full= must match isolcpus="});
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
        warnings_.push_back({ParameterLabel(param),
                             absl::StrCat("Housekeeping: must include one present CPU neither in "
                                          "nohz_full= nor in isolcpus=domain, ignoring setting ",
                                          Printable(list_text))});
        return absl::OkStatus();
      }
    }
  }
  const unsigned new_flags = type_flags & ~configured_flags_;
  for (int t = 0; t < kNumHousekeepingTypes; ++t) {
    if (new_flags & (1u << t)) housekeeping_[static_cast<size_t>(t)] = staging;
  }
  configured_flags_ |= type_flags;
  const bool is_isolcpus = param.rfind("isolcpus=", 0) == 0;
  accepted_.push_back(absl::StrCat(is_isolcpus ? "isolcpus=" : "nohz_full=",
                                   is_isolcpus ? IsolcpusFlagsText(type_flags) : std::string(),
                                   non_housekeeping.ToString()));
  Recompute();
  return absl::OkStatus();
}

// housekeeping_isolcpus_setup(), on a NUL-terminated buffer as the kernel
// sees it: `str` indexes the value, `end` is the NUL that ends this
// parameter.  In boot mode an unknown flag ending the parameter lets the
// scan continue past that NUL into the rest of the command line, as the
// kernel's `str++` does.
absl::Status IsolationConfig::IsolcpusSetup(std::string_view param, const std::string& buf,
                                            size_t str, bool boot) {
  const std::string word = ParameterLabel(param);
  unsigned flags = 0;
  bool illegal = false;
  while (str < buf.size() && internal::KernelIsAlpha(buf[str])) {
    if (MatchesAt(buf, str, "nohz,")) {
      str += 5;
      flags |= kKernelNoiseFlags;
      continue;
    }
    if (MatchesAt(buf, str, "domain,")) {
      str += 7;
      flags |= kDomainFlag;
      continue;
    }
    if (MatchesAt(buf, str, "managed_irq,")) {
      str += 12;
      flags |= kManagedIrqFlag;
      continue;
    }
    // Unknown sub-parameter: skipped if it is a well-formed word.
    const size_t begin = str;
    while (str < buf.size() && buf[str] != '\0' && buf[str] != ',') {
      if (!internal::KernelIsAlpha(buf[str]) && buf[str] != '_') illegal = true;
      ++str;
    }
    const std::string_view flag = std::string_view(buf).substr(begin, str - begin);
    if (illegal) {
      warnings_.push_back(
          {word, absl::StrCat("isolcpus: Invalid flag ", Printable(flag), "; parameter ignored")});
      return absl::OkStatus();
    }
    warnings_.push_back({word, absl::StrCat("isolcpus: Skipped unknown flag ", Printable(flag))});
    if (boot && str < buf.size() && buf[str] == '\0') {
      // The kernel's `str++` steps over this parameter's terminating NUL.
      const std::string_view rest = CStringAt(buf, str + 1);
      warnings_.push_back(
          {word,
           absl::StrCat(
               "isolcpus: kernel quirk: the unknown flag \"", Printable(flag),
               "\" ends the parameter, and housekeeping_isolcpus_setup() steps one character past "
               "it (str++ over the NUL that next_arg() wrote in place of the separator), so it "
               "goes "
               "on reading the next word of the command line as more isolcpus= flags and cpulist: "
               "\"",
               Printable(rest), "\"",
               str + 1 > cmdline_length_ ? " (past the end of the command line, modelled as NUL)"
                                         : "")});
    }
    ++str;
  }
  if (flags == 0) flags = kDomainFlag;  // bare list = domain
  return ApplySetting(param, CStringAt(buf, str), flags, /*lenient=*/boot);
}

absl::Status IsolationConfig::ApplyIsolcpus(std::string_view value) {
  std::string buf(value);
  buf.append(2, '\0');
  return IsolcpusSetup(absl::StrCat("isolcpus=", std::string(value)), buf, 0, /*boot=*/false);
}

// housekeeping_nohz_full_setup()
absl::Status IsolationConfig::ApplyNohzFull(std::string_view value) {
  return ApplySetting(absl::StrCat("nohz_full=", std::string(value)), value, kKernelNoiseFlags,
                      /*lenient=*/false);
}

// start_kernel()'s parse_args("Booting kernel", static_command_line, ...,
// unknown_bootoption) for the two parameters modelled: the command line is
// copied into a NUL-terminated buffer that next_arg() cuts in place, the way
// the kernel does, so that the isolcpus= quirk reads what the kernel reads.
absl::StatusOr<IsolationConfig> IsolationConfig::FromBootParams(const Topology& topology,
                                                                std::string_view cmdline,
                                                                BootOptions options) {
  IsolationConfig config(topology);
  config.no_hz_full_ = options.no_hz_full;
  const size_t nul = cmdline.find('\0');
  if (nul != std::string_view::npos) {
    config.warnings_.push_back(
        {"command line", absl::StrFormat("the command line is a C string: it ends at the NUL "
                                         "byte at position %d, the rest is ignored",
                                         nul)});
    cmdline = cmdline.substr(0, nul);
  }
  std::string buf(cmdline);
  config.cmdline_length_ = buf.size();
  buf.append(2, '\0');  // the terminator, and one byte past it for the quirk
  auto skip_spaces = [&](size_t p) {
    while (p < buf.size() && buf[p] != '\0' && internal::KernelIsSpace(buf[p])) ++p;
    return p;
  };
  size_t args = skip_spaces(0);
  while (buf[args] != '\0') {
    // next_arg()
    size_t a = args;
    bool in_quote = false, quoted = false;
    if (buf[a] == '"') {
      ++a;
      in_quote = quoted = true;
    }
    size_t i = 0, equals = 0;
    for (; buf[a + i] != '\0'; ++i) {
      if (internal::KernelIsSpace(buf[a + i]) && !in_quote) break;
      if (equals == 0 && buf[a + i] == '=') equals = i;
      if (buf[a + i] == '"') in_quote = !in_quote;
    }
    const size_t param = a;
    size_t val = std::string::npos;
    if (equals != 0) {
      buf[a + equals] = '\0';
      val = a + equals + 1;
      if (buf[val] == '"') {  // don't include quotes in the value
        ++val;
        if (buf[a + i - 1] == '"') buf[a + i - 1] = '\0';
      }
    }
    if (quoted && buf[a + i - 1] == '"') buf[a + i - 1] = '\0';
    size_t next = a + i;
    if (buf[a + i] != '\0') {
      buf[a + i] = '\0';
      next = a + i + 1;
    }
    args = skip_spaces(next);
    // parse_args(): "--" ends the kernel's parameters.
    if (val == std::string::npos && CStringAt(buf, param) == "--") break;
    // unknown_bootoption() -> repair_env_string(): "param=val" again.
    if (val != std::string::npos) {
      const size_t len = std::strlen(buf.data() + param);
      if (val == param + len + 1) {
        buf[val - 1] = '=';
      } else if (val == param + len + 2) {
        buf[val - 2] = '=';
        std::memmove(buf.data() + val - 1, buf.data() + val, std::strlen(buf.data() + val) + 1);
      }
    }
    // obsolete_checksetup(): __setup("isolcpus=") and __setup("nohz_full=").
    absl::Status s;
    const std::string word(CStringAt(buf, param));
    if (ParamEqN(buf, param, "isolcpus=")) {
      s = config.IsolcpusSetup(word, buf, param + 9, /*boot=*/true);
    } else if (ParamEqN(buf, param, "nohz_full=")) {
      s = config.ApplySetting(word, CStringAt(buf, param + 10), kKernelNoiseFlags,
                              /*lenient=*/true);
    }
    if (!s.ok()) return s;
  }
  return config;
}

absl::StatusOr<IsolationConfig> IsolationConfig::FromFlags(const Topology& topology,
                                                           std::string_view isolcpus,
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
  const HostIsolationInputs in = ReadHostIsolationInputs();
  std::string cmdline;
  if (in.cmdline.ok()) {
    cmdline = HostCommandLine(*in.cmdline);
  }
  BootOptions options;
  options.no_hz_full = !absl::IsNotFound(in.nohz_full.status());
  absl::StatusOr<IsolationConfig> config = FromBootParams(topology, cmdline, options);
  if (!config.ok()) return config;
  if (!in.cmdline.ok())
    config->warnings_.push_back({"/proc/cmdline", std::string(in.cmdline.status().message())});
  // What the running kernel reports, against the same rules.
  for (const HostCheck& c : CompareIsolationWithHost(*config, in)) {
    if (c.verdict == HostVerdict::kDisagree) config->warnings_.push_back({c.name, c.detail});
  }
  return config;
}

absl::Status IsolationConfig::SetCpusetIsolated(const CpuMask& isolated) {
  if (isolated.nbits() != num_cpus_) {
    return absl::InvalidArgumentError(
        absl::StrFormat("cpuset isolated mask \"%s\" has %d bits, the topology %d cpus",
                        isolated.ToString(), isolated.nbits(), num_cpus_));
  }
  cpuset_isolated_ = isolated;
  return absl::OkStatus();
}

CpuMask IsolationConfig::DomainIsolated() const { return isolcpus_domain_ | cpuset_isolated_; }

// cpu_is_isolated()
bool IsolationConfig::CpuIsIsolated(int cpu) const {
  if (cpu < 0 || cpu >= num_cpus_) return false;
  return !IsHousekeeping(cpu, HousekeepingType::kDomain) ||
         !IsHousekeeping(cpu, HousekeepingType::kTick) || cpuset_isolated_.Test(cpu);
}

void IsolationConfig::Recompute() {
  const CpuMask full = CpuMask::Full(num_cpus_);
  isolcpus_domain_ = (configured_flags_ & kDomainFlag)
                         ? CpuMask::AndNot(full, housekeeping(HousekeepingType::kDomain))
                         : CpuMask(num_cpus_);
  nohz_full_ = (configured_flags_ & kKernelNoiseFlags)
                   ? CpuMask::AndNot(full, housekeeping(HousekeepingType::kTick))
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
