// SPDX-License-Identifier: GPL-2.0-or-later
// MmCidConformance (testing/mm_cid.h): the mm_cid invariants and scenarios
// that apply to every variant, driven through the entry points directly with
// seeded schedules -- I1-I6 and I15 on random schedules with S2's per-ID
// counter, S1, S3, S4, S10 (exec, failed fork, vfork, vfork at a mode flip),
// S13 and S14.

#include <algorithm>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "isolation/mm_cid/switcher.h"
#include "isolation/testing/mm_cid.h"
#include "mm_cid_internal.h"
#include "testing/mm_cid_random_model.h"

namespace isolation::testing::mm_cid {

using internal::RandomModel;
using isolation::mm_cid::DesignTraits;
using isolation::mm_cid::kNoMm;
using isolation::mm_cid::kNoTask;
using isolation::mm_cid::kScanDelayNs;
using isolation::mm_cid::MmCidStats;
using isolation::mm_cid::MmCidSwitcher;

namespace {

// The bound S3 asserts for an mm of `users` users on a union of `allowed` CPUs.
int IdBound(const DesignTraits& d, int allowed, int users, int p) {
  const int opt = std::min(allowed, users);
  if (d.id_bound == DesignTraits::IdBound::kMaxCids) return std::min(opt + opt / 4, p);
  return opt;
}

}  // namespace

Violations CheckRandomSchedule(const MmCidVariant& v, int p, uint64_t seed, int steps) {
  RandomModel model(p, v, seed);
  if (model.m == nullptr) return model.violations;
  for (int i = 0; i < 6; ++i) model.Spawn(kNoMm, kNoTask);
  for (int i = 0; i < 20; ++i) model.Spawn(static_cast<MmId>(i % 3), kNoTask);
  const std::string where = absl::StrCat(v.Name(), " p=", p, " seed=", seed);
  for (int step = 0; step < steps; ++step) {
    model.Step();
    Violations found = AllViolations(*model.m, /*quiescent=*/true);
    found.insert(found.end(), model.violations.begin(), model.violations.end());
    if (!found.empty()) {
      Violations out;
      internal::AddPrefixed(out, found, absl::StrCat(where, " step=", step));
      return out;
    }
  }
  for (int c = 0; c < p; ++c) model.ContextSwitch(c, kNoTask);
  Violations out;
  if (model.CounterSum() != model.increments) {
    out.push_back(absl::StrCat(where, ": S2: per-ID counters sum to ", model.CounterSum(),
                               " after ", model.increments,
                               " increments (an ID was shared by two running tasks: I1)"));
  }
  internal::AddPrefixed(out, AllViolations(*model.m, true), where + " end");
  return out;
}

Violations CheckAllocationRarePaths(const MmCidVariant& v, int seeds, int waves) {
  constexpr int kP = 16;
  absl::StatusOr<VariantTraits> traits = isolation::mm_cid::DescribeVariant(v);
  if (!traits.ok()) return {traits.status().ToString()};
  Violations out;
  for (int seed = 1; seed <= seeds; ++seed) {
    const std::string where = absl::StrCat(v.Name(), " rare paths p=", kP, " seed=", seed);
    auto created = MmCid::Create(kP, v, MmCid::Limits{64 * waves + 64, waves + 4});
    if (!created.ok()) return {absl::StrCat(where, ": ", created.status().ToString())};
    MmCid& m = **created;
    DirectScanRunner place(m);
    AllocationWatch watch(m, *traits);
    std::mt19937_64 rng(0x5eed0000u + static_cast<uint64_t>(seed));
    auto rand = [&rng](int n) { return static_cast<int>(rng() % static_cast<uint64_t>(n)); };
    Nanos now = 1000;
    std::vector<TaskId> curr(kP, kNoTask);
    std::vector<int> cpu_of;  // per task: where it last ran or was queued
    std::vector<bool> alive;
    Violations found;
    int event = 0;
    // After every event: CheckAlways (incrementally: its cost follows what
    // the event changed, not the 64 x waves tasks) and the bound; after each
    // wave also CheckQuiescent (I5, I6: a leaked ID outlives its mm's wave).
    // false stops the run.
    auto ok = [&](const char* what, bool quiescent = false) {
      ++event;
      Violations v2 = m.CheckAlwaysIncremental();
      if (quiescent) {
        for (std::string& q : AllViolations(m, /*quiescent=*/true)) v2.push_back(std::move(q));
      }
      v2.insert(v2.end(), found.begin(), found.end());
      if (v2.empty()) return true;
      internal::AddPrefixed(out, v2, absl::StrCat(where, " event ", event, " (", what, ")"));
      return false;
    };
    auto running = [&](TaskId t) { return std::find(curr.begin(), curr.end(), t) != curr.end(); };
    // `t` (not running) runs on `cpu`: migrated there first if queued elsewhere.
    auto run_on = [&](int cpu, TaskId t) {
      now += 20 * kNsPerUs + rand(200) * kNsPerUs;
      if (cpu_of[static_cast<size_t>(t)] != cpu) {
        m.Migrate(t, cpu_of[static_cast<size_t>(t)], cpu, now);
        cpu_of[static_cast<size_t>(t)] = cpu;
      }
      watch.Before(t);
      m.ContextSwitch(cpu, curr[static_cast<size_t>(cpu)], t, now);
      watch.After(t, found);
      curr[static_cast<size_t>(cpu)] = t;
      place.ReturnToUser(cpu, t, now);
      if (rand(4) == 0) {  // a tick: placement, the [WQ] kick (re-takes in place)
        watch.Before(t);
        place.Tick(cpu, t, now + kNsPerUs);
        watch.After(t, found);
        place.ReturnToUser(cpu, t, now + kNsPerUs);
      }
    };
    auto idle = [&](int cpu) {
      if (curr[static_cast<size_t>(cpu)] == kNoTask) return;
      m.ContextSwitch(cpu, curr[static_cast<size_t>(cpu)], kNoTask, now);
      curr[static_cast<size_t>(cpu)] = kNoTask;
    };
    for (int wave = 0; wave < waves && out.empty(); ++wave) {
      // A fresh mm: its whole union, or (1 in 3) narrowed to 4-12 CPUs.
      const int allowed_cpus = rand(3) == 0 ? 4 + rand(9) : kP;
      const CpuMask allowed = CpuMask::Range(kP, 0, allowed_cpus - 1);
      auto mm = m.CreateMm(allowed, now);
      if (!mm.ok()) return {absl::StrCat(where, ": CreateMm: ", mm.status().ToString())};
      place.MmCreated(*mm, now);
      std::vector<TaskId> mine;
      auto fork = [&]() {
        const TaskId t = static_cast<TaskId>(cpu_of.size());
        cpu_of.push_back(rand(allowed_cpus));
        alive.push_back(true);
        if (absl::Status st = m.Fork(mine.empty() ? kNoTask : mine.front(), t, *mm, allowed, now);
            !st.ok()) {
          found.push_back(absl::StrCat("Fork: ", st.ToString()));
        }
        mine.push_back(t);
      };
      // Users rise to 1/2 .. 1.5 x the union, the tasks spread over it.
      auto rounds = [&](int n) {
        for (int r = 0; r < n && out.empty(); ++r) {
          for (int c = 0; c < allowed_cpus && out.empty(); ++c) {
            const int cpu = rand(allowed_cpus);
            std::vector<TaskId> ready;
            for (TaskId t : mine) {
              if (alive[static_cast<size_t>(t)] && !running(t)) ready.push_back(t);
            }
            if (ready.empty() || rand(4) == 0) {
              idle(cpu);
            } else {
              run_on(cpu, ready[static_cast<size_t>(rand(static_cast<int>(ready.size())))]);
            }
            if (!ok("switch")) break;
          }
          if (rand(3) == 0) place.Housekeeping(now);
        }
      };
      const int high = std::max(2, allowed_cpus / 2 + rand(allowed_cpus));
      while (static_cast<int>(mine.size()) < high) fork();
      rounds(4);
      // Users drop to 1-3: the others run once more somewhere and exit there,
      // survivors switching in between (high IDs parked, max_nr_cid above users).
      const int keep = 1 + rand(3);
      for (size_t i = static_cast<size_t>(keep); i < mine.size() && out.empty(); ++i) {
        const TaskId t = mine[i];
        if (!running(t)) run_on(rand(allowed_cpus), t);
        const int cpu = cpu_of[static_cast<size_t>(t)];
        if (absl::Status st = m.Exit(cpu, t, now); !st.ok())
          found.push_back(absl::StrCat("Exit: ", st.ToString()));
        alive[static_cast<size_t>(t)] = false;
        m.ContextSwitch(cpu, t, kNoTask, now);
        curr[static_cast<size_t>(cpu)] = kNoTask;
        if (!ok("exit")) break;
        const TaskId s = mine[static_cast<size_t>(rand(keep))];
        if (!running(s)) run_on(rand(allowed_cpus), s);
        if (!ok("survivor")) break;
        if (rand(2) == 0) idle(cpu_of[static_cast<size_t>(s)]);
      }
      rounds(2);
      // Regrow, run, then the wave's tasks exit.
      while (static_cast<int>(mine.size()) < keep + high) fork();
      rounds(2);
      for (TaskId t : mine) {
        if (!alive[static_cast<size_t>(t)] || !out.empty()) continue;
        if (!running(t)) run_on(cpu_of[static_cast<size_t>(t)], t);
        const int cpu = cpu_of[static_cast<size_t>(t)];
        if (absl::Status st = m.Exit(cpu, t, now); !st.ok())
          found.push_back(absl::StrCat("Exit: ", st.ToString()));
        alive[static_cast<size_t>(t)] = false;
        m.ContextSwitch(cpu, t, kNoTask, now);
        curr[static_cast<size_t>(cpu)] = kNoTask;
        if (!ok("wave end")) break;
      }
      now += 10 * kNsPerMs;
      place.Housekeeping(now);
      if (out.empty()) ok("wave end, quiescent", /*quiescent=*/true);
    }
    if (!out.empty()) return out;
    // The schedule must reach what it is for, or it shows nothing.
    auto reached = [&](int64_t n, int64_t want, const char* what) {
      if (n < want) {
        out.push_back(absl::StrCat(where, ": only ", n, " of ", watch.allocations(),
                                   " allocations ", what, " (want >= ", want, ")"));
      }
    };
    // A design that allocates at fork (ids_at_fork) hands out most IDs where
    // no task runs with them yet; the watch sees its schedin allocations only.
    if (traits->design.ids_at_fork) {
      reached(watch.allocations(), waves, "checked at schedin (1 per wave)");
    } else {
      reached(watch.allocations(), 5 * waves, "checked (5 per wave)");
      reached(watch.users_dropped(), waves / 2,
              "after users dropped to an ID handed out before (one per 2 waves)");
      reached(watch.narrow_union(), waves / 2,
              "in an mm allowed fewer CPUs than P (one per 2 waves)");
    }
    // Not required: the full-bitmap fallback (every ID below min(users,
    // allowed) taken; AllocationWatch::at_full_bitmap) is reached about once
    // per 40 waves of this schedule.
  }
  return out;
}

namespace {

// Where two instances driven by one schedule differ (empty: nowhere).
std::string StatsDiff(const MmCidStats& a, const MmCidStats& b) {
  std::string d;
  auto field = [&](const char* name, int64_t x, int64_t y) {
    if (x != y) absl::StrAppend(&d, " ", name, " ", x, " vs ", y);
  };
  field("allocations", a.allocations, b.allocations);
  field("frees", a.frees, b.frees);
  field("bitmap_ops", a.bitmap_ops, b.bitmap_ops);
  field("switch_rmw", a.switch_rmw, b.switch_rmw);
  field("context_switches", a.context_switches, b.context_switches);
  field("scans", a.scans, b.scans);
  field("slot_visits", a.slot_visits, b.slot_visits);
  field("lock_fallbacks", a.lock_fallbacks, b.lock_fallbacks);
  field("max_alloc_attempts", a.max_alloc_attempts, b.max_alloc_attempts);
  field("alloc_failures", a.alloc_failures, b.alloc_failures);
  field("mode_changes", a.mode_changes, b.mode_changes);
  field("remote_lock_acquisitions", a.remote_lock_acquisitions, b.remote_lock_acquisitions);
  field("mm_lock_acquisitions", a.mm_lock_acquisitions, b.mm_lock_acquisitions);
  field("mm_lock_contended", a.mm_lock_contended, b.mm_lock_contended);
  field("tick_kick_retakes", a.tick_kick_retakes, b.tick_kick_retakes);
  return d;
}
Violations StateDiff(const RandomModel& a, const RandomModel& b) {
  Violations out;
  for (TaskId t = 0; t < a.next_task; ++t) {
    if (a.m->TaskCid(t) != b.m->TaskCid(t) || a.m->TaskMm(t) != b.m->TaskMm(t) ||
        a.m->TaskActive(t) != b.m->TaskActive(t)) {
      out.push_back(absl::StrCat("task ", t, ": ID ", a.m->TaskCid(t), " vs ", b.m->TaskCid(t),
                                 ", mm ", a.m->TaskMm(t), " vs ", b.m->TaskMm(t), ", active ",
                                 a.m->TaskActive(t), " vs ", b.m->TaskActive(t)));
    }
  }
  for (int c = 0; c < a.p; ++c) {
    if (a.m->CurrentTask(c) != b.m->CurrentTask(c)) {
      out.push_back(
          absl::StrCat("CPU ", c, ": current ", a.m->CurrentTask(c), " vs ", b.m->CurrentTask(c)));
    }
  }
  for (MmId mm = 0; mm < static_cast<MmId>(a.counters.size()); ++mm) {
    if (a.m->CidmaskWeight(mm) != b.m->CidmaskWeight(mm)) {
      out.push_back(absl::StrCat("mm ", mm, ": ", a.m->CidmaskWeight(mm), " vs ",
                                 b.m->CidmaskWeight(mm), " IDs"));
    }
    for (int c = 0; c < a.p; ++c) {
      if (a.m->SlotLazy(mm, c) != b.m->SlotLazy(mm, c))
        out.push_back(absl::StrCat("mm ", mm, " CPU ", c, ": LAZY flag"));
    }
  }
  if (std::string d = StatsDiff(a.m->Stats(), b.m->Stats()); !d.empty())
    out.push_back(absl::StrCat("stats:", d));
  return out;
}

}  // namespace

Violations CheckSwitcherMatchesContextSwitch(const MmCidVariant& v, int p, uint64_t seed, int steps,
                                             bool journaled) {
  RandomModel virt(p, v, seed);
  RandomModel inl(p, v, seed, /*via_switcher=*/true);
  if (virt.m == nullptr) return virt.violations;
  for (RandomModel* model : {&virt, &inl}) {
    for (int i = 0; i < 6; ++i) model->Spawn(kNoMm, kNoTask);
    for (int i = 0; i < 20; ++i) model->Spawn(static_cast<MmId>(i % 3), kNoTask);
  }
  const std::string where =
      absl::StrCat(v.Name(), " p=", p, " seed=", seed, journaled ? " journaled" : "",
                   " (virtual ContextSwitch vs Switcher)");
  for (int step = 0; step < steps; ++step) {
    virt.Step();
    inl.Step();
    Violations found = StateDiff(virt, inl);
    if (journaled) {
      // The journal the switcher writes through JournalSwitch: the
      // incremental check must see every change the switch made.
      for (std::string& s : inl.m->CheckAlwaysIncremental()) found.push_back("incremental: " + s);
    }
    for (std::string& s : AllViolations(*inl.m, /*quiescent=*/true)) found.push_back(s);
    found.insert(found.end(), inl.violations.begin(), inl.violations.end());
    if (!found.empty()) {
      Violations out;
      internal::AddPrefixed(out, found, absl::StrCat(where, " step=", step));
      return out;
    }
  }
  return {};
}

Violations CheckSingleThread(const MmCidVariant& v) {
  Violations out;
  auto created = MmCid::Create(8, v);
  if (!created.ok()) return {created.status().ToString()};
  MmCid& m = **created;
  const MmId mm = *m.CreateMm(CpuMask::Full(8), 0);
  if (!m.Fork(kNoTask, 0, mm, CpuMask::Full(8), 0).ok()) out.push_back("S1: fork failed");
  m.ContextSwitch(3, kNoTask, 0, 1000);
  if (m.TaskCid(0) != 0)
    out.push_back(absl::StrCat("S1: single thread on CPU 3 has ID ", m.TaskCid(0), ", not 0"));
  auto nmm = m.Exec(3, 0, CpuMask::Full(8), 2000);
  if (!nmm.ok()) return {absl::StrCat("S1: exec: ", nmm.status().ToString())};
  if (m.TaskCid(0) != 0) out.push_back(absl::StrCat("S1: after exec ID ", m.TaskCid(0), ", not 0"));
  if (m.CidmaskWeight(mm) != 0) out.push_back("I15: the old mm's ID was not freed at exec");
  internal::AddPrefixed(out, AllViolations(m, true), "S1");
  return out;
}

Violations CheckRestrictedAffinity(const MmCidVariant& v) {
  const int p = 32;
  auto created = MmCid::Create(p, v);
  if (!created.ok()) return {created.status().ToString()};
  MmCid& m = **created;
  auto traits = isolation::mm_cid::DescribeVariant(v);
  if (!traits.ok()) return {traits.status().ToString()};
  const CpuMask allowed = CpuMask::Range(p, 10, 20);
  const MmId mm = *m.CreateMm(allowed, 0);
  std::mt19937_64 rng(42);
  std::vector<int> cpu_of(32);
  std::vector<TaskId> curr(static_cast<size_t>(p), kNoTask);
  for (int t = 0; t < 32; ++t) {
    if (!m.Fork(kNoTask, t, mm, allowed, 0).ok()) return {"S3: fork failed"};
    cpu_of[static_cast<size_t>(t)] = 10 + t % 11;
  }
  int32_t max_id = -1;
  Nanos now = 0;
  AllocationWatch watch(m, *traits);
  Violations at_allocation;
  for (int step = 0; step < 20000; ++step) {
    now += 100 * kNsPerUs;
    const int cpu = 10 + static_cast<int>(rng() % 11);
    const TaskId t = static_cast<TaskId>(rng() % 32);
    if (rng() % 3 == 0 && curr[static_cast<size_t>(cpu_of[static_cast<size_t>(t)])] != t) {
      const int to = 10 + static_cast<int>(rng() % 11);
      m.Migrate(t, cpu_of[static_cast<size_t>(t)], to, now);
      cpu_of[static_cast<size_t>(t)] = to;
      continue;
    }
    if (cpu_of[static_cast<size_t>(t)] != cpu) continue;
    if (std::find(curr.begin(), curr.end(), t) != curr.end()) continue;  // running elsewhere
    watch.Before(t);
    m.ContextSwitch(cpu, curr[static_cast<size_t>(cpu)], t, now);
    watch.After(t, at_allocation);
    curr[static_cast<size_t>(cpu)] = t;
    max_id = std::max(max_id, m.TaskCid(t));
    if (step % 97 == 0) m.Scan(mm, now);
    if (Violations a = m.CheckAlways(); !a.empty() || !at_allocation.empty()) {
      a.insert(a.end(), at_allocation.begin(), at_allocation.end());
      Violations out;
      internal::AddPrefixed(out, a, absl::StrCat("S3 step ", step));
      return out;
    }
  }
  Violations out;
  // lazy: I3 (nr_cpus_allowed = 11); v63_mmlock: first zero among at most 11
  // running tasks; owner619: max_cids = 11 + 11/4 = 13.
  const int bound = IdBound(traits->design, 11, 32, p);
  if (max_id >= bound) out.push_back(absl::StrCat("S3: ID ", max_id, " handed out, bound ", bound));
  if (max_id < 5)
    out.push_back(absl::StrCat("S3: the schedule used IDs only up to ", max_id, " (too weak)"));
  return out;
}

// S4 (mm_cid_compaction_test): N tasks pinned one per CPU, started in reverse
// order (CPU k gets ID N-1-k); barrier then 5 x 500 ms sleeps; the others
// exit; the leader on CPU 0 wakes every 500 ms, runs 2 ms (two ticks hit it)
// and reads its ID; the property: it reads 0 within `polls` polls.
CompactionRun RunCompaction(const MmCidVariant& v, int n, int polls) {
  CompactionRun r;
  const std::unique_ptr<MmCid> owner = internal::CreateOrRecord(v, n, r.invariants);
  if (owner == nullptr) return r;
  MmCid& m = *owner;
  DirectScanRunner place(m);
  Nanos now = 1000;
  const MmId mm = *m.CreateMm(CpuMask::Full(n), now);
  place.MmCreated(mm, now);
  // Forked and started in reverse CPU order (owner619 allocates at fork,
  // lazy at the first switch-in): CPU k's task gets ID N-1-k.
  internal::ForkOnePerCpuReversed(m, mm, n, now, r.invariants);
  for (int k = n - 1; k >= 0; --k) m.ContextSwitch(k, kNoTask, k, now);
  r.leader_start = m.TaskCid(0);
  if (r.leader_start != n - 1) {
    r.invariants.push_back(
        absl::StrCat("S4 setup: the leader starts with ID ", r.leader_start, ", not ", n - 1));
  }
  for (int s = 0; s < 5; ++s) {
    now += 500 * kNsPerMs;
    for (int k = 0; k < n; ++k) m.ContextSwitch(k, k, kNoTask, now);
    for (int k = 0; k < n; ++k) m.ContextSwitch(k, kNoTask, k, now + 1);
  }
  for (int k = 1; k < n; ++k) {
    if (!m.Exit(k, k, now).ok()) r.invariants.push_back("exit");
    m.ContextSwitch(k, k, kNoTask, now);
  }
  m.ContextSwitch(0, 0, kNoTask, now);
  int32_t id = m.TaskCid(0);
  for (int poll = 0; poll < polls; ++poll) {
    const Nanos wake = now + 500 * kNsPerMs;
    // Housekeeping progresses during the sleep.
    for (Nanos t = now + kNsPerMs; t < wake; t += 10 * kNsPerMs) place.Housekeeping(t);
    now = wake;
    m.ContextSwitch(0, kNoTask, 0, now);
    place.ReturnToUser(0, 0, now);
    for (int tick = 1; tick <= 2; ++tick) {
      place.Tick(0, 0, now + tick * kNsPerMs);
      place.ReturnToUser(0, 0, now + tick * kNsPerMs);
    }
    place.Housekeeping(now + 3 * kNsPerMs);
    id = m.TaskCid(0);
    r.polls = poll + 1;
    internal::AddPrefixed(r.invariants, m.CheckAlways(), absl::StrCat("S4 poll ", poll));
    m.ContextSwitch(0, 0, kNoTask, now + 3 * kNsPerMs);
    if (id == 0) break;
  }
  r.leader_end = id;
  return r;
}

namespace {
// S4's polls: one where IDs converge at the next schedin, else ten.
int CompactionPolls(const VariantTraits& t) { return t.design.converges_at_schedin ? 1 : 10; }
}  // namespace

Violations CheckCompaction(const MmCidVariant& v) {
  auto t = isolation::mm_cid::DescribeVariant(v);
  if (!t.ok()) return {t.status().ToString()};
  Violations out;
  for (int n : {8, 128}) {
    const CompactionRun r = RunCompaction(v, n, CompactionPolls(*t));
    out.insert(out.end(), r.invariants.begin(), r.invariants.end());
    if (r.leader_end != 0) {
      out.push_back(absl::StrCat("S4/I8 N=", n, ": the leader still holds ID ", r.leader_end,
                                 " after ", r.polls, " polls"));
    }
  }
  return out;
}

namespace {
// S10's starting point: an mm on `p` CPUs whose tasks 0..threads-1 were
// forked (task 0 first, the others from it) and switched in on CPUs
// 0..threads-1.
struct RunningMm {
  std::unique_ptr<MmCid> m;
  MmId mm = 0;
};
absl::StatusOr<RunningMm> StartThreads(const MmCidVariant& v, int p, int threads, Nanos now) {
  auto created = MmCid::Create(p, v);
  if (!created.ok()) return created.status();
  RunningMm r{std::move(*created), 0};
  auto mm = r.m->CreateMm(CpuMask::Full(p), now);
  if (!mm.ok()) return mm.status();
  r.mm = *mm;
  for (int k = 0; k < threads; ++k) {
    const absl::Status s = r.m->Fork(k == 0 ? kNoTask : 0, k, r.mm, CpuMask::Full(p), now);
    if (!s.ok()) return absl::InternalError(absl::StrCat("fork of task ", k, ": ", s.ToString()));
  }
  for (int k = 0; k < threads; ++k) r.m->ContextSwitch(k, kNoTask, k, now);
  return r;
}
}  // namespace

Violations CheckExecAndRejectedFork(const MmCidVariant& v) {
  const int p = 8;
  Nanos now = 1000;
  auto started = StartThreads(v, p, 4, now);
  if (!started.ok()) return {started.status().ToString()};
  MmCid& m = *started->m;
  const MmId old_mm = started->mm;
  Violations out;
  if (m.MmUsers(old_mm) != 4 || m.CidmaskWeight(old_mm) != 4)
    out.push_back("S10 setup: 4 users with 4 IDs");
  // Rejected thread creation: nothing changes.
  if (m.Fork(0, 1, old_mm, CpuMask::Full(p), now).ok())
    out.push_back("S10: a reused task id was accepted");
  if (m.Fork(0, 5, old_mm, CpuMask(p), now).ok())
    out.push_back("S10: an empty affinity was accepted");
  if (m.Fork(0, 6, old_mm + 100, CpuMask::Full(p), now).ok())
    out.push_back("S10: an unknown mm was accepted");
  if (m.MmUsers(old_mm) != 4) out.push_back("S10: a rejected fork changed users");
  if (m.CidmaskWeight(old_mm) != 4) out.push_back("S10: a rejected fork kept an ID");
  internal::AddPrefixed(out, AllViolations(m, true), "S10 after rejected forks");
  now += kNsPerMs;
  auto new_mm = m.Exec(2, 2, CpuMask::Full(p), now);
  if (!new_mm.ok()) return {absl::StrCat("S10: exec: ", new_mm.status().ToString())};
  if (*new_mm == old_mm || m.TaskMm(2) != *new_mm)
    out.push_back("S10: exec did not give a fresh mm");
  if (m.TaskCid(2) != 0)
    out.push_back(absl::StrCat("S10: the exec'ing task has ID ", m.TaskCid(2), ", not 0"));
  if (m.MmUsers(*new_mm) != 1 || m.CidmaskWeight(*new_mm) != 1)
    out.push_back("S10: the fresh mm has one user, one ID");
  if (m.MmUsers(old_mm) != 3)
    out.push_back(absl::StrCat("S10: exec left the old mm's users at ", m.MmUsers(old_mm)));
  if (m.CidmaskWeight(old_mm) != 3) out.push_back("S10: the exec'ing task's old ID was not freed");
  internal::AddPrefixed(out, AllViolations(m, true), "S10 after exec");
  for (int k : {0, 1, 3}) {  // de_thread(): the other threads exit
    now += kNsPerMs;
    if (!m.Exit(k, k, now).ok()) out.push_back("exit");
    m.ContextSwitch(k, k, kNoTask, now);
  }
  if (m.MmUsers(old_mm) != 0 || m.CidmaskWeight(old_mm) != 0)
    out.push_back("S10: the others' IDs were not freed");
  if (m.TaskCid(2) != 0) out.push_back("S10: the exec'ing task lost ID 0");
  internal::AddPrefixed(out, AllViolations(m, true), "S10 after de_thread");
  return out;
}

Violations CheckFailedFork(const MmCidVariant& v) {
  const int p = 8;
  auto traits = isolation::mm_cid::DescribeVariant(v);
  if (!traits.ok()) return {traits.status().ToString()};
  Nanos now = 1000;
  auto started = StartThreads(v, p, 4, now);
  if (!started.ok()) return {started.status().ToString()};
  MmCid& m = *started->m;
  const MmId mm = started->mm;
  Violations out;
  now += kNsPerMs;
  if (!m.Fork(0, 4, mm, CpuMask::Full(p), now).ok()) return {"S10: fork of the child failed"};
  if (m.MmUsers(mm) != 5) out.push_back("S10: the child is not accounted at fork");
  const int ids_after_fork = traits->design.ids_at_fork ? 5 : 4;
  if (m.CidmaskWeight(mm) != ids_after_fork) {
    out.push_back(absl::StrCat("S10: ", m.CidmaskWeight(mm),
                               " IDs after the fork, the design declares ", ids_after_fork));
  }
  if (!m.ForkFailed(4, now).ok()) out.push_back("S10: ForkFailed of the child refused");
  if (m.MmUsers(mm) != 4) out.push_back("S10: a failed fork did not roll back users");
  if (m.CidmaskWeight(mm) != 4) out.push_back("S10: a failed fork did not release the child's ID");
  if (m.TaskActive(4)) out.push_back("S10: the rolled-back child is still active");
  internal::AddPrefixed(out, AllViolations(m, true), "S10 after rollback");
  if (m.ForkFailed(-1, now).code() != absl::StatusCode::kInvalidArgument)
    out.push_back("ForkFailed(-1) not refused");
  if (m.ForkFailed(4, now).code() != absl::StatusCode::kInvalidArgument)
    out.push_back("a second rollback not refused");
  if (m.ForkFailed(99, now).code() != absl::StatusCode::kInvalidArgument)
    out.push_back("ForkFailed(99) not refused");
  if (m.ForkFailed(1, now).code() != absl::StatusCode::kFailedPrecondition)
    out.push_back("a running child rolled back");
  if (m.MmUsers(mm) != 4) out.push_back("a rejected ForkFailed changed users");
  now += kNsPerMs;
  if (!m.Fork(0, 4, mm, CpuMask::Full(p), now).ok())
    out.push_back("S10: the id cannot be forked again");
  m.ContextSwitch(4, kNoTask, 4, now);
  if (m.TaskCid(4) < 0) out.push_back("S10: the re-forked child runs without an ID");
  if (m.MmUsers(mm) != 5 || m.CidmaskWeight(mm) != 5)
    out.push_back("S10: re-fork: 5 users with 5 IDs");
  internal::AddPrefixed(out, AllViolations(m, true), "S10 after re-fork");
  if (!m.Exit(4, 4, now).ok()) out.push_back("exit");
  m.ContextSwitch(4, 4, kNoTask, now);
  if (m.ForkFailed(4, now).code() != absl::StatusCode::kFailedPrecondition)
    out.push_back("an exited child rolled back");
  return out;
}

Violations CheckVforkSharer(const MmCidVariant& v) {
  const int p = 8;
  Nanos now = 1000;
  auto started = StartThreads(v, p, 3, now);
  if (!started.ok()) return {started.status().ToString()};
  MmCid& m = *started->m;
  const MmId mm = started->mm;
  Violations out;
  if (!m.ForkVm(0, 3, mm, CpuMask::Full(p), now).ok()) return {"S10: ForkVm failed"};
  if (m.MmUsers(mm) != 4) out.push_back("S10: a CLONE_VM sharer is not counted in users");
  if (m.TaskMm(3) != mm) out.push_back("S10: the sharer is not in the mm");
  m.ContextSwitch(3, kNoTask, 3, now);
  std::vector<int32_t> ids;
  for (int k = 0; k < 4; ++k) ids.push_back(m.TaskCid(k));
  std::sort(ids.begin(), ids.end());
  if (ids != std::vector<int32_t>{0, 1, 2, 3})
    out.push_back("S10: sharer and threads do not hold IDs {0..3}");
  internal::AddPrefixed(out, AllViolations(m, true), "S10 vfork");
  if (m.ForkVm(0, 3, mm, CpuMask::Full(p), now).ok())
    out.push_back("ForkVm of a reused id accepted");
  if (m.ForkVm(0, 5, mm + 7, CpuMask::Full(p), now).ok())
    out.push_back("ForkVm into an unknown mm accepted");
  now += kNsPerMs;
  if (!m.Exit(3, 3, now).ok()) out.push_back("exit");
  m.ContextSwitch(3, 3, kNoTask, now);
  if (m.MmUsers(mm) != 3 || m.CidmaskWeight(mm) != 3)
    out.push_back("S10: the sharer's exit did not release it");
  internal::AddPrefixed(out, AllViolations(m, true), "S10 vfork exit");
  return out;
}

// A vfork sharer (ForkVm: its own thread group) is queued, not running,
// while the ninth user of an 8-CPU union is forked -- the fork that turns
// owner619 per-CPU, whose tasks->CPUs fixup must reach the sharer.  Every
// design: the quiescent invariants hold after that fork, and the sharer
// then runs with an ID distinct from the others'.
Violations CheckVforkSharerAtModeFlip(const MmCidVariant& v) {
  const int p = 8;
  auto created = MmCid::Create(p, v);
  if (!created.ok()) return {created.status().ToString()};
  MmCid& m = **created;
  Violations out;
  Nanos now = 1000;
  const MmId mm = *m.CreateMm(CpuMask::Full(p), now);
  const TaskId kSharer = 6;
  for (int k = 0; k < 8; ++k) {
    const absl::Status s = k == kSharer
                               ? m.ForkVm(0, k, mm, CpuMask::Full(p), now)
                               : m.Fork(k == 0 ? kNoTask : 0, k, mm, CpuMask::Full(p), now);
    if (!s.ok()) out.push_back("fork");
  }
  for (int k = 0; k < 5; ++k) m.ContextSwitch(k, kNoTask, k, now);  // 5, 6, 7 queued
  if (m.MmUsers(mm) != 8) out.push_back("S10: the sharer is not a user");
  if (!m.Fork(0, 8, mm, CpuMask::Full(p), now).ok()) out.push_back("fork of the ninth user");
  internal::AddPrefixed(out, AllViolations(m, true), "S10 vfork sharer after the ninth fork");
  now += kNsPerMs;
  m.ContextSwitch(6, kNoTask, kSharer, now);
  m.ContextSwitch(5, kNoTask, 5, now);
  if (m.TaskCid(kSharer) < 0) out.push_back("S10: the sharer runs without an ID");
  internal::AddPrefixed(out, AllViolations(m, true), "S10 vfork sharer runs");
  return out;
}

// S13 on the direct API: 8 CPUs, one task pinned per CPU; the survivor on
// CPU 7 is started last (lazy, v63_mmlock: the highest ID) and busy-loops
// with the tick on (4 ms) for 1 s, never switching, while its 7 siblings
// exit; then it sleeps once (its next schedin).
NeverPreemptedRun RunNeverPreempted(const MmCidVariant& v) {
  NeverPreemptedRun r;
  const int p = 8;
  const TaskId survivor = p - 1;
  const std::unique_ptr<MmCid> owner = internal::CreateOrRecord(v, p, r.invariants);
  if (owner == nullptr) return r;
  MmCid& m = *owner;
  DirectScanRunner place(m);
  Nanos now = 1000;
  const MmId mm = *m.CreateMm(CpuMask::Full(p), now);
  place.MmCreated(mm, now);
  internal::ForkOnePerCpuReversed(m, mm, p, now, r.invariants);
  for (int k = 0; k < p; ++k) m.ContextSwitch(k, kNoTask, k, now);
  r.start_id = m.TaskCid(survivor);
  const int64_t scans_before = m.Stats().scans;
  for (int k = 0; k < p - 1; ++k) {
    now += kNsPerMs;
    if (!m.Exit(k, k, now).ok()) r.invariants.push_back("exit");
    m.ContextSwitch(k, k, kNoTask, now);
  }
  const Nanos last_exit = now;
  for (int tick = 0; tick < 250; ++tick) {
    now += 4 * kNsPerMs;
    place.Tick(survivor, survivor, now);
    place.ReturnToUser(survivor, survivor, now);
    place.Housekeeping(now + 1);
    const int32_t id = m.TaskCid(survivor);
    if (r.changed_after_last_exit < 0 && id != r.start_id)
      r.changed_after_last_exit = now - last_exit;
    r.id_end_of_busy = id;
    internal::AddPrefixed(r.invariants, m.CheckAlways(), absl::StrCat("S13 tick ", tick));
    if (!r.invariants.empty()) return r;
  }
  r.scans_while_busy = m.Stats().scans - scans_before;
  r.kick_retakes = m.Stats().tick_kick_retakes;
  now += kNsPerMs;
  m.ContextSwitch(survivor, survivor, kNoTask, now);
  place.Housekeeping(now + 1);
  m.ContextSwitch(survivor, kNoTask, survivor, now + 2);
  r.id_after_schedin = m.TaskCid(survivor);
  internal::AddPrefixed(r.invariants, AllViolations(m, false), "S13 after schedin");
  return r;
}

namespace internal {

void ForkOnePerCpuReversed(MmCid& m, isolation::mm_cid::MmId mm, int cpus, Nanos now,
                           Violations& invariants) {
  for (int k = cpus - 1; k >= 0; --k) {
    if (!m.Fork(k == cpus - 1 ? kNoTask : cpus - 1, k, mm, CpuMask::Of(cpus, k), now).ok()) {
      invariants.push_back("fork");
    }
  }
}

}  // namespace internal

namespace internal {
Violations NeverPreemptedExpectations(const VariantTraits& t, int32_t start_id,
                                      int32_t id_end_of_busy, Nanos changed_after_last_exit,
                                      int32_t id_after_schedin, int64_t scans, int64_t kick_retakes,
                                      Nanos kick_bound) {
  Violations out;
  const int32_t high = 7;
  if (!t.design.ids_at_fork && start_id != high) {
    out.push_back(
        absl::StrCat("S13 setup: the survivor starts with ID ", start_id, ", not ", high));
  }
  if (t.design.lazy_axes && scans <= 0)
    out.push_back("S13: no compaction scan ran while the survivor was busy");
  if (!t.design.lazy_axes && scans != 0) out.push_back("S13: a design without a scan scanned");
  if (!t.tick_kick) {
    if (changed_after_last_exit >= 0)
      out.push_back("S13: the ID changed while the survivor never switched");
    if (kick_retakes != 0) out.push_back("S13: IDs re-taken without the tick kick");
  } else if (kick_retakes <= 0) {
    out.push_back("S13: the tick kick never re-took the ID");
  }
  const bool compacts = t.design.converges_at_schedin || t.allocator.compacts;
  if (t.tick_kick && compacts) {
    if (changed_after_last_exit < 0 || id_end_of_busy != 0) {
      out.push_back(absl::StrCat("S13 kick: the busy survivor's ID is ", id_end_of_busy,
                                 ", not re-taken to 0"));
    } else if (changed_after_last_exit > kick_bound) {
      out.push_back(absl::StrCat("S13 kick: re-taken ", changed_after_last_exit / kNsPerMs,
                                 " ms after the last exit, not within ~200 ms"));
    }
  }
  if (t.tick_kick && !compacts && changed_after_last_exit >= 0) {
    out.push_back("S13 kick: an allocator declared non-compacting changed the busy survivor's ID");
  }
  if (compacts && id_after_schedin != 0) {
    out.push_back(absl::StrCat("S13: after the next schedin the survivor holds ID ",
                               id_after_schedin, ", not 0"));
  }
  if (!compacts && id_after_schedin != start_id) {
    out.push_back(absl::StrCat("S13: a non-compacting allocator moved the survivor from ", start_id,
                               " to ", id_after_schedin));
  }
  return out;
}
}  // namespace internal

Violations CheckNeverPreempted(const MmCidVariant& v) {
  auto t = isolation::mm_cid::DescribeVariant(v);
  if (!t.ok()) return {t.status().ToString()};
  const NeverPreemptedRun r = RunNeverPreempted(v);
  Violations out = r.invariants;
  Violations e = internal::NeverPreemptedExpectations(
      *t, r.start_id, r.id_end_of_busy, r.changed_after_last_exit, r.id_after_schedin,
      r.scans_while_busy, r.kick_retakes, 2 * kScanDelayNs + 2 * 4 * kNsPerMs);
  out.insert(out.end(), e.begin(), e.end());
  return out;
}

// S14: a fence cannot be targeted at an ID -- the CPU a task running with
// ID k sits on changes (migration, hand-over, a parked ID taken by another
// task), so "the CPUs running ID k" chosen at one moment miss a later holder;
// users fence every CPU of the mm instead.  Checked: at every switch-in the
// CPU is in the mm's CPU union (MmAllowed: what such a fence covers), and
// the schedule does move IDs between CPUs and runs tasks on CPUs that only
// affinity growth added to the mm (else it shows nothing): the forks use
// CPUs 0-6, the growth any of the 8 (more CPUs than tasks, as before, so
// owner619 stays in per-task mode and IDs move).
Violations CheckFenceTargets(const MmCidVariant& v) {
  const int p = 8;
  auto created = MmCid::Create(p, v);
  if (!created.ok()) return {created.status().ToString()};
  MmCid& m = **created;
  DirectScanRunner place(m);
  Violations out;
  std::mt19937_64 rng(14);
  const MmId mm = *m.CreateMm(CpuMask::Of(p, 0), 0);
  place.MmCreated(mm, 0);
  const int kTasks = 6;
  std::vector<int> cpu_of(kTasks);
  std::vector<CpuMask> affinity(kTasks);
  std::vector<TaskId> curr(static_cast<size_t>(p), kNoTask);
  for (int t = 0; t < kTasks; ++t) {
    affinity[static_cast<size_t>(t)] = CpuMask::Range(p, t, std::min(p - 2, t + 2));
    if (!m.Fork(t == 0 ? kNoTask : 0, t, mm, affinity[static_cast<size_t>(t)], 0).ok())
      out.push_back("fork");
    cpu_of[static_cast<size_t>(t)] = affinity[static_cast<size_t>(t)].First();
  }
  std::map<int32_t, int> last_cpu_of_id;
  int moves = 0;
  int runs_on_grown_cpus = 0;  // switch-ins on CPU 7, outside every fork's affinity
  Nanos now = 0;
  for (int step = 0; step < 4000 && out.empty(); ++step) {
    now += 50 * kNsPerUs;
    const TaskId t = static_cast<TaskId>(rng() % kTasks);
    const int from = cpu_of[static_cast<size_t>(t)];
    if (curr[static_cast<size_t>(from)] == t) {
      m.ContextSwitch(from, t, kNoTask, now);
      curr[static_cast<size_t>(from)] = kNoTask;
      continue;
    }
    if (std::find(curr.begin(), curr.end(), t) != curr.end()) continue;
    if (rng() % 4 == 0) {  // affinity grows (a later fence must cover it)
      CpuMask grown = affinity[static_cast<size_t>(t)];
      grown.Set(static_cast<int>(rng() % p));
      affinity[static_cast<size_t>(t)] = grown;
      if (!m.SetAffinity(t, grown, now).ok()) out.push_back("SetAffinity");
    }
    const CpuMask& a = affinity[static_cast<size_t>(t)];
    const int to = a.Nth(static_cast<int>(rng() % static_cast<uint64_t>(a.Weight())));
    if (to != from) m.Migrate(t, from, to, now);
    cpu_of[static_cast<size_t>(t)] = to;
    if (curr[static_cast<size_t>(to)] != kNoTask)
      m.ContextSwitch(to, curr[static_cast<size_t>(to)], kNoTask, now);
    m.ContextSwitch(to, kNoTask, t, now);
    curr[static_cast<size_t>(to)] = t;
    place.ReturnToUser(to, t, now);
    if (step % 50 == 0) place.Housekeeping(now);
    const int32_t id = m.TaskCid(t);
    if (to == p - 1) ++runs_on_grown_cpus;
    if (!m.MmAllowed(mm).Test(to)) {
      out.push_back(absl::StrCat("S14: task ", t, " runs with ID ", id, " on CPU ", to,
                                 ", outside the mm's CPU union {", m.MmAllowed(mm).ToString(),
                                 "}"));
    }
    if (id >= 0) {
      auto it = last_cpu_of_id.find(id);
      if (it != last_cpu_of_id.end() && it->second != to) ++moves;
      last_cpu_of_id[id] = to;
    }
    internal::AddPrefixed(out, m.CheckAlways(), absl::StrCat("S14 step ", step));
  }
  if (out.empty() && moves == 0)
    out.push_back("S14: no ID ever moved to another CPU (the schedule shows nothing)");
  if (out.empty() && runs_on_grown_cpus == 0) {
    out.push_back(
        "S14: no task ran on a CPU only affinity growth added (the schedule shows nothing)");
  }
  return out;
}

// ---- the suite -----------------------------------------------------------------

TEST_P(MmCidConformance, I1_I6_I15_RandomSchedules_S2Counters) {
  RunAsTest("I1_I6_I15_RandomSchedules_S2Counters", GetParam());
}

// The inline switch front end (MmCid::Switcher()) and the virtual
// ContextSwitch, driven by one random schedule each, stay in the same state
// after every event (with and without the incremental check's journal).
TEST_P(MmCidConformance, SwitcherMatchesContextSwitch) {
  RunAsTest("SwitcherMatchesContextSwitch", GetParam());
}

// The ID bound at allocation on the allocator's rare paths.
TEST_P(MmCidConformance, I2_I3_AllocationBound_RarePaths) {
  RunAsTest("I2_I3_AllocationBound_RarePaths", GetParam());
}

TEST_P(MmCidConformance, S1_SingleThread) { RunAsTest("S1_SingleThread", GetParam()); }

TEST_P(MmCidConformance, S3_RestrictedAffinity_I3) {
  RunAsTest("S3_RestrictedAffinity_I3", GetParam());
}

TEST_P(MmCidConformance, S4_Compaction_I8) { RunAsTest("S4_Compaction_I8", GetParam()); }

TEST_P(MmCidConformance, S10_ExecAndRejectedFork) {
  RunAsTest("S10_ExecAndRejectedFork", GetParam());
}

TEST_P(MmCidConformance, S10_FailedForkRollsBack) {
  RunAsTest("S10_FailedForkRollsBack", GetParam());
}

TEST_P(MmCidConformance, S10_VforkSharer) { RunAsTest("S10_VforkSharer", GetParam()); }

TEST_P(MmCidConformance, S10_VforkSharerAtModeFlip_I11) {
  RunAsTest("S10_VforkSharerAtModeFlip_I11", GetParam());
}

TEST_P(MmCidConformance, S13_NeverPreemptedThread_I4) {
  RunAsTest("S13_NeverPreemptedThread_I4", GetParam());
}

TEST_P(MmCidConformance, S14_FenceEveryCpuOfTheMm) {
  RunAsTest("S14_FenceEveryCpuOfTheMm", GetParam());
}

// A binary that links the kit without instantiating this suite is not an error.
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(MmCidConformance);

namespace internal {
int MmCidConformanceAnchor() { return 0; }
}  // namespace internal

}  // namespace isolation::testing::mm_cid
