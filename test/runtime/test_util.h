// SPDX-License-Identifier: GPL-2.0-or-later
// test_util.h (runtime tests): a task spec from a step function, shared by
// the Simulator and RealThreadDriver suites (the drivers themselves come from
// the kit's MachineBuilder, isolation/testing/machine.h).

#ifndef ISOLATION_TEST_RUNTIME_TEST_UTIL_H_
#define ISOLATION_TEST_RUNTIME_TEST_UTIL_H_

#include <string>
#include <utility>

#include "absl/functional/any_invocable.h"
#include "isolation/core/driver.h"

namespace isolation::runtime_testing {

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
