// SPDX-License-Identifier: GPL-2.0-or-later
// Reading the running kernel's files, and the isolation-mask cross-check.

#include "isolation/core/host.h"

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "isolation/core/cpumask.h"
#include "isolation/core/topology.h"

namespace isolation {
namespace {

absl::Status ErrnoStatus(int err, std::string_view what, const std::string& path) {
  const std::string message = absl::StrCat(std::string(what), " ", path, ": ", std::strerror(err));
  switch (err) {
    case ENOENT:
    case ENOTDIR:
      return absl::NotFoundError(message);
    case EACCES:
    case EPERM:
      return absl::PermissionDeniedError(message);
    case EINVAL:
      return absl::InvalidArgumentError(message);
    default:
      return absl::UnavailableError(message);
  }
}

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

constexpr const char* kCmdline = "/proc/cmdline";
constexpr const char* kPossible = "/sys/devices/system/cpu/possible";
constexpr const char* kIsolated = "/sys/devices/system/cpu/isolated";
constexpr const char* kNohzFull = "/sys/devices/system/cpu/nohz_full";

// A sysfs cpulist; "(null)" (an unset off-stack cpumask printed with %*pbl)
// and "" are the empty mask.
absl::StatusOr<CpuMask> ParseSysfsList(const std::string& text, int nbits, const char* path) {
  if (text == "(null)\n" || text == "(null)") return CpuMask(nbits);
  absl::StatusOr<CpuMask> mask = CpuMask::Parse(text, nbits);
  if (!mask.ok())
    return absl::Status(mask.status().code(), absl::StrCat(path, ": ", mask.status().message()));
  return mask;
}

std::string Shown(const CpuMask& m) { return m.Empty() ? "(none)" : m.ToString(); }

}  // namespace

absl::StatusOr<std::string> ReadHostFile(const std::string& path) {
  Fd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) return ErrnoStatus(errno, "cannot open", path);
  std::string out;
  char buf[4096];
  while (true) {
    const ssize_t n = read(fd.get(), buf, sizeof(buf));
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus(errno, "cannot read", path);
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
    if (out.size() > (size_t{64} << 20))
      return absl::ResourceExhaustedError(absl::StrCat(path, " is over 64 MiB"));
  }
  return out;
}

// devkmsg_read(): one record per read(), "prio,seq,usec,flags[,...];text\n"
// followed by " KEY=value\n" dictionary lines; EAGAIN once drained (the fd
// is non-blocking), EPIPE when the reader fell behind a wrap of the buffer.
absl::StatusOr<std::vector<int>> UsableHostCpus(const std::string& isolated_path) {
  cpu_set_t mask;
  CPU_ZERO(&mask);
  if (sched_getaffinity(0, sizeof(mask), &mask) != 0) {
    return ErrnoStatus(errno, "sched_getaffinity", "this process");
  }
  std::vector<int> extra;  // isolated CPUs outside the inherited mask
  if (absl::StatusOr<std::string> text = ReadHostFile(isolated_path); text.ok()) {
    const int nbits = std::min(CPU_SETSIZE, kMaxCpus);
    if (absl::StatusOr<CpuMask> isolated = ParseSysfsList(*text, nbits, isolated_path.c_str());
        isolated.ok()) {
      for (int cpu = isolated->First(); cpu < isolated->nbits(); cpu = isolated->Next(cpu)) {
        if (!CPU_ISSET(static_cast<size_t>(cpu), &mask)) extra.push_back(cpu);
      }
    }
  }
  if (!extra.empty()) {
    // Probe on a throwaway thread so the caller's own affinity never changes.
    std::thread probe([&] {
      for (int cpu : extra) {
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(static_cast<size_t>(cpu), &one);
        if (pthread_setaffinity_np(pthread_self(), sizeof(one), &one) == 0)
          CPU_SET(static_cast<size_t>(cpu), &mask);
      }
    });
    probe.join();
  }
  std::vector<int> cpus;
  for (int i = 0; i < CPU_SETSIZE; ++i) {
    if (CPU_ISSET(static_cast<size_t>(i), &mask)) cpus.push_back(i);
  }
  if (cpus.empty())
    return absl::InternalError("UsableHostCpus: no host CPU this process may run on");
  return cpus;
}

