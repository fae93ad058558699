// SPDX-License-Identifier: GPL-2.0-or-later
// The trace.dat reader: libtracecmd opens the file and merges the CPUs'
// records in time order (tracecmd_iterate_events, as `trace-cmd report`
// does); each record's fields are read by name through libtraceevent and
// turned into the recording model's events, with the same normalisation as
// the text readers (text_reader.cc), so both give the same stream.

#include <cstring>
#include <memory>
#include <string>
#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "isolation/replay/readers.h"
#include "replay/event_names.h"
#include "replay/reader_internal.h"
#include "isolation/replay/recorder.h"

#include "replay/trace_libs.h"

namespace isolation::replay::internal {
namespace {

struct InputCloser {
  void operator()(tracecmd_input* h) const { tracecmd_close(h); }
};

// Fields of one event format, looked up once per event id and field name
// (keyed by the name literal's address: each call site names its field
// with one literal).
struct Format {
  const TracepointName* tp = nullptr;
  bool seen = false;
  std::vector<std::pair<const char*, tep_format_field*>> fields;
  tep_format_field* Field(tep_event* ev, const char* name) {
    for (const auto& [n, f] : fields) {
      if (n == name) return f;
    }
    tep_format_field* f = tep_find_field(ev, name);
    fields.emplace_back(name, f);
    return f;
  }
};

class DatReader {
 public:
  DatReader(const std::string& file, const std::string& name, const ReadOptions& options,
            EventSink& sink, ReadStats& stats)
      : file_(file),
        path_(name),
        options_(options),
        stats_(stats),
        emit_(name, "trace.dat", options, sink, stats) {}

  absl::Status Run() {
    absl::StatusOr<TraceDatHeader> header = ReadTraceDatHeader(file_);
    if (!header.ok()) {
      std::string m(SV(header.status().message()));
      if (file_ != path_ && m.starts_with(file_)) m = m.substr(file_.size() + 2);  // "<memfd>: ..."
      if (!m.starts_with(path_)) m = internal::Cat(path_, ": ", m);
      return absl::Status(header.status().code(), m);
    }
    tracecmd_set_loglevel(TEP_LOG_NONE);
    // Which buffer: probed on a handle of its own (reading a CPU's first
    // record moves that handle's position).
    int buffer = -1;  // -1: the top-level buffer
    {
      std::unique_ptr<tracecmd_input, InputCloser> probe(
          tracecmd_open(file_.c_str(), TRACECMD_FL_LOAD_NO_PLUGINS));
      if (probe == nullptr) {
        return absl::InvalidArgumentError(
            Cat(path_, ": libtracecmd cannot read it as a trace.dat"));
      }
      absl::StatusOr<int> b = ChooseBuffer(probe.get());
      if (!b.ok()) return b.status();
      buffer = *b;
    }
    top_.reset(tracecmd_open(file_.c_str(), TRACECMD_FL_LOAD_NO_PLUGINS));
    if (top_ == nullptr) {
      return absl::InvalidArgumentError(Cat(path_, ": libtracecmd cannot read it as a trace.dat"));
    }
    tracecmd_input* input = top_.get();
    if (buffer >= 0) {
      instance_.reset(tracecmd_buffer_instance_handle(top_.get(), buffer));
      if (instance_ == nullptr)
        return absl::InvalidArgumentError(Cat(path_, ": cannot open buffer ", buffer));
      input = instance_.get();
    }
    tep_ = tracecmd_get_tep(input);
    if (tep_ == nullptr) return absl::InvalidArgumentError(Cat(path_, ": no event formats"));
    emit_.SetFileCpus(header->cpus > 0 ? header->cpus : tep_get_cpus(tep_));
    emit_.SetFileRelease(header->kernel_release);
    if (!header->trace_clock.empty()) emit_.info().trace_clock = header->trace_clock;
    const int rc = tracecmd_iterate_events(input, nullptr, 0, &DatReader::OnRecord, this);
    if (!status_.ok()) return status_;
    if (rc < 0) {
      return absl::DataLossError(Cat(path_, ": libtracecmd stopped reading after record ",
                                     record_index_, " (truncated or corrupt)"));
    }
    return emit_.Finish();
  }

