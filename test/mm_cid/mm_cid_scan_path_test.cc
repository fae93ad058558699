// SPDX-License-Identifier: GPL-2.0-or-later
// The lazy design's two scan loops (lib/mm_cid/scan_path.h): the inlined
// loop it instantiates for a built-in scope and granularity, and the generic
// loop through the virtual strategy calls that a strategy registered from
// outside the library runs.
//
// Here every built-in scope and granularity is also registered a second
// time from outside, as `generic_<name>`: a class that forwards each call to
// the built-in object, so the design does not recognise it and runs the
// generic loop.  Then
//   - the same seeded random schedules driven on a fast-path and a
//     generic-path instance give, step by step, the same scan results, the
//     same IDs, the same bitmap weights, the same lazy slots and counters;
//   - the kit's conformance suites run on the generic path too (the other
//     binaries run them on the fast path), and the generic negative control
//     fails the kit as the built-in one does.
// (Its own binary: registering changes the process's registries.)

#include <algorithm>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "isolation/mm_cid/mm_cid.h"
#include "isolation/mm_cid/registry.h"
#include "isolation/mm_cid/strategies.h"
#include "isolation/testing/mm_cid.h"
#include "isolation/testing/status_matchers.h"
#include "mm_cid/batch.h"
#include "mm_cid/scan_path.h"
#include "mm_cid/scope_mask.h"

namespace {

using isolation::CpuMask;
using isolation::Nanos;
using isolation::mm_cid::GranularityEntry;
using isolation::mm_cid::GranularityFactory;
using isolation::mm_cid::GranularityStrategy;
using isolation::mm_cid::kNoTask;
using isolation::mm_cid::MmCid;
using isolation::mm_cid::MmId;
using isolation::mm_cid::ScanResult;
using isolation::mm_cid::ScanSet;
using isolation::mm_cid::ScanWindow;
using isolation::mm_cid::ScopeStrategy;
using isolation::mm_cid::TaskId;
using isolation::mm_cid::internal::ScanPathName;
using isolation::mm_cid::internal::ScanPathOf;

// A scope the design cannot recognise: forwards to a built-in.
class ForwardingScope final : public ScopeStrategy {
 public:
  explicit ForwardingScope(std::unique_ptr<ScopeStrategy> inner) : inner_(std::move(inner)) {}
  int Size(const ScanSet& mm) const override { return inner_->Size(mm); }
  void ForEach(const ScanSet& mm, int start, int count,
               absl::FunctionRef<void(const int* cpus, int n)> visit) const override {
    inner_->ForEach(mm, start, count, visit);
  }

 private:
  const std::unique_ptr<ScopeStrategy> inner_;
};

class ForwardingGranularity final : public GranularityStrategy {
 public:
  explicit ForwardingGranularity(std::unique_ptr<GranularityStrategy> inner)
      : inner_(std::move(inner)) {}
  int batch() const override { return inner_->batch(); }
  int Start(const std::atomic<int>& cursor, int scope_size) const override {
    return inner_->Start(cursor, scope_size);
  }
  bool Claim(std::atomic<int>& cursor, int start, int scope_size, int num_cpus,
             ScanWindow& window) const override {
    return inner_->Claim(cursor, start, scope_size, num_cpus, window);
  }

