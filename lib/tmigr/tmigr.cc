// SPDX-License-Identifier: GPL-2.0-or-later
// The timer-migration hierarchy (kernel/time/timer_migration.c), see tmigr.h:
// construction through the variant registries, tmigr_init() sizing, and the
// checks and views over snapshots.  The algorithm is in hierarchy_base.cc
// and hierarchy_impl.h.

#include "isolation/tmigr/tmigr.h"

#include <algorithm>
#include <bit>
#include <limits>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/status_macros.h"
#include "isolation/tmigr/variants.h"

namespace isolation::tmigr {

namespace {

// order_base_2(): ceil(log2(n)), 0 for n <= 1.
int OrderBase2(int n) { return n <= 1 ? 0 : std::bit_width(static_cast<unsigned>(n - 1)); }
int DivRoundUp(int a, int b) { return (a + b - 1) / b; }

std::string ExpiryString(Nanos t) { return t == kNanosMax ? "MAX" : absl::StrCat(t); }

}  // namespace

Sizing ComputeSizing(int ncpus, int nnodes, int children_per_group) {
  ISOLATION_CONTRACT(ncpus >= 1 && ncpus <= kMaxCpus && nnodes >= 1 && nnodes <= kMaxNumaNodes &&
                         children_per_group >= 2 && children_per_group <= kMaxChildrenPerGroup &&
                         (children_per_group & (children_per_group - 1)) == 0,
                     "tmigr ComputeSizing(ncpus %d, nnodes %d, children %d)", ncpus, nnodes,
                     children_per_group);
  Sizing s;
  const int bits = std::countr_zero(static_cast<unsigned>(children_per_group));
  s.cpus_per_node = DivRoundUp(ncpus, nnodes);
  s.cpu_levels = DivRoundUp(OrderBase2(s.cpus_per_node), bits);
  s.node_levels = DivRoundUp(OrderBase2(nnodes), bits);
  s.levels = s.cpu_levels + s.node_levels;
  s.crossnode_level = s.cpu_levels;
  return s;
}

// ---------------------------------------------------------------------------
// Construction: the variants are chosen here, once.
// ---------------------------------------------------------------------------
absl::StatusOr<std::unique_ptr<TimerMigration>> TimerMigration::Create(std::vector<int> node_of,
                                                                       const Options& options,
                                                                       TimerBackend* backend) {
  const int cpg = options.children_per_group;
  if (cpg < 2 || cpg > kMaxChildrenPerGroup || (cpg & (cpg - 1)) != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("children_per_group must be a power of two in [2, 8], got ", cpg));
  }
  if (node_of.empty() || node_of.size() > static_cast<size_t>(kMaxCpus)) {
    return absl::InvalidArgumentError(
        absl::StrCat("tmigr: CPU count ", node_of.size(), " outside [1, ", kMaxCpus, "]"));
  }
  if (backend == nullptr) return absl::InvalidArgumentError("tmigr: backend is null");
  int max_node = 0;
  for (size_t c = 0; c < node_of.size(); ++c) {
    const int n = node_of[c];
    if (n < 0 || n >= kMaxNumaNodes) {
      return absl::InvalidArgumentError(absl::StrCat("tmigr: cpu ", c, " on NUMA node ", n,
                                                     ", outside [0, ", kMaxNumaNodes, ")"));
    }
    max_node = std::max(max_node, n);
  }
  const std::string& participation = options.participation;
  const std::string& hierarchy = options.hierarchy;
  ISOLATION_ASSIGN_OR_RETURN(const ParticipationEntry* pentry,
                             ParticipationRegistry().Find(participation));
  ISOLATION_ASSIGN_OR_RETURN(const HierarchyEntry* hentry, HierarchyRegistry().Find(hierarchy));
  HierarchyArgs args;
  args.node_of = std::move(node_of);
  args.num_nodes = max_node + 1;
  args.options = options;
  args.options.participation = pentry->name;
  args.options.hierarchy = hentry->name;
  args.backend = backend;
  args.participation = pentry->factory();
  if (args.participation == nullptr) {
    return absl::InternalError(
        absl::StrCat("tmigr participation '", pentry->name, "': factory returned null"));
  }
  std::unique_ptr<TimerMigration> tm = hentry->factory(std::move(args));
  if (tm == nullptr) {
    return absl::InternalError(
        absl::StrCat("tmigr hierarchy '", hentry->name, "': factory returned null"));
  }
  return tm;
}

