// SPDX-License-Identifier: GPL-2.0-or-later
// The oslat seed scenario (spec S24/S26) as a discrete-event run, see
// tmigr_workload.h.

#include "isolation/tmigr/workload.h"

#include <algorithm>
#include <queue>
#include <random>
#include <utility>

#include "absl/strings/str_cat.h"
#include "isolation/tmigr/timers.h"

namespace isolation::tmigr {
namespace {

enum class EvType { kBusyTick, kBurstStart, kBurstEnd, kWake, kIdleTick, kCheck };

struct Ev {
  Nanos t;
  uint64_t seq;
  EvType type;
  int cpu;
  uint64_t gen;
  bool operator>(const Ev& o) const { return t != o.t ? t > o.t : seq > o.seq; }
};

// Ghost-timer detector (f55acb1e44f3): a CPU whose wake-up, once served,
// leaves it due again at once (its programmed wake-up clamped to now), wake
// after wake, has a stale wake-up no handler clears and would re-arm
// forever.  Healthy immediate re-arms do happen (idle entry of the last
// available CPU, see OslatWorkloadResult::immediate_rearms) and their count
// grows with the machine and the run, so the detector is a property of one
// CPU's wake-up: kGhostStreak served wake-ups in a row, each due again at once.
constexpr int kGhostStreak = 8;

// The workload's tracer: forwards to the caller's and answers Now() with the
// event loop's time (the hierarchy's entry points take none).
class LoopTracer final : public Tracer {
 public:
  LoopTracer(Tracer* inner, const Nanos* now) : inner_(inner), now_(now) {}
  bool Wants(int cpu) const override { return inner_->Wants(cpu); }
  Nanos Now() const override { return *now_; }
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
  const Nanos* now_;
};

}  // namespace

absl::StatusOr<OslatWorkloadResult> RunOslatWorkload(const Topology& topology,
                                                     const IsolationConfig& isolation,
                                                     const Options& options,
                                                     const OslatWorkloadConfig& cfg) {
  if (cfg.duration <= 0 || cfg.duration > kMaxOslatDuration) {
    return absl::InvalidArgumentError(
        absl::StrCat("oslat workload: duration ", cfg.duration, " ns outside (0, ", kMaxOslatDuration, "]"));
  }
  if (cfg.jiffy <= 0) return absl::InvalidArgumentError(absl::StrCat("jiffy ", cfg.jiffy, " <= 0"));
  if (cfg.hk_burst <= 0 || cfg.hk_burst >= cfg.hk_period) {
    return absl::InvalidArgumentError(absl::StrCat("hk_burst ", cfg.hk_burst, " not in (0, hk_period)"));
  }
  if (cfg.global_period <= cfg.global_jitter || cfg.global_jitter < 0) {
    return absl::InvalidArgumentError(absl::StrCat("global_jitter ", cfg.global_jitter, " vs period ", cfg.global_period));
  }
  if (cfg.local_period <= 0 || cfg.check_every <= 0) {
    return absl::InvalidArgumentError("local_period and check_every must be > 0");
  }
  // Every period is a stream of events: bound how many fit in the run.
  const std::pair<const char*, Nanos> periods[] = {{"jiffy", cfg.jiffy},
                                                   {"hk_period", cfg.hk_period},
                                                   {"local_period", cfg.local_period},
                                                   {"check_every", cfg.check_every},
                                                   {"global_period - global_jitter",
                                                    cfg.global_period - cfg.global_jitter}};
  for (const auto& [name, period] : periods) {
    if (cfg.duration / period > kMaxOslatPeriods) {
      return absl::InvalidArgumentError(absl::StrCat("oslat workload: ", name, " ", period, " ns repeats more than ",
                                                     kMaxOslatPeriods, " times in duration ", cfg.duration));
    }
  }
  if (isolation.num_cpus() != topology.num_cpus()) {
    return absl::InvalidArgumentError(absl::StrCat("isolation config for ", isolation.num_cpus(),
                                                   " cpus, topology has ", topology.num_cpus()));
  }
  auto ts_or = TimerSystem::Create(topology, options, TimerSystem::Config{cfg.jiffy});
  if (!ts_or.ok()) return ts_or.status();
  TimerSystem& ts = **ts_or;
  ts.tmigr().SetIsolation(isolation);
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
  Nanos trace_now = 0;
  LoopTracer loop_tracer(cfg.tracer, &trace_now);
  Tracer* const tr = cfg.tracer != nullptr ? &loop_tracer : nullptr;
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
  res.variant = options.variant;
  std::mt19937_64 rng(cfg.seed);
  std::vector<Nanos> phase(static_cast<size_t>(n), 0);
  for (int c : hk) phase[static_cast<size_t>(c)] = static_cast<Nanos>(rng() % static_cast<uint64_t>(cfg.hk_period));
  std::vector<char> need_global(static_cast<size_t>(n), 1), need_local(static_cast<size_t>(n), 1);
  std::vector<uint64_t> gen(static_cast<size_t>(n), 0);

  ts.set_run_callback([&](const TimerRecord& t, int runner, Nanos now) {
    if (t.global) ++res.global_timers;
    if (tr != nullptr && tr->Wants(runner)) {
      const bool remote = t.owner != runner;
      Nanos& until = trace_busy_until[static_cast<size_t>(runner)];
      const Nanos start = std::max(now, until);
      until = start + cfg.callback_cost;
      tr->Activity(runner, start, until, kTraceTimer, remote ? "timer_softirq (pulled)" : "timer_softirq",
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

  std::priority_queue<Ev, std::vector<Ev>, std::greater<Ev>> q;
  uint64_t seq = 0;
  auto push = [&](Nanos t, EvType type, int cpu, uint64_t g = 0) {
    if (t < cfg.duration) q.push(Ev{t, seq++, type, cpu, g});
  };
  // The kick of ClearCpuAvailable/RunOnCpu wakes a CPU synchronously here.
  ts.set_kick_callback([&](int cpu) {
    ++gen[static_cast<size_t>(cpu)];
    if (tr != nullptr) tr->Instant(cpu, trace_now, "tmigr.kick", {});
    ts.ExitIdle(cpu, 0);
  });

  if (!busy.empty()) {
    if (cfg.isolated_tick_stopped) {
      for (int c : busy) {
        ts.EnterIdle(c, 0);  // nohz_full: tick stopped while busy
        if (tr != nullptr) tr->Instant(c, 0, "tick_stop", {});
      }
    } else {
      push(cfg.jiffy, EvType::kBusyTick, -1);
    }
  }
  for (int c : hk) push(phase[static_cast<size_t>(c)], EvType::kBurstStart, c);
  push(cfg.check_every, EvType::kCheck, -1);

  // Per CPU: served wake-ups in a row that left the CPU due again at once.
  std::vector<int> ghost_streak(static_cast<size_t>(n), 0);
  auto schedule_wake = [&](int c, Nanos now, Nanos next_burst, bool after_wake) {
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
            res.first_violations.push_back(absl::StrCat("t=", now, ": cpu ", c, " due again right after each of ",
                                                        kGhostStreak, " wake-ups in a row (ghost timer)"));
          }
        }
        // A ghost wake-up is not re-armed again: the CPU sleeps until its
        // next burst (its timers then show up as late or lost).
        if (ghost_streak[i] >= kGhostStreak) return;
      }
      w = now + kNsPerUs;
    }
    push(w, EvType::kWake, c, gen[i]);
  };
  auto next_burst_after = [&](int c, Nanos now) {
    const Nanos p = phase[static_cast<size_t>(c)];
    return p + ((now - p) / cfg.hk_period + 1) * cfg.hk_period;
  };

  // Housekeeping CPUs are idle until their first burst (booted active, they
  // would otherwise hold migrator roles without ever ticking).
  for (int c : hk) {
    if (ts.EnterIdle(c, 0)) {
      if (tr != nullptr) tr->Instant(c, 0, "tick_stop", {});
      schedule_wake(c, 0, phase[static_cast<size_t>(c)], /*after_wake=*/false);
    }
  }

  while (!q.empty()) {
    const Ev ev = q.top();
    q.pop();
    const Nanos now = ev.t;
    trace_now = now;
    const size_t ci = static_cast<size_t>(std::max(ev.cpu, 0));
    switch (ev.type) {
      case EvType::kBusyTick:
        for (int c : busy) {
          if (tr != nullptr) tr->Instant(c, now, "tick", {});
          ts.Tick(c, now);
        }
        push(now + cfg.jiffy, EvType::kBusyTick, -1);
        break;
      case EvType::kBurstStart: {
        ++gen[ci];
        if (tr != nullptr) {
          if (ts.BaseIdle(ev.cpu)) tr->Instant(ev.cpu, now, "tick_restart", {});
          running[ci] = n + ev.cpu;
          tr->CpuRuns(ev.cpu, now, n + ev.cpu, "hk_burst");
          tr->Instant(ev.cpu, now, "tick", {});
        }
        ts.ExitIdle(ev.cpu, now);
        ts.Tick(ev.cpu, now);
        if (need_global[ci]) {
          const Nanos jitter = cfg.global_jitter == 0
                                   ? 0
                                   : static_cast<Nanos>(rng() % static_cast<uint64_t>(2 * cfg.global_jitter + 1)) -
                                         cfg.global_jitter;
          ts.AddTimer(ev.cpu, now + cfg.global_period + jitter, /*global=*/true, now);
          need_global[ci] = 0;
        }
        if (need_local[ci]) {
          ts.AddTimer(ev.cpu, now + cfg.local_period, /*global=*/false, now);
          need_local[ci] = 0;
        }
        push(now + cfg.hk_burst, EvType::kBurstEnd, ev.cpu);
        push(now + cfg.hk_period, EvType::kBurstStart, ev.cpu);
        break;
      }
      case EvType::kBurstEnd:
      case EvType::kIdleTick:
        if (ev.type == EvType::kIdleTick) {
          if (ev.gen != gen[ci]) break;
          if (tr != nullptr) tr->Instant(ev.cpu, now, "tick", {});
          ts.Tick(ev.cpu, now);  // the tick kept running in the idle loop
        } else if (tr != nullptr) {
          running[ci] = -1;
          tr->CpuRuns(ev.cpu, now, -1, {});
        }
        if (ts.EnterIdle(ev.cpu, now)) {
          if (tr != nullptr) tr->Instant(ev.cpu, now, "tick_stop", {});
          schedule_wake(ev.cpu, now, next_burst_after(ev.cpu, now), /*after_wake=*/false);
        } else {
          const Nanos tick = (now / cfg.jiffy + 1) * cfg.jiffy;
          if (tick < next_burst_after(ev.cpu, now)) push(tick, EvType::kIdleTick, ev.cpu, gen[ci]);
        }
        break;
      case EvType::kWake:
        if (ev.gen != gen[ci] || !ts.BaseIdle(ev.cpu)) break;
        if (tr != nullptr) tr->Instant(ev.cpu, now, "tmigr.idle_wakeup", {});
        ts.IdleWakeup(ev.cpu, now);
        schedule_wake(ev.cpu, now, next_burst_after(ev.cpu, now), /*after_wake=*/true);
        break;
      case EvType::kCheck: {
        const std::vector<std::string> v = ts.CheckInvariants(now);
        res.invariant_violations += static_cast<int64_t>(v.size());
        for (const std::string& line : v) {
          if (res.first_violations.size() < 10) res.first_violations.push_back(absl::StrCat("t=", now, ": ", line));
        }
        push(now + cfg.check_every, EvType::kCheck, -1);
        break;
      }
    }
  }

  res.timers_total = ts.timers_run();
  res.timers_lost = ts.CountLost(cfg.duration - 10 * cfg.jiffy);
  res.max_lateness_ns = ts.max_lateness();
  for (const TimerRecord& t : ts.timers()) {
    if (t.run_at >= 0 && t.run_at - t.expires == res.max_lateness_ns) {
      res.latest_timer = absl::StrCat("owner ", t.owner, t.global ? " global" : " local", " expires ", t.expires,
                                      " ran on ", t.run_cpu, " at ", t.run_at);
      break;
    }
  }
  for (int c = 0; c < n; ++c) {
    if (ts.runs_on(c) != 0) res.per_cpu_timers[c] = ts.runs_on(c);
  }
  const std::vector<int64_t> by_runner = ts.tmigr().RemoteExpiriesByRunner();
  for (int c = 0; c < n; ++c) {
    if (by_runner[static_cast<size_t>(c)] != 0) res.remote_by_runner[c] = by_runner[static_cast<size_t>(c)];
  }
  res.available = ts.tmigr().AvailableMask().ToString();
  return res;
}

}  // namespace isolation::tmigr
