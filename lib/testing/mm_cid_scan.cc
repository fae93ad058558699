// SPDX-License-Identifier: GPL-2.0-or-later
// MmCidScanConformance (testing/mm_cid.h): the invariants and scenarios of
// variants with a compaction scan (DesignTraits::lazy_axes), on the direct
// API: I7 idle reclaim, I8 convergence within two passes, I9 rate limit
// (spacing, the batch cursor, exactly one scanner per period with racing
// scanners, forced and on real threads), S5 shrink and regrow, S6
// intermittent bursts, S12 visits per pass.

#include <algorithm>
#include <atomic>
#include <barrier>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "isolation/core/interleave.h"
#include "isolation/testing/mm_cid.h"
#include "mm_cid_internal.h"

namespace isolation::testing::mm_cid {

using isolation::mm_cid::kCidPeriodNs;
using isolation::mm_cid::kNoTask;
using isolation::mm_cid::kScanDelayNs;
using isolation::mm_cid::ScanResult;

namespace {

// The first Scan() of an mm: initialises mm_cid_next_scan (rate-limited
// placements), then completes the pass that call may have begun, so that
// the next call starts at cursor 0.  (A batched placement without the rate
// limit, work_delayed + batch_N, claims its first batch at the first call.)
void FirstScan(MmCid& m, MmId mm, Nanos now) {
  ScanResult r = m.Scan(mm, now);
  for (int i = 0; i < kMaxCpus && r.ran && !r.pass_end; ++i) r = m.Scan(mm, now);
}

// Calls Scan() until `passes` passes have completed, advancing the clock by
// a period whenever a call is refused or a pass ends (so a pass start is
// never refused for being early) and by 1 us between the batches of a pass.
// Returns the time after the last pass.
Nanos RunPasses(MmCid& m, MmId mm, Nanos now, int passes) {
  int done = 0;
  for (int calls = 0; done < passes && calls < 100000; ++calls) {
    const ScanResult r = m.Scan(mm, now);
    if (r.ran && r.pass_end) {
      ++done;
      now += kScanDelayNs + kNsPerMs;
    } else if (!r.ran) {
      now += kScanDelayNs + kNsPerMs;
    } else {
      now += kNsPerUs;
    }
  }
  return now;
}

}  // namespace

// I7: a CPU that ran no active task of the mm for >= 100 ms is UNSET after a
// complete pass that starts after that.
Violations CheckIdleReclaim(const MmCidVariant& v) {
  const int p = 16;
  auto created = MmCid::Create(p, v);
  if (!created.ok()) return {created.status().ToString()};
  MmCid& m = **created;
  Violations out;
  const MmId mm = *m.CreateMm(CpuMask::Full(p), 0);
  if (!m.Fork(kNoTask, 0, mm, CpuMask::Full(p), 0).ok() ||
      !m.Fork(0, 1, mm, CpuMask::Full(p), 0).ok()) {
    return {"fork"};
  }
  m.ContextSwitch(0, kNoTask, 0, 1);  // task 0 on CPU 0 keeps running
  m.ContextSwitch(9, kNoTask, 1, 1);  // task 1 runs on CPU 9, then sleeps
  m.ContextSwitch(9, 1, kNoTask, 2);
  if (m.CidmaskWeight(mm) != 2) out.push_back("I7 setup: two IDs reserved");
  // Passes after 100 ms idle (the first call may only initialise the rate
  // limit): two complete passes starting 150 ms and more later.
  RunPasses(m, mm, 150 * kNsPerMs, 2);
  if (m.CidmaskWeight(mm) != 1) {
    out.push_back(
        "I7: CPU 9's slot, idle for >= 100 ms, still holds its ID after two complete passes");
  }
  internal::AddPrefixed(out, AllViolations(m, true), "I7");
  return out;
}

// I8: P = 16, task k pinned to CPU k, started in reverse order (task k holds
// ID 15-k); at t0 tasks 4..15 exit.  From then on scans run every 10 ms and
// the survivors switch out and in after each complete pass.
ConvergenceRun RunConvergence(const MmCidVariant& v, int passes_after_t0) {
  ConvergenceRun r;
  const int p = 16;
  const int survivors = 4;
  const std::unique_ptr<MmCid> owner = internal::CreateOrRecord(v, p, r.invariants);
  if (owner == nullptr) return r;
  MmCid& m = *owner;
  Nanos now = 1;
  const MmId mm = *m.CreateMm(CpuMask::Full(p), now);
  for (int k = 0; k < p; ++k) {
    if (!m.Fork(k == 0 ? kNoTask : 0, k, mm, CpuMask::Of(p, k), now).ok())
      r.invariants.push_back("fork");
  }
  for (int k = p - 1; k >= 0; --k) m.ContextSwitch(k, kNoTask, k, now);
  // Scans run before t0 too (the rate limit is initialised, passes go on).
  for (int i = 0; i < 30; ++i) {
    now += 10 * kNsPerMs;
    m.Scan(mm, now);
  }
  const Nanos t0 = now;
  for (int k = survivors; k < p; ++k) {
    if (!m.Exit(k, k, now).ok()) r.invariants.push_back("exit");
    m.ContextSwitch(k, k, kNoTask, now);
  }
  Nanos pass_started = -1;
  for (int step = 0; step < 10000 && r.passes_after_t0 < passes_after_t0; ++step) {
    now += 10 * kNsPerMs;
    const ScanResult s = m.Scan(mm, now);
    if (s.ran && s.pass_start) pass_started = now;
    if (s.ran && s.pass_end) {
      if (pass_started >= t0 + kCidPeriodNs) ++r.passes_after_t0;
      for (int k = 0; k < survivors; ++k) {
        m.ContextSwitch(k, k, kNoTask, now + 1);
        m.ContextSwitch(k, kNoTask, k, now + 2);
      }
    }
    internal::AddPrefixed(r.invariants, AllViolations(m, false), absl::StrCat("I8 step ", step));
    if (!r.invariants.empty()) return r;
  }
  for (int k = 0; k < survivors; ++k) r.ids.push_back(m.TaskCid(k));
  std::sort(r.ids.begin(), r.ids.end());
  return r;
}

Violations CheckConvergence(const MmCidVariant& v) {
  const ConvergenceRun r = RunConvergence(v, 2);
  Violations out = r.invariants;
  if (r.passes_after_t0 < 2)
    out.push_back(absl::StrCat("I8: only ", r.passes_after_t0, " passes ran after t0"));
  const std::vector<int32_t> dense = {0, 1, 2, 3};
  if (r.ids != dense) {
    std::string ids;
    for (int32_t id : r.ids) absl::StrAppend(&ids, ids.empty() ? "" : ",", id);
    out.push_back(absl::StrCat(
        "I8: after two passes that started >= 100 ms after the last exit the 4 survivors hold {",
        ids, "}, not {0,1,2,3}"));
  }
  return out;
}

// I9 on one thread.  (a) Over a schedule driven through the placement (8
// CPUs, one task pinned per CPU, ticks every ms, a switch out/in every 7
// ms, housekeeping every ms, 2 s), pass starts of the mm are >= 100 ms apart
// and passes keep starting.  (b) The cursor: each call visits <= N CPUs per
// loop; within a pass the batches after the first run at once, the next
// pass start inside the period is refused (rate-limited placements), and one
// a period later runs.
Violations CheckRateLimit(const MmCidVariant& v) {
  auto traits = isolation::mm_cid::DescribeVariant(v);
  if (!traits.ok()) return {traits.status().ToString()};
  Violations out;
  {
    const int p = 8;
    auto created = MmCid::Create(p, v);
    if (!created.ok()) return {created.status().ToString()};
    MmCid& m = **created;
    DirectScanRunner place(m);
    const MmId mm = *m.CreateMm(CpuMask::Full(p), 0);
    place.MmCreated(mm, 0);
    for (int k = 0; k < p; ++k) {
      if (!m.Fork(k == 0 ? kNoTask : 0, k, mm, CpuMask::Of(p, k), 0).ok()) out.push_back("fork");
    }
    for (int k = 0; k < p; ++k) {
      m.ContextSwitch(k, kNoTask, k, 1);
      place.ReturnToUser(k, k, 1);
    }
    for (Nanos now = kNsPerMs; now <= 2 * kNsPerSec; now += kNsPerMs) {
      const int k = static_cast<int>((now / kNsPerMs) % p);
      for (int c = 0; c < p; ++c) {
        place.Tick(c, c, now);
        place.ReturnToUser(c, c, now);
      }
      if ((now / kNsPerMs) % 7 == 0) {
        m.ContextSwitch(k, k, kNoTask, now);
        m.ContextSwitch(k, kNoTask, k, now + 1);
        place.ReturnToUser(k, k, now + 1);
      }
      place.Housekeeping(now);
    }
    Nanos last = -1;
    int starts = 0;
    for (const auto& [start_mm, at] : place.pass_starts()) {
      if (start_mm != mm) continue;
      ++starts;
      if (last >= 0 && at - last < kScanDelayNs) {
        out.push_back(absl::StrCat("I9: passes of mm ", mm, " started at ", last, " and ", at,
                                   " ns, ", (at - last) / kNsPerMs, " ms apart (< 100 ms)"));
      }
      last = at;
    }
    if (starts < 5)
      out.push_back(absl::StrCat("I9: only ", starts, " passes started in 2 s (scans must go on)"));
  }
  {
    const int p = 16;
    auto created = MmCid::Create(p, v);
    if (!created.ok()) return {created.status().ToString()};
    MmCid& m = **created;
    const MmId mm = *m.CreateMm(CpuMask::Full(p), 0);
    if (!m.Fork(kNoTask, 0, mm, CpuMask::Full(p), 0).ok()) out.push_back("fork");
    m.ContextSwitch(0, kNoTask, 0, 1);
    FirstScan(m, mm, 1);
    Nanos now = 200 * kNsPerMs;
    ScanResult r = m.Scan(mm, now);
    if (!r.ran || !r.pass_start)
      out.push_back("I9: a pass start 200 ms after the first call did not run");
    const Nanos pass_start = now;
    int calls = 1;
    while (r.ran && !r.pass_end && calls < 10000) {
      if (traits->batch > 0 && r.visits > 2 * traits->batch) {
        out.push_back(
            absl::StrCat("I9: a batch_", traits->batch, " call visited ", r.visits, " slots"));
      }
      now += kNsPerMs;
      r = m.Scan(mm, now);  // inside the period, but not at cursor 0
      ++calls;
      if (!r.ran)
        out.push_back(absl::StrCat("I9: batch ", calls,
                                   " of a pass was refused (only cursor 0 is rate limited)"));
      if (r.ran && r.pass_start) out.push_back("I9: a batch inside a pass restarted the pass");
    }
    if (traits->placement.rate_limited) {
      const ScanResult early = m.Scan(mm, now + kNsPerMs);
      if (early.ran) {
        out.push_back(absl::StrCat("I9: a pass started ", (now + kNsPerMs - pass_start) / kNsPerMs,
                                   " ms after the previous one (rate limit)"));
      }
      // The boundary (task_mm_cid_work: time_before(now, next) returns):
      // one ns before mm_cid_next_scan is refused, exactly at it a pass runs.
      const ScanResult just_before = m.Scan(mm, pass_start + kScanDelayNs - 1);
      if (just_before.ran) out.push_back("I9: a pass started 1 ns before mm_cid_next_scan");
      const ScanResult later = m.Scan(mm, pass_start + kScanDelayNs);
      if (!later.ran || !later.pass_start) {
        out.push_back("I9: no pass started at mm_cid_next_scan, a period after the previous one");
      }
    }
  }
  return out;
}

// I9: exactly one scanner per period.  Two scanners call Scan() for the
// same period; in every schedule of their interleave points exactly one of
// them starts the pass.  Applies where the variant limits concurrent passes
// itself (a rate-limited placement, or a batch cursor); work_delayed's
// single work item per mm never has two scanners.
Violations CheckRacingScanners(const MmCidVariant& v) {
  auto traits = isolation::mm_cid::DescribeVariant(v);
  if (!traits.ok()) return {traits.status().ToString()};
  if (!traits->placement.rate_limited && traits->batch == 0) return {};
  // Without the rate limit (work_delayed) only the cursor keeps two scanners
  // out of one pass: the machine then holds two batches, so a pass is not
  // over after the first scanner's call.
  const int p = traits->placement.rate_limited ? 4 : 2 * traits->batch;
  Violations out;
  std::unique_ptr<MmCid> m;
  MmId mm = 0;
  int pass_starts = 0;
  const Nanos when = 200 * kNsPerMs;
  auto scan = [&] {
    const ScanResult r = m->Scan(mm, when);
    if (r.ran && r.pass_start) ++pass_starts;
  };
  absl::StatusOr<int> schedules = Interleaver::Explore(
      [&](Interleaver& il) {
        m = *MmCid::Create(p, v);
        mm = *m->CreateMm(CpuMask::Full(p), 0);
        (void)m->Fork(kNoTask, 0, mm, CpuMask::Full(p), 0);
        m->ContextSwitch(0, kNoTask, 0, 1);
        FirstScan(*m, mm, 1);
        pass_starts = 0;
        il.Add("scanner_a", scan);
        il.Add("scanner_b", scan);
      },
      [&](const std::vector<std::string>& log) {
        // Runs of proper prefixes may not have run both scanners: at most one
        // pass start always; exactly one once both ran (a complete run).
        bool a = false, b = false;
        for (const std::string& e : log) {
          a = a || e.rfind("scanner_a:", 0) == 0;
          b = b || e.rfind("scanner_b:", 0) == 0;
        }
        if (pass_starts > 1) {
          out.push_back(absl::StrCat("I9: ", pass_starts,
                                     " scanners started a pass for the same period (schedule ",
                                     absl::StrJoin(log, " "), ")"));
        }
        if (pass_starts == 0 && a && b) out.push_back("I9: no scanner started the due pass");
      });
  if (!schedules.ok()) out.push_back(schedules.status().ToString());
  return out;
}

// I9 on real threads: `threads` threads scan one mm (8 CPUs) for each of
// `periods` periods at once (a barrier per period), each calling Scan()
// until the pass would be complete; exactly one pass start per period.
Violations CheckConcurrentScanners(const MmCidVariant& v, int threads, int periods) {
  auto traits = isolation::mm_cid::DescribeVariant(v);
  if (!traits.ok()) return {traits.status().ToString()};
  if (!traits->placement.rate_limited) return {};  // one work item per mm: no concurrent scanners
  const int p = 8;
  auto created = MmCid::Create(p, v);
  if (!created.ok()) return {created.status().ToString()};
  MmCid& m = **created;
  const MmId mm = *m.CreateMm(CpuMask::Full(p), 0);
  (void)m.Fork(kNoTask, 0, mm, CpuMask::Full(p), 0);
  m.ContextSwitch(0, kNoTask, 0, 1);
  FirstScan(m, mm, 1);
  const int calls_per_period = traits->batch > 0 ? (p + traits->batch - 1) / traits->batch + 1 : 2;
  std::vector<std::atomic<int>> starts(static_cast<size_t>(periods));
  for (auto& s : starts) s.store(0);
  std::barrier sync(threads);
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&] {
      for (int k = 0; k < periods; ++k) {
        sync.arrive_and_wait();
        const Nanos when = (k + 1) * (kScanDelayNs + 50 * kNsPerMs);
        for (int c = 0; c < calls_per_period; ++c) {
          const ScanResult r = m.Scan(mm, when);
          if (r.ran && r.pass_start)
            starts[static_cast<size_t>(k)].fetch_add(1, std::memory_order_relaxed);
        }
      }
    });
  }
  for (std::thread& t : pool) t.join();
  Violations out;
  for (int k = 0; k < periods; ++k) {
    const int n = starts[static_cast<size_t>(k)].load();
    if (n != 1)
      out.push_back(
          absl::StrCat("I9: period ", k, ": ", n, " passes started by ", threads, " scanners"));
  }
  internal::AddPrefixed(out, AllViolations(m, true), "I9 concurrent scanners");
  return out;
}

