// SPDX-License-Identifier: GPL-2.0-or-later
// Directed probes of the tmigr bug switches on the run's machine
// (tmigr_bug_probe.h).

#include "experiments/tmigr_bug_probe.h"

#include <algorithm>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/status_macros.h"
#include "isolation/core/clock.h"
#include "isolation/tmigr/tmigr.h"
#include "isolation/tmigr/variants.h"

namespace isolation::experiments {
namespace {

using tmigr::GroupId;
using tmigr::HierarchySnapshot;
using tmigr::TimerMigration;

// The timer side of a probe: each CPU's next global expiry, and a record of
// the remote expiries and kicks (the kit's recording backend, kept here so
// isolab does not link the kit).
class ProbeBackend final : public tmigr::TimerBackend {
 public:
  explicit ProbeBackend(int ncpus) : next_global(static_cast<size_t>(ncpus), kNanosMax) {}
  void ExpireRemote(int owner, int runner, Nanos now) override {
    expired.emplace_back(owner, runner);
    if (next_global[static_cast<size_t>(owner)] <= now)
      next_global[static_cast<size_t>(owner)] = kNanosMax;
  }
  void LockBases(int) override {}
  void UnlockBases(int) override {}
  Nanos NextGlobalLocked(int cpu, Nanos) override { return next_global[static_cast<size_t>(cpu)]; }
  bool BaseIsIdle(int) override { return false; }
  void KickCpu(int) override {}
  std::vector<Nanos> next_global;
  std::vector<std::pair<int, int>> expired;  // (owner, runner)
};

struct Probe {
  std::unique_ptr<ProbeBackend> backend;
  std::unique_ptr<TimerMigration> tm;
  std::vector<std::string> violations;
  void Expect(bool ok, std::string what) {
    if (!ok) violations.push_back(std::move(what));
  }
};

// The hierarchy of the run's machine with every CPU up and the isolation's
// late init done, as the experiment's modelled runs boot it.
absl::StatusOr<Probe> Boot(std::string_view hierarchy, std::string_view participation,
                           const Topology& topology, const IsolationConfig& isolation) {
  Probe p;
  p.backend = std::make_unique<ProbeBackend>(topology.num_cpus());
  tmigr::Options o;
  o.participation = std::string(participation);
  o.hierarchy = std::string(hierarchy);
  ISOLATION_ASSIGN_OR_RETURN(p.tm, TimerMigration::Create(topology, o, p.backend.get()));
  ISOLATION_RETURN_IF_ERROR(p.tm->SetIsolation(isolation));
  for (int c = 0; c < topology.num_cpus(); ++c) ISOLATION_RETURN_IF_ERROR(p.tm->BringUpCpu(c));
  p.tm->InitIsolation();
  return p;
}

// The groups above `cpu`, level 0 first.
std::vector<GroupId> Chain(const HierarchySnapshot& s, int cpu) {
  std::vector<GroupId> chain;
  for (GroupId g = s.cpu(cpu).group; g.valid(); g = s.group(g).parent) chain.push_back(g);
  return chain;
}

// The lowest level at which `a` and `b` share a group (-1: none).
int SharedLevel(const std::vector<GroupId>& a, const std::vector<GroupId>& b) {
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    if (a[i] == b[i]) return static_cast<int>(i);
  }
  return -1;
}

// A placement: two available CPUs `a` and `b` whose lowest shared group is
// at `level`, and (if asked and any) a third available CPU `other` that
// shares no group below `other_level` with them.
struct Placement {
  int a = -1, b = -1, other = -1;
  int level = -1;
};

// The pair of id-neighbours (they share the lowest groups the machine has)
// with the lowest shared level in [0, max_level]; with `other_min_level` >= 0
// only pairs for which an available CPU shares no group below that many
// levels above the pair's.
std::optional<Placement> FindPlacement(const HierarchySnapshot& s,
                                       const std::vector<int>& available, int max_level,
                                       int other_min_above) {
  std::vector<std::vector<GroupId>> chains;
  chains.reserve(available.size());
  for (int c : available) chains.push_back(Chain(s, c));
  std::optional<Placement> best;
  for (size_t k = 0; k + 1 < available.size(); ++k) {
    const int level = SharedLevel(chains[k], chains[k + 1]);
    if (level < 0 || level > max_level || (best.has_value() && best->level <= level)) continue;
    Placement p{available[k], available[k + 1], -1, level};
    if (other_min_above >= 0) {
      for (size_t o = 0; o < available.size(); ++o) {
        const int shared = SharedLevel(chains[o], chains[k]);
        if (shared >= level + other_min_above) {
          p.other = available[o];
          break;
        }
      }
      if (p.other < 0) continue;
    }
    best = p;
  }
  return best;
}

// Every available CPU but `keep` goes idle with no global timer.
void IdleAllBut(Probe& p, const std::vector<int>& available, std::initializer_list<int> keep) {
  for (int c : available) {
    if (std::find(keep.begin(), keep.end(), c) == keep.end()) p.tm->Deactivate(c, kNanosMax);
  }
}

std::string Time(Nanos t) { return t == kNanosMax ? "KTIME_MAX" : absl::StrCat(t); }

// S11 ghost timer (f55acb1e44f3): `b` idles with a timer at 100, `a` idles
// last and keeps the wake-up; `b` wakes and runs its timer itself; `a`
// wakes at 100 and handles remote: nothing is due, and its re-armed expiry
// must not be the stale 100.
void ProbeGhostTimer(Probe& p, const std::vector<int>& av, int a, int b) {
  IdleAllBut(p, av, {a, b});
  p.backend->next_global[static_cast<size_t>(b)] = 100;
  p.tm->Deactivate(b, 100);
  const Nanos wake = p.tm->Deactivate(a, kNanosMax);
  p.Expect(wake == 100, absl::StrCat("S11: cpu ", a, " idles last and must wake at 100 for cpu ", b,
                                     "'s timer; got ", Time(wake)));
  p.tm->Activate(b);
  p.backend->next_global[static_cast<size_t>(b)] = kNanosMax;  // run by b itself
  if (p.tm->RequiresHandleRemote(a, 100)) p.tm->HandleRemote(a, 100);
  const Nanos rearm = p.tm->NewTimer(a, kNanosMax);
  p.Expect(rearm == kNanosMax, absl::StrCat("S11: cpu ", a, " re-arms ", Time(rearm), " after cpu ",
                                            b, " ran its own timer (ghost timer: want KTIME_MAX)"));
}

// S10 same expiry, other CPU (61f7fdf8fd00): `a` and `b` idle with the same
// expiry in one group; `h`, outside it and the only active CPU, handles
// remote at 100 and must run both CPUs' timers in the one pass.
void ProbeSameExpiry(Probe& p, const std::vector<int>& av, int a, int b, int h) {
  IdleAllBut(p, av, {a, b, h});
  p.backend->next_global[static_cast<size_t>(a)] = 100;
  p.backend->next_global[static_cast<size_t>(b)] = 100;
  p.tm->Deactivate(a, 100);
  p.tm->Deactivate(b, 100);
  if (p.tm->RequiresHandleRemote(h, 100)) p.tm->HandleRemote(h, 100);
  std::vector<int> owners;
  for (const auto& [owner, runner] : p.backend->expired) owners.push_back(owner);
  const bool ran_a = std::count(owners.begin(), owners.end(), a) == 1;
  const bool ran_b = std::count(owners.begin(), owners.end(), b) == 1;
  p.Expect(ran_a && ran_b,
           absl::StrCat("S10: cpu ", h, "'s remote pass at 100 must run the timers of cpus ", a,
                        " and ", b, " (same expiry) once each; it ran those of [",
                        absl::StrJoin(owners, ","), "]"));
}

// S14 quick check (8ca1836769d7): `a` is the only active CPU; `b`, in a
// group with `a` below the top, idles with 30; `outside` (if any) idles
// with 70 and its event reaches the top.  The quick check must see 30.
void ProbeQuickCheck(Probe& p, const std::vector<int>& av, int a, int b, int outside) {
  IdleAllBut(p, av, {a, b, outside});
  p.tm->Deactivate(b, 30);
  if (outside >= 0) p.tm->Deactivate(outside, 70);
  const Nanos first = p.tm->QuickCheck(a, kNanosMax);
  p.Expect(first == 30,
           absl::StrCat("S14: quick check on cpu ", a, " must see cpu ", b,
                        "'s expiry 30 in their group below the top; got ", Time(first)));
  const Nanos own = p.tm->QuickCheck(a, 20);
  p.Expect(own == 20, absl::StrCat("S14: quick check on cpu ", a,
                                   " with its own expiry 20 first; got ", Time(own)));
}

// S15 single-level early return (7a96a84bfbee / 4b6f4c5a67c0): in a
// single-level hierarchy the last CPU to idle gets the first expiry of the
// others.
void ProbeEarlyReturn(Probe& p, const std::vector<int>& av, int a, int b) {
  IdleAllBut(p, av, {a, b});
  p.tm->Deactivate(b, 40);
  const Nanos wake = p.tm->Deactivate(a, kNanosMax);
  p.Expect(wake == 40,
           absl::StrCat("S15: cpu ", a, " idles last in a single-level hierarchy and must get cpu ",
                        b, "'s expiry 40; got ", Time(wake)));
}

struct BugInfo {
  const char* bug;
  const char* scenario;
};
constexpr BugInfo kBugs[] = {
    {"ghost_timer", "S11 ghost timer (f55acb1e44f3)"},
    {"no_cpu_refresh", "S10 same expiry, other CPU (61f7fdf8fd00)"},
    {"early_return", "S15 single-level early return (4b6f4c5a67c0, 7a96a84bfbee)"},
    {"quick_check_top_only", "S14 quick check below the top (8ca1836769d7)"},
};

}  // namespace

