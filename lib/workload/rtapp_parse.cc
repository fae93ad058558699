// SPDX-License-Identifier: GPL-2.0-or-later
// rt-app's JSON grammar to an RtAppDescription (rtapp.h).  Counterpart:
// rt-app's src/rt-app_parse_config.c (parse_global, parse_thread_data,
// parse_thread_phase_data, parse_thread_event_data), written from its
// documentation (doc/tutorial.txt).

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "isolation/workload/rtapp.h"

namespace isolation::workload {
namespace {

using Json = nlohmann::ordered_json;

const char* const kPolicies[] = {"SCHED_OTHER", "SCHED_IDLE", "SCHED_RR", "SCHED_FIFO",
                                 "SCHED_DEADLINE"};

// Where a message points: "rtapp.json: task 'hk', phase 'p1', key 'run0'".
struct Where {
  std::string source;
  std::string task;
  std::string phase;
  std::string Str(absl::string_view key = {}) const {
    std::string s = source;
    if (!task.empty()) absl::StrAppend(&s, ": task '", task, "'");
    if (!phase.empty()) absl::StrAppend(&s, ", phase '", phase, "'");
    if (!key.empty()) absl::StrAppend(&s, task.empty() ? ": " : ", ", "key '", key, "'");
    return s;
  }
};

absl::Status Bad(const Where& w, absl::string_view key, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(w.Str(key), ": ", what));
}

std::string Shown(const Json& v) {
  std::string s = v.dump();
  if (s.size() > 60) s = s.substr(0, 57) + "...";
  return s;
}

absl::StatusOr<int64_t> Integer(const Where& w, absl::string_view key, const Json& v, int64_t lo,
                                int64_t hi) {
  if (!v.is_number_integer()) {
    return Bad(w, key, absl::StrCat("want an integer, got ", Shown(v)));
  }
  const int64_t x = v.is_number_unsigned() && v.get<uint64_t>() > uint64_t{INT64_MAX}
                        ? INT64_MAX
                        : v.get<int64_t>();
  if (x < lo || x > hi) {
    return Bad(w, key, absl::StrCat(x, " is outside [", lo, ", ", hi, "]"));
  }
  return x;
}

absl::StatusOr<Nanos> Micros(const Where& w, absl::string_view key, const Json& v, int64_t lo) {
  absl::StatusOr<int64_t> us = Integer(w, key, v, lo, kRtAppMaxEventUs);
  if (!us.ok()) return us.status();
  return *us * kNsPerUs;
}

absl::StatusOr<std::string> String(const Where& w, absl::string_view key, const Json& v,
                                   bool allow_empty = false) {
  if (!v.is_string()) return Bad(w, key, absl::StrCat("want a string, got ", Shown(v)));
  std::string s = v.get<std::string>();
  if (s.empty() && !allow_empty) return Bad(w, key, "empty name");
  return s;
}

absl::StatusOr<std::vector<int>> Cpus(const Where& w, absl::string_view key, const Json& v) {
  if (!v.is_array() || v.empty()) {
    return Bad(w, key, absl::StrCat("want a non-empty array of CPU numbers, got ", Shown(v)));
  }
  std::vector<int> cpus;
  for (const Json& c : v) {
    absl::StatusOr<int64_t> cpu = Integer(w, key, c, 0, kRtAppMaxThreads);
    if (!cpu.ok()) return cpu.status();
    cpus.push_back(static_cast<int>(*cpu));
  }
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  return cpus;
}

absl::StatusOr<std::string> Policy(const Where& w, absl::string_view key, const Json& v) {
  absl::StatusOr<std::string> p = String(w, key, v);
  if (!p.ok()) return p.status();
  for (const char* known : kPolicies) {
    if (*p == known) return *p;
  }
  return Bad(
      w, key,
      absl::StrCat("unknown policy '", *p, "' (want one of ", absl::StrJoin(kPolicies, ", "), ")"));
}

// Event kinds by key prefix, longest first where one prefixes another
// ("runtime" before "run"), as rt-app matches its keys.
struct Prefix {
  absl::string_view prefix;
  int kind;  // an RtAppEventKind, or one of the values below
};
constexpr int kSync = 100;     // expands to lock, signal, wait, unlock
constexpr int kRefused = 101;  // rt-app events the model cannot honour
const Prefix kPrefixes[] = {
    {"runtime", static_cast<int>(RtAppEventKind::kRunTime)},
    {"run", static_cast<int>(RtAppEventKind::kRun)},
    {"sleep", static_cast<int>(RtAppEventKind::kSleep)},
    {"timer", static_cast<int>(RtAppEventKind::kTimer)},
    {"barrier", static_cast<int>(RtAppEventKind::kBarrier)},
    {"unlock", static_cast<int>(RtAppEventKind::kUnlock)},
    {"lock", static_cast<int>(RtAppEventKind::kLock)},
    {"signal", static_cast<int>(RtAppEventKind::kSignal)},
    {"broad", static_cast<int>(RtAppEventKind::kBroadcast)},
    {"wait", static_cast<int>(RtAppEventKind::kWait)},
    {"sync", kSync},
    {"fork", static_cast<int>(RtAppEventKind::kFork)},
    {"yield", static_cast<int>(RtAppEventKind::kYield)},
    {"suspend", kRefused},
    {"resume", kRefused},
    {"mem", kRefused},
    {"iorun", kRefused},
};

// Why a refused event is refused.
absl::string_view RefusedWhy(absl::string_view key) {
  if (absl::StartsWith(key, "suspend") || absl::StartsWith(key, "resume")) {
    return "suspend/resume are not modelled (use wait/signal on a named condition)";
  }
  return "the model has no memory or I/O bandwidth: mem and iorun are not modelled (use run)";
}

class Parser {
 public:
  explicit Parser(std::string source) { d_.source = std::move(source); }