// S5 ([SHRINK], [LOC]): 16 tasks on 16 CPUs (task k on CPU k, started in
// reverse order: ID 15-k); 12 exit; the survivors run with ticks, switching
// out and in every 50 ms for 2 s (shrink).  Then regrow: 12 new tasks on
// CPUs 4..15, forked before any runs, switch in; they all sleep 200 ms
// (scans reclaim every parked ID) and switch in again, in reverse CPU
// order: with a recent_cid hint each CPU gets back the ID it had before the
// sleep.
ShrinkRegrowRun RunShrinkAndRegrow(const MmCidVariant& v) {
  ShrinkRegrowRun r;
  const int p = 16;
  const std::unique_ptr<MmCid> owner = internal::CreateOrRecord(v, p, r.invariants);
  if (owner == nullptr) return r;
  MmCid& m = *owner;
  DirectScanRunner place(m);
  Nanos now = 1;
  const MmId mm = *m.CreateMm(CpuMask::Full(p), now);
  place.MmCreated(mm, now);
  for (int k = 0; k < p; ++k) {
    if (!m.Fork(kNoTask, k, mm, CpuMask::Of(p, k), now).ok()) r.invariants.push_back("fork");
  }
  for (int k = p - 1; k >= 0; --k) m.ContextSwitch(k, kNoTask, k, now);
  for (int k = 4; k < p; ++k) {
    if (!m.Exit(k, k, now).ok()) r.invariants.push_back("exit");
    m.ContextSwitch(k, k, kNoTask, now);
  }
  for (int round = 0; round < 40; ++round) {
    now += 50 * kNsPerMs;
    for (int k = 0; k < 4; ++k) {
      place.Tick(k, k, now);
      place.ReturnToUser(k, k, now);
      m.ContextSwitch(k, k, kNoTask, now + 1);
      place.Housekeeping(now + 2);
      m.ContextSwitch(k, kNoTask, k, now + 3);
      place.ReturnToUser(k, k, now + 3);
    }
  }
  for (int k = 0; k < 4; ++k) r.max_id_after_shrink = std::max(r.max_id_after_shrink, m.TaskCid(k));
  internal::AddPrefixed(r.invariants, AllViolations(m, true), "S5 shrink");
  // Regrow.
  now += kNsPerMs;
  const TaskId first_new = 100;
  for (int k = 4; k < p; ++k) {
    if (!m.Fork(0, first_new + k, mm, CpuMask::Of(p, k), now).ok())
      r.invariants.push_back("regrow fork");
  }
  for (int k = 4; k < p; ++k) {
    m.ContextSwitch(k, kNoTask, first_new + k, now);
    place.ReturnToUser(k, first_new + k, now);
  }
  auto task_on = [&](int k) { return k < 4 ? static_cast<TaskId>(k) : first_new + k; };
  std::vector<int32_t> before(static_cast<size_t>(p));
  for (int k = 0; k < p; ++k) before[static_cast<size_t>(k)] = m.TaskCid(task_on(k));
  internal::AddPrefixed(r.invariants, AllViolations(m, true), "S5 regrow");
  // Everyone sleeps 200 ms; two complete passes reclaim the parked IDs.
  for (int k = 0; k < p; ++k) m.ContextSwitch(k, task_on(k), kNoTask, now + 1);
  now = RunPasses(m, mm, now + 150 * kNsPerMs, 2);
  // In reverse CPU order, so that the lowest free ID is rarely the one a CPU
  // had: only the hint gives it back.
  for (int k = p - 1; k >= 0; --k) {
    m.ContextSwitch(k, kNoTask, task_on(k), now);
    const int32_t id = m.TaskCid(task_on(k));
    r.ids_after_regrow.push_back(id);
    ++r.regrown;
    if (id == before[static_cast<size_t>(k)]) ++r.regrown_with_recent;
  }
  internal::AddPrefixed(r.invariants, AllViolations(m, true), "S5 after the sleep");
  if (m.CidmaskWeight(mm) != p) r.invariants.push_back("S5: 16 running tasks, not 16 IDs");
  return r;
}

