// SPDX-License-Identifier: GPL-2.0-or-later
//
// A simulated CPU's own state (sim_internal.h): its boot, the tick (kTick
// events at multiples of the period; stopping it makes the pending one
// stale), the nohz decisions, idle entry and exit with the idle entry's
// window (SimOptions::idle_entry_cost, kIdleCommit), and the return to user
// mode.  The sequences are the CPU state machine both drivers share
// (cpu_state.h); this file is the simulator's policy for it: the virtual
// clock, the tick generation, avg_idle, the deterministic trace record.
//
// Kernel counterpart: kernel/sched/core.c sched_tick(), kernel/sched/idle.c
// do_idle(), kernel/time/tick-sched.c (tick_nohz_*).
//
// Thread safety: the simulator's one thread.

#include <algorithm>

#include "absl/base/attributes.h"
#include "absl/base/optimization.h"
#include "runtime/cpu_state.h"
#include "runtime/sim_internal.h"

namespace isolation {

// Every online CPU starts idle; its tick runs or stops per its mode.
void Simulator::Impl::Boot() {
  for (Cpu& c : cpus) {
    if (!c.online) continue;
    CpuScope scope(this, c);
    c.clock = std::max(event_time, c.busy_until);
    cpu_state::Boot(*this, c);
    c.busy_until = c.clock;
  }
}

void Simulator::Impl::StopTick(Cpu& c) { cpu_state::StopTick(*this, c); }

void Simulator::Impl::RestartTick(Cpu& c) { cpu_state::RestartTick(*this, c); }

void Simulator::Impl::UpdateTick(Cpu& c) { cpu_state::UpdateTick(*this, c); }

void Simulator::Impl::ReturnToUser(Cpu& c, TaskId task) { cpu_state::ReturnToUser(*this, c, task); }

void Simulator::Impl::EnterIdle(Cpu& c) { cpu_state::EnterIdle(*this, c); }

void Simulator::Impl::ExitIdle(Cpu& c) { cpu_state::ExitIdle(*this, c); }

Nanos Simulator::Impl::CpuNow(const Cpu& c) const { return c.clock; }

bool Simulator::Impl::MarkIdle(Cpu& c, Nanos now) {
  if (c.idle_state) return false;
  c.idle_state = true;
  c.idle_since = now;
  return true;
}

bool Simulator::Impl::MarkBusy(Cpu& c, Nanos now) {
  if (!c.idle_state) return false;
  c.idle_state = false;
  c.entering_idle = false;
  c.stats.idle_ns += now - c.idle_since;
  // update_avg(&rq->avg_idle, delta), capped at 2 * migration cost as
  // ttwu_do_activate() does.
  c.avg_idle += (now - c.idle_since - c.avg_idle) / 8;
  c.avg_idle = std::min(c.avg_idle, 2 * options.newidle_migration_cost);
  return true;
}

bool Simulator::Impl::TickStopped(const Cpu& c) const { return c.tick_stopped; }

bool Simulator::Impl::CpuOnline(const Cpu& c) const { return c.online; }

void Simulator::Impl::MarkTickStopped(Cpu& c) {
  c.tick_stopped = true;
  ++c.tick_gen;  // the pending tick goes stale
  ++c.stats.tick_stops;
}

void Simulator::Impl::MarkTickRunning(Cpu& c) {
  c.tick_stopped = false;
  ++c.tick_gen;
}

void Simulator::Impl::ArmNextTick(Cpu& c) { PostNextTick(c); }

void Simulator::Impl::RecordCpuEvent(const Cpu& c, const char* kind, int64_t a, int64_t b) {
  Trace(c.clock, c.id, kind, a, b);
}

Tracer* Simulator::Impl::active_tracer() const { return tracer; }

// The end of the idle entry's window: the re-check (every hook must agree),
// then either the queued task runs or the CPU sleeps with it queued.
void Simulator::Impl::HandleIdleCommit(Cpu& c, Nanos time) {
  CpuScope scope(this, c);
  c.clock = std::max(time, c.busy_until);
  c.entering_idle = false;
  bool recheck = true;
  for (Hooks* h : hooks) recheck = h->IdleRecheck(c.id, c.clock) && recheck;
  if (!c.rq.empty()) {
    if (recheck) {
      FinishCpuEvent(c);
      return;
    }
    ++lost_wakeups;
    Trace(c.clock, c.id, kSimEvLostWakeup, c.rq.Front(), c.rq.size());
  }
  c.busy_until = std::max(c.busy_until, c.clock);
}

void Simulator::Impl::HandleTick(Cpu& c, Nanos time) {
  CpuScope scope(this, c);
  const TaskId interrupted = BeginActivity(c, time);
  ++c.stats.ticks;
  Trace(c.clock, c.id, kSimEvTick, c.curr, 0);
  Charge(c, options.tick_cost);
  {
    Context ctx(this, c.id, c.curr);
    for (Hooks* h : hooks) h->OnTick(ctx, c.curr);
  }
  if (!c.tick_stopped) PostNextTick(c);
  EndActivity(c, time, interrupted, ActivityKind::kTick);
}

}  // namespace isolation
