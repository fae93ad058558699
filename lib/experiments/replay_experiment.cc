// SPDX-License-Identifier: GPL-2.0-or-later
// `isolab replay`: the recording streams from its reader into the replay
// driver; the mechanisms' replays (replay_mechanisms.h) are attached when the
// reader has said what machine the recording comes from.

#include "experiments/replay_experiment.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "core/status_macros.h"
#include "experiments/look_options.h"
#include "experiments/replay_mechanisms.h"
#include "isolation/runtime/trace.h"
#include "replay/reader_internal.h"
#include "isolation/replay/readers.h"
#include "isolation/replay/replay_driver.h"

namespace isolation::experiments {

nlohmann::json Agreement::Json() const {
  nlohmann::json j{{"judged", judged},
                   {"agreed", agreed},
                   {"not_judged", not_judged},
                   {"first_disagreements", first_disagreements}};
  j["share"] = judged > 0 ? nlohmann::json(Share()) : nlohmann::json(nullptr);
  return j;
}

namespace {
// A list for a message: the first names, then how many there are.
std::string ShortList(const std::vector<std::string>& names) {
  constexpr size_t kShown = 8;
  if (names.size() <= kShown) return absl::StrJoin(names, ", ");
  return absl::StrCat(absl::StrJoin(names.begin(), names.begin() + kShown, ", "), ", ... (",
                      names.size(), " in all: isolab variants lists them)");
}
}  // namespace

absl::StatusOr<RowFilter> RowFilter::Make(const ReplaySetup& setup, std::string_view mechanism,
                                          std::string_view flag,
                                          const std::vector<std::string>& registered) {
  RowFilter f;
  f.negative_controls_ = setup.options->negative_controls;
  auto it = setup.options->variants.find(std::string(mechanism));
  if (it == setup.options->variants.end()) return f;
  f.active_ = true;
  for (const std::string& name : it->second) {
    if (std::find(registered.begin(), registered.end(), name) == registered.end()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--", std::string(flag), ": '", absl::CHexEscape(name), "' is not a registered ",
          std::string(mechanism), " variant (registered: ", ShortList(registered), ")"));
    }
    f.names_.push_back(name);
  }
  return f;
}

bool RowFilter::Wants(std::string_view name, bool negative_control) const {
  if (!active_) return !negative_control || negative_controls_;
  return std::find(names_.begin(), names_.end(), name) != names_.end();
}

std::string Agreement::Text() const {
  if (judged == 0) return absl::StrCat("no decision judged (", not_judged, " not judged)");
  return absl::StrFormat("%.1f %% (%d of %d%s)", 100.0 * Share(), agreed, judged,
                         not_judged > 0 ? absl::StrCat("; ", not_judged, " not judged") : "");
}

std::string DescribeEvent(const replay::Event& e, const replay::ReplayDriver& driver) {
  using replay::EventKind;
  std::string s = absl::StrFormat("%d.%09d CPU %d %s", e.time / kNsPerSec, e.time % kNsPerSec,
                                  e.cpu, std::string(replay::EventKindName(e.kind)));
  const TaskId curr = driver.CurrentTask(e.cpu);
  switch (e.kind) {
    case EventKind::kSwitch:
      absl::StrAppend(&s, " ", e.other, " -> ", e.task);
      break;
    case EventKind::kWaking:
    case EventKind::kWakeup:
    case EventKind::kWakeupNew:
      absl::StrAppend(&s, " pid ", e.task, " target_cpu ", e.cpu2);
      break;
    default:
      absl::StrAppend(&s, " pid ", e.pid);
      break;
  }
  if (curr != kIdleTask) absl::StrAppend(&s, " (", std::string(driver.Comm(curr)), ")");
  return s;
}