  absl::StatusOr<RtAppDescription> Parse(const Json& root) {
    const Where top{d_.source, "", ""};
    if (!root.is_object()) return Bad(top, "", "the top level must be an object");
    for (const auto& [key, value] : root.items()) {
      if (key == "global") {
        if (absl::Status s = Global(value); !s.ok()) return s;
      } else if (key == "resources") {
        Note("resources: ignored (rt-app creates resources from their uses, as here)");
      } else if (key != "tasks") {
        return Bad(top, key, "unknown top-level key (want global, tasks, resources)");
      }
    }
    if (!root.contains("tasks")) return Bad(top, "tasks", "missing (the one mandatory object)");
    const Json& tasks = root["tasks"];
    if (!tasks.is_object() || tasks.empty()) {
      return Bad(top, "tasks", "want a non-empty object of thread objects");
    }
    for (const auto& [name, value] : tasks.items()) {
      if (absl::Status s = Task(name, value); !s.ok()) return s;
    }
    return Finish();
  }

 private:
  void Note(std::string note) {
    if (std::find(d_.notes.begin(), d_.notes.end(), note) == d_.notes.end()) {
      d_.notes.push_back(std::move(note));
    }
  }

  absl::Status Global(const Json& g) {
    const Where w{d_.source, "", ""};
    if (!g.is_object()) return Bad(w, "global", "want an object");
    for (const auto& [key, v] : g.items()) {
      if (key == "duration") {
        absl::StatusOr<int64_t> s = Integer(w, "global.duration", v, -1, kRtAppMaxDurationS);
        if (!s.ok()) return s.status();
        if (*s == 0) return Bad(w, "global.duration", "0 s (want -1 or a positive count)");
        d_.duration = *s < 0 ? -1 : *s * kNsPerSec;
      } else if (key == "default_policy") {
        absl::StatusOr<std::string> p = Policy(w, "global.default_policy", v);
        if (!p.ok()) return p.status();
        d_.default_policy = *p;
      } else if (key == "calibration") {
        Note(
            "global.calibration: ignored; a run event of N us is N us of work on every model "
            "CPU (the model has no capacity or frequency)");
      } else if (key == "pi_enabled") {
        if (v.is_boolean() && v.get<bool>()) {
          Note("global.pi_enabled: priority inheritance is not modelled (one scheduling class)");
        }
      } else if (key == "lock_pages" || key == "logdir" || key == "log_basename" ||
                 key == "log_size" || key == "ftrace" || key == "gnuplot" || key == "io_device" ||
                 key == "mem_buffer_size" || key == "cumulative_slack") {
        Note(absl::StrCat("global.", key,
                          ": ignored (logging and memory set-up of the rt-app "
                          "process, no effect on the schedule)"));
      } else {
        return Bad(w, absl::StrCat("global.", key), "unknown global key");
      }
    }
    return absl::OkStatus();
  }

