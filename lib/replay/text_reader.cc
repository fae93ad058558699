// SPDX-License-Identifier: GPL-2.0-or-later
// The text readers: `trace-cmd report` (with and without its sched plugins,
// raw -R, us or ns times, buffer prefixes) and `perf script` (with or without
// --header / -I).  Both print a tracepoint's payload with its print format,
// so one payload decoder serves both; only the line prefix differs.
//
// Line shapes:
//   trace-cmd  "[buf: ]<comm>-<pid> [<cpu>] [<latency flags> ]<sec>.<frac>: <event>: <payload>"
//   perf       "<comm> <pid>[/<tid>] [<cpu>] <sec>.<frac>: <system>:<event>: <payload>"

#include <algorithm>
#include <array>
#include <cstring>
#include <istream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "isolation/core/cpumask.h"
#include "isolation/replay/readers.h"
#include "replay/event_names.h"
#include "replay/reader_internal.h"

namespace isolation::replay {
namespace internal {
namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

// The payload's "key=value" fields.  A key counts only at the payload's
// start or after a space; a value runs to the next space, or -- for the
// free-text fields (comm, filename, buf) -- to the next known key.
class Fields {
 public:
  explicit Fields(std::string_view payload) : p_(payload) {}

  // Position of the value of `key`, or npos.
  size_t ValueStart(std::string_view key) const {
    size_t from = 0;
    while (from < p_.size()) {
      const size_t at = p_.find(key, from);
      if (at == std::string_view::npos) return at;
      const size_t eq = at + key.size();
      if ((at == 0 || p_[at - 1] == ' ') && eq < p_.size() && p_[eq] == '=') return eq + 1;
      from = at + 1;
    }
    return std::string_view::npos;
  }
  bool Has(std::string_view key) const { return ValueStart(key) != std::string_view::npos; }
  // A space-delimited value.
  bool Word(std::string_view key, std::string_view& out) const {
    const size_t v = ValueStart(key);
    if (v == std::string_view::npos) return false;
    size_t end = p_.find(' ', v);
    if (end == std::string_view::npos) end = p_.size();
    out = p_.substr(v, end - v);
    return true;
  }
  // A free-text value: up to " <next_key>=" (the last such key after it),
  // or the end when next_key is empty.
  bool Text(std::string_view key, std::string_view next_key, std::string_view& out) const {
    const size_t v = ValueStart(key);
    if (v == std::string_view::npos) return false;
    size_t end = p_.size();
    if (!next_key.empty()) {
      const std::string needle = Cat(" ", next_key, "=");
      const size_t n = p_.find(needle, v);
      if (n == std::string_view::npos) return false;
      end = n;
    }
    out = p_.substr(v, end - v);
    return true;
  }
  bool Int(std::string_view key, int32_t& out) const {
    std::string_view w;
    return Word(key, w) && ParseInt32(w, out);
  }
  bool I64(std::string_view key, int64_t& out) const {
    std::string_view w;
    return Word(key, w) && ParseDec(w, out);
  }
  bool U64(std::string_view key, uint64_t& out) const {
    std::string_view w;
    return Word(key, w) && ParseU64(w, out);
  }
  bool Hex(std::string_view key, uint64_t& out) const {
    std::string_view w;
    return Word(key, w) && ParseHex(w, out);
  }
  bool Ptr(std::string_view key, uint64_t& out) const {
    std::string_view w;
    return Word(key, w) && ParsePointer(w, out);
  }

 private:
  std::string_view p_;
};

// "comm:pid [prio]" of trace-cmd's sched plugins.
bool ParsePluginTask(std::string_view s, std::string_view& comm, int32_t& pid, int16_t& prio) {
  s = Trim(s);
  const size_t open = s.rfind(" [");
  if (open == std::string_view::npos || s.back() != ']') return false;
  int32_t p;
  if (!ParseInt32(s.substr(open + 2, s.size() - open - 3), p) || p < -1 || p > 32767) return false;
  prio = static_cast<int16_t>(p);
  const std::string_view task = s.substr(0, open);
  const size_t colon = task.rfind(':');
  if (colon == std::string_view::npos) return false;
  comm = task.substr(0, colon);
  return ParseInt32(task.substr(colon + 1), pid);
}

// The highest-level cache line of `perf script --header -I` ("#  L3 Unified 491520K [0-1]").
struct PerfHeader {
  std::vector<int> core, socket;
  std::vector<std::pair<int, std::string>> caches;  // (level, cpu list)
  std::vector<std::string> nodes;                   // node i's cpu list
  int nrcpus_avail = 0;
  int nrcpus_online = 0;
  std::string release;
};

class TextParser {
 public:
  TextParser(const std::string& name, TraceFormat format, const ReadOptions& options,
             EventSink& sink, ReadStats& stats)
      : name_(name),
        format_(format),
        options_(options),
        stats_(stats),
        emit_(name, TraceFormatName(format), options, sink, stats) {}

  absl::Status Line(std::string_view line, int64_t lineno) {
    ++stats_.lines;
    line = Trim(line);
    if (line.empty()) return absl::OkStatus();
    absl::Status s = ParseLine(line, lineno);
    if (!s.ok() && absl::IsInvalidArgument(s) && bad_budget_ok()) {
      ++stats_.bad_lines;
      if (first_bad_.empty()) first_bad_ = std::string(SV(s.message()));
      return absl::OkStatus();
    }
    return s;
  }