Violations CheckShrink(const MmCidVariant& v) {
  const ShrinkRegrowRun r = RunShrinkAndRegrow(v);
  Violations out = r.invariants;
  if (r.max_id_after_shrink >= 4) {
    out.push_back(absl::StrCat("S5/I8: after 12 of 16 exited the survivors' highest ID is ",
                               r.max_id_after_shrink, ", not in [0, 4)"));
  }
  return out;
}

Violations CheckRegrow(const MmCidVariant& v) {
  const ShrinkRegrowRun r = RunShrinkAndRegrow(v);
  Violations out = r.invariants;
  if (r.regrown_with_recent != r.regrown) {
    out.push_back(absl::StrCat("S5 regrow: ", r.regrown_with_recent, " of ", r.regrown,
                               " CPUs got their recent ID back after the sleep"));
  }
  return out;
}

// S6 ([LOC]): N tasks, task k pinned to CPU k, run one at a time in a seeded
// random order; each burst switches in, takes two ticks 1 ms apart, switches
// out; then a gap.  Reuse = bursts with the same ID as that CPU's previous
// burst; an LLC move = an ID's region touched from another LLC than last time.
BurstRun RunBursts(const MmCidVariant& v, int n, int cpus_per_llc, Nanos gap, int bursts,
                   uint64_t seed) {
  BurstRun r;
  const std::unique_ptr<MmCid> owner = internal::CreateOrRecord(v, n, r.invariants);
  if (owner == nullptr) return r;
  MmCid& m = *owner;
  DirectScanRunner place(m);
  Nanos now = 1000;
  const MmId mm = *m.CreateMm(CpuMask::Full(n), now);
  place.MmCreated(mm, now);
  for (int k = 0; k < n; ++k) {
    if (!m.Fork(k == 0 ? kNoTask : 0, k, mm, CpuMask::Of(n, k), now).ok())
      r.invariants.push_back("fork");
  }
  std::vector<int32_t> last_id_of_cpu(static_cast<size_t>(n), -1);
  std::vector<int> llc_of_region(static_cast<size_t>(n), -1);
  std::mt19937_64 rng(seed);
  int reused = 0;
  for (int b = 0; b < bursts; ++b) {
    const int cpu = static_cast<int>(rng() % static_cast<uint64_t>(n));
    const TaskId t = cpu;
    m.ContextSwitch(cpu, kNoTask, t, now);
    place.ReturnToUser(cpu, t, now);
    const int32_t id = m.TaskCid(t);
    for (int tick = 1; tick <= 2; ++tick) {
      place.Tick(cpu, t, now + tick * kNsPerMs);
      place.ReturnToUser(cpu, t, now + tick * kNsPerMs);
    }
    internal::AddPrefixed(r.invariants, m.CheckAlways(), absl::StrCat("S6 burst ", b));
    if (id < 0 || id >= n) {
      r.invariants.push_back("S6: burst without a valid ID");
    } else {
      int32_t& last = last_id_of_cpu[static_cast<size_t>(cpu)];
      if (last >= 0) {
        ++r.bursts_counted;
        if (last == id) ++reused;
      }
      last = id;
      const int llc = cpu / cpus_per_llc;
      int& region_llc = llc_of_region[static_cast<size_t>(id)];
      if (region_llc >= 0 && region_llc != llc) ++r.llc_moves;
      region_llc = llc;
    }
    m.ContextSwitch(cpu, t, kNoTask, now + 3 * kNsPerMs);
    for (Nanos h = now + 3 * kNsPerMs; h < now + gap; h += 10 * kNsPerMs) place.Housekeeping(h);
    now += gap;
  }
  internal::AddPrefixed(r.invariants, AllViolations(m, true), "S6 end");
  r.distinct_ids = static_cast<int>(
      std::count_if(llc_of_region.begin(), llc_of_region.end(), [](int l) { return l >= 0; }));
  r.reuse = r.bursts_counted > 0 ? static_cast<double>(reused) / r.bursts_counted : 0;
  return r;
}

