// SPDX-License-Identifier: GPL-2.0-or-later
// Helpers shared by the idle_select tests: drive per-CPU state directly.

#ifndef ISOLATION_TEST_IDLE_SELECT_TEST_UTIL_H_
#define ISOLATION_TEST_IDLE_SELECT_TEST_UTIL_H_

#include <memory>
#include <utility>

#include "gtest/gtest.h"
#include "isolation/idle_select/idle_select.h"

namespace isolation::idle_select::testing {

// A CPU starts running a task: the idle task is switched out and one task
// is queued (put_prev_task_idle + enqueue).
inline void MakeBusy(IdleState& st, int cpu) {
  if (st.cpu_state(cpu).curr_is_idle.load()) st.IdleExit(cpu);
  st.cpu_state(cpu).nr_running.store(1);
  st.cpu_state(cpu).ttwu_pending.store(0);
}

// The CPU's queue empties and it enters the idle loop.
inline void MakeIdle(IdleState& st, int cpu) {
  st.cpu_state(cpu).nr_running.store(0);
  st.cpu_state(cpu).nr_sched_idle.store(0);
  st.cpu_state(cpu).ttwu_pending.store(0);
  st.IdleEnter(cpu);
}

// Busy + tick: a V1 mask has caught up with the busy state.
inline void MakeBusySettled(IdleState& st, int cpu) {
  MakeBusy(st, cpu);
  st.Tick(cpu);
}

inline std::unique_ptr<IdleState> MustCreate(absl::StatusOr<IdleTopology> topo, Options opt) {
  auto st = IdleState::Create(std::move(topo), opt);
  EXPECT_TRUE(st.ok()) << st.status();
  return st.ok() ? std::move(*st) : nullptr;
}

inline Options OptionsFor(Variant v) {
  Options o;
  o.variant = v;
  return o;
}

}  // namespace isolation::idle_select::testing

#endif  // ISOLATION_TEST_IDLE_SELECT_TEST_UTIL_H_
