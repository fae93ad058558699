// SPDX-License-Identifier: GPL-2.0-or-later
// mm_cid_random_model.h (conformance kit, not installed): the random-schedule
// model the direct-API checks (mm_cid_direct.cc) drive.
//
// A random-schedule model: P CPUs, tasks of several mms with random
// affinities; events: switch, migrate, tick + return to user, housekeeping
// scans, fork, exit, exec, affinity change.  Every point is quiescent (one
// thread), so I1-I6 are checked after every event.  It also runs S2's
// per-ID counter: a task loads counter[id] at switch-in and stores +1 at
// switch-out, so two running tasks sharing an ID would lose an update.
//
// Kernel counterpart: none; it plays the scheduler around MmCid's entry
// points (context_switch(), set_task_cpu(), sched_tick(), fork, exit, exec,
// sched_setaffinity()) as kernel/sched/core.c calls mm_cid's.
//
// Thread-safety: none; one thread drives a model (that is what makes every
// point quiescent).

#ifndef ISOLATION_LIB_TESTING_MM_CID_RANDOM_MODEL_H_
#define ISOLATION_LIB_TESTING_MM_CID_RANDOM_MODEL_H_

#include <cstdint>
#include <memory>
#include <random>
#include <vector>

#include "isolation/mm_cid/switcher.h"
#include "isolation/testing/mm_cid.h"

namespace isolation::testing::mm_cid::internal {

struct RandomModel {
  int p;
  std::unique_ptr<MmCid> m;
  std::unique_ptr<DirectScanRunner> runner;
  std::mt19937_64 rng;
  struct T {
    bool alive = false;
    int cpu = 0;
    MmId mm = isolation::mm_cid::kNoMm;
    CpuMask affinity;
    int64_t pending = -1;  // counter value loaded at switch-in
  };
  std::vector<T> tasks;
  std::vector<TaskId> curr;
  std::vector<std::vector<int64_t>> counters;  // per mm, per ID
  int64_t increments = 0;
  Nanos now = 0;
  int next_task = 0;
  Violations violations;

  // Switches through MmCid::Switcher() (switcher.h) when set.
  std::unique_ptr<isolation::mm_cid::MmCidSwitcher> switcher;
  // The ID bound asserted at every allocation (switch-in, tick).
  std::unique_ptr<AllocationWatch> watch;

  RandomModel(int p_, const MmCidVariant& v, uint64_t seed, bool via_switcher = false);
  void SwitchHook(int cpu, TaskId prev, TaskId next);
  int Rand(int n) { return static_cast<int>(rng() % static_cast<uint64_t>(n)); }
  CpuMask RandomAffinity();
  void EnsureCounters(MmId mm);
  bool Spawn(MmId mm, TaskId parent);
  void SwitchOut(int cpu);
  void SwitchIn(TaskId next);
  void ContextSwitch(int cpu, TaskId next);
  std::vector<TaskId> QueuedOn(int cpu);
  void Step();
  int64_t CounterSum() const;
};

}  // namespace isolation::testing::mm_cid::internal

#endif  // ISOLATION_LIB_TESTING_MM_CID_RANDOM_MODEL_H_