absl::StatusOr<std::string> ReadKernelLog(const std::string& kmsg_path) {
  Fd fd(open(kmsg_path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
  if (fd.get() < 0) return ErrnoStatus(errno, "cannot open", kmsg_path);
  std::string out;
  std::vector<char> buf(16384);
  int records = 0;
  while (records < 1000000) {
    const ssize_t n = read(fd.get(), buf.data(), buf.size());
    if (n < 0) {
      if (errno == EINTR || errno == EPIPE) continue;
      if (errno == EAGAIN) break;
      return ErrnoStatus(errno, "cannot read", kmsg_path);
    }
    if (n == 0) break;  // a regular file (tests): the whole text at once
    std::string_view data(buf.data(), static_cast<size_t>(n));
    // A regular file may hold several records; /dev/kmsg gives one.
    while (!data.empty()) {
      const size_t eol = data.find('\n');
      const std::string_view line = data.substr(0, eol);
      data = eol == std::string_view::npos ? std::string_view() : data.substr(eol + 1);
      if (line.empty() || line.front() == ' ') continue;  // dictionary lines
      const size_t semi = line.find(';');
      if (semi == std::string_view::npos) continue;
      out.append(line.substr(semi + 1));
      out.push_back('\n');
      ++records;
    }
  }
  return out;
}

std::string HostCommandLine(std::string_view proc_cmdline) {
  if (!proc_cmdline.empty() && proc_cmdline.back() == '\n') proc_cmdline.remove_suffix(1);
  return std::string(proc_cmdline);
}

std::string_view HostVerdictName(HostVerdict verdict) {
  switch (verdict) {
    case HostVerdict::kAgree:
      return "agree";
    case HostVerdict::kDisagree:
      return "disagree";
    case HostVerdict::kNotAvailable:
      return "not available";
  }
  return "unknown";
}

HostIsolationInputs ReadHostIsolationInputs(const std::string& root) {
  return {ReadHostFile(root + kCmdline), ReadHostFile(root + kPossible),
          ReadHostFile(root + kIsolated), ReadHostFile(root + kNohzFull)};
}

std::vector<HostCheck> CompareIsolationWithHost(const IsolationConfig& model,
                                                const HostIsolationInputs& in) {
  const int n = model.num_cpus();
  std::vector<HostCheck> out;

  HostCheck isolated{absl::StrCat("isolation: isolcpus=domain vs ", kIsolated),
                     HostVerdict::kNotAvailable, Shown(model.isolcpus_domain()), "", ""};
  if (!in.isolated.ok()) {
    isolated.detail = std::string(in.isolated.status().message());
  } else if (absl::StatusOr<CpuMask> k = ParseSysfsList(*in.isolated, n, kIsolated); !k.ok()) {
    isolated.detail = std::string(k.status().message());
  } else {
    isolated.kernel = Shown(*k);
    isolated.verdict =
        k->Equal(model.isolcpus_domain()) ? HostVerdict::kAgree : HostVerdict::kDisagree;
    isolated.detail =
        "possible CPUs outside housekeeping_cpumask(HK_TYPE_DOMAIN), from the command line";
  }
  out.push_back(std::move(isolated));

  HostCheck nohz{absl::StrCat("isolation: nohz_full vs ", kNohzFull), HostVerdict::kNotAvailable,
                 Shown(model.nohz_full()), "", ""};
  if (!in.nohz_full.ok()) {
    nohz.detail =
        absl::IsNotFound(in.nohz_full.status())
            ? absl::StrCat(kNohzFull, " is absent: the kernel is built without CONFIG_NO_HZ_FULL")
            : std::string(in.nohz_full.status().message());
  } else if (absl::StatusOr<CpuMask> k = ParseSysfsList(*in.nohz_full, n, kNohzFull); !k.ok()) {
    nohz.detail = std::string(k.status().message());
  } else {
    nohz.kernel = Shown(*k);
    CpuMask without_boot = model.nohz_full();
    if (n > 0) without_boot.Clear(0);
    if (k->Equal(model.nohz_full())) {
      nohz.verdict = HostVerdict::kAgree;
      nohz.detail = "tick_nohz_full_mask, from the command line";
    } else if (k->Equal(without_boot)) {
      nohz.verdict = HostVerdict::kAgree;
      nohz.detail =
          "tick_nohz_full_mask is the model's minus boot CPU 0, which tick_nohz_init() clears for "
          "timekeeping under CONFIG_PM_SLEEP_SMP";
    } else {
      nohz.verdict = HostVerdict::kDisagree;
      nohz.detail = "tick_nohz_full_mask differs from the command line's nohz_full set";
    }
  }
  out.push_back(std::move(nohz));
  return out;
}

std::vector<HostCheck> CheckIsolationAgainstHost(const HostIsolationInputs& in) {
  auto unavailable = [&](const std::string& why) {
    std::vector<HostCheck> out;
    for (const char* file : {kIsolated, kNohzFull}) {
      out.push_back(
          {absl::StrCat("isolation: ", file == kIsolated ? "isolcpus=domain" : "nohz_full", " vs ",
                        file),
           HostVerdict::kNotAvailable, "", "", why});
    }
    return out;
  };
  if (!in.possible.ok()) return unavailable(std::string(in.possible.status().message()));
  absl::StatusOr<CpuMask> possible = CpuMask::Parse(*in.possible, kMaxCpus);
  if (!possible.ok() || possible->Empty()) {
    return unavailable(absl::StrCat(kPossible, ": cannot parse \"", *in.possible, "\""));
  }
  int last = 0;
  for (int cpu : *possible) last = cpu;
  const int nr_cpu_ids = last + 1;
  if (!in.cmdline.ok()) return unavailable(std::string(in.cmdline.status().message()));
  // The isolation rules need only the CPU count (and the present mask, taken
  // to be every possible CPU).
  std::vector<int> zeros(static_cast<size_t>(nr_cpu_ids), 0), own(static_cast<size_t>(nr_cpu_ids));
  for (int c = 0; c < nr_cpu_ids; ++c) own[static_cast<size_t>(c)] = c;
  absl::StatusOr<Topology> topo = Topology::FromIds(own, zeros, zeros, zeros, "host possible cpus");
  if (!topo.ok()) return unavailable(std::string(topo.status().message()));
  IsolationConfig::BootOptions options;
  options.no_hz_full = !absl::IsNotFound(in.nohz_full.status());
  absl::StatusOr<IsolationConfig> model =
      IsolationConfig::FromBootParams(*topo, HostCommandLine(*in.cmdline), options);
  if (!model.ok()) return unavailable(std::string(model.status().message()));
  std::vector<HostCheck> out = CompareIsolationWithHost(*model, in);
  if (!model->warnings().empty()) {
    std::vector<std::string> w;
    for (const IsolationWarning& x : model->warnings())
      w.push_back(absl::StrCat(x.parameter, ": ", x.message));
    for (HostCheck& c : out)
      absl::StrAppend(&c.detail, "; model warnings: ", absl::StrJoin(w, " | "));
  }
  return out;
}

}  // namespace isolation
