// SPDX-License-Identifier: GPL-2.0-or-later
#include "experiments/look_options.h"

#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

#ifndef ISOLATION_PLOT_SCRIPT
#define ISOLATION_PLOT_SCRIPT ""
#endif
#ifndef ISOLATION_PLOT_SCRIPT_INSTALLED
#define ISOLATION_PLOT_SCRIPT_INSTALLED ""
#endif

extern char** environ;

namespace isolation::experiments {
namespace {

bool Executable(const std::string& path) {
  return !path.empty() && access(path.c_str(), X_OK) == 0;
}
bool Readable(const std::string& path) { return !path.empty() && access(path.c_str(), R_OK) == 0; }

// The plot script: $ISOLAB_PLOT, the installed copy next to this binary's
// prefix, or the source tree's tools/plot.
std::string PlotScript() {
  if (const char* env = std::getenv("ISOLAB_PLOT"); env != nullptr && *env != '\0') return env;
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const std::filesystem::path installed =
        self.parent_path() / ".." / "libexec" / "isolation" / "plot";
    if (Readable(installed.string())) return installed.string();
  }
  if (Readable(ISOLATION_PLOT_SCRIPT_INSTALLED)) return ISOLATION_PLOT_SCRIPT_INSTALLED;
  if (Readable(ISOLATION_PLOT_SCRIPT)) return ISOLATION_PLOT_SCRIPT;
  return "";
}

// Debian's interpreter first: python3-matplotlib is installed for it, and a
// python3 earlier on PATH (pyenv, a venv) may not have it.
std::string Python() {
  if (const char* env = std::getenv("ISOLAB_PYTHON"); env != nullptr && *env != '\0') return env;
  if (Executable("/usr/bin/python3")) return "/usr/bin/python3";
  return "python3";
}

constexpr char kInstallHint[] =
    "install python3-matplotlib (apt-get install python3-matplotlib, or tools/bootstrap.sh "
    "reproduce "
    "--plot=DIR)";

}  // namespace

absl::StatusOr<std::unique_ptr<TraceFile>> OpenTrace(const TraceOptions& options) {
  if (options.path.empty()) return std::unique_ptr<TraceFile>();
  TraceFileOptions fo;
  fo.max_events = options.max_events;
  fo.cpus = options.cpus;
  absl::StatusOr<std::unique_ptr<TraceFile>> f = TraceFile::Create(options.path, std::move(fo));
  if (!f.ok())
    return absl::InvalidArgumentError(
        absl::StrCat("--trace=", options.path, ": ", f.status().message()));
  return f;
}

absl::Status CheckTraceCpus(const TraceFile* file, const Topology& topology) {
  if (file == nullptr || file->cpu_filter().nbits() == 0) return absl::OkStatus();
  const CpuMask& m = file->cpu_filter();
  int last = -1;
  for (int cpu : m) last = cpu;
  if (last >= topology.num_cpus()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--trace_cpus='", m.ToString(), "': CPU ", last, " is not one of the ",
                     topology.num_cpus(), " CPUs of the machine (", topology.description(), ")"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<TraceRun>> StartTraceRun(TraceFile* file, std::string name,
                                                        const Topology& topology,
                                                        const IsolationConfig& isolation) {
  if (file == nullptr) return std::unique_ptr<TraceRun>();
  TraceRunSpec spec;
  spec.name = std::move(name);
  spec.num_cpus = topology.num_cpus();
  if (isolation.num_cpus() == topology.num_cpus()) spec.cpu_roles = TraceCpuRoles(isolation);
  return file->StartRun(std::move(spec));
}

absl::Status DrawFigures(const PlotOptions& options, const std::string& stem,
                         const nlohmann::json& json) {
  if (options.dir.empty()) return absl::OkStatus();
  const std::string json_path = (std::filesystem::path(options.dir) / (stem + ".json")).string();
  {
    std::ofstream out(json_path, std::ios::out | std::ios::trunc);
    out << json.dump(2) << '\n';
    if (!out)
      return absl::InvalidArgumentError(
          absl::StrCat("--plot=", options.dir, ": cannot write ", json_path));
  }
  const std::string script = PlotScript();
  if (script.empty()) {
    return absl::FailedPreconditionError(
        "--plot: the plot script (tools/plot) was not found; set ISOLAB_PLOT to its path");
  }
  const std::string python = Python();
  const std::string formats = absl::StrJoin(options.formats, ",");
  std::vector<std::string> args = {python,      script,      "figures", "--out",
                                   options.dir, "--formats", formats,   json_path};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  // stdout of the script goes to our stderr: isolab's stdout stays the report.
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, STDERR_FILENO, STDOUT_FILENO);
  const int rc = posix_spawnp(&pid, python.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("--plot: cannot run ", python, " (", std::strerror(rc), "): ", kInstallHint));
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR)
      return absl::InternalError(absl::StrCat("--plot: waitpid: ", std::strerror(errno)));
  }
  if (!WIFEXITED(status))
    return absl::InternalError(absl::StrCat("--plot: ", script, " did not exit normally"));
  switch (WEXITSTATUS(status)) {
    case 0:
      return absl::OkStatus();
    case 2:
      return absl::InvalidArgumentError(absl::StrCat("--plot: ", script, " rejected ", json_path));
    case 3:
      return absl::FailedPreconditionError(
          absl::StrCat("--plot: matplotlib is missing for ", python, ": ", kInstallHint));
    default:
      return absl::InternalError(
          absl::StrCat("--plot: ", script, " failed with exit status ", WEXITSTATUS(status)));
  }
}

nlohmann::json NoiseHistogramJson(const std::vector<std::pair<int, NoiseResult>>& per_cpu,
                                  bool no_zero_lines) {
  nlohmann::json j;
  j["format"] =
      "rtla osnoise hist: index = bucket start (us), one column per CPU, then "
      "over/count/min/avg/max";
  j["unit"] = "us";
  j["bucket_size"] = per_cpu.empty() ? 1 : per_cpu[0].second.bucket_size_us;
  j["entries"] = per_cpu.empty() ? 0 : per_cpu[0].second.entries;
  j["cpus"] = nlohmann::json::array();
  for (const auto& [cpu, r] : per_cpu) {
    nlohmann::json c;
    c["cpu"] = cpu;
    c["count"] = r.samples;
    c["min"] = r.min_us;
    c["avg"] = r.samples > 0 ? static_cast<double>(r.sum_us) / static_cast<double>(r.samples) : 0.0;
    c["max"] = r.max_us;
    c["over"] = r.over();
    nlohmann::json buckets = nlohmann::json::array();
    for (int b = 0; b < r.entries && b < static_cast<int>(r.histogram_us.size()); ++b) {
      const int64_t n = r.histogram_us[static_cast<size_t>(b)];
      if (n == 0 && no_zero_lines) continue;
      buckets.push_back({static_cast<int64_t>(b) * r.bucket_size_us, n});
    }
    c["buckets"] = std::move(buckets);
    j["cpus"].push_back(std::move(c));
  }
  return j;
}

}  // namespace isolation::experiments
