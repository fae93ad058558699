// SPDX-License-Identifier: GPL-2.0-or-later
// The oslat seed scenario (spec S24/S26) run on a driver, see
// tmigr_workload.h.

#include "isolation/tmigr/workload.h"

#include <algorithm>
#include <functional>
#include <memory>
#include <random>
#include <utility>

#include "absl/strings/str_cat.h"
#include "isolation/tmigr/timers.h"

namespace isolation::tmigr {
namespace {

// Ghost-timer detector (f55acb1e44f3): a CPU whose wake-up, once served,
// leaves it due again at once (its programmed wake-up clamped to now), wake
// after wake, has a stale wake-up no handler clears and would re-arm
// forever.  Healthy immediate re-arms do happen (idle entry of the last
// available CPU, see OslatWorkloadResult::immediate_rearms) and their count
// grows with the machine and the run, so the detector is a property of one
// CPU's wake-up: kGhostStreak served wake-ups in a row, each due again at once.
constexpr int kGhostStreak = 8;

// Busy (isolated) CPUs run one oslat task for this long per step: the end of
// a step is an event that does nothing, and a bounded step keeps the
// simulator's stale run-end events (one per tick) from piling up.
constexpr int64_t kOslatStepJiffies = 100;

// The workload's tracer: forwards to the caller's and answers Now() with the
// driver's time (the hierarchy's entry points take none).
class DriverTimeTracer final : public Tracer {
 public:
  DriverTimeTracer(Tracer* inner, const Driver* driver) : inner_(inner), driver_(driver) {}
  bool Wants(int cpu) const override { return inner_->Wants(cpu); }
  Nanos Now() const override { return driver_->Now(); }
  void CpuRuns(int cpu, Nanos ts, int32_t task, std::string_view name) override {
    inner_->CpuRuns(cpu, ts, task, name);
  }
  void Activity(int cpu, Nanos start, Nanos end, const char* category, std::string_view name,
                int32_t interrupted) override {
    inner_->Activity(cpu, start, end, category, name, interrupted);
  }
  void Instant(int cpu, Nanos ts, std::string_view name, TraceArgs args) override {
    inner_->Instant(cpu, ts, name, args);
  }
  void NameActivity(int cpu, const char* name) override { inner_->NameActivity(cpu, name); }

 private:
  Tracer* inner_;
  const Driver* driver_;
};

// The busy CPUs' ticks reach the hierarchy; nothing else of the driver's
// does (housekeeping CPUs tick at burst start and in their idle loop, which
// their task and timers model, see OslatWorkloadConfig).
class BusyTickHooks final : public Hooks {
 public:
  BusyTickHooks(TimerSystem& ts, const CpuMask& busy, Tracer* tracer)
      : ts_(ts), busy_(busy), tracer_(tracer) {}
  void OnTick(CpuContext& ctx, TaskId) override {
    const int c = ctx.cpu();
    if (!busy_.Test(c)) return;
    if (tracer_ != nullptr) tracer_->Instant(c, ctx.now(), "tick", {});
    ts_.Tick(c, ctx.now());
  }

