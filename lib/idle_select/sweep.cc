// SPDX-License-Identifier: GPL-2.0-or-later
// MeasureSelect(): the selection sweep behind `isolab idle` and the bench.

#include <algorithm>
#include <random>
#include <vector>

#include "absl/strings/str_cat.h"
#include "isolation/core/clock.h"
#include "isolation/idle_select/hooks.h"

namespace isolation::idle_select {
namespace {

void SetBusy(IdleState& st, int cpu) {
  if (st.cpu(cpu).curr_is_idle) st.IdleExit(cpu);
  st.SetNrRunning(cpu, 1);
}
void SetIdle(IdleState& st, int cpu) {
  st.SetNrRunning(cpu, 0);
  st.SetWakePending(cpu, false);
  st.IdleEnter(cpu);
  st.TickStop(cpu);
}

double Median(std::vector<Nanos>& v) {
  if (v.empty()) return 0;
  auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  return static_cast<double>(*mid);
}

}  // namespace

absl::StatusOr<SweepResult> MeasureSelect(const SweepParams& p) {
  if (p.llc_cpus < 2 || p.llc_cpus > 4096 || p.busy_pct < 0 || p.busy_pct > 100 || p.samples < 1) {
    return absl::InvalidArgumentError(absl::StrCat("idle sweep: llc_cpus=", p.llc_cpus,
                                                   " busy_pct=", p.busy_pct, " samples=", p.samples,
                                                   " (need 2..4096 CPUs, 0..100 %, >= 1 sample)"));
  }
  Options o;
  o.variant = p.variant;
  auto created = IdleState::Create(IdleTopology::Uniform(1, p.llc_cpus), o);
  if (!created.ok()) return created.status();
  IdleState& st = **created;
  std::mt19937_64 rng(p.seed);
  const int n = p.llc_cpus;
  const int nbusy = (n * p.busy_pct + 50) / 100;
  std::vector<int> order(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) order[static_cast<size_t>(i)] = i;
  std::shuffle(order.begin(), order.end(), rng);
  std::vector<int> busy(order.begin(), order.begin() + nbusy);
  std::vector<int> idle(order.begin() + nbusy, order.end());
  for (int c : busy) SetBusy(st, c);
  for (int c : idle) SetIdle(st, c);
  for (int c = 0; c < n; ++c) st.Tick(c);
  // SIS_UTIL follows the busy share (a busy CPU contributes 1024).
  if (absl::Status s = st.UpdateIdleCpuScan(0, int64_t{nbusy} * kSchedCapacityScale); !s.ok())
    return s;

  // Per-selection timing with the cycle counter (the VM's CLOCK_MONOTONIC
  // has a coarse step); cycles are converted to ns with a calibration
  // against CLOCK_MONOTONIC over the whole run.  Counter overhead: median of
  // back-to-back reads, subtracted.
  std::vector<Nanos> overhead(1001);
  for (auto& v : overhead) {
    const uint64_t c0 = CycleCounter();
    v = static_cast<Nanos>(CycleCounter() - c0);
  }
  const double counter_overhead = Median(overhead);
  const Nanos mono_start = MonotonicNanos();
  const uint64_t cyc_start = CycleCounter();

  SweepResult r;
  r.budget = st.nr_idle_scan(0);
  // Selections are timed in batches of kBatch with the state unchanged
  // inside a batch (the counter steps too coarsely on this VM to time one
  // call); churn and ticks happen between batches.  V4's give-back of a
  // claim (IdleRefresh) is inside the timed batch.
  constexpr int kBatch = 16;
  struct Wake {
    int target, prev;
  };
  std::vector<Nanos> times;
  times.reserve(static_cast<size_t>(p.samples / kBatch + 1));
  int64_t probes = 0, stale = 0, with_idle = 0, found = 0;
  Wake wakes[kBatch];
  Selection results[kBatch];
  for (int i = 0; i < p.samples; i += kBatch) {
    for (int k = i; k < i + kBatch; ++k) {
      if (p.flip_every > 0 && k % p.flip_every == 0 && !busy.empty() && !idle.empty()) {
        const size_t bi = static_cast<size_t>(rng() % busy.size());
        const size_t ii = static_cast<size_t>(rng() % idle.size());
        std::swap(busy[bi], idle[ii]);
        SetIdle(st, idle[ii]);
        SetBusy(st, busy[bi]);
      }
      if (p.tick_every > 0 && k % p.tick_every == 0) {
        for (int c : busy) st.Tick(c);  // idle CPUs have their tick stopped
      }
    }
    const int batch = std::min(kBatch, p.samples - i);
    for (int k = 0; k < batch; ++k) {
      // The waker runs on a busy CPU (target = waker CPU); prev is random.
      wakes[k].target = busy.empty() ? static_cast<int>(rng() % static_cast<uint64_t>(n))
                                     : busy[static_cast<size_t>(rng() % busy.size())];
      wakes[k].prev = static_cast<int>(rng() % static_cast<uint64_t>(n));
    }
    const uint64_t t0 = CycleCounter();
    for (int k = 0; k < batch; ++k) {
      WakeTask task;
      task.prev_cpu = wakes[k].prev;
      WakeContext ctx;
      ctx.target = wakes[k].target;
      ctx.waker_cpu = wakes[k].target;
      results[k] = st.Select(task, ctx);
      if (results[k].claimed) st.IdleRefresh(results[k].cpu);  // give the idle period back
    }
    const uint64_t t1 = CycleCounter();
    times.push_back(static_cast<Nanos>(t1 - t0) / batch);
    for (int k = 0; k < batch; ++k) {
      const Selection& s = results[k];
      probes += s.probes;
      stale += s.stale_hits;
      if (!idle.empty()) {
        ++with_idle;
        if (s.idle_found() && s.cpu >= 0 && (s.claimed || st.AvailableIdleCpu(s.cpu))) ++found;
      }
    }
  }
  r.samples = p.samples;
  r.probes_mean = static_cast<double>(probes) / p.samples;
  r.stale_hits_mean = static_cast<double>(stale) / p.samples;
  const double mono = static_cast<double>(MonotonicNanos() - mono_start);
  const double cycles = static_cast<double>(CycleCounter() - cyc_start);
  const double ns_per_cycle = cycles > 0 ? mono / cycles : 1.0;
  r.select_ns_median = std::max(0.0, (Median(times) - counter_overhead / kBatch) * ns_per_cycle);
  r.found_pct =
      with_idle == 0 ? 0.0 : 100.0 * static_cast<double>(found) / static_cast<double>(with_idle);
  return r;
}

}  // namespace isolation::idle_select
