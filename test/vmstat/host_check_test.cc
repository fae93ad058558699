// SPDX-License-Identifier: GPL-2.0-or-later
// vmstat thresholds against /proc/zoneinfo (vmstat/host_check.h): parsing,
// the normal / pressure / disagree verdicts on canned text, and the check
// on the running kernel (skipped, with the reason, where it is not exposed).

#include "isolation/testing/status_matchers.h"
#include "isolation/vmstat/host_check.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <bit>
#include <string>

#include "absl/strings/str_replace.h"

namespace isolation::vmstat {
namespace {

using ::testing::HasSubstr;

// Abridged from a 2-CPU 6.18 guest: DMA (3840 managed pages -> 4), Normal
// (720896 -> 2*fls(2)*(1+fls(22)) = 24), and an unpopulated Movable zone.
constexpr char kZoneinfo[] = R"(Node 0, zone      DMA
  per-node stats
      nr_inactive_anon 165098
  pages free     3840
        boost    0
        min      43
        low      53
        high     63
        spanned  4095
        present  3998
        managed  3840
        cma      0
        protection: (0, 3018, 5834, 5834, 5834)
      nr_free_pages 3840
  pagesets
    cpu: 0
              count:    0
              high:     0
              batch:    1
  vm stats threshold: 4
    cpu: 1
              count:    0
              high:     0
              batch:    1
  vm stats threshold: 4
  node_unreclaimable:  0
  start_pfn:           1
Node 0, zone   Normal
  pages free     100000
        min      11000
        low      13750
        managed  720896
  pagesets
    cpu: 0
              count:    17
  vm stats threshold: 24
    cpu: 1
              count:    3
  vm stats threshold: 24
  start_pfn:           1048576
Node 0, zone  Movable
  pages free     0
        min      32
        low      32
        managed  0
        protection: (0, 0, 0, 0, 0)
)";

TEST(Zoneinfo, ParsesZonesWatermarksAndPerCpuThresholds) {
  ISOLATION_ASSERT_OK_AND_ASSIGN(std::vector<ZoneinfoZone> zones, ParseZoneinfo(kZoneinfo));
  ASSERT_EQ(zones.size(), 3u);
  EXPECT_EQ(zones[0].zone, "DMA");
  EXPECT_EQ(zones[0].managed, 3840);
  EXPECT_EQ(zones[0].min, 43);
  EXPECT_EQ(zones[0].low, 53);
  ASSERT_EQ(zones[0].thresholds.size(), 2u);
  EXPECT_EQ(zones[0].thresholds[1], std::make_pair(1, 4));
  EXPECT_EQ(zones[1].zone, "Normal");
  EXPECT_EQ(zones[1].thresholds[0], std::make_pair(0, 24));
  EXPECT_TRUE(zones[2].thresholds.empty());
  EXPECT_FALSE(ParseZoneinfo("Node x, zone DMA\n").ok());
  EXPECT_FALSE(ParseZoneinfo("Node 0, zone DMA\n  vm stats threshold: 4\n").ok());  // no cpu yet
}

TEST(Zoneinfo, NormalThresholdsAgree) {
  const HostCheck c = CheckZoneThresholds(std::string(kZoneinfo), std::string("0-1\n"), 12);
  EXPECT_EQ(c.verdict, HostVerdict::kAgree) << c.detail;
  EXPECT_EQ(c.model, "node0/DMA 4; node0/Normal 24");
  EXPECT_EQ(c.kernel, "node0/DMA cpu0=4,cpu1=4; node0/Normal cpu0=24,cpu1=24");
}

TEST(Zoneinfo, WrongCpuCountOrThresholdDisagrees) {
  // 4 online CPUs: 2*fls(4)*... = 6 for DMA, 36 for Normal; the file says 4 and 24.
  const HostCheck c = CheckZoneThresholds(std::string(kZoneinfo), std::string("0-3\n"), 12);
  EXPECT_EQ(c.verdict, HostVerdict::kDisagree);
  EXPECT_THAT(c.detail, HasSubstr("node0/DMA: kernel thresholds differ from normal 6"));
  const std::string edited = absl::StrReplaceAll(
      kZoneinfo, {{"vm stats threshold: 24\n    cpu: 1", "vm stats threshold: 23\n    cpu: 1"}});
  EXPECT_EQ(CheckZoneThresholds(edited, std::string("0-1\n"), 12).verdict, HostVerdict::kDisagree);
}

// set_pgdat_percpu_threshold(): while kswapd reclaims, every CPU of the node's
// zones carries calculate_pressure_threshold() = max(1, (low - min) / cpus).
TEST(Zoneinfo, PressureThresholdsAgreeAndSaySo) {
  const std::string pressure =
      absl::StrReplaceAll(kZoneinfo, {{"vm stats threshold: 24", "vm stats threshold: 125"},
                                      {"vm stats threshold: 4", "vm stats threshold: 5"}});
  const HostCheck c = CheckZoneThresholds(pressure, std::string("0-1\n"), 12);
  EXPECT_EQ(c.verdict, HostVerdict::kAgree) << c.detail;
  EXPECT_THAT(c.detail, HasSubstr("node0/DMA: pressure threshold 5"));       // (53 - 43) / 2
  EXPECT_THAT(c.detail, HasSubstr("node0/Normal: pressure threshold 125"));  // min(125, 2750 / 2)
}

TEST(Zoneinfo, MissingDataIsNotAvailable) {
  EXPECT_EQ(
      CheckZoneThresholds(absl::NotFoundError("cannot open /proc/zoneinfo"), std::string("0\n"), 12)
          .verdict,
      HostVerdict::kNotAvailable);
  EXPECT_EQ(
      CheckZoneThresholds(std::string(kZoneinfo), absl::PermissionDeniedError("no"), 12).verdict,
      HostVerdict::kNotAvailable);
  const HostCheck up =
      CheckZoneThresholds(std::string("Node 0, zone DMA\n  managed 10\n"), std::string("0\n"), 12);
  EXPECT_EQ(up.verdict, HostVerdict::kNotAvailable);
  EXPECT_THAT(up.detail, HasSubstr("CONFIG_SMP"));
}

TEST(Zoneinfo, RunningKernelThresholdsFollowTheFormula) {
  const int page_shift = std::countr_zero(static_cast<unsigned long>(sysconf(_SC_PAGESIZE)));
  const HostCheck c = CheckZoneThresholds(
      ReadHostFile("/proc/zoneinfo"), ReadHostFile("/sys/devices/system/cpu/online"), page_shift);
  if (c.verdict == HostVerdict::kNotAvailable) GTEST_SKIP() << c.name << ": " << c.detail;
  EXPECT_EQ(c.verdict, HostVerdict::kAgree)
      << "model " << c.model << "\nkernel " << c.kernel << "\n"
      << c.detail;
}

}  // namespace
}  // namespace isolation::vmstat