 private:
  TimerSystem& ts_;
  const CpuMask& busy_;
  Tracer* tracer_;
};

}  // namespace

absl::StatusOr<OslatWorkloadResult> RunOslatWorkload(Driver& driver, const Options& options,
                                                     const OslatWorkloadConfig& cfg) {
  if (cfg.duration <= 0 || cfg.duration > kMaxOslatDuration) {
    return absl::InvalidArgumentError(absl::StrCat("oslat workload: duration ", cfg.duration,
                                                   " ns outside (0, ", kMaxOslatDuration, "]"));
  }
  if (cfg.jiffy <= 0) return absl::InvalidArgumentError(absl::StrCat("jiffy ", cfg.jiffy, " <= 0"));
  if (cfg.hk_burst <= 0 || cfg.hk_burst >= cfg.hk_period) {
    return absl::InvalidArgumentError(
        absl::StrCat("hk_burst ", cfg.hk_burst, " not in (0, hk_period)"));
  }
  if (cfg.global_period <= cfg.global_jitter || cfg.global_jitter < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("global_jitter ", cfg.global_jitter, " vs period ", cfg.global_period));
  }
  if (cfg.local_period <= 0 || cfg.check_every <= 0) {
    return absl::InvalidArgumentError("local_period and check_every must be > 0");
  }
  // Every period is a stream of events: bound how many fit in the run.
  const std::pair<const char*, Nanos> periods[] = {
      {"jiffy", cfg.jiffy},
      {"hk_period", cfg.hk_period},
      {"local_period", cfg.local_period},
      {"check_every", cfg.check_every},
      {"global_period - global_jitter", cfg.global_period - cfg.global_jitter}};
  for (const auto& [name, period] : periods) {
    if (cfg.duration / period > kMaxOslatPeriods) {
      return absl::InvalidArgumentError(absl::StrCat("oslat workload: ", name, " ", period,
                                                     " ns repeats more than ", kMaxOslatPeriods,
                                                     " times in duration ", cfg.duration));
    }
  }
  if (driver.tick_period() != cfg.jiffy) {
    return absl::InvalidArgumentError(absl::StrCat("oslat workload: jiffy ", cfg.jiffy,
                                                   " ns differs from the driver's tick period ",
                                                   driver.tick_period(), " ns (HZ = 1 s / jiffy)"));
  }
  if (driver.Now() != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("oslat workload: the driver already ran (time ", driver.Now(),
                     " ns); it needs a fresh one"));
  }
  const Topology& topology = driver.topology();
  const IsolationConfig& isolation = driver.isolation();
  auto ts_or = TimerSystem::Create(topology, options, TimerSystem::Config{cfg.jiffy});
  if (!ts_or.ok()) return ts_or.status();
  TimerSystem& ts = **ts_or;
  if (absl::Status s = ts.tmigr().SetIsolation(isolation); !s.ok()) return s;
  if (absl::Status s = ts.BootAll(); !s.ok()) return s;
  ts.tmigr().InitIsolation();

  const int n = topology.num_cpus();
  const CpuMask isolated = isolation.DomainIsolated();
  std::vector<int> hk, busy;
  for (int c = 0; c < n; ++c) (isolated.Test(c) ? busy : hk).push_back(c);

  // Tracing: the oslat thread of busy CPU c is task c, the housekeeping
  // burst of CPU c is task n + c; a timer callback lasts callback_cost from
  // the later of its run time and the end of the previous one on that CPU
  // (the model runs them at one instant); ticks cost nothing in the model
  // and are instants.
  DriverTimeTracer driver_tracer(cfg.tracer, &driver);
  Tracer* const tr = cfg.tracer != nullptr ? &driver_tracer : nullptr;
  std::vector<int32_t> running(static_cast<size_t>(n), -1);
  std::vector<Nanos> trace_busy_until(static_cast<size_t>(n), 0);
  if (tr != nullptr) {
    ts.tmigr().SetTracer(tr);
    for (int c : busy) {
      running[static_cast<size_t>(c)] = c;
      tr->CpuRuns(c, 0, c, "oslat");
    }
    for (int c : hk) tr->CpuRuns(c, 0, -1, {});
  }

  OslatWorkloadResult res;
  res.participation = options.participation;
  std::mt19937_64 rng(cfg.seed);
  std::vector<Nanos> phase(static_cast<size_t>(n), 0);
  for (int c : hk)
    phase[static_cast<size_t>(c)] =
        static_cast<Nanos>(rng() % static_cast<uint64_t>(cfg.hk_period));
  std::vector<char> need_global(static_cast<size_t>(n), 1), need_local(static_cast<size_t>(n), 1);
  // Per CPU: bumped at each burst start and kick, so a wake-up or idle tick
  // armed before it is void (the CPU left idle since).
  std::vector<uint64_t> gen(static_cast<size_t>(n), 0);

  ts.set_run_callback([&](const TimerRecord& t, int runner, Nanos now) {
    if (t.global) ++res.global_timers;
    if (tr != nullptr && tr->Wants(runner)) {
      const bool remote = t.owner != runner;
      Nanos& until = trace_busy_until[static_cast<size_t>(runner)];
      const Nanos start = std::max(now, until);
      until = start + cfg.callback_cost;
      tr->Activity(runner, start, until, kTraceTimer,
                   remote ? "timer_softirq (pulled)" : "timer_softirq",
                   running[static_cast<size_t>(runner)]);
      tr->Instant(runner, now, "tmigr.timer",
                  {{"owner", t.owner}, {"global", t.global ? 1 : 0}, {"remote", remote ? 1 : 0}});
    }
    if (isolated.Test(runner)) {
      ++res.timers_on_isolated;
      if (t.global) ++res.global_on_isolated;
      res.isolated_callback_ns += cfg.callback_cost;
      if (t.owner != runner) ++res.remote_on_isolated;
    }
    // The delayed work re-queues itself from its owner at the next burst.
    (t.global ? need_global : need_local)[static_cast<size_t>(t.owner)] = 1;
  });

  // The kick of ClearCpuAvailable/RunOnCpu wakes a CPU synchronously here.
  ts.set_kick_callback([&](int cpu) {
    ++gen[static_cast<size_t>(cpu)];
    if (tr != nullptr) tr->Instant(cpu, driver.Now(), "tmigr.kick", {});
    ts.ExitIdle(cpu, 0);
  });

  // A one-shot driver timer on `c` at `t` (within the run) that acts only
  // if `c` has not left idle since it was armed.
  auto arm = [&](Nanos t, int c, auto fn) {
    if (t >= cfg.duration) return;
    driver.ArmTimer(c, t, [fn, c, g = gen[static_cast<size_t>(c)], &gen](CpuContext& ctx) mutable {
      if (ctx.cpu() == c && g == gen[static_cast<size_t>(c)]) fn(ctx.now());
    });
  };

  // Per CPU: served wake-ups in a row that left the CPU due again at once.
  std::vector<int> ghost_streak(static_cast<size_t>(n), 0);
  auto next_burst_after = [&](int c, Nanos now) {
    const Nanos p = phase[static_cast<size_t>(c)];
    return p + ((now - p) / cfg.hk_period + 1) * cfg.hk_period;
  };
  // The idle CPU `c` wakes for its programmed event (tick_nohz_stop_tick()
  // programmed the clock event device), unless its next burst comes first.
  std::function<void(int, Nanos, Nanos, bool)> schedule_wake =
      [&](int c, Nanos now, Nanos next_burst, bool after_wake) {
        const size_t i = static_cast<size_t>(c);
        Nanos w = ts.ProgrammedWakeup(c);
        if (w > now || !after_wake) ghost_streak[i] = 0;
        if (w == kNanosMax || w >= next_burst) return;
        if (w <= now) {
          ++res.immediate_rearms;
          if (after_wake) {
            ++res.immediate_rearms_after_wake;
            if (++ghost_streak[i] == kGhostStreak) {
              ++res.ghost_timers;
              ++res.invariant_violations;
              if (res.first_violations.size() < 10) {
                res.first_violations.push_back(
                    absl::StrCat("t=", now, ": cpu ", c, " due again right after each of ",
                                 kGhostStreak, " wake-ups in a row (ghost timer)"));
              }
            }
            // A ghost wake-up is not re-armed again: the CPU sleeps until its
            // next burst (its timers then show up as late or lost).
            if (ghost_streak[i] >= kGhostStreak) return;
          }
          w = now + kNsPerUs;
        }
        arm(w, c, [&, c](Nanos t) {
          if (!ts.BaseIdle(c)) return;
          if (tr != nullptr) tr->Instant(c, t, "tmigr.idle_wakeup", {});
          ts.IdleWakeup(c, t);
          schedule_wake(c, t, next_burst_after(c, t), /*after_wake=*/true);
        });
      };
  // The housekeeping CPU `c` goes idle: the tick stops if the hierarchy lets
  // it, else it keeps running in the idle loop, a jiffy at a time.
  std::function<void(int, Nanos)> go_idle = [&](int c, Nanos now) {
    if (ts.EnterIdle(c, now)) {
      if (tr != nullptr) tr->Instant(c, now, "tick_stop", {});
      schedule_wake(c, now, next_burst_after(c, now), /*after_wake=*/false);
      return;
    }
    const Nanos tick = (now / cfg.jiffy + 1) * cfg.jiffy;
    if (tick >= next_burst_after(c, now)) return;
    arm(tick, c, [&, c](Nanos t) {
      if (tr != nullptr) tr->Instant(c, t, "tick", {});
      ts.Tick(c, t);  // the tick kept running in the idle loop
      go_idle(c, t);
    });
  };

  BusyTickHooks hooks(ts, isolated, tr);
  driver.AddHooks(&hooks);
  // Busy CPUs tick every jiffy (oslat without nohz_full), or never (S26:
  // nohz_full, one task: the tick stays stopped); housekeeping CPUs are
  // nohz idle.
  for (int c : busy)
    driver.SetTickMode(c, cfg.isolated_tick_stopped ? TickMode::kNohzFull : TickMode::kPeriodic);
  for (int c : hk) driver.SetTickMode(c, TickMode::kNohzIdle);
  for (int c : busy) {
    TaskSpec t;
    t.name = "oslat";
    t.cpu = c;
    t.affinity = CpuMask::Of(n, c);
    t.body = MakeTaskBody(
        [step = kOslatStepJiffies * cfg.jiffy](TaskContext&) { return Step::Run(step); });
    if (auto id = driver.Spawn(std::move(t)); !id.ok()) return id.status();
  }
  // A housekeeping task: it sleeps until its phase, then each period a burst
  // (tick, (re)arm its timers) of hk_burst and idle for the rest.
  for (int c : hk) {
    TaskSpec t;
    t.name = "hk_burst";
    t.cpu = c;
    t.affinity = CpuMask::Of(n, c);
    t.body =
        MakeTaskBody([&, c, started = false, in_burst = false](TaskContext& ctx) mutable -> Step {
          const size_t ci = static_cast<size_t>(c);
          const Nanos now = ctx.now();
          if (!started) {
            started = true;
            return Step::Sleep(phase[ci]);
          }
          if (in_burst) {  // burst end
            in_burst = false;
            if (tr != nullptr) {
              running[ci] = -1;
              tr->CpuRuns(c, now, -1, {});
            }
            go_idle(c, now);
            return Step::Sleep(cfg.hk_period - cfg.hk_burst);
          }
          in_burst = true;
          ++gen[ci];
          if (tr != nullptr) {
            if (ts.BaseIdle(c)) tr->Instant(c, now, "tick_restart", {});
            running[ci] = n + c;
            tr->CpuRuns(c, now, n + c, "hk_burst");
            tr->Instant(c, now, "tick", {});
          }
          ts.ExitIdle(c, now);
          ts.Tick(c, now);
          if (need_global[ci]) {
            const Nanos jitter =
                cfg.global_jitter == 0
                    ? 0
                    : static_cast<Nanos>(rng() % static_cast<uint64_t>(2 * cfg.global_jitter + 1)) -
                          cfg.global_jitter;
            ts.AddTimer(c, now + cfg.global_period + jitter, /*global=*/true, now);
            need_global[ci] = 0;
          }
          if (need_local[ci]) {
            ts.AddTimer(c, now + cfg.local_period, /*global=*/false, now);
            need_local[ci] = 0;
          }
          return Step::Run(cfg.hk_burst);
        });
    if (auto id = driver.Spawn(std::move(t)); !id.ok()) return id.status();
  }

  if (cfg.isolated_tick_stopped) {
    for (int c : busy) {
      ts.EnterIdle(c, 0);  // nohz_full: tick stopped while busy
      if (tr != nullptr) tr->Instant(c, 0, "tick_stop", {});
    }
  }
  // Invariant checks at quiescent points, on CPU 0's context.
  std::function<void(Nanos)> check = [&](Nanos now) {
    const std::vector<std::string> v = ts.CheckInvariants(now);
    res.invariant_violations += static_cast<int64_t>(v.size());
    for (const std::string& line : v) {
      if (res.first_violations.size() < 10)
        res.first_violations.push_back(absl::StrCat("t=", now, ": ", line));
    }
    if (now + cfg.check_every < cfg.duration) {
      driver.ArmTimer(0, now + cfg.check_every, [&](CpuContext& ctx) { check(ctx.now()); });
    }
  };
  if (cfg.check_every < cfg.duration) {
    driver.ArmTimer(0, cfg.check_every, [&](CpuContext& ctx) { check(ctx.now()); });
  }

  // Housekeeping CPUs are idle until their first burst (booted active, they
  // would otherwise hold migrator roles without ever ticking).
  for (int c : hk) {
    if (ts.EnterIdle(c, 0)) {
      if (tr != nullptr) tr->Instant(c, 0, "tick_stop", {});
      schedule_wake(c, 0, phase[static_cast<size_t>(c)], /*after_wake=*/false);
    }
  }
  if (absl::Status s = driver.RunFor(cfg.duration); !s.ok()) return s;
  // The model's times are the scripted ones only if the driver's kernel
  // activities take no time (a Simulator with zero base costs).
  for (int c = 0; c < n; ++c) {
    if (driver.Stats(c).kernel_ns != 0) {
      return absl::FailedPreconditionError(
          absl::StrCat("oslat workload: the driver spent ", driver.Stats(c).kernel_ns,
                       " ns of kernel time on cpu ", c,
                       "; the model needs a simulator with zero base costs (ZeroCostSimOptions)"));
    }
  }

  res.timers_total = ts.timers_run();
  res.timers_lost = ts.CountLost(cfg.duration - 10 * cfg.jiffy);
  res.max_lateness_ns = ts.max_lateness();
  for (const TimerRecord& t : ts.timers()) {
    if (t.run_at >= 0 && t.run_at - t.expires == res.max_lateness_ns) {
      res.latest_timer =
          absl::StrCat("owner ", t.owner, t.global ? " global" : " local", " expires ", t.expires,
                       " ran on ", t.run_cpu, " at ", t.run_at);
      break;
    }
  }
  for (int c = 0; c < n; ++c) {
    if (ts.runs_on(c) != 0) res.per_cpu_timers[c] = ts.runs_on(c);
  }
  const std::vector<int64_t> by_runner = ts.tmigr().RemoteExpiriesByRunner();
  for (int c = 0; c < n; ++c) {
    if (by_runner[static_cast<size_t>(c)] != 0)
      res.remote_by_runner[c] = by_runner[static_cast<size_t>(c)];
  }
  res.available = ts.tmigr().AvailableMask().ToString();
  return res;
}

}  // namespace isolation::tmigr