 private:
  const std::unique_ptr<GranularityStrategy> inner_;
};

template <typename Builtin>
bool RegisterGenericScope(const char* name, bool negative_control) {
  return isolation::mm_cid::RegisterScope(
             {name, "test: a built-in scope behind a class the design does not recognise",
              negative_control,
              [] {
                return std::unique_ptr<ScopeStrategy>(
                    new ForwardingScope(std::make_unique<Builtin>()));
              }})
      .ok();
}

const bool kRegistered = [] {
  namespace internal = isolation::mm_cid::internal;
  bool ok = RegisterGenericScope<internal::ScanPossible>("generic_scan_possible", false);
  ok = RegisterGenericScope<internal::ScanAllowed>("generic_scan_allowed", false) && ok;
  ok = RegisterGenericScope<internal::ScanCidmask>("generic_scan_cidmask",
                                                   /*negative_control=*/true) &&
       ok;
  GranularityFactory full;
  full.create = [](int) -> absl::StatusOr<std::unique_ptr<GranularityStrategy>> {
    return std::unique_ptr<GranularityStrategy>(
        new ForwardingGranularity(std::make_unique<internal::BatchFull>()));
  };
  ok = isolation::mm_cid::RegisterGranularity(GranularityEntry{"generic_batch_full",
                                                               "test: batch_full, not recognised",
                                                               false, std::move(full)})
           .ok() &&
       ok;
  GranularityFactory batch_n;
  batch_n.create = [](int n) -> absl::StatusOr<std::unique_ptr<GranularityStrategy>> {
    if (n < 1 || n > isolation::kMaxCpus)
      return absl::InvalidArgumentError(absl::StrCat("batch ", n));
    return std::unique_ptr<GranularityStrategy>(
        new ForwardingGranularity(std::make_unique<internal::BatchN>(n)));
  };
  batch_n.enumerate_n = 8;
  ok = isolation::mm_cid::RegisterGranularity(GranularityEntry{"generic_batch_N",
                                                               "test: batch_N, not recognised",
                                                               false, std::move(batch_n)})
           .ok() &&
       ok;
  return ok;
}();

std::unique_ptr<MmCid> Make(int p, const std::string& name) {
  auto m = MmCid::Create(p, name);
  ISOLATION_EXPECT_OK(m) << name;
  return m.ok() ? std::move(*m) : nullptr;
}

TEST(MmCidScanPath, BuiltinsRunTheirLoopOutsideVariantsTheGenericOne) {
  ASSERT_TRUE(kRegistered);
  const struct {
    const char* name;
    std::string path;  // ScanPathName
  } cases[] = {
      {"lazy+scan_possible+batch_full", "scan_possible+batch_full"},
      {"lazy+scan_possible+batch_8", "scan_possible+batch_N"},
      {"lazy+scan_allowed+batch_full", "scan_allowed+batch_full"},
      {"lazy+scan_allowed+batch_3", "scan_allowed+batch_N"},
      {"lazy+scan_cidmask+batch_full", "scan_cidmask+batch_full"},
      {"lazy+scan_cidmask+batch_8", "scan_cidmask+batch_N"},
      {"lazy+generic_scan_allowed+batch_full", "generic"},
      {"lazy+scan_allowed+generic_batch_full", "generic"},
      {"lazy+generic_scan_possible+generic_batch_8", "generic"},
      {"lazy_no_dekker_fences+scan_allowed+batch_full", "scan_allowed+batch_full"},
  };
  for (const auto& c : cases) {
    auto m = Make(8, c.name);
    ASSERT_NE(m, nullptr);
    EXPECT_EQ(ScanPathName(ScanPathOf(*m)), c.path) << c.name;
  }
}

// One seeded random schedule (switches, migrations, affinity changes,
// ticks, returns to user, direct scans with time moving by random steps
// around the 100 ms rate limit and the slot period) applied to both
// instances; every observable compared after every step.
class Twin {
 public:
  Twin(int p, uint64_t seed) : p_(p), rng_(seed) {}

