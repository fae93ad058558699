// SPDX-License-Identifier: GPL-2.0-or-later
// ReadTraceDatHeader (recorder.h): the initial format and the options of a
// trace.dat, v6 (Documentation/trace-cmd/trace-cmd.dat.v6.5.txt) and v7
// (sections; an options section that is compressed is reported as such).
// Every length read from the file is checked against the file's size before
// anything is allocated or skipped.

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "isolation/replay/recorder.h"
#include "replay/reader_internal.h"

namespace isolation::replay {
namespace {

constexpr uint16_t kOptionDone = 0;
constexpr uint16_t kOptionTraceClock = 4;
constexpr uint16_t kOptionUname = 5;
constexpr uint16_t kOptionCpuCount = 8;

class Reader {
 public:
  Reader(const std::string& path, std::ifstream& in, uint64_t size)
      : path_(path), in_(in), size_(size) {}

  absl::Status Bad(std::string_view what) const {
    return absl::InvalidArgumentError(
        Cat(path_, ": not a readable trace.dat at byte ", pos_, ": ", what));
  }
  uint64_t pos() const { return pos_; }
  absl::Status Seek(uint64_t at) {
    if (at > size_)
      return Bad(Cat("offset ", at, " is past the end of the file (", size_, " bytes)"));
    in_.clear();
    in_.seekg(static_cast<std::streamoff>(at));
    pos_ = at;
    return absl::OkStatus();
  }
  absl::Status Bytes(void* out, uint64_t n, std::string_view what) {
    if (n > size_ - pos_)
      return Bad(Cat("truncated in ", what, " (", n, " bytes wanted, ", size_ - pos_, " left)"));
    in_.read(static_cast<char*>(out), static_cast<std::streamsize>(n));
    if (!in_) return Bad(Cat("read error in ", what));
    pos_ += n;
    return absl::OkStatus();
  }
  absl::Status Skip(uint64_t n, std::string_view what) {
    if (n > size_ - pos_) {
      return Bad(
          Cat(what, " declares ", n, " bytes, more than the ", size_ - pos_, " left in the file"));
    }
    return Seek(pos_ + n);
  }
  template <typename T>
  absl::Status Num(T& out, std::string_view what) {
    return Bytes(&out, sizeof(T),
                 what);  // little-endian files on little-endian hosts (checked by the caller)
  }
  absl::Status String(std::string& out, std::string_view what, size_t max = 4096) {
    out.clear();
    while (true) {
      char c;
      if (absl::Status s = Bytes(&c, 1, what); !s.ok()) return s;
      if (c == '\0') return absl::OkStatus();
      if (out.size() >= max) return Bad(Cat(what, " is not terminated within ", max, " bytes"));
      out.push_back(c);
    }
  }
  absl::Status Expect(std::string_view text, std::string_view what) {
    std::string got(text.size(), '\0');
    if (absl::Status s = Bytes(got.data(), got.size(), what); !s.ok()) return s;
    if (got != text) return Bad(Cat("expected ", what, ", found '", internal::Escape(got), "'"));
    return absl::OkStatus();
  }

