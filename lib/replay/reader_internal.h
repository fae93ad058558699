// SPDX-License-Identifier: GPL-2.0-or-later
// Internal to lib/replay: what the trace.dat and the text readers share --
// the emit pipeline (machine info settled before the first event, events
// checked and counted), number parsing, escaping for messages.

#ifndef ISOLATION_LIB_REPLAY_READER_INTERNAL_H_
#define ISOLATION_LIB_REPLAY_READER_INTERNAL_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "isolation/replay/readers.h"
#include "isolation/replay/recording.h"

namespace isolation::replay::internal {

// Debian's Abseil has a string_view of its own, distinct from std's: these
// small helpers keep the readers on std::string_view.
inline absl::string_view AV(std::string_view s) { return absl::string_view(s.data(), s.size()); }
inline bool Contains(std::string_view s, std::string_view part) {
  return s.find(part) != std::string_view::npos;
}
inline bool ConsumePrefix(std::string_view& s, std::string_view prefix) {
  if (!s.starts_with(prefix)) return false;
  s.remove_prefix(prefix.size());
  return true;
}
// absl::StrCat that also takes std::string_view.
template <typename T>
decltype(auto) Alpha(const T& v) {
  if constexpr (std::is_same_v<T, std::string_view>) {
    return AV(v);
  } else {
    return (v);
  }
}
template <typename... A>
std::string Cat(const A&... a) {
  return absl::StrCat(Alpha(a)...);
}
inline std::string_view SV(absl::string_view s) { return std::string_view(s.data(), s.size()); }

// Splits at `sep`; empty pieces dropped when skip_empty.
std::vector<std::string_view> Split(std::string_view s, char sep, bool skip_empty = false);
bool ParseSmallInt(std::string_view text, int& out);  // decimal int

// `text` with control bytes and non-ASCII escaped, at most `max` bytes of it.
std::string Escape(std::string_view text, size_t max = 120);

// Numbers as the tracepoints print them.  Each returns false on anything but
// a complete number of the stated form that fits.
bool ParseDec(std::string_view text, int64_t& out);       // [-]digits (leading zeros allowed)
bool ParseHex(std::string_view text, uint64_t& out);      // [0x]hexdigits
bool ParseU64(std::string_view text, uint64_t& out);      // digits, or 0x-prefixed hex
bool ParsePointer(std::string_view text, uint64_t& out);  // 0x..., (nil), 0
bool ParseInt32(std::string_view text, int32_t& out);     // decimal in int32 range
// A `trace-cmd report` / `perf script` timestamp "2571.231671" (us) or
// "2571.231671123" (ns) into ns; `ns_digits` tells which.
bool ParseTimestamp(std::string_view text, int64_t& ns, bool& ns_digits);

// The text readers over any byte source: `fill(buf, n)` returns the bytes it
// put in buf, 0 at the end.
absl::Status ReadTextFill(const std::string& name, TraceFormat format, const ReadOptions& options,
                          EventSink& sink, ReadStats& stats,
                          absl::FunctionRef<size_t(char*, size_t)> fill);

// The text format whose lines `head` starts with, kAuto if neither.
TraceFormat DetectTextFormat(std::string_view head);

// How many events are held back while looking for an isolab-recording
// marker (written just after tracing starts) before the info is sent.
inline constexpr size_t kInfoScanEvents = 200'000;

// Takes the reader's output in order, settles RecordingInfo (file facts,
// then ReadOptions, then inference), sends OnInfo once before the first
// event, checks each event against the machine and counts it.
class Emitter {
 public:
  Emitter(const std::string& path, std::string_view format, const ReadOptions& options,
          EventSink& sink, ReadStats& stats);

  RecordingInfo& info() { return info_; }
  // Facts from the file's header (before any event), InfoSource kFile.
  void SetFileCpus(int cpus);
  void SetFileRelease(std::string_view release);
  // `where` names the place for messages ("line 12", "record 40 (CPU 1)").
  absl::Status Comm(int32_t pid, std::string_view comm);
  absl::Status Marker(Event event, std::string_view text, std::string_view where);
  absl::Status Add(Event event, std::string_view where);
  // End of input: sends what is held back.
  absl::Status Finish();
  const std::string& path() const { return path_; }

 private:
  struct PendingComm {
    int32_t pid;
    std::string comm;
  };
  struct PendingMarker {
    Event event;
    std::string text;
  };
  struct PendingEvent {
    Event event;
    std::string where;
  };
  using Pending = std::variant<PendingComm, PendingMarker, PendingEvent>;

  absl::Status SendInfo();
  // The time order: an event older than its predecessor by at most
  // max_time_skew gets its time, by more is an error.
  absl::Status Order(Event& event, std::string_view where);
  absl::Status Deliver(const Event& e, std::string_view where);
  absl::Status Check(const Event& e, std::string_view where) const;
  absl::Status Error(std::string_view where, std::string_view what) const;

  const std::string path_;
  const ReadOptions options_;
  EventSink& sink_;
  ReadStats& stats_;
  RecordingInfo info_;
  bool info_sent_ = false;
  absl::Status sink_error_;  // what the sink answered to OnInfo
  bool marker_seen_ = false;
  std::string marker_chunks_;
  int marker_next_chunk_ = 1;
  int max_cpu_seen_ = -1;
  Nanos last_time_ = 0;
  bool have_time_ = false;
  std::vector<Pending> pending_;
  int32_t marker_count_ = 0;
};

}  // namespace isolation::replay::internal

namespace isolation::replay {
using internal::AV;
using internal::Cat;
using internal::SV;
}  // namespace isolation::replay

#endif  // ISOLATION_LIB_REPLAY_READER_INTERNAL_H_