  // Properties a task or phase may set that are scheduling attributes the
  // model has no class for: recorded as notes.
  bool SchedulingAttribute(absl::string_view key) {
    return key == "priority" || key == "dl-runtime" || key == "dl-period" || key == "dl-deadline" ||
           key == "util_min" || key == "util_max" || key == "membind_nodes" || key == "taskgroup" ||
           key == "nice";
  }

  absl::Status Task(const std::string& name, const Json& t) {
    Where w{d_.source, name, ""};
    if (name.empty()) return Bad(Where{d_.source, "", ""}, "tasks", "a task with an empty name");
    if (!t.is_object()) return Bad(w, "", "want a thread object");
    RtAppTask task;
    task.name = name;
    task.policy = d_.default_policy;
    const bool has_phases = t.contains("phases");
    RtAppPhase inline_phase;
    inline_phase.name = "phase0";
    for (const auto& [key, v] : t.items()) {
      if (key == "instance") {
        absl::StatusOr<int64_t> n = Integer(w, key, v, 0, kRtAppMaxThreads);
        if (!n.ok()) return n.status();
        task.instances = static_cast<int>(*n);
      } else if (key == "loop") {
        absl::StatusOr<int64_t> n = Integer(w, key, v, -1, INT64_MAX);
        if (!n.ok()) return n.status();
        if (*n == 0) return Bad(w, key, "0 (want -1 for ever, or a positive count)");
        task.loop = *n;
      } else if (key == "delay") {
        absl::StatusOr<Nanos> ns = Micros(w, key, v, 0);
        if (!ns.ok()) return ns.status();
        task.delay = *ns;
      } else if (key == "cpus") {
        absl::StatusOr<std::vector<int>> c = Cpus(w, key, v);
        if (!c.ok()) return c.status();
        task.cpus = *std::move(c);
      } else if (key == "policy") {
        absl::StatusOr<std::string> p = Policy(w, key, v);
        if (!p.ok()) return p.status();
        task.policy = *p;
      } else if (key == "phases") {
        if (!v.is_object() || v.empty()) return Bad(w, key, "want a non-empty object of phases");
        for (const auto& [pname, pv] : v.items()) {
          absl::StatusOr<RtAppPhase> p = Phase(name, pname, pv);
          if (!p.ok()) return p.status();
          task.phases.push_back(*std::move(p));
        }
      } else if (SchedulingAttribute(key) ||
                 (has_phases && (key == "runtime" || key == "period" || key == "deadline"))) {
        // With phases, runtime/period/deadline at thread level are the
        // SCHED_DEADLINE parameters (rt-app's backward compatibility).
        Note(absl::StrCat("task '", name, "': ", key,
                          " is not modelled (the model schedules every thread in one "
                          "round-robin class)"));
      } else if (has_phases) {
        return Bad(w, key, "an event beside 'phases' (put it in a phase)");
      } else {
        if (absl::Status s = Event(w, key, v, inline_phase); !s.ok()) return s;
      }
    }
    if (!has_phases) {
      if (inline_phase.events.empty()) return Bad(w, "", "no events and no phases");
      task.phases.push_back(std::move(inline_phase));
    }
    if (task.policy != "SCHED_OTHER") {
      Note(absl::StrCat("task '", name, "': policy ", task.policy,
                        " is not modelled (the model schedules every thread in one round-robin "
                        "class); on a CPU it has to itself that changes nothing"));
    }
    d_.tasks.push_back(std::move(task));
    return absl::OkStatus();
  }

