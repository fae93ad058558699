// SPDX-License-Identifier: GPL-2.0-or-later
// -----------------------------------------------------------------------------
// cpu_state.h (internal to lib/runtime)
// -----------------------------------------------------------------------------
//
// The CPU state machine both drivers play: entering and leaving idle,
// stopping and restarting the tick, the return to user mode and a CPU's
// boot, each as the one sequence of state changes, trace records and hook
// calls the kernel makes at that point.  The simulator (sim_cpu.cc) and the
// real-thread driver (real_driver.cc) run these same templates; what differs
// between them -- the time source, the locking of the idle state and the
// statistics, the simulator's deterministic trace, how the next tick is
// armed -- is the engine's, reached through a small policy:
//
//   typename E::Cpu, typename E::Context   the engine's per-CPU state (with
//                                 an `id`) and its CpuContext, constructed
//                                 as Context(&engine, cpu, task);
//   std::vector<Hooks*> hooks     the attached hooks, in call order;
//   Nanos CpuNow(Cpu&)            the CPU's time (virtual clock / host clock);
//   bool MarkIdle(Cpu&, Nanos)    sets the idle state from `now`; false when
//                                 it was set already;
//   bool MarkBusy(Cpu&, Nanos)    clears it, accounting the idle time; false
//                                 when it was clear already;
//   bool TickStopped(const Cpu&), bool CpuOnline(const Cpu&),
//   bool WantTickStopped(Cpu&)    the tick state and the tick-stop policy's
//                                 inputs (sched::WantTickStopped);
//   void MarkTickStopped(Cpu&)    the tick is stopped (counted as a stop);
//   void MarkTickRunning(Cpu&)    the tick runs again (not yet armed);
//   void ArmNextTick(Cpu&)        the next tick falls due after the CPU's
//                                 time, read after the hooks ran;
//   void RecordCpuEvent(Cpu&, const char* kind, int64_t a, int64_t b)
//                                 the simulator's trace record (TraceHash);
//                                 the real-thread driver records nothing;
//   Tracer* active_tracer()       the trace sink (tracer.h), nullptr: off.
//
// Templates rather than virtual calls: these run on every idle transition
// and every return to user mode, and each engine inlines its own policy.
// Nothing here allocates or takes a lock; MarkIdle/MarkBusy/MarkTickStopped
// take the real-thread driver's run-queue lock inside the policy.
//
// Kernel counterpart: kernel/sched/idle.c do_idle() (idle entry and exit),
// kernel/time/tick-sched.c tick_nohz_stop_tick(), tick_nohz_restart(),
// tick_nohz_idle_exit() and the tick_nohz_*_update_tick() decisions, and
// kernel/entry/common.c exit_to_user_mode_prepare().
//
// Thread safety: every function runs on the CPU it names, in that CPU's
// context (the simulator's one thread, or the CPU's own thread in the
// real-thread driver; its hotplug path while the threads are parked).  Hooks
// for one CPU are therefore never called concurrently.

#ifndef ISOLATION_RUNTIME_CPU_STATE_H_
#define ISOLATION_RUNTIME_CPU_STATE_H_

#include <cstdint>

#include "absl/base/attributes.h"
#include "absl/base/optimization.h"
#include "isolation/core/clock.h"
#include "isolation/core/driver.h"
#include "isolation/core/tracer.h"
#include "runtime/sched_model.h"

