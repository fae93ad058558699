// SPDX-License-Identifier: GPL-2.0-or-later
//
// Chrome trace-event JSON writer (trace.h).
//
// Recording.  A TraceRun keeps plain Event records in buffers and writes
// nothing until Finish().  In single-thread mode (the simulator, a model
// without a driver) there is one buffer and the run's bound is one counter:
// the run keeps a prefix in time of the whole machine.  Attached to a
// RealThreadDriver, CPU thread c records events about CPU c into buffer c
// (no lock: only that thread touches it while the driver runs) and any
// other call goes to a locked "foreign" buffer; each buffer has an equal
// share of the bound.  Buffers are read by Finish(), after the driver
// stopped: the driver's pause handshake orders every CPU thread's writes
// before RunFor() returns.
//
// What each CPU runs is kept per CPU as an open state (since when, which
// task); CpuRuns() closes the previous state into a slice.  Finish() closes
// the open states at the end of the run from a reserve kept out of the
// bound, so a truncated trace still shows what ran until the end.
//
// Writing.  The file is one JSON object written as a stream: the header at
// Create(), each run's events at its Finish() (tracks in CPU order, each
// sorted by time, longest first), and at Close() the end of "traceEvents"
// plus "otherData" (string values only, as chrome://tracing expects) and
// "isolation" (the structured summary: bound, truncation per run).  Each
// event is one nlohmann::json object dumped on its own line.

#include "isolation/runtime/trace.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <utility>

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "runtime/trace_internal.h"