  // "" = the same; else the first difference.
  std::string Run(MmCid& fast, MmCid& generic, int steps) {
    MmCid* ms[2] = {&fast, &generic};
    constexpr int kMms = 3;
    constexpr int kTasks = 24;
    std::vector<MmId> mms;
    for (int i = 0; i < kMms; ++i) {
      const CpuMask creator = RandomMask();
      MmId id[2];
      for (int k = 0; k < 2; ++k) id[k] = *ms[k]->CreateMm(creator, 0);
      if (id[0] != id[1]) return "mm ids differ";
      mms.push_back(id[0]);
    }
    affinity_.clear();
    cpu_of_.clear();
    for (TaskId t = 0; t < kTasks; ++t) {
      const CpuMask a = RandomMask();
      affinity_.push_back(a);
      cpu_of_.push_back(a.Next(-1));
      for (int k = 0; k < 2; ++k) {
        if (!ms[k]->Fork(kNoTask, t, mms[static_cast<size_t>(t) % mms.size()], a, 0).ok())
          return "fork failed";
      }
    }
    curr_.assign(static_cast<size_t>(p_), kNoTask);
    Nanos now = 1;
    for (int step = 0; step < steps; ++step) {
      now += Pick({0, 1000, 1'000'000, 30'000'000, 60'000'000, 110'000'000});
      const int cpu = static_cast<int>(rng_() % static_cast<uint64_t>(p_));
      const TaskId t = static_cast<TaskId>(rng_() % kTasks);
      const size_t ti = static_cast<size_t>(t);
      const bool running = std::find(curr_.begin(), curr_.end(), t) != curr_.end();
      ScanResult r[2];
      switch (rng_() % 8) {
        case 0:
        case 1: {  // switch `cpu` to a task queued there, or to idle
          const TaskId next = cpu_of_[ti] == cpu && !running ? t : kNoTask;
          for (int k = 0; k < 2; ++k)
            ms[k]->ContextSwitch(cpu, curr_[static_cast<size_t>(cpu)], next, now);
          curr_[static_cast<size_t>(cpu)] = next;
          break;
        }
        case 2: {  // migrate a queued task within its affinity
          if (running || !affinity_[ti].Test(cpu) || cpu == cpu_of_[ti]) break;
          for (int k = 0; k < 2; ++k) ms[k]->Migrate(t, cpu_of_[ti], cpu, now);
          cpu_of_[ti] = cpu;
          break;
        }
        case 3: {  // new affinity of a queued task (the union grows)
          if (running) break;
          const CpuMask a = RandomMask();
          for (int k = 0; k < 2; ++k) {
            if (!ms[k]->SetAffinity(t, a, now).ok()) return "set affinity failed";
          }
          affinity_[ti] = a;
          if (!a.Test(cpu_of_[ti])) {
            const int to = a.Next(-1);
            for (int k = 0; k < 2; ++k) ms[k]->Migrate(t, cpu_of_[ti], to, now);
            cpu_of_[ti] = to;
          }
          break;
        }
        case 4: {  // the tick and return to user of what runs on `cpu`
          const TaskId c = curr_[static_cast<size_t>(cpu)];
          if (c == kNoTask) break;
          for (int k = 0; k < 2; ++k) {
            (void)ms[k]->Tick(cpu, c, now);
            (void)ms[k]->ReturnToUser(cpu, c, now, &r[k]);
          }
          break;
        }
        default: {  // a scan of one mm (a worker's, or a racing caller's)
          const MmId mm = mms[rng_() % mms.size()];
          for (int k = 0; k < 2; ++k) r[k] = ms[k]->Scan(mm, now);
          break;
        }
      }
      for (int k = 0; k < 1; ++k) {
        ran_ += r[k].ran;
        reclaimed_ += r[k].reclaimed;
      }
      const std::string where = absl::StrCat("step ", step, ": ");
      if (r[0].ran != r[1].ran || r[0].visits != r[1].visits || r[0].reclaimed != r[1].reclaimed ||
          r[0].pass_start != r[1].pass_start || r[0].pass_end != r[1].pass_end) {
        return absl::StrCat(where, "scan results differ: visits ", r[0].visits, " / ", r[1].visits,
                            ", reclaimed ", r[0].reclaimed, " / ", r[1].reclaimed, ", ran ",
                            r[0].ran, " / ", r[1].ran);
      }
      for (TaskId u = 0; u < kTasks; ++u) {
        if (fast.TaskCid(u) != generic.TaskCid(u)) {
          return absl::StrCat(where, "task ", u, " has ID ", fast.TaskCid(u), " / ",
                              generic.TaskCid(u));
        }
      }
      for (MmId mm : mms) {
        if (fast.CidmaskWeight(mm) != generic.CidmaskWeight(mm))
          return absl::StrCat(where, "bitmap weights differ");
        if (fast.ScanScopeSize(mm) != generic.ScanScopeSize(mm))
          return absl::StrCat(where, "scope sizes differ");
        for (int c = 0; c < p_; ++c) {
          if (fast.SlotLazy(mm, c) != generic.SlotLazy(mm, c)) {
            return absl::StrCat(where, "mm ", mm, " CPU ", c, ": lazy slot differs");
          }
        }
      }
      const auto a = fast.Stats();
      const auto b = generic.Stats();
      if (a.allocations != b.allocations || a.frees != b.frees || a.bitmap_ops != b.bitmap_ops ||
          a.scans != b.scans || a.slot_visits != b.slot_visits) {
        return absl::StrCat(where, "counters differ: scans ", a.scans, " / ", b.scans, ", frees ",
                            a.frees, " / ", b.frees);
      }
    }
    return "";
  }

  // Over the fast instance's scans: calls that ran, IDs they freed.
  int64_t ran() const { return ran_; }
  int64_t reclaimed() const { return reclaimed_; }

