// SPDX-License-Identifier: GPL-2.0-or-later
// The part of the timer-migration hierarchy shared by every hierarchy
// variant (kernel/time/timer_migration.c): setup (tmigr_setup_groups and
// friends), hotplug (tmigr_set/clear_cpu_available), isolation (through the
// participation variant) and snapshots.  See hierarchy.h.

#include "tmigr/hierarchy.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "isolation/core/interleave.h"

namespace isolation::tmigr {

// ---------------------------------------------------------------------------
// EventQueue (timerqueue_add / timerqueue_del)
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
  for (int i = size_; i > pos; --i)
    items_[static_cast<size_t>(i)] = items_[static_cast<size_t>(i - 1)];
  items_[static_cast<size_t>(pos)] = e;
  ++size_;
  e->queued = true;
  return pos == 0;
}

bool EventQueue::Remove(Event* e) {
  for (int i = 0; i < size_; ++i) {
    if (items_[static_cast<size_t>(i)] == e) {
      for (int j = i; j + 1 < size_; ++j)
        items_[static_cast<size_t>(j)] = items_[static_cast<size_t>(j + 1)];
      --size_;
      break;
    }
  }
  e->queued = false;
  return size_ > 0;
}

// ---------------------------------------------------------------------------
// I11 lock-order recorder
// ---------------------------------------------------------------------------
namespace {
thread_local int t_held_ranks[32];
thread_local int t_num_held = 0;
}  // namespace

bool RecordLockAcquire(int rank) {
  const bool in_order = t_num_held == 0 || t_held_ranks[t_num_held - 1] < rank;
  if (t_num_held < 32) t_held_ranks[t_num_held++] = rank;
  return in_order;
}

void RecordLockRelease(int rank) {
  // Locks are released in any order; remove the most recent entry of `rank`.
  for (int i = t_num_held - 1; i >= 0; --i) {
    if (t_held_ranks[i] == rank) {
      for (int j = i; j + 1 < t_num_held; ++j) t_held_ranks[j] = t_held_ranks[j + 1];
      --t_num_held;
      return;
    }
  }
}

int RecordedLocksHeld() { return t_num_held; }

// ---------------------------------------------------------------------------
// Construction
// ---------------------------------------------------------------------------
HierarchyBase::HierarchyBase(HierarchyArgs args)
    : options_(std::move(args.options)),
      backend_(args.backend),
      num_cpus_(static_cast<int>(args.node_of.size())),
      record_lock_order_(options_.record_lock_order),
      participation_(std::move(args.participation)),
      node_of_(std::move(args.node_of)),
      sizing_(ComputeSizing(num_cpus_, args.num_nodes, options_.children_per_group)),
      available_mask_(num_cpus_),
      remote_by_runner_(new std::atomic<int64_t>[static_cast<size_t>(num_cpus_)]) {
  inputs_.domain_isolated = CpuMask(num_cpus_);
  inputs_.cpuset_isolated = CpuMask(num_cpus_);
  inputs_.nohz_full = CpuMask(num_cpus_);
  cpus_.reserve(static_cast<size_t>(num_cpus_));
  for (int c = 0; c < num_cpus_; ++c) {
    cpus_.push_back(std::make_unique<CpuState>());
    remote_by_runner_[static_cast<size_t>(c)].store(0, std::memory_order_relaxed);
  }
  levels_.resize(static_cast<size_t>(std::max(sizing_.levels, 1)));
}

HierarchyBase::~HierarchyBase() = default;