namespace {
struct BurstShape {
  int n;
  int cpus_per_llc;
};
constexpr BurstShape kBurstShapes[] = {{8, 8}, {24, 1}};
}  // namespace

Violations CheckBursts(const MmCidVariant& v) {
  auto traits = isolation::mm_cid::DescribeVariant(v);
  if (!traits.ok()) return {traits.status().ToString()};
  Violations out;
  for (BurstShape s : kBurstShapes) {
    for (Nanos gap : {10 * kNsPerMs, 200 * kNsPerMs}) {
      const BurstRun r =
          RunBursts(v, s.n, s.cpus_per_llc, gap, 300, 0x56 + static_cast<uint64_t>(s.n));
      const std::string where = absl::StrCat("S6 n=", s.n, " gap_ms=", gap / kNsPerMs);
      internal::AddPrefixed(out, r.invariants, where);
      if (r.bursts_counted <= 200)
        out.push_back(absl::StrCat(where, ": only ", r.bursts_counted, " bursts counted"));
      if (!traits->allocator.reuses_recent_cid) continue;
      if (r.reuse < 0.95)
        out.push_back(absl::StrCat(where, ": reuse ", r.reuse, " < 0.95 with a recent_cid hint"));
      if (r.distinct_ids != s.n)
        out.push_back(absl::StrCat(where, ": ", r.distinct_ids, " IDs in use, not ", s.n));
      if (s.cpus_per_llc == 1 && r.llc_moves != 0) {
        out.push_back(absl::StrCat(where, ": ", r.llc_moves, " regions moved between LLCs"));
      }
    }
  }
  return out;
}

