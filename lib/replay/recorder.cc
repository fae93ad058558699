// SPDX-License-Identifier: GPL-2.0-or-later
// RecordHost (recorder.h): a libtracefs instance of our own, one drain thread
// per CPU into temporary files, then the trace.dat (trace_dat_writer.h).

#include "isolation/replay/recorder.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <zlib.h>

#include "absl/cleanup/cleanup.h"
#include "isolation/core/host.h"
#include "isolation/core/topology.h"
#include "nlohmann/json.hpp"
#include "replay/reader_internal.h"
#include "replay/trace_dat_writer.h"

#include "replay/trace_libs.h"

namespace isolation::replay {

std::vector<std::string> DefaultRecordEvents() {
  return {"sched:sched_switch",
          "sched:sched_waking",
          "sched:sched_wakeup",
          "sched:sched_wakeup_new",
          "sched:sched_migrate_task",
          "sched:sched_process_fork",
          "sched:sched_process_exec",
          "sched:sched_process_exit",
          "task:task_newtask",
          "rseq:rseq_update",
          "timer_migration:*",
          "timer:timer_start",
          "timer:timer_expire_entry",
          "timer:timer_base_idle",
          "timer:tick_stop",
          "timer:hrtimer_expire_entry",
          "workqueue:workqueue_execute_start",
          "workqueue:workqueue_queue_work"};
}

namespace {

using internal::Cat;

std::atomic<int> g_signal{0};
std::atomic<pid_t> g_child{0};

extern "C" void OnSignal(int sig) {
  g_signal.store(sig);
  const pid_t child = g_child.load();
  if (child > 0) kill(-child, sig);  // the command's process group
}

std::string ReadSmallFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  std::stringstream ss;
  ss << in.rdbuf();
  std::string s = ss.str();
  return s.size() > (1u << 24) ? s.substr(0, 1u << 24) : s;
}

std::string Trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ' || s.back() == '\0')) s.pop_back();
  return s;
}

// CONFIG_HZ from the kernel's config (/proc/config.gz, else
// /boot/config-<release>); 0 when neither can be read.
int ConfigHz(const std::string& release) {
  std::string config;
  if (gzFile gz = gzopen("/proc/config.gz", "rb"); gz != nullptr) {
    char buf[1 << 16];
    int n;
    while ((n = gzread(gz, buf, sizeof buf)) > 0 && config.size() < (1u << 24))
      config.append(buf, static_cast<size_t>(n));
    gzclose(gz);
  }
  if (config.empty()) config = ReadSmallFile(Cat("/boot/config-", release));
  const size_t at = config.find("\nCONFIG_HZ=");
  if (at == std::string::npos) return 0;
  return std::atoi(config.c_str() + at + 11);
}

// The per-CPU reader of one CPU: drains trace_pipe_raw pages into a file.
struct CpuDrain {
  int cpu = 0;
  tracefs_cpu* tcpu = nullptr;
  std::string path;
  FILE* file = nullptr;
  int64_t bytes = 0;
  std::string error;
};

// Owns everything the recording changes; the destructor restores it.
class Session {
 public:
  ~Session() {
    for (CpuDrain& d : drains_) {
      if (d.tcpu != nullptr) tracefs_cpu_close(d.tcpu);
      if (d.file != nullptr) std::fclose(d.file);
      if (!d.path.empty()) std::remove(d.path.c_str());
    }
    if (instance_ != nullptr) {
      tracefs_trace_off(instance_);
      tracefs_instance_destroy(instance_);
      tracefs_instance_free(instance_);
    }
    if (mounted_) umount(tracing_dir_.c_str());
    if (handlers_installed_) {
      sigaction(SIGINT, &old_int_, nullptr);
      sigaction(SIGTERM, &old_term_, nullptr);
    }
  }

  absl::StatusOr<RecordSummary> Run(const RecordOptions& o);

 private:
  absl::Status Prepare(const RecordOptions& o);
  void RemoveStaleInstances();
  absl::Status EnableEvents(const RecordOptions& o, std::vector<std::string>& enabled_systems,
                            std::vector<std::string>& missing);
  std::string MarkerJson(const RecordOptions& o, int cpus) const;

  std::string tracing_dir_;
  bool mounted_ = false;
  tracefs_instance* instance_ = nullptr;
  std::vector<CpuDrain> drains_;
  bool handlers_installed_ = false;
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
};

