// SPDX-License-Identifier: GPL-2.0-or-later
// What every reader shares (reader_internal.h), the entry points of
// readers.h, and the machine description (MachineTopology).

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sys/mman.h>
#include <unistd.h>
#include <zlib.h>

#include "absl/cleanup/cleanup.h"
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "isolation/core/cpumask.h"
#include "isolation/replay/readers.h"
#include "nlohmann/json.hpp"
#include "replay/event_names.h"
#include "replay/reader_internal.h"

namespace isolation::replay {
namespace internal {

std::string Escape(std::string_view text, size_t max) {
  std::string out;
  const size_t n = std::min(text.size(), max);
  out.reserve(n + 8);
  for (size_t i = 0; i < n; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == '\\') {
      out += "\\\\";
    } else if (c < 0x20 || c >= 0x7f) {
      out += absl::StrFormat("\\x%02x", c);
    } else {
      out.push_back(static_cast<char>(c));
    }
  }
  if (text.size() > max) out += "...";
  return out;
}

std::vector<std::string_view> Split(std::string_view s, char sep, bool skip_empty) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (true) {
    const size_t at = s.find(sep, start);
    const std::string_view piece =
        s.substr(start, at == std::string_view::npos ? std::string_view::npos : at - start);
    if (!skip_empty || !piece.empty()) out.push_back(piece);
    if (at == std::string_view::npos) break;
    start = at + 1;
  }
  return out;
}

bool ParseSmallInt(std::string_view text, int& out) {
  int32_t v;
  if (!ParseInt32(text, v)) return false;
  out = v;
  return true;
}

bool ParseDec(std::string_view text, int64_t& out) {
  if (text.empty() || text.size() > 24) return false;
  size_t i = 0;
  bool negative = false;
  if (text[0] == '-') {
    negative = true;
    i = 1;
  }
  if (i == text.size()) return false;
  uint64_t v = 0;
  for (; i < text.size(); ++i) {
    if (text[i] < '0' || text[i] > '9') return false;
    const uint64_t d = static_cast<uint64_t>(text[i] - '0');
    if (v > (std::numeric_limits<uint64_t>::max() - d) / 10) return false;
    v = v * 10 + d;
  }
  if (negative) {
    if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) + 1) return false;
    out = v == static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) + 1
              ? std::numeric_limits<int64_t>::min()
              : -static_cast<int64_t>(v);
    return true;
  }
  if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return false;
  out = static_cast<int64_t>(v);
  return true;
}

bool ParseHex(std::string_view text, uint64_t& out) {
  if (text.starts_with("0x") || text.starts_with("0X")) text.remove_prefix(2);
  if (text.empty() || text.size() > 16) return false;
  uint64_t v = 0;
  for (char c : text) {
    int d;
    if (c >= '0' && c <= '9') {
      d = c - '0';
    } else if (c >= 'a' && c <= 'f') {
      d = c - 'a' + 10;
    } else if (c >= 'A' && c <= 'F') {
      d = c - 'A' + 10;
    } else {
      return false;
    }
    v = (v << 4) | static_cast<uint64_t>(d);
  }
  out = v;
  return true;
}

bool ParseU64(std::string_view text, uint64_t& out) {
  if (text.starts_with("0x") || text.starts_with("0X")) return ParseHex(text, out);
  if (text.empty() || text.size() > 20) return false;
  uint64_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    const uint64_t d = static_cast<uint64_t>(c - '0');
    if (v > (std::numeric_limits<uint64_t>::max() - d) / 10) return false;
    v = v * 10 + d;
  }
  out = v;
  return true;
}

bool ParsePointer(std::string_view text, uint64_t& out) {
  if (text == "(nil)" || text == "0" || text == "(null)") {
    out = 0;
    return true;
  }
  if (!text.starts_with("0x")) return false;
  return ParseHex(text, out);
}