namespace isolation {
namespace {

thread_local int t_thread_cpu = -1;

constexpr size_t kMaxArgs = 6;

double Us(Nanos ns) { return static_cast<double>(ns) / 1000.0; }

std::string Dump(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

namespace trace_internal {
void SetThreadCpu(int cpu) { t_thread_cpu = cpu; }
}  // namespace trace_internal

std::vector<std::string> TraceCpuRoles(const IsolationConfig& config) {
  std::vector<std::string> roles;
  const int n = config.num_cpus();
  const CpuMask& nohz = config.nohz_full();
  for (int cpu = 0; cpu < n; ++cpu) {
    std::string r;
    if (config.CpuIsIsolated(cpu)) r = "isolated";
    if (nohz.nbits() > cpu && nohz.Test(cpu))
      absl::StrAppend(&r, r.empty() ? "" : ", ", "nohz_full");
    if (r.empty()) r = "housekeeping";
    roles.push_back(std::move(r));
  }
  return roles;
}

// --- TraceRun ------------------------------------------------------------------

struct TraceRun::Event {
  Nanos ts = 0;
  Nanos dur = -1;  // < 0: instant event
  const char* cat = nullptr;
  std::string name;
  int32_t cpu = 0;
  int32_t task = -1;  // CPU-state slice: the task; activity: the interrupted task
  uint8_t nargs = 0;
  std::array<TraceArg, kMaxArgs> args{};
};

struct alignas(64) TraceRun::Buffer {
  std::vector<Event> events;
  int64_t budget = 0;
  int64_t dropped = 0;
  Nanos first_drop = kNanosMax;
};

// Per CPU, touched only from that CPU's context (tracer.h).
struct alignas(64) TraceRun::Track {
  bool open = false;
  Nanos since = 0;
  int32_t task = -1;
  std::string name;
  const char* activity_name = nullptr;
};

TraceRun::TraceRun(TraceFile* file, int pid, TraceRunSpec spec, CpuMask wanted, int64_t budget)
    : file_(file),
      pid_(pid),
      num_cpus_(spec.num_cpus),
      name_(std::move(spec.name)),
      roles_(std::move(spec.cpu_roles)),
      wanted_(std::move(wanted)),
      budget_(budget) {
  const int64_t tracked = wanted_.Weight();
  reserve_ = std::min<int64_t>(tracked, budget_ / 2);
  buffers_.push_back(std::make_unique<Buffer>());
  buffers_[0]->budget = budget_ - reserve_;
  for (int cpu = 0; cpu < num_cpus_; ++cpu) tracks_.push_back(std::make_unique<Track>());
}

TraceRun::~TraceRun() {
  Finish(LatestTime());
  if (file_ != nullptr) file_->ForgetRun(this);
}

Nanos TraceRun::LatestTime() const {
  Nanos end = 0;
  auto scan = [&end](const Buffer& b) {
    for (const Event& e : b.events) end = std::max(end, e.ts + std::max<Nanos>(0, e.dur));
  };
  for (const auto& b : buffers_) scan(*b);
  if (foreign_ != nullptr) scan(*foreign_);
  for (const auto& t : tracks_) {
    if (t->open) end = std::max(end, t->since);
  }
  return end;
}

void TraceRun::Attach(Driver& driver) {
  driver_ = &driver;
  clock_label_ = driver.is_simulated()
                     ? "virtual time of the simulator"
                     : "host CLOCK_MONOTONIC since the driver started (real threads)";
  driver.SetTracer(this);
  if (driver.is_simulated() || real_threads_) return;
  // One buffer per CPU thread plus the locked foreign one, equal shares.
  real_threads_ = true;
  const int64_t tracked = wanted_.Weight();
  const int64_t share = (budget_ - reserve_) / (tracked + 1);
  buffers_.clear();
  for (int cpu = 0; cpu < num_cpus_; ++cpu) {
    buffers_.push_back(std::make_unique<Buffer>());
    buffers_.back()->budget = Wants(cpu) ? share : 0;
  }
  foreign_ = std::make_unique<Buffer>();
  foreign_->budget = share;
}

void TraceRun::SetClock(std::function<Nanos()> clock) { clock_ = std::move(clock); }

bool TraceRun::Wants(int cpu) const { return cpu >= 0 && cpu < num_cpus_ && wanted_.Test(cpu); }

Nanos TraceRun::Now() const {
  if (driver_ != nullptr) return driver_->Now();
  return clock_ ? clock_() : 0;
}

int64_t TraceRun::recorded() const {
  int64_t n = static_cast<int64_t>(closing_.size());
  for (const auto& b : buffers_) n += static_cast<int64_t>(b->events.size());
  if (foreign_ != nullptr) n += static_cast<int64_t>(foreign_->events.size());
  return n;
}

int64_t TraceRun::dropped() const {
  int64_t n = 0;
  for (const auto& b : buffers_) n += b->dropped;
  if (foreign_ != nullptr) n += foreign_->dropped;
  return n;
}

void TraceRun::Record(Buffer& b, Event&& e) {
  if (static_cast<int64_t>(b.events.size()) >= b.budget) {
    ++b.dropped;
    b.first_drop = std::min(b.first_drop, e.ts);
    return;
  }
  b.events.push_back(std::move(e));
}

TraceRun::Buffer& TraceRun::BufferFor(int cpu) {
  if (!real_threads_) return *buffers_[0];
  return *buffers_[static_cast<size_t>(cpu)];
}

void TraceRun::CpuRuns(int cpu, Nanos ts, int32_t task, std::string_view name) {
  if (!Wants(cpu) || finished_) return;
  Track& t = *tracks_[static_cast<size_t>(cpu)];
  if (t.open) {
    Event e;
    e.ts = t.since;
    e.dur = std::max<Nanos>(0, ts - t.since);
    e.cat = t.task >= 0 ? kTraceTask : kTraceIdle;
    e.name = t.task >= 0 ? t.name : std::string(kTraceIdle);
    e.cpu = cpu;
    e.task = t.task;
    if (real_threads_ && t_thread_cpu != cpu) {
      MutexLock lk(foreign_mu_);
      Record(*foreign_, std::move(e));
    } else {
      Record(BufferFor(cpu), std::move(e));
    }
  }
  t.open = true;
  t.since = ts;
  t.task = task < 0 ? -1 : task;
  t.name.assign(task >= 0 ? name : std::string_view());
}

void TraceRun::Activity(int cpu, Nanos start, Nanos end, const char* category,
                        std::string_view name, int32_t interrupted) {
  if (!Wants(cpu) || finished_) return;
  Track& t = *tracks_[static_cast<size_t>(cpu)];
  Event e;
  e.ts = start;
  e.dur = std::max<Nanos>(0, end - start);
  e.cat = category;
  if (t.activity_name != nullptr) {
    e.name = t.activity_name;
    t.activity_name = nullptr;
  } else {
    e.name.assign(name);
  }
  e.cpu = cpu;
  e.task = interrupted < 0 ? -1 : interrupted;
  if (real_threads_ && t_thread_cpu != cpu) {
    MutexLock lk(foreign_mu_);
    Record(*foreign_, std::move(e));
  } else {
    Record(BufferFor(cpu), std::move(e));
  }
}

void TraceRun::Instant(int cpu, Nanos ts, std::string_view name, TraceArgs args) {
  if (!Wants(cpu) || finished_) return;
  Event e;
  e.ts = ts;
  e.dur = -1;
  e.cat = nullptr;  // from the name at write time
  e.name.assign(name);
  e.cpu = cpu;
  for (const TraceArg& a : args) {
    if (e.nargs == kMaxArgs) break;
    e.args[e.nargs++] = a;
  }
  if (real_threads_ && t_thread_cpu != cpu) {
    MutexLock lk(foreign_mu_);
    Record(*foreign_, std::move(e));
  } else {
    Record(BufferFor(cpu), std::move(e));
  }
}

void TraceRun::NameActivity(int cpu, const char* name) {
  if (!Wants(cpu)) return;
  tracks_[static_cast<size_t>(cpu)]->activity_name = name;
}

void TraceRun::Finish(Nanos end) {
  if (finished_) return;
  // Close every open CPU state at `end`, from the reserve.
  for (int cpu = 0; cpu < num_cpus_; ++cpu) {
    Track& t = *tracks_[static_cast<size_t>(cpu)];
    if (!t.open) continue;
    t.open = false;
    Event e;
    e.ts = t.since;
    e.dur = std::max<Nanos>(0, end - t.since);
    e.cat = t.task >= 0 ? kTraceTask : kTraceIdle;
    e.name = t.task >= 0 ? t.name : std::string(kTraceIdle);
    e.cpu = cpu;
    e.task = t.task;
    if (static_cast<int64_t>(closing_.size()) < reserve_) {
      closing_.push_back(std::move(e));
    } else {
      Buffer& b = *buffers_[0];
      ++b.dropped;
      b.first_drop = std::min(b.first_drop, e.ts);
    }
  }
  finished_ = true;
  if (file_ != nullptr) file_->WriteRun(*this);
  for (auto& b : buffers_) std::vector<Event>().swap(b->events);
  if (foreign_ != nullptr) std::vector<Event>().swap(foreign_->events);
  std::vector<Event>().swap(closing_);
}

// --- TraceFile -----------------------------------------------------------------

struct TraceFile::Impl {
  std::ofstream out;
  bool first_event = true;
  bool closed = false;
  bool write_failed = false;
  int next_pid = 1;
  int planned = 0;         // runs still expected (PlanRuns)
  int64_t committed = 0;   // events written + budgets of runs not yet written
  int64_t phase_end = -1;  // BeginPhase: committed may grow up to here (-1: max_events)
  int64_t written = 0;
  int64_t dropped = 0;
  nlohmann::json runs = nlohmann::json::array();
  std::vector<TraceRun*> live;
};

TraceFile::TraceFile(std::string path, TraceFileOptions options)
    : path_(std::move(path)), options_(std::move(options)), impl_(std::make_unique<Impl>()) {}

absl::StatusOr<std::unique_ptr<TraceFile>> TraceFile::Create(const std::string& path,
                                                             TraceFileOptions options) {
  if (options.max_events < 1 || options.max_events > kMaxTraceEvents) {
    return absl::InvalidArgumentError(absl::StrCat("trace: max_events ", options.max_events,
                                                   " out of range [1, ", kMaxTraceEvents, "]"));
  }
  if (path.empty()) return absl::InvalidArgumentError("trace: empty file name");
  std::unique_ptr<TraceFile> f(new TraceFile(path, std::move(options)));
  // Unshared yet, but impl_ is guarded by mu_: taking it costs nothing here
  // and keeps the thread-safety analysis exact.
  MutexLock lk(f->mu_);
  errno = 0;
  f->impl_->out.open(path, std::ios::out | std::ios::trunc);
  if (!f->impl_->out.is_open()) {
    const int err = errno;
    return absl::InvalidArgumentError(absl::StrCat(
        "trace: cannot write '", path, "': ", err != 0 ? std::strerror(err) : "open failed"));
  }
  f->WriteLine("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[");
  // A device that takes no byte (full, read-only media) fails here, before
  // the run, not after it.
  errno = 0;
  f->impl_->out.flush();
  if (!f->impl_->out.good()) {
    const int err = errno;
    return absl::InvalidArgumentError(absl::StrCat(
        "trace: cannot write '", path, "': ", err != 0 ? std::strerror(err) : "write failed"));
  }
  return f;
}

TraceFile::~TraceFile() { (void)Close(); }

void TraceFile::WriteLine(const std::string& line) {
  impl_->out << line << '\n';
  if (!impl_->out) impl_->write_failed = true;
}

void TraceFile::PlanRuns(int runs) {
  MutexLock lk(mu_);
  impl_->planned = std::max(0, runs);
}

void TraceFile::BeginPhase(int phases_left) {
  MutexLock lk(mu_);
  const int64_t left = std::max<int64_t>(0, options_.max_events - impl_->committed);
  impl_->phase_end = impl_->committed + left / std::max(1, phases_left);
  impl_->planned = 0;
}

int64_t TraceFile::events_written() const {
  MutexLock lk(mu_);
  return impl_->written;
}

int64_t TraceFile::events_dropped() const {
  MutexLock lk(mu_);
  return impl_->dropped;
}

absl::StatusOr<std::unique_ptr<TraceRun>> TraceFile::StartRun(TraceRunSpec spec) {
  if (spec.num_cpus < 1 || spec.num_cpus > kMaxCpus) {
    return absl::InvalidArgumentError(
        absl::StrCat("trace run '", spec.name, "': ", spec.num_cpus, " CPUs, want 1..", kMaxCpus));
  }
  if (!spec.cpu_roles.empty() && static_cast<int>(spec.cpu_roles.size()) != spec.num_cpus) {
    return absl::InvalidArgumentError(absl::StrCat("trace run '", spec.name,
                                                   "': ", spec.cpu_roles.size(), " CPU roles for ",
                                                   spec.num_cpus, " CPUs"));
  }
  CpuMask wanted = CpuMask::Full(spec.num_cpus);
  if (options_.cpus.nbits() > 0) {
    CpuMask filter(spec.num_cpus);
    for (int cpu : options_.cpus) {
      if (cpu >= spec.num_cpus) break;
      filter.Set(cpu);
    }
    wanted = std::move(filter);
  }
  MutexLock lk(mu_);
  if (impl_->closed)
    return absl::FailedPreconditionError(absl::StrCat("trace: '", path_, "' already closed"));
  const int64_t limit = impl_->phase_end >= 0 ? impl_->phase_end : options_.max_events;
  const int64_t left = std::max<int64_t>(0, limit - impl_->committed);
  const int64_t budget = left / std::max(1, impl_->planned);
  if (impl_->planned > 0) --impl_->planned;
  impl_->committed += budget;
  std::unique_ptr<TraceRun> run(
      new TraceRun(this, impl_->next_pid++, std::move(spec), std::move(wanted), budget));
  impl_->live.push_back(run.get());
  return run;
}

void TraceFile::ForgetRun(TraceRun* run) {
  MutexLock lk(mu_);
  auto it = std::find(impl_->live.begin(), impl_->live.end(), run);
  if (it != impl_->live.end()) impl_->live.erase(it);
}

void TraceFile::WriteRun(TraceRun& run) {
  // Gather the run's events per track.
  using Event = TraceRun::Event;
  std::vector<std::vector<Event*>> per_cpu(static_cast<size_t>(run.num_cpus_));
  int64_t dropped = 0;
  Nanos first_drop = kNanosMax;
  auto take = [&](TraceRun::Buffer& b) {
    for (Event& e : b.events) per_cpu[static_cast<size_t>(e.cpu)].push_back(&e);
    dropped += b.dropped;
    first_drop = std::min(first_drop, b.first_drop);
  };
  for (auto& b : run.buffers_) take(*b);
  if (run.foreign_ != nullptr) take(*run.foreign_);
  for (Event& e : run.closing_) per_cpu[static_cast<size_t>(e.cpu)].push_back(&e);

  MutexLock lk(mu_);
  if (impl_->closed) return;
  const bool truncated = dropped > 0;
  std::string process_name = run.name_;
  if (truncated) absl::StrAppend(&process_name, " [trace truncated: ", dropped, " events dropped]");
  // Called with mu_ held (the analysis checks a lambda as a function of its own).
  auto emit = [&](const nlohmann::json& j) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    std::string line = Dump(j);
    if (!impl_->first_event) line.insert(line.begin(), ',');
    impl_->first_event = false;
    WriteLine(line);
  };
  emit({{"name", "process_name"},
        {"ph", "M"},
        {"pid", run.pid_},
        {"ts", 0},
        {"args", {{"name", process_name}}}});
  emit({{"name", "process_sort_index"},
        {"ph", "M"},
        {"pid", run.pid_},
        {"ts", 0},
        {"args", {{"sort_index", run.pid_}}}});
  int64_t written = 0;
  int64_t clipped = 0;
  // A truncated run says where on its first track (process-wide marker).
  Event marker;
  marker.ts = first_drop == kNanosMax ? 0 : first_drop;
  marker.cat = "trace";
  marker.name = absl::StrCat("trace truncated: ", dropped, " events dropped from here on");
  marker.nargs = 2;
  marker.args[0] = {"dropped", dropped};
  marker.args[1] = {"max_events_of_run", run.budget_};
  bool marked = !truncated;
  for (int cpu = 0; cpu < run.num_cpus_; ++cpu) {
    if (!run.Wants(cpu)) continue;
    std::string thread = absl::StrFormat("CPU %03d", cpu);
    if (!run.roles_.empty())
      absl::StrAppend(&thread, " (", run.roles_[static_cast<size_t>(cpu)], ")");
    emit({{"name", "thread_name"},
          {"ph", "M"},
          {"pid", run.pid_},
          {"tid", cpu + 1},
          {"ts", 0},
          {"args", {{"name", thread}}}});
    emit({{"name", "thread_sort_index"},
          {"ph", "M"},
          {"pid", run.pid_},
          {"tid", cpu + 1},
          {"ts", 0},
          {"args", {{"sort_index", cpu}}}});
    std::vector<Event*>& evs = per_cpu[static_cast<size_t>(cpu)];
    if (!marked) {
      marker.cpu = cpu;
      evs.push_back(&marker);
      marked = true;
    }
    // Time order; at equal start the longer slice first (it encloses), and
    // instants after the slices that start with them.
    std::stable_sort(evs.begin(), evs.end(), [](const Event* a, const Event* b) {
      if (a->ts != b->ts) return a->ts < b->ts;
      return a->dur > b->dur;
    });
    // Slices must nest: clip one that outlives its enclosing slice.
    std::vector<Nanos> ends;
    for (Event* e : evs) {
      if (e->dur < 0) continue;
      while (!ends.empty() && ends.back() <= e->ts) ends.pop_back();
      if (!ends.empty() && e->ts + e->dur > ends.back()) {
        e->dur = ends.back() - e->ts;
        ++clipped;
      }
      ends.push_back(e->ts + e->dur);
    }
    for (const Event* e : evs) {
      nlohmann::json j;
      j["name"] = e->name;
      if (e->cat != nullptr) {
        j["cat"] = e->cat;
      } else {
        // "tmigr.remote_expiry" -> "tmigr"; the drivers' own ("tick_stop",
        // "migrate") -> "sched".
        const size_t dot = e->name.find('.');
        j["cat"] = dot == std::string::npos ? std::string("sched") : e->name.substr(0, dot);
      }
      j["pid"] = run.pid_;
      j["tid"] = e->cpu + 1;
      j["ts"] = Us(e->ts);
      nlohmann::json args = nlohmann::json::object();
      if (e->dur >= 0) {
        j["ph"] = "X";
        j["dur"] = Us(e->dur);
        if (e->cat == kTraceTask || e->cat == kTraceIdle) {
          if (e->task >= 0) args["task"] = e->task;
        } else if (e->task >= 0) {
          args["interrupted"] = e->task;
        }
      } else {
        j["ph"] = "i";
        j["s"] = e == &marker ? "p" : "t";
        for (uint8_t i = 0; i < e->nargs; ++i) args[e->args[i].key] = e->args[i].value;
      }
      if (!args.empty()) j["args"] = std::move(args);
      emit(j);
      if (e != &marker) ++written;  // (the marker is outside the bound)
    }
  }
  run.clipped_ = clipped;
  impl_->written += written;
  impl_->dropped += dropped;
  impl_->committed += written - run.budget_;
  nlohmann::json summary = {{"pid", run.pid_},           {"name", run.name_},
                            {"clock", run.clock_label_}, {"cpus", run.wanted_.ToString()},
                            {"max_events", run.budget_}, {"events", written},
                            {"dropped", dropped},        {"truncated", truncated},
                            {"clipped_slices", clipped}};
  if (truncated) summary["first_dropped_ts_us"] = Us(first_drop == kNanosMax ? 0 : first_drop);
  impl_->runs.push_back(std::move(summary));
}

absl::Status TraceFile::Close() {
  std::vector<TraceRun*> live;
  {
    MutexLock lk(mu_);
    if (impl_->closed)
      return impl_->write_failed
                 ? absl::InternalError(absl::StrCat("trace: writing '", path_, "' failed"))
                 : absl::OkStatus();
    live = impl_->live;
  }
  // Runs the caller did not finish end at their last recorded time.
  for (TraceRun* r : live) {
    r->Finish(r->LatestTime());
    r->file_ = nullptr;
  }
  MutexLock lk(mu_);
  impl_->live.clear();
  const bool truncated = impl_->dropped > 0;
  nlohmann::json other = {
      {"generator", "isolation (include/isolation/runtime/trace.h)"},
      {"max_events", std::to_string(options_.max_events)},
      {"events", std::to_string(impl_->written)},
      {"dropped_events", std::to_string(impl_->dropped)},
      {"truncated", truncated ? "true" : "false"},
      {"cpus", options_.cpus.nbits() == 0 ? std::string("all") : options_.cpus.ToString()}};
  nlohmann::json summary = {
      {"max_events", options_.max_events},
      {"events", impl_->written},
      {"dropped_events", impl_->dropped},
      {"truncated", truncated},
      {"cpus", options_.cpus.nbits() == 0 ? std::string("all") : options_.cpus.ToString()},
      {"runs", impl_->runs}};
  WriteLine(absl::StrCat("],\"otherData\":", Dump(other), ",\"isolation\":", Dump(summary), "}"));
  impl_->out.close();
  if (impl_->out.fail()) impl_->write_failed = true;
  impl_->closed = true;
  if (impl_->write_failed)
    return absl::InternalError(absl::StrCat("trace: writing '", path_, "' failed"));
  return absl::OkStatus();
}

}  // namespace isolation