absl::Status CheckOptions(const RecordOptions& o) {
  if (o.output_path.empty())
    return absl::InvalidArgumentError("isolab record: no output file (-o FILE)");
  if (o.command.empty() && o.duration <= 0) {
    return absl::InvalidArgumentError(Cat("isolab record: a duration of ", o.duration,
                                          " ns and no command: give --duration or -- COMMAND"));
  }
  if (o.duration > o.max_duration) {
    return absl::InvalidArgumentError(Cat("isolab record: duration ", o.duration,
                                          " ns is past the bound of ", o.max_duration, " ns"));
  }
  if (o.buffer_kb_per_cpu < 64 || o.buffer_kb_per_cpu > (1 << 20)) {
    return absl::InvalidArgumentError(
        Cat("isolab record: buffer_kb_per_cpu ", o.buffer_kb_per_cpu, " outside [64, 1048576]"));
  }
  bool has_switch = false;
  for (const std::string& e : o.events) {
    if (e.find(':') == std::string::npos || e.find('/') != std::string::npos ||
        e.find("..") != std::string::npos) {
      return absl::InvalidArgumentError(
          Cat("isolab record: event '", internal::Escape(e), "' is not system:event"));
    }
    has_switch |= e == "sched:sched_switch" || e == "sched:*";
  }
  if (!has_switch)
    return absl::InvalidArgumentError("isolab record: the events must include sched:sched_switch");
  // The output must be writable before anything is recorded.
  const std::string probe = Cat(o.output_path, ".isolab-probe");
  FILE* f = std::fopen(probe.c_str(), "wb");
  if (f == nullptr) {
    return absl::InvalidArgumentError(
        Cat("isolab record: cannot write ", o.output_path, ": ", std::strerror(errno)));
  }
  std::fclose(f);
  std::remove(probe.c_str());
  return absl::OkStatus();
}

void Session::RemoveStaleInstances() {
  const std::string dir = Cat(tracing_dir_, "/instances");
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return;
  while (dirent* ent = readdir(d)) {
    const std::string name = ent->d_name;
    static constexpr std::string_view kPrefix = "isolab-record-";
    if (!std::string_view(name).starts_with(kPrefix)) continue;
    const int pid = std::atoi(name.c_str() + kPrefix.size());
    if (pid > 0 && kill(pid, 0) != 0 && errno == ESRCH) rmdir(Cat(dir, "/", name).c_str());
  }
  closedir(d);
}

absl::Status Session::Prepare(const RecordOptions& o) {
  if (geteuid() != 0) {
    return absl::PermissionDeniedError(
        "isolab record needs root (CAP_SYS_ADMIN) to create a tracefs instance and read its ring "
        "buffers");
  }
  const char* dir = nullptr;
  const bool was_mounted = tracefs_tracing_dir_is_mounted(false, &dir) == 1;
  if (!was_mounted) {
    if (tracefs_tracing_dir_is_mounted(true, &dir) < 0 || dir == nullptr) {
      return absl::PermissionDeniedError(
          "isolab record: tracefs is not mounted and cannot be mounted (mount -t tracefs nodev "
          "/sys/kernel/tracing)");
    }
    mounted_ = true;
  }
  tracing_dir_ = dir != nullptr ? dir : tracefs_tracing_dir();
  RemoveStaleInstances();
  const std::string name = Cat("isolab-record-", getpid());
  instance_ = tracefs_instance_create(name.c_str());
  if (instance_ == nullptr) {
    return absl::PermissionDeniedError(Cat("isolab record: cannot create the tracefs instance ",
                                           tracing_dir_, "/instances/", name, ": ",
                                           std::strerror(errno)));
  }
  tracefs_trace_off(instance_);
  if (tracefs_instance_file_write(instance_, "buffer_size_kb", Cat(o.buffer_kb_per_cpu).c_str()) <
      0) {
    return absl::InternalError(Cat("isolab record: cannot set buffer_size_kb of ", name));
  }
  // Sub-buffers of one page: the file's page size.
  (void)tracefs_instance_file_write(instance_, "buffer_subbuf_size_kb",
                                    Cat(getpagesize() / 1024).c_str());
  if (tracefs_instance_file_write(instance_, "trace_clock", o.clock.c_str()) < 0) {
    return absl::InvalidArgumentError(
        Cat("isolab record: trace clock '", internal::Escape(o.clock), "' refused"));
  }
  return absl::OkStatus();
}

absl::Status Session::EnableEvents(const RecordOptions& o, std::vector<std::string>& systems,
                                   std::vector<std::string>& missing) {
  int enabled = 0;
  for (const std::string& e : o.events) {
    const size_t colon = e.find(':');
    const std::string system = e.substr(0, colon);
    const std::string event = e.substr(colon + 1);
    if (tracefs_event_enable(instance_, system.c_str(), event == "*" ? nullptr : event.c_str()) <
        0) {
      missing.push_back(e);
      continue;
    }
    ++enabled;
    if (std::find(systems.begin(), systems.end(), system) == systems.end())
      systems.push_back(system);
  }
  if (enabled == 0)
    return absl::NotFoundError("isolab record: none of the requested events exist on this kernel");
  if (std::find(missing.begin(), missing.end(), "sched:sched_switch") != missing.end()) {
    return absl::NotFoundError("isolab record: sched:sched_switch cannot be enabled");
  }
  return absl::OkStatus();
}