bool ParseInt32(std::string_view text, int32_t& out) {
  int64_t v;
  if (!ParseDec(text, v) || v < std::numeric_limits<int32_t>::min() ||
      v > std::numeric_limits<int32_t>::max()) {
    return false;
  }
  out = static_cast<int32_t>(v);
  return true;
}

bool ParseTimestamp(std::string_view text, int64_t& ns, bool& ns_digits) {
  const size_t dot = text.find('.');
  if (dot == std::string_view::npos || dot == 0 || dot + 1 >= text.size()) return false;
  const std::string_view secs = text.substr(0, dot);
  const std::string_view frac = text.substr(dot + 1);
  if (frac.size() > 9 || secs.size() > 10) return false;
  int64_t s;
  int64_t f;
  if (!ParseDec(secs, s) || s < 0 || !ParseDec(frac, f) || f < 0) return false;
  for (size_t i = frac.size(); i < 9; ++i) f *= 10;
  ns = s * kNsPerSec + f;
  ns_digits = frac.size() == 9;
  return true;
}

Emitter::Emitter(const std::string& path, std::string_view format, const ReadOptions& options,
                 EventSink& sink, ReadStats& stats)
    : path_(path), options_(options), sink_(sink), stats_(stats) {
  info_.path = path;
  info_.format = std::string(format);
}

void Emitter::SetFileCpus(int cpus) {
  if (info_sent_ || cpus <= 0) return;
  info_.num_cpus = cpus;
  info_.num_cpus_source = InfoSource::kFile;
}

void Emitter::SetFileRelease(std::string_view release) {
  if (info_sent_ || release.empty()) return;
  info_.kernel_release = std::string(release);
  info_.kernel_source = InfoSource::kFile;
}

absl::Status Emitter::Error(std::string_view where, std::string_view what) const {
  return absl::InvalidArgumentError(Cat(path_, ": ", where, ": ", what));
}

absl::Status Emitter::Comm(int32_t pid, std::string_view comm) {
  if (pid <= 0) return absl::OkStatus();  // the idle tasks are not tasks
  if (!info_sent_) {
    pending_.emplace_back(PendingComm{pid, std::string(comm)});
    return absl::OkStatus();
  }
  sink_.OnComm(pid, comm);
  return absl::OkStatus();
}

absl::Status Emitter::Marker(Event event, std::string_view text, std::string_view where) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ' || text.back() == '\r')) {
    text.remove_suffix(1);
  }
  static constexpr std::string_view kPrefix = "isolab-recording";
  if (text.starts_with(kPrefix) && !marker_seen_) {
    std::string_view rest = text.substr(kPrefix.size());
    if (rest.starts_with("[")) {
      // isolab-recording[k/n] chunk
      const size_t close = rest.find(']');
      const size_t slash = rest.find('/');
      int k = 0;
      int n = 0;
      if (close == std::string_view::npos || slash == std::string_view::npos || slash > close ||
          !ParseSmallInt(rest.substr(1, slash - 1), k) ||
          !ParseSmallInt(rest.substr(slash + 1, close - slash - 1), n) || n < 1 || n > 4096 ||
          k != marker_next_chunk_ || k > n) {
        return Error(where, Cat("malformed isolab-recording chunk '", Escape(text), "'"));
      }
      rest.remove_prefix(close + 1);
      if (!rest.empty() && rest[0] == ' ') rest.remove_prefix(1);
      marker_chunks_.append(rest.data(), rest.size());
      ++marker_next_chunk_;
      if (k == n) {
        marker_seen_ = true;
        if (!info_sent_) {
          if (absl::Status s = ApplyRecordingMarker(marker_chunks_, info_); !s.ok()) {
            return Error(where, SV(s.message()));
          }
        }
      }
    } else if (rest.starts_with(" ")) {
      marker_seen_ = true;
      if (!info_sent_) {
        if (absl::Status s = ApplyRecordingMarker(rest.substr(1), info_); !s.ok()) {
          return Error(where, SV(s.message()));
        }
      }
    }
  }
  if (event.cpu < 0 || event.cpu >= options_.max_cpus) {
    return Error(where, Cat("CPU ", event.cpu, " outside [0, ", options_.max_cpus,
                            ") (ReadOptions::max_cpus)"));
  }
  if (absl::Status s = Order(event, where); !s.ok()) return s;
  max_cpu_seen_ = std::max(max_cpu_seen_, event.cpu);
  event.kind = EventKind::kMarker;
  event.value = marker_count_++;
  if (!info_sent_) {
    pending_.emplace_back(PendingMarker{event, std::string(text)});
    // The marker is what the info waited for: the events held so far can go.
    if (marker_seen_) return SendInfo();
    return absl::OkStatus();
  }
  if (!sink_error_.ok()) return sink_error_;
  sink_.OnMarker(event, text);
  return Deliver(event, where);
}

