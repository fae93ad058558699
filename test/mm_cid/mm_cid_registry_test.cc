// SPDX-License-Identifier: GPL-2.0-or-later
// The mm_cid registries (include/isolation/mm_cid/registry.h) and variant
// names (variant.h): every variant of before the registries is registered (none
// lost) with a description and its negative-control flag; the enumerations
// the suites and benchmarks use; ParseVariant() round trips and errors that
// name the bad token; the flat MmCidConfig of before maps onto the same
// variants and keeps its names.  (Registration from outside:
// mm_cid_user_variant_test.cc, in its own binary, since it changes the
// process's registries.)

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "isolation/mm_cid/mm_cid.h"
#include "isolation/mm_cid/registry.h"
#include "isolation/testing/status_matchers.h"

namespace isolation::mm_cid {
namespace {

using ::testing::HasSubstr;

TEST(MmCidRegistry, EveryVariantOfBeforeIsListedWithDescriptionAndFlag) {
  // axis -> name -> negative control
  const std::map<std::string, std::map<std::string, bool>> expected = {
      {"design",
       {{"lazy", false},
        {"owner619", false},
        {"v63_mmlock", false},
        {"lazy_no_dekker_fences", true},
        {"owner619_direct", true},
        {"owner619_walk619", true},
        {"owner619_split_mode", true}}},
      {"allocator", {{"alloc_v6_4", false}, {"alloc_v6_13", false}, {"alloc_v6_14", false}}},
      {"scope", {{"scan_possible", false}, {"scan_allowed", false}, {"scan_cidmask", true}}},
      {"granularity", {{"batch_full", false}, {"batch_N", false}}},
      {"placement",
       {{"work_taskwork", false},
        {"work_delayed", false},
        {"work_delayed_v1", true},
        {"work_unbound", false},
        {"work_rcu", false},
        {"work_resume", false}}},
      {"tick", {{"no_tick_kick", false}, {"tick_kick", false}}},
  };
  std::map<std::string, std::map<std::string, bool>> listed;
  for (const VariantInfo& row : ListVariants()) {
    EXPECT_EQ(row.mechanism, "mm_cid");
    EXPECT_FALSE(row.description.empty()) << row.axis << " " << row.name;
    listed[row.axis][row.name] = row.negative_control;
  }
  EXPECT_EQ(listed, expected);
}

TEST(MmCidRegistry, AllVariantsIsTheProductOfTheCorrectStrategies) {
  const std::vector<MmCidVariant> all = AllVariants();
  EXPECT_EQ(all.size(), 3u * 2 * 2 * 5 + 2)
      << "allocators x scopes x granularities x placements + owner619, v63_mmlock";
  std::set<std::string> names;
  for (const MmCidVariant& v : all) {
    EXPECT_TRUE(names.insert(v.Name()).second) << "duplicate " << v.Name();
    ISOLATION_ASSERT_OK_AND_ASSIGN(auto parsed, ParseVariant(v.Name()));
    EXPECT_EQ(parsed, v) << v.Name();
    ISOLATION_ASSERT_OK_AND_ASSIGN(auto t, DescribeVariant(v));
    EXPECT_FALSE(t.negative_control) << v.Name();
  }
  EXPECT_TRUE(names.count("lazy+alloc_v6_14+scan_possible+batch_full+work_taskwork"));
  EXPECT_TRUE(names.count("lazy+alloc_v6_13+scan_allowed+batch_8+work_resume"));
  EXPECT_TRUE(names.count("owner619"));
  EXPECT_TRUE(names.count("v63_mmlock"));
}

TEST(MmCidRegistry, CoveringVariantsHoldEveryCorrectStrategyOnce) {
  std::map<std::string, int> seen;
  for (const MmCidVariant& v : CoveringVariants()) {
    ++seen[v.design];
    ++seen[v.lazy.allocator];
    ++seen[v.lazy.scope];
    ++seen[v.lazy.granularity];
    ++seen[v.lazy.placement];
    ++seen[v.lazy.tick];
  }
  for (const char* name :
       {"lazy", "owner619", "v63_mmlock", "alloc_v6_4", "alloc_v6_13", "alloc_v6_14",
        "scan_possible", "scan_allowed", "batch_full", "batch_8", "work_taskwork", "work_delayed",
        "work_unbound", "work_rcu", "work_resume", "no_tick_kick", "tick_kick"}) {
    EXPECT_GT(seen[name], 0) << name;
  }
  EXPECT_EQ(seen["scan_cidmask"], 0);
  EXPECT_EQ(CoveringVariants().size(), 12u);
}

TEST(MmCidRegistry, NegativeControlVariantsOnePerControl) {
  std::vector<std::string> names;
  for (const MmCidVariant& v : NegativeControlVariants()) names.push_back(v.Name());
  EXPECT_THAT(names, ::testing::UnorderedElementsAre(
                         "lazy_no_dekker_fences+alloc_v6_14+scan_possible+batch_full+work_taskwork",
                         "owner619_direct", "owner619_walk619", "owner619_split_mode",
                         "lazy+alloc_v6_14+scan_cidmask+batch_full+work_taskwork",
                         "lazy+alloc_v6_14+scan_possible+batch_full+work_delayed_v1"));
}

TEST(MmCidVariantNames, ParseOrderFreeDefaultsAndTickKick) {
  auto v = ParseVariant("lazy+work_rcu+batch_8");
  ISOLATION_ASSERT_OK(v);
  EXPECT_EQ(v->Name(), "lazy+alloc_v6_14+scan_possible+batch_8+work_rcu");
  v = ParseVariant("lazy+tick_kick");
  ISOLATION_ASSERT_OK(v);
  EXPECT_EQ(v->Name(), "lazy+alloc_v6_14+scan_possible+batch_full+work_taskwork+tick_kick");
  v = ParseVariant("lazy+work_unbound+tick_kick");
  ISOLATION_ASSERT_OK(v);
  EXPECT_EQ(v->Name(), "lazy+alloc_v6_14+scan_possible+batch_full+work_unbound")
      << "implied, not printed";
  v = ParseVariant("LAZY+Alloc_V6_4");
  ISOLATION_ASSERT_OK(v);
  EXPECT_EQ(v->lazy.allocator, "alloc_v6_4") << "case-insensitive, canonical spelling kept";
  v = ParseVariant("lazy+batch_32");
  ISOLATION_ASSERT_OK(v);
  EXPECT_EQ(v->lazy.granularity, "batch_32");
}

TEST(MmCidVariantNames, FlatNamesOfBeforeParse) {
  auto v = ParseVariant("owner619+owner619_direct");
  ISOLATION_ASSERT_OK(v);
  EXPECT_EQ(v->design, "owner619_direct");
  v = ParseVariant("lazy+alloc_v6_14+scan_possible+batch_full+work_taskwork+lazy_no_dekker_fences");
  ISOLATION_ASSERT_OK(v);
  EXPECT_EQ(v->design, "lazy_no_dekker_fences");
}

TEST(MmCidVariantNames, ErrorsNameTheBadToken) {
  auto v = ParseVariant("lazy+scan_everything");
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(v.status().message(), HasSubstr("scan_everything"));
  EXPECT_THAT(v.status().message(), HasSubstr("scan_allowed")) << "lists the registered names";
  v = ParseVariant("owner620");
  ASSERT_FALSE(v.ok());
  EXPECT_THAT(v.status().message(), HasSubstr("owner620"));
  v = ParseVariant("owner619+alloc_v6_13");
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(v.status().message(), HasSubstr("alloc_v6_13"));
  v = ParseVariant("lazy+alloc_v6_4+alloc_v6_13");
  ASSERT_FALSE(v.ok());
  EXPECT_THAT(v.status().message(), HasSubstr("alloc_v6_13"));
  EXPECT_FALSE(ParseVariant("").ok());
  EXPECT_FALSE(ParseVariant("lazy++batch_8").ok());
  // Parsed, but the family refuses the parameter at creation.
  auto m = MmCid::Create(8, "lazy+batch_0");
  ASSERT_FALSE(m.ok());
  EXPECT_THAT(m.status().message(), HasSubstr("batch 0"));
  MmCidVariant unknown;
  unknown.lazy.placement = "work_somewhere";
  m = MmCid::Create(8, unknown);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(m.status().message(), HasSubstr("work_somewhere"));
}

// A variant that uses a negative-control part is a negative control itself
// (DescribeVariant), and a name that would drop a control part is refused
// with a message (a later design token replacing a control design).
TEST(MmCidVariantNames, NegativeControlPartsAreNeverDropped) {
  for (const char* name : {"lazy+scan_cidmask", "lazy_no_dekker_fences+alloc_v6_4+batch_8",
                           "owner619+owner619_direct", "lazy+alloc_v6_13+scan_cidmask+work_rcu"}) {
    auto v = ParseVariant(name);
    ISOLATION_ASSERT_OK(v) << name;
    ISOLATION_ASSERT_OK_AND_ASSIGN(auto t, DescribeVariant(*v));
    EXPECT_TRUE(t.negative_control) << name;
  }
  for (const char* name :
       {"owner619_direct+owner619", "lazy_no_dekker_fences+lazy", "owner619_walk619+v63_mmlock"}) {
    auto v = ParseVariant(name);
    ASSERT_FALSE(v.ok()) << name << " parsed to " << v->Name();
    EXPECT_EQ(v.status().code(), absl::StatusCode::kInvalidArgument) << name;
    EXPECT_THAT(v.status().message(), HasSubstr("negative control")) << name;
  }
  // A control replacing a mainline design is the flat names' suffix: kept.
  auto v = ParseVariant("owner619_direct+owner619_split_mode");
  ISOLATION_ASSERT_OK(v);
  EXPECT_EQ(v->design, "owner619_split_mode");
}

TEST(MmCidVariantNames, CreateByNameKeepsTheVariant) {
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto m, MmCid::Create(8, "lazy+scan_allowed+batch_8"));
  EXPECT_EQ(m->variant().Name(), "lazy+alloc_v6_14+scan_allowed+batch_8+work_taskwork");
  ASSERT_NE(m->placement(), nullptr);
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto o, MmCid::Create(8, "owner619"));
  EXPECT_EQ(o->placement(), nullptr) << "no background work";
}