const std::vector<std::string>& TmigrProbedBugs() {
  static const auto* names = [] {
    auto* v = new std::vector<std::string>;
    for (const BugInfo& b : kBugs) v->push_back(b.bug);
    return v;
  }();
  return *names;
}

absl::StatusOr<TmigrBugProbe> ProbeTmigrBug(std::string_view bug, std::string_view participation,
                                            const Topology& topology,
                                            const IsolationConfig& isolation) {
  const BugInfo* info = nullptr;
  for (const BugInfo& b : kBugs) {
    if (absl::EqualsIgnoreCase(std::string(bug), b.bug)) info = &b;
  }
  if (info == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("no probe for tmigr bug '",
                                                   absl::CHexEscape(std::string(bug)), "' (want ",
                                                   absl::StrJoin(TmigrProbedBugs(), ", "), ")"));
  }
  TmigrBugProbe out;
  out.bug = info->bug;
  out.scenario = info->scenario;

  // The placement comes from the mainline hierarchy (the bug's has the same
  // groups); the same sequence then runs on both.
  ISOLATION_ASSIGN_OR_RETURN(Probe layout, Boot("mainline", participation, topology, isolation));
  out.participation = layout.tm->options().participation;
  const HierarchySnapshot snap = layout.tm->Snapshot();
  std::vector<int> available;
  for (int c = 0; c < snap.num_cpus(); ++c) {
    if (snap.cpu(c).available) available.push_back(c);
  }
  const int levels = snap.sizing.levels;
  const std::string machine =
      absl::StrCat(topology.num_cpus(), " CPUs, ", available.size(), " available to ",
                   out.participation, " (", levels, levels == 1 ? " level" : " levels", ")");
  if (available.size() < 2) {
    out.reason = absl::StrCat("needs two CPUs available to the hierarchy; this machine has ",
                              machine, ": run with fewer isolated CPUs");
    return out;
  }

  std::function<void(Probe&)> sequence;
  const std::string_view name = info->bug;
  const int top = levels - 1;
  if (name == "early_return") {
    if (levels != 1) {
      out.reason =
          absl::StrCat("shows only in a single-level hierarchy (at most ",
                       tmigr::kMaxChildrenPerGroup, " CPUs on one node); this machine has ",
                       machine, ": run with --topology=pu:8 (or fewer CPUs)");
      return out;
    }
    const int a = available[0], b = available[1];
    out.placement =
        absl::StrCat("cpu ", b, " idles with a timer at 40, cpu ", a, " idles last; ", machine);
    sequence = [&available, a, b](Probe& p) { ProbeEarlyReturn(p, available, a, b); };
  } else if (name == "ghost_timer") {
    // The overtaken CPU must share its level-0 group with the one that
    // wakes (only then is it no longer that group's migrator).
    const std::optional<Placement> pl = FindPlacement(snap, available, 0, -1);
    if (!pl.has_value()) {
      out.reason = absl::StrCat("needs two available CPUs in one level-0 group (",
                                tmigr::kMaxChildrenPerGroup, " CPUs); this machine has ", machine,
                                ": isolate fewer CPUs");
      return out;
    }
    out.placement = absl::StrCat("cpu ", pl->b, " idles with a timer at 100, cpu ", pl->a,
                                 " (same group) idles last; ", machine);
    sequence = [&available, a = pl->a, b = pl->b](Probe& p) {
      ProbeGhostTimer(p, available, a, b);
    };
  } else if (name == "no_cpu_refresh") {
    // The stale CPU of a queued group event is read one level up: the
    // handler's walk must meet the pair's group event two levels above it.
    const std::optional<Placement> pl = FindPlacement(snap, available, top - 2, 2);
    if (!pl.has_value()) {
      out.reason = absl::StrCat(
          "needs two available CPUs sharing a group two levels below the top and a third "
          "available CPU outside their parent group; this machine has ",
          machine, ": run with more CPUs (at least ",
          tmigr::kMaxChildrenPerGroup * tmigr::kMaxChildrenPerGroup + 1,
          ") or fewer isolated ones");
      return out;
    }
    out.placement = absl::StrCat("cpus ", pl->a, " and ", pl->b, " (one level-", pl->level,
                                 " group) idle with timers at 100, cpu ", pl->other,
                                 " handles remote; ", machine);
    sequence = [&available, pl = *pl](Probe& p) {
      ProbeSameExpiry(p, available, pl.a, pl.b, pl.other);
    };
  } else {  // quick_check_top_only
    const std::optional<Placement> pl = FindPlacement(snap, available, top - 1, -1);
    if (!pl.has_value()) {
      out.reason = absl::StrCat(
          "needs two available CPUs sharing a group below the top; this machine has ", machine,
          ": run with more than ", tmigr::kMaxChildrenPerGroup, " CPUs or fewer isolated ones");
      return out;
    }
    // Another available CPU outside their group, if any, idles with a later
    // expiry that reaches the top.
    int outside = -1;
    const GroupId shared = Chain(snap, pl->a)[static_cast<size_t>(pl->level)];
    for (int c : available) {
      if (Chain(snap, c)[static_cast<size_t>(pl->level)] != shared) {
        outside = c;
        break;
      }
    }
    out.placement = absl::StrCat(
        "cpu ", pl->a, " active, cpu ", pl->b, " (same level-", pl->level, " group) idles with 30",
        outside >= 0 ? absl::StrCat(", cpu ", outside, " (outside) with 70") : "", "; ", machine);
    sequence = [&available, pl = *pl, outside](Probe& p) {
      ProbeQuickCheck(p, available, pl.a, pl.b, outside);
    };
  }
  out.applicable = true;
  sequence(layout);
  for (std::string& v : layout.tm->CheckInvariants()) layout.violations.push_back(std::move(v));
  out.mainline_violations = std::move(layout.violations);
  ISOLATION_ASSIGN_OR_RETURN(Probe buggy, Boot(info->bug, participation, topology, isolation));
  sequence(buggy);
  for (std::string& v : buggy.tm->CheckInvariants()) buggy.violations.push_back(std::move(v));
  out.violations = std::move(buggy.violations);
  return out;
}

}  // namespace isolation::experiments
