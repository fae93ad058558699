// SPDX-License-Identifier: GPL-2.0-or-later
// Driver adapter for the timer-migration hierarchy, see tmigr_hooks.h.

#include "isolation/tmigr/hooks.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace isolation::tmigr {
namespace {
// The CPU context of the hook currently running on this thread, so a timer
// callback can spend its modelled cost (Driver::SpendKernelTime: charged in
// the simulator, busy on real threads).
thread_local CpuContext* t_ctx = nullptr;

struct ContextScope {
  explicit ContextScope(CpuContext& ctx) : prev(t_ctx) { t_ctx = &ctx; }
  ~ContextScope() { t_ctx = prev; }
  CpuContext* prev;
};
}  // namespace

TmigrHooks::TmigrHooks(TimerSystem& ts, Config config) : ts_(ts), config_(config) {
  for (int c = 0; c < ts.num_cpus(); ++c) per_cpu_.push_back(std::make_unique<PerCpu>());
  ts_.set_run_callback([this](const TimerRecord& t, int runner, Nanos now) {
    PerCpu& r = cpu(runner);
    r.callbacks.fetch_add(1, std::memory_order_relaxed);
    if (t.owner != runner) r.remote_callbacks.fetch_add(1, std::memory_order_relaxed);
    if (t.global) cpu(t.owner).global_pending.store(false, std::memory_order_relaxed);
    if (tracer_ != nullptr) {
      // run_timer_softirq() on `runner`; a pulled timer names the activity.
      const bool remote = t.owner != runner;
      tracer_->Instant(
          runner, now, "tmigr.timer",
          {{"owner", t.owner}, {"global", t.global ? 1 : 0}, {"remote", remote ? 1 : 0}});
      tracer_->NameActivity(runner, remote ? "timer_softirq (pulled)" : "timer_softirq");
    }
    CpuContext* ctx = t_ctx;
    if (ctx == nullptr || config_.callback_cost <= 0) return;
    ctx->driver().SpendKernelTime(*ctx, config_.callback_cost);
  });
}

void TmigrHooks::OnStart(Driver& driver) {
  if (driver.num_cpus() != ts_.num_cpus()) {
    active_ = false;
    driver_cpus_ = driver.num_cpus();
    return;
  }
  driver_ = &driver;
  tracer_ = driver.tracer();
  ts_.tmigr().SetTracer(tracer_);
}

absl::Status TmigrHooks::status() const {
  if (active_) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat("tmigr hooks: the driver has ", driver_cpus_,
                                                 " cpus, the timer system ", ts_.num_cpus(),
                                                 "; events are ignored"));
}

void TmigrHooks::OnTick(CpuContext& ctx, TaskId) {
  if (!active_) return;
  ContextScope scope(ctx);
  if (!ts_.BaseIdle(ctx.cpu())) ts_.Tick(ctx.cpu(), ctx.now());
}

// tick_nohz_stop_tick(): hand over to the hierarchy, program the wake-up.
void TmigrHooks::TryStopTick(CpuContext& ctx) {
  const int c = ctx.cpu();
  if (ts_.EnterIdle(c, ctx.now())) {
    ArmWake(ctx.driver(), ctx.cpu(), ctx.now());
    return;
  }
  // An event at most a jiffy away: the kernel keeps the tick; model it with a
  // one-shot timer at the next jiffy that ticks and retries.
  const Nanos jiffy = ctx.driver().tick_period();
  const Nanos at = (ctx.now() / jiffy + 1) * jiffy;
  cpu(c).wake_timer = ctx.driver().ArmTimer(c, at, [this, c](CpuContext& w) { OnWakeTimer(w, c); });
}

void TmigrHooks::ArmWake(Driver& driver, int c, Nanos now) {
  const Nanos w = ts_.ProgrammedWakeup(c);
  if (w == kNanosMax) {
    cpu(c).wake_timer = kNoTimer;
    return;
  }
  cpu(c).wake_timer =
      driver.ArmTimer(c, std::max(w, now), [this, c](CpuContext& x) { OnWakeTimer(x, c); });
}