  absl::StatusOr<RtAppPhase> Phase(const std::string& task, const std::string& name,
                                   const Json& p) {
    Where w{d_.source, task, name};
    if (!p.is_object()) return Bad(w, "", "want a phase object");
    RtAppPhase phase;
    phase.name = name;
    for (const auto& [key, v] : p.items()) {
      if (key == "loop") {
        absl::StatusOr<int64_t> n = Integer(w, key, v, 1, INT64_MAX);
        if (!n.ok()) return n.status();
        phase.loop = *n;
      } else if (key == "cpus") {
        absl::StatusOr<std::vector<int>> c = Cpus(w, key, v);
        if (!c.ok()) return c.status();
        phase.cpus = *std::move(c);
      } else if (key == "policy") {
        absl::StatusOr<std::string> pol = Policy(w, key, v);
        if (!pol.ok()) return pol.status();
        if (*pol != "SCHED_OTHER") {
          Note(absl::StrCat("task '", task, "', phase '", name, "': policy ", *pol,
                            " is not modelled (one round-robin class)"));
        }
      } else if (SchedulingAttribute(key)) {
        Note(absl::StrCat("task '", task, "', phase '", name, "': ", key, " is not modelled"));
      } else {
        if (absl::Status s = Event(w, key, v, phase); !s.ok()) return s;
      }
    }
    if (phase.events.empty()) return Bad(w, "", "a phase without events");
    return phase;
  }

  absl::Status Event(const Where& w, const std::string& key, const Json& v, RtAppPhase& phase) {
    const Prefix* match = nullptr;
    for (const Prefix& p : kPrefixes) {
      if (absl::StartsWith(key, p.prefix)) {
        match = &p;
        break;
      }
    }
    if (match == nullptr) return Bad(w, key, "unknown event or property");
    if (match->kind == kRefused) return Bad(w, key, RefusedWhy(key));
    RtAppEvent e;
    e.key = key;
    if (match->kind == kSync) {
      // sync {ref, mutex} = lock mutex, signal ref, wait ref, unlock mutex.
      absl::StatusOr<std::pair<std::string, std::string>> rm = RefAndMutex(w, key, v);
      if (!rm.ok()) return rm.status();
      for (RtAppEventKind k : {RtAppEventKind::kLock, RtAppEventKind::kSignal,
                               RtAppEventKind::kWait, RtAppEventKind::kUnlock}) {
        RtAppEvent part;
        part.kind = k;
        part.key = key;
        part.ref =
            k == RtAppEventKind::kLock || k == RtAppEventKind::kUnlock ? rm->second : rm->first;
        if (k == RtAppEventKind::kWait) part.mutex = rm->second;
        phase.events.push_back(std::move(part));
      }
      return absl::OkStatus();
    }
    e.kind = static_cast<RtAppEventKind>(match->kind);
    switch (e.kind) {
      case RtAppEventKind::kRun:
      case RtAppEventKind::kRunTime:
      case RtAppEventKind::kSleep: {
        absl::StatusOr<Nanos> ns = Micros(w, key, v, 0);
        if (!ns.ok()) return ns.status();
        e.ns = *ns;
        break;
      }
      case RtAppEventKind::kTimer: {
        if (!v.is_object()) return Bad(w, key, "want {\"ref\": name, \"period\": us}");
        for (const auto& [k, x] : v.items()) {
          if (k == "ref") {
            absl::StatusOr<std::string> r = String(w, absl::StrCat(key, ".ref"), x);
            if (!r.ok()) return r.status();
            e.ref = *r;
          } else if (k == "period") {
            absl::StatusOr<Nanos> ns = Micros(w, absl::StrCat(key, ".period"), x, 1);
            if (!ns.ok()) return ns.status();
            e.ns = *ns;
          } else if (k == "mode") {
            absl::StatusOr<std::string> m = String(w, absl::StrCat(key, ".mode"), x);
            if (!m.ok()) return m.status();
            if (*m != "absolute" && *m != "relative") {
              return Bad(w, absl::StrCat(key, ".mode"),
                         absl::StrCat("'", *m, "' (want absolute or relative)"));
            }
            e.timer_absolute = *m == "absolute";
          } else {
            return Bad(w, absl::StrCat(key, ".", k), "unknown timer key (want ref, period, mode)");
          }
        }
        if (e.ref.empty()) return Bad(w, key, "a timer without 'ref'");
        if (e.ns == 0) return Bad(w, key, "a timer without 'period'");
        break;
      }
      case RtAppEventKind::kWait: {
        absl::StatusOr<std::pair<std::string, std::string>> rm = RefAndMutex(w, key, v);
        if (!rm.ok()) return rm.status();
        e.ref = rm->first;
        e.mutex = rm->second;
        break;
      }
      case RtAppEventKind::kYield: {
        // rt-app's value is an ignored string.
        if (!v.is_string()) return Bad(w, key, absl::StrCat("want a string, got ", Shown(v)));
        break;
      }
      default: {
        absl::StatusOr<std::string> r = String(w, key, v);
        if (!r.ok()) return r.status();
        e.ref = *r;
        break;
      }
    }
    phase.events.push_back(std::move(e));
    return absl::OkStatus();
  }