  absl::Status Finish() {
    if (stats_.bad_lines > 0) {
      emit_.info().notes.push_back(
          Cat(stats_.bad_lines, " malformed lines skipped (first: ", first_bad_, ")"));
    }
    ApplyPerfHeader();
    return emit_.Finish();
  }

 private:
  bool bad_budget_ok() const { return stats_.bad_lines < options_.max_bad_lines; }

  absl::Status Bad(int64_t lineno, std::string_view line, std::string_view what) const {
    return absl::InvalidArgumentError(
        Cat(name_, ": line ", lineno, ": ", what, ": '", Escape(line), "'"));
  }

  absl::Status ParseLine(std::string_view line, int64_t lineno) {
    if (line[0] == '#') {
      if (format_ == TraceFormat::kPerfScript) HeaderLine(line);
      return absl::OkStatus();
    }
    if (format_ == TraceFormat::kTraceCmdReport) {
      if (line.starts_with("cpus=")) {
        int cpus;
        if (!ParseSmallInt(line.substr(5), cpus) || cpus < 1 || cpus > kMaxCpus) {
          return Bad(lineno, line, Cat("a CPU count in [1, ", kMaxCpus, "]"));
        }
        emit_.SetFileCpus(cpus);
        return absl::OkStatus();
      }
      if (line.starts_with("version =") || line.starts_with("version=") ||
          (line.starts_with("CPU ") && line.ends_with(" is empty"))) {
        return absl::OkStatus();
      }
      // "CPU:1 [LOST 123 EVENTS]"
      if (line.starts_with("CPU:") && Contains(line, "[LOST ")) {
        const size_t at = line.find("[LOST ") + 6;
        const size_t sp = line.find(' ', at);
        int64_t n;
        if (sp != std::string_view::npos && ParseDec(line.substr(at, sp - at), n) && n >= 0) {
          stats_.lost_events += n;
        }
        return absl::OkStatus();
      }
    }
    return EventLine(line, lineno);
  }

  // perf script --header [-I].
  void HeaderLine(std::string_view line) {
    line.remove_prefix(1);
    const size_t colon = line.find(" : ");
    auto value = [&](std::string_view key) -> std::string_view {
      const std::string_view k = Trim(line.substr(0, colon));
      if (colon == std::string_view::npos || k != key) return {};
      return Trim(line.substr(colon + 3));
    };
    if (std::string_view v = value("os release"); !v.empty()) perf_.release = std::string(v);
    if (std::string_view v = value("nrcpus avail"); !v.empty())
      (void)ParseSmallInt(v, perf_.nrcpus_avail);
    if (std::string_view v = value("nrcpus online"); !v.empty()) {
      (void)ParseSmallInt(v, perf_.nrcpus_online);
    }
    // "# CPU 0: Core ID 0, Die ID 0, Socket ID 0"
    std::string_view t = Trim(line);
    if (ConsumePrefix(t, "CPU ")) {
      const size_t c = t.find(':');
      int cpu;
      if (c != std::string_view::npos && ParseSmallInt(t.substr(0, c), cpu) && cpu >= 0 &&
          cpu < kMaxCpus) {
        int core = -1;
        int socket = -1;
        for (std::string_view part : Split(t.substr(c + 1), ',')) {
          part = Trim(part);
          if (ConsumePrefix(part, "Core ID ")) (void)ParseSmallInt(part, core);
          if (ConsumePrefix(part, "Socket ID ")) (void)ParseSmallInt(part, socket);
        }
        if (static_cast<int>(perf_.core.size()) <= cpu) {
          perf_.core.resize(static_cast<size_t>(cpu) + 1, -1);
          perf_.socket.resize(static_cast<size_t>(cpu) + 1, -1);
        }
        perf_.core[static_cast<size_t>(cpu)] = core;
        perf_.socket[static_cast<size_t>(cpu)] = socket;
      }
    }
    // "#  L3 Unified          491520K [0-1]"
    if (t.size() > 2 && t[0] == 'L' && IsDigit(t[1]) && Contains(t, " [") && t.back() == ']') {
      perf_.caches.emplace_back(
          t[1] - '0', std::string(t.substr(t.rfind(" [") + 2, t.size() - t.rfind(" [") - 3)));
    }
    // "# node0 cpu list : 0-1"
    if (t.starts_with("node") && colon != std::string_view::npos &&
        Contains(line.substr(0, colon), "cpu list")) {
      perf_.nodes.emplace_back(value(Trim(line.substr(0, colon))));
    }
  }