std::string TextTable(const std::vector<std::string>& header,
                      const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> width(header.size());
  for (size_t i = 0; i < header.size(); ++i) width[i] = header[i].size();
  for (const auto& r : rows) {
    for (size_t i = 0; i < r.size() && i < width.size(); ++i)
      width[i] = std::max(width[i], r[i].size());
  }
  auto line = [&](const std::vector<std::string>& cells) {
    std::string out = "  ";
    for (size_t i = 0; i < width.size(); ++i) {
      const std::string& c = i < cells.size() ? cells[i] : std::string();
      absl::StrAppend(&out, c,
                      i + 1 < width.size() ? std::string(width[i] - c.size() + 2, ' ') : "");
    }
    return absl::StrCat(out, "\n");
  };
  std::string out = line(header);
  std::vector<std::string> rule;
  for (size_t w : width) rule.push_back(std::string(w, '-'));
  absl::StrAppend(&out, line(rule));
  for (const auto& r : rows) absl::StrAppend(&out, line(r));
  return out;
}

namespace {

using replay::RecordingInfo;
using replay::internal::Cat;

absl::Status CheckOptions(const ReplayExperimentOptions& o) {
  if (o.file.empty())
    return absl::InvalidArgumentError("isolab replay: no recording given (isolab replay FILE)");
  if (o.cpus < 0 || o.cpus > kMaxCpus) {
    return absl::InvalidArgumentError(
        absl::StrCat("--replay_cpus=", o.cpus, ": outside [0, ", kMaxCpus, "]"));
  }
  if (o.hz < 0 || o.hz > 10000) {
    return absl::InvalidArgumentError(absl::StrCat("--replay_hz=", o.hz, ": outside [0, 10000]"));
  }
  if (o.disagreements < 0 || o.disagreements > 1000) {
    return absl::InvalidArgumentError(
        absl::StrCat("--replay_disagreements=", o.disagreements, ": outside [0, 1000]"));
  }
  if (o.max_bad_lines < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("--replay_max_bad_lines=", o.max_bad_lines, ": negative"));
  }
  if (o.mm_cid_tasks < 16 || o.mm_cid_tasks > (1 << 20)) {
    return absl::InvalidArgumentError(
        Cat("--replay_mm_cid_tasks=", o.mm_cid_tasks, ": outside [16, 1048576]"));
  }
  if (o.check_every < 1 || o.check_every > (1 << 20)) {
    return absl::InvalidArgumentError(
        Cat("--replay_check_every=", o.check_every, ": outside [1, 1048576]"));
  }
  if (o.mechanisms.empty()) return absl::InvalidArgumentError("--replay_mechanisms: empty list");
  std::vector<std::string> seen;
  for (const std::string& m : o.mechanisms) {
    if (m != "mm_cid" && m != "tmigr" && m != "idle_select" && m != "vmstat") {
      return absl::InvalidArgumentError(absl::StrCat("--replay_mechanisms: unknown mechanism '", m,
                                                     "' (mm_cid, tmigr, idle_select, vmstat)"));
    }
    if (std::find(seen.begin(), seen.end(), m) != seen.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--replay_mechanisms: '", m, "' is listed twice"));
    }
    seen.push_back(m);
  }
  return absl::OkStatus();
}

// Streams the recording into the driver, which is made (with the
// mechanisms) once the reader has told the machine.
class Session final : public replay::EventSink {
 public:
  Session(const CommonOptions& common, const ReplayExperimentOptions& options)
      : common_(common), options_(options) {}

