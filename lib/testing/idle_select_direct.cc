// SPDX-License-Identifier: GPL-2.0-or-later
// The idle_select conformance kit: helpers, the check dispatcher, and the
// direct-API suite (IdleSelectConformance): seeded random schedules over
// fixed seeds and forced scenarios, through IdleState's entry points only.
// Labels (I*, S*) are those of docs/idle_select.md.

#include <algorithm>
#include <cctype>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "isolation/idle_select/selector.h"
#include "isolation/testing/idle_select.h"
#include "isolation/testing/violations.h"
#include "testing/idle_select_checks.h"

namespace isolation::testing {

void MakeBusy(idle_select::IdleState& st, int cpu) {
  if (st.cpu(cpu).curr_is_idle) {
    st.IdleExit(cpu);     // put_prev_task_idle()
    st.TickRestart(cpu);  // tick_nohz_idle_exit()
  }
  st.SetNrRunning(cpu, 1);
  st.SetNrSchedIdle(cpu, 0);
  st.SetWakePending(cpu, false);
}

void MakeBusySettled(idle_select::IdleState& st, int cpu) {
  MakeBusy(st, cpu);
  st.Tick(cpu);
}

void MakeIdle(idle_select::IdleState& st, int cpu) {
  st.SetNrRunning(cpu, 0);
  st.SetNrSchedIdle(cpu, 0);
  st.SetWakePending(cpu, false);
  st.IdleEnter(cpu);
  st.TickStop(cpu);
}

absl::StatusOr<std::unique_ptr<idle_select::IdleState>> NewIdleState(
    std::string_view selector, absl::StatusOr<idle_select::IdleTopology> topology,
    idle_select::Options options) {
  options.variant = selector;
  return idle_select::IdleState::Create(std::move(topology), std::move(options));
}

namespace idle_select_conformance {

std::unique_ptr<is::IdleState> StateOrViolation(const std::string& selector,
                                                absl::StatusOr<is::IdleTopology> topology,
                                                is::Options options, Violations& v) {
  auto st = NewIdleState(selector, std::move(topology), std::move(options));
  if (!st.ok()) {
    v.push_back(absl::StrCat("cannot create selector '", selector, "': ", st.status().ToString()));
    return nullptr;
  }
  return *std::move(st);
}

int RandomCpu(const is::IdleState& st, std::mt19937_64& rng) {
  return static_cast<int>(rng() % static_cast<uint64_t>(st.num_cpus()));
}

void RandomStep(is::IdleState& st, std::mt19937_64& rng) {
  const int cpu = RandomCpu(st, rng);
  switch (rng() % 8) {
    case 0:
    case 1:
      MakeBusy(st, cpu);
      break;
    case 2:
    case 3:
      MakeIdle(st, cpu);
      break;
    case 4:
      st.Tick(cpu);
      break;
    case 5:  // a short idle: the tick keeps running
      st.SetNrRunning(cpu, 0);
      st.SetNrSchedIdle(cpu, 0);
      st.SetWakePending(cpu, false);
      st.IdleEnter(cpu);
      break;
    case 6:
      if (!st.cpu(cpu).curr_is_idle && st.cpu(cpu).nr_running > 0) {
        st.SetNrSchedIdle(cpu, st.cpu(cpu).nr_running);  // runs only SCHED_IDLE tasks
      } else {
        st.SetWakePending(cpu, (rng() & 1) != 0);
      }
      break;
    case 7:
      if (st.cpu(cpu).curr_is_idle) st.Enqueue(cpu);  // the wakeup landed, the switch is to come
      break;
  }
}

namespace {

CpuMask RandomAffinity(int n, std::mt19937_64& rng) {
  CpuMask m(n);
  const int mode = static_cast<int>(rng() % 3);
  if (mode == 0) return CpuMask::Full(n);
  for (int c = 0; c < n; ++c) {
    if (rng() % (mode == 1 ? 2 : 8) == 0) m.Set(c);
  }
  if (m.Empty()) m.Set(static_cast<int>(rng() % static_cast<uint64_t>(n)));
  return m;
}

std::string Where(uint64_t seed, int step) {
  return absl::StrCat("seed ", seed, " step ", step, ": ");
}

std::string CpuState(const is::IdleState& st, int cpu) {
  const is::CpuSnapshot c = st.cpu(cpu);
  return absl::StrCat("cpu ", cpu, " {curr_is_idle ", c.curr_is_idle, ", nr_running ", c.nr_running,
                      ", nr_sched_idle ", c.nr_sched_idle, ", ttwu_pending ", c.ttwu_pending, "}");
}

// ---------------------------------------------------------------------------
// I1 Subset (quiescent), after random schedules with rebuilds.
Violations CheckI1(const std::string& sel) {
  Violations v;
  for (uint64_t seed = 1; seed <= 10 && v.empty(); ++seed) {
    std::mt19937_64 rng(seed);
    auto st = StateOrViolation(sel, is::IdleTopology::Uniform(2, 8, 2, 2), {}, v);
    if (st == nullptr) return v;
    const int n = st->num_cpus();
    for (int i = 0; i < 2000; ++i) {
      RandomStep(*st, rng);
      if (i % 97 == 0) {
        CpuMask iso(n);
        for (int c = 0; c < n; ++c) {
          if (rng() % 4 == 0) iso.Set(c);
        }
        if (absl::Status s = st->Rebuild(iso); !s.ok()) v.push_back(Where(seed, i) + s.ToString());
      }
      if (i % 4 == 0) {
        is::WakeTask t{.prev_cpu = RandomCpu(*st, rng)};
        const is::Selection s = st->Select(t, {.target = RandomCpu(*st, rng)});
        if (s.claimed) MakeBusy(*st, s.cpu);
      }
      if (std::string e = st->CheckSubsetInvariant(); !e.empty()) {
        v.push_back(Where(seed, i) + e);
        break;
      }
      const CpuMask hint = st->selector().IdleHint();
      if (hint.nbits() != 0 && !hint.IsSubsetOf(st->topology().online)) {
        v.push_back(Where(seed, i) + "I1: idle hint " + hint.ToString() + " holds an offline CPU");
        break;
      }
    }
  }
  return v;
}

// I2 Isolation: a domain-isolated CPU is returned only as the target itself.
Violations CheckI2(const std::string& sel) {
  Violations v;
  std::mt19937_64 rng(42);
  auto st = StateOrViolation(sel, is::IdleTopology::Uniform(2, 8, 2), {}, v);
  if (st == nullptr) return v;
  CpuMask iso(32);
  for (int c : {1, 5, 6, 7, 20, 21, 30}) iso.Set(c);
  if (absl::Status s = st->Rebuild(iso); !s.ok()) return {s.ToString()};
  for (int i = 0; i < 5000 && v.size() < 5; ++i) {
    RandomStep(*st, rng);
    is::WakeTask t{.prev_cpu = RandomCpu(*st, rng), .recent_used_cpu = RandomCpu(*st, rng)};
    const int target = RandomCpu(*st, rng);
    const is::Selection s = st->Select(t, {.target = target});
    if (s.cpu >= 0 && iso.Test(s.cpu) && s.cpu != target) {
      v.push_back(
          absl::StrCat("I2: step ", i, ": isolated cpu ", s.cpu, " returned for target ", target));
    }
  }
  return v;
}

// I3 Affinity + I6 Totality, over topologies with SMT, several LLCs and nodes.
Violations CheckI3I6(const std::string& sel) {
  Violations v;
  for (uint64_t seed = 1; seed <= 20 && v.empty(); ++seed) {
    std::mt19937_64 rng(seed);
    const int smt = seed % 2 == 0 ? 2 : 1;
    auto st = StateOrViolation(sel, is::IdleTopology::Uniform(4, 8 / smt * 2, smt, 2), {}, v);
    if (st == nullptr) return v;
    const bool claims = st->selector().traits().claims_cpus;
    const int n = st->num_cpus();
    for (int i = 0; i < 2000; ++i) {
      RandomStep(*st, rng);
      if (i % 5 == 0)
        (void)st->SetBudget(static_cast<int>(rng() % 4), static_cast<int>(rng() % 17));
      if (i % 3 != 0) continue;
      const CpuMask aff = RandomAffinity(n, rng);
      is::WakeTask t{.prev_cpu = RandomCpu(*st, rng),
                     .recent_used_cpu = static_cast<int>(rng() % static_cast<uint64_t>(n + 1)) - 1,
                     .affinity = &aff};
      const is::WakeContext ctx{.target = RandomCpu(*st, rng),
                                .waker_cpu = RandomCpu(*st, rng),
                                .sync = (rng() & 1) != 0};
      const is::Selection s = st->Select(t, ctx);
      if (!claims && (s.cpu < 0 || s.cpu >= n)) {
        v.push_back(Where(seed, i) + absl::StrCat("I6: scan-style selection returned cpu ", s.cpu));
        break;
      }
      if (claims && (s.cpu < -1 || s.cpu >= n)) {
        v.push_back(Where(seed, i) + absl::StrCat("I6: selection returned cpu ", s.cpu));
        break;
      }
      if (s.cpu >= 0 && !aff.Test(s.cpu)) {
        v.push_back(Where(seed, i) +
                    absl::StrCat("I3: cpu ", s.cpu, " not in affinity ", aff.ToString()));
        break;
      }
      if (s.claimed) MakeBusy(*st, s.cpu);  // the task runs there
    }
  }
  return v;
}

// I4 Hint only: a CPU returned as idle passes the fresh per-CPU check at that
// moment, whatever the hints say (stale masks from CPUs that went busy
// without a tick, wakeups landing on idle CPUs, injected idle-core hints);
// with the 2026 rule a SCHED_IDLE wakee never gets a merely sched-idle CPU.
Violations CheckI4(const std::string& sel) {
  Violations v;
  for (bool rule : {false, true}) {
    for (uint64_t seed = 1; seed <= 10 && v.size() < 5; ++seed) {
      std::mt19937_64 rng(seed * 7919 + (rule ? 1 : 0));
      is::Options o;
      o.sched_idle_wakee_rule = rule;
      auto st =
          StateOrViolation(sel, is::IdleTopology::Uniform(2, 16, seed % 2 == 0 ? 2 : 1), o, v);
      if (st == nullptr) return v;
      for (int i = 0; i < 3000 && v.size() < 5; ++i) {
        RandomStep(*st, rng);
        if (rng() % 4 == 0) (void)st->SetIdleCoresHint(static_cast<int>(rng() % 2), true);
        if (i % 5 == 0)
          (void)st->SetBudget(static_cast<int>(rng() % 2), static_cast<int>(rng() % 33));
        is::WakeTask t{.prev_cpu = RandomCpu(*st, rng),
                       .recent_used_cpu = RandomCpu(*st, rng),
                       .sched_idle = rng() % 3 == 0};
        const is::Selection s = st->Select(t, {.target = RandomCpu(*st, rng)});
        if (!s.idle_found() || s.cpu < 0) continue;
        const bool ok =
            st->AvailableIdleCpu(s.cpu) || (st->SchedIdleCpu(s.cpu) && !(t.sched_idle && rule));
        if (!ok) {
          v.push_back(Where(seed, i) + absl::StrCat("I4: returned as idle ", CpuState(*st, s.cpu),
                                                    rule && t.sched_idle
                                                        ? " (SCHED_IDLE wakee, 2026 rule on)"
                                                        : ""));
        }
      }
    }
  }
  return v;
}

// Sets every CPU of `st` busy with settled masks.
void AllBusySettled(is::IdleState& st) {
  for (int c = 0; c < st.num_cpus(); ++c) MakeBusy(st, c);
  for (int c = 0; c < st.num_cpus(); ++c) st.Tick(c);
}

// I7 Order: target first, then prev (same LLC), then recent_used_cpu (which
// is then rewritten to prev).
Violations CheckI7(const std::string& sel) {
  Violations v;
  auto st = StateOrViolation(sel, is::IdleTopology::Uniform(1, 16), {}, v);
  if (st == nullptr) return v;
  AllBusySettled(*st);
  for (int c : {4, 9, 12}) MakeIdle(*st, c);
  auto expect = [&](const char* what, int got, int want) {
    if (got != want) v.push_back(absl::StrCat("I7: ", what, ": got ", got, ", want ", want));
  };
  is::WakeTask t{.prev_cpu = 9, .recent_used_cpu = 12};
  expect("idle target 4 first", st->Select(t, {.target = 4}).cpu, 4);
  t = {.prev_cpu = 9, .recent_used_cpu = 12};
  expect("busy target 3, idle prev 9", st->Select(t, {.target = 3}).cpu, 9);
  expect("recent_used_cpu untouched before step 4", t.recent_used_cpu, 12);
  t = {.prev_cpu = 8, .recent_used_cpu = 12};
  expect("busy target 3 and prev 8, idle recent_used_cpu 12", st->Select(t, {.target = 3}).cpu, 12);
  expect("recent_used_cpu rewritten to prev", t.recent_used_cpu, 8);
  return v;
}

// I8 Budget: CPU-mode selections probe at most MaxScanProbes(nr_idle_scan)
// CPUs; a selector that promises SIS_UTIL's cut (MaxScanProbes(0) == 0)
// probes nothing at budget 0 and falls back, even with the idle-core hint set.
Violations CheckI8(const std::string& sel) {
  Violations v;
  for (uint64_t seed = 1; seed <= 10 && v.empty(); ++seed) {
    std::mt19937_64 rng(seed);
    auto st = StateOrViolation(sel, is::IdleTopology::Uniform(1, 64), {}, v);
    if (st == nullptr) return v;
    for (int i = 0; i < 3000; ++i) {
      RandomStep(*st, rng);
      const int budget = static_cast<int>(rng() % 65);
      (void)st->SetBudget(0, budget);
      const int limit = st->selector().MaxScanProbes(budget);
      is::WakeTask t{.prev_cpu = RandomCpu(*st, rng)};
      const is::Selection s = st->Select(t, {.target = RandomCpu(*st, rng)});
      if (s.probes > limit) {
        v.push_back(Where(seed, i) + absl::StrCat("I8: ", s.probes, " probes at budget ", budget,
                                                  " (limit ", limit, ")"));
        break;
      }
    }
  }
  auto st = StateOrViolation(sel, is::IdleTopology::Uniform(1, 8, 2), {}, v);
  if (st == nullptr || st->selector().MaxScanProbes(0) != 0) return v;
  AllBusySettled(*st);
  MakeIdle(*st, 8);  // core 4 fully idle
  MakeIdle(*st, 9);
  (void)st->SetIdleCoresHint(0, true);
  (void)st->SetBudget(0, 0);
  is::WakeTask t{.prev_cpu = 0};
  const is::Selection s = st->Select(t, {.target = 0});
  if (s.probes != 0 || s.idle_found()) {
    v.push_back(absl::StrCat("I8: budget 0 with the idle-core hint set: ", s.probes,
                             " probes, cpu ", s.cpu, s.idle_found() ? " found" : "",
                             " (want no probe and the fallback)"));
  }
  return v;
}

std::string IdleCoreHintOnly(const Profile& p) {
  return p.traits.idle_core_hint
             ? ""
             : "the selector does not declare the idle-core hint (SelectorTraits)";
}

// I9 Idle-core hint: set only when every sibling of a CPU entering idle is
// idle; cleared after a complete idle-core scan that found none; never
// cleared by a budget-0 early return; with smt_preference off, never set
// and never consumed.
Violations CheckI9(const std::string& sel) {
  Violations v;
  auto st = StateOrViolation(sel, is::IdleTopology::Uniform(1, 8, 2), {}, v);
  if (st == nullptr) return v;
  AllBusySettled(*st);
  MakeIdle(*st, 5);  // core 2 half idle, no core fully idle
  if (st->llc(0).has_idle_cores) v.push_back("I9: hint set although sibling 4 of cpu 5 is busy");
  (void)st->SetIdleCoresHint(0, true);
  (void)st->SetBudget(0, 16);
  is::WakeTask t{.prev_cpu = 0};
  (void)st->Select(t, {.target = 0});
  if (st->llc(0).has_idle_cores)
    v.push_back("I9: hint still set after an idle-core scan that found no idle core");
  MakeIdle(*st, 6);
  if (st->llc(0).has_idle_cores) v.push_back("I9: hint set while sibling 7 of cpu 6 is busy");
  MakeIdle(*st, 7);
  if (!st->llc(0).has_idle_cores)
    v.push_back("I9: hint not set when core 3 (cpus 6, 7) became fully idle");
  if (st->selector().MaxScanProbes(0) == 0) {
    (void)st->SetBudget(0, 0);
    t = {.prev_cpu = 0};
    (void)st->Select(t, {.target = 0});
    if (!st->llc(0).has_idle_cores) v.push_back("I9: hint cleared by a budget-0 early return");
  }
  // smt_preference off (no sched_smt_active()).
  is::Options off;
  off.smt_preference = false;
  auto plain = StateOrViolation(sel, is::IdleTopology::Uniform(1, 8, 2), off, v);
  if (plain == nullptr) return v;
  AllBusySettled(*plain);
  MakeIdle(*plain, 6);
  MakeIdle(*plain, 7);
  if (plain->llc(0).has_idle_cores)
    v.push_back("I9: smt_preference off, yet a fully idle core set the hint");
  MakeBusySettled(*plain, 6);
  MakeBusySettled(*plain, 7);
  MakeIdle(*plain, 5);
  (void)plain->SetIdleCoresHint(0, true);
  (void)plain->SetBudget(0, 16);
  t = {.prev_cpu = 0};
  (void)plain->Select(t, {.target = 0});
  if (!plain->llc(0).has_idle_cores) {
    v.push_back(
        "I9: smt_preference off, yet a selection ran an idle-core scan (it cleared the hint)");
  }
  return v;
}

std::string HasIdleHint(const Profile& p) {
  if (p.claim_style()) return "";
  return p.traits.idle_hint_clear == is::HintClear::kNoHint
             ? "the selector keeps no idle hint (SelectorTraits)"
             : "";
}

// I10 Staleness bounds of the selector's idle hint; for claim-style
// selectors, a claimed CPU that got no task is claimable again after its
// next idle-loop iteration.
Violations CheckI10(const std::string& sel) {
  Violations v;
  auto st = StateOrViolation(sel, is::IdleTopology::Uniform(1, 8), {}, v);
  if (st == nullptr) return v;
  const is::SelectorTraits traits = st->selector().traits();
  AllBusySettled(*st);
  MakeIdle(*st, 3);
  if (traits.idle_hint_clear != is::HintClear::kNoHint) {
    const CpuMask idle = st->selector().IdleHint();
    if (idle.nbits() == 0 || !idle.Test(3)) {
      v.push_back(absl::StrCat("I10: the idle hint ", idle.ToString(),
                               " misses cpu 3 after its idle entry"));
    }
    MakeBusy(*st, 3);
    if (traits.idle_hint_clear == is::HintClear::kOnIdleExit && st->selector().IdleHint().Test(3)) {
      v.push_back("I10: cpu 3 still in the idle hint after its idle exit (declared kOnIdleExit)");
    }
    st->Tick(3);
    if (st->selector().IdleHint().Test(3))
      v.push_back("I10: cpu 3 still in the idle hint after a busy tick");
  }
  if (traits.claims_cpus) {
    auto fresh = StateOrViolation(sel, is::IdleTopology::Uniform(1, 8), {}, v);
    if (fresh == nullptr) return v;
    AllBusySettled(*fresh);
    MakeIdle(*fresh, 3);
    is::WakeTask t{.prev_cpu = 0};
    const is::Selection first = fresh->Select(t, {.target = 0});
    if (first.cpu != 3 || !first.claimed) {
      v.push_back(absl::StrCat("I10: the only idle cpu 3 was not claimed (got ", first.cpu, ")"));
      return v;
    }
    fresh->IdleRefresh(3);  // kicked, never dispatched: one more idle-loop pass
    t = {.prev_cpu = 0};
    const is::Selection again = fresh->Select(t, {.target = 0});
    if (again.cpu != 3 || !again.claimed) {
      v.push_back(absl::StrCat(
          "I10: cpu 3, claimed without a task, not claimable after its idle loop (got ", again.cpu,
          ")"));
    }
  }
  return v;
}

// I12 Write economy: updates that do not change the state write nothing.
Violations CheckI12(const std::string& sel) {
  Violations v;
  auto st = StateOrViolation(sel, is::IdleTopology::Uniform(1, 8, 2), {}, v);
  if (st == nullptr) return v;
  AllBusySettled(*st);
  const int64_t before = st->TotalSharedWrites();
  for (int i = 0; i < 100; ++i) {
    for (int c = 0; c < 16; ++c) st->Tick(c);  // still busy
  }
  if (st->TotalSharedWrites() != before) {
    v.push_back(absl::StrCat("I12: ", st->TotalSharedWrites() - before,
                             " shared writes from 1600 busy ticks"));
  }
  MakeIdle(*st, 2);
  const int64_t after_idle = st->TotalSharedWrites();
  for (int i = 0; i < 100; ++i) {
    st->IdleEnter(2);  // idle -> idle
    st->Tick(2);
    st->TickStop(2);
  }
  if (st->TotalSharedWrites() != after_idle) {
    v.push_back(absl::StrCat("I12: ", st->TotalSharedWrites() - after_idle,
                             " shared writes from idle re-entries"));
  }
  for (int i = 0; i < 100; ++i) (void)st->UpdateIdleCpuScan(0, 5000);
  if (st->llc(0).budget_stores > 1) {
    v.push_back(absl::StrCat("I12: ", st->llc(0).budget_stores,
                             " budget stores for 100 identical updates"));
  }
  return v;
}

// I13: a CPU without an LLC domain performs no shared write and never enters
// a selector mask.
Violations CheckI13(const std::string& sel) {
  Violations v;
  auto st = StateOrViolation(sel, is::IdleTopology::Uniform(1, 8), {}, v);
  if (st == nullptr) return v;
  CpuMask iso(8);
  iso.Set(5);
  if (absl::Status s = st->Rebuild(iso); !s.ok()) return {s.ToString()};
  const int64_t before = st->TotalSharedWrites();
  for (int i = 0; i < 50; ++i) {
    MakeBusy(*st, 5);
    st->Tick(5);
    st->SetNrRunning(5, 3);
    st->Tick(5);
    MakeIdle(*st, 5);
  }
  if (st->TotalSharedWrites() != before) {
    v.push_back(absl::StrCat("I13: the domain-isolated cpu 5 made ",
                             st->TotalSharedWrites() - before, " shared writes"));
  }
  for (const is::MaskSnapshot& m : st->SelectorMasks()) {
    if (m.cpus.nbits() != 0 && m.cpus.Test(5)) {
      v.push_back(
          absl::StrCat("I13: the domain-isolated cpu 5 is in mask '", m.name, "' scope ", m.scope));
    }
  }
  return v;
}

// S5 Idle-core mode: 8 cores x 2 threads, core 5 fully idle, core 2 half
// idle: the whole idle core is found whatever the budget (>= 1); with no
// fully idle core the remembered half-idle sibling comes back and the hint is
// cleared.
Violations CheckS5(const std::string& sel) {
  Violations v;
  auto st = StateOrViolation(sel, is::IdleTopology::Uniform(1, 8, 2), {}, v);
  if (st == nullptr) return v;
  AllBusySettled(*st);
  MakeIdle(*st, 10);
  MakeIdle(*st, 11);
  MakeIdle(*st, 4);
  if (!st->llc(0).has_idle_cores)
    v.push_back("S5: __update_idle_core did not set the hint for core 5");
  (void)st->SetBudget(0, 1);
  is::WakeTask t{.prev_cpu = 0};
  const is::Selection s = st->Select(t, {.target = 0});
  if (!s.idle_found() || (s.cpu != 10 && s.cpu != 11)) {
    v.push_back(
        absl::StrCat("S5: budget 1, hint set: got cpu ", s.cpu, ", want 10 or 11 (core 5)"));
  }
  MakeBusySettled(*st, 10);
  MakeBusySettled(*st, 11);
  (void)st->SetIdleCoresHint(0, true);
  t = {.prev_cpu = 0};
  const is::Selection half = st->Select(t, {.target = 0});
  if (!half.idle_found() || half.cpu != 4) {
    v.push_back(
        absl::StrCat("S5: no idle core: got cpu ", half.cpu, ", want the half-idle sibling 4"));
  }
  if (st->llc(0).has_idle_cores) v.push_back("S5: hint still set after the failed idle-core scan");
  return v;
}

// S7 (direct API): isolcpus=domain,8-15 on 16 CPUs of one LLC.  The LLC span
// is 0-7; a task with affinity 0-15 and target 3 is never placed on 8-15,
// even with 0-7 all busy; prev = target = 12 gets 12; no selector mask holds
// 8-15 and their idle transitions write no shared line.
Violations CheckS7(const std::string& sel) {
  Violations v;
  const CpuMask iso = CpuMask::Range(16, 8, 15);
  std::vector<int> cores(16);
  for (int i = 0; i < 16; ++i) cores[static_cast<size_t>(i)] = i;
  auto st = StateOrViolation(sel,
                             is::IdleTopology::FromIds(std::vector<int>(16, 0), cores,
                                                       std::vector<int>(16, 0), CpuMask(), iso),
                             {}, v);
  if (st == nullptr) return v;
  if (st->llc(0).span != CpuMask::Range(16, 0, 7))
    v.push_back("S7: LLC span " + st->llc(0).span.ToString());
  for (int c = 0; c < 8; ++c) MakeBusySettled(*st, c);
  const int64_t writes_before = st->TotalSharedWrites();
  for (int c = 8; c < 16; ++c) {
    MakeBusy(*st, c);
    st->Tick(c);
    MakeIdle(*st, c);
  }
  if (st->TotalSharedWrites() != writes_before)
    v.push_back("S7: isolated CPUs wrote a shared line (I13)");
  for (const is::MaskSnapshot& m : st->SelectorMasks()) {
    if (m.cpus.nbits() == 16 && m.cpus.Intersects(iso)) {
      v.push_back(
          absl::StrCat("S7: mask '", m.name, "' ", m.cpus.ToString(), " holds isolated CPUs"));
    }
  }
  const CpuMask all = CpuMask::Full(16);
  for (int prev : {0, 5, 9, 14}) {
    is::WakeTask t{.prev_cpu = prev, .recent_used_cpu = 8 + prev % 8, .affinity = &all};
    const is::Selection s = st->Select(t, {.target = 3});
    if (s.cpu != 3)
      v.push_back(absl::StrCat("S7: prev ", prev, ", target 3, 0-7 busy: got ", s.cpu, ", want 3"));
  }
  is::WakeTask t{.prev_cpu = 12, .affinity = &all};
  if (const int c = st->Select(t, {.target = 12}).cpu; c != 12) {
    v.push_back(absl::StrCat("S7: prev = target = 12: got ", c));
  }
  return v;
}

std::string BoundedProbes(const Profile& p) {
  if (!p.scan_style()) return "claim-style selector: probes are claim attempts, no budget";
  return p.max_probes_at_64 == is::kUnboundedProbes
             ? "the selector declares no probe bound (MaxScanProbes)"
             : "";
}
std::string ScanWithIdleCoreHint(const Profile& p) {
  const std::string s = ScanStyleOnly(p);
  return s.empty() ? IdleCoreHintOnly(p) : s;
}

}  // namespace

const std::vector<CheckImpl>& DirectChecks() {
  static const auto* checks = new std::vector<CheckImpl>{
      {"I1_SubsetQuiescent", "IdleSelectConformance",
       "the selector's masks are consistent (CheckQuiescent) after random schedules with rebuilds",
       &Always, &CheckI1,
       "10 seeds x 2000 steps (500 selections, 21 rebuilds each), 32-CPU 2-LLC SMT2 2-node "
       "machine"},
      {"I2_IsolatedOnlyAsTarget", "IdleSelectConformance",
       "a domain-isolated CPU comes back only as the target itself", &ScanStyleOnly, &CheckI2,
       "5000 selections on one instance, 32-CPU 2-LLC SMT2 machine, 7 isolated CPUs"},
      {"I3_Affinity_I6_Totality", "IdleSelectConformance",
       "every returned CPU is allowed; scan-style selections always return a CPU", &Always,
       &CheckI3I6,
       "20 seeds x 667 selections, 64-CPU 4-LLC 2-node machines (SMT1, SMT2), random affinities"},
      {"I4_HintOnly", "IdleSelectConformance",
       "a CPU returned as idle passes the fresh per-CPU check", &ScanStyleOnly, &CheckI4,
       "2 rules x 10 seeds x 3000 selections, 32/64-CPU 2-LLC machines (SMT1, SMT2)"},
      {"I7_OrderTargetPrevRecent", "IdleSelectConformance",
       "target, then prev, then recent_used_cpu", &ScanStyleOnly, &CheckI7,
       "forced: 3 selections, 16-CPU 1-LLC machine"},
      {"I8_ProbesWithinBudget", "IdleSelectConformance",
       "at most MaxScanProbes(budget) probes; SIS_UTIL's cut at budget 0", &BoundedProbes, &CheckI8,
       "10 seeds x 3000 selections, 64-CPU 1-LLC machine; 1 forced budget-0 selection"},
      {"I9_IdleCoreHint", "IdleSelectConformance",
       "the idle-core hint is set, cleared and ignored as mainline's", &ScanWithIdleCoreHint,
       &CheckI9, "forced: 4 selections, 16-CPU 1-LLC SMT2 machine (smt_preference on and off)"},
      {"I10_StalenessBounds", "IdleSelectConformance",
       "an idle hint forgets a busy CPU within its declared bound", &HasIdleHint, &CheckI10,
       "forced: 2 selections, 8-CPU 1-LLC machine"},
      {"I12_WriteEconomy", "IdleSelectConformance", "no shared write without a change of state",
       &Always, &CheckI12,
       "forced: 1600 busy ticks, 100 idle re-entries, 100 budget updates, 16-CPU SMT2 machine"},
      {"I13_NoWritesWithoutDomain", "IdleSelectConformance",
       "a CPU without sd_llc writes nothing shared", &ScanStyleOnly, &CheckI13,
       "forced: 50 busy/idle cycles of one isolated CPU, 8-CPU machine"},
      {"S5_IdleCoreMode", "IdleSelectConformance",
       "whole idle cores first whatever the budget; hint cleared after", &ScanWithIdleCoreHint,
       &CheckS5, "forced: 2 selections, 16-CPU 1-LLC SMT2 machine"},
      {"S7_IsolationDirect", "IdleSelectConformance",
       "isolcpus=domain CPUs stay out of spans, masks and placements", &ScanStyleOnly, &CheckS7,
       "forced: 5 selections, 16-CPU 1-LLC machine with 8 isolated CPUs"},
      {"I6_EmptyAffinityNoCpu", "IdleSelectConformance",
       "an affinity without an online CPU yields cpu -1, not idle, nothing claimed", &Always,
       &CheckEmptyAffinity,
       "512 selections: 2 machines (8-CPU; 64-CPU 4-LLC SMT2 2-node) x 4 machine states x 64 "
       "wakeups"},
      {"D1_DomainFromTraits", "IdleSelectConformance",
       "every returned CPU lies in the declared SelectorTraits::domain (target or its LLC span; "
       "prev's node)",
       &Always, &CheckDomain,
       "14400 selections on one instance, 64-CPU 4-LLC SMT2 2-node machine, 6 schedule shapes x 16 "
       "LLC idle "
       "patterns, 16 rebuilds"},
      {"RarePaths_100kSelections", "IdleSelectConformance",
       "every applicable property (I1-I8, D1) after each selection, on schedules reaching the rare "
       "paths",
       &Always, &CheckRarePaths,
       "100000 selections on one instance, 64-CPU 4-LLC SMT2 2-node machine, 6 schedule shapes x "
       "16 LLC idle "
       "patterns, 42 rebuilds"},
  };
  return *checks;
}

// ---------------------------------------------------------------------------
// The dispatcher
// ---------------------------------------------------------------------------
namespace {

const CheckImpl* FindCheck(std::string_view name) {
  for (const auto* table : {&DirectChecks(), &RaceChecks(), &SimChecks()}) {
    for (const CheckImpl& c : *table) {
      if (name == c.name) return &c;
    }
  }
  return nullptr;
}

absl::StatusOr<Profile> ProfileOf(std::string_view selector) {
  auto st = NewIdleState(selector, is::IdleTopology::Uniform(1, 8, 2), {});
  if (!st.ok()) return st.status();
  Profile p;
  p.traits = (*st)->selector().traits();
  p.max_probes_at_0 = (*st)->selector().MaxScanProbes(0);
  p.max_probes_at_64 = (*st)->selector().MaxScanProbes(64);
  return p;
}

}  // namespace

const std::vector<Check>& AllChecks() {
  static const auto* all = [] {
    auto* out = new std::vector<Check>();
    for (const auto* table : {&DirectChecks(), &RaceChecks(), &SimChecks()}) {
      for (const CheckImpl& c : *table) out->push_back({c.name, c.suite, c.what, c.size});
    }
    return out;
  }();
  return *all;
}

absl::StatusOr<std::string> NotApplicable(std::string_view name, std::string_view selector) {
  const CheckImpl* c = FindCheck(name);
  if (c == nullptr)
    return absl::NotFoundError(
        absl::StrCat("no idle_select check named '", std::string(name), "'"));
  absl::StatusOr<Profile> p = ProfileOf(selector);
  if (!p.ok()) return p.status();
  return c->not_applicable(*p);
}

Violations Run(std::string_view name, std::string_view selector) {
  const CheckImpl* c = FindCheck(name);
  if (c == nullptr) return {absl::StrCat("no idle_select check named '", std::string(name), "'")};
  return c->run(std::string(selector));
}

std::vector<std::pair<std::string, Violations>> RunAll(std::string_view selector) {
  std::vector<std::pair<std::string, Violations>> out;
  absl::StatusOr<Profile> p = ProfileOf(selector);
  if (!p.ok()) return {{"create", {p.status().ToString()}}};
  for (const auto* table : {&DirectChecks(), &RaceChecks(), &SimChecks()}) {
    for (const CheckImpl& c : *table) {
      if (!c.not_applicable(*p).empty()) continue;
      Violations v = c.run(std::string(selector));
      if (!v.empty()) out.emplace_back(c.name, std::move(v));
    }
  }
  return out;
}

std::string ParamName(const ::testing::TestParamInfo<std::string>& info) {
  std::string n = info.param;
  for (char& ch : n) {
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  }
  return n;
}

int DirectAnchor() { return 1; }
int RaceAnchor();
int SimAnchor();
int Anchor() { return DirectAnchor() + RaceAnchor() + SimAnchor(); }

void RunAsTest(std::string_view name, const std::string& selector) {
  absl::StatusOr<std::string> skip = NotApplicable(name, selector);
  if (!skip.ok()) {
    ADD_FAILURE() << skip.status();
    return;
  }
  if (!skip->empty()) GTEST_SKIP() << *skip;
  ISOLATION_EXPECT_NO_VIOLATIONS(Run(name, selector))
      << name << " on selector '" << selector << "'";
}

}  // namespace idle_select_conformance
}  // namespace isolation::testing