  absl::StatusOr<std::pair<std::string, std::string>> RefAndMutex(const Where& w,
                                                                  const std::string& key,
                                                                  const Json& v) {
    if (!v.is_object()) return Bad(w, key, "want {\"ref\": condition, \"mutex\": mutex}");
    std::pair<std::string, std::string> rm;
    for (const auto& [k, x] : v.items()) {
      if (k != "ref" && k != "mutex") {
        return Bad(w, absl::StrCat(key, ".", k), "unknown key (want ref, mutex)");
      }
      absl::StatusOr<std::string> s = String(w, absl::StrCat(key, ".", k), x);
      if (!s.ok()) return s.status();
      (k == "ref" ? rm.first : rm.second) = *s;
    }
    if (rm.first.empty() || rm.second.empty()) return Bad(w, key, "needs both 'ref' and 'mutex'");
    return rm;
  }

  // Cross-task checks: forks name tasks, barriers are not used by forked
  // tasks, the thread count.
  absl::StatusOr<RtAppDescription> Finish() {
    std::set<std::string> names;
    for (const RtAppTask& t : d_.tasks) names.insert(t.name);
    std::set<std::string> forked;
    int64_t threads = 0;
    for (const RtAppTask& t : d_.tasks) {
      threads += t.instances;
      for (const RtAppPhase& p : t.phases) {
        for (const RtAppEvent& e : p.events) {
          if (e.kind != RtAppEventKind::kFork) continue;
          if (names.count(e.ref) == 0) {
            return Bad(Where{d_.source, t.name, p.name}, e.key,
                       absl::StrCat("fork of unknown task '", e.ref, "'"));
          }
          forked.insert(e.ref);
        }
      }
    }
    if (threads > kRtAppMaxThreads) {
      return Bad(Where{d_.source, "", ""}, "tasks",
                 absl::StrCat(threads, " threads at start (at most ", kRtAppMaxThreads, ")"));
    }
    if (threads == 0) {
      return Bad(Where{d_.source, "", ""}, "tasks", "no thread starts (every instance is 0)");
    }
    std::map<std::string, int64_t> users;
    for (const RtAppTask& t : d_.tasks) {
      for (const RtAppPhase& p : t.phases) {
        for (const RtAppEvent& e : p.events) {
          if (e.kind != RtAppEventKind::kBarrier) continue;
          if (forked.count(t.name) != 0) {
            return Bad(Where{d_.source, t.name, p.name}, e.key,
                       absl::StrCat("barrier '", e.ref,
                                    "' in a task that is forked (rt-app cannot count its users)"));
          }
          users[e.ref] += t.instances;
        }
      }
    }
    for (const auto& [name, n] : users) {
      if (n < 1) {
        return Bad(Where{d_.source, "", ""}, "tasks",
                   absl::StrCat("barrier '", name, "' has no thread that starts"));
      }
      d_.barriers.emplace_back(name, static_cast<int>(std::min<int64_t>(n, kRtAppMaxThreads)));
    }
    return std::move(d_);
  }