absl::StatusOr<std::unique_ptr<TimerMigration>> TimerMigration::Create(const Topology& topology,
                                                                       const Options& options,
                                                                       TimerBackend* backend) {
  std::vector<int> node_of(static_cast<size_t>(topology.num_cpus()));
  for (int c = 0; c < topology.num_cpus(); ++c)
    node_of[static_cast<size_t>(c)] = topology.node_of(c);
  return Create(std::move(node_of), options, backend);
}

// ---------------------------------------------------------------------------
// TimerBackend: schedule_work_on() / flush_work()
// ---------------------------------------------------------------------------
void TimerBackend::QueueWork(int cpu, absl::AnyInvocable<void()> fn) {
  queued_work_.emplace_back(cpu, std::move(fn));
}

void TimerBackend::FlushWork() {
  // An item may queue more work; run until nothing is left.
  while (!queued_work_.empty()) {
    std::vector<std::pair<int, absl::AnyInvocable<void()>>> work;
    work.swap(queued_work_);
    // Not a structured binding: clang 14 cannot capture one (C++20 P1091).
    for (auto& item : work) {
      absl::AnyInvocable<void()>& fn = item.second;
      RunOnCpu(item.first, [&fn] { fn(); });
    }
  }
}

// ---------------------------------------------------------------------------
// Snapshots
// ---------------------------------------------------------------------------
std::string GroupName(GroupId id) {
  return id.valid() ? absl::StrCat("GRP", id.level, ":", id.index) : std::string("-");
}

int HierarchySnapshot::num_groups() const {
  int n = 0;
  for (const auto& level : levels) n += static_cast<int>(level.size());
  return n;
}

const GroupSnapshot& HierarchySnapshot::group(GroupId id) const {
  ISOLATION_CONTRACT(
      id.level >= 0 && static_cast<size_t>(id.level) < levels.size() && id.index >= 0 &&
          static_cast<size_t>(id.index) < levels[static_cast<size_t>(id.level)].size(),
      "tmigr: no group GRP%d:%d", id.level, id.index);
  return levels[static_cast<size_t>(id.level)][static_cast<size_t>(id.index)];
}

const CpuSnapshot& HierarchySnapshot::cpu(int c) const {
  ISOLATION_CONTRACT(c >= 0 && c < num_cpus(), "tmigr: cpu %d outside [0, %d)", c, num_cpus());
  return cpus[static_cast<size_t>(c)];
}

const GroupSnapshot& HierarchySnapshot::group_of(int c) const { return group(cpu(c).group); }

std::vector<std::string> TimerMigration::CheckInvariants() const {
  return CheckHierarchyInvariants(Snapshot());
}
std::string TimerMigration::DebugString() const { return tmigr::DebugString(Snapshot()); }
PathCoverage TimerMigration::CoverageOf(int cpu, Nanos timer) const {
  return tmigr::CoverageOf(Snapshot(), cpu, timer);
}

std::string DebugString(const HierarchySnapshot& s) {
  std::string out;
  for (const auto& level : s.levels) {
    for (const GroupSnapshot& g : level) {
      absl::StrAppend(&out, g.Name(), g.id == s.root ? " (root)" : "", " node=", g.numa_node,
                      " children=", g.num_children,
                      " mask=", absl::StrFormat("0x%02x", g.groupmask),
                      " parent=", GroupName(g.parent),
                      absl::StrFormat(" active=0x%02x migr=0x%02x seq=%u", g.state.active,
                                      g.state.migrator, g.state.seq),
                      " next=", ExpiryString(g.next_expiry), " events=[");
      for (size_t i = 0; i < g.events.size(); ++i) {
        const EventSnapshot& e = g.events[i];
        absl::StrAppend(&out, i ? " " : "", "(", ExpiryString(e.expires), ",cpu", e.cpu,
                        e.ignore ? ",ign" : "", ")");
      }
      absl::StrAppend(&out, "]\n");
    }
  }
  return out;
}