  absl::Status OnInfo(const RecordingInfo& info) override {
    info_ = info;
    // The machine: --topology, else the file's, else one LLC (noted).
    if (common_.topology != "seed") {
      if (info_.topology_source == replay::InfoSource::kFile) {
        info_.notes.push_back(
            absl::StrCat("--topology=", common_.topology, " replaces the recording's topology"));
      }
      info_.topology = common_.topology;
      info_.core_of.clear();
      info_.llc_of.clear();
      info_.node_of.clear();
      info_.package_of.clear();
      info_.topology_source = replay::InfoSource::kFlag;
    }
    bool assumed = false;
    absl::StatusOr<Topology> topo = replay::MachineTopology(info_, &assumed);
    if (!topo.ok()) return topo.status();
    if (assumed) {
      info_.notes.push_back(
          absl::StrCat("the recording does not describe its machine: ", info_.num_cpus,
                       " CPUs in one LLC assumed (--topology gives it)"));
    }
    topology_ = std::make_unique<Topology>(std::move(*topo));
    // The recorded kernel's isolation, and the variants' (what-if).
    absl::StatusOr<IsolationConfig> recorded =
        IsolationConfig::FromFlags(*topology_, info_.isolcpus, info_.nohz_full);
    if (!recorded.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(info_.path, ": the recorded isolation (isolcpus='", info_.isolcpus,
                       "', nohz_full='", info_.nohz_full, "'): ", recorded.status().message()));
    }
    if (info_.isolation_source == replay::InfoSource::kUnknown) {
      info_.notes.push_back(
          "the recording does not say how the kernel was isolated: none assumed "
          "(--recorded_isolcpus, "
          "--recorded_nohz_full)");
    }
    const bool what_if = common_.isolcpus != "seed" || !common_.nohz_full.empty();
    absl::StatusOr<IsolationConfig> variants = recorded;
    if (what_if) {
      variants = IsolationConfig::FromFlags(
          *topology_, common_.isolcpus == "seed" ? info_.isolcpus : common_.isolcpus,
          common_.nohz_full);
      if (!variants.ok()) return variants.status();
    }
    isolation_ = std::make_unique<IsolationConfig>(std::move(*variants));
    isolation_is_recorded_ = !what_if || isolation_->ToCmdline() == recorded->ToCmdline();
    // HZ and the kernel version.
    int hz = info_.hz;
    if (hz <= 0) {
      hz = 250;
      info_.notes.push_back(
          "the recording does not say the kernel's HZ: 250 assumed (--replay_hz)");
    }
    setup_.info = &info_;
    setup_.topology = topology_.get();
    setup_.isolation = isolation_.get();
    setup_.isolation_is_recorded = isolation_is_recorded_;
    setup_.kernel_version = info_.KernelVersion();
    setup_.options = &options_;
    absl::StatusOr<std::unique_ptr<replay::ReplayDriver>> driver =
        replay::ReplayDriver::Create(*topology_, *isolation_, {.hz = hz, .seed = common_.seed});
    if (!driver.ok()) return driver.status();
    driver_ = std::move(*driver);
    if (common_.trace != nullptr) {
      if (absl::Status s = CheckTraceCpus(common_.trace, *topology_); !s.ok()) return s;
      common_.trace->PlanRuns(1);
      absl::StatusOr<std::unique_ptr<TraceRun>> run =
          StartTraceRun(common_.trace, Cat("replay of ", info_.path), *topology_, *isolation_);
      if (!run.ok()) return run.status();
      trace_run_ = std::move(*run);
      if (trace_run_ != nullptr) trace_run_->Attach(*driver_);
    }
    for (const std::string& m : options_.mechanisms) {
      absl::StatusOr<std::unique_ptr<MechanismReplay>> r = m == "mm_cid"  ? MakeMmCidReplay(setup_)
                                                           : m == "tmigr" ? MakeTmigrReplay(setup_)
                                                           : m == "vmstat"
                                                               ? MakeVmstatReplay(setup_)
                                                               : MakeIdleReplay(setup_);
      if (!r.ok()) return r.status();
      if (absl::Status s = (*r)->Attach(*driver_); !s.ok()) return s;
      mechanisms_.push_back(std::move(*r));
    }
    return driver_->OnInfo(info_);
  }
  absl::Status OnEvent(const replay::Event& e) override { return driver_->OnEvent(e); }
  void OnComm(int32_t pid, std::string_view comm) override {
    if (driver_) driver_->OnComm(pid, comm);
  }

  RecordingInfo info_;
  const CommonOptions& common_;
  const ReplayExperimentOptions& options_;
  std::unique_ptr<Topology> topology_;
  std::unique_ptr<IsolationConfig> isolation_;
  bool isolation_is_recorded_ = true;
  ReplaySetup setup_;
  std::unique_ptr<TraceRun> trace_run_;  // before driver_: the driver is destroyed first
  std::unique_ptr<replay::ReplayDriver> driver_;
  std::vector<std::unique_ptr<MechanismReplay>> mechanisms_;
};

}  // namespace