absl::Status HierarchyBase::SetIsolation(const IsolationConfig& config) {
  if (config.num_cpus() != num_cpus_) {
    return absl::InvalidArgumentError(absl::StrCat("tmigr: an isolation configuration of ",
                                                   config.num_cpus(), " CPUs for a hierarchy of ",
                                                   num_cpus_, " CPUs"));
  }
  inputs_.domain_isolated = CpuMask(num_cpus_);
  inputs_.nohz_full = CpuMask(num_cpus_);
  inputs_.cpuset_isolated = CpuMask(num_cpus_);
  for (int c = 0; c < num_cpus_; ++c) {
    if (!config.IsHousekeeping(c, HousekeepingType::kDomain)) inputs_.domain_isolated.Set(c);
    if (config.nohz_full().Test(c)) inputs_.nohz_full.Set(c);
    if (config.cpuset_isolated().Test(c)) inputs_.cpuset_isolated.Set(c);
  }
  inputs_.tick_cpu = config.tick_cpu();
  return absl::OkStatus();
}

void HierarchyBase::TraceMigrator(const Group* group, uint8_t from, uint8_t to, int cpu) {
  if (cpu < 0) return;
  tracer_->Instant(
      cpu, tracer_->Now(), "tmigr.migrator",
      {{"level", group->level}, {"group", group->index}, {"from_mask", from}, {"to_mask", to}});
}