absl::Status Emitter::Order(Event& event, std::string_view where) {
  if (have_time_ && event.time < last_time_) {
    if (last_time_ - event.time > options_.max_time_skew) {
      return Error(where, Cat("time ", event.time, " ns goes back ", last_time_ - event.time,
                              " ns from the event before (more than the ", options_.max_time_skew,
                              " ns a reader tolerates)"));
    }
    event.time = last_time_;
    ++stats_.reordered;
  }
  last_time_ = event.time;
  have_time_ = true;
  return absl::OkStatus();
}

absl::Status Emitter::Add(Event event, std::string_view where) {
  if (event.cpu < 0 || event.cpu >= options_.max_cpus) {
    return Error(where, Cat("CPU ", event.cpu, " outside [0, ", options_.max_cpus,
                            ") (ReadOptions::max_cpus)"));
  }
  max_cpu_seen_ = std::max(max_cpu_seen_, event.cpu);
  if (absl::Status s = Order(event, where); !s.ok()) return s;
  if (!info_sent_) {
    pending_.emplace_back(PendingEvent{event, std::string(where)});
    if (pending_.size() >= kInfoScanEvents) return SendInfo();
    return absl::OkStatus();
  }
  if (!sink_error_.ok()) return sink_error_;
  return Deliver(event, where);
}

