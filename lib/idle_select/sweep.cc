// SPDX-License-Identifier: GPL-2.0-or-later
// MeasureSelect(): the selection sweep behind `isolab idle` and the bench.

#include <algorithm>
#include <random>
#include <vector>

#include "absl/strings/str_cat.h"
#include "isolation/clock.h"
#include "isolation/idle_select_hooks.h"

namespace isolation::idle_select {
namespace {

void SetBusy(IdleState& st, int cpu) {
  if (st.cpu_state(cpu).curr_is_idle.load(std::memory_order_relaxed)) st.IdleExit(cpu);
  st.cpu_state(cpu).nr_running.store(1, std::memory_order_relaxed);
}
void SetIdle(IdleState& st, int cpu) {
  st.cpu_state(cpu).nr_running.store(0, std::memory_order_relaxed);
  st.cpu_state(cpu).ttwu_pending.store(0, std::memory_order_relaxed);
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
    return absl::InvalidArgumentError(absl::StrCat("idle sweep: llc_cpus=", p.llc_cpus, " busy_pct=", p.busy_pct,
                                                   " samples=", p.samples,
                                                   " (need 2..4096 CPUs, 0..100 %, >= 1 sample)"));
  }
  Options o;
  o.variant = p.variant;
  auto created = IdleState::Create(IdleTopology::Uniform(1, p.llc_cpus), o);
  if (!created.ok()) return created.status();
  IdleState& st = **created;
  auto selector = MakeSelector(st);
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
  st.UpdateIdleCpuScan(0, int64_t{nbusy} * kSchedCapacityScale);

  // Clock overhead: median of back-to-back reads.
  std::vector<Nanos> overhead(1001);
  for (auto& v : overhead) {
    const Nanos t0 = MonotonicNanos();
    v = MonotonicNanos() - t0;
  }
  const double clock_overhead = Median(overhead);

  SweepResult r;
  r.budget = st.llc(0).nr_idle_scan.load(std::memory_order_relaxed);
  std::vector<Nanos> times;
  times.reserve(static_cast<size_t>(p.samples));
  int64_t probes = 0, stale = 0, with_idle = 0, found = 0;
  for (int i = 0; i < p.samples; ++i) {
    if (p.flip_every > 0 && i % p.flip_every == 0 && !busy.empty() && !idle.empty()) {
      const size_t bi = static_cast<size_t>(rng() % busy.size());
      const size_t ii = static_cast<size_t>(rng() % idle.size());
      std::swap(busy[bi], idle[ii]);
      SetIdle(st, idle[ii]);
      SetBusy(st, busy[bi]);
    }
    if (p.tick_every > 0 && i % p.tick_every == 0) {
      for (int c : busy) st.Tick(c);  // idle CPUs have their tick stopped
    }
    // The waker runs on a busy CPU (target = waker CPU); prev is random.
    const int target = busy.empty() ? static_cast<int>(rng() % static_cast<uint64_t>(n))
                                    : busy[static_cast<size_t>(rng() % busy.size())];
    WakeTask task;
    task.prev_cpu = static_cast<int>(rng() % static_cast<uint64_t>(n));
    WakeContext ctx;
    ctx.target = target;
    ctx.waker_cpu = target;
    const Nanos t0 = MonotonicNanos();
    const Selection s = selector->Select(task, ctx);
    const Nanos t1 = MonotonicNanos();
    times.push_back(t1 - t0);
    probes += s.probes;
    stale += s.stale_hits;
    if (!idle.empty()) {
      ++with_idle;
      if (s.idle_found() && s.cpu >= 0 && (s.claimed || st.AvailableIdleCpu(s.cpu))) ++found;
    }
    if (s.claimed) st.IdleRefresh(s.cpu);  // the wakee is not placed: give the idle period back
  }
  r.samples = p.samples;
  r.probes_mean = static_cast<double>(probes) / p.samples;
  r.stale_hits_mean = static_cast<double>(stale) / p.samples;
  r.select_ns_median = std::max(0.0, Median(times) - clock_overhead);
  r.found_pct = with_idle == 0 ? 0.0 : 100.0 * static_cast<double>(found) / static_cast<double>(with_idle);
  return r;
}

}  // namespace isolation::idle_select
