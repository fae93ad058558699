// SPDX-License-Identifier: GPL-2.0-or-later
// Internal helpers of the vmstat conformance suites (testing/vmstat.h): the
// violation report, true counts, conservation, the machines the scenarios
// run on, a work ledger standing in for the workqueue, and the promise
// predicates of FoldPolicyTraits.

#ifndef ISOLATION_LIB_TESTING_VMSTAT_COMMON_H_
#define ISOLATION_LIB_TESTING_VMSTAT_COMMON_H_

#include <cstdint>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "isolation/testing/violations.h"
#include "isolation/testing/vmstat.h"
#include "isolation/vmstat/vmstat.h"

namespace isolation::testing::vmstat_kit {

using vmstat::CpuCounters;
using vmstat::FoldPolicyTraits;
using vmstat::ReturnToUserScope;
using vmstat::StatKind;
using vmstat::Vmstat;
using vmstat::VmstatConfig;
using vmstat::WorkScope;
using vmstat::ZoneSpec;

inline constexpr int64_t kGiB = 262144;  // 4 KiB pages
inline constexpr int64_t kMiB = 256;

// Streams every argument (std::string_view included) into one string.
template <typename... Args>
std::string Cat(const Args&... args) {
  std::ostringstream os;
  (os << ... << args);
  return os.str();
}

// Collects one check's violations; keeps the first kKept messages and counts
// the rest, so a broken variant does not produce megabytes of output.
class Report {
 public:
  Report(std::string_view check, std::string_view variant)
      : prefix_(Cat(variant, ": ", check, ": ")) {}
  template <typename... Args>
  void Fail(const Args&... args) {
    if (messages_.size() < kKept) {
      messages_.push_back(prefix_ + Cat(args...));
    } else {
      ++dropped_;
    }
  }
  // Fails with the message when !ok; returns ok.
  template <typename... Args>
  bool Expect(bool ok, const Args&... args) {
    if (!ok) Fail(args...);
    return ok;
  }
  bool failed() const { return !messages_.empty(); }
  Violations Take() {
    if (dropped_ > 0) messages_.push_back(Cat(prefix_, "... and ", dropped_, " more"));
    return std::move(messages_);
  }

 private:
  static constexpr size_t kKept = 20;
  std::string prefix_;
  Violations messages_;
  int64_t dropped_ = 0;
};

// True counts, tracked independently of the counters.
struct Truth {
  std::map<std::tuple<int, int, int>, int64_t> v;  // (kind, instance, item)
  void Add(StatKind k, int inst, int item, int64_t d) { v[{static_cast<int>(k), inst, item}] += d; }
  int64_t Get(StatKind k, int inst, int item) const {
    auto it = v.find({static_cast<int>(k), inst, item});
    return it == v.end() ? 0 : it->second;
  }
  void Merge(const Truth& other) {
    for (const auto& [key, d] : other.v) v[key] += d;
  }
};

// I1 at a quiescent point: for every (instance, item) shared + sum of the
// online CPUs' differentials = true count; sum of the instances' shared
// values = global.  Returns the total absolute discrepancy; `where` gets
// the first mismatch.
int64_t ConservationError(const Vmstat& vm, const Truth& truth, std::string* where = nullptr);

// The largest I2 discrepancy right now, instance and global parts separately.
struct Transient {
  int64_t instance = 0;
  int64_t global = 0;
};
Transient MaxTransient(const Vmstat& vm, const Truth& truth);

// The direct-API machine: `cpus` CPUs, 3 zones (1, 4 and 2 GiB) on 2 nodes,
// CPUs 1..cpus-1 isolated and nohz_full.
VmstatConfig SmallConfig(int cpus, int fixed_threshold = 0);

// Create, or a violation naming why not.
std::unique_ptr<Vmstat> MakeOrFail(Report& r, std::string_view variant, VmstatConfig config);

// The deferred work of the direct-API tests: what the shepherd queued and
// what a CPU armed itself (the LocalWorkQueue), run later by the test in the
// owner CPU's context.
class WorkLedger : public vmstat::LocalWorkQueue {
 public:
  struct Item {
    int cpu;
    uint64_t generation;
    bool local;  // armed by the CPU itself (cancellable by CancelLocalWork)
  };
  void Queue(int cpu, uint64_t generation) { items_.push_back({cpu, generation, false}); }
  void ArmLocalWork(int cpu, uint64_t generation) override {
    items_.push_back({cpu, generation, true});
  }
  void CancelLocalWork(int cpu) override;
  size_t size() const { return items_.size(); }
  // Runs item `i` as vmstat_update on its CPU; a re-queue goes back in.
  void RunAt(Vmstat& vm, size_t i);
  // Runs items until none is left; false if that took more than `max_runs`.
  bool Drain(Vmstat& vm, int max_runs = 100000);

 private:
  std::vector<Item> items_;
};

// The promises of FoldPolicyTraits as predicates.
bool InShepherdScope(WorkScope scope, const Vmstat& vm, int cpu, bool tick_stopped);
bool InReturnToUserScope(ReturnToUserScope scope, const Vmstat& vm, int cpu, bool tick_stopped);
const char* ScopeName(WorkScope scope);

// The traits, or a violation.
bool TraitsOrFail(Report& r, std::string_view variant, FoldPolicyTraits* traits);

}  // namespace isolation::testing::vmstat_kit

// Inside a TEST_P: skip, with the reason, a check the variant does not
// promise (vmstat_conformance::NotApplicable of the test's own name).
#define ISOLATION_VMSTAT_SKIP_IF_NOT_APPLICABLE()                                  \
  do {                                                                             \
    const auto why = ::isolation::testing::vmstat_conformance::NotApplicable(      \
        ::isolation::testing::vmstat_conformance::CurrentCheckName(), GetParam()); \
    if (!why.ok()) FAIL() << why.status();                                         \
    if (!why->empty()) GTEST_SKIP() << *why;                                       \
  } while (0)

// The body of a TEST_P: skip if not applicable, else run the list's check of
// the same name and expect no violation.
#define ISOLATION_VMSTAT_RUN_CHECK()                                                \
  do {                                                                              \
    ISOLATION_VMSTAT_SKIP_IF_NOT_APPLICABLE();                                      \
    ISOLATION_EXPECT_NO_VIOLATIONS(::isolation::testing::vmstat_conformance::Run(   \
        ::isolation::testing::vmstat_conformance::CurrentCheckName(), GetParam())); \
  } while (0)

#endif  // ISOLATION_LIB_TESTING_VMSTAT_COMMON_H_