// S12 / I9: one task pinned to CPU `pinned_cpu` of `num_cpus`; one complete
// pass (one call, or the batches of one pass) after the rate limit.
VisitsRun RunVisitsPerPass(const MmCidVariant& v, int num_cpus, int pinned_cpu) {
  VisitsRun r;
  const std::unique_ptr<MmCid> owner = internal::CreateOrRecord(v, num_cpus, r.invariants);
  if (owner == nullptr) return r;
  MmCid& m = *owner;
  const CpuMask pin = CpuMask::Of(num_cpus, pinned_cpu);
  const MmId mm = *m.CreateMm(pin, 0);
  if (!m.Fork(kNoTask, 0, mm, pin, 0).ok()) r.invariants.push_back("fork");
  m.ContextSwitch(pinned_cpu, kNoTask, 0, 1);
  FirstScan(m, mm, 1);
  r.scope_size = m.ScanScopeSize(mm);
  Nanos now = 200 * kNsPerMs;
  for (int i = 0; i < 100000; ++i) {
    const ScanResult s = m.Scan(mm, now);
    now += kNsPerUs;
    if (!s.ran) {
      r.invariants.push_back(absl::StrCat("S12: call ", r.calls, " of a pass did not run"));
      break;
    }
    r.visits += s.visits;
    ++r.calls;
    if (s.pass_end) break;
  }
  internal::AddPrefixed(r.invariants, AllViolations(m, true), "S12");
  return r;
}

