// SPDX-License-Identifier: GPL-2.0-or-later
// `isolab hostcheck` (experiments/hostcheck.h): every check on a fake
// /proc + /sys tree and kernel log, the text and JSON forms, and the real
// host, where every check that is available must agree.

#include "experiments/hostcheck.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

namespace isolation::experiments {
namespace {

using ::testing::HasSubstr;

std::string FakeHost() {
  const std::string root = ::testing::TempDir() + "/hostcheck_root";
  EXPECT_EQ(std::system(("mkdir -p " + root + "/proc " + root + "/sys/devices/system/cpu " + root +
                         "/sys/devices/system/node")
                            .c_str()),
            0);
  std::ofstream(root + "/proc/cmdline") << "quiet isolcpus=domain,2-3 nohz_full=2-3\n";
  std::ofstream(root + "/sys/devices/system/cpu/possible") << "0-3\n";
  std::ofstream(root + "/sys/devices/system/cpu/online") << "0-3\n";
  std::ofstream(root + "/sys/devices/system/cpu/isolated") << "2-3\n";
  std::ofstream(root + "/sys/devices/system/cpu/nohz_full") << "2-3\n";
  std::ofstream(root + "/sys/devices/system/node/possible") << "0\n";
  // 4 online CPUs, 720896 managed pages: 2*fls(4)*(1+fls(22)) = 36.
  std::ofstream(root + "/proc/zoneinfo")
      << "Node 0, zone   Normal\n        min      100\n        low      120\n"
         "        managed  720896\n  pagesets\n    cpu: 0\n  vm stats threshold: 36\n"
         "    cpu: 3\n  vm stats threshold: 36\n";
  // 4 CPUs, 1 node: order_base_2(4) = 2 -> one level.
  std::ofstream(root + "/kmsg") << "6,10,1000,-;Timer migration: 1 hierarchy levels; 8 children "
                                   "per group; 1 crossnode level\n";
  return root;
}

TEST(Hostcheck, EveryCheckOnAFakeHostAgrees) {
  const std::string root = FakeHost();
  const std::vector<HostCheck> checks = RunHostChecks({root, root + "/kmsg", 12, /*mm_cid=*/false});
  ASSERT_EQ(checks.size(), 4u);
  for (const HostCheck& c : checks)
    EXPECT_EQ(c.verdict, HostVerdict::kAgree) << c.name << ": " << c.detail;
  const std::string text = HostChecksText(checks, "Linux test");
  EXPECT_THAT(text, HasSubstr("agree: vmstat: per-CPU stat thresholds"));
  EXPECT_THAT(text, HasSubstr("4 agree, 0 disagree, 0 not available"));
  const nlohmann::json j = HostChecksJson(checks, "Linux test");
  EXPECT_EQ(j["agree"], 4);
  EXPECT_EQ(j["checks"][2]["verdict"], "agree");
  EXPECT_EQ(j["checks"][3]["model"], "1 hierarchy levels; 8 children per group; 1 crossnode level");
}

TEST(Hostcheck, AnEmptyHostIsNotAvailableEverywhereWithReasons) {
  const std::string root = ::testing::TempDir() + "/hostcheck_empty";
  const std::vector<HostCheck> checks = RunHostChecks({root, root + "/kmsg", 12, /*mm_cid=*/false});
  for (const HostCheck& c : checks) {
    EXPECT_EQ(c.verdict, HostVerdict::kNotAvailable) << c.name;
    EXPECT_THAT(c.detail, HasSubstr(root)) << c.name;  // names the missing file
  }
  EXPECT_THAT(HostChecksText(checks, "x"), HasSubstr("0 agree, 0 disagree, 4 not available"));
}

TEST(Hostcheck, RunningKernelAgreesWhereverItExposesTheTruth) {
  const std::vector<HostCheck> checks = RunHostChecks();
  int available = 0;
  for (const HostCheck& c : checks) {
    if (c.verdict == HostVerdict::kNotAvailable) continue;
    ++available;
    EXPECT_EQ(c.verdict, HostVerdict::kAgree)
        << c.name << "\n model " << c.model << "\n kernel " << c.kernel << "\n " << c.detail;
  }
  if (available == 0)
    GTEST_SKIP() << "the host exposes none of the data:\n" << HostChecksText(checks, "host");
}

}  // namespace
}  // namespace isolation::experiments
