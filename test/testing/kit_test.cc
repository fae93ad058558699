// SPDX-License-Identifier: GPL-2.0-or-later
// The conformance kit's helpers: status matchers, ASSERT_OK_AND_ASSIGN, the
// machine builder and the variant registry.

#include <memory>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest-spi.h"
#include "gtest/gtest.h"
#include "absl/functional/any_invocable.h"
#include "isolation/core/registry.h"
#include "isolation/testing/machine.h"
#include "isolation/testing/status_matchers.h"

namespace isolation::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

absl::StatusOr<int> Twice(int x) {
  if (x < 0) return absl::InvalidArgumentError(absl::StrCat("negative: ", x));
  return 2 * x;
}

TEST(StatusMatchers, IsOkAndStatusIs) {
  EXPECT_THAT(absl::OkStatus(), IsOk());
  EXPECT_THAT(Twice(1), IsOk());
  EXPECT_THAT(Twice(-3), Not(IsOk()));
  EXPECT_THAT(Twice(-3), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(Twice(-3), StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("-3")));
  EXPECT_THAT(Twice(-3), Not(StatusIs(absl::StatusCode::kNotFound)));
  EXPECT_OK(Twice(2));
  ASSERT_OK(absl::OkStatus());
}

TEST(StatusMatchers, AssertOkAndAssign) {
  ASSERT_OK_AND_ASSIGN(int v, Twice(21));
  EXPECT_EQ(v, 42);
  int w = 0;
  ASSERT_OK_AND_ASSIGN(w, Twice(4));
  EXPECT_EQ(w, 8);
}

bool g_reached_after_failed_assign = false;
void AssignFromError() {
  ASSERT_OK_AND_ASSIGN(int v, Twice(-1));
  g_reached_after_failed_assign = true;
  (void)v;
}

TEST(StatusMatchers, AssertOkAndAssignFailsTheTest) {
  // The failure must be reported and the function left, not swallowed.
  EXPECT_FATAL_FAILURE(AssignFromError(), "negative: -1");
  EXPECT_FALSE(g_reached_after_failed_assign);
}

TEST(MachineBuilder, SeedMachine) {
  ASSERT_OK_AND_ASSIGN(Machine m, MachineBuilder().Isolcpus(kSeedIsolcpus).Build());
  EXPECT_EQ(m.num_cpus(), 128);
  EXPECT_TRUE(m.isolation.CpuIsIsolated(1));
  EXPECT_FALSE(m.isolation.CpuIsIsolated(32));
  ASSERT_OK_AND_ASSIGN(auto sim, m.Simulator());
  EXPECT_EQ(sim->topology().num_cpus(), 128);
}

TEST(MachineBuilder, NohzFullAndCmdline) {
  ASSERT_OK_AND_ASSIGN(Machine a, MachineBuilder().Topology("package:1 core:8 pu:1").NohzFull("1-7").Build());
  EXPECT_TRUE(a.isolation.nohz_full().Test(3));
  ASSERT_OK_AND_ASSIGN(Machine b, MachineBuilder().Topology("package:1 core:8 pu:1")
                                      .Cmdline("quiet nohz_full=1-7 ro")
                                      .Build());
  EXPECT_EQ(a.isolation.nohz_full(), b.isolation.nohz_full());
}

TEST(MachineBuilder, BadInputNamesTheValue) {
  EXPECT_THAT(MachineBuilder().Topology("package:two").Build(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("two")));
  EXPECT_THAT(MachineBuilder().Topology("package:1 core:8 pu:1").Isolcpus("1-x").Build(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("1-x")));
}

using IntFactory = absl::AnyInvocable<int() const>;

TEST(VariantRegistry, RegisterFindAndList) {
  VariantRegistry<IntFactory> r("test axis");
  ASSERT_OK(r.Register({.name = "mainline", .description = "the kernel's", .factory = [] { return 1; }}));
  ASSERT_OK(r.Register({.name = "broken", .description = "drops a fence", .negative_control = true,
                        .factory = [] { return 2; }}));
  ASSERT_OK_AND_ASSIGN(const auto* e, r.Find("MAINLINE"));
  EXPECT_EQ(e->factory(), 1);
  EXPECT_THAT(r.Names(), ::testing::ElementsAre("mainline"));
  EXPECT_THAT(r.Names(/*include_negative_controls=*/true), ::testing::ElementsAre("mainline", "broken"));
  EXPECT_EQ(r.All().size(), 2u);
}