  void ApplyPerfHeader() {
    if (format_ != TraceFormat::kPerfScript) return;
    const int cpus = perf_.nrcpus_avail > 0 ? perf_.nrcpus_avail : perf_.nrcpus_online;
    emit_.SetFileCpus(cpus);
    emit_.SetFileRelease(perf_.release);
    RecordingInfo& info = emit_.info();
    if (info.topology_source != InfoSource::kUnknown || cpus <= 0 ||
        static_cast<int>(perf_.core.size()) != cpus) {
      return;
    }
    // Per-CPU ids: cores and packages from "CPU n:", the LLC from the
    // highest cache level's shared lists, nodes from "nodeN cpu list".
    std::vector<int> core(static_cast<size_t>(cpus)), llc(static_cast<size_t>(cpus), -1),
        node(static_cast<size_t>(cpus), 0), pkg(static_cast<size_t>(cpus));
    std::vector<std::pair<int, int>> core_keys;
    for (int c = 0; c < cpus; ++c) {
      if (perf_.core[static_cast<size_t>(c)] < 0 || perf_.socket[static_cast<size_t>(c)] < 0)
        return;
      pkg[static_cast<size_t>(c)] = perf_.socket[static_cast<size_t>(c)];
      const std::pair<int, int> key{perf_.socket[static_cast<size_t>(c)],
                                    perf_.core[static_cast<size_t>(c)]};
      auto it = std::find(core_keys.begin(), core_keys.end(), key);
      core[static_cast<size_t>(c)] = static_cast<int>(it - core_keys.begin());
      if (it == core_keys.end()) core_keys.push_back(key);
    }
    int top = 0;
    for (const auto& [level, list] : perf_.caches) top = std::max(top, level);
    int next_llc = 0;
    for (const auto& [level, list] : perf_.caches) {
      if (level != top) continue;
      absl::StatusOr<CpuMask> m = CpuMask::Parse(list, cpus);
      if (!m.ok()) return;
      bool fresh = true;
      for (int c = m->First(); c < cpus; c = m->Next(c)) {
        if (llc[static_cast<size_t>(c)] >= 0) fresh = false;
      }
      if (!fresh) continue;  // the same shared list again (one line per sharing group)
      const int id = next_llc++;
      for (int c = m->First(); c < cpus; c = m->Next(c)) llc[static_cast<size_t>(c)] = id;
    }
    for (int& l : llc) {
      if (l < 0) l = next_llc++;  // a CPU no cache line names: its own LLC
    }
    for (size_t n = 0; n < perf_.nodes.size(); ++n) {
      absl::StatusOr<CpuMask> m = CpuMask::Parse(perf_.nodes[n], cpus);
      if (!m.ok()) return;
      for (int c = m->First(); c < cpus; c = m->Next(c))
        node[static_cast<size_t>(c)] = static_cast<int>(n);
    }
    // Packages dense from 0.
    std::vector<int> pkg_ids;
    for (int& p : pkg) {
      auto it = std::find(pkg_ids.begin(), pkg_ids.end(), p);
      const int id = static_cast<int>(it - pkg_ids.begin());
      if (it == pkg_ids.end()) pkg_ids.push_back(p);
      p = id;
    }
    info.core_of = std::move(core);
    info.llc_of = std::move(llc);
    info.node_of = std::move(node);
    info.package_of = std::move(pkg);
    info.topology_source = InfoSource::kFile;
  }

