// SPDX-License-Identifier: GPL-2.0-or-later
// The timer-migration hierarchy (kernel/time/timer_migration.c), see tmigr.h.

#include "isolation/tmigr/tmigr.h"

#include <algorithm>
#include <bit>
#include <cstdio>
#include <limits>
#include <unordered_map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "isolation/core/interleave.h"

namespace isolation::tmigr {

std::string_view VariantName(Variant variant) {
  return variant == Variant::kV69 ? "v6.9" : "isolation";
}

absl::StatusOr<Variant> ParseVariant(std::string_view name) {
  if (name == "v6.9") return Variant::kV69;
  if (name == "isolation") return Variant::kIsolation;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown tmigr variant '", std::string(name), "' (expected v6.9 or isolation)"));
}

namespace {

// order_base_2(): ceil(log2(n)), 0 for n <= 1.
int OrderBase2(int n) { return n <= 1 ? 0 : std::bit_width(static_cast<unsigned>(n - 1)); }
int DivRoundUp(int a, int b) { return (a + b - 1) / b; }

// Interleave point names per level (the Interleaver stops at the first point
// of a given name, so races at level 1 need their own names).
#define TMIGR_LEVEL_POINTS(prefix) \
  {prefix ".l0", prefix ".l1", prefix ".l2", prefix ".l3", prefix ".l4", prefix ".l5", prefix ".l6", prefix ".l7"}
const char* const kInactiveBeforeCas[] = TMIGR_LEVEL_POINTS("tmigr.inactive_up.before_cas");
const char* const kInactiveAfterCas[] = TMIGR_LEVEL_POINTS("tmigr.inactive_up.after_cas");
const char* const kActiveAfterCas[] = TMIGR_LEVEL_POINTS("tmigr.active_up.after_cas");
const char* const kUpdateEnter[] = TMIGR_LEVEL_POINTS("tmigr.update_events.enter");
const char* const kUpdateLocklessRead[] = TMIGR_LEVEL_POINTS("tmigr.update_events.lockless_read");
#undef TMIGR_LEVEL_POINTS
// Unused when ISOLATION_INTERLEAVE_POINTS is off (the points compile to nothing).
[[maybe_unused]] const char* PointAt(const char* const* names, int level) { return names[std::min(level, 7)]; }

// smp_mb__after_atomic(): a full fence.  GCC rejects atomic_thread_fence
// under -fsanitize=thread (-Werror=tsan), so TSan builds use a seq_cst RMW on
// a thread-local dummy, a full barrier on x86-64 and arm64 that TSan models.
inline void FullFence() {
#if defined(__SANITIZE_THREAD__) || defined(ISOLATION_TSAN)
  thread_local std::atomic<int> dummy{0};
  dummy.fetch_add(0, std::memory_order_seq_cst);
#else
  std::atomic_thread_fence(std::memory_order_seq_cst);
#endif
}

// Lock-order recorder for I11: ranks of the locks this thread holds.
thread_local int t_held_ranks[32];
thread_local int t_num_held = 0;

}  // namespace

Sizing ComputeSizing(int ncpus, int nnodes, int children_per_group) {
  ISOLATION_CONTRACT(ncpus >= 1 && ncpus <= kMaxCpus && nnodes >= 1 && nnodes <= kMaxNumaNodes &&
                         children_per_group >= 2 && children_per_group <= kMaxChildrenPerGroup &&
                         (children_per_group & (children_per_group - 1)) == 0,
                     "tmigr ComputeSizing(ncpus %d, nnodes %d, children %d)", ncpus, nnodes, children_per_group);
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
// EventQueue
// ---------------------------------------------------------------------------
bool EventQueue::Add(Event* e) {
  int pos = size_;
  // Equal keys after existing ones: find the first strictly greater key.
  for (int i = 0; i < size_; ++i) {
    if (items_[static_cast<size_t>(i)]->expires > e->expires) {
      pos = i;
      break;
    }
  }
  for (int i = size_; i > pos; --i) items_[static_cast<size_t>(i)] = items_[static_cast<size_t>(i - 1)];
  items_[static_cast<size_t>(pos)] = e;
  ++size_;
  e->queued = true;
  return pos == 0;
}

bool EventQueue::Remove(Event* e) {
  for (int i = 0; i < size_; ++i) {
    if (items_[static_cast<size_t>(i)] == e) {
      for (int j = i; j + 1 < size_; ++j) items_[static_cast<size_t>(j)] = items_[static_cast<size_t>(j + 1)];
      --size_;
      break;
    }
  }
  e->queued = false;
  return size_ > 0;
}

std::string Group::Name() const { return absl::StrCat("GRP", level, ":", index); }

// ---------------------------------------------------------------------------
// Construction
// ---------------------------------------------------------------------------
struct TimerMigration::Walk {
  Nanos nextexp = kNanosMax;
  Nanos firstexp = kNanosMax;
  Event* evt = nullptr;
  uint8_t childmask = 0;
  bool remote = false;
  Nanos now = 0;
  bool check = false;
  int runner = -1;
  int cpu = -1;  // the CPU whose (de)activation walks (trace events only)
};

TimerMigration::TimerMigration(std::vector<int> node_of, int num_nodes, const Options& options,
                               TimerBackend* backend)
    : options_(options),
      backend_(backend),
      num_cpus_(static_cast<int>(node_of.size())),
      node_of_(std::move(node_of)),
      sizing_(ComputeSizing(num_cpus_, num_nodes, options.children_per_group)),
      available_mask_(num_cpus_),
      domain_isolated_(num_cpus_),
      nohz_full_(num_cpus_),
      cpuset_isolated_(num_cpus_),
      remote_by_runner_(new std::atomic<int64_t>[static_cast<size_t>(num_cpus_)]) {
  cpus_.reserve(static_cast<size_t>(num_cpus_));
  for (int c = 0; c < num_cpus_; ++c) {
    cpus_.push_back(std::make_unique<CpuState>());
    remote_by_runner_[static_cast<size_t>(c)].store(0, std::memory_order_relaxed);
  }
  levels_.resize(static_cast<size_t>(std::max(sizing_.levels, 1)));
}

TimerMigration::~TimerMigration() = default;

absl::StatusOr<std::unique_ptr<TimerMigration>> TimerMigration::Create(std::vector<int> node_of,
                                                                       const Options& options,
                                                                       TimerBackend* backend) {
  const int cpg = options.children_per_group;
  if (cpg < 2 || cpg > kMaxChildrenPerGroup || (cpg & (cpg - 1)) != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("children_per_group must be a power of two in [2, 8], got ", cpg));
  }
  if (node_of.empty() || node_of.size() > static_cast<size_t>(kMaxCpus)) {
    return absl::InvalidArgumentError(absl::StrCat("tmigr: CPU count ", node_of.size(), " outside [1, ", kMaxCpus, "]"));
  }
  if (options.variant != Variant::kV69 && options.variant != Variant::kIsolation) {
    return absl::InvalidArgumentError(absl::StrCat("tmigr: unknown variant ", static_cast<int>(options.variant)));
  }
  if (backend == nullptr) return absl::InvalidArgumentError("tmigr: backend is null");
  int max_node = 0;
  for (size_t c = 0; c < node_of.size(); ++c) {
    const int n = node_of[c];
    if (n < 0 || n >= kMaxNumaNodes) {
      return absl::InvalidArgumentError(
          absl::StrCat("tmigr: cpu ", c, " on NUMA node ", n, ", outside [0, ", kMaxNumaNodes, ")"));
    }
    max_node = std::max(max_node, n);
  }
  return std::unique_ptr<TimerMigration>(
      new TimerMigration(std::move(node_of), max_node + 1, options, backend));
}

absl::StatusOr<std::unique_ptr<TimerMigration>> TimerMigration::Create(const Topology& topology,
                                                                       const Options& options,
                                                                       TimerBackend* backend) {
  std::vector<int> node_of(static_cast<size_t>(topology.num_cpus()));
  for (int c = 0; c < topology.num_cpus(); ++c) node_of[static_cast<size_t>(c)] = topology.node_of(c);
  return Create(std::move(node_of), options, backend);
}

void TimerMigration::SetIsolation(const IsolationConfig& config) {
  domain_isolated_ = CpuMask(num_cpus_);
  nohz_full_ = CpuMask(num_cpus_);
  cpuset_isolated_ = CpuMask(num_cpus_);
  const int n = std::min(num_cpus_, config.num_cpus());
  for (int c = 0; c < n; ++c) {
    if (!config.IsHousekeeping(c, HousekeepingType::kDomain)) domain_isolated_.Set(c);
    if (config.nohz_full().Test(c)) nohz_full_.Set(c);
    if (config.cpuset_isolated().Test(c)) cpuset_isolated_.Set(c);
  }
  tick_cpu_ = config.tick_cpu();
}

// ---------------------------------------------------------------------------
// Locks (I11 recorder)
// ---------------------------------------------------------------------------
// Ranks: timer bases 0 (TimerSystem), tmc 1, group of level L: 2 + L.
void TimerMigration::NoteAcquire(int rank) {
  if (!options_.record_lock_order) return;
  if (t_num_held > 0 && t_held_ranks[t_num_held - 1] >= rank) {
    counters_.lock_order_violations.fetch_add(1, std::memory_order_relaxed);
  }
  if (t_num_held < 32) t_held_ranks[t_num_held++] = rank;
}

void TimerMigration::LockRanked(std::mutex& m, int rank) {
  NoteAcquire(rank);
  m.lock();
}

void TimerMigration::UnlockRanked(std::mutex& m, int rank) {
  m.unlock();
  NoteRelease(rank);
}

void TimerMigration::NoteRelease(int rank) {
  if (options_.record_lock_order && t_num_held > 0) {
    // Locks are released in any order; remove the most recent entry of `rank`.
    for (int i = t_num_held - 1; i >= 0; --i) {
      if (t_held_ranks[i] == rank) {
        for (int j = i; j + 1 < t_num_held; ++j) t_held_ranks[j] = t_held_ranks[j + 1];
        --t_num_held;
        break;
      }
    }
  }
}

// ---------------------------------------------------------------------------
// Walking (__walk_groups_from / walk_groups)
// ---------------------------------------------------------------------------
template <typename StepFn>
void TimerMigration::WalkGroupsFrom(Group* group, Walk& data, StepFn&& step) {
  Group* child = nullptr;
  do {
    if (step(group, child, data)) break;
    child = group;
    // Pairs with the release store in ConnectChildParent().
    group = group->parent.load(std::memory_order_acquire);
    data.childmask = child->groupmask;
    if (data.childmask == 0) Warn();
  } while (group != nullptr);
}

template <typename StepFn>
void TimerMigration::WalkGroups(CpuState& tmc, Walk& data, StepFn&& step) {
  data.childmask = tmc.groupmask;
  WalkGroupsFrom(tmc.tmgroup, data, std::forward<StepFn>(step));
}

// A group's migrator role changed hands during `cpu`'s walk.  Masks are the
// group's child bits (0xff: none).
void TimerMigration::TraceMigrator(const Group* group, uint8_t from, uint8_t to, int cpu) {
  if (cpu < 0) return;
  tracer_->Instant(cpu, tracer_->Now(), "tmigr.migrator",
                   {{"level", group->level}, {"group", group->index}, {"from_mask", from}, {"to_mask", to}});
}

bool TimerMigration::CheckMigrator(const Group* group, uint8_t childmask) {
  const GroupState s = GroupState::Unpack(group->migr_state.load(std::memory_order_relaxed));
  return s.migrator == childmask || s.migrator == kMigratorNone;
}

// ---------------------------------------------------------------------------
// Activation: tmigr_active_up() / __tmigr_cpu_activate() / tmigr_cpu_activate()
// ---------------------------------------------------------------------------
bool TimerMigration::ActiveUp(Group* group, Group* /*child*/, Walk& data) {
  const uint8_t childmask = data.childmask;
  // No barrier before: the new value does not depend on the child's state.
  uint32_t cur = group->migr_state.load(std::memory_order_relaxed);
  bool walk_done;
  for (;;) {
    GroupState s = GroupState::Unpack(cur);
    walk_done = true;
    if (s.migrator == kMigratorNone) {
      s.migrator = childmask;
      walk_done = false;
    }
    s.active |= childmask;
    if (!options_.bugs.no_seq_increment) s.seq++;
    // acq_rel: orders the child's update before the parent's (fully ordered
    // cmpxchg in the kernel) and acquires links published by setup.
    if (group->migr_state.compare_exchange_weak(cur, s.Pack(), std::memory_order_acq_rel,
                                                std::memory_order_acquire)) {
      break;
    }
    counters_.cas_retries.fetch_add(1, std::memory_order_relaxed);
  }
  if (tracer_ != nullptr && !walk_done) TraceMigrator(group, kMigratorNone, childmask, data.cpu);
  ISOLATION_INTERLEAVE_POINT(PointAt(kActiveAfterCas, group->level));
  // The group event may still be queued in the parent; it is stale now.
  group->groupevt.ignore.store(true, std::memory_order_relaxed);
  return walk_done;
}

void TimerMigration::ActivateLocked(CpuState& tmc) {
  tmc.cpuevt.ignore.store(true, std::memory_order_relaxed);
  tmc.wakeup.store(kNanosMax, std::memory_order_relaxed);
  Walk data;
  data.cpu = tmc.cpuevt.cpu;
  WalkGroups(tmc, data, [this](Group* g, Group* c, Walk& d) { return ActiveUp(g, c, d); });
}

void TimerMigration::Activate(int cpu) {
  CpuState& tmc = *cpus_[CpuIndex(cpu)];
  if (!tmc.available.load(std::memory_order_relaxed)) return;
  if (!tmc.idle.load(std::memory_order_relaxed)) {
    Warn();
    return;
  }
  LockRanked(tmc.lock, 1);
  tmc.idle.store(false, std::memory_order_relaxed);
  ActivateLocked(tmc);
  UnlockRanked(tmc.lock, 1);
}

// ---------------------------------------------------------------------------
// Event update: tmigr_next_groupevt(), tmigr_update_events()
// ---------------------------------------------------------------------------
Event* TimerMigration::NextGroupEvent(Group* group) {
  group->next_expiry.store(kNanosMax, std::memory_order_relaxed);
  while (Event* evt = group->events.First()) {
    if (!evt->ignore.load(std::memory_order_relaxed)) {
      group->next_expiry.store(evt->expires, std::memory_order_relaxed);
      return evt;
    }
    // Purge ignored events: the lock is held anyway.
    if (!group->events.Remove(evt)) break;
  }
  return nullptr;
}

Event* TimerMigration::NextExpiredGroupEvent(Group* group, Nanos now) {
  Event* evt = NextGroupEvent(group);
  if (evt == nullptr || now < evt->expires) return nullptr;
  group->events.Remove(evt);
  NextGroupEvent(group);  // recompute next_expiry
  return evt;
}

bool TimerMigration::UpdateEvents(Group* group, Group* child, Walk& data) {
  const bool remote = data.remote;
  bool walk_done = false;
  Event* evt;
  Event* first_childevt;
  Nanos nextexp;
  bool ignore;
  GroupState childstate, groupstate;
  const int grank = 2 + group->level;

  if (child != nullptr) {
    ISOLATION_INTERLEAVE_POINT(PointAt(kUpdateEnter, group->level));
    if (options_.bugs.lockless_update_reads) {
      childstate = child->state();
      groupstate = group->state();
      ISOLATION_INTERLEAVE_POINT(PointAt(kUpdateLocklessRead, group->level));
    }
    LockRanked(child->lock, 2 + child->level);
    LockRanked(group->lock, grank);
    if (!options_.bugs.lockless_update_reads) {
      // Under the locks: orders "last CPU idle" against "new timer from idle" (R2).
      childstate = child->state();
      groupstate = group->state();
    }
    if (childstate.active != 0) {
      walk_done = true;
      goto unlock;
    }
    first_childevt = NextGroupEvent(child);
    nextexp = child->next_expiry.load(std::memory_order_relaxed);
    evt = &child->groupevt;
    // May race with a concurrent activation: either a useless remote expiry or
    // a correctly ignored event.
    ignore = nextexp == kNanosMax;
    evt->ignore.store(ignore, std::memory_order_relaxed);
  } else {
    nextexp = data.nextexp;
    first_childevt = evt = data.evt;
    ignore = evt->ignore.load(std::memory_order_relaxed);
    // Fast path: the parent-level step purges the ignored event.  Never at the
    // top of a single-level hierarchy (7a96a84bfbee), unless the bug switch
    // re-creates the early return removed by 4b6f4c5a67c0.
    const bool has_parent = group->parent.load(std::memory_order_acquire) != nullptr;
    if (ignore && !remote && (has_parent || options_.bugs.early_return)) return true;
    LockRanked(group->lock, grank);
    childstate = GroupState{0, kMigratorNone, 0};
    groupstate = group->state();
  }

  if (evt->queued) {
    if (evt->expires == nextexp && !ignore) {
      // 61f7fdf8fd00: do not miss a new CPU event with the same expiry.
      if (!options_.bugs.no_cpu_refresh) evt->cpu = first_childevt->cpu;
      goto check_toplvl;
    }
    if (!group->events.Remove(evt)) group->next_expiry.store(kNanosMax, std::memory_order_relaxed);
  }

  if (ignore) {
    // A remote expiry into an inactive group must still push the group's
    // remaining events upward.
    if (!remote || groupstate.active != 0) walk_done = true;
  } else {
    evt->expires = nextexp;
    evt->cpu = first_childevt->cpu;
    if (group->events.Add(evt)) group->next_expiry.store(nextexp, std::memory_order_relaxed);
  }

check_toplvl:
  if (group->parent.load(std::memory_order_acquire) == nullptr && groupstate.migrator == kMigratorNone) {
    walk_done = true;
    if (!remote) {
      // The whole hierarchy is idle: hand the global first expiry to this CPU.
      Event* first = NextGroupEvent(group);
      data.firstexp = first != nullptr ? first->expires : kNanosMax;
    }
  }

unlock:
  UnlockRanked(group->lock, grank);
  if (child != nullptr) UnlockRanked(child->lock, 2 + child->level);
  return walk_done;
}

// ---------------------------------------------------------------------------
// Deactivation: tmigr_inactive_up() / __tmigr_cpu_deactivate()
// ---------------------------------------------------------------------------
bool TimerMigration::InactiveUp(Group* group, Group* child, Walk& data) {
  const uint8_t childmask = data.childmask;
  uint32_t cur = group->migr_state.load(std::memory_order_acquire);
  bool walk_done;
  uint8_t old_migrator = kMigratorNone;
  uint8_t new_migrator = kMigratorNone;
  for (;;) {
    GroupState childstate{0, kMigratorNone, 0};
    if (child != nullptr) childstate = GroupState::Unpack(child->migr_state.load(std::memory_order_relaxed));
    GroupState s = GroupState::Unpack(cur);
    old_migrator = s.migrator;
    walk_done = true;
    if (childstate.active == 0) {
      s.active &= static_cast<uint8_t>(~childmask);
      if (s.migrator == childmask) {
        if (s.active != 0) {
          // Hand the role to the lowest active child.
          s.migrator = static_cast<uint8_t>(1u << std::countr_zero(static_cast<unsigned>(s.active)));
        } else {
          s.migrator = kMigratorNone;
          walk_done = false;
        }
      }
    }
    if (!options_.bugs.no_seq_increment) s.seq++;
    if (s.migrator != kMigratorNone && s.active == 0) Warn();
    new_migrator = s.migrator;
    ISOLATION_INTERLEAVE_POINT(PointAt(kInactiveBeforeCas, group->level));
    if (group->migr_state.compare_exchange_weak(cur, s.Pack(), std::memory_order_acq_rel,
                                                std::memory_order_acquire)) {
      break;
    }
    counters_.cas_retries.fetch_add(1, std::memory_order_relaxed);
    // smp_mb__after_atomic(): re-read the child state after the failed CAS.
    FullFence();
  }
  if (tracer_ != nullptr && new_migrator != old_migrator) {
    TraceMigrator(group, old_migrator, new_migrator, data.cpu);
  }
  ISOLATION_INTERLEAVE_POINT(PointAt(kInactiveAfterCas, group->level));
  data.remote = false;
  UpdateEvents(group, child, data);
  return walk_done;
}

Nanos TimerMigration::DeactivateLocked(CpuState& tmc, Nanos next_global) {
  Walk data;
  data.nextexp = next_global;
  data.firstexp = kNanosMax;
  data.evt = &tmc.cpuevt;
  data.cpu = tmc.cpuevt.cpu;
  if (next_global != kNanosMax) tmc.cpuevt.ignore.store(false, std::memory_order_relaxed);
  WalkGroups(tmc, data, [this](Group* g, Group* c, Walk& d) { return InactiveUp(g, c, d); });
  return data.firstexp;
}

Nanos TimerMigration::Deactivate(int cpu, Nanos next_global) {
  CpuState& tmc = *cpus_[CpuIndex(cpu)];
  if (!tmc.available.load(std::memory_order_relaxed)) return next_global;
  LockRanked(tmc.lock, 1);
  const Nanos ret = DeactivateLocked(tmc, next_global);
  tmc.idle.store(true, std::memory_order_relaxed);
  tmc.wakeup.store(ret, std::memory_order_relaxed);
  UnlockRanked(tmc.lock, 1);
  return ret;
}

// ---------------------------------------------------------------------------
// New timer on an idle CPU: tmigr_cpu_new_timer() / tmigr_new_timer()
// ---------------------------------------------------------------------------
Nanos TimerMigration::NewTimer(int cpu, Nanos next_global) {
  CpuState& tmc = *cpus_[CpuIndex(cpu)];
  if (!tmc.available.load(std::memory_order_relaxed)) return next_global;
  LockRanked(tmc.lock, 1);
  Nanos ret = tmc.wakeup.load(std::memory_order_relaxed);
  if (next_global != kNanosMax &&
      (next_global != tmc.cpuevt.expires || tmc.cpuevt.ignore.load(std::memory_order_relaxed))) {
    if (tmc.remote.load(std::memory_order_relaxed)) {
      ret = kNanosMax;  // the remote expirer re-walks for this CPU
    } else {
      tmc.cpuevt.ignore.store(false, std::memory_order_relaxed);
      Walk data;
      data.nextexp = next_global;
      data.evt = &tmc.cpuevt;
      data.remote = false;
      WalkGroups(tmc, data, [this](Group* g, Group* c, Walk& d) { return UpdateEvents(g, c, d); });
      ret = data.firstexp;
    }
    tmc.wakeup.store(ret, std::memory_order_relaxed);
  }
  UnlockRanked(tmc.lock, 1);
  return ret;
}

// ---------------------------------------------------------------------------
// Tick: tmigr_requires_handle_remote()
// ---------------------------------------------------------------------------
bool TimerMigration::RequiresHandleRemoteUp(Group* group, Walk& data) {
  if (!CheckMigrator(group, data.childmask)) return true;
  data.firstexp = group->next_expiry.load(std::memory_order_relaxed);
  if (data.now >= data.firstexp) {
    data.check = true;
    return true;
  }
  return false;
}

bool TimerMigration::RequiresHandleRemote(int cpu, Nanos now) {
  CpuState& tmc = *cpus_[CpuIndex(cpu)];
  if (!tmc.available.load(std::memory_order_relaxed)) return false;
  if (!tmc.idle.load(std::memory_order_relaxed)) {
    Walk data;
    data.now = now;
    WalkGroups(tmc, data, [this](Group* g, Group*, Walk& d) { return RequiresHandleRemoteUp(g, d); });
    return data.check;
  }
  // Idle CPU whose wake-up fired.
  return now >= tmc.wakeup.load(std::memory_order_relaxed);
}

// ---------------------------------------------------------------------------
// Softirq: tmigr_handle_remote(), tmigr_handle_remote_up(), tmigr_handle_remote_cpu()
// ---------------------------------------------------------------------------
void TimerMigration::HandleRemoteCpu(int cpu, int runner, Nanos now) {
  CpuState& tmc = *cpus_[static_cast<size_t>(cpu)];
  LockRanked(tmc.lock, 1);
  if (!tmc.available.load(std::memory_order_relaxed) || tmc.remote.load(std::memory_order_relaxed) ||
      tmc.cpuevt.ignore.load(std::memory_order_relaxed) || now < tmc.cpuevt.expires) {
    UnlockRanked(tmc.lock, 1);
    return;
  }
  tmc.remote.store(true, std::memory_order_relaxed);
  tmc.wakeup.store(kNanosMax, std::memory_order_relaxed);
  // Drop the lock so the remote CPU can leave idle meanwhile.
  UnlockRanked(tmc.lock, 1);

  if (cpu != runner) {
    counters_.remote_expiries.fetch_add(1, std::memory_order_relaxed);
    remote_by_runner_[static_cast<size_t>(runner)].fetch_add(1, std::memory_order_relaxed);
    // tmigr_handle_remote_cpu() -> timer_expire_remote(): `runner` pulls.
    if (tracer_ != nullptr) tracer_->Instant(runner, now, "tmigr.remote_expiry", {{"owner", cpu}});
    backend_->ExpireRemote(cpu, runner, now);
  }
  ISOLATION_INTERLEAVE_POINT("tmigr.handle_remote_cpu.after_expire");

  // Lock order: timer bases before tmigr locks.
  NoteAcquire(0);
  backend_->LockBases(cpu);
  LockRanked(tmc.lock, 1);
  if (!tmc.available.load(std::memory_order_relaxed) || !tmc.idle.load(std::memory_order_relaxed)) {
    backend_->UnlockBases(cpu);
    NoteRelease(0);
  } else {
    const Nanos next_global = backend_->NextGlobalLocked(cpu, now);
    backend_->UnlockBases(cpu);
    NoteRelease(0);
    Walk data;
    data.nextexp = next_global;
    data.evt = &tmc.cpuevt;
    data.remote = true;
    // Even without a new timer (race R3): push the remaining events upward.
    WalkGroups(tmc, data, [this](Group* g, Group* c, Walk& d) { return UpdateEvents(g, c, d); });
  }
  tmc.remote.store(false, std::memory_order_relaxed);
  UnlockRanked(tmc.lock, 1);
}

bool TimerMigration::HandleRemoteUp(Group* group, Walk& data) {
  const int rank = 2 + group->level;
  for (;;) {
    // Re-checked before every pop (the kernel's `goto again`): a child that
    // activated while a remote CPU was handled is now this group's migrator
    // and takes over; this CPU stops and leaves `firstexp` as it was.
    if (!CheckMigrator(group, data.childmask)) return true;
    LockRanked(group->lock, rank);
    Event* evt = NextExpiredGroupEvent(group, data.now);
    if (evt != nullptr) {
      const int remote_cpu = evt->cpu;
      UnlockRanked(group->lock, rank);
      HandleRemoteCpu(remote_cpu, data.runner, data.now);
      continue;  // another expired event?
    }
    data.firstexp = group->next_expiry.load(std::memory_order_relaxed);
    UnlockRanked(group->lock, rank);
    return false;
  }
}

void TimerMigration::HandleRemote(int cpu, Nanos now) {
  CpuState& tmc = *cpus_[CpuIndex(cpu)];
  if (!tmc.available.load(std::memory_order_relaxed)) return;
  if (!CheckMigrator(tmc.tmgroup, tmc.groupmask)) {
    // f55acb1e44f3: an idle CPU that was overtaken still walks so that its
    // stale wakeup is cleared (no endless re-arm).
    if (options_.bugs.ghost_timer) return;
    if (tmc.wakeup.load(std::memory_order_relaxed) == kNanosMax) return;
  }
  Walk data;
  data.now = now;
  data.runner = cpu;
  data.firstexp = kNanosMax;
  WalkGroups(tmc, data, [this](Group* g, Group*, Walk& d) { return HandleRemoteUp(g, d); });
  LockRanked(tmc.lock, 1);
  tmc.wakeup.store(data.firstexp, std::memory_order_relaxed);
  UnlockRanked(tmc.lock, 1);
}

// ---------------------------------------------------------------------------
// Idle forecast: tmigr_quick_check()
// ---------------------------------------------------------------------------
Nanos TimerMigration::QuickCheck(int cpu, Nanos next_global) {
  CpuState& tmc = *cpus_[CpuIndex(cpu)];
  if (!tmc.available.load(std::memory_order_relaxed)) return next_global;
  if (tmc.idle.load(std::memory_order_relaxed)) {
    Warn();
    return next_global;
  }
  Group* group = tmc.tmgroup;
  GroupState s = GroupState::Unpack(group->migr_state.load(std::memory_order_relaxed));
  // tmigr_check_migrator_and_lonely()
  if (!(s.migrator == tmc.groupmask || s.migrator == kMigratorNone) || std::popcount(s.active) > 1) {
    return kNanosMax;
  }
  Nanos next = next_global;
  do {
    s = GroupState::Unpack(group->migr_state.load(std::memory_order_relaxed));
    if (std::popcount(s.active) > 1) return kNanosMax;  // tmigr_check_lonely()
    Group* parent = group->parent.load(std::memory_order_acquire);
    // 8ca1836769d7: the minimum over every level (events are not sorted
    // bottom-up while this CPU is active).  The bug switch reads the top only.
    if (!options_.bugs.quick_check_top_only || parent == nullptr) {
      next = std::min(next, group->next_expiry.load(std::memory_order_relaxed));
    }
    group = parent;
  } while (group != nullptr);
  return next;
}

// ---------------------------------------------------------------------------
// Hotplug: tmigr_set_cpu_available() / tmigr_clear_cpu_available()
// ---------------------------------------------------------------------------
absl::Status TimerMigration::SetCpuAvailable(int cpu) {
  if (cpu < 0 || cpu >= num_cpus_) return absl::InvalidArgumentError(absl::StrCat("tmigr: bad cpu ", cpu));
  CpuState& tmc = *cpus_[static_cast<size_t>(cpu)];
  if (sizing_.levels == 0) return absl::OkStatus();  // UP: nothing is built
  if (tmc.tmgroup == nullptr) {
    Warn();
    return absl::FailedPreconditionError(absl::StrCat("tmigr: cpu ", cpu, " was never prepared"));
  }
  if (IsIsolated(cpu)) return absl::OkStatus();
  SetCpuAvailableUnchecked(cpu);
  return absl::OkStatus();
}

void TimerMigration::SetCpuAvailableUnchecked(int cpu) {
  CpuState& tmc = *cpus_[static_cast<size_t>(cpu)];
  std::lock_guard<std::mutex> guard(available_mutex_);
  available_mask_.Set(cpu);
  LockRanked(tmc.lock, 1);
  if (!tmc.available.load(std::memory_order_relaxed)) {
    const bool idle = backend_->BaseIsIdle(cpu);
    tmc.idle.store(idle, std::memory_order_relaxed);
    if (!idle) ActivateLocked(tmc);
    tmc.available.store(true, std::memory_order_relaxed);
  }
  UnlockRanked(tmc.lock, 1);
}

void TimerMigration::ClearCpuAvailable(int cpu) {
  if (cpu < 0 || cpu >= num_cpus_) return;
  CpuState& tmc = *cpus_[static_cast<size_t>(cpu)];
  std::lock_guard<std::mutex> guard(available_mutex_);
  available_mask_.Clear(cpu);
  LockRanked(tmc.lock, 1);
  if (!tmc.available.load(std::memory_order_relaxed)) {
    UnlockRanked(tmc.lock, 1);
    return;
  }
  tmc.available.store(false, std::memory_order_relaxed);
  tmc.wakeup.store(kNanosMax, std::memory_order_relaxed);
  // The CPU handles its own timers from now on.
  const Nanos firstexp = DeactivateLocked(tmc, kNanosMax);
  UnlockRanked(tmc.lock, 1);
  if (firstexp != kNanosMax) {
    // It was the last active CPU with events pending: wake another one so it
    // becomes active and migrator (work_on_cpu(tmigr_trigger_active)).
    const int migrator = available_mask_.First();
    if (migrator < num_cpus_) backend_->KickCpu(migrator);
  }
}

absl::Status TimerMigration::BringUpCpu(int cpu) {
  if (cpu < 0 || cpu >= num_cpus_) return absl::InvalidArgumentError(absl::StrCat("tmigr: bad cpu ", cpu));
  if (absl::Status s = PrepareCpu(cpu); !s.ok()) return s;
  cpus_[static_cast<size_t>(cpu)]->online = true;
  return SetCpuAvailable(cpu);
}

void TimerMigration::TakeDownCpu(int cpu) {
  if (cpu < 0 || cpu >= num_cpus_) return;
  ClearCpuAvailable(cpu);
  cpus_[static_cast<size_t>(cpu)]->online = false;
}

// ---------------------------------------------------------------------------
// Isolation: tmigr_is_isolated(), tmigr_isolated_exclude_cpumask(),
// tmigr_init_isolation()
// ---------------------------------------------------------------------------
bool TimerMigration::IsIsolated(int cpu) const {
  if (cpu < 0 || cpu >= num_cpus_) return false;
  if (options_.variant != Variant::kIsolation || !exclude_isolated_.load(std::memory_order_relaxed)) {
    return false;
  }
  const bool domain = domain_isolated_.Test(cpu) || (options_.cpuset_term && cpuset_isolated_.Test(cpu));
  if (!domain || nohz_full_.Test(cpu)) return false;
  // The tick CPU must stay to pull the nohz_full CPUs' timers.
  if (!nohz_full_.Empty() && cpu == tick_cpu_) return false;
  return true;
}

absl::Status TimerMigration::IsolatedExclude(const CpuMask& exclude) {
  if (exclude.nbits() != num_cpus_) {
    return absl::InvalidArgumentError(absl::StrCat("tmigr: IsolatedExclude mask '", exclude.ToString(), "' of ",
                                                   exclude.nbits(), " bits for ", num_cpus_, " cpus"));
  }
  if (options_.variant != Variant::kIsolation) return absl::OkStatus();
  CpuMask online(num_cpus_);
  for (int c = 0; c < num_cpus_; ++c) {
    if (cpus_[static_cast<size_t>(c)]->online) online.Set(c);
  }
  auto isolate_set = [&](const CpuMask& available) {
    CpuMask m = exclude;
    m.And(available);
    m.AndNot(nohz_full_);
    if (!nohz_full_.Empty() && tick_cpu_ >= 0) m.Clear(tick_cpu_);
    return m;
  };
  CpuMask unisolate = online;
  unisolate.AndNot(exclude);
  CpuMask available = AvailableMask();
  unisolate.AndNot(available);
  // [V15]: both sets from the same snapshot, computed up front.
  const CpuMask v15_isolate = isolate_set(available);
  for (int c : unisolate) {
    backend_->RunOnCpu(c, [&] { (void)SetCpuAvailable(c); });
  }
  // Merged order: un-isolation is flushed before isolating, so the "pick an
  // available CPU" step of ClearCpuAvailable always finds one.
  const CpuMask isolate = options_.v15_exclude_order ? v15_isolate : isolate_set(AvailableMask());
  for (int c : isolate) {
    backend_->RunOnCpu(c, [&] { ClearCpuAvailable(c); });
  }
  return absl::OkStatus();
}

void TimerMigration::InitIsolation() {
  if (options_.variant != Variant::kIsolation) return;
  exclude_isolated_.store(true, std::memory_order_relaxed);
  if (domain_isolated_.Empty()) return;
  (void)IsolatedExclude(domain_isolated_);  // sized num_cpus_ by SetIsolation
}

absl::Status TimerMigration::SetCpusetIsolated(const CpuMask& isolated) {
  if (isolated.nbits() != num_cpus_) {
    return absl::InvalidArgumentError(absl::StrCat("tmigr: cpuset mask of ", isolated.nbits(),
                                                   " bits for ", num_cpus_, " cpus"));
  }
  cpuset_isolated_ = isolated;
  if (options_.variant == Variant::kIsolation && exclude_isolated_.load(std::memory_order_relaxed)) {
    return IsolatedExclude(cpuset_isolated_);
  }
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------
// Setup: tmigr_get_group(), tmigr_init_root(), tmigr_connect_child_parent(),
// tmigr_setup_groups(), tmigr_add_cpu(), tmigr_cpu_prepare()
// ---------------------------------------------------------------------------
Group* TimerMigration::GetGroup(int node, int level) {
  auto& list = levels_[static_cast<size_t>(level)];
  // The kernel's list head is the newest group: scan newest first.
  for (auto it = list.rbegin(); it != list.rend(); ++it) {
    Group* g = *it;
    if (level < sizing_.crossnode_level && g->numa_node != node) continue;
    // Slot 0 of a brand-new top is reserved for the old root (counted in
    // advance), so the old root may join it even when the count is full; only
    // reachable with fewer than 8 children per group.
    const bool reserved_for_old_root = reconnecting_old_root_ && g == root_;
    if (g->num_children >= options_.children_per_group && !reserved_for_old_root) continue;
    return g;
  }
  Group& g = storage_.emplace_back();
  g.level = level;
  g.numa_node = level < sizing_.crossnode_level ? node : -1;
  g.index = static_cast<int>(list.size());
  list.push_back(&g);
  return &g;
}

bool TimerMigration::InitRoot(Group* group, bool activate) {
  if (group->parent.load(std::memory_order_relaxed) == nullptr && group != root_) {
    // The new top prepares its groupmask before it can be reached (b729cc1ec21a).
    group->groupmask = 1;
    if (activate) Warn();
    return true;
  }
  return false;
}

void TimerMigration::ConnectChildParent(Group* child, Group* parent, bool activate) {
  if (InitRoot(parent, activate)) parent->num_children = 1;  // slot 0: the old root
  if (parent->parent.load(std::memory_order_relaxed) == nullptr && activate) {
    if (parent->num_children != 2) Warn();
    child->groupmask = 1;
  } else {
    child->groupmask = static_cast<uint8_t>(1u << parent->num_children++);
  }
  // Publish last (de3ced72a792): pairs with the acquire load in the walk.
  child->parent.store(parent, std::memory_order_release);
}

absl::Status TimerMigration::SetupGroups(int cpu, int node, Group* start, bool activate) {
  const int nlevels = sizing_.levels;
  std::vector<Group*> stack(static_cast<size_t>(nlevels), nullptr);
  int start_lvl = 0;
  int top = 0;
  if (start != nullptr) {
    stack[static_cast<size_t>(start->level)] = start;
    start_lvl = start->level + 1;
  }
  const bool root_mismatch = root_ != nullptr && root_->numa_node != node;
  int i;
  for (i = start_lvl; i < nlevels; ++i) {
    reconnecting_old_root_ = activate;
    Group* group = GetGroup(node, i);
    reconnecting_old_root_ = false;
    top = i;
    stack[static_cast<size_t>(i)] = group;
    if (group->parent.load(std::memory_order_relaxed) != nullptr) break;
    if ((!root_mismatch || i >= sizing_.crossnode_level) && levels_[static_cast<size_t>(i)].size() == 1) break;
  }
  if (i >= nlevels) {
    Warn();
    return absl::InternalError(absl::StrCat("tmigr: no single top group for cpu ", cpu));
  }
  for (; i >= start_lvl; --i) {
    Group* group = stack[static_cast<size_t>(i)];
    if (i == 0) {
      CpuState& tmc = *cpus_[static_cast<size_t>(cpu)];
      tmc.tmgroup = group;
      tmc.groupmask = static_cast<uint8_t>(1u << group->num_children++);
      InitRoot(group, activate);
      continue;
    }
    ConnectChildParent(stack[static_cast<size_t>(i - 1)], group, activate);
  }
  if (activate) {
    ISOLATION_INTERLEAVE_POINT("tmigr.setup.before_old_root_read");
    // atomic_fetch_or(0): acquire the old root's latest state and release the
    // new links to a CPU still on its way to activate it.
    const GroupState s = GroupState::Unpack(start->migr_state.fetch_or(0, std::memory_order_acq_rel));
    Group* parent = start->parent.load(std::memory_order_relaxed);
    if (parent == nullptr) Warn();
    if (s.active != 0 && parent != nullptr) {
      Walk data;
      data.childmask = start->groupmask;
      WalkGroupsFrom(parent, data, [this](Group* g, Group* c, Walk& d) { return ActiveUp(g, c, d); });
    }
  }
  if (levels_[static_cast<size_t>(top)].size() == 1) {
    Group* group = levels_[static_cast<size_t>(top)].front();
    if (group->parent.load(std::memory_order_relaxed) != nullptr) Warn();
    if (root_ != nullptr && root_->level > top) Warn();
    root_ = group;
  }
  return absl::OkStatus();
}

absl::Status TimerMigration::PrepareCpu(int cpu) {
  if (cpu < 0 || cpu >= num_cpus_) return absl::InvalidArgumentError(absl::StrCat("tmigr: bad cpu ", cpu));
  CpuState& tmc = *cpus_[static_cast<size_t>(cpu)];
  if (tmc.prepared) return absl::OkStatus();
  if (sizing_.levels == 0) {  // one possible CPU: nothing is built
    tmc.prepared = true;
    return absl::OkStatus();
  }
  tmc.cpuevt.expires = kNanosMax;
  tmc.cpuevt.ignore.store(true, std::memory_order_relaxed);
  tmc.cpuevt.cpu = cpu;
  tmc.remote.store(false, std::memory_order_relaxed);
  tmc.wakeup.store(kNanosMax, std::memory_order_relaxed);
  {
    std::lock_guard<std::mutex> guard(setup_mutex_);
    Group* old_root = root_;
    absl::Status s = SetupGroups(cpu, node_of_[static_cast<size_t>(cpu)], nullptr, false);
    if (s.ok() && old_root != nullptr && old_root != root_) {
      s = SetupGroups(-1, old_root->numa_node, old_root, true);
    }
    if (!s.ok()) return s;
  }
  if (tmc.groupmask == 0) return absl::InternalError(absl::StrCat("tmigr: cpu ", cpu, " got no groupmask"));
  tmc.prepared = true;
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------
// Inspection
// ---------------------------------------------------------------------------
CpuMask TimerMigration::AvailableMask() const {
  std::lock_guard<std::mutex> guard(available_mutex_);
  return available_mask_;
}

std::vector<int64_t> TimerMigration::RemoteExpiriesByRunner() const {
  std::vector<int64_t> out(static_cast<size_t>(num_cpus_));
  for (int c = 0; c < num_cpus_; ++c) {
    out[static_cast<size_t>(c)] = remote_by_runner_[static_cast<size_t>(c)].load(std::memory_order_relaxed);
  }
  return out;
}

namespace {
std::string ExpiryString(Nanos t) { return t == kNanosMax ? "MAX" : absl::StrCat(t); }
}  // namespace

std::string TimerMigration::DebugString() const {
  std::string out;
  for (size_t l = 0; l < levels_.size(); ++l) {
    for (const Group* g : levels_[l]) {
      const GroupState s = g->state();
      Group* parent = g->parent.load(std::memory_order_acquire);
      absl::StrAppend(&out, g->Name(), g == root_ ? " (root)" : "", " node=", g->numa_node,
                      " children=", g->num_children, " mask=", absl::StrFormat("0x%02x", g->groupmask),
                      " parent=", parent ? parent->Name() : "-",
                      absl::StrFormat(" active=0x%02x migr=0x%02x seq=%u", s.active, s.migrator, s.seq),
                      " next=", ExpiryString(g->next_expiry.load(std::memory_order_relaxed)), " events=[");
      for (int i = 0; i < g->events.size(); ++i) {
        const Event* e = g->events.at(i);
        absl::StrAppend(&out, i ? " " : "", "(", ExpiryString(e->expires), ",cpu", e->cpu,
                        e->ignore.load(std::memory_order_relaxed) ? ",ign" : "", ")");
      }
      absl::StrAppend(&out, "]\n");
    }
  }
  return out;
}

TimerMigration::PathCoverage TimerMigration::CoverageOf(int cpu, Nanos timer) const {
  PathCoverage cov;
  if (cpu < 0 || cpu >= num_cpus_) return cov;
  const CpuState& tmc = *cpus_[static_cast<size_t>(cpu)];
  const Group* g = tmc.tmgroup;
  Nanos worst = std::numeric_limits<Nanos>::min();
  while (g != nullptr) {
    Nanos best = kNanosMax;
    for (int i = 0; i < g->events.size(); ++i) {
      const Event* e = g->events.at(i);
      if (!e->ignore.load(std::memory_order_relaxed) && e->expires <= timer) best = std::min(best, e->expires);
    }
    worst = std::max(worst, best);
    if (g->state().active != 0) break;
    const Group* parent = g->parent.load(std::memory_order_acquire);
    if (parent == nullptr) cov.reaches_idle_root = true;
    g = parent;
  }
  cov.min_expiry_on_path = worst;
  return cov;
}

std::vector<std::string> TimerMigration::CheckInvariants() const {
  std::vector<std::string> v;
  const int cpg = options_.children_per_group;
  bool any_active_cpu = false;
  // I1, I10, I3 (group part), I6, I7.
  for (size_t l = 0; l < levels_.size(); ++l) {
    for (const Group* g : levels_[l]) {
      const GroupState s = g->state();
      const std::string name = g->Name();
      if (s.migrator != kMigratorNone &&
          (std::popcount(s.migrator) != 1 || (s.migrator & s.active) == 0)) {
        v.push_back(absl::StrFormat("I1 %s: migrator 0x%02x not a single active bit (active 0x%02x)",
                                    name, s.migrator, s.active));
      }
      if ((s.migrator == kMigratorNone) != (s.active == 0)) {
        v.push_back(absl::StrFormat("I1 %s: migrator 0x%02x vs active 0x%02x", name, s.migrator, s.active));
      }
      if (g->num_children > cpg) v.push_back(absl::StrCat("I10 ", name, ": more than ", cpg, " children"));
      if (s.active >> std::min(g->num_children, 8) != 0) {
        v.push_back(absl::StrFormat("I10 %s: active bit 0x%02x beyond %d children", name, s.active, g->num_children));
      }
      Group* parent = g->parent.load(std::memory_order_acquire);
      if (parent == nullptr && g != root_) v.push_back(absl::StrCat("I10 ", name, ": no parent but not the root"));
      if (parent != nullptr) {
        if (g->groupmask == 0) v.push_back(absl::StrCat("I10 ", name, ": groupmask 0"));
        if (parent->level != g->level + 1) v.push_back(absl::StrCat("I10 ", name, ": parent level"));
        if (g->level < sizing_.crossnode_level - 1 && parent->numa_node != g->numa_node) {
          v.push_back(absl::StrCat("I10 ", name, ": parent ", parent->Name(), " on another node"));
        }
        const GroupState ps = parent->state();
        const bool bit = (ps.active & g->groupmask) != 0;
        if (bit != (s.active != 0)) {
          v.push_back(absl::StrFormat("I3 %s: active 0x%02x but bit in %s is %d", name, s.active,
                                      parent->Name(), bit ? 1 : 0));
        }
        // I6: a live group event names the owner of the child's first event.
        const Event& ge = g->groupevt;
        if (s.active == 0 && ge.queued && !ge.ignore.load(std::memory_order_relaxed) && ge.expires != kNanosMax) {
          bool found = false;
          Nanos first = kNanosMax;
          for (int i = 0; i < g->events.size(); ++i) {
            const Event* e = g->events.at(i);
            if (e->ignore.load(std::memory_order_relaxed)) continue;
            first = std::min(first, e->expires);
          }
          for (int i = 0; i < g->events.size(); ++i) {
            const Event* e = g->events.at(i);
            if (!e->ignore.load(std::memory_order_relaxed) && e->expires == first && e->cpu == ge.cpu) found = true;
          }
          if (!found || first != ge.expires) {
            v.push_back(absl::StrCat("I6 ", name, ": event (", ExpiryString(ge.expires), ", cpu", ge.cpu,
                                     ") in ", parent->Name(), " but first child event is ", ExpiryString(first)));
          }
        }
      }
      // I7
      Nanos live = kNanosMax;
      for (int i = 0; i < g->events.size(); ++i) {
        const Event* e = g->events.at(i);
        if (!e->ignore.load(std::memory_order_relaxed)) live = std::min(live, e->expires);
        if (i > 0 && g->events.at(i - 1)->expires > e->expires) v.push_back(absl::StrCat("I7 ", name, ": queue unsorted"));
      }
      if (g->next_expiry.load(std::memory_order_relaxed) > live) {
        v.push_back(absl::StrCat("I7 ", name, ": next_expiry ", ExpiryString(g->next_expiry.load()),
                                 " > first live event ", ExpiryString(live)));
      }
    }
  }
  // Per-CPU: I3 (CPU part), I8, I10 (masks).
  CpuMask avail(num_cpus_);
  for (int c = 0; c < num_cpus_; ++c) {
    const CpuState& tmc = *cpus_[static_cast<size_t>(c)];
    if (tmc.tmgroup == nullptr) continue;
    const bool available = tmc.available.load(std::memory_order_relaxed);
    const bool idle = tmc.idle.load(std::memory_order_relaxed);
    if (available) avail.Set(c);
    const GroupState s = tmc.tmgroup->state();
    const bool bit = (s.active & tmc.groupmask) != 0;
    if (available && !idle) {
      any_active_cpu = true;
      if (!bit) v.push_back(absl::StrCat("I3 cpu", c, ": active but bit clear in ", tmc.tmgroup->Name()));
    } else if (bit) {
      v.push_back(absl::StrCat(available ? "I3" : "I8", " cpu", c, ": ", available ? "idle" : "unavailable",
                               " but bit set in ", tmc.tmgroup->Name()));
    }
    if (tmc.groupmask == 0) v.push_back(absl::StrCat("I10 cpu", c, ": groupmask 0"));
    if (tmc.remote.load(std::memory_order_relaxed)) v.push_back(absl::StrCat("I2 cpu", c, ": remote left set"));
  }
  // I4
  if (any_active_cpu && root_ != nullptr && root_->state().migrator == kMigratorNone) {
    v.push_back("I4 an available CPU is active but the root has no migrator");
  }
  // I8: the available mask equals the CPUs marked available.
  const CpuMask mask = AvailableMask();
  if (!mask.Equal(avail)) {
    v.push_back(absl::StrCat("I8 available mask ", mask.ToString(), " != available cpus ", avail.ToString()));
  }
  // I9
  if (options_.variant == Variant::kIsolation && isolation_enabled()) {
    if (avail.Empty() && root_ != nullptr) v.push_back("I9 no available CPU");
    if (!nohz_full_.Empty() && tick_cpu_ >= 0 && tick_cpu_ < num_cpus_ &&
        cpus_[static_cast<size_t>(tick_cpu_)]->online && !avail.Test(tick_cpu_)) {
      v.push_back(absl::StrCat("I9 tick cpu ", tick_cpu_, " not available"));
    }
  }
  // I10: distinct masks among the children of each group.
  std::unordered_map<const Group*, unsigned> seen;
  for (const auto& level : levels_) {
    for (const Group* g : level) {
      const Group* p = g->parent.load(std::memory_order_acquire);
      if (p == nullptr) continue;
      unsigned& m = seen[p];
      if (m & g->groupmask) v.push_back(absl::StrCat("I10 ", p->Name(), ": duplicate child mask"));
      m |= g->groupmask;
    }
  }
  for (int c = 0; c < num_cpus_; ++c) {
    const CpuState& tmc = *cpus_[static_cast<size_t>(c)];
    if (tmc.tmgroup == nullptr) continue;
    unsigned& m = seen[tmc.tmgroup];
    if (m & tmc.groupmask) v.push_back(absl::StrCat("I10 cpu", c, ": duplicate mask in ", tmc.tmgroup->Name()));
    m |= tmc.groupmask;
  }
  return v;
}

}  // namespace isolation::tmigr
