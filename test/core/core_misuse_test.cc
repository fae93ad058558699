// SPDX-License-Identifier: GPL-2.0-or-later
// Misuse of the core API: every call either returns an
// error naming the bad value, returns the documented safe value, or -- on a
// hot path -- fails its contract check with a message naming the value
// (death tests, run where the checks are compiled in).  Nothing may crash,
// hang or read out of bounds (the ASan/UBSan build runs these too).

#include <climits>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "common/contract_death.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "isolation/core/clock.h"
#include "isolation/core/contract.h"
#include "isolation/core/cpumask.h"
#include "isolation/core/interleave.h"
#include "isolation/core/isolation_config.h"
#include "isolation/core/topology.h"
#include "isolation/testing/status_matchers.h"

namespace isolation {
namespace {

using ::testing::HasSubstr;
using testing_internal::Opaque;

Topology MisuseMachine(const char* description) {
  Topology t = Topology::FromSynthetic(description).value();
  return t;
}

// ---- the contract macro itself ------------------------------------------------

TEST(ContractMisuse, ViolationPrintsFileConditionAndValueThenAborts) {
  const int cpu = 4242;
  EXPECT_CONTRACT_DEATH(ISOLATION_CONTRACT(cpu < 8, "cpu %d outside [0, %d)", cpu, 8),
                        "core_misuse_test.cc:[0-9]+: cpu < 8: cpu 4242 outside");
}

TEST(ContractMisuse, LibraryAndTestAgreeOnWhetherChecksAreOn) {
  // The definition is PUBLIC on the library targets: a test compiled against
  // them sees the same setting as the library (else a death test could skip
  // where the library checks, or expect a death that never comes).
  EXPECT_EQ(ContractChecksActive(), kContractChecksCompiledIn);
}

// ---- clock ------------------------------------------------------------------------

TEST(ClockMisuse, SaturatingAddKeepsNeverAsNever) {
  EXPECT_EQ(SaturatingAdd(kNanosMax, 1), kNanosMax);
  EXPECT_EQ(SaturatingAdd(5, kNanosMax), kNanosMax);
  EXPECT_EQ(SaturatingAdd(std::numeric_limits<int64_t>::min(), -1),
            std::numeric_limits<int64_t>::min());
  EXPECT_EQ(SaturatingAdd(40, 2), 42);
}

TEST(ClockMisuse, JiffiesToNanosSaturates) {
  EXPECT_EQ(JiffiesToNanos(std::numeric_limits<int64_t>::max(), 1000), kNanosMax);
  EXPECT_EQ(JiffiesToNanos(3, 1000), 3 * kNsPerMs);
}

TEST(ClockMisuse, HzZeroViolatesContract) {
  EXPECT_CONTRACT_DEATH((void)NanosToJiffies(1, 0), "hz 0 outside");
}

// ---- CpuMask ---------------------------------------------------------------------

TEST(CpuMaskMisuse, ParseRejectsSizesOutsideTheMachineRange) {
  for (int nbits : {-1, kMaxCpus + 1, INT_MAX, INT_MIN}) {
    const auto m = CpuMask::Parse("1", nbits);
    ASSERT_FALSE(m.ok()) << nbits;
    EXPECT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(m.status().message(), HasSubstr(std::to_string(nbits)));
  }
}

TEST(CpuMaskMisuse, TestInRangeIsFalseOutsideTheMask) {
  CpuMask m = CpuMask::Full(8);
  EXPECT_FALSE(m.TestInRange(-1));
  EXPECT_FALSE(m.TestInRange(8));
  EXPECT_FALSE(m.TestInRange(INT_MAX));
  EXPECT_TRUE(m.TestInRange(7));
}

TEST(CpuMaskMisuse, NegativeSizeViolatesContract) {
  EXPECT_CONTRACT_DEATH(CpuMask m(Opaque(-1)), "CpuMask of -1 bits");
}

TEST(CpuMaskMisuse, SizeAboveMaxCpusViolatesContract) {
  EXPECT_CONTRACT_DEATH(CpuMask m(Opaque(kMaxCpus + 1)), "CpuMask of 8193 bits");
}

TEST(CpuMaskMisuse, SetBeyondTheMaskViolatesContract) {
  CpuMask m(8);
  EXPECT_CONTRACT_DEATH(m.Set(Opaque(8)), "cpu 8 outside the mask");
}

TEST(CpuMaskMisuse, TestOfNegativeCpuViolatesContract) {
  CpuMask m(8);
  EXPECT_CONTRACT_DEATH((void)m.Test(Opaque(-1)), "cpu -1 outside the mask");
}

TEST(CpuMaskMisuse, ClearBeyondTheMaskViolatesContract) {
  CpuMask m(70);
  EXPECT_CONTRACT_DEATH(m.Clear(Opaque(1000)), "cpu 1000 outside the mask");
}

TEST(CpuMaskMisuse, SearchFromBelowMinusOneViolatesContract) {
  CpuMask m = CpuMask::Full(8);
  EXPECT_CONTRACT_DEATH((void)m.Next(Opaque(-5)), "search start -5");
}

TEST(CpuMaskMisuse, SetAlgebraOfDifferentSizesViolatesContract) {
  CpuMask a(8);
  const CpuMask b(128);
  EXPECT_CONTRACT_DEATH(a.And(b), "masks of 8 and 128 bits");
}

TEST(CpuMaskMisuse, ReversedRangeViolatesContract) {
  EXPECT_CONTRACT_DEATH((void)CpuMask::Range(8, Opaque(5), 2), "Range .5, 2. of 8 bits");
}

TEST(CpuMaskMisuse, AtomicMaskSetBeyondTheMaskViolatesContract) {
  AtomicCpuMask m(64);
  EXPECT_CONTRACT_DEATH(m.Set(Opaque(64)), "cpu 64 outside the mask");
}

TEST(CpuMaskMisuse, AtomicMaskNegativeSizeViolatesContract) {
  AtomicCpuMask m;
  EXPECT_CONTRACT_DEATH(m.Reset(Opaque(-3)), "AtomicCpuMask of -3 bits");
}

TEST(CpuMaskMisuse, AtomicMaskSnapshotIntoWrongSizeViolatesContract) {
  AtomicCpuMask m(64);
  CpuMask out(8);
  EXPECT_CONTRACT_DEATH(m.SnapshotInto(out), "masks of 64 and 8 bits");
}

// ---- Topology --------------------------------------------------------------------

TEST(TopologyMisuse, IsOnlineOutsideTheMachineIsFalse) {
  const Topology t = MisuseMachine("core:4 pu:1");
  for (int cpu : {-1, 4, 1000, INT_MAX, INT_MIN}) EXPECT_FALSE(t.IsOnline(cpu)) << cpu;
  EXPECT_TRUE(t.IsOnline(3));
}

TEST(TopologyMisuse, SetOnlineOutsideTheMachineIsAnErrorNamingTheCpu) {
  Topology t = MisuseMachine("core:4 pu:1");
  for (int cpu : {-1, 4, INT_MAX}) {
    const absl::Status s = t.SetOnline(cpu, false);
    EXPECT_EQ(s.code(), absl::StatusCode::kOutOfRange) << cpu;
    EXPECT_THAT(s.message(), HasSubstr(absl::StrCat("cpu ", cpu)));
  }
  EXPECT_EQ(t.online().Weight(), 4);
}

TEST(TopologyMisuse, FromIdsRejectsBadVectors) {
  // Empty, mismatched lengths, an id beyond the CPU count, negative ids.
  EXPECT_FALSE(Topology::FromIds({}, {}, {}, {}, "empty").ok());
  EXPECT_FALSE(Topology::FromIds({0, 1}, {0}, {0, 0}, {0, 0}, "short").ok());
  const auto big = Topology::FromIds({0, INT_MAX}, {0, 0}, {0, 0}, {0, 0}, "big");
  ASSERT_FALSE(big.ok());
  EXPECT_THAT(big.status().message(), HasSubstr("2147483647"));
  EXPECT_FALSE(Topology::FromIds({0, -1}, {0, 0}, {0, 0}, {0, 0}, "neg").ok());
  EXPECT_FALSE(Topology::FromIds(
                   std::vector<int>(kMaxCpus + 1, 0), std::vector<int>(kMaxCpus + 1, 0),
                   std::vector<int>(kMaxCpus + 1, 0), std::vector<int>(kMaxCpus + 1, 0), "huge")
                   .ok());
}

TEST(TopologyMisuse, FromFlagRejectsGarbageAndHugeMachines) {
  EXPECT_FALSE(Topology::FromFlag("").ok());
  EXPECT_FALSE(Topology::FromFlag("pu:-3").ok());
  const auto huge = Topology::FromSynthetic("package:4096 core:4096 pu:4096");
  ASSERT_FALSE(huge.ok());
  EXPECT_EQ(huge.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(TopologyMisuse, PerCpuAccessorOutsideTheMachineViolatesContract) {
  const Topology t = MisuseMachine("core:4 pu:1");
  EXPECT_CONTRACT_DEATH((void)t.llc_of(Opaque(4)), "cpu 4 outside the topology");
}

TEST(TopologyMisuse, NodeMaskOfUnknownNodeViolatesContract) {
  const Topology t = MisuseMachine("core:4 pu:1");
  EXPECT_CONTRACT_DEATH((void)t.node_mask(Opaque(7)), "node id 7 outside");
}

// ---- IsolationConfig --------------------------------------------------------------

TEST(IsolationConfigMisuse, CpuIsIsolatedOutsideTheMachineIsFalse) {
  const Topology t = MisuseMachine("core:8 pu:1");
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto c, IsolationConfig::FromFlags(t, "domain,1-7", ""));
  for (int cpu : {-1, 8, 64, 1000, INT_MAX, INT_MIN}) EXPECT_FALSE(c.CpuIsIsolated(cpu)) << cpu;
  EXPECT_TRUE(c.CpuIsIsolated(7));
  EXPECT_FALSE(c.CpuIsIsolated(0));
}

TEST(IsolationConfigMisuse, IsHousekeepingOutsideTheMachineIsFalse) {
  const Topology t = MisuseMachine("core:8 pu:1");
  IsolationConfig c(t);
  EXPECT_FALSE(c.IsHousekeeping(-1, HousekeepingType::kDomain));
  EXPECT_FALSE(c.IsHousekeeping(8, HousekeepingType::kTick));
  EXPECT_TRUE(c.IsHousekeeping(0, HousekeepingType::kTick));
}

TEST(IsolationConfigMisuse, UnknownHousekeepingTypeViolatesContract) {
  const Topology t = MisuseMachine("core:8 pu:1");
  IsolationConfig c(t);
  EXPECT_CONTRACT_DEATH((void)c.housekeeping(static_cast<HousekeepingType>(42)),
                        "housekeeping type 42");
}

TEST(IsolationConfigMisuse, CpusetMaskOfWrongSizeIsAnError) {
  const Topology t = MisuseMachine("core:8 pu:1");
  IsolationConfig c(t);
  const absl::Status s = c.SetCpusetIsolated(CpuMask::Full(128));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("128 bits"));
}

TEST(IsolationConfigMisuse, CpuBeyondTheMachineInABootParameterIsOutOfRange) {
  const Topology t = MisuseMachine("core:8 pu:1");
  const auto c = IsolationConfig::FromFlags(t, "", "1-4294967295");
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(c.status().message(), HasSubstr("4294967295"));
}

// ---- Interleaver -------------------------------------------------------------------

TEST(InterleaverMisuse, ActorWithoutFunctionIsAnError) {
  Interleaver il;
  il.Add("a", nullptr);
  const absl::Status s = il.Run({{"a", ""}});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("\"a\" has no function"));
}

TEST(InterleaverMisuse, ActorAddedTwiceIsAnError) {
  Interleaver il;
  int runs = 0;
  il.Add("a", [&] { ++runs; });
  il.Add("a", [&] { ++runs; });
  EXPECT_EQ(il.Run({{"a", ""}}).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(runs, 0);
}

TEST(InterleaverMisuse, ExploreWithEmptyCallbacksIsAnError) {
  EXPECT_EQ(Interleaver::Explore(nullptr, [](const std::vector<std::string>&) {}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(
      Interleaver::Explore([](Interleaver& il) { il.Add("a", [] {}); }, nullptr).status().code(),
      absl::StatusCode::kInvalidArgument);
}

TEST(InterleaverMisuse, ExploreWithDuplicateActorsIsAnError) {
  const auto r = Interleaver::Explore(
      [](Interleaver& il) {
        il.Add("a", [] {});
        il.Add("a", [] {});
      },
      [](const std::vector<std::string>&) {});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace isolation