  absl::Status EventLine(std::string_view line, int64_t lineno) {
    // The CPU field: the first "[digits]" followed by a timestamp.
    size_t search = 0;
    size_t cpu_open = std::string_view::npos;
    size_t after_cpu = 0;
    int cpu = -1;
    std::string_view stamp;
    while (true) {
      const size_t open = line.find('[', search);
      if (open == std::string_view::npos) break;
      size_t close = open + 1;
      while (close < line.size() && IsDigit(line[close])) ++close;
      search = open + 1;
      if (close == open + 1 || close >= line.size() || line[close] != ']' || close - open > 6)
        continue;
      // Optional latency flags token, then "<sec>.<frac>:".
      std::string_view rest = line.substr(close + 1);
      std::vector<std::string_view> tokens = Split(rest, ' ', true);
      size_t ti = 0;
      auto is_stamp = [](std::string_view t) {
        return t.size() >= 4 && t.back() == ':' && t.find('.') != std::string_view::npos &&
               std::all_of(t.begin(), t.end() - 1, [](char c) { return IsDigit(c) || c == '.'; });
      };
      if (tokens.size() > ti && !is_stamp(tokens[ti]) && tokens[ti].size() <= 8) ++ti;
      if (tokens.size() <= ti || !is_stamp(tokens[ti])) continue;
      int32_t c;
      if (!ParseInt32(line.substr(open + 1, close - open - 1), c)) continue;
      cpu = c;
      cpu_open = open;
      stamp = tokens[ti];
      after_cpu = static_cast<size_t>(stamp.data() + stamp.size() - line.data());
      break;
    }
    if (cpu_open == std::string_view::npos)
      return Bad(lineno, line, "not an event line ([cpu] time: event:)");
    int64_t time;
    bool ns_digits;
    if (!ParseTimestamp(stamp.substr(0, stamp.size() - 1), time, ns_digits)) {
      return Bad(lineno, line, "a timestamp that does not parse");
    }
    if (!ns_digits) emit_.info().ns_timestamps = false;
    // The task that was current: trace-cmd "comm-pid", perf "comm pid[/tid]".
    std::string_view prefix = Trim(line.substr(0, cpu_open));
    int32_t pid = -1;
    if (format_ == TraceFormat::kTraceCmdReport) {
      // An instance's lines start with "<buffer>: ".
      const size_t colon_space = prefix.find(": ");
      if (colon_space != std::string_view::npos && prefix.find(' ') > colon_space) {
        const std::string_view buffer = prefix.substr(0, colon_space);
        if (buffer_.empty() && !buffer_chosen_) {
          buffer_ = options_.buffer.empty() ? std::string(buffer) : options_.buffer;
          buffer_chosen_ = true;
        }
        if (buffer != buffer_) {
          ++stats_.skipped;
          return absl::OkStatus();
        }
        prefix = Trim(prefix.substr(colon_space + 2));
      } else {
        if (!buffer_chosen_) {
          buffer_ = options_.buffer;
          buffer_chosen_ = true;
        }
        if (!buffer_.empty()) {
          ++stats_.skipped;
          return absl::OkStatus();
        }
      }
      const size_t dash = prefix.rfind('-');
      if (dash == std::string_view::npos || !ParseInt32(prefix.substr(dash + 1), pid)) {
        return Bad(lineno, line, "no <comm>-<pid> before the CPU");
      }
    } else {
      const size_t sp = prefix.rfind(' ');
      std::string_view id = sp == std::string_view::npos ? prefix : prefix.substr(sp + 1);
      const size_t slash = id.find('/');
      if (slash != std::string_view::npos) id = id.substr(slash + 1);
      if (!ParseInt32(id, pid)) return Bad(lineno, line, "no <comm> <pid> before the CPU");
    }
    // Event name and payload.
    std::string_view rest = Trim(line.substr(after_cpu));
    const size_t name_end = rest.find(' ');
    std::string_view name = name_end == std::string_view::npos ? rest : rest.substr(0, name_end);
    if (name.empty() || name.back() != ':')
      return Bad(lineno, line, "no '<event>:' after the time");
    name.remove_suffix(1);
    const std::string_view payload =
        name_end == std::string_view::npos ? "" : Trim(rest.substr(name_end));
    const TracepointName* tp = FindTracepoint(name);
    if (tp == nullptr) {
      NoteSkipped(name);
      return absl::OkStatus();
    }
    is_new_timer_idle_ = tp->name == "tmigr_cpu_new_timer_idle";
    Event e;
    e.time = time;
    e.cpu = cpu;
    e.pid = pid;
    e.kind = tp->kind;
    const std::string where = Cat("line ", lineno);
    bool keep = true;
    std::string_view marker_text;
    if (absl::Status s = Payload(tp->kind, payload, e, keep, marker_text); !s.ok()) {
      return Bad(lineno, line, Cat(tp->full_name, ": ", SV(s.message())));
    }
    if (!keep) {
      NoteSkipped(name);
      return absl::OkStatus();
    }
    if (tp->kind == EventKind::kMarker) return emit_.Marker(e, marker_text, where);
    // A switch's current task is its prev (perf prints -1 for a task it
    // no longer knows, after its exit).
    if (tp->kind == EventKind::kSwitch) e.pid = e.other;
    if (e.pid < 0) {
      // perf: the task is gone from its thread map; the event cannot be
      // placed on a task.
      NoteSkipped(Cat(tp->full_name, " of an unknown task (pid -1)"));
      return absl::OkStatus();
    }
    return emit_.Add(e, where);
  }

  void NoteSkipped(std::string_view name) {
    ++stats_.skipped;
    if (stats_.skipped_names.size() < 64 || stats_.skipped_names.contains(AV(name))) {
      ++stats_.skipped_names[std::string(name)];
    }
  }

  absl::Status Comm(int32_t pid, std::string_view comm) { return emit_.Comm(pid, comm); }

  static absl::Status Missing(std::string_view what) {
    return absl::InvalidArgumentError(Cat("missing or malformed ", what));
  }

