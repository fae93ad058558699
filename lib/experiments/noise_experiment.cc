// SPDX-License-Identifier: GPL-2.0-or-later
// `isolab noise` (noise_experiment.h): oslat and the noise meter, round by
// round on one host CPU.

#include "experiments/noise_experiment.h"

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "core/status_macros.h"
#include "experiments/replay_mechanisms.h"
#include "isolation/core/cpumask.h"
#include "isolation/core/host.h"
#include "isolation/runtime/noise_meter.h"

extern char** environ;

namespace isolation::experiments {
namespace {

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A temporary file's path (created empty, removed by the caller).
absl::StatusOr<std::string> TempFile(const char* stem) {
  std::string path = absl::StrCat("/tmp/isolab-noise-", stem, "-XXXXXX");
  const int fd = mkstemp(path.data());
  if (fd < 0) return absl::InternalError(absl::StrCat("mkstemp ", path, " failed"));
  close(fd);
  return path;
}

// The host CPU to measure on: --noise_cpu, or the first isolated CPU, or the
// highest usable one.
absl::StatusOr<int> ChooseCpu(const NoiseExperimentOptions& o, std::vector<IsolationWarning>& w) {
  ISOLATION_ASSIGN_OR_RETURN(std::vector<int> usable, UsableHostCpus());
  if (o.cpu >= 0) {
    if (std::find(usable.begin(), usable.end(), o.cpu) == usable.end()) {
      return absl::InvalidArgumentError(absl::StrCat("--noise_cpu=", o.cpu,
                                                     ": not a CPU this process may run on (",
                                                     absl::StrJoin(usable, ","), ")"));
    }
    return o.cpu;
  }
  // isolcpus= shows in .../isolated, nohz_full= in .../nohz_full.
  for (const char* file :
       {"/sys/devices/system/cpu/isolated", "/sys/devices/system/cpu/nohz_full"}) {
    absl::StatusOr<std::string> text = ReadHostFile(file);
    if (!text.ok()) continue;
    std::string list = *text;
    while (!list.empty() && (list.back() == '\n' || list.back() == ' ')) list.pop_back();
    if (list.empty() || list == "(null)") continue;
    absl::StatusOr<CpuMask> mask = CpuMask::Parse(list, kMaxCpus);
    if (!mask.ok()) continue;
    for (int c : usable) {
      if (mask->Test(c)) return c;
    }
  }
  w.push_back({"noise_cpu", absl::StrCat("the host has no isolated CPU: measuring on CPU ",
                                         usable.back(), ", which housekeeping shares")});
  return usable.back();
}

// One oslat run.  fork + exec through posix_spawnp, output to a file, a
// deadline well past its duration so a stuck oslat cannot hang isolab.
absl::StatusOr<OslatFigures> RunOslat(const NoiseExperimentOptions& o, int cpu) {
  ISOLATION_ASSIGN_OR_RETURN(std::string json_path, TempFile("json"));
  ISOLATION_ASSIGN_OR_RETURN(std::string out_path, TempFile("out"));
  std::vector<std::string> args = {o.oslat,
                                   "--cpu-list",
                                   absl::StrCat(cpu),
                                   "-D",
                                   absl::StrCat(o.seconds),
                                   "-q",
                                   "-b",
                                   absl::StrCat(o.buckets),
                                   absl::StrCat("--json=", json_path)};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, out_path.c_str(), O_WRONLY | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  pid_t pid = -1;
  const int err = posix_spawnp(&pid, o.oslat.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  auto cleanup = [&] {
    std::remove(json_path.c_str());
    std::remove(out_path.c_str());
  };
  if (err != 0) {
    cleanup();
    return absl::NotFoundError(absl::StrCat(
        "cannot run '", o.oslat, "' (", err,
        "): install Debian's rt-tests (tools/bootstrap.sh noise does) or give --oslat=PATH"));
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(o.seconds + 60);
  int status = 0;
  while (true) {
    const pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) break;
    if (r < 0) {
      cleanup();
      return absl::InternalError(absl::StrCat("waitpid for ", o.oslat, " failed"));
    }
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      cleanup();
      return absl::DeadlineExceededError(
          absl::StrCat(o.oslat, " did not end within ", o.seconds + 60, " s"));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  const std::string out = ReadAll(out_path);
  const std::string json = ReadAll(json_path);
  cleanup();
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return absl::InternalError(
        absl::StrCat(o.oslat, " failed (status ", status, "): ", out.substr(0, 500)));
  }
  return ParseOslatJson(json, o.buckets);
}

// The noise meter on a thread pinned to `cpu`, in oslat's units.
absl::StatusOr<OslatFigures> RunMeter(const NoiseExperimentOptions& o, int cpu) {
  NoiseResult result;
  bool pinned = false;
  std::thread t([&] {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    pinned = pthread_setaffinity_np(pthread_self(), sizeof set, &set) == 0;
    if (!pinned) return;
    NoiseMeter meter(o.buckets);
    meter.Spin(o.seconds * kNsPerSec);
    result = meter.Result();
  });
  t.join();
  if (!pinned) return absl::InternalError(absl::StrCat("cannot pin the meter to CPU ", cpu));
  return OslatFiguresOf(result);
}

}  // namespace

std::string OslatText(const OslatFigures& f, bool zero_omit) {
  std::string out;
  for (size_t i = 0; i < f.buckets.size(); ++i) {
    if (zero_omit && f.buckets[i] == 0 && i + 1 != f.buckets.size()) continue;
    absl::StrAppendFormat(&out, "    %03d (us):\t %d%s\n", static_cast<int>(i) + 1, f.buckets[i],
                          i + 1 == f.buckets.size() ? " (including overflows)" : "");
  }
  absl::StrAppendFormat(&out, "     Minimum:\t %d (us)\n", f.min_us);
  absl::StrAppendFormat(&out, "     Average:\t %.3f (us)\n", f.avg_us);
  absl::StrAppendFormat(&out, "     Maximum:\t %d (us)\n", f.max_us);
  absl::StrAppendFormat(&out, "     Max-Min:\t %d (us)\n", f.max_us - f.min_us);
  absl::StrAppendFormat(&out, "    Duration:\t %.3f (sec)\n", f.duration_s);
  return out;
}

std::string OslatTable(const std::vector<std::pair<int, OslatFigures>>& per_cpu, bool zero_omit) {
  std::string out;
  if (per_cpu.empty()) return out;
  size_t buckets = per_cpu[0].second.buckets.size();
  for (const auto& [cpu, f] : per_cpu) buckets = std::min(buckets, f.buckets.size());
  auto row = [&](const char* label, auto value, const char* unit) {
    absl::StrAppend(&out, label, "\t");
    for (const auto& [cpu, f] : per_cpu) absl::StrAppend(&out, " ", value(cpu, f));
    absl::StrAppend(&out, unit, "\n");
  };
  row(
      "        Core:", [](int cpu, const OslatFigures&) { return absl::StrCat(cpu); }, "");
  for (size_t i = 0; i < buckets; ++i) {
    const bool last = i + 1 == buckets;
    bool any = false;
    for (const auto& [cpu, f] : per_cpu) any = any || f.buckets[i] != 0;
    if (zero_omit && !any && !last) continue;
    const std::string label = absl::StrFormat("    %03d (us):", static_cast<int>(i) + 1);
    row(
        label.c_str(), [i](int, const OslatFigures& f) { return absl::StrCat(f.buckets[i]); },
        last ? " (including overflows)" : "");
  }
  row(
      "     Minimum:", [](int, const OslatFigures& f) { return absl::StrCat(f.min_us); }, " (us)");
  row(
      "     Average:", [](int, const OslatFigures& f) { return absl::StrFormat("%.3f", f.avg_us); },
      " (us)");
  row(
      "     Maximum:", [](int, const OslatFigures& f) { return absl::StrCat(f.max_us); }, " (us)");
  row(
      "     Max-Min:", [](int, const OslatFigures& f) { return absl::StrCat(f.max_us - f.min_us); },
      " (us)");
  row(
      "    Duration:",
      [](int, const OslatFigures& f) { return absl::StrFormat("%.3f", f.duration_s); }, " (sec)");
  return out;
}

absl::StatusOr<OslatFigures> OslatFiguresOf(const NoiseResult& result) {
  if (result.bucket_size_us != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("--bucket_size=", result.bucket_size_us, ": oslat's format has 1 us buckets"));
  }
  // oslat counts every gap in whole microseconds rounded up (its minimum is
  // 1 us however fast the loop): the meter's figures the same way.  The
  // average weights each bucket by its label; gaps in the last bucket count
  // at its label, so the few overflows make it a lower bound.
  OslatFigures f;
  f.min_us = (result.min_ns + 999) / 1000;
  f.max_us = (result.max_ns + 999) / 1000;
  f.duration_s = static_cast<double>(result.duration_ns) / 1e9;
  f.buckets = result.histogram_us;  // bucket k: [k, k+1) us, printed as k + 1
  double weighted = 0;
  int64_t samples = 0;
  for (size_t k = 0; k < f.buckets.size(); ++k) {
    weighted += static_cast<double>(k + 1) * static_cast<double>(f.buckets[k]);
    samples += f.buckets[k];
  }
  f.avg_us = samples > 0 ? weighted / static_cast<double>(samples) : 0.0;
  f.exact_avg_us = result.avg_ns / 1000.0;
  return f;
}

absl::StatusOr<OslatFigures> ParseOslatJson(const std::string& json, int buckets) {
  const nlohmann::json j = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    return absl::InvalidArgumentError(
        absl::StrCat("oslat --json output is not JSON: '", json.substr(0, 80), "'"));
  }
  if (!j.contains("thread") || !j["thread"].contains("0")) {
    return absl::InvalidArgumentError("oslat --json output has no thread \"0\"");
  }
  const nlohmann::json& t = j["thread"]["0"];
  for (const char* key : {"min", "avg", "max", "duration", "histogram"}) {
    if (!t.contains(key)) {
      return absl::InvalidArgumentError(absl::StrCat("oslat --json output lacks thread.0.", key));
    }
  }
  if (!t["min"].is_number() || !t["avg"].is_number() || !t["max"].is_number() ||
      !t["duration"].is_number() || !t["histogram"].is_object()) {
    return absl::InvalidArgumentError("oslat --json output: a thread.0 field of the wrong type");
  }
  OslatFigures f;
  f.min_us = t["min"].get<int64_t>();
  f.avg_us = t["avg"].get<double>();
  f.max_us = t["max"].get<int64_t>();
  f.duration_s = t["duration"].get<double>();
  f.buckets.assign(static_cast<size_t>(buckets), 0);
  for (const auto& [key, value] : t["histogram"].items()) {
    char* end = nullptr;
    const long label = std::strtol(key.c_str(), &end, 10);
    if (end == key.c_str() || *end != '\0' || label < 1 || !value.is_number_integer()) {
      return absl::InvalidArgumentError(
          absl::StrCat("oslat --json output: histogram entry '", key, "'"));
    }
    const size_t i = std::min<size_t>(static_cast<size_t>(label - 1), f.buckets.size() - 1);
    f.buckets[i] += value.get<int64_t>();
  }
  return f;
}