std::string Session::MarkerJson(const RecordOptions& o, int cpus) const {
  utsname u{};
  uname(&u);
  nlohmann::json j;
  j["version"] = 1;
  j["recorder"] = "isolab record";
  j["release"] = u.release;
  j["cpus"] = cpus;
  if (const int hz = ConfigHz(u.release); hz > 0) j["hz"] = hz;
  j["clock"] = o.clock;
  j["isolcpus"] = Trim(ReadSmallFile("/sys/devices/system/cpu/isolated"));
  std::string nohz = Trim(ReadSmallFile("/sys/devices/system/cpu/nohz_full"));
  if (nohz == "(null)") nohz.clear();
  j["nohz_full"] = nohz;
  j["cmdline"] = Trim(ReadSmallFile("/proc/cmdline"));
  j["command"] = o.command;
  absl::StatusOr<Topology> topo = Topology::FromHost();
  if (topo.ok() && topo->num_cpus() == cpus) {
    std::vector<int> core, llc, node, pkg;
    for (int c = 0; c < cpus; ++c) {
      core.push_back(topo->core_of(c));
      llc.push_back(topo->llc_of(c));
      node.push_back(topo->node_of(c));
      pkg.push_back(topo->package_of(c));
    }
    j["core_of"] = core;
    j["llc_of"] = llc;
    j["node_of"] = node;
    j["package_of"] = pkg;
  }
  return j.dump();
}