absl::StatusOr<RunCost> EstimateReplayExperiment(const CommonOptions& common,
                                                 const ReplayExperimentOptions& options) {
  (void)common;
  ISOLATION_RETURN_IF_ERROR(CheckOptions(options));
  std::error_code ec;
  const double bytes = static_cast<double>(std::filesystem::file_size(options.file, ec));
  if (ec) return absl::InvalidArgumentError(absl::StrCat(options.file, ": ", ec.message()));
  // gzip'ed recordings expand ~8x; every registered variant sees each event:
  // ~40 ns per uncompressed byte on the reference host (rseq_threads.dat.gz,
  // README.md "isolab").  Memory is bounded by design (the
  // readers stream; --replay_mm_cid_tasks bounds the mm_cid models), not
  // by the file's length.
  const bool gz = absl::EndsWith(options.file, ".gz");
  const double expanded = gz ? bytes * 8 : bytes;
  return RunCost{expanded * 40e-9 + 0.1, 64e6 + static_cast<double>(options.mm_cid_tasks) * 8e3,
                 absl::StrCat("replay of ", expanded / 1e6, " MB of events through every variant")};
}

absl::StatusOr<ExperimentReport> RunReplayExperiment(const CommonOptions& common,
                                                     const ReplayExperimentOptions& options,
                                                     Progress& progress) {
  if (absl::Status s = CheckOptions(options); !s.ok()) return s;
  absl::StatusOr<replay::TraceFormat> format = replay::ParseTraceFormat(options.format);
  if (!format.ok())
    return absl::InvalidArgumentError(absl::StrCat("--replay_format: ", format.status().message()));
  replay::ReadOptions read;
  read.format = *format;
  read.num_cpus = options.cpus;
  read.kernel_release = options.kernel;
  read.hz = options.hz;
  read.isolcpus = options.recorded_isolcpus;
  read.nohz_full = options.recorded_nohz_full;
  read.max_bad_lines = options.max_bad_lines;
  Session session(common, options);
  replay::ReadStats stats;
  progress.Update("reading and replaying", 0.0);
  if (absl::Status s = replay::ReadTrace(options.file, read, session, &stats); !s.ok()) {
    // A file that is missing, truncated, corrupt or too large is bad input
    // (isolab exits 2), whatever the reader's code.
    if (absl::IsNotFound(s) || absl::IsDataLoss(s) || absl::IsResourceExhausted(s)) {
      return absl::InvalidArgumentError(s.message());
    }
    return s;
  }
  if (session.driver_ == nullptr)
    return absl::InvalidArgumentError(absl::StrCat(options.file, ": nothing to replay"));
  if (absl::Status s = session.driver_->Finish(); !s.ok()) return s;
  if (session.trace_run_ != nullptr) session.trace_run_->Finish(session.driver_->Now());
  progress.Done();

  ExperimentReport report;
  const RecordingInfo& info = session.info_;
  const replay::ReplayCounters& c = session.driver_->counters();
  nlohmann::json& j = report.json;
  j["file"] = options.file;
  j["format"] = info.format;
  j["machine"] = {{"cpus", info.num_cpus},
                  {"cpus_from", replay::InfoSourceName(info.num_cpus_source)},
                  {"topology", session.topology_->Summary()},
                  {"topology_from", replay::InfoSourceName(info.topology_source)},
                  {"kernel", info.kernel_release},
                  {"kernel_from", replay::InfoSourceName(info.kernel_source)},
                  {"recorded_isolcpus", info.isolcpus},
                  {"recorded_nohz_full", info.nohz_full},
                  {"variants_isolation", session.isolation_->ToCmdline()},
                  {"what_if", !session.isolation_is_recorded_}};
  j["events"] = stats.events;
  nlohmann::json per_kind = nlohmann::json::object();
  for (int k = 0; k < replay::kNumEventKinds; ++k) {
    if (stats.per_kind[static_cast<size_t>(k)] > 0) {
      per_kind[std::string(replay::EventKindName(static_cast<replay::EventKind>(k)))] =
          stats.per_kind[static_cast<size_t>(k)];
    }
  }
  j["events_per_kind"] = per_kind;
  j["skipped_records"] = stats.skipped;
  j["lost_events"] = stats.lost_events;
  nlohmann::json blind = nlohmann::json::array();
  for (int cpu = 0; cpu < info.num_cpus; ++cpu) {
    if (session.driver_->UnrecordedIdleExits(cpu) > 0) blind.push_back(cpu);
  }
  j["cpus_with_unrecorded_idle_exits"] = blind;
  j["replay"] = {{"bootstraps", c.bootstraps},
                 {"resyncs", c.resyncs},
                 {"unrecorded_idle_exits", c.unrecorded_idle_exits},
                 {"selections", c.selections},
                 {"adapter_work_run", c.work_run},
                 {"ticks", c.ticks},
                 {"tick_returns_dropped_as_preemptions", c.tick_returns_dropped}};
  j["notes"] = info.notes;
  std::string& text = report.text;
  absl::StrAppend(&text, "replay of ", options.file, " (", info.format, "): ", stats.events,
                  " events, ", info.num_cpus, " CPUs (",
                  std::string(replay::InfoSourceName(info.num_cpus_source)), "), ",
                  session.topology_->Summary(), ", kernel ",
                  info.kernel_release.empty() ? "unknown" : info.kernel_release, "\n");
  absl::StrAppend(
      &text, "  recorded isolation: isolcpus='", info.isolcpus, "' nohz_full='", info.nohz_full,
      "'",
      session.isolation_is_recorded_
          ? "\n"
          : absl::StrCat("; what-if: the variants run '", session.isolation_->ToCmdline(),
                         "' (no agreement: the kernel did not)\n"));
  if (stats.lost_events > 0) {
    absl::StrAppend(&text, "  warning: the tracer lost ", stats.lost_events,
                    " events: decisions around them may disagree for that reason\n");
  }
  for (const std::string& n : info.notes) absl::StrAppend(&text, "  note: ", n, "\n");
  if (!blind.empty()) {
    absl::StrAppend(&text, "  note: CPU(s) ", blind.dump(), " left idle ", c.unrecorded_idle_exits,
                    " times without the switch being recorded: the tracer does not see their idle "
                    "loop, so their idle "
                    "state is presumed and decisions resting on it are not judged\n");
  }
  nlohmann::json mechs = nlohmann::json::object();
  for (auto& m : session.mechanisms_) {
    nlohmann::json out = nlohmann::json::object();
    const std::string missing = replay::MissingEventsMessage(m->name(), stats);
    absl::StrAppend(&text, "\n");
    if (!missing.empty()) {
      out["missing"] = missing;
      absl::StrAppend(&text, missing, "\n");
      mechs[std::string(m->name())] = out;
      continue;
    }
    m->Report(stats, *session.driver_, out, text, report.invariant_violations);
    mechs[std::string(m->name())] = out;
  }
  j["mechanisms"] = mechs;
  FinishReport({}, report);
  return report;
}

}  // namespace isolation::experiments
