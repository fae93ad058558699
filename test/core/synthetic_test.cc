// SPDX-License-Identifier: GPL-2.0-or-later
// Topology::FromSynthetic's own parser (lib/core/synthetic.h): untrusted
// descriptions are rejected before anything is built, wide machines load
// without hwloc's superlinear cost, and every accepted form describes the
// same machine hwloc builds from it.  Registered with a 10 s ctest TIMEOUT
// per test (test/core/CMakeLists.txt): hwloc needed ~300 s for the first
// rejected string below, and ~47 s to load "pu:8192".

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "isolation/core/topology.h"
#include "isolation/testing/status_matchers.h"
#include "synthetic.h"

namespace isolation {
namespace {

using ::testing::HasSubstr;

// Same CPUs, and the same core / LLC / node / package partition (ids are
// dense in CPU order on both sides, so equal ids mean equal partitions).
void ExpectSameMachine(const Topology& ours, const Topology& hwloc, std::string_view description) {
  SCOPED_TRACE(std::string(description));
  ASSERT_EQ(ours.num_cpus(), hwloc.num_cpus());
  EXPECT_EQ(ours.num_cores(), hwloc.num_cores());
  EXPECT_EQ(ours.num_llcs(), hwloc.num_llcs());
  EXPECT_EQ(ours.num_nodes(), hwloc.num_nodes());
  EXPECT_EQ(ours.num_packages(), hwloc.num_packages());
  for (int cpu = 0; cpu < ours.num_cpus(); ++cpu) {
    EXPECT_EQ(ours.core_of(cpu), hwloc.core_of(cpu)) << "cpu " << cpu;
    EXPECT_EQ(ours.llc_of(cpu), hwloc.llc_of(cpu)) << "cpu " << cpu;
    EXPECT_EQ(ours.node_of(cpu), hwloc.node_of(cpu)) << "cpu " << cpu;
    EXPECT_EQ(ours.package_of(cpu), hwloc.package_of(cpu)) << "cpu " << cpu;
  }
}

// Every construct of the grammar, each checked against hwloc 2.x itself.
const char* const kAccepted[] = {
    "pu:1",
    "pu:4",
    "core:8 pu:1",
    "package:2 l3cache:4 core:16 pu:1",
    "numa:2 l3:4 core:16 pu:2",
    "pack:2 numa:1 l3:2 core:4 pu:2",
    "pack:2 l3:2 numa:2 core:2 pu:1",
    "numa:2 pack:2 core:2 pu:1",
    "Package:2 L3Cache:2 Core:2 PU:2",
    "socket:2 node:2 core:2 pu:2",
    "numanode:3 core:2 pu:1",
    "pack:2 l3:2 l2:2 l1d:2 core:1 pu:2",
    "l2cache:2 l1cache:2 core:2 pu:2",
    "l1dcache:4 core:1 pu:1",
    "pack:1 [numa] core:4 pu:2",
    "[numa] pack:2 pu:2",
    "pack:2 [numa(memory=2GB)] core:2 pu:2",
    "pack:2 core:2 [numa] pu:2",
    "pack:2(memory=1GB) l3:2(size=32MB) core:2(memory=0) pu:2(memory=16kB)",
    "pu:0x10",
    "core:0X4 pu:0x2",
    "pack:2 core:4 pu:2(indexes=core:pack)",
    "pack:2 core:3 pu:2(indexes=core:pack)",
    "pack:2 core:2 pu:2(indexes=pack:core)",
    "pack:3 core:5 pu:2(indexes=Core:Package)",
    "pack:2 l3:2 core:2 pu:2(indexes=l3:core:pack)",
    "pack:2 core:2 pu:2(indexes=0,2,1,3,4,6,5,7)",
    "pack:2 core:2 pu:2(indexes=7,6,5,4,3,2,1,0 memory=1MB)",
    "core:4 pu:2(indexes=2*4:1*2)",
    "core:4 pu:2(indexes=4*2)",
    "\n core:2 pu:2 \n",
};

TEST(SyntheticParser, EveryAcceptedFormBuildsWhatHwlocBuilds) {
  for (const char* d : kAccepted) {
    absl::StatusOr<Topology> ours = Topology::FromSynthetic(d);
    ISOLATION_ASSERT_OK(ours) << "\"" << d << "\"";
    absl::StatusOr<Topology> hwloc = internal::LoadSyntheticWithHwloc(d);
    ISOLATION_ASSERT_OK(hwloc) << "hwloc rejects \"" << d << "\"";
    ExpectSameMachine(*ours, *hwloc, d);
  }
}

TEST(SyntheticParser, IntelSiblingNumberingFromInterleavedIndexes) {
  ISOLATION_ASSERT_OK_AND_ASSIGN(Topology t,
                                 Topology::FromSynthetic("pack:2 core:4 pu:2(indexes=core:pack)"));
  EXPECT_EQ(t.core_mask(0).ToString(), "0,8");
  EXPECT_EQ(t.package_of(4), 1);
  ISOLATION_ASSERT_OK_AND_ASSIGN(Topology reversed,
                                 Topology::FromSynthetic("core:2 pu:2(indexes=3,2,1,0)"));
  EXPECT_EQ(reversed.smt_siblings(3).ToString(), "2-3");
}

// Strings that hwloc took minutes (or 870 MB) to refuse.
TEST(SyntheticParser, OversizedMachinesRejectedBeforeAnythingIsBuilt) {
  struct Case {
    const char* description;
    const char* count;
  };
  for (const Case& c :
       {Case{"pu:0x4e20", "20000"}, Case{"package:0x64 core:0x64 pu:0x64", "1000000"},
        Case{"pack:1 [numa] pu:20000", "20000"}, Case{"pu:8193", "8193"},
        Case{"pack:0xffffffffffffffff core:0xffffffffffffffff pu:0xffffffffffffffff", "more than"},
        Case{"pu:99999999999999999999999999", "more than"}}) {
    absl::StatusOr<Topology> t = Topology::FromSynthetic(c.description);
    ASSERT_FALSE(t.ok()) << c.description;
    EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(t.status().message()),
                HasSubstr(std::string("\"") + c.description + "\""));
    EXPECT_THAT(std::string(t.status().message()), HasSubstr(std::string("has ") + c.count));
    EXPECT_THAT(std::string(t.status().message()), HasSubstr("more than the maximum 8192"));
  }
}

TEST(SyntheticParser, MalformedDescriptionsNameTheStringAndPosition) {
  struct Case {
    std::string description;
    const char* what;
  };
  const Case cases[] = {
      {std::string("pu:4\0pu:99", 10), "embedded NUL byte"},
      {"pu:010", "leading zero"},
      {"pu:0", "0 objects"},
      {"pu:0x", "hex digits"},
      {"pu:", "number of objects"},
      {"pu:4x", "after the count"},
      {"core:2pu:2", "after the count"},
      {"core pu:2", "expected ':'"},
      {"2 4", "expected a level"},
      {"die:2 pu:2", "unsupported level type"},
      {"group:2 pu:2", "unsupported level type"},
      {"machine:2 pu:2", "unsupported level type"},
      {"core:2", "must end with a pu level"},
      {"pu:2 core:2", "pu must be the last level"},
      {"core:2 core:2 pu:1", "second core level"},
      {"core:2 pack:2 pu:1", "cannot be below core"},
      {"core:2 numa:2 pu:1", "numa level must be above core"},
      {"numa:2 [numa] pu:2", "cannot both be given"},
      {"[numa] numa:2 pu:2", "cannot both be given"},
      {"pack:2 [numa] [numa] pu:2", "second [numa]"},
      {"[core] pu:2", "only [numa] may be attached"},
      {"[numa pu:2", "expected ']'"},
      {"[numa]pu:2", "space between items"},
      {"core:4 pu:2(bogus=1)", "bogus= is not supported"},
      {"l3:2(memory=1GB) pu:2", "memory= is not supported on l3"},
      {"core:2(size=1MB) pu:2", "size= is not supported on core"},
      {"core:2(indexes=1,0) pu:1", "indexes= is not supported on core"},
      {"core:2 pu:2(memory=08)", "leading zero"},
      {"core:2 pu:2(memory=1KiB)", "expected ' ' or ')'"},
      {"core:2 pu:2(memory=1GB", "expected ' ' or ')'"},
      {"core:2 pu:2(memory=1GB)x", "space after ')'"},
      {"core:2 pu:2(memory=1 memory=2)", "given twice"},
      {"core:2 pu:2(indexes=0,0,1,2)", "0..3 once each"},
      {"core:2 pu:2(indexes=0,1,2)", "3 indexes for 4 PUs"},
      {"core:2 pu:2(indexes=0,1,2,3,4)", "index 4 is not below"},
      {"core:2 pu:2(indexes=0,,1,2)", "expected an index"},
      {"core:2 pu:2(indexes=numa:core)", "not a level above pu"},
      {"core:2 pu:2(indexes=pu)", "not a level above pu"},
      {"core:2 pu:2(indexes=core:core)", "names a level twice"},
      {"core:2 pu:2(indexes=3*2)", "do not cover"},
      {"core:2 pu:2(indexes=02*2)", "leading zero"},
      {"core:2 pu:2(indexes=0*2)", "from 1"},
      {"core:2 pu:2(indexes=2*9)", "larger than the PU count"},
      {"core:2 pu:2(indexes=1*2:1*2)", "once each"},
      {"", "must end with a pu level"},
      {"pu:2\t", "after the count"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<Topology> t = Topology::FromSynthetic(c.description);
    ASSERT_FALSE(t.ok()) << "accepted \"" << c.description << "\": " << t->Summary();
    EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument) << c.description;
    const std::string message(t.status().message());
    EXPECT_THAT(message, HasSubstr(c.what)) << c.description;
    EXPECT_THAT(message, HasSubstr("position")) << c.description;
  }
  // The escaped string is quoted: NUL as \x00.
  EXPECT_THAT(std::string(Topology::FromSynthetic(std::string("pu:4\0x", 6)).status().message()),
              HasSubstr("\"pu:4\\x00x\""));
}

// What hwloc 2.9 loads in 47 s ("pu:8192") to 99 s ("core:8192 [numa]
// pu:1") is built here in milliseconds.
TEST(SyntheticParser, WideLevelsBuildQuickly) {
  for (const char* d :
       {"pu:8192", "core:8192 pu:1", "core:8192 [numa] pu:1", "core:4096 [numa] pu:2",
        "pack:8 core:1024 pu:1", "pu:0x2000(indexes=8192*1)"}) {
    absl::StatusOr<Topology> t = Topology::FromSynthetic(d);
    ISOLATION_ASSERT_OK(t) << d;
    EXPECT_EQ(t->num_cpus(), 8192) << d;
  }
  ISOLATION_ASSERT_OK_AND_ASSIGN(Topology t, Topology::FromSynthetic("core:4096 [numa] pu:2"));
  EXPECT_EQ(t.num_nodes(), 4096);
  EXPECT_EQ(t.smt_width(), 2);
}

}  // namespace
}  // namespace isolation