  // Decodes `payload` into `e` (the table in recording.h).  keep=false: an
  // event the readers skip (an hrtimer that is not the tick).
  absl::Status Payload(EventKind kind, std::string_view payload, Event& e, bool& keep,
                       std::string_view& marker_text) {
    Fields f(payload);
    switch (kind) {
      case EventKind::kSwitch:
        return Switch(payload, f, e);
      case EventKind::kWaking:
      case EventKind::kWakeup:
      case EventKind::kWakeupNew: {
        if (!f.Has("pid")) {
          // trace-cmd's sched_wakeup plugin: "comm:pid [prio] CPU:000"
          const size_t cpu_at = payload.rfind(" CPU:");
          std::string_view comm;
          if (cpu_at == std::string_view::npos ||
              !ParsePluginTask(payload.substr(0, cpu_at), comm, e.task, e.prio)) {
            return Missing("comm:pid [prio] CPU:nnn");
          }
          std::string_view c = payload.substr(cpu_at + 5);
          const size_t sp = c.find(' ');
          if (sp != std::string_view::npos) c = c.substr(0, sp);
          if (!ParseInt32(c, e.cpu2)) return Missing("CPU:nnn");
          return Comm(e.task, comm);
        }
        std::string_view comm;
        int32_t prio;
        if (!f.Text("comm", "pid", comm) || !f.Int("pid", e.task) || !f.Int("prio", prio) ||
            !f.Int("target_cpu", e.cpu2)) {
          return Missing("comm, pid, prio or target_cpu");
        }
        e.prio = static_cast<int16_t>(std::clamp(prio, -1, 32767));
        return Comm(e.task, comm);
      }
      case EventKind::kMigrate: {
        std::string_view comm;
        int32_t prio;
        if (!f.Text("comm", "pid", comm) || !f.Int("pid", e.task) || !f.Int("prio", prio) ||
            !f.Int("orig_cpu", e.cpu2) || !f.Int("dest_cpu", e.value)) {
          return Missing("comm, pid, prio, orig_cpu or dest_cpu");
        }
        e.prio = static_cast<int16_t>(std::clamp(prio, -1, 32767));
        return Comm(e.task, comm);
      }
      case EventKind::kFork: {
        std::string_view parent_comm;
        std::string_view child_comm;
        const bool raw = f.Has("parent_pid");
        if (!f.Text(raw ? "parent_comm" : "comm", raw ? "parent_pid" : "pid", parent_comm) ||
            !f.Int(raw ? "parent_pid" : "pid", e.other) ||
            !f.Text("child_comm", "child_pid", child_comm) || !f.Int("child_pid", e.task)) {
          return Missing("comm, pid, child_comm or child_pid");
        }
        if (absl::Status s = Comm(e.other, parent_comm); !s.ok()) return s;
        return Comm(e.task, child_comm);
      }
      case EventKind::kNewTask: {
        std::string_view comm;
        uint64_t flags;
        if (!f.Int("pid", e.task) || !f.Text("comm", "clone_flags", comm) ||
            !f.Hex("clone_flags", flags)) {
          return Missing("pid, comm or clone_flags");
        }
        e.wide = static_cast<int64_t>(flags);
        return Comm(e.task, comm);
      }
      case EventKind::kExec: {
        std::string_view filename;
        if (!f.Text("filename", "pid", filename) || !f.Int("pid", e.task) ||
            !f.Int("old_pid", e.other)) {
          return Missing("filename, pid or old_pid");
        }
        return Comm(e.task, ExecComm(filename));
      }
      case EventKind::kExit: {
        std::string_view comm;
        int32_t prio;
        if (!f.Text("comm", "pid", comm) || !f.Int("pid", e.task) || !f.Int("prio", prio)) {
          return Missing("comm, pid or prio");
        }
        e.prio = static_cast<int16_t>(std::clamp(prio, -1, 32767));
        return absl::OkStatus();
      }
      case EventKind::kRseqUpdate: {
        int32_t node;
        if (!f.Int("cpu_id", e.cpu2) || !f.Int("node_id", node) || !f.Int("mm_cid", e.value)) {
          return Missing("cpu_id, node_id or mm_cid");
        }
        e.task = e.pid;
        e.wide = node;
        return absl::OkStatus();
      }
      case EventKind::kTmigrCpuIdle:
      case EventKind::kTmigrCpuNewTimer: {
        // tmigr_cpu_new_timer (not _idle) carries no nextevt: wide = -1.
        uint64_t next = 0;
        const bool needs_next = kind == EventKind::kTmigrCpuIdle || is_new_timer_idle_;
        if (!f.Int("cpu", e.cpu2) || !f.Ptr("parent", e.ptr) ||
            (needs_next && !f.U64("nextevt", next))) {
          return Missing("cpu, parent or nextevt");
        }
        e.wide = needs_next ? static_cast<int64_t>(next) : -1;
        e.value = kind == EventKind::kTmigrCpuNewTimer && is_new_timer_idle_ ? 1 : 0;
        return absl::OkStatus();
      }
      case EventKind::kTmigrCpuActive:
      case EventKind::kTmigrCpuOnline:
      case EventKind::kTmigrCpuOffline:
      case EventKind::kTmigrHandleRemoteCpu: {
        uint64_t wakeup = 0;
        if (!f.Int("cpu", e.cpu2) || !f.Ptr("parent", e.ptr)) return Missing("cpu or parent");
        if (f.Has("wakeup") && !f.U64("wakeup", wakeup)) return Missing("wakeup");
        e.wide = static_cast<int64_t>(wakeup);
        return absl::OkStatus();
      }
      case EventKind::kTmigrGroupActive:
      case EventKind::kTmigrGroupInactive: {
        uint64_t parent;
        uint64_t childmask;
        uint64_t active;
        uint64_t migrator;
        int32_t numa = 0;
        // "%0x" in the print format; trace-cmd report -R (its "numa_node="
        // key) prints the fields in decimal.
        const bool raw = f.Has("numa_node");
        auto num = [&](std::string_view key, uint64_t& out) {
          if (!raw) return f.Hex(key, out);
          int64_t v;
          if (!f.I64(key, v) || v < 0) return false;
          out = static_cast<uint64_t>(v);
          return true;
        };
        if (!f.Ptr("group", e.ptr) || !f.Int("lvl", e.cpu2) || !f.Ptr("parent", parent) ||
            !num("childmask", childmask) || !num("active", active) || !num("migrator", migrator) ||
            !(f.Int("numa", numa) || f.Int("numa_node", numa)) || childmask > 0xffffffffULL ||
            active > 0xff || migrator > 0xff) {
          return Missing("group, lvl, numa, parent, childmask, active or migrator");
        }
        e.wide = static_cast<int64_t>(parent);
        e.value = static_cast<int32_t>(childmask);
        e.aux = static_cast<uint8_t>(active);
        e.aux2 = static_cast<uint8_t>(migrator);
        e.other = numa;
        return absl::OkStatus();
      }
      case EventKind::kTmigrHandleRemote:
        if (!f.Ptr("group", e.ptr) || !f.Int("lvl", e.cpu2)) return Missing("group or lvl");
        return absl::OkStatus();
      case EventKind::kTmigrUpdateEvents: {
        uint64_t next;
        uint64_t child_active;
        uint64_t group_active;
        // As above: -R (its "group_next_expiry=" key) prints decimal.
        const bool raw = f.Has("group_next_expiry");
        auto num = [&](std::string_view key, uint64_t& out) {
          if (!raw) return f.Hex(key, out);
          int64_t v;
          if (!f.I64(key, v) || v < 0) return false;
          out = static_cast<uint64_t>(v);
          return true;
        };
        if (!f.Ptr("group", e.ptr) || !f.Int("group_lvl", e.cpu2) || !f.U64("nextevt", next) ||
            !f.Int("child_evtcpu", e.value) || !num("child_active", child_active) ||
            !num("group_active", group_active) || child_active > 0xff || group_active > 0xff) {
          return Missing("group, group_lvl, nextevt, child_evtcpu, child_active or group_active");
        }
        e.wide = static_cast<int64_t>(next);
        e.aux = static_cast<uint8_t>(child_active);
        e.aux2 = static_cast<uint8_t>(group_active);
        return absl::OkStatus();
      }
      case EventKind::kTimerStart: {
        uint64_t expires;
        if (!f.Ptr("timer", e.ptr) || !f.U64("expires", expires))
          return Missing("timer or expires");
        e.wide = static_cast<int64_t>(expires);
        std::string_view flags_text;
        uint64_t raw;
        if (f.Word("flags", flags_text) && ParseU64(flags_text, raw) && raw <= 0xffffffffULL) {
          // trace-cmd -R: the field itself.
          e.value = static_cast<int32_t>(raw);
          e.cpu2 = TimerFlags::Cpu(static_cast<uint32_t>(raw));
          e.aux = 1;
          return absl::OkStatus();
        }
        // The pretty print: cpu and idx are right, the flag letters are not
        // (libtraceevent applies the mask to the first flag only), but a
        // MIGRATING letter is printed only when the bit is set.
        int32_t idx;
        if (!f.Int("cpu", e.cpu2) || !f.Int("idx", idx) || idx < 0 || idx > 1023 || e.cpu2 < 0 ||
            e.cpu2 > static_cast<int32_t>(TimerFlags::kCpuMask)) {
          return Missing("cpu, idx or flags");
        }
        uint32_t flags = static_cast<uint32_t>(e.cpu2) | (static_cast<uint32_t>(idx) << 22);
        if (Contains(flags_text, "M")) flags |= TimerFlags::kMigrating;
        e.value = static_cast<int32_t>(flags);
        e.aux = 0;
        if (!noted_timer_flags_) {
          noted_timer_flags_ = true;
          emit_.info().notes.push_back(
              "timer_start flags come from the pretty print, which misprints PINNED and "
              "DEFERRABLE: "
              "pinned/global is unknown for each timer (trace.dat or trace-cmd report -R carry "
              "it)");
        }
        return absl::OkStatus();
      }
      case EventKind::kTimerExpire: {
        uint64_t now;
        if (!f.Ptr("timer", e.ptr) || !f.U64("now", now)) return Missing("timer or now");
        e.wide = static_cast<int64_t>(now);
        return absl::OkStatus();
      }
      case EventKind::kTimerBaseIdle: {
        if (!f.Int("is_idle", e.value) || !f.Int("cpu", e.cpu2)) return Missing("is_idle or cpu");
        return absl::OkStatus();
      }
      case EventKind::kTickStop: {
        std::string_view dep;
        if (!f.Int("success", e.value) || !f.Word("dependency", dep))
          return Missing("success or dependency");
        e.wide = TickDependency(dep);
        if (e.wide < 0) return Missing("dependency");
        return absl::OkStatus();
      }
      case EventKind::kTick: {
        std::string_view fn;
        if (!f.Word("function", fn)) return Missing("function");
        if (fn.starts_with("0x") && !noted_hrtimer_address_) {
          noted_hrtimer_address_ = true;
          emit_.info().notes.push_back(
              "hrtimer_expire_entry functions are printed as addresses (trace-cmd report -R): the "
              "tick "
              "cannot be told from other hrtimers, so no ticks are replayed");
        }
        keep = TickHandlerName(fn);
        e.task = e.pid;
        int64_t now = 0;
        if (keep && f.Has("now") && !f.I64("now", now)) return Missing("now");
        e.wide = now;  // the hrtimer base's CLOCK_MONOTONIC time
        return absl::OkStatus();
      }
      case EventKind::kWorkExecute: {
        // "work struct 0x...: function NAME" (print format) or "work=0x... function=NAME" (-R).
        std::string_view fn;
        std::string_view work;
        if (f.Word("function", fn) && f.Word("work", work)) {
          if (!ParsePointer(work, e.ptr)) return Missing("work");
        } else {
          std::string_view p = payload;
          if (!ConsumePrefix(p, "work struct ")) return Missing("work struct ...: function ...");
          const size_t colon = p.find(':');
          const size_t fat = p.find(" function ");
          if (colon == std::string_view::npos || fat == std::string_view::npos ||
              !ParsePointer(p.substr(0, colon), e.ptr)) {
            return Missing("work struct ...: function ...");
          }
          fn = Trim(p.substr(fat + 10));
        }
        e.value = static_cast<int32_t>(WorkFunctionOf(fn));
        return absl::OkStatus();
      }
      case EventKind::kWorkQueue: {
        // "work struct=0x... function=vmstat_update workqueue=mm_percpu_wq req_cpu=0 cpu=0"
        // (-R: "work=0x...").
        std::string_view fn;
        int32_t req;
        if (!(f.Ptr("work struct", e.ptr) || f.Ptr("work", e.ptr) ||
              ParseStructWork(payload, e.ptr)) ||
            !f.Word("function", fn) || !f.Int("req_cpu", req) || !f.Int("cpu", e.cpu2)) {
          return Missing("work, function, req_cpu or cpu");
        }
        e.wide = req;
        e.value = static_cast<int32_t>(WorkFunctionOf(fn));
        return absl::OkStatus();
      }
      case EventKind::kMarker: {
        // "tracing_mark_write: TEXT" (print format) or "ip=... buf=TEXT" (-R).
        std::string_view text;
        if (f.Text("buf", "", text) && f.Has("ip")) {
          marker_text = text;
          return absl::OkStatus();
        }
        const size_t colon = payload.find(": ");
        marker_text = colon == std::string_view::npos ? payload : payload.substr(colon + 2);
        return absl::OkStatus();
      }
    }
    return absl::OkStatus();
  }