 private:
  // The buffer to read: ReadOptions::buffer, else the top-level one if it
  // has records, else the first instance that has.  -1 = top.
  absl::StatusOr<int> ChooseBuffer(tracecmd_input* top) {
    auto has_records = [](tracecmd_input* h) {
      tep_handle* tep = tracecmd_get_tep(h);
      if (tep == nullptr) return false;
      for (int cpu = 0; cpu < tep_get_cpus(tep); ++cpu) {
        tep_record* r = tracecmd_read_cpu_first(h, cpu);
        if (r != nullptr) {
          tracecmd_free_record(r);
          return true;
        }
      }
      return false;
    };
    const int n = tracecmd_buffer_instances(top);
    if (!options_.buffer.empty()) {
      for (int i = 0; i < n; ++i) {
        const char* name = tracecmd_buffer_instance_name(top, i);
        if (name != nullptr && options_.buffer == name) return i;
      }
      return absl::NotFoundError(Cat(path_, ": no buffer named '", Escape(options_.buffer), "'"));
    }
    if (has_records(top)) return -1;
    for (int i = 0; i < n; ++i) {
      std::unique_ptr<tracecmd_input, InputCloser> h(tracecmd_buffer_instance_handle(top, i));
      if (h != nullptr && has_records(h.get())) return i;
    }
    return -1;  // no records anywhere: the info alone
  }

  static int OnRecord(tracecmd_input*, tep_record* record, int cpu, void* self) {
    auto* r = static_cast<DatReader*>(self);
    // The first error stands: libtracecmd may call again after a stop
    // request (one call per CPU buffer), and a later call must neither
    // replace the error nor deliver an event past it.
    if (!r->status_.ok()) return 1;
    r->status_ = r->Record(record, cpu);
    return r->status_.ok() ? 0 : 1;
  }

  absl::Status Error(std::string_view what) const {
    return absl::InvalidArgumentError(
        Cat(path_, ": record ", record_index_, " (CPU ", cpu_, "): ", what));
  }

  bool Num(tep_event* ev, Format& fmt, tep_record* rec, const char* name, uint64_t& out) {
    tep_format_field* f = fmt.Field(ev, name);
    if (f == nullptr) return false;
    if (f->offset < 0 || f->size <= 0 || f->size > 8 || f->offset + f->size > rec->size)
      return false;
    unsigned long long v = 0;
    if (tep_read_number_field(f, rec->data, &v) != 0) return false;
    // Sign-extend signed fields narrower than 64 bits.
    if ((f->flags & TEP_FIELD_IS_SIGNED) != 0 && f->size < 8) {
      const int bits = f->size * 8;
      const uint64_t sign = uint64_t{1} << (bits - 1);
      v = (v ^ sign) - sign;
    }
    out = v;
    return true;
  }
  bool I32(tep_event* ev, Format& fmt, tep_record* rec, const char* name, int32_t& out) {
    uint64_t v;
    if (!Num(ev, fmt, rec, name, v)) return false;
    const auto s = static_cast<int64_t>(v);
    if (s < INT32_MIN || s > INT32_MAX) return false;
    out = static_cast<int32_t>(s);
    return true;
  }
  // A char[N], a __data_loc / __rel_loc string, or a trailing char[].
  bool Str(tep_event* ev, Format& fmt, tep_record* rec, const char* name, std::string_view& out) {
    tep_format_field* f = fmt.Field(ev, name);
    if (f == nullptr || f->offset < 0 || f->offset > rec->size) return false;
    const char* data = static_cast<const char*>(rec->data);
    int off = f->offset;
    int len = f->size;
    if ((f->flags & TEP_FIELD_IS_DYNAMIC) != 0) {
      if (f->offset + 4 > rec->size) return false;
      uint32_t loc;
      std::memcpy(&loc, data + f->offset, 4);
      off = static_cast<int>(loc & 0xffff);
      len = static_cast<int>(loc >> 16);
      if ((f->flags & TEP_FIELD_IS_RELATIVE) != 0) off += f->offset + 4;
    } else if (len == 0) {
      len = rec->size - off;  // char buf[]: to the record's end
    }
    if (off < 0 || len < 0 || off + len > rec->size) return false;
    out = std::string_view(data + off, strnlen(data + off, static_cast<size_t>(len)));
    return true;
  }
  std::string_view Function(uint64_t addr) {
    const char* name = tep_find_function(tep_, addr);
    return name != nullptr ? std::string_view(name) : std::string_view();
  }

