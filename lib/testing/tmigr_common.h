// SPDX-License-Identifier: GPL-2.0-or-later
// Internal to the conformance kit: what the tmigr checks share -- a recording
// timer backend, hierarchy set-ups by variant, and a violation collector.

#ifndef ISOLATION_LIB_TESTING_TMIGR_COMMON_H_
#define ISOLATION_LIB_TESTING_TMIGR_COMMON_H_

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "isolation/testing/tmigr.h"
#include "isolation/tmigr/timers.h"
#include "isolation/tmigr/tmigr.h"

namespace isolation::testing::tmigr_internal {

using tmigr::GroupId;
using tmigr::GroupSnapshot;
using tmigr::HierarchySnapshot;
using tmigr::TimerMigration;

// Violations of one check, each prefixed with the check's label.
class Report {
 public:
  explicit Report(std::string label) : label_(std::move(label)) {}
  void Fail(absl::string_view what) { out_.push_back(absl::StrCat(label_, ": ", what)); }
  void True(bool cond, absl::string_view what) {
    if (!cond) Fail(what);
  }
  template <typename A, typename B>
  void Eq(const A& got, const B& want, absl::string_view what) {
    if (!(got == want))
      Fail(absl::StrCat(what, ": got ", absl::StrCat(got), ", want ", absl::StrCat(want)));
  }
  void Ok(const absl::Status& s, absl::string_view what) {
    if (!s.ok()) Fail(absl::StrCat(what, ": ", s.ToString()));
  }
  // Appends each line of `violations` (e.g. CheckInvariants()), with `where`.
  void Add(const std::vector<std::string>& violations, absl::string_view where) {
    for (const std::string& v : violations) Fail(absl::StrCat(where, ": ", v));
  }
  bool ok() const { return out_.empty(); }
  std::vector<std::string> Take() { return std::move(out_); }

 private:
  std::string label_;
  std::vector<std::string> out_;
};

// A backend that records remote expiries and serves per-CPU next global
// expiries from a table (an expired CPU's entry becomes KTIME_MAX).
class RecordingBackend : public tmigr::TimerBackend {
 public:
  explicit RecordingBackend(int ncpus) : next_global(static_cast<size_t>(ncpus), kNanosMax) {}
  void ExpireRemote(int owner, int runner, Nanos now) override {
    expired.push_back({owner, runner});
    if (next_global[static_cast<size_t>(owner)] <= now)
      next_global[static_cast<size_t>(owner)] = kNanosMax;
  }
  void LockBases(int) override {}
  void UnlockBases(int) override {}
  Nanos NextGlobalLocked(int cpu, Nanos) override { return next_global[static_cast<size_t>(cpu)]; }
  bool BaseIsIdle(int) override { return false; }
  void KickCpu(int cpu) override { kicked.push_back(cpu); }
  std::vector<Nanos> next_global;
  std::vector<std::pair<int, int>> expired;  // (owner, runner)
  std::vector<int> kicked;
};

struct Fixture {
  std::unique_ptr<RecordingBackend> backend;
  std::unique_ptr<TimerMigration> tm;
  HierarchySnapshot snap() const { return tm->Snapshot(); }
};

tmigr::Options OptionsOf(const TmigrVariant& v,
                         int children_per_group = tmigr::kMaxChildrenPerGroup);
// A hierarchy of the variant over `node_of`; nothing brought up.
absl::StatusOr<Fixture> Make(const TmigrVariant& v, std::vector<int> node_of,
                             int children_per_group = tmigr::kMaxChildrenPerGroup);
// `ncpus` CPUs on `nnodes` nodes (consecutive blocks), all brought up in id order.
absl::StatusOr<Fixture> MakeUp(const TmigrVariant& v, int ncpus,
                               int children_per_group = tmigr::kMaxChildrenPerGroup,
                               int nnodes = 1);
// MakeUp on "pu:<ncpus>" with the isolation of `cmdline` (IsolationConfig::
// FromBootParams), and the late init if `init`.
absl::StatusOr<Fixture> MakeIsolated(const TmigrVariant& v, int ncpus, std::string_view cmdline,
                                     bool init = true,
                                     std::unique_ptr<RecordingBackend> backend = nullptr);
// A TimerSystem of the variant (jiffy 1000 ns unless given).
absl::StatusOr<std::unique_ptr<tmigr::TimerSystem>> MakeTimerSystem(
    const TmigrVariant& v, std::vector<int> node_of,
    int children_per_group = tmigr::kMaxChildrenPerGroup, bool record_lock_order = false,
    Nanos jiffy = 1000);

std::string StateString(const tmigr::GroupState& s);

}  // namespace isolation::testing::tmigr_internal

#endif  // ISOLATION_LIB_TESTING_TMIGR_COMMON_H_