  absl::Status Switch(std::string_view payload, const Fields& f, Event& e) {
    const size_t arrow = payload.rfind(" ==> ");
    std::string_view prev_comm;
    std::string_view next_comm;
    int32_t prev_prio;
    int32_t next_prio;
    if (f.Has("prev_pid")) {
      std::string_view state;
      if (!f.Text("prev_comm", "prev_pid", prev_comm) || !f.Int("prev_pid", e.other) ||
          !f.Int("prev_prio", prev_prio) || !f.Word("prev_state", state) ||
          !f.Text("next_comm", "next_pid", next_comm) || !f.Int("next_pid", e.task) ||
          !f.Int("next_prio", next_prio)) {
        return Missing(
            "prev_comm, prev_pid, prev_prio, prev_state, next_comm, next_pid or next_prio");
      }
      int64_t raw;
      if (ParseDec(state, raw)) {
        e.value = static_cast<int32_t>(raw & 0xff);  // -R: the number
      } else if (!PrevStateFromLetters(state, /*plugin_alphabet=*/false, e.value)) {
        return Missing("prev_state");
      }
      e.value &= 0xff;
    } else {
      // trace-cmd's plugin: "prev:pid [prio] STATE ==> next:pid [prio]".
      if (arrow == std::string_view::npos) return Missing("'==>'");
      std::string_view left = Trim(payload.substr(0, arrow));
      const size_t sp = left.rfind(' ');
      if (sp == std::string_view::npos) return Missing("prev_state");
      if (!PrevStateFromLetters(left.substr(sp + 1), /*plugin_alphabet=*/true, e.value)) {
        return Missing("prev_state");
      }
      int16_t p1;
      int16_t p2;
      if (!ParsePluginTask(left.substr(0, sp), prev_comm, e.other, p1) ||
          !ParsePluginTask(payload.substr(arrow + 5), next_comm, e.task, p2)) {
        return Missing("comm:pid [prio]");
      }
      next_prio = p2;
    }
    e.prio = static_cast<int16_t>(std::clamp(next_prio, -1, 32767));
    if (absl::Status s = Comm(e.other, prev_comm); !s.ok()) return s;
    return Comm(e.task, next_comm);
  }