// ---------------------------------------------------------------------------
// Hotplug: tmigr_set_cpu_available() / tmigr_clear_cpu_available()
// ---------------------------------------------------------------------------
absl::Status HierarchyBase::SetCpuAvailable(int cpu) {
  if (cpu < 0 || cpu >= num_cpus_)
    return absl::InvalidArgumentError(absl::StrCat("tmigr: bad cpu ", cpu));
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

void HierarchyBase::SetCpuAvailableUnchecked(int cpu) {
  CpuState& tmc = *cpus_[static_cast<size_t>(cpu)];
  MutexLock guard(available_mutex_);
  available_mask_.Set(cpu);
  LockRanked(tmc.lock, kCpuLockRank);
  if (!tmc.available.load(std::memory_order_relaxed)) {
    const bool idle = backend_->BaseIsIdle(cpu);
    tmc.idle.store(idle, std::memory_order_relaxed);
    if (!idle) ActivateLocked(tmc);
    tmc.available.store(true, std::memory_order_relaxed);
  }
  UnlockRanked(tmc.lock, kCpuLockRank);
}

void HierarchyBase::ClearCpuAvailable(int cpu) {
  if (cpu < 0 || cpu >= num_cpus_) return;
  CpuState& tmc = *cpus_[static_cast<size_t>(cpu)];
  MutexLock guard(available_mutex_);
  available_mask_.Clear(cpu);
  LockRanked(tmc.lock, kCpuLockRank);
  if (!tmc.available.load(std::memory_order_relaxed)) {
    UnlockRanked(tmc.lock, kCpuLockRank);
    return;
  }
  tmc.available.store(false, std::memory_order_relaxed);
  tmc.wakeup.store(kNanosMax, std::memory_order_relaxed);
  // The CPU handles its own timers from now on.
  const Nanos firstexp = DeactivateLocked(tmc, kNanosMax);
  UnlockRanked(tmc.lock, kCpuLockRank);
  if (firstexp != kNanosMax) {
    // It was the last active CPU with events pending: wake another one so it
    // becomes active and migrator (work_on_cpu(tmigr_trigger_active)).
    const int migrator = available_mask_.First();
    if (migrator < num_cpus_) backend_->KickCpu(migrator);
  }
}

absl::Status HierarchyBase::BringUpCpu(int cpu) {
  if (cpu < 0 || cpu >= num_cpus_)
    return absl::InvalidArgumentError(absl::StrCat("tmigr: bad cpu ", cpu));
  if (absl::Status s = PrepareCpu(cpu); !s.ok()) return s;
  cpus_[static_cast<size_t>(cpu)]->online = true;
  return SetCpuAvailable(cpu);
}

void HierarchyBase::TakeDownCpu(int cpu) {
  if (cpu < 0 || cpu >= num_cpus_) return;
  ClearCpuAvailable(cpu);
  cpus_[static_cast<size_t>(cpu)]->online = false;
}

// ---------------------------------------------------------------------------
// Isolation: what happens is the participation's (variants.h).
// ---------------------------------------------------------------------------
bool HierarchyBase::IsIsolated(int cpu) const {
  if (cpu < 0 || cpu >= num_cpus_ || !isolation_enabled_.load(std::memory_order_relaxed))
    return false;
  return participation_->IsIsolated(cpu, inputs_);
}

absl::Status HierarchyBase::IsolatedExclude(const CpuMask& exclude) {
  if (exclude.nbits() != num_cpus_) {
    return absl::InvalidArgumentError(absl::StrCat("tmigr: IsolatedExclude mask '",
                                                   exclude.ToString(), "' of ", exclude.nbits(),
                                                   " bits for ", num_cpus_, " cpus"));
  }
  participation_->Exclude(exclude, *this);
  return absl::OkStatus();
}

void HierarchyBase::InitIsolation() { participation_->InitIsolation(*this); }

absl::Status HierarchyBase::SetCpusetIsolated(const CpuMask& isolated) {
  if (isolated.nbits() != num_cpus_) {
    return absl::InvalidArgumentError(
        absl::StrCat("tmigr: cpuset mask of ", isolated.nbits(), " bits for ", num_cpus_, " cpus"));
  }
  inputs_.cpuset_isolated = isolated;
  if (isolation_enabled_.load(std::memory_order_relaxed))
    participation_->Exclude(inputs_.cpuset_isolated, *this);
  return absl::OkStatus();
}

CpuMask HierarchyBase::OnlineMask() const {
  CpuMask online(num_cpus_);
  for (int c = 0; c < num_cpus_; ++c) {
    if (cpus_[static_cast<size_t>(c)]->online) online.Set(c);
  }
  return online;
}

// tmigr_cpu_unisolate / tmigr_cpu_isolate work items.
void HierarchyBase::QueueSetAvailable(int cpu) {
  backend_->QueueWork(cpu, [this, cpu] { (void)SetCpuAvailable(cpu); });
}
void HierarchyBase::QueueClearAvailable(int cpu) {
  backend_->QueueWork(cpu, [this, cpu] { ClearCpuAvailable(cpu); });
}
void HierarchyBase::Flush() { backend_->FlushWork(); }

// ---------------------------------------------------------------------------
// Setup: tmigr_get_group(), tmigr_init_root(), tmigr_connect_child_parent(),
// tmigr_setup_groups(), tmigr_add_cpu(), tmigr_cpu_prepare()
// ---------------------------------------------------------------------------
Group* HierarchyBase::GetGroup(int node, int level) {
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

bool HierarchyBase::InitRoot(Group* group, bool activate) {
  if (group->parent.load(std::memory_order_relaxed) == nullptr && group != root_) {
    // The new top prepares its groupmask before it can be reached (b729cc1ec21a).
    group->groupmask = 1;
    if (activate) Warn();
    return true;
  }
  return false;
}

void HierarchyBase::ConnectChildParent(Group* child, Group* parent, bool activate) {
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

absl::Status HierarchyBase::SetupGroups(int cpu, int node, Group* start, bool activate) {
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
    if ((!root_mismatch || i >= sizing_.crossnode_level) &&
        levels_[static_cast<size_t>(i)].size() == 1)
      break;
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
    const GroupState s =
        GroupState::Unpack(start->migr_state.fetch_or(0, std::memory_order_acq_rel));
    Group* parent = start->parent.load(std::memory_order_relaxed);
    if (parent == nullptr) Warn();
    if (s.active != 0 && parent != nullptr) PropagateActivation(parent, start->groupmask);
  }
  if (levels_[static_cast<size_t>(top)].size() == 1) {
    Group* group = levels_[static_cast<size_t>(top)].front();
    if (group->parent.load(std::memory_order_relaxed) != nullptr) Warn();
    if (root_ != nullptr && root_->level > top) Warn();
    root_ = group;
  }
  return absl::OkStatus();
}

absl::Status HierarchyBase::PrepareCpu(int cpu) {
  if (cpu < 0 || cpu >= num_cpus_)
    return absl::InvalidArgumentError(absl::StrCat("tmigr: bad cpu ", cpu));
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
    MutexLock guard(setup_mutex_);
    Group* old_root = root_;
    absl::Status s = SetupGroups(cpu, node_of_[static_cast<size_t>(cpu)], nullptr, false);
    if (s.ok() && old_root != nullptr && old_root != root_) {
      s = SetupGroups(-1, old_root->numa_node, old_root, true);
    }
    if (!s.ok()) return s;
  }
  if (tmc.groupmask == 0)
    return absl::InternalError(absl::StrCat("tmigr: cpu ", cpu, " got no groupmask"));
  tmc.prepared = true;
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------
// Observers and snapshots
// ---------------------------------------------------------------------------
CpuMask HierarchyBase::AvailableMask() const {
  MutexLock guard(available_mutex_);
  return available_mask_;
}

std::vector<int64_t> HierarchyBase::RemoteExpiriesByRunner() const {
  std::vector<int64_t> out(static_cast<size_t>(num_cpus_));
  for (int c = 0; c < num_cpus_; ++c) {
    out[static_cast<size_t>(c)] =
        remote_by_runner_[static_cast<size_t>(c)].load(std::memory_order_relaxed);
  }
  return out;
}

namespace {
GroupId IdOf(const Group* g) { return g == nullptr ? GroupId{} : GroupId{g->level, g->index}; }

EventSnapshot SnapshotOf(const Event& e) {
  return {e.expires, e.cpu, e.ignore.load(std::memory_order_relaxed), e.queued};
}
}  // namespace

HierarchySnapshot HierarchyBase::Snapshot() const {
  HierarchySnapshot s;
  s.children_per_group = options_.children_per_group;
  s.sizing = sizing_;
  s.root = IdOf(root_);
  s.levels.resize(levels_.size());
  for (size_t l = 0; l < levels_.size(); ++l) {
    s.levels[l].reserve(levels_[l].size());
    for (const Group* g : levels_[l]) {
      GroupSnapshot& gs = s.levels[l].emplace_back();
      gs.id = IdOf(g);
      gs.parent = IdOf(g->parent.load(std::memory_order_acquire));
      gs.numa_node = g->numa_node;
      gs.num_children = g->num_children;
      gs.groupmask = g->groupmask;
      gs.state = g->state();
      gs.next_expiry = g->next_expiry.load(std::memory_order_relaxed);
      gs.groupevt = SnapshotOf(g->groupevt);
      gs.events.reserve(static_cast<size_t>(g->events.size()));
      for (int i = 0; i < g->events.size(); ++i) gs.events.push_back(SnapshotOf(*g->events.at(i)));
    }
  }
  s.cpus.resize(static_cast<size_t>(num_cpus_));
  for (int c = 0; c < num_cpus_; ++c) {
    const CpuState& tmc = *cpus_[static_cast<size_t>(c)];
    CpuSnapshot& cs = s.cpus[static_cast<size_t>(c)];
    cs.prepared = tmc.prepared;
    cs.online = tmc.online;
    cs.available = tmc.available.load(std::memory_order_relaxed);
    cs.idle = tmc.idle.load(std::memory_order_relaxed);
    cs.remote = tmc.remote.load(std::memory_order_relaxed);
    cs.group = IdOf(tmc.tmgroup);
    cs.groupmask = tmc.groupmask;
    cs.wakeup = tmc.wakeup.load(std::memory_order_relaxed);
    cs.cpuevt = SnapshotOf(tmc.cpuevt);
  }
  s.available_mask = AvailableMask();
  s.isolation_enabled = isolation_enabled();
  s.nohz_full = inputs_.nohz_full;
  s.tick_cpu = inputs_.tick_cpu;
  return s;
}

}  // namespace isolation::tmigr
