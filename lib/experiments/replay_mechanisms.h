// SPDX-License-Identifier: GPL-2.0-or-later
// replay_mechanisms.h (internal): one replay per mechanism, each an observer
// of the replay driver holding an instance of every registered variant (a
// user's included), and the agreement count they share.
//
// A mechanism replay judges a kernel decision only where the recording holds
// every input the decision needs; the others are counted as not judged,
// never as agreement (docs/replay.md lists, per mechanism, what a trace
// lacks and what that excludes).  Thread safety: the replay driver's thread.

#ifndef ISOLATION_LIB_EXPERIMENTS_REPLAY_MECHANISMS_H_
#define ISOLATION_LIB_EXPERIMENTS_REPLAY_MECHANISMS_H_

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "experiments/replay_experiment.h"
#include "isolation/core/isolation_config.h"
#include "isolation/core/topology.h"
#include "isolation/replay/recording.h"
#include "isolation/replay/replay_driver.h"

namespace isolation::experiments {

// What every mechanism replay is built from.
struct ReplaySetup {
  const replay::RecordingInfo* info = nullptr;
  const Topology* topology = nullptr;
  const IsolationConfig* isolation =
      nullptr;                              // the variants' (the recorded kernel's, or the what-if)
  bool isolation_is_recorded = true;        // agreement is computed only then
  std::array<int, 2> kernel_version{0, 0};  // {0, 0}: unknown
  const ReplayExperimentOptions* options = nullptr;
};

// The kernel's decisions one variant reproduced.
struct Agreement {
  int64_t judged = 0;      // decisions whose inputs the recording holds
  int64_t agreed = 0;      // ... that the variant made as the kernel did
  int64_t not_judged = 0;  // decisions whose inputs the recording lacks
  std::vector<std::string> first_disagreements;
  // Counts one judged decision; on a disagreement keeps `context()` among
  // the first `max_kept`.
  void Judge(bool same, int max_kept, absl::FunctionRef<std::string()> context) {
    ++judged;
    if (same) {
      ++agreed;
    } else if (static_cast<int>(first_disagreements.size()) < max_kept) {
      first_disagreements.push_back(context());
    }
  }
  double Share() const {
    return judged > 0 ? static_cast<double>(agreed) / static_cast<double>(judged) : 0.0;
  }
  nlohmann::json Json() const;
  std::string Text() const;  // "99.7 % (3990 of 4002; 12 not judged)"
};

// The rows a mechanism replays, from ReplayExperimentOptions::variants.
class RowFilter {
 public:
  // `requested`: the names asked for (null: every registered row).
  // `flag`: the flag they came from, for messages.  Checks every requested
  // name is one of `registered` (negative controls included).
  static absl::StatusOr<RowFilter> Make(const ReplaySetup& setup, std::string_view mechanism,
                                        std::string_view flag,
                                        const std::vector<std::string>& registered);
  bool active() const { return active_; }
  // Whether the row `name` replays; `negative_control` rows replay when
  // named, or with --replay_negative_controls when no list is given.
  bool Wants(std::string_view name, bool negative_control) const;

 private:
  bool active_ = false;
  bool negative_controls_ = false;
  std::vector<std::string> names_;
};

// One mechanism's replay.
class MechanismReplay : public replay::ReplayObserver {
 public:
  ~MechanismReplay() override = default;
  virtual std::string_view name() const = 0;  // "mm_cid", "tmigr", "idle_select", "vmstat"
  // Registers its hooks and itself with the driver.
  virtual absl::Status Attach(replay::ReplayDriver& driver) = 0;
  // After the replay: the mechanism's JSON object (rows, agreement, notes)
  // and its text section; adds invariant violations of correct variants.
  virtual void Report(const replay::ReadStats& stats, const replay::ReplayDriver& driver,
                      nlohmann::json& out, std::string& text, int64_t& violations) = 0;
};

absl::StatusOr<std::unique_ptr<MechanismReplay>> MakeMmCidReplay(const ReplaySetup& setup);
absl::StatusOr<std::unique_ptr<MechanismReplay>> MakeTmigrReplay(const ReplaySetup& setup);
absl::StatusOr<std::unique_ptr<MechanismReplay>> MakeIdleReplay(const ReplaySetup& setup);
absl::StatusOr<std::unique_ptr<MechanismReplay>> MakeVmstatReplay(const ReplaySetup& setup);

// A recorded event in one short line, for disagreement contexts:
// "12.345678901 CPU 1 sched_switch 4711 (perf) -> 0".
std::string DescribeEvent(const replay::Event& e, const replay::ReplayDriver& driver);

// A fixed-width text table: header row, then rows (each as many cells).
std::string TextTable(const std::vector<std::string>& header,
                      const std::vector<std::vector<std::string>>& rows);

}  // namespace isolation::experiments

#endif  // ISOLATION_LIB_EXPERIMENTS_REPLAY_MECHANISMS_H_
