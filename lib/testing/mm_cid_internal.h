// SPDX-License-Identifier: GPL-2.0-or-later
// mm_cid_internal.h (conformance kit, not installed): what the mm_cid suite
// files share besides the public testing/mm_cid.h.

#ifndef ISOLATION_LIB_TESTING_MM_CID_INTERNAL_H_
#define ISOLATION_LIB_TESTING_MM_CID_INTERNAL_H_

#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "isolation/core/driver.h"
#include "isolation/testing/mm_cid.h"

namespace isolation::testing::mm_cid::internal {

// The random schedules are single-threaded: a ThreadSanitizer build has
// nothing to find in them and runs a quarter of the steps and one seed.
#if defined(__SANITIZE_THREAD__) || defined(ISOLATION_TSAN)
constexpr int kRandomSteps = 500;
constexpr uint64_t kRandomSeedsP8 = 1;
constexpr int kRarePathSeeds = 1;
constexpr int kRarePathWaves = 40;
#else
constexpr int kRandomSteps = 2000;
constexpr uint64_t kRandomSeedsP8 = 5;
constexpr int kRarePathSeeds = 1;
constexpr int kRarePathWaves = 200;
#endif

// S13's expectations from a variant's traits (direct API and simulator):
// without a tick kick the busy survivor keeps its ID; with it, a compacting
// variant re-takes it to 0 within `kick_bound` of the last exit; after its
// next schedin a compacting variant holds 0, a non-compacting one its start
// ID; a variant with a scan scanned while it was busy, one without did not.
Violations NeverPreemptedExpectations(const VariantTraits& t, int32_t start_id,
                                      int32_t id_end_of_busy, Nanos changed_after_last_exit,
                                      int32_t id_after_schedin, int64_t scans, int64_t kick_retakes,
                                      Nanos kick_bound);

// Appends each of `v` to `out`, prefixed by `where` (the step or phase that
// found it).
inline void AddPrefixed(Violations& out, const Violations& v, const std::string& where) {
  for (const std::string& s : v) out.push_back(absl::StrCat(where, ": ", s));
}

// MmCid::Create(cpus, v) for a check that reports into `invariants`: the
// mechanism, or nullptr with the creation error recorded there.
inline std::unique_ptr<isolation::mm_cid::MmCid> CreateOrRecord(const MmCidVariant& v, int cpus,
                                                                Violations& invariants) {
  auto created = isolation::mm_cid::MmCid::Create(cpus, v);
  if (!created.ok()) {
    invariants.push_back(created.status().ToString());
    return nullptr;
  }
  return *std::move(created);
}

// Forks tasks cpus-1 .. 0 of `mm` in that order, task k pinned to CPU k (the
// first without a parent, the others from it); owner619 allocates IDs at
// fork, so there CPU k's task gets ID cpus-1-k.  A failed fork is recorded in
// `invariants`.
void ForkOnePerCpuReversed(isolation::mm_cid::MmCid& m, isolation::mm_cid::MmId mm, int cpus,
                           Nanos now, Violations& invariants);

// The ID bound at every allocating switch-in and tick under the
// single-threaded simulator: add before() ahead of the MmCidHooks and
// after() behind it (the simulator calls hooks in the order added).
class AllocationWatchHooks {
 public:
  AllocationWatchHooks(const isolation::mm_cid::MmCid& m, const VariantTraits& t)
      : m_(m), watch_(m, t), before_(*this), after_(*this) {}
  Hooks* before() { return &before_; }
  Hooks* after() { return &after_; }
  int64_t violations() const { return violations_; }
  const Violations& first() const { return first_; }
  const AllocationWatch& watch() const { return watch_; }

 private:
  bool Tracked(TaskId t) const { return t >= 0 && t < m_.max_tasks(); }
  void Done(TaskId t) {
    Violations found;
    watch_.After(t, found);
    violations_ += static_cast<int64_t>(found.size());
    for (std::string& f : found) {
      if (first_.size() < 4) first_.push_back(std::move(f));
    }
  }
  struct Before final : Hooks {
    explicit Before(AllocationWatchHooks& o) : owner(o) {}
    void OnContextSwitch(int, TaskId, TaskId next, Nanos) override {
      if (owner.Tracked(next)) owner.watch_.Before(next);
    }
    void OnTick(CpuContext&, TaskId curr) override {
      if (owner.Tracked(curr)) owner.watch_.Before(curr);
    }
    AllocationWatchHooks& owner;
  };
  struct After final : Hooks {
    explicit After(AllocationWatchHooks& o) : owner(o) {}
    void OnContextSwitch(int, TaskId, TaskId next, Nanos) override {
      if (owner.Tracked(next)) owner.Done(next);
    }
    void OnTick(CpuContext&, TaskId curr) override {
      if (owner.Tracked(curr)) owner.Done(curr);
    }
    AllocationWatchHooks& owner;
  };
  const isolation::mm_cid::MmCid& m_;
  AllocationWatch watch_;
  Before before_;
  After after_;
  int64_t violations_ = 0;
  Violations first_;
};

}  // namespace isolation::testing::mm_cid::internal

#endif  // ISOLATION_LIB_TESTING_MM_CID_INTERNAL_H_
