// SPDX-License-Identifier: GPL-2.0-or-later
// The mm_cid kit's strength by mutation: small, plausible
// mutations of the built-in strategies, each written here as a strategy
// class of its own through the public interfaces (mm_cid/strategies.h: a
// built-in wrapped from its registry entry, or the v6.13+ allocator copied
// with one change), registered as a negative control (registry.h), and run
// through the kit's check list (testing/mm_cid.h: AllChecks, NotApplicable,
// Run) until a check reports it.  Each must be killed; the binary prints
// "kill rate mm_cid: K of N" and a table of which check killed each.
//
// Bug classes, each in a common form (every call) and where it makes sense a
// rare one (once in a few thousand calls, or only on a rare path):
// over-allocation (an ID at or above the bound the allocator declares), an
// ID given twice, a lost put (an ID reserved and never freed), a scan that
// skips CPUs, a rate limit off by one, compaction never reaching 0, a
// batch window off by one, a tick kick that never re-takes.

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "isolation/mm_cid/registry.h"
#include "isolation/mm_cid/strategies.h"
#include "isolation/testing/mm_cid.h"
#include "isolation/testing/status_matchers.h"

namespace {

namespace mc = ::isolation::mm_cid;
namespace kit = ::isolation::testing::mm_cid;
using mc::AllocatorStrategy;
using mc::AllocatorTraits;
using mc::CidSpace;

// ---- helpers ------------------------------------------------------------------

std::unique_ptr<AllocatorStrategy> BuiltinAllocator(const char* name) {
  auto e = mc::AllocatorRegistry().Find(name);
  return e.ok() ? (*e)->factory() : nullptr;
}

// One call in `period`: the rare forms' trigger (calls counted per object,
// relaxed: a mutant's counter needs no ordering).
class Every {
 public:
  explicit Every(int64_t period) : period_(period) {}
  bool Fires() const {
    return calls_.fetch_add(1, std::memory_order_relaxed) % period_ == period_ - 1;
  }

 private:
  const int64_t period_;
  mutable std::atomic<int64_t> calls_{0};
};

// A CidSpace forwarding to the design's, for mutants that lie about what
// they read.
class ForwardingSpace : public CidSpace {
 public:
  explicit ForwardingSpace(CidSpace& s) : s_(s) {}
  int num_cpus() const override { return s_.num_cpus(); }
  int users() const override { return s_.users(); }
  int nr_cpus_allowed() const override { return s_.nr_cpus_allowed(); }
  std::atomic<int>& max_nr_cid() override { return s_.max_nr_cid(); }
  int recent_cid() const override { return s_.recent_cid(); }
  int FirstZeroBelow(int bound) override { return s_.FirstZeroBelow(bound); }
  bool TryReserve(int cid) override { return s_.TryReserve(cid); }

 protected:
  ~ForwardingSpace() = default;
  CidSpace& s_;
};

// ---- allocators ---------------------------------------------------------------

// alloc_v6_14 reading users() as nr_cpus_allowed(): max_nr_cid expands to
// the allowed weight, not min(users, allowed) (over-allocation, common).
class UsersIgnored final : public AllocatorStrategy {
 public:
  AllocatorTraits traits() const override { return inner_->traits(); }
  int TryGet(CidSpace& space) const override {
    struct Space final : ForwardingSpace {
      using ForwardingSpace::ForwardingSpace;
      int users() const override { return s_.nr_cpus_allowed(); }
    } lie(space);
    return inner_->TryGet(lie);
  }

 private:
  std::unique_ptr<AllocatorStrategy> inner_ = BuiltinAllocator("alloc_v6_14");
};

// alloc_v6_4 that once in 1000 calls takes the second free ID, not the
// first (over-allocation against its declared first-free promise, rare).
class FirstFreeSkipsRare final : public AllocatorStrategy {
 public:
  AllocatorTraits traits() const override { return inner_->traits(); }
  int TryGet(CidSpace& space) const override {
    if (!every_.Fires()) return inner_->TryGet(space);
    const int first = space.FirstZeroBelow(space.num_cpus());
    if (first < 0) return -1;
    for (int cid = first + 1; cid < space.num_cpus(); ++cid) {
      if (space.TryReserve(cid)) return cid;
    }
    return space.TryReserve(first) ? first : -1;
  }

