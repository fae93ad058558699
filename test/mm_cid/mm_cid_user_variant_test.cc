// SPDX-License-Identifier: GPL-2.0-or-later
// A variant from outside the library, as a user writes it: a scan scope of
// its own, registered with one call, gets every mm_cid suite of the
// conformance kit with one macro -- and appears in the registries'
// enumerations and `isolab variants` rows.  (Its own binary: registering
// changes the process's registries.)
//
// The scope, `scan_allowed_and_cpu0`: the mm's CPU union plus CPU 0 (say,
// a housekeeping CPU a user wants always swept).  A superset of the union,
// so it reclaims what scan_allowed does.

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "isolation/mm_cid/registry.h"
#include "isolation/mm_cid/strategies.h"
#include "isolation/testing/mm_cid.h"
#include "isolation/testing/status_matchers.h"

namespace {

using isolation::AtomicCpuMask;
using isolation::mm_cid::ScanSet;
using isolation::mm_cid::ScopeStrategy;

class ScanAllowedAndCpu0 final : public ScopeStrategy {
 public:
  int Size(const ScanSet& mm) const override {
    return mm.allowed->Weight() + (mm.allowed->Test(0) ? 0 : 1);
  }
  void ForEach(const ScanSet& mm, int start, int count,
               absl::FunctionRef<void(const int* cpus, int n)> visit) const override {
    std::vector<int> cpus;
    if (!mm.allowed->Test(0)) cpus.push_back(0);
    for (int c = mm.allowed->Next(-1); c < mm.num_cpus; c = mm.allowed->Next(c)) cpus.push_back(c);
    const int begin = std::min<int>(std::max(start, 0), static_cast<int>(cpus.size()));
    const int end = std::min<int>(begin + std::max(count, 0), static_cast<int>(cpus.size()));
    if (end > begin) visit(cpus.data() + begin, end - begin);
  }
};

const bool kRegistered = [] {
  return isolation::mm_cid::RegisterScope(
             {"scan_allowed_and_cpu0", "user example: the mm's CPU union plus CPU 0",
              /*negative_control=*/false,
              [] { return std::unique_ptr<ScopeStrategy>(new ScanAllowedAndCpu0); }})
      .ok();
}();

TEST(MmCidUserVariant, RegisteredOnceAndEverywhere) {
  ASSERT_TRUE(kRegistered);
  // A second registration of the name is refused, naming it.
  auto again = isolation::mm_cid::RegisterScope(
      {"SCAN_ALLOWED_AND_CPU0", "dup", false,
       [] { return std::unique_ptr<ScopeStrategy>(new ScanAllowedAndCpu0); }});
  EXPECT_EQ(again.code(), absl::StatusCode::kAlreadyExists);
  EXPECT_THAT(again.message(), ::testing::HasSubstr("SCAN_ALLOWED_AND_CPU0"));
  bool listed = false;
  for (const isolation::VariantInfo& row : isolation::mm_cid::ListVariants()) {
    listed = listed || (row.axis == "scope" && row.name == "scan_allowed_and_cpu0");
  }
  EXPECT_TRUE(listed) << "an isolab variants row";
  int in_all = 0;
  for (const auto& v : isolation::mm_cid::AllVariants())
    in_all += v.lazy.scope == "scan_allowed_and_cpu0";
  EXPECT_EQ(in_all, 3 * 2 * 5) << "every allocator x granularity x placement";
  int covering = 0;
  for (const auto& v : isolation::mm_cid::CoveringVariants())
    covering += v.lazy.scope == "scan_allowed_and_cpu0";
  EXPECT_EQ(covering, 1);
  ISOLATION_ASSERT_OK_AND_ASSIGN(
      auto m, isolation::mm_cid::MmCid::Create(8, "lazy+scan_allowed_and_cpu0+batch_8"));
  EXPECT_EQ(m->variant().Name(), "lazy+alloc_v6_14+scan_allowed_and_cpu0+batch_8+work_taskwork");
}

}  // namespace

// The user's whole conformance run: one line.
ISOLATION_MM_CID_CONFORMANCE(UserScope, "lazy+scan_allowed_and_cpu0",
                             "lazy+alloc_v6_13+scan_allowed_and_cpu0+batch_8+work_rcu");