void TmigrHooks::OnWakeTimer(CpuContext& ctx, int c) {
  // The drivers run an offline CPU's timers on a housekeeping CPU; the
  // kernel tears a dead CPU's tick and wake-up down instead, so a wake-up
  // armed for `c` must not act as another CPU's.
  if (ctx.cpu() != c) return;
  ContextScope scope(ctx);
  cpu(c).wake_timer = kNoTimer;
  if (!ctx.driver().TickStopped(c)) return;  // the tick restarted meanwhile
  if (ts_.BaseIdle(c)) {
    ts_.IdleWakeup(c, ctx.now());
    ArmWake(ctx.driver(), ctx.cpu(), ctx.now());
  } else {
    ts_.Tick(c, ctx.now());
    TryStopTick(ctx);
  }
}

void TmigrHooks::OnTickStop(CpuContext& ctx) {
  if (!active_) return;
  ContextScope scope(ctx);
  TryStopTick(ctx);
}

void TmigrHooks::OnTickRestart(CpuContext& ctx) {
  if (!active_) return;
  ContextScope scope(ctx);
  const int c = ctx.cpu();
  if (cpu(c).wake_timer != kNoTimer) {
    ctx.driver().CancelTimer(cpu(c).wake_timer);
    cpu(c).wake_timer = kNoTimer;
  }
  ts_.ExitIdle(c, ctx.now());
}

void TmigrHooks::OnCpuOnline(int c, Nanos now) {
  if (active_) (void)ts_.Online(c, now);
}

void TmigrHooks::OnCpuOffline(int c, Nanos now) {
  if (!active_) return;
  int target = -1;
  for (int t = 0; t < ts_.num_cpus(); ++t) {
    if (t != c && driver_ != nullptr && driver_->topology().IsOnline(t)) {
      target = t;
      break;
    }
  }
  if (target < 0 || !ts_.Offline(c, target, now).ok()) return;
  // timers_dead_cpu() enqueues the dead CPU's timers on `target`.  The
  // kernel's target is the CPU running the teardown, which is awake; ours
  // may be idle with its tick stopped and its wake-up programmed for its own
  // timers, so re-arm that wake-up for the merged queue, as enqueueing on an
  // idle nohz CPU does (trigger_dyntick_cpu() -> wake_up_nohz_cpu()).  The
  // drivers deliver hotplug with every CPU context parked, so touching the
  // target's wake timer here races with nothing.
  if (driver_ == nullptr || !driver_->TickStopped(target) || !ts_.BaseIdle(target)) return;
  if (cpu(target).wake_timer != kNoTimer) driver_->CancelTimer(cpu(target).wake_timer);
  ArmWake(*driver_, target, now);
}

std::unique_ptr<TaskBody> TmigrHooks::MakeHousekeepingTask(int c, Nanos period, Nanos burst,
                                                           Nanos global_period) {
  if (c < 0 || c >= ts_.num_cpus() || period < 1 || burst < 0 || global_period < 1) return nullptr;
  return MakeTaskBody(
      [this, c, period, burst, global_period, phase = 0](TaskContext& ctx) mutable -> Step {
        if (phase++ % 2 == 1) return Step::Sleep(std::max<Nanos>(period - burst, 1));
        ctx.Syscall([&](CpuContext& k) {
          ContextScope scope(k);
          if (!cpu(c).global_pending.exchange(true, std::memory_order_relaxed)) {
            ts_.AddTimer(k.cpu(), SaturatingAdd(k.now(), global_period), /*global=*/true, k.now());
          }
        });
        return Step::Run(burst);
      });
}

int64_t TmigrHooks::callbacks_on(int c) const {
  if (c < 0 || static_cast<size_t>(c) >= per_cpu_.size()) return 0;
  return per_cpu_[static_cast<size_t>(c)]->callbacks.load(std::memory_order_relaxed);
}
int64_t TmigrHooks::remote_callbacks_on(int c) const {
  if (c < 0 || static_cast<size_t>(c) >= per_cpu_.size()) return 0;
  return per_cpu_[static_cast<size_t>(c)]->remote_callbacks.load(std::memory_order_relaxed);
}

}  // namespace isolation::tmigr