 private:
  std::unique_ptr<AllocatorStrategy> inner_ = BuiltinAllocator("alloc_v6_4");
  Every every_{1000};
};

// The v6.13+ allocator (lib/mm_cid/strategies/alloc_hinted.h's algorithm, written against the
// public CidSpace) with one injected change.
enum class HintBug {
  kOffByOne,        // [SHRINK]'s hint test `recent < max_nr` as `<=` (rare path: recent == max_nr)
  kUnbounded,       // the hint taken whatever its value (compaction never reaches 0)
  kUnreserved,      // the hint returned without TryReserve (an ID given twice, common)
  kUnreservedRare,  // ... once in 2000 calls
  kLeakRare,        // once in 2000 calls a second free ID reserved and never used (lost put)
  kLeakOnFallback,  // every fallback allocation also reserves the next free ID (lost put)
};
class MutHinted final : public AllocatorStrategy {
 public:
  explicit MutHinted(HintBug bug) : bug_(bug) {}
  AllocatorTraits traits() const override { return BuiltinAllocator("alloc_v6_14")->traits(); }
  int TryGet(CidSpace& space) const override {
    const int users = space.users();
    const int nr_allowed = space.nr_cpus_allowed();
    const int allowed_max = std::min(nr_allowed, users);
    std::atomic<int>& max_nr_cid = space.max_nr_cid();
    int max_nr = max_nr_cid.load(std::memory_order_relaxed);
    while (max_nr > allowed_max) {
      if (max_nr_cid.compare_exchange_weak(max_nr, allowed_max, std::memory_order_relaxed)) {
        max_nr = allowed_max;
        break;
      }
    }
    const bool fires = every_.Fires();
    if (bug_ == HintBug::kLeakRare && fires) {
      const int leaked = space.FirstZeroBelow(nr_allowed);
      if (leaked >= 0) (void)space.TryReserve(leaked);
    }
    const int recent = space.recent_cid();
    bool hint_ok = recent >= 0 && recent < max_nr;
    if (bug_ == HintBug::kOffByOne) hint_ok = recent >= 0 && recent <= max_nr;
    if (bug_ == HintBug::kUnbounded) hint_ok = recent >= 0;
    if (hint_ok) {
      if (bug_ == HintBug::kUnreserved || (bug_ == HintBug::kUnreservedRare && fires))
        return recent;
      if (space.TryReserve(recent)) return recent;
    }
    while (max_nr < allowed_max) {
      if (!max_nr_cid.compare_exchange_weak(max_nr, max_nr + 1, std::memory_order_relaxed))
        continue;
      if (space.TryReserve(max_nr)) return max_nr;
      max_nr = max_nr_cid.load(std::memory_order_relaxed);
    }
    const int cid = space.FirstZeroBelow(nr_allowed);
    if (cid < 0 || !space.TryReserve(cid)) return -1;
    if (bug_ == HintBug::kLeakOnFallback) {
      const int next = space.FirstZeroBelow(nr_allowed);
      if (next >= 0) (void)space.TryReserve(next);
    }
    return cid;
  }

 private:
  const HintBug bug_;
  Every every_{2000};
};

// ---- scopes -------------------------------------------------------------------

std::unique_ptr<mc::ScopeStrategy> BuiltinScope(const char* name) {
  auto e = mc::ScopeRegistry().Find(name);
  return e.ok() ? (*e)->factory() : nullptr;
}

// scan_possible whose window stops one CPU short (a `< end - 1` bound): the
// scope's last CPU is never visited (a scan that skips CPUs, common).
class SkipsLastCpu final : public mc::ScopeStrategy {
 public:
  int Size(const mc::ScanSet& mm) const override { return inner_->Size(mm); }
  void ForEach(const mc::ScanSet& mm, int start, int count,
               absl::FunctionRef<void(const int* cpus, int n)> visit) const override {
    const int size = inner_->Size(mm);
    inner_->ForEach(mm, start, std::max(0, std::min(count, size - 1 - start)), visit);
  }

 private:
  std::unique_ptr<mc::ScopeStrategy> inner_ = BuiltinScope("scan_possible");
};

// scan_possible that walks only the first 64-bit word of the CPU mask: CPUs
// 64 and up are never visited (rare path: only machines of > 64 CPUs).
class FirstWordOnly final : public mc::ScopeStrategy {
 public:
  int Size(const mc::ScanSet& mm) const override { return inner_->Size(mm); }
  void ForEach(const mc::ScanSet& mm, int start, int count,
               absl::FunctionRef<void(const int* cpus, int n)> visit) const override {
    inner_->ForEach(mm, start, count, [&](const int* cpus, int n) {
      int kept = 0;
      while (kept < n && cpus[kept] < 64) ++kept;
      if (kept > 0) visit(cpus, kept);
    });
  }

