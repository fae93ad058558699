// SPDX-License-Identifier: GPL-2.0-or-later
// Random scheduling churn for tests (testing/churn.h).

#include "isolation/testing/churn.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"

namespace isolation::testing {

std::unique_ptr<TaskBody> ChurnBody(int steps, ChurnShape shape) {
  const auto choices = static_cast<uint64_t>(std::max(shape.choices, 3));
  const auto max_sleep = static_cast<uint64_t>(std::max<Nanos>(shape.max_sleep, 1));
  const auto run_spread = static_cast<uint64_t>(std::max<Nanos>(shape.run_spread, 1));
  return MakeTaskBody([n = 0, steps, choices, max_sleep, run_spread,
                       min_run = shape.min_run](TaskContext& ctx) mutable {
    if (++n > steps) return Step::Exit();
    const uint64_t r = ctx.rng()();
    switch (r % choices) {
      case 0:
        return Step::Sleep(static_cast<Nanos>(r % max_sleep));
      case 1:
        return Step::Yield();
      default:
        return Step::Run(min_run + static_cast<Nanos>(r % run_spread));
    }
  });
}

absl::StatusOr<std::vector<TaskId>> SpawnChurnTasks(Driver& driver, const ChurnTasks& tasks) {
  std::vector<TaskId> ids;
  for (int i = 0; i < tasks.count; ++i) {
    TaskSpec t;
    t.name = absl::StrCat("t", i);
    t.cpu = i % std::max(tasks.num_cpus, 1);
    t.group = i % std::max(tasks.groups, 1);
    t.body = ChurnBody(tasks.first_steps + i * tasks.step_increment);
    absl::StatusOr<TaskId> id = driver.Spawn(std::move(t));
    if (!id.ok()) return id.status();
    ids.push_back(*id);
  }
  return ids;
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