namespace {

absl::Status Validate(const NoiseExperimentOptions& o) {
  if (o.seconds < 1 || o.seconds > 3600) {
    return absl::InvalidArgumentError(
        absl::StrCat("--noise_seconds=", o.seconds, ": want 1..3600"));
  }
  if (o.rounds < 1 || o.rounds > 100) {
    return absl::InvalidArgumentError(absl::StrCat("--noise_rounds=", o.rounds, ": want 1..100"));
  }
  if (o.buckets < 5 || o.buckets > 1024) {
    // oslat 2.40 says 4-1024 and refuses 4.
    return absl::InvalidArgumentError(
        absl::StrCat("--noise_buckets=", o.buckets, ": want 5..1024 (oslat -b)"));
  }
  if (o.cpu < -1 || o.cpu >= kMaxCpus) {
    return absl::InvalidArgumentError(
        absl::StrCat("--noise_cpu=", o.cpu, ": want -1..", kMaxCpus - 1));
  }
  if (o.oslat.empty()) return absl::InvalidArgumentError("--oslat: empty");
  return absl::OkStatus();
}

NoiseExperimentOptions Effective(const CommonOptions& common, NoiseExperimentOptions o) {
  if (common.quick) {
    o.seconds = std::min<int64_t>(o.seconds, 1);
    o.rounds = 1;
  }
  return o;
}

}  // namespace