 private:
  // A random non-empty mask: a range, or a sparse set across the words.
  CpuMask RandomMask() {
    CpuMask m(p_);
    if (rng_() % 2 == 0) {
      const int lo = static_cast<int>(rng_() % static_cast<uint64_t>(p_));
      const int len = 1 + static_cast<int>(rng_() % 4);
      for (int c = lo; c < std::min(p_, lo + len); ++c) m.Set(c);
    } else {
      const int k = 1 + static_cast<int>(rng_() % 6);
      for (int i = 0; i < k; ++i) m.Set(static_cast<int>(rng_() % static_cast<uint64_t>(p_)));
    }
    return m;
  }
  Nanos Pick(std::initializer_list<Nanos> xs) { return *(xs.begin() + rng_() % xs.size()); }

  const int p_;
  std::mt19937_64 rng_;
  std::vector<CpuMask> affinity_;
  std::vector<int> cpu_of_;
  std::vector<TaskId> curr_;
  int64_t ran_ = 0;
  int64_t reclaimed_ = 0;
};

TEST(MmCidScanPath, FastAndGenericLoopsAgreeOnRandomSchedules) {
  ASSERT_TRUE(kRegistered);
  const char* scopes[] = {"scan_possible", "scan_allowed", "scan_cidmask"};
  const char* granularities[] = {"batch_full", "batch_8", "batch_3"};
  const char* placements[] = {"work_taskwork", "work_delayed"};
  int compared = 0;
  for (const char* scope : scopes) {
    for (const char* gran : granularities) {
      const std::string g = std::string(gran).substr(std::string("batch_").size());
      const std::string generic_gran = g == "full" ? "generic_batch_full" : "generic_batch_" + g;
      for (const char* placement : placements) {
        int64_t ran = 0, reclaimed = 0;
        // 70 and 130 CPUs: chunks of 64 and mask words crossed.
        for (int p : {8, 70, 130}) {
          for (uint64_t seed = 1; seed <= 4; ++seed) {
            const std::string fast_name = absl::StrCat("lazy+", scope, "+", gran, "+", placement);
            const std::string generic_name =
                absl::StrCat("lazy+generic_", scope, "+", generic_gran, "+", placement);
            auto fast = Make(p, fast_name);
            auto generic = Make(p, generic_name);
            ASSERT_NE(fast, nullptr);
            ASSERT_NE(generic, nullptr);
            ASSERT_NE(ScanPathOf(*fast), isolation::mm_cid::internal::kGenericScanPath)
                << fast_name;
            ASSERT_EQ(ScanPathOf(*generic), isolation::mm_cid::internal::kGenericScanPath)
                << generic_name;
            Twin twin(p, seed * 7919 + static_cast<uint64_t>(p));
            const std::string diff = twin.Run(*fast, *generic, 1500);
            EXPECT_EQ(diff, "") << fast_name << " vs " << generic_name << " p=" << p
                                << " seed=" << seed;
            ran += twin.ran();
            reclaimed += twin.reclaimed();
            ++compared;
          }
        }
        // The schedules exercise the scan: passes run and free IDs.
        EXPECT_GT(ran, 100) << scope << "+" << gran << "+" << placement;
        EXPECT_GT(reclaimed, 20) << scope << "+" << gran << "+" << placement;
        std::printf("%s+%s+%s: %lld scans ran, %lld IDs freed\n", scope, gran, placement,
                    static_cast<long long>(ran), static_cast<long long>(reclaimed));
      }
    }
  }
  EXPECT_EQ(compared, 3 * 3 * 2 * 3 * 4);
}

// The generic negative control is caught as the built-in one is (I7: idle
// reclaim), on the generic loop.
TEST(MmCidScanPath, GenericNegativeControlFailsTheKit) {
  ASSERT_TRUE(kRegistered);
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto v,
                                 isolation::mm_cid::ParseVariant("lazy+generic_scan_cidmask"));
  EXPECT_FALSE(isolation::testing::mm_cid::CheckIdleReclaim(v).empty());
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto builtin,
                                 isolation::mm_cid::ParseVariant("lazy+scan_cidmask"));
  EXPECT_FALSE(isolation::testing::mm_cid::CheckIdleReclaim(builtin).empty());
}

}  // namespace

// The kit's suites on the generic loop (mm_cid_conformance_test runs them on
// the inlined loops of the built-ins).
ISOLATION_MM_CID_CONFORMANCE(GenericScan, "lazy+generic_scan_allowed+generic_batch_full",
                             "lazy+generic_scan_possible+generic_batch_8",
                             "lazy+alloc_v6_13+generic_scan_allowed+generic_batch_8+work_rcu");
