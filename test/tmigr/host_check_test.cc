// SPDX-License-Identifier: GPL-2.0-or-later
// tmigr hierarchy sizing against tmigr_init()'s boot line
// (tmigr/host_check.h): canned logs, and the running kernel's log (skipped,
// with the reason, where it is unreadable or no longer holds the line).

#include "isolation/testing/status_matchers.h"
#include "isolation/tmigr/host_check.h"

#include "absl/strings/str_cat.h"
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

namespace isolation::tmigr {
namespace {

using ::testing::HasSubstr;

constexpr char kLine2Cpus[] =
    "Timer migration: 1 hierarchy levels; 8 children per group; 1 crossnode level\n";

TEST(TmigrHostCheck, FindsTheBootLine) {
  absl::StatusOr<TmigrBootMessage> m =
      FindTmigrBootMessage(absl::StrCat("Linux version 6.18\n", kLine2Cpus, "clocksource: tsc\n"));
  ISOLATION_ASSERT_OK(m);
  EXPECT_EQ(m->levels, 1);
  EXPECT_EQ(m->children_per_group, 8);
  EXPECT_EQ(m->crossnode_level, 1);
  EXPECT_EQ(FindTmigrBootMessage("nothing here\n").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(FindTmigrBootMessage("Timer migration: setup failed\n").status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(TmigrHostCheck, AgreesWithTheKernelsSizing) {
  // 2 possible CPUs, one node (this 6.18 guest).
  HostCheck c =
      CheckHierarchyLevels(std::string(kLine2Cpus), std::string("0-1\n"), std::string("0\n"));
  EXPECT_EQ(c.verdict, HostVerdict::kAgree) << c.detail;
  EXPECT_EQ(c.model, "1 hierarchy levels; 8 children per group; 1 crossnode level");
  // 256 possible CPUs on 4 nodes: 64 per node -> 2 cpu levels, 1 node level.
  c = CheckHierarchyLevels(
      std::string("Timer migration: 3 hierarchy levels; 8 children per group; 2 crossnode level"),
      std::string("0-255\n"), std::string("0-3\n"));
  EXPECT_EQ(c.verdict, HostVerdict::kAgree) << c.detail;
  // No /sys/devices/system/node (no CONFIG_NUMA): one node.
  c = CheckHierarchyLevels(
      std::string("Timer migration: 3 hierarchy levels; 8 children per group; 3 crossnode level"),
      std::string("0-95\n"), absl::NotFoundError("absent"));
  EXPECT_EQ(c.verdict, HostVerdict::kAgree) << c.detail;
}

TEST(TmigrHostCheck, DisagreementAndMissingData) {
  HostCheck c =
      CheckHierarchyLevels(std::string(kLine2Cpus), std::string("0-63\n"), std::string("0\n"));
  EXPECT_EQ(c.verdict, HostVerdict::kDisagree);
  EXPECT_EQ(c.model, "2 hierarchy levels; 8 children per group; 2 crossnode level");
  c = CheckHierarchyLevels(
      absl::PermissionDeniedError("cannot open /dev/kmsg: Operation not permitted"),
      std::string("0-1\n"), std::string("0\n"));
  EXPECT_EQ(c.verdict, HostVerdict::kNotAvailable);
  EXPECT_THAT(c.detail, HasSubstr("/dev/kmsg"));
  c = CheckHierarchyLevels(std::string("booted\n"), std::string("0-1\n"), std::string("0\n"));
  EXPECT_EQ(c.verdict, HostVerdict::kNotAvailable);
  EXPECT_THAT(c.detail, HasSubstr("overwritten"));
  c = CheckHierarchyLevels(std::string(""), std::string("0\n"), std::string("0\n"));
  EXPECT_EQ(c.verdict, HostVerdict::kNotAvailable);
  EXPECT_THAT(c.detail, HasSubstr("1 possible CPU"));
}

TEST(TmigrHostCheck, RunningKernelBootLineMatchesTheModel) {
  const HostCheck c =
      CheckHierarchyLevels(ReadKernelLog(), ReadHostFile("/sys/devices/system/cpu/possible"),
                           ReadHostFile("/sys/devices/system/node/possible"));
  if (c.verdict == HostVerdict::kNotAvailable) GTEST_SKIP() << c.name << ": " << c.detail;
  EXPECT_EQ(c.verdict, HostVerdict::kAgree)
      << "model " << c.model << "\nkernel " << c.kernel << "\n"
      << c.detail;
}

}  // namespace
}  // namespace isolation::tmigr