  // "work struct=0x..." (the print format's key has a space).
  static bool ParseStructWork(std::string_view payload, uint64_t& out) {
    const size_t at = payload.find("work struct=");
    if (at == std::string_view::npos) return false;
    std::string_view v = payload.substr(at + 12);
    const size_t sp = v.find(' ');
    if (sp != std::string_view::npos) v = v.substr(0, sp);
    return ParsePointer(v, out);
  }

  // tick_stop's dependency: a symbol of the print format or a number (-R).
  static int64_t TickDependency(std::string_view dep) {
    static constexpr std::array<std::pair<std::string_view, int64_t>, 7> kNames = {{
        {"NONE", 0},
        {"POSIX_TIMER", 1},
        {"PERF_EVENTS", 2},
        {"SCHED", 4},
        {"CLOCK_UNSTABLE", 8},
        {"RCU", 16},
        {"RCU_EXP", 32},
    }};
    for (const auto& [name, bit] : kNames) {
      if (dep == name) return bit;
    }
    int64_t v;
    if (ParseDec(dep, v) && v >= 0) return v;
    return -1;
  }

  // The comm a task gets from exec: the file's base name, 15 bytes.
  static std::string_view ExecComm(std::string_view filename) {
    const size_t slash = filename.rfind('/');
    if (slash != std::string_view::npos) filename.remove_prefix(slash + 1);
    return filename.substr(0, 15);
  }

