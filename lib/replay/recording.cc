// SPDX-License-Identifier: GPL-2.0-or-later
// The recording model's names and tables (recording.h).

#include "isolation/replay/recording.h"

#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "replay/event_names.h"
#include "replay/reader_internal.h"

namespace isolation::replay {

std::string_view EventKindName(EventKind kind) {
  for (const TracepointName& t : kTracepoints) {
    if (t.kind == kind) return t.full_name;
  }
  return "unknown";
}

const TracepointName* FindTracepoint(std::string_view name) {
  // "sched:sched_switch" (perf) or "sched_switch" (trace-cmd).
  const size_t colon = name.find(':');
  const std::string_view bare = colon == std::string_view::npos ? name : name.substr(colon + 1);
  for (const TracepointName& t : kTracepoints) {
    if (t.name == bare) return &t;
  }
  return nullptr;
}

std::string_view InfoSourceName(InfoSource source) {
  switch (source) {
    case InfoSource::kUnknown:
      return "unknown";
    case InfoSource::kFile:
      return "file";
    case InfoSource::kFlag:
      return "flag";
    case InfoSource::kInferred:
      return "inferred";
  }
  return "unknown";
}

std::array<int, 2> RecordingInfo::KernelVersion() const {
  // "6.18.44-fc-v1147" -> {6, 18}.
  std::vector<std::string_view> parts = internal::Split(kernel_release, '.');
  if (parts.size() < 2) return {0, 0};
  int major = 0;
  int minor = 0;
  std::string_view minor_text = parts[1];
  size_t digits = 0;
  while (digits < minor_text.size() && minor_text[digits] >= '0' && minor_text[digits] <= '9')
    ++digits;
  if (!internal::ParseSmallInt(parts[0], major) || digits == 0 ||
      !internal::ParseSmallInt(minor_text.substr(0, digits), minor) || major < 0 || minor < 0) {
    return {0, 0};
  }
  return {major, minor};
}

absl::Status Recording::Play(EventSink& sink) const {
  if (absl::Status s = sink.OnInfo(info); !s.ok()) return s;
  // Names first (a reader announces a name before the event naming it; the
  // table holds the latest name per pid, which is what a sink keeps too).
  for (const auto& [pid, comm] : comms) sink.OnComm(pid, comm);
  for (const Event& e : events) {
    if (e.kind == EventKind::kMarker && e.value >= 0 &&
        static_cast<size_t>(e.value) < markers.size()) {
      sink.OnMarker(e, markers[static_cast<size_t>(e.value)]);
    }
    if (absl::Status s = sink.OnEvent(e); !s.ok()) return s;
  }
  return absl::OkStatus();
}

std::vector<EventKind> RequiredEvents(std::string_view mechanism) {
  if (mechanism == "mm_cid") return {EventKind::kSwitch, EventKind::kRseqUpdate};
  if (mechanism == "tmigr") {
    return {EventKind::kSwitch, EventKind::kTmigrCpuIdle, EventKind::kTmigrCpuActive};
  }
  if (mechanism == "idle_select") {
    return {EventKind::kSwitch, EventKind::kWaking, EventKind::kWakeup};
  }
  if (mechanism == "vmstat") return {EventKind::kSwitch, EventKind::kWorkExecute};
  return {};
}

std::string MissingEventsMessage(std::string_view mechanism, const ReadStats& stats) {
  std::vector<std::string> missing;
  for (EventKind k : RequiredEvents(mechanism)) {
    if (stats.per_kind[static_cast<int>(k)] == 0) missing.emplace_back(EventKindName(k));
  }
  if (missing.empty()) return "";
  return Cat(mechanism, " cannot replay: the recording has no ", absl::StrJoin(missing, ", "),
             " events (record them: docs/replay.md)");
}

}  // namespace isolation::replay
