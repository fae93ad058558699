// SPDX-License-Identifier: GPL-2.0-or-later
// mm_cid benchmarks: context-switch hook cost (ID cached / parked slot
// reused across mms / allocation / migration), compaction scan time versus
// CPU count per strategy (S12 scaling curve), and the cost a placement puts
// on the triggering (possibly isolated) CPU.  Host figures: indicative only.
//
//   mm_cid_bench --benchmark_min_time=0.05

#include <memory>
#include <vector>

#include <urcu/urcu-memb.h>

#include "benchmark/benchmark.h"
#include "isolation/mm_cid.h"

namespace isolation::mm_cid {
namespace {

MmCidConfig Config(int design, int scope = 0, int batch = 0) {
  MmCidConfig c;
  c.design = design == 0 ? Design::kLazy : Design::kOwner619;
  c.scope = static_cast<ScanScope>(scope);
  c.batch = batch;
  return c;
}

void SetDesignLabel(benchmark::State& state, const MmCidConfig& c) { state.SetLabel(c.Name()); }

// The switch benchmarks' set-up: an 8-CPU mechanism with tasks 0 and 1, either
// two threads of one mm (task 0 forks task 1) or the only tasks of two mms.
// nullptr (the run marked skipped) if the mechanism cannot be created.
std::unique_ptr<MmCid> CreateWithTwoTasks(benchmark::State& state, const MmCidConfig& c, bool separate_mms) {
  auto r = MmCid::Create(8, c);
  if (!r.ok()) {
    state.SkipWithError(std::string(r.status().message()).c_str());
    return nullptr;
  }
  auto m = std::move(*r);
  const MmId a = *m->CreateMm(CpuMask::Full(8), 0);
  const MmId b = separate_mms ? *m->CreateMm(CpuMask::Full(8), 0) : a;
  (void)m->Fork(kNoTask, 0, a, CpuMask::Full(8), 0);
  (void)m->Fork(separate_mms ? kNoTask : 0, 1, b, CpuMask::Full(8), 0);
  return m;
}

// The timed loop: tasks 0 and 1 take turns on CPU 0.
void AlternateTasksOnCpu0(benchmark::State& state, MmCid& m) {
  TaskId cur = kNoTask;
  Nanos now = 0;
  for (auto _ : state) {
    const TaskId next = cur == 0 ? 1 : 0;
    m.ContextSwitch(0, cur, next, ++now);
    cur = next;
  }
}

// Two tasks of one mm alternate on CPU 0: the ID stays parked (no atomics).
void BM_Switch_Cached(benchmark::State& state) {
  const MmCidConfig c = Config(static_cast<int>(state.range(0)));
  auto m = CreateWithTwoTasks(state, c, /*separate_mms=*/false);
  if (m == nullptr) return;
  AlternateTasksOnCpu0(state, *m);
  SetDesignLabel(state, c);
}
BENCHMARK(BM_Switch_Cached)->Arg(0)->Arg(1);

// Tasks of two mms alternate on CPU 0: each mm's ID stays parked in its slot
// (lazy) -- the "slot reuse" case of [LF].
void BM_Switch_CrossMmSlotReuse(benchmark::State& state) {
  const MmCidConfig c = Config(static_cast<int>(state.range(0)));
  auto m = CreateWithTwoTasks(state, c, /*separate_mms=*/true);
  if (m == nullptr) return;
  AlternateTasksOnCpu0(state, *m);
  SetDesignLabel(state, c);
}
BENCHMARK(BM_Switch_CrossMmSlotReuse)->Arg(0)->Arg(1);

// A task migrates between CPUs 0 and 1 every switch-in (migrate_to steals
// the source's ID: two CASes + the Dekker fence).
void BM_Switch_Migration(benchmark::State& state) {
  const MmCidConfig c = Config(static_cast<int>(state.range(0)));
  // 2 users < 8 allowed: migration moves IDs.
  auto m = CreateWithTwoTasks(state, c, /*separate_mms=*/false);
  if (m == nullptr) return;
  int cpu = 0;
  Nanos now = 0;
  m->ContextSwitch(cpu, kNoTask, 0, ++now);
  for (auto _ : state) {
    m->ContextSwitch(cpu, 0, kNoTask, ++now);
    const int to = 1 - cpu;
    m->Migrate(0, cpu, to, now);
    m->ContextSwitch(to, kNoTask, 0, ++now);
    cpu = to;
  }
  SetDesignLabel(state, c);
}
BENCHMARK(BM_Switch_Migration)->Arg(0)->Arg(1);

// Switch-in that must allocate: the parked ID was reclaimed by a scan
// (scan excluded from the timing).
void BM_Switch_Allocation(benchmark::State& state) {
  const MmCidConfig c = Config(0);
  auto m = *MmCid::Create(8, c);
  MmId mm = *m->CreateMm(CpuMask::Full(8), 0);
  (void)m->Fork(kNoTask, 0, mm, CpuMask::Full(8), 0);
  Nanos now = 1;
  m->Scan(mm, now);
  int64_t allocs = 0;
  for (auto _ : state) {
    m->ContextSwitch(0, kNoTask, 0, now);
    m->ContextSwitch(0, 0, kNoTask, now);
    state.PauseTiming();
    now += 200 * kNsPerMs;
    m->Scan(mm, now);  // clear_old reclaims CPU 0's parked ID
    state.ResumeTiming();
  }
  allocs = m->Stats().allocations;
  state.counters["allocs_per_iter"] =
      benchmark::Counter(static_cast<double>(allocs), benchmark::Counter::kAvgIterations);
  SetDesignLabel(state, c);
}
BENCHMARK(BM_Switch_Allocation);

// S12: one scan call for an mm whose only task is pinned to CPU P/2, per
// strategy (0 possible, 1 allowed, 2 cidmask, 3 batch8), P = 8 ... 4096.
void BM_Scan(benchmark::State& state) {
  const int strategy = static_cast<int>(state.range(0));
  const int p = static_cast<int>(state.range(1));
  const MmCidConfig c = strategy == 3 ? Config(0, 0, 8) : Config(0, strategy, 0);
  auto m = *MmCid::Create(p, c, MmCid::Limits{4, 2});
  const CpuMask pin = CpuMask::Of(p, p / 2);
  MmId mm = *m->CreateMm(pin, 0);
  (void)m->Fork(kNoTask, 0, mm, pin, 0);
  m->ContextSwitch(p / 2, kNoTask, 0, 1);
  Nanos now = 1;
  m->Scan(mm, now);
  int64_t visits = 0;
  for (auto _ : state) {
    now += 200 * kNsPerMs;
    visits += m->Scan(mm, now).visits;
  }
  state.counters["visits_per_call"] = benchmark::Counter(static_cast<double>(visits), benchmark::Counter::kAvgIterations);
  state.counters["modelled_ns"] =
      benchmark::Counter(static_cast<double>(visits * kModelledVisitNs), benchmark::Counter::kAvgIterations);
  state.SetLabel(c.Name());
}
BENCHMARK(BM_Scan)->ArgsProduct({{0, 1, 2, 3}, {8, 32, 128, 512, 1024, 4096}});

// What the trigger costs the (isolated) CPU, per placement: task work runs
// the whole scan there; workqueue/rcu only enqueue.  rcu = real urcu-memb
// call_rcu with a no-op callback (heads recycled after a barrier).
void BM_Placement_TaskWorkInlineScan128(benchmark::State& state) {
  MmCidConfig c;
  auto m = *MmCid::Create(128, c);
  MmId mm = *m->CreateMm(CpuMask::Full(128), 0);
  (void)m->Fork(kNoTask, 0, mm, CpuMask::Full(128), 0);
  Nanos now = 1;
  m->Scan(mm, now);
  for (auto _ : state) {
    now += 200 * kNsPerMs;
    benchmark::DoNotOptimize(m->Scan(mm, now));
  }
}
BENCHMARK(BM_Placement_TaskWorkInlineScan128);

void BM_Placement_RcuCallRcu(benchmark::State& state) {
  urcu_memb_register_thread();
  constexpr int kHeads = 4096;
  std::vector<rcu_head> heads(kHeads);
  int i = 0;
  for (auto _ : state) {
    urcu_memb_call_rcu(&heads[static_cast<size_t>(i)], [](rcu_head*) {});
    if (++i == kHeads) {
      state.PauseTiming();
      urcu_memb_barrier();
      i = 0;
      state.ResumeTiming();
    }
  }
  urcu_memb_barrier();
  urcu_memb_unregister_thread();
}
BENCHMARK(BM_Placement_RcuCallRcu);

}  // namespace
}  // namespace isolation::mm_cid