  const std::string name_;
  const TraceFormat format_;
  const ReadOptions options_;
  ReadStats& stats_;
  Emitter emit_;
  PerfHeader perf_;
  std::string buffer_;
  bool buffer_chosen_ = false;
  bool noted_timer_flags_ = false;
  bool noted_hrtimer_address_ = false;
  bool is_new_timer_idle_ =
      false;  // tmigr_cpu_new_timer_idle shares a kind with tmigr_cpu_new_timer
  std::string first_bad_;
};

// Splits a stream into lines, each at most max_line_bytes.
template <typename Fill>
absl::Status ForEachLine(const std::string& name, int64_t max_line, Fill fill,
                         absl::FunctionRef<absl::Status(std::string_view, int64_t)> line_fn) {
  std::string carry;
  std::vector<char> buf(1 << 20);
  int64_t lineno = 0;
  while (true) {
    const size_t got = fill(buf.data(), buf.size());
    if (got == 0) break;
    std::string_view chunk(buf.data(), got);
    while (!chunk.empty()) {
      const size_t nl = chunk.find('\n');
      if (nl == std::string_view::npos) {
        if (static_cast<int64_t>(carry.size() + chunk.size()) > max_line) {
          return absl::InvalidArgumentError(Cat(name, ": line ", lineno + 1, " is longer than ",
                                                max_line, " bytes (ReadOptions::max_line_bytes)"));
        }
        carry.append(chunk.data(), chunk.size());
        break;
      }
      ++lineno;
      if (static_cast<int64_t>(carry.size() + nl) > max_line) {
        return absl::InvalidArgumentError(Cat(name, ": line ", lineno, " is longer than ", max_line,
                                              " bytes (ReadOptions::max_line_bytes)"));
      }
      if (carry.empty()) {
        if (absl::Status s = line_fn(chunk.substr(0, nl), lineno); !s.ok()) return s;
      } else {
        carry.append(chunk.data(), nl);
        if (absl::Status s = line_fn(carry, lineno); !s.ok()) return s;
        carry.clear();
      }
      chunk.remove_prefix(nl + 1);
    }
  }
  if (!carry.empty()) {
    ++lineno;
    if (absl::Status s = line_fn(carry, lineno); !s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ReadTextFill(const std::string& name, TraceFormat format, const ReadOptions& options,
                          EventSink& sink, ReadStats& stats,
                          absl::FunctionRef<size_t(char*, size_t)> fill) {
  if (format != TraceFormat::kTraceCmdReport && format != TraceFormat::kPerfScript) {
    return absl::InvalidArgumentError(Cat(name, ": not a text format: ", TraceFormatName(format)));
  }
  if (options.max_line_bytes < 80 || options.max_line_bytes > (1 << 26)) {
    return absl::InvalidArgumentError(
        Cat("ReadOptions::max_line_bytes ", options.max_line_bytes, " outside [80, 2^26]"));
  }
  TextParser parser(name, format, options, sink, stats);
  bool any = false;
  absl::Status s =
      ForEachLine(name, options.max_line_bytes, fill, [&](std::string_view line, int64_t n) {
        any = true;
        return parser.Line(line, n);
      });
  if (!s.ok()) return s;
  if (!any) return absl::InvalidArgumentError(Cat(name, ": empty"));
  return parser.Finish();
}

TraceFormat DetectTextFormat(std::string_view head) {
  // Look at the first lines that are not blank.
  int looked = 0;
  for (std::string_view line : Split(head, '\n')) {
    line = Trim(line);
    if (line.empty()) continue;
    if (++looked > 50) break;
    if (line.starts_with("# ========") || line.starts_with("# captured on")) {
      return TraceFormat::kPerfScript;
    }
    if (line.starts_with("cpus=") || line.starts_with("version = ")) {
      return TraceFormat::kTraceCmdReport;
    }
    if (line[0] == '#') continue;
    // An event line: perf names events "system:event:", trace-cmd "event:".
    const size_t close = line.find("] ");
    if (close == std::string_view::npos) continue;
    std::vector<std::string_view> tokens = Split(line.substr(close + 2), ' ', true);
    for (size_t i = 0; i + 1 < tokens.size() && i < 3; ++i) {
      const std::string_view t = tokens[i];
      if (t.size() > 1 && t.back() == ':' && t.find('.') != std::string_view::npos &&
          IsDigit(t[0])) {
        const std::string_view ev = tokens[i + 1];
        if (ev.size() > 1 && ev.back() == ':') {
          return ev.substr(0, ev.size() - 1).find(':') != std::string_view::npos
                     ? TraceFormat::kPerfScript
                     : TraceFormat::kTraceCmdReport;
        }
      }
    }
  }
  return TraceFormat::kAuto;
}

absl::Status ReadTextStream(std::istream& in, const std::string& name, TraceFormat format,
                            const ReadOptions& options, EventSink& sink, ReadStats& stats) {
  return ReadTextFill(name, format, options, sink, stats, [&](char* buf, size_t n) -> size_t {
    in.read(buf, static_cast<std::streamsize>(n));
    return static_cast<size_t>(in.gcount());
  });
}

}  // namespace internal

absl::Status ReadTraceText(std::string_view text, std::string_view name, TraceFormat format,
                           const ReadOptions& options, EventSink& sink, ReadStats* stats) {
  ReadStats local;
  ReadStats& st = stats != nullptr ? *stats : local;
  st = ReadStats{};
  if (format == TraceFormat::kAuto) format = internal::DetectTextFormat(text.substr(0, 64 * 1024));
  if (format == TraceFormat::kAuto) {
    return absl::InvalidArgumentError(
        Cat(name, ": neither `trace-cmd report` nor `perf script` text"));
  }
  size_t pos = 0;
  return internal::ReadTextFill(std::string(name), format, options, sink, st,
                                [&](char* buf, size_t n) -> size_t {
                                  const size_t take = std::min(n, text.size() - pos);
                                  std::memcpy(buf, text.data() + pos, take);
                                  pos += take;
                                  return take;
                                });
}

}  // namespace isolation::replay