 private:
  std::unique_ptr<mc::ScopeStrategy> inner_ = BuiltinScope("scan_possible");
};

// ---- granularity, placement, tick ----------------------------------------------

// batch_8 whose window is one CPU longer than the cursor moves (9 CPUs per
// loop, overlapping the next batch).
class BatchOverrun final : public mc::GranularityStrategy {
 public:
  BatchOverrun() {
    auto e = mc::GranularityRegistry().Find("batch_N");
    if (e.ok()) {
      auto g = (*e)->factory.create(8);
      if (g.ok()) inner_ = std::move(*g);
    }
  }
  int batch() const override { return inner_->batch(); }
  int Start(const std::atomic<int>& cursor, int scope_size) const override {
    return inner_->Start(cursor, scope_size);
  }
  bool Claim(std::atomic<int>& cursor, int start, int scope_size, int num_cpus,
             mc::ScanWindow& window) const override {
    if (!inner_->Claim(cursor, start, scope_size, num_cpus, window)) return false;
    window.count += 1;
    return true;
  }

 private:
  std::unique_ptr<mc::GranularityStrategy> inner_;
};

// work_delayed re-armed every 99 ms instead of MM_CID_SCAN_DELAY (its re-arm
// is its rate limit: off by one jiffy-ish).
class DelayedRearmEarly final : public mc::PlacementStrategy {
 public:
  DelayedRearmEarly() {
    auto e = mc::PlacementRegistry().Find("work_delayed");
    if (e.ok()) inner_ = (*e)->factory();
  }
  mc::PlacementTraits traits() const override { return inner_->traits(); }
  mc::ScanAction OnTick(const mc::ScanTrigger& t) const override { return inner_->OnTick(t); }
  mc::ScanAction OnReturnToUser(const mc::ScanTrigger& t) const override {
    return inner_->OnReturnToUser(t);
  }
  bool ScanDue(const mc::ScanTrigger& t) const override { return inner_->ScanDue(t); }
  bool ScanPending(const mc::ScanTrigger& t) const override { return inner_->ScanPending(t); }
  void Start(mc::ScanRunner& runner) const override { inner_->Start(runner); }
  void OnMmCreated(mc::MmId mm, mc::ScanRunner& runner) const override {
    runner.QueuePeriodicWork(mm, mc::kScanDelayNs - isolation::kNsPerMs);
  }
  void Dispatch(mc::MmId mm, mc::ScanRunner& runner) const override {
    inner_->Dispatch(mm, runner);
  }

 private:
  std::unique_ptr<mc::PlacementStrategy> inner_;
};

// tick_kick without its (B) branch: declares kicks_unpreempted, forces the
// return to user when a scan is due, never re-takes the ID in place.
class KickNeverRetakes final : public mc::TickPolicy {
 public:
  KickNeverRetakes() {
    auto e = mc::TickPolicyRegistry().Find("tick_kick");
    if (e.ok()) inner_ = (*e)->factory();
  }
  mc::TickAction OnTick(const mc::TickView& v) const override {
    const mc::TickAction a = inner_->OnTick(v);
    return a == mc::TickAction::kRetakeId ? mc::TickAction::kNone : a;
  }
  bool kicks_unpreempted() const override { return inner_->kicks_unpreempted(); }