absl::Status Emitter::SendInfo() {
  if (info_sent_) return sink_error_;
  // Flags fill what the file does not say (or everything, with override_file).
  const bool over = options_.override_file;
  if (options_.num_cpus > 0 && (over || info_.num_cpus_source == InfoSource::kUnknown)) {
    info_.num_cpus = options_.num_cpus;
    info_.num_cpus_source = InfoSource::kFlag;
  }
  if (info_.num_cpus_source == InfoSource::kUnknown && max_cpu_seen_ >= 0) {
    info_.num_cpus = max_cpu_seen_ + 1;
    info_.num_cpus_source = InfoSource::kInferred;
    info_.notes.push_back(Cat("the file does not state its CPU count: ", info_.num_cpus,
                              " inferred from the highest CPU of the first events (pass --cpus "
                              "to state it)"));
  }
  if (!options_.topology.empty() && (over || info_.topology_source == InfoSource::kUnknown)) {
    info_.topology = options_.topology;
    info_.core_of.clear();
    info_.llc_of.clear();
    info_.node_of.clear();
    info_.package_of.clear();
    info_.topology_source = InfoSource::kFlag;
  }
  if (!options_.kernel_release.empty() && (over || info_.kernel_source == InfoSource::kUnknown)) {
    info_.kernel_release = options_.kernel_release;
    info_.kernel_source = InfoSource::kFlag;
  }
  if ((!options_.isolcpus.empty() || !options_.nohz_full.empty()) &&
      (over || info_.isolation_source == InfoSource::kUnknown)) {
    info_.isolcpus = options_.isolcpus;
    info_.nohz_full = options_.nohz_full;
    info_.isolation_source = InfoSource::kFlag;
  }
  if (options_.hz > 0 && (over || info_.hz_source == InfoSource::kUnknown)) {
    info_.hz = options_.hz;
    info_.hz_source = InfoSource::kFlag;
  }
  if (info_.num_cpus <= 0) {
    return absl::InvalidArgumentError(
        Cat(path_, ": no events and no CPU count: nothing to replay (pass --cpus)"));
  }
  if (info_.num_cpus > options_.max_cpus) {
    return absl::InvalidArgumentError(Cat(path_, ": ", info_.num_cpus, " CPUs is more than the ",
                                          options_.max_cpus, " a replay supports"));
  }
  if (!info_.ns_timestamps) {
    info_.notes.push_back(
        "timestamps are in microseconds (print them in ns: trace-cmd report -t, perf script --ns)");
  }
  info_sent_ = true;
  // Sticky: a sink that refused the info (a bad option, a machine that does
  // not fit) gets no event after it, whoever calls next.
  sink_error_ = sink_.OnInfo(info_);
  if (!sink_error_.ok()) return sink_error_;
  std::vector<Pending> held;
  held.swap(pending_);
  for (Pending& p : held) {
    if (auto* c = std::get_if<PendingComm>(&p)) {
      sink_.OnComm(c->pid, c->comm);
    } else if (auto* m = std::get_if<PendingMarker>(&p)) {
      sink_.OnMarker(m->event, m->text);
      if (absl::Status s = Deliver(m->event, "marker"); !s.ok()) return s;
    } else {
      auto& e = std::get<PendingEvent>(p);
      if (absl::Status s = Deliver(e.event, e.where); !s.ok()) return s;
    }
  }
  return absl::OkStatus();
}

absl::Status Emitter::Check(const Event& e, std::string_view where) const {
  const int n = info_.num_cpus;
  auto cpu_ok = [n](int c) { return c >= 0 && c < n; };
  if (!cpu_ok(e.cpu)) {
    return Error(where, Cat(EventKindName(e.kind), " on CPU ", e.cpu, ", outside the recording's ",
                            n, " CPUs (", InfoSourceName(info_.num_cpus_source), ")"));
  }
  if (e.pid < 0) return Error(where, Cat(EventKindName(e.kind), ": negative pid ", e.pid));
  switch (e.kind) {
    case EventKind::kSwitch:
    case EventKind::kFork:
      if (e.task < 0 || e.other < 0) {
        return Error(where,
                     Cat(EventKindName(e.kind), ": negative pid ", std::min(e.task, e.other)));
      }
      break;
    case EventKind::kWaking:
    case EventKind::kWakeup:
    case EventKind::kWakeupNew:
    case EventKind::kMigrate:
      if (e.task < 0) return Error(where, Cat(EventKindName(e.kind), ": negative pid ", e.task));
      if (!cpu_ok(e.cpu2) || (e.kind == EventKind::kMigrate && !cpu_ok(e.value))) {
        return Error(where, Cat(EventKindName(e.kind), ": CPU ", cpu_ok(e.cpu2) ? e.value : e.cpu2,
                                " outside the recording's ", n, " CPUs"));
      }
      break;
    case EventKind::kNewTask:
    case EventKind::kExec:
    case EventKind::kExit:
      if (e.task < 0) return Error(where, Cat(EventKindName(e.kind), ": negative pid ", e.task));
      break;
    case EventKind::kRseqUpdate:
      if (!cpu_ok(e.cpu2)) {
        return Error(where,
                     Cat("rseq_update: cpu_id ", e.cpu2, " outside the recording's ", n, " CPUs"));
      }
      if (e.value < -1 || e.value >= kMaxCpus) {
        return Error(where, Cat("rseq_update: mm_cid ", e.value, " outside [-1, ", kMaxCpus, ")"));
      }
      break;
    case EventKind::kTmigrCpuIdle:
    case EventKind::kTmigrCpuActive:
    case EventKind::kTmigrCpuNewTimer:
    case EventKind::kTmigrCpuOnline:
    case EventKind::kTmigrCpuOffline:
    case EventKind::kTmigrHandleRemoteCpu:
    case EventKind::kTimerBaseIdle:
    case EventKind::kWorkQueue:
      if (e.cpu2 != -1 && !cpu_ok(e.cpu2)) {  // -1: an unbound queue's pool not chosen yet
        return Error(where, Cat("workqueue_queue_work: cpu ", e.cpu2, " outside the recording's ",
                                n, " CPUs"));
      }
      break;
    case EventKind::kTimerStart:
      if (!cpu_ok(e.cpu2)) {
        return Error(where, Cat(EventKindName(e.kind), ": cpu ", e.cpu2,
                                " outside the recording's ", n, " CPUs"));
      }
      break;
    case EventKind::kTmigrGroupActive:
    case EventKind::kTmigrGroupInactive:
    case EventKind::kTmigrHandleRemote:
    case EventKind::kTmigrUpdateEvents:
      if (e.cpu2 < 0 || e.cpu2 > 16) {
        return Error(where, Cat(EventKindName(e.kind), ": level ", e.cpu2, " outside [0, 16]"));
      }
      break;
    default:
      break;
  }
  return absl::OkStatus();
}