absl::StatusOr<RecordSummary> Session::Run(const RecordOptions& o) {
  if (absl::Status s = CheckOptions(o); !s.ok()) return s;
  if (absl::Status s = Prepare(o); !s.ok()) return s;
  RecordSummary summary;
  std::vector<std::string> systems;
  if (absl::Status s = EnableEvents(o, systems, summary.events_missing); !s.ok()) return s;
  const int cpus = static_cast<int>(sysconf(_SC_NPROCESSORS_CONF));
  summary.cpus = cpus;
  utsname u{};
  uname(&u);
  summary.kernel_release = u.release;
  // Per-CPU drains.
  drains_.resize(static_cast<size_t>(cpus));
  for (int c = 0; c < cpus; ++c) {
    CpuDrain& d = drains_[static_cast<size_t>(c)];
    d.cpu = c;
    d.path = Cat(o.output_path, ".cpu", c, ".tmp");
    d.file = std::fopen(d.path.c_str(), "wb");
    if (d.file == nullptr)
      return absl::InternalError(
          Cat("isolab record: cannot write ", d.path, ": ", std::strerror(errno)));
    d.tcpu = tracefs_cpu_open(instance_, c, /*nonblock=*/true);
    if (d.tcpu == nullptr) {
      return absl::InternalError(
          Cat("isolab record: cannot open CPU ", c, "'s trace_pipe_raw: ", std::strerror(errno)));
    }
  }
  const int page = getpagesize();
  std::atomic<bool> stop{false};
  std::atomic<int64_t> total{0};
  std::vector<std::thread> threads;
  for (CpuDrain& d : drains_) {
    threads.emplace_back([&d, &stop, &total, page] {
      std::vector<char> buf(static_cast<size_t>(std::max(page, tracefs_cpu_read_size(d.tcpu))));
      auto put = [&](int n) {
        if (n <= 0) return;
        // Whole pages: a sub-buffer's header says how much of it holds data.
        const size_t len = static_cast<size_t>(n) < static_cast<size_t>(page)
                               ? static_cast<size_t>(page)
                               : static_cast<size_t>(n);
        if (static_cast<size_t>(n) < len)
          std::memset(buf.data() + n, 0, len - static_cast<size_t>(n));
        if (std::fwrite(buf.data(), 1, len, d.file) != len) d.error = std::strerror(errno);
        d.bytes += static_cast<int64_t>(len);
        total += static_cast<int64_t>(len);
      };
      while (!stop.load()) {
        const int n = tracefs_cpu_read(d.tcpu, buf.data(), /*nonblock=*/true);
        if (n > 0) {
          put(n);
        } else {
          std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
      }
      for (int i = 0; i < 1 << 20; ++i) {  // what is left after tracing stopped
        const int n = tracefs_cpu_flush(d.tcpu, buf.data());
        if (n <= 0) break;
        put(n);
      }
    });
  }
  auto stop_threads = absl::MakeCleanup([&] {
    stop.store(true);
    for (std::thread& t : threads) t.join();
  });
  // Signals: forwarded to the command, end the recording.
  g_signal.store(0);
  g_child.store(0);
  struct sigaction sa {};
  sa.sa_handler = OnSignal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, &old_int_);
  sigaction(SIGTERM, &sa, &old_term_);
  handlers_installed_ = true;

  tracefs_trace_on(instance_);
  const std::string marker = MarkerJson(o, cpus);
  constexpr size_t kChunk = 3000;
  if (marker.size() + 17 <= kChunk) {
    tracefs_instance_file_write(instance_, "trace_marker",
                                Cat("isolab-recording ", marker, "\n").c_str());
  } else {
    const size_t n = (marker.size() + kChunk - 1) / kChunk;
    for (size_t k = 0; k < n; ++k) {
      tracefs_instance_file_write(
          instance_, "trace_marker",
          Cat("isolab-recording[", k + 1, "/", n, "] ", marker.substr(k * kChunk, kChunk), "\n")
              .c_str());
    }
  }
  const auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() -
                                                                start)
        .count();
  };
  if (!o.command.empty()) {
    const pid_t child = fork();
    if (child < 0) return absl::InternalError(Cat("isolab record: fork: ", std::strerror(errno)));
    if (child == 0) {
      setpgid(0, 0);
      signal(SIGINT, SIG_DFL);
      signal(SIGTERM, SIG_DFL);
      std::vector<char*> argv;
      for (const std::string& a : o.command) argv.push_back(const_cast<char*>(a.c_str()));
      argv.push_back(nullptr);
      execvp(argv[0], argv.data());
      std::fprintf(stderr, "isolab record: cannot run '%s': %s\n", argv[0], std::strerror(errno));
      _exit(127);
    }
    setpgid(child, child);
    g_child.store(child);
    int status = 0;
    while (true) {
      const pid_t r = waitpid(child, &status, WNOHANG);
      if (r == child) break;
      if (r < 0 && errno != EINTR) break;
      if (elapsed() > o.max_duration || total.load() > o.max_bytes) {
        summary.stopped_at_bound = true;
        kill(-child, SIGTERM);
        waitpid(child, &status, 0);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    g_child.store(0);
    summary.command_exit_status = WIFEXITED(status)     ? WEXITSTATUS(status)
                                  : WIFSIGNALED(status) ? 128 + WTERMSIG(status)
                                                        : -1;
  } else {
    while (elapsed() < o.duration && g_signal.load() == 0) {
      if (total.load() > o.max_bytes) {
        summary.stopped_at_bound = true;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
  summary.interrupted = g_signal.load() != 0;
  summary.duration = elapsed();
  tracefs_trace_off(instance_);
  std::move(stop_threads).Invoke();
  for (CpuDrain& d : drains_) {
    if (!d.error.empty())
      return absl::InternalError(Cat("isolab record: writing ", d.path, ": ", d.error));
    std::fclose(d.file);
    d.file = nullptr;
    // Overruns: events the ring buffer dropped.
    char* stats =
        tracefs_instance_file_read(instance_, Cat("per_cpu/cpu", d.cpu, "/stats").c_str(), nullptr);
    if (stats != nullptr) {
      const char* at = std::strstr(stats, "overrun:");
      if (at != nullptr) summary.events_lost += std::atoll(at + 8);
      std::free(stats);
    }
  }
  // The file.
  DatWriteInput in;
  in.tracing_dir = tracing_dir_;
  char* inst_dir = tracefs_instance_get_dir(instance_);
  in.instance_dir = inst_dir != nullptr ? inst_dir : "";
  std::free(inst_dir);
  in.systems = systems;
  in.page_size = page;
  in.uname = Cat(u.sysname, " ", u.nodename, " ", u.release, " ", u.version, " ", u.machine);
  char* clock = tracefs_instance_file_read(instance_, "trace_clock", nullptr);
  in.trace_clock = clock != nullptr ? Trim(clock) : o.clock;
  std::free(clock);
  for (const CpuDrain& d : drains_) in.cpu_files.push_back(d.path);
  absl::StatusOr<int64_t> written = WriteTraceDat(o.output_path, in);
  if (!written.ok()) return written.status();
  summary.bytes_written = *written;
  return summary;
}

}  // namespace

absl::StatusOr<RecordSummary> RecordHost(const RecordOptions& options) {
  Session session;
  return session.Run(options);
}

}  // namespace isolation::replay