 private:
  std::unique_ptr<mc::TickPolicy> inner_;
};

// ---- the mutations ---------------------------------------------------------------

struct Mutation {
  std::string name;     // the registered strategy
  std::string variant;  // what the kit runs
  std::string bug_class;
  std::string form;  // "common" or "rare"
};

const std::vector<Mutation>& Mutations() {
  static const auto* list = new std::vector<Mutation>{
      {"mut_alloc_users_ignored", "lazy+mut_alloc_users_ignored", "over-allocation (ID >= bound)",
       "common"},
      {"mut_alloc_hint_off_by_one", "lazy+mut_alloc_hint_off_by_one",
       "over-allocation (ID >= bound)", "rare (recent == max_nr_cid)"},
      {"mut_alloc_first_free_skips", "lazy+mut_alloc_first_free_skips",
       "over-allocation (ID >= bound)", "rare (1 in 1000 calls)"},
      {"mut_alloc_hint_unreserved", "lazy+mut_alloc_hint_unreserved", "ID given twice", "common"},
      {"mut_alloc_hint_unreserved_rare", "lazy+mut_alloc_hint_unreserved_rare", "ID given twice",
       "rare (1 in 2000 calls)"},
      {"mut_alloc_leak_rare", "lazy+mut_alloc_leak_rare", "lost put (ID leaked)",
       "rare (1 in 2000 calls)"},
      {"mut_alloc_leak_on_fallback", "lazy+mut_alloc_leak_on_fallback", "lost put (ID leaked)",
       "common (every fallback)"},
      {"mut_alloc_hint_unbounded", "lazy+mut_alloc_hint_unbounded", "compaction never reaching 0",
       "common"},
      {"mut_scope_skips_last_cpu", "lazy+mut_scope_skips_last_cpu", "scan skips CPUs", "common"},
      {"mut_scope_first_word_only", "lazy+mut_scope_first_word_only", "scan skips CPUs",
       "rare (> 64 CPUs)"},
      {"mut_batch_overrun", "lazy+mut_batch_overrun", "batch window off by one", "common"},
      {"mut_delayed_rearm_early", "lazy+mut_delayed_rearm_early", "rate limit off by one",
       "common"},
      {"mut_tick_kick_never_retakes", "lazy+mut_tick_kick_never_retakes",
       "tick kick never re-takes", "common"},
  };
  return *list;
}

template <typename T>
std::unique_ptr<AllocatorStrategy> MakeAllocator() {
  return std::unique_ptr<AllocatorStrategy>(new T);
}

absl::Status RegisterAll() {
  const auto hinted = [](HintBug bug) {
    return [bug] { return std::unique_ptr<AllocatorStrategy>(new MutHinted(bug)); };
  };
  const char* kMut = "mutation (mm_cid_mutation_test)";
  std::vector<absl::Status> s;
  s.push_back(
      mc::RegisterAllocator({"mut_alloc_users_ignored", kMut, true, MakeAllocator<UsersIgnored>}));
  s.push_back(
      mc::RegisterAllocator({"mut_alloc_hint_off_by_one", kMut, true, hinted(HintBug::kOffByOne)}));
  s.push_back(mc::RegisterAllocator(
      {"mut_alloc_first_free_skips", kMut, true, MakeAllocator<FirstFreeSkipsRare>}));
  s.push_back(mc::RegisterAllocator(
      {"mut_alloc_hint_unreserved", kMut, true, hinted(HintBug::kUnreserved)}));
  s.push_back(mc::RegisterAllocator(
      {"mut_alloc_hint_unreserved_rare", kMut, true, hinted(HintBug::kUnreservedRare)}));
  s.push_back(
      mc::RegisterAllocator({"mut_alloc_leak_rare", kMut, true, hinted(HintBug::kLeakRare)}));
  s.push_back(mc::RegisterAllocator(
      {"mut_alloc_leak_on_fallback", kMut, true, hinted(HintBug::kLeakOnFallback)}));
  s.push_back(
      mc::RegisterAllocator({"mut_alloc_hint_unbounded", kMut, true, hinted(HintBug::kUnbounded)}));
  s.push_back(mc::RegisterScope({"mut_scope_skips_last_cpu", kMut, true, [] {
                                   return std::unique_ptr<mc::ScopeStrategy>(new SkipsLastCpu);
                                 }}));
  s.push_back(mc::RegisterScope({"mut_scope_first_word_only", kMut, true, [] {
                                   return std::unique_ptr<mc::ScopeStrategy>(new FirstWordOnly);
                                 }}));
  s.push_back(mc::RegisterGranularity(
      {"mut_batch_overrun", kMut, true,
       mc::GranularityFactory{[](int) -> absl::StatusOr<std::unique_ptr<mc::GranularityStrategy>> {
                                return std::unique_ptr<mc::GranularityStrategy>(new BatchOverrun);
                              },
                              0}}));
  s.push_back(mc::RegisterPlacement({"mut_delayed_rearm_early", kMut, true, [] {
                                       return std::unique_ptr<mc::PlacementStrategy>(
                                           new DelayedRearmEarly);
                                     }}));
  s.push_back(mc::RegisterTickPolicy({"mut_tick_kick_never_retakes", kMut, true, [] {
                                        return std::unique_ptr<mc::TickPolicy>(
                                            new KickNeverRetakes);
                                      }}));
  for (const absl::Status& st : s) {
    if (!st.ok()) return st;
  }
  return absl::OkStatus();
}

const absl::Status& Registered() {
  static const absl::Status* status = new absl::Status(RegisterAll());
  return *status;
}

// The first check of the list that reports the variant ("" = none did), in
// list order, applicable checks only.
struct Verdict {
  std::string killed_by;
  std::string first_violation;
};
Verdict FirstKill(const std::string& variant) {
  for (const kit::Check& c : kit::AllChecks()) {
    absl::StatusOr<std::string> na = kit::NotApplicable(c.name, variant);
    if (!na.ok()) return {"(error)", na.status().ToString()};
    if (!na->empty()) continue;
    const kit::Violations found = kit::Run(c.name, variant);
    if (!found.empty()) return {c.name, found.front()};
  }
  return {};
}

// ---- tests ------------------------------------------------------------------------

// Every mutant is a negative control: flagged by DescribeVariant, absent
// from the default enumerations, present among the controls.
TEST(MmCidMutation, MutantsAreNegativeControls) {
  ISOLATION_ASSERT_OK(Registered()) << Registered();
  for (const Mutation& mu : Mutations()) {
    ISOLATION_ASSERT_OK_AND_ASSIGN(mc::MmCidVariant v, mc::ParseVariant(mu.variant));
    ISOLATION_ASSERT_OK_AND_ASSIGN(mc::VariantTraits t, mc::DescribeVariant(v));
    EXPECT_TRUE(t.negative_control) << mu.variant;
    for (const mc::MmCidVariant& d : mc::AllVariants()) {
      EXPECT_EQ(d.Name().find("mut_"), std::string::npos) << "AllVariants lists " << d.Name();
    }
    for (const mc::MmCidVariant& d : mc::CoveringVariants()) {
      EXPECT_EQ(d.Name().find("mut_"), std::string::npos) << "CoveringVariants lists " << d.Name();
    }
    bool among_controls = false;
    for (const mc::MmCidVariant& d : mc::NegativeControlVariants())
      among_controls |= d.Name() == v.Name();
    EXPECT_TRUE(among_controls) << mu.variant;
  }
}

// A negative-control tick policy that a placement would override (work_unbound
// implies tick_kick) is refused by name, not dropped.
TEST(MmCidMutation, ParseRefusesToDropAControlPart) {
  ISOLATION_ASSERT_OK(Registered()) << Registered();
  absl::StatusOr<mc::MmCidVariant> v =
      mc::ParseVariant("lazy+work_unbound+mut_tick_kick_never_retakes");
  ASSERT_FALSE(v.ok()) << v->Name();
  EXPECT_EQ(v.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(v.status().message(), ::testing::HasSubstr("mut_tick_kick_never_retakes"));
  EXPECT_THAT(v.status().message(), ::testing::HasSubstr("negative-control"));
  v = mc::ParseVariant("lazy+work_rcu+mut_tick_kick_never_retakes");
  ISOLATION_ASSERT_OK(v);
  ISOLATION_ASSERT_OK_AND_ASSIGN(mc::VariantTraits t, mc::DescribeVariant(*v));
  EXPECT_TRUE(t.negative_control);
}

TEST(MmCidMutation, EveryMutationIsKilled) {
  ISOLATION_ASSERT_OK(Registered()) << Registered();
  int killed = 0;
  std::string table = "| mutation | bug class | form | killed by |\n|---|---|---|---|\n";
  for (const Mutation& mu : Mutations()) {
    const Verdict v = FirstKill(mu.variant);
    EXPECT_FALSE(v.killed_by.empty()) << mu.name << " (" << mu.bug_class << ", " << mu.form
                                      << ") survived every applicable check of the kit";
    if (!v.killed_by.empty()) ++killed;
    absl::StrAppend(&table, "| ", mu.name, " | ", mu.bug_class, " | ", mu.form, " | ",
                    v.killed_by.empty() ? std::string("SURVIVED") : v.killed_by, " |\n");
    ::testing::Test::RecordProperty(mu.name,
                                    v.killed_by.empty() ? std::string("survived") : v.killed_by);
    if (!v.killed_by.empty())
      std::printf("%s: %s\n", mu.name.c_str(), v.first_violation.substr(0, 240).c_str());
  }
  std::printf("kill rate mm_cid: %d of %zu\n%s", killed, Mutations().size(), table.c_str());
  std::fflush(stdout);
}

}  // namespace
