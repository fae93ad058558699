// SPDX-License-Identifier: GPL-2.0-or-later
// WriteTraceDat (trace_dat_writer.h).  The kernel symbols written are those
// the recorded events' function pointers name (fields "function" and "ip"),
// found by walking the recorded pages with libtraceevent's kbuffer, so the
// file carries a few hundred bytes of /proc/kallsyms instead of megabytes.

#include "replay/trace_dat_writer.h"

#include <dirent.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "replay/reader_internal.h"

#include "replay/trace_libs.h"

namespace isolation::replay {
namespace {

using internal::Cat;

absl::StatusOr<std::string> Slurp(const std::string& path, size_t max = size_t{1} << 30) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::InternalError(Cat("cannot read ", path, ": ", std::strerror(errno)));
  std::ostringstream ss;
  ss << in.rdbuf();
  std::string s = ss.str();
  if (s.size() > max) return absl::InternalError(Cat(path, " is larger than ", max, " bytes"));
  return s;
}

class Out {
 public:
  explicit Out(FILE* f) : f_(f) {}
  void Bytes(const void* p, size_t n) {
    if (n > 0 && std::fwrite(p, 1, n, f_) != n) ok_ = false;
    pos_ += static_cast<int64_t>(n);
  }
  void Str(std::string_view s) { Bytes(s.data(), s.size()); }
  template <typename T>
  void Num(T v) {
    Bytes(&v, sizeof v);
  }
  int64_t pos() const { return pos_; }
  bool ok() const { return ok_; }

