// SPDX-License-Identifier: GPL-2.0-or-later
// The live recorder (replay/recorder.h) and the trace.dat header reader.
// Recording needs root and tracefs: without them those tests skip, saying
// why; the option checks and the header reader run everywhere.

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "isolation/replay/readers.h"
#include "isolation/replay/recorder.h"
#include "isolation/testing/status_matchers.h"

namespace isolation::replay {
namespace {

using ::testing::HasSubstr;

std::string TempPath(const std::string& name) {
  const char* dir = std::getenv("TMPDIR");
  return absl::StrCat(dir != nullptr ? dir : "/tmp", "/isolation_recorder_test_", getpid(), "_",
                      name);
}

std::string TracingDir() {
  struct stat st {};
  if (stat("/sys/kernel/tracing/events", &st) == 0) return "/sys/kernel/tracing";
  return "";
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool CanRecord(std::string* why) {
  if (geteuid() != 0) {
    *why = "not root";
    return false;
  }
  return true;
}

TEST(Recorder, RefusesBadOptionsBeforeTouchingTracefs) {
  RecordOptions o;
  EXPECT_THAT(std::string(RecordHost(o).status().message()), HasSubstr("no output file"));
  o.output_path = TempPath("x.dat");
  EXPECT_THAT(std::string(RecordHost(o).status().message()), HasSubstr("give --duration"));
  o.duration = kNsPerMs;
  o.events = {"rseq:rseq_update"};
  EXPECT_THAT(std::string(RecordHost(o).status().message()), HasSubstr("sched:sched_switch"));
  o.events = {"sched:sched_switch", "../../etc:x"};
  EXPECT_EQ(RecordHost(o).status().code(), absl::StatusCode::kInvalidArgument);
  o.events = DefaultRecordEvents();
  o.output_path = "/nonexistent-dir/x.dat";
  EXPECT_THAT(std::string(RecordHost(o).status().message()),
              HasSubstr("cannot write /nonexistent-dir/x.dat"));
  o.output_path = TempPath("x.dat");
  o.buffer_kb_per_cpu = 1;
  EXPECT_EQ(RecordHost(o).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(Recorder, RecordsACommandIntoAFileTheReadersRead) {
  std::string why;
  if (!CanRecord(&why)) GTEST_SKIP() << "cannot record: " << why;
  const std::string dir = TracingDir();
  const std::string tracing_on = dir.empty() ? "" : ReadFile(dir + "/tracing_on");
  const std::string tracer = dir.empty() ? "" : ReadFile(dir + "/current_tracer");
  const std::string switch_enabled =
      dir.empty() ? "" : ReadFile(dir + "/events/sched/sched_switch/enable");
  RecordOptions o;
  o.output_path = TempPath("cmd.dat");
  o.command = {"/bin/sh", "-c", "for i in 1 2 3 4 5; do sleep 0.01; done"};
  o.events.push_back("nosuch:event");
  absl::StatusOr<RecordSummary> s = RecordHost(o);
  if (!s.ok() && absl::IsPermissionDenied(s.status())) GTEST_SKIP() << s.status();
  ISOLATION_ASSERT_OK(s);
  EXPECT_EQ(s->command_exit_status, 0);
  EXPECT_FALSE(s->interrupted);
  EXPECT_EQ(s->cpus, static_cast<int>(sysconf(_SC_NPROCESSORS_CONF)));
  EXPECT_THAT(s->events_missing, ::testing::Contains("nosuch:event"));
  // Nothing left behind: the instance, the top-level settings.
  if (!dir.empty()) {
    struct stat st {};
    EXPECT_NE(stat(absl::StrCat(dir, "/instances/isolab-record-", getpid()).c_str(), &st), 0);
    EXPECT_EQ(ReadFile(dir + "/tracing_on"), tracing_on);
    EXPECT_EQ(ReadFile(dir + "/current_tracer"), tracer);
    EXPECT_EQ(ReadFile(dir + "/events/sched/sched_switch/enable"), switch_enabled);
  }
  // The header, then the whole file through the reader.
  absl::StatusOr<TraceDatHeader> h = ReadTraceDatHeader(o.output_path);
  ISOLATION_ASSERT_OK(h);
  EXPECT_EQ(h->file_version, 6);
  EXPECT_EQ(h->cpus, s->cpus);
  EXPECT_EQ(h->kernel_release, s->kernel_release);
  EXPECT_EQ(h->trace_clock, "mono");
  ISOLATION_ASSERT_OK_AND_ASSIGN(Recording r, ReadRecording(o.output_path));
  EXPECT_GT(r.Count(EventKind::kSwitch), 0);
  EXPECT_GT(r.Count(EventKind::kExec), 0);  // sh, then sleep
  EXPECT_EQ(r.info.num_cpus, s->cpus);
  EXPECT_EQ(r.info.num_cpus_source, InfoSource::kFile);
  EXPECT_EQ(r.info.recorder, "isolab record");  // the marker's JSON was read
  EXPECT_EQ(r.info.kernel_release, s->kernel_release);
  EXPECT_EQ(r.info.trace_clock, "mono");
  EXPECT_EQ(r.info.isolation_source, InfoSource::kFile);
  EXPECT_EQ(static_cast<int>(r.info.core_of.size()), s->cpus);
  // trace-cmd itself reads it, where installed.
  if (access("/usr/bin/trace-cmd", X_OK) == 0) {
    const std::string out = TempPath("report.txt");
    const std::string cmd =
        "/usr/bin/trace-cmd report " + o.output_path + " > " + out + " 2>/dev/null";
    EXPECT_EQ(std::system(cmd.c_str()), 0);
    const std::string text = ReadFile(out);
    EXPECT_THAT(text, HasSubstr("sched_switch"));
    EXPECT_THAT(text, HasSubstr("tracing_mark_write: isolab-recording"));
    std::remove(out.c_str());
  }
  std::remove(o.output_path.c_str());
}

TEST(Recorder, AFailingCommandIsRecordedAndReported) {
  std::string why;
  if (!CanRecord(&why)) GTEST_SKIP() << "cannot record: " << why;
  RecordOptions o;
  o.output_path = TempPath("fail.dat");
  o.command = {"/nonexistent/command"};
  absl::StatusOr<RecordSummary> s = RecordHost(o);
  if (!s.ok() && absl::IsPermissionDenied(s.status())) GTEST_SKIP() << s.status();
  ISOLATION_ASSERT_OK(s);
  EXPECT_EQ(s->command_exit_status, 127);  // exec failed in the child
  o.command = {"/bin/sh", "-c", "kill -TERM $$"};
  s = RecordHost(o);
  ISOLATION_ASSERT_OK(s);
  EXPECT_EQ(s->command_exit_status, 128 + 15);
  std::remove(o.output_path.c_str());
}

// Bad files: each an error naming the file and the place.
TEST(TraceDatHeader, BadFilesNameTheFileAndTheOffset) {
  struct Case {
    std::string bytes;
    std::string message;
  };
  std::string good_start("\x17\x08\x44tracing6\0", 12);
  const std::vector<Case> cases = {
      {"", "byte 0"},
      {"\x17\x08\x44notrace", "magic"},
      {good_start, "truncated"},
      {good_start + std::string("\x00\x08\x00\x10\x00\x00", 6), "header_page"},
      {good_start + std::string("\x00\x08\x00\x10\x00\x00"
                                "header_page\0"
                                "\xff\xff\xff\xff\xff\xff\x00\x00",
                                26),
       "more than"},
      {std::string("\x17\x08\x44tracing9\0", 12), "version"},
      {good_start + std::string("\x01\x08\x00\x10\x00\x00", 6), "big-endian"},
      {good_start + std::string("\x00\x08\x00\x03\x00\x00", 6), "page size"},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    const std::string path = TempPath(absl::StrCat("bad", i, ".dat"));
    {
      std::ofstream out(path, std::ios::binary);
      out << cases[i].bytes;
    }
    absl::StatusOr<TraceDatHeader> h = ReadTraceDatHeader(path);
    EXPECT_FALSE(h.ok()) << i;
    EXPECT_THAT(std::string(h.status().message()), HasSubstr(path)) << i;
    EXPECT_THAT(std::string(h.status().message()), HasSubstr(cases[i].message)) << i;
    // The readers refuse them too, without crashing.
    ReadOptions ro;
    ro.format = TraceFormat::kTraceDat;
    EXPECT_FALSE(ReadRecording(path, ro).ok()) << i;
    std::remove(path.c_str());
  }
  EXPECT_EQ(ReadTraceDatHeader(TempPath("missing.dat")).status().code(),
            absl::StatusCode::kNotFound);
}

// A committed recording, truncated at many points: always an error, never a
// crash (the header check bounds every section before libtracecmd runs).
TEST(TraceDatHeader, TruncatedRecordingsAreRefused) {
  const std::string src = std::string(ISOLATION_REPLAY_DATA_DIR) + "/messaging.dat.gz";
  const std::string plain = TempPath("messaging.dat");
  ASSERT_EQ(std::system(("gzip -dc " + src + " > " + plain).c_str()), 0);
  const std::string data = ReadFile(plain);
  ASSERT_GT(data.size(), 10000u);
  for (size_t cut :
       {size_t{5}, size_t{11}, size_t{100}, size_t{2000}, data.size() / 3, data.size() - 100}) {
    const std::string path = TempPath("cut.dat");
    {
      std::ofstream out(path, std::ios::binary);
      out << data.substr(0, cut);
    }
    absl::StatusOr<Recording> r = ReadRecording(path);
    EXPECT_FALSE(r.ok()) << "cut at " << cut;
    EXPECT_THAT(std::string(r.status().message()), HasSubstr(path)) << cut;
    std::remove(path.c_str());
  }
  ISOLATION_ASSERT_OK_AND_ASSIGN(TraceDatHeader h, ReadTraceDatHeader(plain));
  EXPECT_EQ(h.cpus, 2);
  EXPECT_EQ(h.trace_clock, "mono");
  std::remove(plain.c_str());
}

}  // namespace
}  // namespace isolation::replay