 private:
  const std::string& path_;
  std::ifstream& in_;
  const uint64_t size_;
  uint64_t pos_ = 0;
};

// "[local] global ..." -> "local".
std::string SelectedClock(std::string_view text) {
  const size_t open = text.find('[');
  const size_t close = text.find(']');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) return "";
  return std::string(text.substr(open + 1, close - open - 1));
}

absl::Status ReadOption(Reader& r, uint16_t id, uint32_t size, TraceDatHeader& h,
                        bool* clock_follows = nullptr) {
  if (id == kOptionTraceClock && size == 0) {
    // v6: the clock text follows the CPUs' data table.
    if (clock_follows != nullptr) *clock_follows = true;
    return absl::OkStatus();
  }
  if (id == kOptionUname || id == kOptionTraceClock) {
    if (size > 65536) return r.Bad(Cat("option ", id, " of ", size, " bytes"));
    std::string text(size, '\0');
    if (absl::Status s = r.Bytes(text.data(), size, "an option"); !s.ok()) return s;
    while (!text.empty() && (text.back() == '\0' || text.back() == '\n')) text.pop_back();
    if (id == kOptionUname) {
      h.uname = text;
      std::vector<std::string_view> words = internal::Split(h.uname, ' ', true);
      if (words.size() >= 3) h.kernel_release = std::string(words[2]);
    } else {
      h.trace_clock = SelectedClock(text);
    }
    return absl::OkStatus();
  }
  if (id == kOptionCpuCount && size == 4) {
    uint32_t cpus;
    if (absl::Status s = r.Num(cpus, "the CPU count option"); !s.ok()) return s;
    if (h.cpus == 0) h.cpus = static_cast<int>(cpus);
    return absl::OkStatus();
  }
  return r.Skip(size, "an option");
}

absl::Status ReadV6(Reader& r, TraceDatHeader& h) {
  uint64_t n64;
  uint32_t n32;
  if (absl::Status s = r.Expect(std::string_view("header_page\0", 12), "\"header_page\""); !s.ok())
    return s;
  if (absl::Status s = r.Num(n64, "the header_page size"); !s.ok()) return s;
  if (absl::Status s = r.Skip(n64, "header_page"); !s.ok()) return s;
  if (absl::Status s = r.Expect(std::string_view("header_event\0", 13), "\"header_event\"");
      !s.ok())
    return s;
  if (absl::Status s = r.Num(n64, "the header_event size"); !s.ok()) return s;
  if (absl::Status s = r.Skip(n64, "header_event"); !s.ok()) return s;
  if (absl::Status s = r.Num(n32, "the ftrace format count"); !s.ok()) return s;
  if (n32 > 100000) return r.Bad(Cat(n32, " ftrace formats"));
  for (uint32_t i = 0; i < n32; ++i) {
    if (absl::Status s = r.Num(n64, "an ftrace format size"); !s.ok()) return s;
    if (absl::Status s = r.Skip(n64, "an ftrace format"); !s.ok()) return s;
  }
  uint32_t systems;
  if (absl::Status s = r.Num(systems, "the event system count"); !s.ok()) return s;
  if (systems > 100000) return r.Bad(Cat(systems, " event systems"));
  for (uint32_t i = 0; i < systems; ++i) {
    std::string name;
    if (absl::Status s = r.String(name, "an event system's name"); !s.ok()) return s;
    if (absl::Status s = r.Num(n32, "an event count"); !s.ok()) return s;
    if (n32 > 100000) return r.Bad(Cat(n32, " events in system ", name));
    for (uint32_t j = 0; j < n32; ++j) {
      if (absl::Status s = r.Num(n64, "an event format size"); !s.ok()) return s;
      if (absl::Status s = r.Skip(n64, "an event format"); !s.ok()) return s;
    }
  }
  if (absl::Status s = r.Num(n32, "the kallsyms size"); !s.ok()) return s;
  if (absl::Status s = r.Skip(n32, "kallsyms"); !s.ok()) return s;
  if (absl::Status s = r.Num(n32, "the printk formats size"); !s.ok()) return s;
  if (absl::Status s = r.Skip(n32, "printk formats"); !s.ok()) return s;
  if (absl::Status s = r.Num(n64, "the cmdlines size"); !s.ok()) return s;
  if (absl::Status s = r.Skip(n64, "cmdlines"); !s.ok()) return s;
  if (absl::Status s = r.Num(n32, "the CPU count"); !s.ok()) return s;
  if (n32 == 0 || n32 > 8192) return r.Bad(Cat("a CPU count of ", n32));
  h.cpus = static_cast<int>(n32);
  char tag[10];
  bool clock_follows = false;
  for (int round = 0; round < 2; ++round) {
    if (absl::Status s = r.Bytes(tag, 10, "the data section's tag"); !s.ok()) return s;
    const std::string_view t(tag, 10);
    if (t == std::string_view("options  \0", 10)) {
      for (int k = 0; k < 10000; ++k) {
        uint16_t id;
        if (absl::Status s = r.Num(id, "an option id"); !s.ok()) return s;
        if (id == kOptionDone) break;
        uint32_t size;
        if (absl::Status s = r.Num(size, "an option size"); !s.ok()) return s;
        if (absl::Status s = ReadOption(r, id, size, h, &clock_follows); !s.ok()) return s;
      }
      continue;
    }
    if (t == std::string_view("flyrecord\0", 10) || t == std::string_view("latency  \0", 10)) {
      if (t[0] == 'f') {
        // Each CPU's data: offset and size, inside the file.
        for (int c = 0; c < h.cpus; ++c) {
          uint64_t off;
          uint64_t size;
          if (absl::Status s = r.Num(off, "a CPU data offset"); !s.ok()) return s;
          if (absl::Status s = r.Num(size, "a CPU data size"); !s.ok()) return s;
          const uint64_t here = r.pos();
          if (absl::Status s = r.Seek(off); !s.ok()) return s;
          if (absl::Status s = r.Skip(size, Cat("CPU ", c, "'s data")); !s.ok()) return s;
          if (absl::Status s = r.Seek(here); !s.ok()) return s;
        }
        if (clock_follows) {
          uint64_t n;
          if (absl::Status s = r.Num(n, "the trace clock's size"); !s.ok()) return s;
          if (n > 4096) return r.Bad(Cat("a trace clock text of ", n, " bytes"));
          std::string text(static_cast<size_t>(n), '\0');
          if (absl::Status s = r.Bytes(text.data(), n, "the trace clock"); !s.ok()) return s;
          h.trace_clock = SelectedClock(text);
        }
      }
      return absl::OkStatus();
    }
    return r.Bad(Cat("expected \"options\", \"flyrecord\" or \"latency\", found '",
                     internal::Escape(t), "'"));
  }
  return r.Bad("no data section");
}

absl::Status ReadV7(Reader& r, TraceDatHeader& h) {
  std::string compression;
  std::string version;
  if (absl::Status s = r.String(compression, "the compression name", 64); !s.ok()) return s;
  if (absl::Status s = r.String(version, "the compression version", 64); !s.ok()) return s;
  if (compression != "none" && !compression.empty()) h.compression = compression;
  uint64_t next;
  if (absl::Status s = r.Num(next, "the first options section's offset"); !s.ok()) return s;
  for (int sections = 0; next != 0 && sections < 64; ++sections) {
    if (absl::Status s = r.Seek(next); !s.ok()) return s;
    uint16_t id;
    uint16_t flags;
    uint32_t string_id;
    uint64_t size;
    if (absl::Status s = r.Num(id, "a section id"); !s.ok()) return s;
    if (absl::Status s = r.Num(flags, "a section's flags"); !s.ok()) return s;
    if (absl::Status s = r.Num(string_id, "a section's name"); !s.ok()) return s;
    if (absl::Status s = r.Num(size, "a section's size"); !s.ok()) return s;
    if (size > r.pos() + size && size != 0) return r.Bad("a section size that overflows");
    if ((flags & 1) != 0) {
      h.compressed = true;  // the options are compressed: what libtracecmd reads, not this parser
      return absl::OkStatus();
    }
    next = 0;
    for (int k = 0; k < 10000; ++k) {
      uint16_t oid;
      uint32_t osize;
      if (absl::Status s = r.Num(oid, "an option id"); !s.ok()) return s;
      if (absl::Status s = r.Num(osize, "an option size"); !s.ok()) return s;
      if (oid == kOptionDone) {
        if (osize == 8 && !r.Num(next, "the next options section's offset").ok()) next = 0;
        break;
      }
      if (absl::Status s = ReadOption(r, oid, osize, h); !s.ok()) return s;
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<TraceDatHeader> ReadTraceDatHeader(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return absl::NotFoundError(Cat(path, ": cannot open: ", std::strerror(errno)));
  const auto size = static_cast<uint64_t>(in.tellg());
  in.seekg(0);
  Reader r(path, in, size);
  TraceDatHeader h;
  if (absl::Status s = r.Expect(std::string_view("\x17\x08\x44tracing", 10), "the trace.dat magic");
      !s.ok()) {
    return s;
  }
  std::string version;
  if (absl::Status s = r.String(version, "the file version", 16); !s.ok()) return s;
  if (version != "6" && version != "7")
    return r.Bad(Cat("file version '", internal::Escape(version), "' (6 or 7 are read)"));
  h.file_version = version[0] - '0';
  uint8_t endian;
  uint8_t long_size;
  uint32_t page_size;
  if (absl::Status s = r.Num(endian, "the endianness"); !s.ok()) return s;
  if (absl::Status s = r.Num(long_size, "the long size"); !s.ok()) return s;
  if (absl::Status s = r.Num(page_size, "the page size"); !s.ok()) return s;
  if (endian != 0) return r.Bad("a big-endian file (only little-endian files are read)");
  if (long_size != 4 && long_size != 8)
    return r.Bad(Cat("a long size of ", static_cast<int>(long_size)));
  if (page_size < 1024 || page_size > (1u << 20) || (page_size & (page_size - 1)) != 0) {
    return r.Bad(Cat("a page size of ", page_size));
  }
  h.page_size = static_cast<int>(page_size);
  absl::Status s = h.file_version == 6 ? ReadV6(r, h) : ReadV7(r, h);
  if (!s.ok()) return s;
  return h;
}

}  // namespace isolation::replay