  RtAppDescription d_;
};

}  // namespace

const char* RtAppEventKindName(RtAppEventKind kind) {
  switch (kind) {
    case RtAppEventKind::kRun:
      return "run";
    case RtAppEventKind::kRunTime:
      return "runtime";
    case RtAppEventKind::kSleep:
      return "sleep";
    case RtAppEventKind::kTimer:
      return "timer";
    case RtAppEventKind::kBarrier:
      return "barrier";
    case RtAppEventKind::kLock:
      return "lock";
    case RtAppEventKind::kUnlock:
      return "unlock";
    case RtAppEventKind::kSignal:
      return "signal";
    case RtAppEventKind::kBroadcast:
      return "broad";
    case RtAppEventKind::kWait:
      return "wait";
    case RtAppEventKind::kFork:
      return "fork";
    case RtAppEventKind::kYield:
      return "yield";
  }
  return "?";
}

absl::StatusOr<RtAppDescription> ParseRtApp(std::string_view json, std::string_view source_view) {
  const absl::string_view source(source_view.data(), source_view.size());
  if (static_cast<int64_t>(json.size()) > kRtAppMaxFileBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat(source, ": ", json.size(), " bytes (at most ", kRtAppMaxFileBytes, ")"));
  }
  // A JSON object with a key twice keeps one value: rt-app needs unique keys
  // (workgen appends indexes), so a repeated one is refused, not dropped.
  std::vector<std::set<std::string>> keys;
  std::string duplicate;
  auto callback = [&](int, Json::parse_event_t event, Json& parsed) {
    switch (event) {
      case Json::parse_event_t::object_start:
        keys.emplace_back();
        break;
      case Json::parse_event_t::object_end:
        if (!keys.empty()) keys.pop_back();
        break;
      case Json::parse_event_t::key:
        if (!keys.empty() && parsed.is_string() &&
            !keys.back().insert(parsed.get<std::string>()).second && duplicate.empty()) {
          duplicate = parsed.get<std::string>();
        }
        break;
      default:
        break;
    }
    return true;
  };
  Json root;
  try {
    root = Json::parse(json.begin(), json.end(), callback, /*allow_exceptions=*/true,
                       /*ignore_comments=*/false);
  } catch (const Json::parse_error& e) {
    return absl::InvalidArgumentError(
        absl::StrCat(source, ": malformed JSON at byte ", e.byte, ": ", e.what()));
  }
  if (!duplicate.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        source, ": key '", duplicate,
        "' appears twice in one object (rt-app needs unique keys: write run0, run1, ...)"));
  }
  return Parser(std::string(source)).Parse(root);
}

absl::StatusOr<RtAppDescription> LoadRtApp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open rt-app file '", path, "'"));
  std::string text;
  char buf[65536];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    text.append(buf, static_cast<size_t>(in.gcount()));
    if (static_cast<int64_t>(text.size()) > kRtAppMaxFileBytes) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": larger than ", kRtAppMaxFileBytes, " bytes"));
    }
  }
  if (in.bad()) return absl::InternalError(absl::StrCat("error reading '", path, "'"));
  return ParseRtApp(text, path);
}

}  // namespace isolation::workload