absl::Status Emitter::Deliver(const Event& e, std::string_view where) {
  if (absl::Status s = Check(e, where); !s.ok()) return s;
  ++stats_.events;
  ++stats_.per_kind[static_cast<int>(e.kind)];
  return sink_.OnEvent(e);
}

absl::Status Emitter::Finish() { return SendInfo(); }

}  // namespace internal

namespace {

absl::Status JsonIds(const nlohmann::json& j, const char* key, std::vector<int>& out) {
  if (!j.contains(key)) return absl::OkStatus();
  const nlohmann::json& v = j.at(key);
  if (!v.is_array() || v.size() > static_cast<size_t>(kMaxCpus)) {
    return absl::InvalidArgumentError(
        Cat("isolab-recording marker: '", key, "' is not an array of at most ", kMaxCpus, " ids"));
  }
  out.clear();
  for (const nlohmann::json& x : v) {
    if (!x.is_number_integer() || x.get<int64_t>() < 0 || x.get<int64_t>() >= kMaxCpus) {
      return absl::InvalidArgumentError(Cat("isolab-recording marker: '", key,
                                            "' holds a value that is not an id in [0, ", kMaxCpus,
                                            ")"));
    }
    out.push_back(x.get<int>());
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ApplyRecordingMarker(std::string_view text, RecordingInfo& info) {
  nlohmann::json j =
      nlohmann::json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    return absl::InvalidArgumentError(
        Cat("isolab-recording marker is not a JSON object: '", internal::Escape(text), "'"));
  }
  auto str = [&](const char* key, std::string& out) -> absl::Status {
    if (!j.contains(key)) return absl::OkStatus();
    if (!j.at(key).is_string()) {
      return absl::InvalidArgumentError(
          Cat("isolab-recording marker: '", key, "' is not a string"));
    }
    out = j.at(key).get<std::string>();
    return absl::OkStatus();
  };
  if (j.contains("version") &&
      (!j.at("version").is_number_integer() || j.at("version").get<int64_t>() != 1)) {
    return absl::InvalidArgumentError(Cat("isolab-recording marker version ",
                                          internal::Escape(j.at("version").dump()),
                                          " is not one this reader knows (1)"));
  }
  if (j.contains("cpus")) {
    if (!j.at("cpus").is_number_integer() || j.at("cpus").get<int64_t>() < 1 ||
        j.at("cpus").get<int64_t>() > kMaxCpus) {
      return absl::InvalidArgumentError(
          Cat("isolab-recording marker: 'cpus' is not in [1, ", kMaxCpus, "]"));
    }
    info.num_cpus = j.at("cpus").get<int>();
    info.num_cpus_source = InfoSource::kFile;
  }
  if (j.contains("hz")) {
    if (!j.at("hz").is_number_integer() || j.at("hz").get<int64_t>() < 1 ||
        j.at("hz").get<int64_t>() > 10000) {
      return absl::InvalidArgumentError("isolab-recording marker: 'hz' is not in [1, 10000]");
    }
    info.hz = j.at("hz").get<int>();
    info.hz_source = InfoSource::kFile;
  }
  std::string release;
  if (absl::Status s = str("release", release); !s.ok()) return s;
  if (!release.empty()) {
    info.kernel_release = release;
    info.kernel_source = InfoSource::kFile;
  }
  if (absl::Status s = str("clock", info.trace_clock); !s.ok()) return s;
  if (absl::Status s = str("recorder", info.recorder); !s.ok()) return s;
  if (j.contains("isolcpus") || j.contains("nohz_full")) {
    if (absl::Status s = str("isolcpus", info.isolcpus); !s.ok()) return s;
    if (absl::Status s = str("nohz_full", info.nohz_full); !s.ok()) return s;
    info.isolation_source = InfoSource::kFile;
  }
  RecordingInfo ids;
  for (auto [key, vec] : {std::pair<const char*, std::vector<int>*>{"core_of", &ids.core_of},
                          {"llc_of", &ids.llc_of},
                          {"node_of", &ids.node_of},
                          {"package_of", &ids.package_of}}) {
    if (absl::Status s = JsonIds(j, key, *vec); !s.ok()) return s;
  }
  if (!ids.core_of.empty()) {
    const size_t n = ids.core_of.size();
    if (ids.llc_of.size() != n || ids.node_of.size() != n || ids.package_of.size() != n) {
      return absl::InvalidArgumentError(
          "isolab-recording marker: core_of, llc_of, node_of and package_of differ in length");
    }
    info.core_of = std::move(ids.core_of);
    info.llc_of = std::move(ids.llc_of);
    info.node_of = std::move(ids.node_of);
    info.package_of = std::move(ids.package_of);
    info.topology.clear();
    info.topology_source = InfoSource::kFile;
  }
  return absl::OkStatus();
}

absl::StatusOr<Topology> MachineTopology(const RecordingInfo& info, bool* assumed) {
  if (assumed != nullptr) *assumed = false;
  absl::StatusOr<Topology> topo = absl::InvalidArgumentError("no topology");
  if (!info.core_of.empty()) {
    if (static_cast<int>(info.core_of.size()) != info.num_cpus) {
      return absl::InvalidArgumentError(Cat(info.path, ": the recorded topology has ",
                                            info.core_of.size(), " CPUs, the recording ",
                                            info.num_cpus));
    }
    topo = Topology::FromIds(info.core_of, info.llc_of, info.node_of, info.package_of,
                             Cat("recorded (", info.path, ")"));
  } else if (!info.topology.empty()) {
    topo = Topology::FromSynthetic(info.topology);
  } else {
    if (info.num_cpus <= 0 || info.num_cpus > kMaxCpus) {
      return absl::InvalidArgumentError(Cat(info.path, ": no CPU count to build a machine from"));
    }
    if (assumed != nullptr) *assumed = true;
    topo = Topology::FromSynthetic(Cat("package:1 l3cache:1 core:", info.num_cpus, " pu:1"));
  }
  if (!topo.ok()) {
    return absl::InvalidArgumentError(Cat(info.path, ": topology: ", topo.status().message()));
  }
  if (topo->num_cpus() != info.num_cpus) {
    return absl::InvalidArgumentError(Cat(info.path, ": the topology '", info.topology, "' has ",
                                          topo->num_cpus(), " CPUs, the recording ",
                                          info.num_cpus));
  }
  return topo;
}

std::string_view TraceFormatName(TraceFormat format) {
  switch (format) {
    case TraceFormat::kAuto:
      return "auto";
    case TraceFormat::kTraceDat:
      return "trace.dat";
    case TraceFormat::kTraceCmdReport:
      return "trace-cmd report";
    case TraceFormat::kPerfScript:
      return "perf script";
  }
  return "auto";
}

absl::StatusOr<TraceFormat> ParseTraceFormat(std::string_view name) {
  const std::string n = absl::AsciiStrToLower(AV(name));
  if (n == "auto" || n.empty()) return TraceFormat::kAuto;
  if (n == "dat" || n == "trace.dat") return TraceFormat::kTraceDat;
  if (n == "report" || n == "trace-cmd" || n == "trace-cmd-report")
    return TraceFormat::kTraceCmdReport;
  if (n == "perf" || n == "perf-script") return TraceFormat::kPerfScript;
  return absl::InvalidArgumentError(
      Cat("unknown trace format '", internal::Escape(name), "' (auto, dat, report, perf)"));
}

namespace internal {
absl::Status ReadTraceDat(const std::string& path, const ReadOptions& options, EventSink& sink,
                          ReadStats& stats, const std::string& name);
absl::Status ReadTextStream(std::istream& in, const std::string& name, TraceFormat format,
                            const ReadOptions& options, EventSink& sink, ReadStats& stats);
}  // namespace internal

namespace {

bool IsGzip(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char magic[2] = {0, 0};
  in.read(magic, 2);
  return in.gcount() == 2 && static_cast<unsigned char>(magic[0]) == 0x1f &&
         static_cast<unsigned char>(magic[1]) == 0x8b;
}

// The first bytes of `path`, decompressed if it is gzip.
absl::StatusOr<std::string> Head(const std::string& path, size_t n) {
  std::string head(n, '\0');
  if (IsGzip(path)) {
    gzFile gz = gzopen(path.c_str(), "rb");
    if (gz == nullptr)
      return absl::NotFoundError(Cat(path, ": cannot open: ", std::strerror(errno)));
    const int got = gzread(gz, head.data(), static_cast<unsigned>(n));
    gzclose(gz);
    if (got < 0) return absl::InvalidArgumentError(Cat(path, ": corrupt gzip data"));
    head.resize(static_cast<size_t>(got));
    return head;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(Cat(path, ": cannot open: ", std::strerror(errno)));
  in.read(head.data(), static_cast<std::streamsize>(n));
  head.resize(static_cast<size_t>(in.gcount()));
  return head;
}

}  // namespace

absl::StatusOr<TraceFormat> DetectFormat(const std::string& path) {
  absl::StatusOr<std::string> h = Head(path, 64 * 1024);
  if (!h.ok()) return h.status();
  const std::string& head = *h;
  if (head.empty()) return absl::InvalidArgumentError(Cat(path, ": empty file"));
  if (head.size() >= 10 && head.compare(0, 3, "\x17\x08\x44") == 0 &&
      head.compare(3, 7, "tracing") == 0) {
    return TraceFormat::kTraceDat;
  }
  if (std::string_view(head).starts_with("PERFILE2")) {
    return absl::InvalidArgumentError(
        Cat(path, ": a perf.data file: convert it with `perf script --ns --header -I -i ", path,
            " > trace.txt`"));
  }
  const TraceFormat f = internal::DetectTextFormat(head);
  if (f == TraceFormat::kAuto) {
    return absl::InvalidArgumentError(Cat(
        path, ": neither a trace.dat nor `trace-cmd report` / `perf script` text (first bytes: '",
        internal::Escape(head, 40), "')"));
  }
  return f;
}

absl::Status ReadTrace(const std::string& path, const ReadOptions& options, EventSink& sink,
                       ReadStats* stats) {
  ReadStats local;
  ReadStats& st = stats != nullptr ? *stats : local;
  st = ReadStats{};
  TraceFormat format = options.format;
  if (format == TraceFormat::kAuto) {
    absl::StatusOr<TraceFormat> f = DetectFormat(path);
    if (!f.ok()) return f.status();
    format = *f;
  }
  if (IsGzip(path)) {
    gzFile gz = gzopen(path.c_str(), "rb");
    if (gz == nullptr)
      return absl::NotFoundError(Cat(path, ": cannot open: ", std::strerror(errno)));
    absl::Cleanup close_gz = [gz] { gzclose(gz); };
    if (format != TraceFormat::kTraceDat) {
      bool corrupt = false;
      absl::Status s = internal::ReadTextFill(
          path, format, options, sink, st, [&](char* buf, size_t n) -> size_t {
            const int got = gzread(gz, buf, static_cast<unsigned>(n));
            if (got < 0) corrupt = true;
            return got < 0 ? 0 : static_cast<size_t>(got);
          });
      if (corrupt) return absl::DataLossError(Cat(path, ": corrupt or truncated gzip data"));
      return s;
    }
    // libtracecmd reads a file: the decompressed trace.dat goes to a memory
    // file (bounded by ReadOptions::max_decompressed_bytes).
    const int fd = memfd_create("isolab-trace", MFD_CLOEXEC);
    if (fd < 0) return absl::InternalError(Cat(path, ": memfd_create: ", std::strerror(errno)));
    absl::Cleanup close_fd = [fd] { close(fd); };
    std::vector<char> buf(1 << 20);
    int64_t total = 0;
    while (true) {
      const int got = gzread(gz, buf.data(), static_cast<unsigned>(buf.size()));
      if (got < 0) return absl::DataLossError(Cat(path, ": corrupt or truncated gzip data"));
      if (got == 0) break;
      total += got;
      if (total > options.max_decompressed_bytes) {
        return absl::ResourceExhaustedError(Cat(path, ": decompresses to more than ",
                                                options.max_decompressed_bytes,
                                                " bytes (ReadOptions::max_decompressed_bytes)"));
      }
      if (write(fd, buf.data(), static_cast<size_t>(got)) != got) {
        return absl::InternalError(
            Cat(path, ": writing the decompressed trace: ", std::strerror(errno)));
      }
    }
    return internal::ReadTraceDat(Cat("/proc/self/fd/", fd), options, sink, st, path);
  }
  if (format == TraceFormat::kTraceDat)
    return internal::ReadTraceDat(path, options, sink, st, path);
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(Cat(path, ": cannot open: ", std::strerror(errno)));
  return internal::ReadTextStream(in, path, format, options, sink, st);
}

namespace {

class CollectingSink final : public EventSink {
 public:
  CollectingSink(Recording& r, int64_t max_events) : r_(r), max_events_(max_events) {}
  absl::Status OnInfo(const RecordingInfo& info) override {
    r_.info = info;
    return absl::OkStatus();
  }
  absl::Status OnEvent(const Event& e) override {
    if (static_cast<int64_t>(r_.events.size()) >= max_events_) {
      return absl::ResourceExhaustedError(Cat(r_.info.path, ": more than ", max_events_,
                                              " events (ReadOptions::max_events; replay streams "
                                              "larger recordings without holding them)"));
    }
    r_.events.push_back(e);
    return absl::OkStatus();
  }
  void OnComm(int32_t pid, std::string_view comm) override { r_.comms[pid] = std::string(comm); }
  void OnMarker(const Event&, std::string_view text) override { r_.markers.emplace_back(text); }

 private:
  Recording& r_;
  const int64_t max_events_;
};

}  // namespace

absl::StatusOr<Recording> ReadRecording(const std::string& path, const ReadOptions& options) {
  Recording r;
  CollectingSink sink(r, options.max_events);
  if (absl::Status s = ReadTrace(path, options, sink, &r.stats); !s.ok()) return s;
  return r;
}

}  // namespace isolation::replay