// ---------------------------------------------------------------------------
// The suite
// ---------------------------------------------------------------------------
using ::isolation::testing::idle_select_conformance::RunAsTest;

GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(IdleSelectConformance);

TEST_P(IdleSelectConformance, I1_SubsetQuiescent) { RunAsTest("I1_SubsetQuiescent", GetParam()); }
TEST_P(IdleSelectConformance, I2_IsolatedOnlyAsTarget) {
  RunAsTest("I2_IsolatedOnlyAsTarget", GetParam());
}
TEST_P(IdleSelectConformance, I3_Affinity_I6_Totality) {
  RunAsTest("I3_Affinity_I6_Totality", GetParam());
}
TEST_P(IdleSelectConformance, I4_HintOnly) { RunAsTest("I4_HintOnly", GetParam()); }
TEST_P(IdleSelectConformance, I7_OrderTargetPrevRecent) {
  RunAsTest("I7_OrderTargetPrevRecent", GetParam());
}
TEST_P(IdleSelectConformance, I8_ProbesWithinBudget) {
  RunAsTest("I8_ProbesWithinBudget", GetParam());
}
TEST_P(IdleSelectConformance, I9_IdleCoreHint) { RunAsTest("I9_IdleCoreHint", GetParam()); }
TEST_P(IdleSelectConformance, I10_StalenessBounds) { RunAsTest("I10_StalenessBounds", GetParam()); }
TEST_P(IdleSelectConformance, I12_WriteEconomy) { RunAsTest("I12_WriteEconomy", GetParam()); }
TEST_P(IdleSelectConformance, I13_NoWritesWithoutDomain) {
  RunAsTest("I13_NoWritesWithoutDomain", GetParam());
}
TEST_P(IdleSelectConformance, S5_IdleCoreMode) { RunAsTest("S5_IdleCoreMode", GetParam()); }
TEST_P(IdleSelectConformance, S7_IsolationDirect) { RunAsTest("S7_IsolationDirect", GetParam()); }
TEST_P(IdleSelectConformance, I6_EmptyAffinityNoCpu) {
  RunAsTest("I6_EmptyAffinityNoCpu", GetParam());
}
TEST_P(IdleSelectConformance, D1_DomainFromTraits) { RunAsTest("D1_DomainFromTraits", GetParam()); }
TEST_P(IdleSelectConformance, RarePaths_100kSelections) {
  RunAsTest("RarePaths_100kSelections", GetParam());
}