TEST(VariantRegistry, ErrorsNameTheValue) {
  VariantRegistry<IntFactory> r("test axis");
  ASSERT_OK(r.Register({.name = "a", .description = "", .factory = [] { return 1; }}));
  EXPECT_THAT(r.Register({.name = "A", .description = "", .factory = [] { return 1; }}),
              StatusIs(absl::StatusCode::kAlreadyExists, HasSubstr("'A'")));
  EXPECT_THAT(r.Register({.name = "", .description = "", .factory = [] { return 1; }}),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(r.Register({.name = "a b", .description = "", .factory = [] { return 1; }}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("'a b'")));
  EXPECT_THAT(r.Register({.name = "nofactory", .description = "", .factory = nullptr}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("nofactory")));
  EXPECT_THAT(r.Find("zzz"), StatusIs(absl::StatusCode::kNotFound, HasSubstr("zzz")));
}

// What the rest of the library asks an entry: origin, default row, label,
// aliases (which Find() accepts and Register() keeps unique).
TEST(VariantRegistry, OriginDefaultRowsLabelsAndAliases) {
  VariantRegistry<IntFactory> r("test axis");
  ASSERT_OK(r.Register(AsBuiltin(VariantEntry<IntFactory>{
      .name = "mainline", .description = "", .factory = [] { return 1; }, .label = "main", .aliases = {"v1"}})));
  ASSERT_OK(r.Register({.name = "alt", .description = "", .factory = [] { return 2; }, .default_row = false}));
  ASSERT_OK(r.Register({.name = "broken", .description = "", .negative_control = true, .factory = [] { return 3; }}));
  ASSERT_OK(r.Register({.name = "shown", .description = "", .negative_control = true, .factory = [] { return 4; },
                        .default_row = true}));
  ASSERT_OK_AND_ASSIGN(const auto* e, r.Find("V1"));
  EXPECT_EQ(e->name, "mainline");
  EXPECT_TRUE(e->is_builtin());
  EXPECT_EQ(e->row_label(), "main");
  ASSERT_OK_AND_ASSIGN(const auto* alt, r.Find("alt"));
  EXPECT_FALSE(alt->is_builtin());
  EXPECT_EQ(alt->row_label(), "alt");
  std::vector<std::string> rows;
  for (const auto* d : r.DefaultRows()) rows.push_back(d->name);
  EXPECT_THAT(rows, ::testing::ElementsAre("mainline", "shown"));
  std::vector<std::string> outside;
  for (const auto* o : r.FromOrigin(VariantOrigin::kOutside, /*include_negative_controls=*/true)) {
    outside.push_back(o->name);
  }
  EXPECT_THAT(outside, ::testing::ElementsAre("alt", "broken", "shown"));
  EXPECT_EQ(r.FromOrigin(VariantOrigin::kOutside).size(), 1u);
  EXPECT_THAT(r.Register({.name = "other", .description = "", .factory = [] { return 5; }, .aliases = {"MAINLINE"}}),
              StatusIs(absl::StatusCode::kAlreadyExists, HasSubstr("'MAINLINE'")));
  EXPECT_THAT(r.Register({.name = "v1", .description = "", .factory = [] { return 5; }}),
              StatusIs(absl::StatusCode::kAlreadyExists, HasSubstr("'v1'")));
  EXPECT_THAT(r.Register({.name = "x", .description = "", .factory = [] { return 5; }, .aliases = {"a b"}}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("'a b'")));
  EXPECT_THAT(r.Register({.name = "y", .description = "", .factory = [] { return 5; }, .aliases = {""}}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("empty alias")));
  EXPECT_EQ(VariantOriginName(VariantOrigin::kBuiltin), "builtin");
  EXPECT_EQ(VariantOriginName(VariantOrigin::kOutside), "outside");
}

}  // namespace
}  // namespace isolation::testing