absl::StatusOr<RunCost> EstimateNoiseExperiment(const CommonOptions& common,
                                                const NoiseExperimentOptions& options) {
  ISOLATION_RETURN_IF_ERROR(Validate(options));
  const NoiseExperimentOptions o = Effective(common, options);
  RunCost c;
  c.seconds = 2.0 * static_cast<double>(o.rounds) * (static_cast<double>(o.seconds) + 1.0);
  c.bytes = 32e6;
  c.basis = absl::StrCat("noise: ", o.rounds, " rounds x (oslat + meter) x ", o.seconds, " s");
  return c;
}

absl::StatusOr<ExperimentReport> RunNoiseExperiment(const CommonOptions& common,
                                                    const NoiseExperimentOptions& options,
                                                    Progress& progress) {
  ISOLATION_RETURN_IF_ERROR(Validate(options));
  const NoiseExperimentOptions o = Effective(common, options);
  ExperimentReport report;
  ISOLATION_ASSIGN_OR_RETURN(const int cpu, ChooseCpu(o, report.warnings));
  nlohmann::json rounds = nlohmann::json::array();
  std::vector<std::vector<std::string>> table;
  std::vector<double> max_ratios, avg_ratios;
  absl::StrAppend(&report.text, "Noise on host CPU ", cpu, ": oslat (", o.oslat,
                  ") and the isolation noise meter, ", o.seconds, " s each, ", o.rounds,
                  " round(s), one after the other\n");
  for (int r = 0; r < o.rounds; ++r) {
    progress.Update(absl::StrCat("round ", r + 1), static_cast<double>(r) / o.rounds);
    // Alternate which tool goes first.
    const bool oslat_first = r % 2 == 0;
    OslatFigures os, meter;
    if (oslat_first) {
      ISOLATION_ASSIGN_OR_RETURN(os, RunOslat(o, cpu));
      ISOLATION_ASSIGN_OR_RETURN(meter, RunMeter(o, cpu));
    } else {
      ISOLATION_ASSIGN_OR_RETURN(meter, RunMeter(o, cpu));
      ISOLATION_ASSIGN_OR_RETURN(os, RunOslat(o, cpu));
    }
    const double max_ratio =
        os.max_us > 0 ? static_cast<double>(meter.max_us) / static_cast<double>(os.max_us) : 0;
    const double avg_ratio = os.avg_us > 0 ? meter.avg_us / os.avg_us : 0;
    max_ratios.push_back(max_ratio);
    avg_ratios.push_back(avg_ratio);
    absl::StrAppend(&report.text, "\nround ", r + 1, ", oslat:\n", OslatText(os), "round ", r + 1,
                    ", noise meter:\n", OslatText(meter));
    auto figures = [](const OslatFigures& f) {
      return nlohmann::json{{"min_us", f.min_us},
                            {"avg_us", f.avg_us},
                            {"max_us", f.max_us},
                            {"duration_s", f.duration_s},
                            {"buckets", f.buckets}};
    };
    rounds.push_back({{"round", r + 1},
                      {"first", oslat_first ? "oslat" : "meter"},
                      {"oslat", figures(os)},
                      {"meter", figures(meter)},
                      {"max_ratio", max_ratio},
                      {"avg_ratio", avg_ratio}});
    table.push_back({absl::StrCat(r + 1), oslat_first ? "oslat" : "meter", absl::StrCat(os.max_us),
                     absl::StrCat(meter.max_us), absl::StrFormat("%.2f", max_ratio),
                     absl::StrFormat("%.3f", os.avg_us), absl::StrFormat("%.3f", meter.avg_us),
                     absl::StrFormat("%.3f", avg_ratio)});
  }
  progress.Done();
  absl::StrAppend(&report.text, "\nsummary (meter / oslat; the host's noise is in both):\n",
                  TextTable({"round", "first", "oslat max us", "meter max us", "max ratio",
                             "oslat avg us", "meter avg us", "avg ratio"},
                            table),
                  absl::StrFormat("  median ratio: max %.2f, avg %.3f\n", Median(max_ratios),
                                  Median(avg_ratios)));
  report.json["experiment"] = "noise";
  report.json["cpu"] = cpu;
  report.json["seconds"] = o.seconds;
  report.json["oslat"] = o.oslat;
  report.json["rounds"] = std::move(rounds);
  report.json["median_max_ratio"] = Median(max_ratios);
  report.json["median_avg_ratio"] = Median(avg_ratios);
  FinishReport({}, report);
  return report;
}

}  // namespace isolation::experiments