 private:
  FILE* f_;
  int64_t pos_ = 0;
  bool ok_ = true;
};

// Addresses of the functions the recorded events point at.
std::set<unsigned long long> RecordedFunctions(const DatWriteInput& in) {
  std::set<unsigned long long> addrs;
  tep_handle* tep = tracefs_local_events(in.tracing_dir.c_str());
  if (tep == nullptr) return addrs;
  kbuffer* kbuf = kbuffer_alloc(KBUFFER_LSIZE_8, KBUFFER_ENDIAN_LITTLE);
  std::vector<char> page(static_cast<size_t>(in.page_size));
  for (size_t cpu = 0; cpu < in.cpu_files.size(); ++cpu) {
    FILE* f = std::fopen(in.cpu_files[cpu].c_str(), "rb");
    if (f == nullptr) continue;
    while (std::fread(page.data(), 1, page.size(), f) == page.size()) {
      if (kbuffer_load_subbuffer(kbuf, page.data()) < 0) continue;
      unsigned long long ts = 0;
      for (void* data = kbuffer_read_event(kbuf, &ts); data != nullptr;
           data = kbuffer_next_event(kbuf, &ts)) {
        tep_record rec{};
        rec.ts = ts;
        rec.data = data;
        rec.size = kbuffer_event_size(kbuf);
        rec.cpu = static_cast<int>(cpu);
        tep_event* ev = tep_find_event_by_record(tep, &rec);
        if (ev == nullptr) continue;
        for (const char* name : {"function", "ip"}) {
          tep_format_field* field = tep_find_field(ev, name);
          unsigned long long v = 0;
          if (field != nullptr && field->size == 8 && field->offset + 8 <= rec.size &&
              tep_read_number_field(field, rec.data, &v) == 0 && v != 0) {
            addrs.insert(v);
          }
        }
      }
    }
    std::fclose(f);
  }
  kbuffer_free(kbuf);
  tep_free(tep);
  return addrs;
}

// The /proc/kallsyms lines naming `addrs`: for each, the symbol at or below
// it (a function pointer is its symbol's address; ftrace:print's `ip` points
// inside tracing_mark_write).
std::string Kallsyms(const std::set<unsigned long long>& addrs) {
  if (addrs.empty()) return "";
  std::ifstream in("/proc/kallsyms");
  std::vector<std::pair<unsigned long long, std::string>> syms;
  std::string line;
  while (std::getline(in, line)) {
    unsigned long long a = 0;
    char type = 0;
    if (std::sscanf(line.c_str(), "%llx %c", &a, &type) == 2 && a != 0 &&
        (type == 't' || type == 'T')) {
      syms.emplace_back(a, line);
    }
  }
  std::sort(syms.begin(), syms.end());
  std::set<size_t> keep;
  // The symbols the readers look for by name, whatever the walk found
  // (the marker's ip is inside tracing_mark_write).
  static constexpr std::string_view kAlways[] = {
      " tracing_mark_write", " tracing_mark_raw_write",    " tick_nohz_handler",
      " tick_sched_timer",   " tick_nohz_highres_handler", " vmstat_update",
      " vmstat_shepherd"};
  for (size_t i = 0; i < syms.size(); ++i) {
    const std::string_view line = syms[i].second;
    for (std::string_view name : kAlways) {
      if (line.size() > name.size() && line.ends_with(name)) keep.insert(i);
    }
  }
  for (unsigned long long a : addrs) {
    auto it = std::upper_bound(syms.begin(), syms.end(), std::make_pair(a, std::string("\xff")));
    if (it == syms.begin()) continue;
    keep.insert(static_cast<size_t>(std::prev(it) - syms.begin()));
  }
  std::string out;
  for (size_t i : keep) out += syms[i].second + "\n";
  return out;
}

std::vector<std::string> EventDirs(const std::string& system_dir) {
  std::vector<std::string> out;
  DIR* d = opendir(system_dir.c_str());
  if (d == nullptr) return out;
  while (dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    std::ifstream probe(Cat(system_dir, "/", name, "/format"));
    if (probe) out.push_back(name);
  }
  closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

absl::StatusOr<int64_t> WriteTraceDat(const std::string& path, const DatWriteInput& in) {
  const std::string events = Cat(in.tracing_dir, "/events");
  absl::StatusOr<std::string> header_page = Slurp(Cat(events, "/header_page"));
  if (!header_page.ok()) return header_page.status();
  absl::StatusOr<std::string> header_event = Slurp(Cat(events, "/header_event"));
  if (!header_event.ok()) return header_event.status();
  absl::StatusOr<std::string> print_format = Slurp(Cat(events, "/ftrace/print/format"));
  if (!print_format.ok()) return print_format.status();
  const std::string cmdlines = Slurp(Cat(in.tracing_dir, "/saved_cmdlines")).value_or("");
  const std::string kallsyms = Kallsyms(RecordedFunctions(in));

  static_assert(std::endian::native == std::endian::little,
                "the writer writes little-endian files");
  static_assert(sizeof(long) == 8, "the writer writes 64-bit files");
  // Written beside the output and renamed over it once complete.
  const std::string tmp = Cat(path, ".partial");
  FILE* f = std::fopen(tmp.c_str(), "wb");
  if (f == nullptr)
    return absl::InternalError(Cat("cannot write ", tmp, ": ", std::strerror(errno)));
  Out o(f);
  o.Str(std::string_view("\x17\x08\x44tracing", 10));
  o.Str(std::string_view("6\0", 2));
  o.Num<uint8_t>(0);  // little endian
  o.Num<uint8_t>(8);  // long size
  o.Num<uint32_t>(static_cast<uint32_t>(in.page_size));
  o.Str(std::string_view("header_page\0", 12));
  o.Num<uint64_t>(header_page->size());
  o.Str(*header_page);
  o.Str(std::string_view("header_event\0", 13));
  o.Num<uint64_t>(header_event->size());
  o.Str(*header_event);
  o.Num<uint32_t>(1);  // ftrace events: print, so that the marker decodes
  o.Num<uint64_t>(print_format->size());
  o.Str(*print_format);
  std::vector<std::string> systems;
  for (const std::string& s : in.systems) {
    if (s != "ftrace") systems.push_back(s);
  }
  o.Num<uint32_t>(static_cast<uint32_t>(systems.size()));
  for (const std::string& s : systems) {
    const std::string dir = Cat(events, "/", s);
    const std::vector<std::string> evs = EventDirs(dir);
    o.Str(s);
    o.Num<uint8_t>(0);
    o.Num<uint32_t>(static_cast<uint32_t>(evs.size()));
    for (const std::string& e : evs) {
      absl::StatusOr<std::string> fmt = Slurp(Cat(dir, "/", e, "/format"));
      if (!fmt.ok()) {
        std::fclose(f);
        std::remove(tmp.c_str());
        return fmt.status();
      }
      o.Num<uint64_t>(fmt->size());
      o.Str(*fmt);
    }
  }
  o.Num<uint32_t>(static_cast<uint32_t>(kallsyms.size()));
  o.Str(kallsyms);
  o.Num<uint32_t>(0);  // printk formats
  o.Num<uint64_t>(cmdlines.size());
  o.Str(cmdlines);
  const auto cpus = static_cast<uint32_t>(in.cpu_files.size());
  o.Num<uint32_t>(cpus);
  o.Str(std::string_view("options  \0", 10));
  const std::string uname = Cat(in.uname, std::string(1, '\0'));
  o.Num<uint16_t>(5);  // TRACECMD_OPTION_UNAME
  o.Num<uint32_t>(static_cast<uint32_t>(uname.size()));
  o.Str(uname);
  // TRACECMD_OPTION_TRACECLOCK: empty here; in a v6 file it announces the
  // clock text that follows the CPUs' offset table.
  o.Num<uint16_t>(4);
  o.Num<uint32_t>(0);
  o.Num<uint16_t>(0);  // TRACECMD_OPTION_DONE
  o.Str(std::string_view("flyrecord\0", 10));
  std::vector<int64_t> sizes;
  for (const std::string& file : in.cpu_files) {
    std::ifstream probe(file, std::ios::binary | std::ios::ate);
    sizes.push_back(probe ? static_cast<int64_t>(probe.tellg()) : 0);
  }
  const int64_t page = in.page_size;
  const std::string clock_text = in.trace_clock;
  int64_t offset = (o.pos() + 16 * static_cast<int64_t>(cpus) + 8 +
                    static_cast<int64_t>(clock_text.size()) + page - 1) /
                   page * page;
  for (uint32_t c = 0; c < cpus; ++c) {
    o.Num<uint64_t>(static_cast<uint64_t>(offset));
    o.Num<uint64_t>(static_cast<uint64_t>(sizes[c]));
    offset += sizes[c];
  }
  o.Num<uint64_t>(clock_text.size());
  o.Str(clock_text);
  const std::string pad(static_cast<size_t>((page - o.pos() % page) % page), '\0');
  o.Str(pad);
  std::vector<char> buf(1 << 20);
  for (uint32_t c = 0; c < cpus; ++c) {
    FILE* in_f = std::fopen(in.cpu_files[c].c_str(), "rb");
    if (in_f == nullptr) {
      std::fclose(f);
      std::remove(tmp.c_str());
      return absl::InternalError(Cat("cannot read ", in.cpu_files[c], ": ", std::strerror(errno)));
    }
    size_t n;
    while ((n = std::fread(buf.data(), 1, buf.size(), in_f)) > 0) o.Bytes(buf.data(), n);
    std::fclose(in_f);
  }
  const bool ok = o.ok() && std::fclose(f) == 0;
  if (!ok || std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    return absl::InternalError(Cat("writing ", path, ": ", std::strerror(errno)));
  }
  return o.pos();
}

}  // namespace isolation::replay
