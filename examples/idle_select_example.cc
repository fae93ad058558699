// SPDX-License-Identifier: GPL-2.0-or-later
//
// idle_select example: plug a wakeup selector into your own run-queue
// harness.  The harness below is a toy: 16 CPUs in one LLC, a few of them
// busy; it reports idle transitions and ticks to IdleState (what do_idle()
// and sched_tick() do in the kernel) and asks the state's selector where each
// waking task should go, printing the choice and how many CPUs were probed.
//
//   ./idle_select_example [selector]     (any registered name: V0, V1, V4, ...)
//   ./idle_select_example --list         (every registered selector)

#include <cstdio>
#include <string>

#include "isolation/idle_select/idle_select.h"

using isolation::idle_select::IdleState;
using isolation::idle_select::IdleTopology;
using isolation::idle_select::Options;
using isolation::idle_select::Selection;
using isolation::idle_select::WakeContext;
using isolation::idle_select::WakeTask;

int main(int argc, char** argv) {
  const std::string name = argc > 1 ? argv[1] : "V1";
  if (name == "--list") {
    for (const auto& row : isolation::idle_select::ListVariants()) {
      std::printf("%-14s %s%s\n", row.name.c_str(),
                  row.negative_control ? "[negative control] " : "", row.description.c_str());
    }
    return 0;
  }
  Options options;
  options.variant = name;  // a registered selector (selector.h: SelectorRegistry())
  auto created =
      IdleState::Create(IdleTopology::Uniform(/*llcs=*/1, /*cores_per_llc=*/16), options);
  if (!created.ok()) {
    std::fprintf(stderr, "%s\n", std::string(created.status().message()).c_str());
    return 2;
  }
  IdleState& state = **created;

  // Your harness: CPUs 0-11 run tasks, 12-15 are idle.
  for (int cpu = 0; cpu < 12; ++cpu) {
    state.IdleExit(cpu);         // put_prev_task_idle()
    state.SetNrRunning(cpu, 1);  // one task queued
    state.Tick(cpu);             // sched_tick(): V1 clears the bit
  }
  // The periodic balance feeds SIS_UTIL: 12 of 16 CPUs busy = 75 %.
  if (absl::Status s = state.UpdateIdleCpuScan(0, 12 * 1024); !s.ok()) {
    std::fprintf(stderr, "%s\n", std::string(s.message()).c_str());
    return 1;
  }
  std::printf("selector %s, SIS_UTIL budget nr_idle_scan=%d\n", state.selector_name().c_str(),
              state.nr_idle_scan(0));

  // Ten wakeups from busy CPUs; the harness enqueues the task where told.
  for (int i = 0; i < 10; ++i) {
    WakeTask task;
    task.prev_cpu = (i * 5) % 12;  // last ran on a busy CPU
    WakeContext ctx;
    ctx.target = i % 12;  // the waker's CPU
    ctx.waker_cpu = ctx.target;
    const Selection s = state.Select(task, ctx);
    const int cpu = s.cpu >= 0 ? s.cpu : task.prev_cpu;
    std::printf("wakeup %d: target %2d prev %2d -> cpu %2d  %-8s probes %d stale %d%s\n", i,
                ctx.target, task.prev_cpu, cpu, s.idle_found() ? "idle" : "fallback", s.probes,
                s.stale_hits, s.claimed ? " (claimed)" : "");
    // Enqueue there: the CPU leaves idle if it was idle.
    if (state.cpu(cpu).curr_is_idle) state.IdleExit(cpu);
    state.Enqueue(cpu);
    // Every third wakeup a task on CPU 12+ finishes and its CPU idles again.
    if (i % 3 == 2) {
      for (int c = 12; c < 16; ++c) {
        if (!state.cpu(c).curr_is_idle) {
          state.SetNrRunning(c, 0);
          state.IdleEnter(c);  // do_idle()
          break;
        }
      }
    }
  }
  return 0;
}
