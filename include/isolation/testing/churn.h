// SPDX-License-Identifier: GPL-2.0-or-later
// -----------------------------------------------------------------------------
// testing/churn.h
// -----------------------------------------------------------------------------
//
// Random scheduling churn for tests on the model: a task body that sleeps,
// yields and runs in random steps, and hooks that send some wake-ups to a
// random CPU (migrations).  Both draw from the driver's seeded generators, so
// a simulator run with them is deterministic per seed.  Part of the installed
// conformance kit (`isolation::testing`).
//
// Kernel counterpart: none; they stand for the mixed sleep/run/yield load of
// a busy machine (hackbench-like churn) and for wake-up placement that moves
// tasks (select_task_rq() choosing another CPU).
//
// Thread-safety: ChurnBody's body is a task's, called by its driver; a
// RandomWakeupPlacer calls its driver's Random(), so use it on a driver whose
// hooks do not run concurrently (the simulator, replay).

#ifndef ISOLATION_TESTING_CHURN_H_
#define ISOLATION_TESTING_CHURN_H_

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "isolation/core/driver.h"

namespace isolation::testing {

// The mix of a churn body's steps: of every `choices` draws, one is a sleep
// below `max_sleep`, one a yield and the others a run of `min_run` plus
// less than `run_spread`.
struct ChurnShape {
  int choices = 4;  // >= 3
  Nanos max_sleep = 2 * kNsPerMs;
  Nanos min_run = 100 * kNsPerUs;
  Nanos run_spread = 3 * kNsPerMs;
};

// `steps` steps, then exit; each step drawn from the task's generator as
// `shape` says (by default: a sleep below 2 ms one time in four, a yield
// one in four, otherwise a run of 0.1 to 3.1 ms).
std::unique_ptr<TaskBody> ChurnBody(int steps, ChurnShape shape = {});

// A set of churn tasks: task i is "t<i>", starts on CPU i % num_cpus in
// group i % groups and exits after first_steps + i * step_increment steps.
struct ChurnTasks {
  int count = 20;
  int num_cpus = 8;
  int groups = 3;
  int first_steps = 50;
  int step_increment = 7;
};

// Spawns `tasks` on `driver` in order; their ids, or the first Spawn error.
absl::StatusOr<std::vector<TaskId>> SpawnChurnTasks(Driver& driver, const ChurnTasks& tasks);

// Every third wake-up (by the driver's Random()) goes to a random CPU below
// `num_cpus`; the others stay where the driver puts them.
class RandomWakeupPlacer : public Hooks {
 public:
  RandomWakeupPlacer(Driver& driver, int num_cpus) : driver_(driver), num_cpus_(num_cpus) {}
  int SelectTaskCpu(TaskId task, int prev_cpu, int waker_cpu, Nanos now) override;

 private:
  Driver& driver_;
  int num_cpus_;
};

}  // namespace isolation::testing

#endif  // ISOLATION_TESTING_CHURN_H_
