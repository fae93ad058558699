// SPDX-License-Identifier: GPL-2.0-or-later
// Random scheduling churn for tests (testing/churn.h).

#include "isolation/testing/churn.h"

#include <cstdint>
#include <memory>

namespace isolation::testing {

std::unique_ptr<TaskBody> ChurnBody(int steps) {
  return MakeTaskBody([n = 0, steps](TaskContext& ctx) mutable {
    if (++n > steps) return Step::Exit();
    const uint64_t r = ctx.rng()();
    switch (r % 4) {
      case 0:
        return Step::Sleep(static_cast<Nanos>(r % (2 * kNsPerMs)));
      case 1:
        return Step::Yield();
      default:
        return Step::Run(static_cast<Nanos>(100 * kNsPerUs + r % (3 * kNsPerMs)));
    }
  });
}

int RandomWakeupPlacer::SelectTaskCpu(TaskId task, int prev_cpu, int waker_cpu, Nanos now) {
  (void)task;
  (void)prev_cpu;
  (void)waker_cpu;
  (void)now;
  const uint64_t r = driver_.Random();
  return r % 3 == 0 ? static_cast<int>((r >> 8) % static_cast<uint64_t>(num_cpus_)) : -1;
}

}  // namespace isolation::testing