Violations CheckVisitsPerPass(const MmCidVariant& v) {
  auto traits = isolation::mm_cid::DescribeVariant(v);
  if (!traits.ok()) return {traits.status().ToString()};
  const VisitsRun r = RunVisitsPerPass(v, 128, 77);
  Violations out = r.invariants;
  if (r.visits != 2 * r.scope_size) {
    out.push_back(absl::StrCat("S12/I9: a complete pass visited ", r.visits,
                               " slots, the scope holds ", r.scope_size, " CPUs (2 visits each)"));
  }
  if (traits->batch > 0) {
    const int want_calls = std::max(1, (r.scope_size + traits->batch - 1) / traits->batch);
    if (r.calls != want_calls) {
      out.push_back(absl::StrCat("S12/I9: a pass took ", r.calls, " calls, ceil(", r.scope_size,
                                 " / ", traits->batch, ") = ", want_calls));
    }
  } else if (r.calls != 1) {
    out.push_back(absl::StrCat("S12/I9: batch_full took ", r.calls, " calls for a pass"));
  }
  return out;
}

// ---- the suite -----------------------------------------------------------------

TEST_P(MmCidScanConformance, I7_IdleReclaim) { RunAsTest("I7_IdleReclaim", GetParam()); }

TEST_P(MmCidScanConformance, I8_ConvergesWithinTwoPasses) {
  RunAsTest("I8_ConvergesWithinTwoPasses", GetParam());
}