// The deprecated flat configuration: same names, and ToVariant() maps each
// field and toggle onto the registered variant.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
TEST(MmCidCompatConfig, NamesAndMapping) {
  MmCidConfig c;
  EXPECT_EQ(c.Name(), "lazy+alloc_v6_14+scan_possible+batch_full+work_taskwork");
  c.tick_kick = true;
  EXPECT_EQ(c.Name(), "lazy+alloc_v6_14+scan_possible+batch_full+work_taskwork+tick_kick");
  EXPECT_TRUE(c.TickKickEnabled());
  c.tick_kick = false;
  EXPECT_FALSE(c.TickKickEnabled());
  c.placement = Placement::kUnbound;
  EXPECT_TRUE(c.TickKickEnabled()) << "work_unbound carries the kick";
  c.tick_kick = true;
  EXPECT_EQ(c.Name(), "lazy+alloc_v6_14+scan_possible+batch_full+work_unbound")
      << "implied, not printed";
  MmCidConfig o;
  o.design = Design::kOwner619;
  o.owner619_walk619 = true;
  EXPECT_EQ(o.Name(), "owner619+owner619_walk619");
  EXPECT_FALSE(o.TickKickEnabled());
  o.owner619_walk619 = false;
  o.owner619_split_mode = true;
  EXPECT_EQ(o.Name(), "owner619+owner619_split_mode");
  MmCidConfig f;
  f.lazy_no_dekker_fences = true;
  EXPECT_EQ(f.Name(),
            "lazy+alloc_v6_14+scan_possible+batch_full+work_taskwork+lazy_no_dekker_fences");
  EXPECT_TRUE(*ParseTickKick("tick_kick"));
  EXPECT_FALSE(*ParseTickKick("no_tick_kick"));
  EXPECT_THAT(ParseTickKick("kick").status().message(), HasSubstr("kick"));

  struct Case {
    MmCidConfig config;
    std::string variant;
  };
  MmCidConfig batched;
  batched.allocator = Allocator::kV6_13;
  batched.scope = ScanScope::kCidmask;
  batched.batch = 8;
  batched.placement = Placement::kResume;
  MmCidConfig direct;
  direct.design = Design::kOwner619;
  direct.owner619_direct = true;
  MmCidConfig v63;
  v63.design = Design::kV63MmLock;
  for (const Case& k :
       {Case{MmCidConfig{}, "lazy+alloc_v6_14+scan_possible+batch_full+work_taskwork"},
        Case{batched, "lazy+alloc_v6_13+scan_cidmask+batch_8+work_resume"},
        Case{direct, "owner619_direct"},
        Case{f, "lazy_no_dekker_fences+alloc_v6_14+scan_possible+batch_full+work_taskwork"},
        Case{v63, "v63_mmlock"}}) {
    ISOLATION_ASSERT_OK_AND_ASSIGN(auto v, ToVariant(k.config));
    EXPECT_EQ(v.Name(), k.variant);
    ISOLATION_ASSERT_OK_AND_ASSIGN(auto m, MmCid::Create(8, k.config));
    EXPECT_EQ(m->variant().Name(), k.variant);
  }
  MmCidConfig two;
  two.design = Design::kOwner619;
  two.owner619_direct = two.owner619_split_mode = true;
  EXPECT_THAT(ToVariant(two).status().message(), HasSubstr("pick one"));
}
#pragma GCC diagnostic pop

}  // namespace
}  // namespace isolation::mm_cid
