// SPDX-License-Identifier: GPL-2.0-or-later
// test_util.h (runtime tests): set-up shared by the Simulator and
// RealThreadDriver suites: a driver over a synthetic topology, and a task
// spec from a step function.

#ifndef ISOLATION_TEST_RUNTIME_TEST_UTIL_H_
#define ISOLATION_TEST_RUNTIME_TEST_UTIL_H_

#include <memory>
#include <string>
#include <utility>

#include "absl/functional/any_invocable.h"
#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "isolation/core/driver.h"
#include "isolation/core/isolation_config.h"
#include "isolation/core/topology.h"

namespace isolation::runtime_testing {

// DriverT::Create over Topology::FromSynthetic(topo) with isolcpus= and
// nohz_full= applied; a failing step fails the test.
template <typename DriverT, typename Options>
std::unique_ptr<DriverT> MakeDriverOn(const std::string& topo, const std::string& isolcpus,
                                      const std::string& nohz_full, Options options) {
  absl::StatusOr<Topology> t = Topology::FromSynthetic(topo);
  EXPECT_TRUE(t.ok()) << t.status();
  absl::StatusOr<IsolationConfig> iso = IsolationConfig::FromFlags(*t, isolcpus, nohz_full);
  EXPECT_TRUE(iso.ok()) << iso.status();
  absl::StatusOr<std::unique_ptr<DriverT>> d = DriverT::Create(*std::move(t), *std::move(iso), std::move(options));
  EXPECT_TRUE(d.ok()) << d.status();
  return *std::move(d);
}

// A task named `name`, started on `cpu`, whose steps `fn` returns.
inline TaskSpec Spec(const std::string& name, int cpu, absl::AnyInvocable<Step(TaskContext&)> fn) {
  TaskSpec spec;
  spec.name = name;
  spec.cpu = cpu;
  spec.body = MakeTaskBody(std::move(fn));
  return spec;
}

}  // namespace isolation::runtime_testing

#endif  // ISOLATION_TEST_RUNTIME_TEST_UTIL_H_