TEST_P(MmCidScanConformance, I9_RateLimitAndCursor) {
  RunAsTest("I9_RateLimitAndCursor", GetParam());
}

TEST_P(MmCidScanConformance, I9_OneScannerPerPeriod_EverySchedule) {
  RunAsTest("I9_OneScannerPerPeriod_EverySchedule", GetParam());
}

TEST_P(MmCidScanConformance, I9_OneScannerPerPeriod_RealThreads) {
  RunAsTest("I9_OneScannerPerPeriod_RealThreads", GetParam());
}

TEST_P(MmCidScanConformance, S5_Shrink) { RunAsTest("S5_Shrink", GetParam()); }

TEST_P(MmCidScanConformance, S5_Regrow) { RunAsTest("S5_Regrow", GetParam()); }

TEST_P(MmCidScanConformance, S6_IntermittentBursts) {
  RunAsTest("S6_IntermittentBursts", GetParam());
}

TEST_P(MmCidScanConformance, S12_I9_VisitsPerPass) {
  RunAsTest("S12_I9_VisitsPerPass", GetParam());
}

// A binary that links the kit without instantiating this suite is not an error.
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(MmCidScanConformance);

namespace internal {
int MmCidScanConformanceAnchor() { return 0; }
}  // namespace internal

}  // namespace isolation::testing::mm_cid
