// SPDX-License-Identifier: GPL-2.0-or-later
// The real-thread model sized to the host (experiments/real_model.h): its
// shape for injected host sizes, the labels, and the refusal of an
// oversubscribed model unless allowed.

#include "experiments/real_model.h"

#include <string>

#include "gtest/gtest.h"
#include "isolation/testing/status_matchers.h"

namespace isolation::experiments {
namespace {

absl::StatusOr<RealThreadModel> ModelFor(const CommonOptions& options) {
  absl::StatusOr<Topology> topo = LoadTopology(options);
  if (!topo.ok()) return topo.status();
  absl::StatusOr<IsolationConfig> iso = LoadIsolation(options, *topo);
  if (!iso.ok()) return iso.status();
  return HostSizedModel(options, *topo, *iso);
}

TEST(RealModel, SeedOnTwoCpuHostIsOneHousekeepingOneIsolated) {
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto m, ModelFor(CommonOptions{.host_cpus = 2}));
  EXPECT_EQ(m.kind, RealModelKind::kHostSized);
  EXPECT_EQ(m.cpus(), 2);
  EXPECT_EQ(m.host_cpus, 2);
  EXPECT_EQ(m.housekeeping.ToString(), "0");
  EXPECT_EQ(m.isolated.ToString(), "1");
  EXPECT_EQ(m.isolation.isolcpus_domain().ToString(), "1");
  EXPECT_TRUE(m.isolation.nohz_full().Empty());
  EXPECT_FALSE(m.oversubscribed);
  EXPECT_EQ(m.row_prefix(), "");
  EXPECT_EQ(m.label,
            "real threads: host-sized model, 2 CPUs (housekeeping 0, isolated 1), 1:1 pinning on 2 "
            "of 2 host CPUs");
  const nlohmann::json j = m.Json();
  EXPECT_EQ(j["cpus"], 2);
  EXPECT_EQ(j["host_cpus"], 2);
  EXPECT_EQ(j["kind"], "host-sized");
  EXPECT_EQ(j["isolated"], "1");
  EXPECT_EQ(j["pinning"], "1:1");
  EXPECT_EQ(j["oversubscribed"], false);
  EXPECT_EQ(j["label"], m.label);
}

// The seeds' share of housekeeping CPUs (4 of 128) at host size: at least
// one, at least one isolated, rounded in between.
TEST(RealModel, SeedKeepsItsRolesAtHostSize) {
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto eight, ModelFor(CommonOptions{.host_cpus = 8}));
  EXPECT_EQ(eight.cpus(), 8);
  EXPECT_EQ(eight.housekeeping.ToString(), "0");
  EXPECT_EQ(eight.isolated.ToString(), "1-7");
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto many, ModelFor(CommonOptions{.host_cpus = 64}));
  EXPECT_EQ(many.cpus(), 64);
  EXPECT_EQ(many.housekeeping.ToString(), "0-1");  // round(64 x 4 / 128)
  EXPECT_EQ(many.isolated.ToString(), "2-63");
  // A host larger than the modelled machine: the modelled machine's size.
  auto big = ModelFor(CommonOptions{.topology = "pu:4", .isolcpus = "2-3", .host_cpus = 16});
  ISOLATION_ASSERT_OK(big);
  EXPECT_EQ(big->cpus(), 4);
  EXPECT_EQ(big->housekeeping.ToString(), "0-1");
  EXPECT_EQ(big->isolated.ToString(), "2-3");
  EXPECT_FALSE(big->oversubscribed);
}

TEST(RealModel, NoIsolationAndNohzFullCarryOver) {
  ISOLATION_ASSERT_OK_AND_ASSIGN(
      auto none, ModelFor(CommonOptions{.topology = "pu:16", .isolcpus = "", .host_cpus = 2}));
  EXPECT_EQ(none.housekeeping.ToString(), "0-1");
  EXPECT_TRUE(none.isolated.Empty());
  EXPECT_NE(none.label.find("isolated none"), std::string::npos) << none.label;
  ISOLATION_ASSERT_OK_AND_ASSIGN(
      auto nohz, ModelFor(CommonOptions{.nohz_full = "1-31,33-63,65-95,97-127", .host_cpus = 8}));
  EXPECT_EQ(nohz.isolation.nohz_full().ToString(), "1-7");
  EXPECT_NE(nohz.label.find("nohz_full"), std::string::npos) << nohz.label;
  // One host CPU: housekeeping only, nothing isolated to measure.
  auto one = ModelFor(CommonOptions{.host_cpus = 1});
  ISOLATION_ASSERT_OK(one);
  EXPECT_EQ(one->cpus(), 1);
  EXPECT_TRUE(one->isolated.Empty());
}

TEST(RealModel, OversubscribedIsRefusedUnlessAllowed) {
  auto refused = ModelFor(CommonOptions{.real_cpus = 8, .host_cpus = 2});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  const std::string msg(refused.status().message());
  for (const char* part :
       {"8 CPUs", "--real_cpus=8", "offers 2 usable CPUs", "--allow_oversubscribed"}) {
    EXPECT_NE(msg.find(part), std::string::npos) << part << " in " << msg;
  }
  ISOLATION_ASSERT_OK_AND_ASSIGN(
      auto allowed,
      ModelFor(CommonOptions{.real_cpus = 8, .allow_oversubscribed = true, .host_cpus = 2}));
  EXPECT_EQ(allowed.kind, RealModelKind::kRequested);
  EXPECT_TRUE(allowed.oversubscribed);
  EXPECT_EQ(allowed.cpus(), 8);
  EXPECT_EQ(allowed.isolated.ToString(), "1-7");
  EXPECT_EQ(allowed.row_prefix(), "OVERSUBSCRIBED ");
  EXPECT_EQ(allowed.label.rfind(
                "OVERSUBSCRIBED real threads: requested model (--real_cpus=8), 8 CPUs", 0),
            0u)
      << allowed.label;
  EXPECT_EQ(allowed.Json()["oversubscribed"], true);
  // A request the host can hold is not oversubscribed.
  auto fits = ModelFor(CommonOptions{.real_cpus = 2, .host_cpus = 2});
  ISOLATION_ASSERT_OK(fits);
  EXPECT_FALSE(fits->oversubscribed);
  EXPECT_EQ(fits->isolated.ToString(), "1");
}

TEST(RealModel, BadValuesNameThemselves) {
  auto negative = ModelFor(CommonOptions{.real_cpus = -1});
  ASSERT_FALSE(negative.ok());
  EXPECT_EQ(negative.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(negative.status().message()).find("--real_cpus=-1"), std::string::npos)
      << negative.status();
  auto host = ModelFor(CommonOptions{.host_cpus = -3});
  ASSERT_FALSE(host.ok());
  EXPECT_NE(std::string(host.status().message()).find("host_cpus=-3"), std::string::npos)
      << host.status();
}

TEST(RealModel, ThisHostHasAtLeastOneCpu) { EXPECT_GE(HostUsableCpus(), 1); }

}  // namespace
}  // namespace isolation::experiments