PathCoverage CoverageOf(const HierarchySnapshot& s, int cpu, Nanos timer) {
  PathCoverage cov;
  if (cpu < 0 || cpu >= s.num_cpus() || !s.cpus[static_cast<size_t>(cpu)].group.valid()) return cov;
  GroupId id = s.cpus[static_cast<size_t>(cpu)].group;
  Nanos worst = std::numeric_limits<Nanos>::min();
  while (id.valid()) {
    const GroupSnapshot& g = s.group(id);
    Nanos best = kNanosMax;
    for (const EventSnapshot& e : g.events) {
      if (!e.ignore && e.expires <= timer) best = std::min(best, e.expires);
    }
    worst = std::max(worst, best);
    if (g.state.active != 0) break;
    if (!g.parent.valid()) cov.reaches_idle_root = true;
    id = g.parent;
  }
  cov.min_expiry_on_path = worst;
  return cov;
}

std::vector<std::string> CheckHierarchyInvariants(const HierarchySnapshot& s) {
  std::vector<std::string> v;
  const int cpg = s.children_per_group;
  const int ncpus = s.num_cpus();
  bool any_active_cpu = false;
  auto valid_group = [&](GroupId id) {
    return id.valid() && static_cast<size_t>(id.level) < s.levels.size() &&
           static_cast<size_t>(id.index) < s.levels[static_cast<size_t>(id.level)].size();
  };
  // I1, I10, I3 (group part), I6, I7.
  for (const auto& level : s.levels) {
    for (const GroupSnapshot& g : level) {
      const GroupState st = g.state;
      const std::string name = g.Name();
      if (st.migrator != kMigratorNone &&
          (std::popcount(st.migrator) != 1 || (st.migrator & st.active) == 0)) {
        v.push_back(
            absl::StrFormat("I1 %s: migrator 0x%02x not a single active bit (active 0x%02x)", name,
                            st.migrator, st.active));
      }
      if ((st.migrator == kMigratorNone) != (st.active == 0)) {
        v.push_back(absl::StrFormat("I1 %s: migrator 0x%02x vs active 0x%02x", name, st.migrator,
                                    st.active));
      }
      if (g.num_children > cpg)
        v.push_back(absl::StrCat("I10 ", name, ": more than ", cpg, " children"));
      if (st.active >> std::min(g.num_children, 8) != 0) {
        v.push_back(absl::StrFormat("I10 %s: active bit 0x%02x beyond %d children", name, st.active,
                                    g.num_children));
      }
      if (!g.parent.valid() && !(g.id == s.root))
        v.push_back(absl::StrCat("I10 ", name, ": no parent but not the root"));
      if (g.parent.valid() && !valid_group(g.parent)) {
        v.push_back(
            absl::StrCat("I10 ", name, ": parent ", GroupName(g.parent), " does not exist"));
      } else if (g.parent.valid()) {
        const GroupSnapshot& parent = s.group(g.parent);
        if (g.groupmask == 0) v.push_back(absl::StrCat("I10 ", name, ": groupmask 0"));
        if (parent.id.level != g.id.level + 1)
          v.push_back(absl::StrCat("I10 ", name, ": parent level"));
        if (g.id.level < s.sizing.crossnode_level - 1 && parent.numa_node != g.numa_node) {
          v.push_back(absl::StrCat("I10 ", name, ": parent ", parent.Name(), " on another node"));
        }
        const bool bit = (parent.state.active & g.groupmask) != 0;
        if (bit != (st.active != 0)) {
          v.push_back(absl::StrFormat("I3 %s: active 0x%02x but bit in %s is %d", name, st.active,
                                      parent.Name(), bit ? 1 : 0));
        }
        // I6: a live group event names the owner of the child's first event.
        const EventSnapshot& ge = g.groupevt;
        if (st.active == 0 && ge.queued && !ge.ignore && ge.expires != kNanosMax) {
          Nanos first = kNanosMax;
          for (const EventSnapshot& e : g.events) {
            if (!e.ignore) first = std::min(first, e.expires);
          }
          bool found = false;
          for (const EventSnapshot& e : g.events) {
            if (!e.ignore && e.expires == first && e.cpu == ge.cpu) found = true;
          }
          if (!found || first != ge.expires) {
            v.push_back(absl::StrCat("I6 ", name, ": event (", ExpiryString(ge.expires), ", cpu",
                                     ge.cpu, ") in ", parent.Name(), " but first child event is ",
                                     ExpiryString(first)));
          }
        }
      }
      // I7
      Nanos live = kNanosMax;
      for (size_t i = 0; i < g.events.size(); ++i) {
        const EventSnapshot& e = g.events[i];
        if (!e.ignore) live = std::min(live, e.expires);
        if (i > 0 && g.events[i - 1].expires > e.expires)
          v.push_back(absl::StrCat("I7 ", name, ": queue unsorted"));
      }
      if (g.next_expiry > live) {
        v.push_back(absl::StrCat("I7 ", name, ": next_expiry ", ExpiryString(g.next_expiry),
                                 " > first live event ", ExpiryString(live)));
      }
    }
  }
  // Per-CPU: I3 (CPU part), I8, I10 (masks), I2 (remote left set).
  CpuMask avail(ncpus);
  for (int c = 0; c < ncpus; ++c) {
    const CpuSnapshot& cs = s.cpus[static_cast<size_t>(c)];
    if (!cs.group.valid()) continue;
    if (!valid_group(cs.group)) {
      v.push_back(absl::StrCat("I10 cpu", c, ": group ", GroupName(cs.group), " does not exist"));
      continue;
    }
    const GroupSnapshot& g = s.group(cs.group);
    if (cs.available) avail.Set(c);
    const bool bit = (g.state.active & cs.groupmask) != 0;
    if (cs.available && !cs.idle) {
      any_active_cpu = true;
      if (!bit) v.push_back(absl::StrCat("I3 cpu", c, ": active but bit clear in ", g.Name()));
    } else if (bit) {
      v.push_back(absl::StrCat(cs.available ? "I3" : "I8", " cpu", c, ": ",
                               cs.available ? "idle" : "unavailable", " but bit set in ",
                               g.Name()));
    }
    if (cs.groupmask == 0) v.push_back(absl::StrCat("I10 cpu", c, ": groupmask 0"));
    if (cs.remote) v.push_back(absl::StrCat("I2 cpu", c, ": remote left set"));
  }
  // I4
  if (any_active_cpu && valid_group(s.root) && s.root_group().state.migrator == kMigratorNone) {
    v.push_back("I4 an available CPU is active but the root has no migrator");
  }
  // I8: the available mask equals the CPUs marked available.
  if (s.available_mask.nbits() != ncpus || !s.available_mask.Equal(avail)) {
    v.push_back(absl::StrCat("I8 available mask ", s.available_mask.ToString(),
                             " != available cpus ", avail.ToString()));
  }
  // I9 (only a variant that excludes CPUs enables isolation).
  if (s.isolation_enabled) {
    if (avail.Empty() && valid_group(s.root)) v.push_back("I9 no available CPU");
    if (!s.nohz_full.Empty() && s.tick_cpu >= 0 && s.tick_cpu < ncpus &&
        s.cpus[static_cast<size_t>(s.tick_cpu)].online && !avail.Test(s.tick_cpu)) {
      v.push_back(absl::StrCat("I9 tick cpu ", s.tick_cpu, " not available"));
    }
  }
  // I10: distinct masks among the children of each group.
  std::map<std::pair<int, int>, unsigned> seen;
  for (const auto& level : s.levels) {
    for (const GroupSnapshot& g : level) {
      if (!g.parent.valid()) continue;
      unsigned& m = seen[{g.parent.level, g.parent.index}];
      if (m & g.groupmask)
        v.push_back(absl::StrCat("I10 ", GroupName(g.parent), ": duplicate child mask"));
      m |= g.groupmask;
    }
  }
  for (int c = 0; c < ncpus; ++c) {
    const CpuSnapshot& cs = s.cpus[static_cast<size_t>(c)];
    if (!cs.group.valid()) continue;
    unsigned& m = seen[{cs.group.level, cs.group.index}];
    if (m & cs.groupmask)
      v.push_back(absl::StrCat("I10 cpu", c, ": duplicate mask in ", GroupName(cs.group)));
    m |= cs.groupmask;
  }
  return v;
}

}  // namespace isolation::tmigr