  absl::Status Record(tep_record* rec, int cpu) {
    ++record_index_;
    ++stats_.lines;
    cpu_ = cpu;
    if (rec->missed_events != 0)
      stats_.lost_events += rec->missed_events > 0 ? rec->missed_events : 1;
    tep_event* ev = tep_find_event_by_record(tep_, rec);
    if (ev == nullptr) return Error("an event id the file's formats do not define");
    Format& fmt = formats_[ev->id];
    if (!fmt.seen) {
      fmt.seen = true;
      const TracepointName* tp = FindTracepoint(ev->name != nullptr ? ev->name : "");
      if (tp != nullptr && ev->system != nullptr && tp->system == ev->system) fmt.tp = tp;
    }
    if (fmt.tp == nullptr) {
      ++stats_.skipped;
      const std::string name =
          Cat(ev->system != nullptr ? ev->system : "?", ":", ev->name != nullptr ? ev->name : "?");
      if (stats_.skipped_names.size() < 64 || stats_.skipped_names.contains(AV(name)))
        ++stats_.skipped_names[name];
      return absl::OkStatus();
    }
    Event e;
    e.time = static_cast<Nanos>(rec->ts);
    e.cpu = cpu;
    e.pid = tep_data_pid(tep_, rec);
    e.kind = fmt.tp->kind;
    const std::string where = Cat("record ", record_index_, " (CPU ", cpu, ")");
    auto missing = [&](std::string_view what) {
      return Error(Cat(fmt.tp->full_name, ": missing ", what));
    };
    uint64_t u;
    int32_t i;
    std::string_view s1;
    std::string_view s2;
    switch (e.kind) {
      case EventKind::kSwitch: {
        int32_t prio;
        if (!Str(ev, fmt, rec, "prev_comm", s1) || !I32(ev, fmt, rec, "prev_pid", e.other) ||
            !Num(ev, fmt, rec, "prev_state", u) || !Str(ev, fmt, rec, "next_comm", s2) ||
            !I32(ev, fmt, rec, "next_pid", e.task) || !I32(ev, fmt, rec, "next_prio", prio)) {
          return missing("prev/next comm, pid, state or prio");
        }
        e.value = static_cast<int32_t>(u & 0xff);
        e.pid = e.other;  // as the text readers: the switch's current task is prev
        e.prio = static_cast<int16_t>(std::clamp(prio, -1, 32767));
        if (absl::Status s = emit_.Comm(e.other, s1); !s.ok()) return s;
        if (absl::Status s = emit_.Comm(e.task, s2); !s.ok()) return s;
        break;
      }
      case EventKind::kWaking:
      case EventKind::kWakeup:
      case EventKind::kWakeupNew: {
        int32_t prio;
        if (!Str(ev, fmt, rec, "comm", s1) || !I32(ev, fmt, rec, "pid", e.task) ||
            !I32(ev, fmt, rec, "prio", prio) || !I32(ev, fmt, rec, "target_cpu", e.cpu2)) {
          return missing("comm, pid, prio or target_cpu");
        }
        e.prio = static_cast<int16_t>(std::clamp(prio, -1, 32767));
        if (absl::Status s = emit_.Comm(e.task, s1); !s.ok()) return s;
        break;
      }
      case EventKind::kMigrate: {
        int32_t prio;
        if (!Str(ev, fmt, rec, "comm", s1) || !I32(ev, fmt, rec, "pid", e.task) ||
            !I32(ev, fmt, rec, "prio", prio) || !I32(ev, fmt, rec, "orig_cpu", e.cpu2) ||
            !I32(ev, fmt, rec, "dest_cpu", e.value)) {
          return missing("comm, pid, prio, orig_cpu or dest_cpu");
        }
        e.prio = static_cast<int16_t>(std::clamp(prio, -1, 32767));
        if (absl::Status s = emit_.Comm(e.task, s1); !s.ok()) return s;
        break;
      }
      case EventKind::kFork:
        if (!Str(ev, fmt, rec, "parent_comm", s1) || !I32(ev, fmt, rec, "parent_pid", e.other) ||
            !Str(ev, fmt, rec, "child_comm", s2) || !I32(ev, fmt, rec, "child_pid", e.task)) {
          return missing("parent/child comm or pid");
        }
        if (absl::Status s = emit_.Comm(e.other, s1); !s.ok()) return s;
        if (absl::Status s = emit_.Comm(e.task, s2); !s.ok()) return s;
        break;
      case EventKind::kNewTask:
        if (!I32(ev, fmt, rec, "pid", e.task) || !Str(ev, fmt, rec, "comm", s1) ||
            !Num(ev, fmt, rec, "clone_flags", u)) {
          return missing("pid, comm or clone_flags");
        }
        e.wide = static_cast<int64_t>(u);
        if (absl::Status s = emit_.Comm(e.task, s1); !s.ok()) return s;
        break;
      case EventKind::kExec: {
        if (!Str(ev, fmt, rec, "filename", s1) || !I32(ev, fmt, rec, "pid", e.task) ||
            !I32(ev, fmt, rec, "old_pid", e.other)) {
          return missing("filename, pid or old_pid");
        }
        const size_t slash = s1.rfind('/');
        if (slash != std::string_view::npos) s1.remove_prefix(slash + 1);
        if (absl::Status s = emit_.Comm(e.task, s1.substr(0, 15)); !s.ok()) return s;
        break;
      }
      case EventKind::kExit: {
        int32_t prio;
        if (!I32(ev, fmt, rec, "pid", e.task) || !I32(ev, fmt, rec, "prio", prio))
          return missing("pid or prio");
        e.prio = static_cast<int16_t>(std::clamp(prio, -1, 32767));
        break;
      }
      case EventKind::kRseqUpdate:
        if (!I32(ev, fmt, rec, "cpu_id", e.cpu2) || !I32(ev, fmt, rec, "node_id", i) ||
            !I32(ev, fmt, rec, "mm_cid", e.value)) {
          return missing("cpu_id, node_id or mm_cid");
        }
        e.task = e.pid;
        e.wide = i;
        break;
      case EventKind::kTmigrCpuIdle:
      case EventKind::kTmigrCpuNewTimer: {
        // tmigr_cpu_new_timer (not _idle) carries no nextevt: wide = -1.
        const bool has_next = fmt.Field(ev, "nextevt") != nullptr;
        if (!I32(ev, fmt, rec, "cpu", e.cpu2) || !Num(ev, fmt, rec, "parent", e.ptr) ||
            (has_next && !Num(ev, fmt, rec, "nextevt", u))) {
          return missing("cpu, parent or nextevt");
        }
        if (e.kind == EventKind::kTmigrCpuIdle && !has_next) return missing("nextevt");
        e.wide = has_next ? static_cast<int64_t>(u) : -1;
        e.value = std::string_view(ev->name) == "tmigr_cpu_new_timer_idle" ? 1 : 0;
        break;
      }
      case EventKind::kTmigrCpuActive:
      case EventKind::kTmigrCpuOnline:
      case EventKind::kTmigrCpuOffline:
      case EventKind::kTmigrHandleRemoteCpu:
        if (!I32(ev, fmt, rec, "cpu", e.cpu2) || !Num(ev, fmt, rec, "parent", e.ptr))
          return missing("cpu or parent");
        if (fmt.Field(ev, "wakeup") != nullptr) {
          if (!Num(ev, fmt, rec, "wakeup", u)) return missing("wakeup");
          e.wide = static_cast<int64_t>(u);
        }
        break;
      case EventKind::kTmigrGroupActive:
      case EventKind::kTmigrGroupInactive: {
        uint64_t parent;
        uint64_t child;
        uint64_t active;
        uint64_t migrator;
        if (!Num(ev, fmt, rec, "group", e.ptr) || !I32(ev, fmt, rec, "lvl", e.cpu2) ||
            !Num(ev, fmt, rec, "parent", parent) || !Num(ev, fmt, rec, "childmask", child) ||
            !Num(ev, fmt, rec, "active", active) || !Num(ev, fmt, rec, "migrator", migrator) ||
            !I32(ev, fmt, rec, "numa_node", e.other) || child > 0xffffffffULL || active > 0xff ||
            migrator > 0xff) {
          return missing("group, lvl, numa_node, parent, childmask, active or migrator");
        }
        e.wide = static_cast<int64_t>(parent);
        e.value = static_cast<int32_t>(child);
        e.aux = static_cast<uint8_t>(active);
        e.aux2 = static_cast<uint8_t>(migrator);
        break;
      }
      case EventKind::kTmigrHandleRemote:
        if (!Num(ev, fmt, rec, "group", e.ptr) || !I32(ev, fmt, rec, "lvl", e.cpu2))
          return missing("group or lvl");
        break;
      case EventKind::kTmigrUpdateEvents: {
        uint64_t ca;
        uint64_t ga;
        if (!Num(ev, fmt, rec, "group", e.ptr) || !I32(ev, fmt, rec, "group_lvl", e.cpu2) ||
            !Num(ev, fmt, rec, "nextevt", u) || !I32(ev, fmt, rec, "child_evtcpu", e.value) ||
            !Num(ev, fmt, rec, "child_active", ca) || !Num(ev, fmt, rec, "group_active", ga) ||
            ca > 0xff || ga > 0xff) {
          return missing("group, group_lvl, nextevt, child_evtcpu, child_active or group_active");
        }
        e.wide = static_cast<int64_t>(u);
        e.aux = static_cast<uint8_t>(ca);
        e.aux2 = static_cast<uint8_t>(ga);
        break;
      }
      case EventKind::kTimerStart: {
        uint64_t flags;
        if (!Num(ev, fmt, rec, "timer", e.ptr) || !Num(ev, fmt, rec, "expires", u) ||
            !Num(ev, fmt, rec, "flags", flags) || flags > 0xffffffffULL) {
          return missing("timer, expires or flags");
        }
        e.wide = static_cast<int64_t>(u);
        e.value = static_cast<int32_t>(static_cast<uint32_t>(flags));
        e.cpu2 = TimerFlags::Cpu(static_cast<uint32_t>(flags));
        e.aux = 1;
        break;
      }
      case EventKind::kTimerExpire:
        if (!Num(ev, fmt, rec, "timer", e.ptr) || !Num(ev, fmt, rec, "now", u))
          return missing("timer or now");
        e.wide = static_cast<int64_t>(u);
        break;
      case EventKind::kTimerBaseIdle:
        if (!Num(ev, fmt, rec, "is_idle", u) || !I32(ev, fmt, rec, "cpu", e.cpu2))
          return missing("is_idle or cpu");
        e.value = static_cast<int32_t>(u & 0xff);
        break;
      case EventKind::kTickStop:
        if (!I32(ev, fmt, rec, "success", e.value) || !Num(ev, fmt, rec, "dependency", u)) {
          return missing("success or dependency");
        }
        e.wide = static_cast<int64_t>(u);
        break;
      case EventKind::kTick:
        if (!Num(ev, fmt, rec, "function", u)) return missing("function");
        if (!TickHandlerName(Function(u))) {
          ++stats_.skipped;
          ++stats_.skipped_names["timer:hrtimer_expire_entry (not the tick)"];
          return absl::OkStatus();
        }
        e.task = e.pid;
        if (fmt.Field(ev, "now") != nullptr) {
          if (!Num(ev, fmt, rec, "now", u)) return missing("now");
          e.wide = static_cast<int64_t>(u);
        }
        break;
      case EventKind::kWorkExecute:
        if (!Num(ev, fmt, rec, "work", e.ptr) || !Num(ev, fmt, rec, "function", u))
          return missing("work or function");
        e.value = static_cast<int32_t>(WorkFunctionOf(Function(u)));
        break;
      case EventKind::kWorkQueue: {
        int32_t req;
        if (!Num(ev, fmt, rec, "work", e.ptr) || !Num(ev, fmt, rec, "function", u) ||
            !I32(ev, fmt, rec, "req_cpu", req) || !I32(ev, fmt, rec, "cpu", e.cpu2)) {
          return missing("work, function, req_cpu or cpu");
        }
        e.wide = req;
        e.value = static_cast<int32_t>(WorkFunctionOf(Function(u)));
        break;
      }
      case EventKind::kMarker:
        if (!Str(ev, fmt, rec, "buf", s1)) return missing("buf");
        return emit_.Marker(e, s1, where);
    }
    return emit_.Add(e, where);
  }

  const std::string file_;
  const std::string path_;
  const ReadOptions options_;
  ReadStats& stats_;
  Emitter emit_;
  tep_handle* tep_ = nullptr;
  std::unique_ptr<tracecmd_input, InputCloser> top_;  // declared first: closed last
  std::unique_ptr<tracecmd_input, InputCloser> instance_;
  absl::flat_hash_map<int, Format> formats_;
  absl::Status status_;
  int64_t record_index_ = 0;
  int cpu_ = -1;
};

}  // namespace

// `path` is what libtracecmd opens, `name` what messages say (a gzip'ed
// file is read from a memory file).
absl::Status ReadTraceDat(const std::string& path, const ReadOptions& options, EventSink& sink,
                          ReadStats& stats, const std::string& name) {
  DatReader reader(path, name, options, sink, stats);
  return reader.Run();
}

}  // namespace isolation::replay::internal