namespace isolation::cpu_state {

// The kinds of the simulator's trace records made here (SimTraceEvent::kind).
inline constexpr char kEvIdleEnter[] = "idle_enter";
inline constexpr char kEvIdleExit[] = "idle_exit";
inline constexpr char kEvTickStop[] = "tick_stop";
inline constexpr char kEvTickRestart[] = "tick_restart";
inline constexpr char kEvReturnToUser[] = "rtu";

// Out of line and cold: with tracing off a site costs one pointer test.
ABSL_ATTRIBUTE_NOINLINE ABSL_ATTRIBUTE_COLD inline void TraceInstant(Tracer* tracer, int cpu,
                                                                     Nanos ts, const char* name) {
  tracer->Instant(cpu, ts, name, {});
}

// exit_to_user_mode_prepare(): `task` resumes in user mode on `c`.
template <typename E>
void ReturnToUser(E& e, typename E::Cpu& c, TaskId task) {
  e.RecordCpuEvent(c, kEvReturnToUser, task, 0);
  typename E::Context ctx(&e, c.id, task);
  for (Hooks* h : e.hooks) h->OnReturnToUser(ctx, task);
}

// The tick changed state: its trace record and instant (both named `kind`),
// then every hook's `notify`.
template <typename E, typename Notify>
void TickChanged(E& e, typename E::Cpu& c, const char* kind, Notify notify) {
  e.RecordCpuEvent(c, kind, 0, 0);
  if (Tracer* tr = e.active_tracer(); ABSL_PREDICT_FALSE(tr != nullptr))
    TraceInstant(tr, c.id, e.CpuNow(c), kind);
  typename E::Context ctx(&e, c.id, kIdleTask);
  for (Hooks* h : e.hooks) notify(*h, ctx);
}

// tick_nohz_stop_tick()
template <typename E>
void StopTick(E& e, typename E::Cpu& c) {
  e.MarkTickStopped(c);
  TickChanged(e, c, kEvTickStop, [](Hooks& h, CpuContext& ctx) { h.OnTickStop(ctx); });
}

// tick_nohz_restart(): the next tick is armed after the hooks, from the
// CPU's time then (they may have spent some).
template <typename E>
void RestartTick(E& e, typename E::Cpu& c) {
  e.MarkTickRunning(c);
  TickChanged(e, c, kEvTickRestart, [](Hooks& h, CpuContext& ctx) { h.OnTickRestart(ctx); });
  e.ArmNextTick(c);
}

// tick_nohz_full_update_tick() / tick_nohz_idle_stop_tick() decisions.
template <typename E>
void UpdateTick(E& e, typename E::Cpu& c) {
  sched::UpdateTick(
      e.WantTickStopped(c), e.TickStopped(c), [&] { StopTick(e, c); }, [&] { RestartTick(e, c); });
}

// do_idle() entry.
template <typename E>
void EnterIdle(E& e, typename E::Cpu& c) {
  const Nanos now = e.CpuNow(c);
  if (!e.MarkIdle(c, now)) return;
  e.RecordCpuEvent(c, kEvIdleEnter, 0, 0);
  for (Hooks* h : e.hooks) h->OnIdleEnter(c.id, now);
}

// do_idle() exit; tick_nohz_idle_exit() restarts a stopped tick.
template <typename E>
void ExitIdle(E& e, typename E::Cpu& c) {
  const Nanos now = e.CpuNow(c);
  if (!e.MarkBusy(c, now)) return;
  e.RecordCpuEvent(c, kEvIdleExit, 0, 0);
  for (Hooks* h : e.hooks) h->OnIdleExit(c.id, now);
  if (e.TickStopped(c) && e.CpuOnline(c)) RestartTick(e, c);
}

// An online CPU boots idle, its tick running unless the tick-stop policy
// stops it at once.
template <typename E>
void Boot(E& e, typename E::Cpu& c) {
  if (Tracer* tr = e.active_tracer(); ABSL_PREDICT_FALSE(tr != nullptr))
    tr->CpuRuns(c.id, e.CpuNow(c), kIdleTask, {});
  EnterIdle(e, c);
  e.MarkTickRunning(c);
  if (e.WantTickStopped(c)) {
    StopTick(e, c);
  } else {
    e.ArmNextTick(c);
  }
}

}  // namespace isolation::cpu_state

#endif  // ISOLATION_RUNTIME_CPU_STATE_H_
