// SPDX-License-Identifier: GPL-2.0-or-later
// -----------------------------------------------------------------------------
// tmigr_workload.h
// -----------------------------------------------------------------------------
//
// The oslat seed scenario (spec S24/S26) run on a driver (the deterministic
// simulator) over TimerSystem + TimerMigration: domain-isolated CPUs run an
// oslat task that never sleeps (active forever, the driver's tick every
// jiffy, as under oslat; with isolated_tick_stopped a nohz_full tick that
// stays stopped); housekeeping CPUs run a task with a short burst every
// period and are idle otherwise, each keeping one global timer (a
// delayed-work analogue, re-armed by its owner with jitter) and one local
// timer.  A housekeeping CPU ticks the hierarchy at burst start; going idle
// it stops its tick if the hierarchy lets it and arms a driver timer for its
// programmed wake-up, else it keeps ticking each jiffy (driver timers) until
// it can.  Reports who ran which timers.
//
// The driver must be fresh (never run) with a tick period of `jiffy` and
// kernel activities that take no modelled time, so the event times are the
// scripted ones: a Simulator made with ZeroCostSimOptions(1 s / jiffy)
// (sim.h).  The workload adds its own hooks and tasks to it and runs it for
// `duration`.
//
// Kernel counterpart: the measurement of the v6.19 series cover letter
// ("timers: Exclude isolated cpus from timer migration", [V15]): oslat on
// isolcpus=1-31,33-63,65-95,97-127 of a 128-CPU machine, 62 s.
//
// Thread safety: RunOslatWorkload is a pure function of its arguments and
// the driver's seed (single-threaded on the simulator); concurrent calls on
// different drivers are independent.

#ifndef ISOLATION_TMIGR_WORKLOAD_H_
#define ISOLATION_TMIGR_WORKLOAD_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "isolation/core/clock.h"
#include "isolation/core/driver.h"
#include "isolation/core/isolation_config.h"
#include "isolation/tmigr/tmigr.h"
#include "isolation/core/topology.h"
#include "isolation/core/tracer.h"

namespace isolation::tmigr {

// Longest run accepted (virtual time): every jiffy of it is an event on every
// isolated CPU, so a "forever" duration would be a hang, not a measurement.
inline constexpr Nanos kMaxOslatDuration = 24 * 3600 * kNsPerSec;
// Likewise each period (jiffy, hk_period, local_period, check_every, global
// period minus jitter) may repeat at most this often within `duration`.
inline constexpr int64_t kMaxOslatPeriods = 100'000'000;

struct OslatWorkloadConfig {
  Nanos duration = 62 * kNsPerSec;  // (0, kMaxOslatDuration]
  Nanos jiffy = kNsPerMs;           // HZ=1000
  // Housekeeping burst period.  Spec S24 says 1 ms; 10 ms ("mostly idle")
  // is the default because a 1 ms period can never make anybody pull, in the
  // kernel as here: tmigr is used only if the next event is more than one
  // jiffy ahead (__get_next_timer_interrupt: time_after(nextevt, basej + 1)).
  // The 4 ms global timer usually is, so it IS handed over at idle entry,
  // but an idle window that starts in jiffy basej ends (0.9 ms later) before
  // jiffy basej + 2: a timer due inside it is due at basej + 1 and keeps the
  // tick running (its owner runs it), and a handed-over one (>= basej + 2)
  // is due only after the next burst has re-activated its owner, whose event
  // is then ignored.  Pulls need an idle window longer than one jiffy.
  Nanos hk_period = 10 * kNsPerMs;
  Nanos hk_burst = 100 * kNsPerUs;       // housekeeping burst length
  Nanos global_period = 4 * kNsPerMs;    // delayed-work analogue
  Nanos global_jitter = 500 * kNsPerUs;  // +- uniform
  Nanos local_period = 100 * kNsPerMs;
  Nanos callback_cost = 20 * kNsPerUs;  // modelled callback time (latency proxy)
  Nanos check_every = 10 * kNsPerMs;    // invariant check period (quiescent points)
  uint64_t seed = 1;
  // S26: treat the isolated CPUs as nohz_full (tick stopped while busy, so
  // they are idle in the hierarchy).  The IsolationConfig must agree.
  bool isolated_tick_stopped = false;
  // Optional trace sink (not owned): each CPU's timeline (the oslat thread
  // on isolated CPUs, housekeeping bursts and idle periods), ticks and tick
  // stop/restart, every timer callback as a "timer" slice of callback_cost
  // on the CPU that ran it (named "timer_softirq (pulled)" when it ran
  // another CPU's timer, with args.interrupted when a task was running),
  // and the hierarchy's migrator hand-overs and remote expiries.
  Tracer* tracer = nullptr;
};

struct OslatWorkloadResult {
  std::string participation;       // Options::participation of the run
  int64_t timers_total = 0;        // timer callbacks run
  int64_t timers_on_isolated = 0;  // callbacks run on a domain-isolated CPU
  int64_t remote_on_isolated = 0;  // of those, other CPUs' timers pulled by an isolated CPU
  int64_t global_timers = 0;       // callbacks of global timers (the rest are pinned local timers)
  int64_t global_on_isolated = 0;  // global timer callbacks run on a domain-isolated CPU
  int64_t timers_lost = 0;         // expired (before the end minus a grace) but never run
  Nanos max_lateness_ns = 0;
  Nanos isolated_callback_ns = 0;  // modelled callback time spent on isolated CPUs
  int64_t invariant_violations = 0;
  std::vector<std::string> first_violations;  // up to 10
  std::map<int, int64_t> per_cpu_timers;      // cpu -> callbacks run there (non-zero only)
  std::map<int, int64_t> remote_by_runner;    // cpu -> remote expiries it performed
  std::string available;                      // cpulist of available CPUs at the end
  // Idle wake-ups already due when armed (re-armed 1 us later).  Expected at
  // idle entry of the last available CPU, whose deactivation returns a root
  // expiry that passed during its own burst (the model ticks a bursting CPU
  // only at burst start); never after a wake-up, where a ghost-timer re-arm
  // (f55acb1e44f3) would show.
  // Their number grows with the machine and the run, so it is not a failure
  // by itself.
  int64_t immediate_rearms = 0;
  // Of those, the ones right after a served wake-up.
  int64_t immediate_rearms_after_wake = 0;
  // Ghost timers (counted in invariant_violations too): a CPU due again at
  // once after each of 8 served wake-ups in a row.
  int64_t ghost_timers = 0;
  std::string latest_timer;  // the latest timer: owner, runner, expiry, run time
};

// Runs the scenario on `driver` (its topology and isolation config).
// Errors: bad config values (named), a duration beyond kMaxOslatDuration or
// a period repeating more than kMaxOslatPeriods times in it, a jiffy other
// than the driver's tick period, a driver that already ran
// (FailedPrecondition), one that charged kernel time (FailedPrecondition:
// not a zero-cost simulator).
absl::StatusOr<OslatWorkloadResult> RunOslatWorkload(Driver& driver, const Options& options,
                                                     const OslatWorkloadConfig& config);

}  // namespace isolation::tmigr

#endif  // ISOLATION_TMIGR_WORKLOAD_H_
