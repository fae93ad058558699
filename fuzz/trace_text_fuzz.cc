// SPDX-License-Identifier: GPL-2.0-or-later
// Fuzz the text readers (`trace-cmd report` and `perf script` text,
// replay/readers.h) and the replay driver behind them.  The first byte picks
// the format and the malformed-line budget; the rest is the text.
// Properties: never crash, hang or grow without bound; an error has a
// message naming the file; every delivered event is on a CPU of the machine
// the reader announced, in time order, after exactly one OnInfo; the replay
// driver takes every stream a reader accepts, or refuses it with a message.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>

#include "isolation/core/isolation_config.h"
#include "isolation/core/topology.h"
#include "isolation/replay/readers.h"
#include "isolation/replay/replay_driver.h"

namespace {

[[noreturn]] void Fail(const char* what) {
  std::fprintf(stderr, "trace_text_fuzz: %s\n", what);
  std::abort();
}

using isolation::replay::Event;
using isolation::replay::RecordingInfo;

// Checks the stream and forwards it to a replay driver for the announced
// machine (small machines only: the fuzzer's time goes to the parsers).
class Checker final : public isolation::replay::EventSink {
 public:
  absl::Status OnInfo(const RecordingInfo& info) override {
    if (++infos_ != 1) Fail("OnInfo twice");
    cpus_ = info.num_cpus;
    if (cpus_ < 1) Fail("a machine without CPUs announced");
    if (cpus_ <= 64) {
      absl::StatusOr<isolation::Topology> topo = isolation::replay::MachineTopology(info);
      if (topo.ok()) {
        auto driver =
            isolation::replay::ReplayDriver::Create(*topo, isolation::IsolationConfig(*topo));
        if (!driver.ok()) Fail("no replay driver for a valid machine");
        driver_ = std::move(*driver);
        if (!driver_->OnInfo(info).ok()) Fail("the driver refused the reader's info");
      }
    }
    return absl::OkStatus();
  }
  absl::Status OnEvent(const Event& e) override {
    if (infos_ != 1) Fail("an event before OnInfo");
    if (e.cpu < 0 || e.cpu >= cpus_) Fail("an event outside the machine");
    if (have_ && e.time < last_) Fail("time went back");
    have_ = true;
    last_ = e.time;
    if (driver_ != nullptr) {
      absl::Status s = driver_->OnEvent(e);
      if (!s.ok()) {
        if (s.message().empty()) Fail("driver error without message");
        driver_.reset();
      }
    }
    return absl::OkStatus();
  }
  void Finish() {
    if (driver_ != nullptr) (void)driver_->Finish();
  }

 private:
  int infos_ = 0;
  int cpus_ = 0;
  bool have_ = false;
  isolation::Nanos last_ = 0;
  std::unique_ptr<isolation::replay::ReplayDriver> driver_;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t mode = data[0];
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  isolation::replay::ReadOptions options;
  options.max_bad_lines = (mode & 2) != 0 ? 3 : 0;
  options.max_cpus = 256;  // keep per-event work small
  const auto format = (mode & 1) != 0 ? isolation::replay::TraceFormat::kPerfScript
                                      : isolation::replay::TraceFormat::kTraceCmdReport;
  Checker checker;
  absl::Status s = isolation::replay::ReadTraceText(text, "fuzz.txt", format, options, checker);
  if (!s.ok()) {
    if (std::string(s.message()).find("fuzz.txt") == std::string::npos)
      Fail("error not naming the file");
    return 0;
  }
  checker.Finish();
  return 0;
}
