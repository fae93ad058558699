// SPDX-License-Identifier: GPL-2.0-or-later
// Per-CPU VM-statistics differentials and their deferred folding; see
// include/isolation/vmstat/vmstat.h.  Written from the behaviour of mm/vmstat.c
// (v6.15 text) and the seed/remote-fold series described in
// docs/vmstat.md; no kernel code is copied.

#include "isolation/vmstat/vmstat.h"
#include "isolation/vmstat/writer.h"

#include <algorithm>
#include <bit>
#include <cstdlib>
#include <type_traits>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "isolation/core/interleave.h"

namespace isolation::vmstat {

int Fls(uint64_t x) { return x == 0 ? 0 : 64 - std::countl_zero(x); }

// calculate_normal_threshold()
int NormalThreshold(int64_t managed_pages, int online_cpus, int page_shift) {
  ISOLATION_CONTRACT(page_shift >= 0 && page_shift <= 27, "vmstat: page_shift %d outside [0, 27]",
                     page_shift);
  page_shift = std::clamp(page_shift, 0, 27);
  const int64_t mem = managed_pages >> (27 - page_shift);  // 128 MiB units
  const int t = 2 * Fls(static_cast<uint64_t>(std::max(online_cpus, 0))) *
                (1 + Fls(static_cast<uint64_t>(std::max<int64_t>(mem, 0))));
  return std::min(kThresholdCap, t);
}

// calculate_pressure_threshold()
int PressureThreshold(int64_t low_wmark, int64_t min_wmark, int online_cpus) {
  int64_t distance = 0;
  if (__builtin_sub_overflow(low_wmark, min_wmark, &distance))
    distance = low_wmark > min_wmark ? INT64_MAX : 0;
  int64_t t = online_cpus > 0 ? distance / online_cpus : distance;
  t = std::max<int64_t>(1, t);
  return static_cast<int>(std::min<int64_t>(kThresholdCap, t));
}

// -----------------------------------------------------------------------------
// Base: shared counters, thresholds, deferred machinery.
// -----------------------------------------------------------------------------

namespace {
// Event counters written only by their CPU's own context: a relaxed load +
// store is enough (single writer; readers take a racy snapshot) and keeps a
// locked instruction off the hook paths being measured.
inline void OwnerIncrement(std::atomic<int64_t>& c) {
  c.store(c.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
}
}  // namespace

Vmstat::Vmstat(VmstatConfig config, std::unique_ptr<FoldPolicy> policy, SlotTraits slot_traits)
    : config_(std::move(config)),
      policy_(std::move(policy)),
      traits_(policy_->traits()),
      slot_traits_(slot_traits),
      mark_dirty_(traits_.writers_mark_dirty || traits_.notify_first_dirty),
      notify_first_dirty_(traits_.notify_first_dirty),
      cpu_state_(static_cast<size_t>(config_.num_cpus)),
      dirty_(static_cast<size_t>(config_.num_cpus)),
      zone_shared_(config_.zones.size()),
      node_shared_(static_cast<size_t>(config_.num_nodes)),
      drift_mark_(config_.zones.size(), 0),
      node_pressure_(static_cast<size_t>(config_.num_nodes), false) {
  isolated_ =
      config_.isolated.nbits() == config_.num_cpus ? config_.isolated : CpuMask(config_.num_cpus);
  nohz_full_ =
      config_.nohz_full.nbits() == config_.num_cpus ? config_.nohz_full : CpuMask(config_.num_cpus);
  online_count_ = config_.num_cpus;
  const size_t nz = static_cast<size_t>(config_.num_cpus) * config_.zones.size();
  const size_t nn = static_cast<size_t>(config_.num_cpus) * static_cast<size_t>(config_.num_nodes);
  zone_threshold_ = std::make_unique<std::atomic<int8_t>[]>(nz);
  node_threshold_ = std::make_unique<std::atomic<int8_t>[]>(nn);
  ApplyThresholds();
}

int64_t Vmstat::SharedRaw(StatKind kind, int instance, int item) const {
  if (!ValidSlot(0, kind, instance, item)) return 0;
  return Shared(kind, instance).v[static_cast<size_t>(item)].load(std::memory_order_relaxed);
}
int64_t Vmstat::GlobalRaw(StatKind kind, int item) const {
  if (!ValidSlot(0, kind, 0, item)) return 0;
  return Global(kind).v[static_cast<size_t>(item)].load(std::memory_order_relaxed);
}
// zone_page_state(): clamp the (possibly negative) shared value at 0.
int64_t Vmstat::Read(StatKind kind, int instance, int item) const {
  return std::max<int64_t>(0, SharedRaw(kind, instance, item));
}
int64_t Vmstat::ReadGlobal(StatKind kind, int item) const {
  return std::max<int64_t>(0, GlobalRaw(kind, item));
}
// zone_page_state_snapshot(): adds every online CPU's differential.
int64_t Vmstat::ReadSnapshot(StatKind kind, int instance, int item) const {
  if (!ValidSlot(0, kind, instance, item)) return 0;
  int64_t x = SharedRaw(kind, instance, item);
  for (int cpu = 0; cpu < num_cpus(); ++cpu) {
    if (IsOnline(cpu)) x += Diff(cpu, kind, instance, item);
  }
  return std::max<int64_t>(0, x);
}
int64_t Vmstat::ReadGlobalSnapshot(StatKind kind, int item) const {
  if (!ValidSlot(0, kind, 0, item)) return 0;
  int64_t x = GlobalRaw(kind, item);
  for (int cpu = 0; cpu < num_cpus(); ++cpu) {
    if (!IsOnline(cpu)) continue;
    for (int i = 0; i < num_instances(kind); ++i) x += Diff(cpu, kind, i, item);
  }
  return std::max<int64_t>(0, x);
}

int64_t Vmstat::MaxAbsDiff(int cpu) const {
  int64_t m = 0;
  if (!ValidCpu(cpu)) return 0;
  for (StatKind kind : {StatKind::kZone, StatKind::kNode}) {
    for (int i = 0; i < num_instances(kind); ++i) {
      for (int item = 0; item < num_items(kind); ++item) {
        m = std::max(m, std::abs(Diff(cpu, kind, i, item)));
      }
    }
  }
  return m;
}

double Vmstat::MaxThresholdFraction(int cpu) const {
  double m = 0;
  if (!ValidCpu(cpu)) return 0;
  for (StatKind kind : {StatKind::kZone, StatKind::kNode}) {
    for (int i = 0; i < num_instances(kind); ++i) {
      const double t = std::max(1, ThresholdRaw(cpu, kind, i));
      for (int item = 0; item < num_items(kind); ++item) {
        m = std::max(m, static_cast<double>(std::abs(Diff(cpu, kind, i, item))) / t);
      }
    }
  }
  return m;
}

int Vmstat::Threshold(int cpu, StatKind kind, int instance) const {
  return ValidSlot(cpu, kind, instance, 0) ? ThresholdRaw(cpu, kind, instance) : 0;
}
void Vmstat::Saturate(std::atomic<int64_t>& counter, bool up) {
  // The fetch_add wrapped (modulo 2^64, defined for atomics): pin the
  // counter to the bound it crossed unless another add already moved it back
  // to the right side.
  const int64_t bound = up ? INT64_MAX : INT64_MIN;
  int64_t cur = counter.load(std::memory_order_relaxed);
  while ((up ? cur < 0 : cur >= 0) &&
         !counter.compare_exchange_weak(cur, bound, std::memory_order_relaxed)) {
  }
  saturated_adds_.fetch_add(1, std::memory_order_relaxed);
}

int64_t Vmstat::DriftMark(int zone) const {
  return zone >= 0 && zone < num_zones() ? drift_mark_[static_cast<size_t>(zone)] : 0;
}
bool Vmstat::IsOnline(int cpu) const {
  return ValidCpu(cpu) && State(cpu).online.load(std::memory_order_relaxed);
}
bool Vmstat::WorkPending(int cpu) const {
  return ValidCpu(cpu) && State(cpu).work_pending.load(std::memory_order_relaxed);
}
bool Vmstat::Dirty(int cpu) const {
  return ValidCpu(cpu) && dirty_[static_cast<size_t>(cpu)].v.load(std::memory_order_relaxed);
}

CpuCounters Vmstat::Counters(int cpu) const {
  CpuCounters c;
  if (!ValidCpu(cpu)) return c;
  const CpuState& s = State(cpu);
  c.work_runs = s.work_runs.load(std::memory_order_relaxed);
  c.cancelled_work_runs = s.cancelled_work_runs.load(std::memory_order_relaxed);
  c.quiet_calls = s.quiet_calls.load(std::memory_order_relaxed);
  c.quiet_folds = s.quiet_folds.load(std::memory_order_relaxed);
  c.return_to_user_folds = s.rtu_folds.load(std::memory_order_relaxed);
  c.remote_folds = s.remote_folds.load(std::memory_order_relaxed);
  c.threshold_folds = s.threshold_folds.load(std::memory_order_relaxed);
  c.local_work_arms = s.local_work_arms.load(std::memory_order_relaxed);
  return c;
}

// The zone's threshold outside memory pressure: the configured fixed value
// or calculate_normal_threshold().
int Vmstat::ZoneNormalThreshold(const ZoneSpec& zone, int online_cpus) const {
  return config_.fixed_threshold > 0
             ? std::min(config_.fixed_threshold, kThresholdCap)
             : NormalThreshold(zone.managed_pages, online_cpus, config_.page_shift);
}

// refresh_zone_stat_thresholds(): every online CPU gets the zone's threshold;
// a node's threshold is the largest of its zones'; drift marks are set (never
// cleared) when n * t exceeds the low-min distance.
void Vmstat::ApplyThresholds() {
  const int n = online_count_;
  for (int cpu = 0; cpu < num_cpus(); ++cpu) {
    if (!IsOnline(cpu)) continue;
    for (int node = 0; node < num_nodes(); ++node) {
      ThresholdSlot(cpu, StatKind::kNode, node).store(0, std::memory_order_relaxed);
    }
  }
  for (int z = 0; z < num_zones(); ++z) {
    const ZoneSpec& zone = config_.zones[static_cast<size_t>(z)];
    const int t = ZoneNormalThreshold(zone, n);
    for (int cpu = 0; cpu < num_cpus(); ++cpu) {
      if (!IsOnline(cpu)) continue;
      ThresholdSlot(cpu, StatKind::kZone, z)
          .store(static_cast<int8_t>(t), std::memory_order_relaxed);
      auto& nt = ThresholdSlot(cpu, StatKind::kNode, zone.node);
      nt.store(static_cast<int8_t>(std::max<int>(t, nt.load(std::memory_order_relaxed))),
               std::memory_order_relaxed);
    }
    const int64_t tolerate = zone.low_wmark - zone.min_wmark;
    const int64_t max_drift = static_cast<int64_t>(n) * t;
    if (max_drift > tolerate) drift_mark_[static_cast<size_t>(z)] = zone.high_wmark + max_drift;
  }
}

void Vmstat::RefreshThresholds() { ApplyThresholds(); }

// set_pgdat_percpu_threshold(): only zones with a drift mark change.
absl::Status Vmstat::SetPressure(int node, bool on) {
  if (node < 0 || node >= num_nodes()) {
    return absl::InvalidArgumentError(absl::StrCat("vmstat: node ", node, " out of range"));
  }
  node_pressure_[static_cast<size_t>(node)] = on;
  const int n = online_count_;
  for (int z = 0; z < num_zones(); ++z) {
    const ZoneSpec& zone = config_.zones[static_cast<size_t>(z)];
    if (zone.node != node || drift_mark_[static_cast<size_t>(z)] == 0) continue;
    int t;
    if (on) {
      t = PressureThreshold(zone.low_wmark, zone.min_wmark, n);
    } else {
      t = ZoneNormalThreshold(zone, n);
    }
    for (int cpu = 0; cpu < num_cpus(); ++cpu) {
      if (IsOnline(cpu)) {
        ThresholdSlot(cpu, StatKind::kZone, z)
            .store(static_cast<int8_t>(t), std::memory_order_relaxed);
      }
    }
  }
  return absl::OkStatus();
}

absl::Status Vmstat::CpuOffline(int cpu) {
  if (cpu < 0 || cpu >= num_cpus()) {
    return absl::InvalidArgumentError(absl::StrCat("vmstat: cpu ", cpu, " out of range"));
  }
  if (!IsOnline(cpu)) {
    return absl::FailedPreconditionError(absl::StrCat("vmstat: cpu ", cpu, " already offline"));
  }
  if (online_count_ <= 1) {
    return absl::FailedPreconditionError("vmstat: cannot offline the last online cpu");
  }
  CpuState& s = State(cpu);
  // vmstat_cpu_down_prep: cancel (disable) the per-CPU work.
  // A CPU's own armed work goes too (B.local, the v11 fix: it must not run
  // unbound elsewhere); ArmOwnWork's `online` test keeps it from being
  // re-armed.
  CancelWork(cpu);
  s.online.store(false, std::memory_order_relaxed);
  --online_count_;
  // page_alloc_cpu_dead -> cpu_vm_stats_fold(cpu).
  FoldDeadCpu(cpu);
  ClearDirty(cpu);
  // vmstat_cpu_dead: thresholds depend on the number of online CPUs.
  ApplyThresholds();
  return absl::OkStatus();
}

absl::Status Vmstat::CpuOnline(int cpu) {
  if (cpu < 0 || cpu >= num_cpus()) {
    return absl::InvalidArgumentError(absl::StrCat("vmstat: cpu ", cpu, " out of range"));
  }
  if (IsOnline(cpu)) {
    return absl::FailedPreconditionError(absl::StrCat("vmstat: cpu ", cpu, " already online"));
  }
  State(cpu).online.store(true, std::memory_order_relaxed);
  ++online_count_;
  ApplyThresholds();  // vmstat_cpu_online
  return absl::OkStatus();
}

// vmstat_shepherd(): the policy decides per online CPU; queueing (with the
// pending bit's test-and-set) and the remote fold are common.
int Vmstat::Shepherd(absl::FunctionRef<bool(int)> tick_stopped,
                     absl::FunctionRef<void(int cpu, uint64_t generation)> queue_work) {
  using Action = FoldPolicy::ShepherdAction;
  int count = 0;
  for (int cpu = 0; cpu < num_cpus(); ++cpu) {
    if (!IsOnline(cpu)) continue;
    CpuState& st = State(cpu);
    const Action action = policy_->Shepherd(*this, cpu, tick_stopped);
    if (action == Action::kQueueWork) {
      ISOLATION_INTERLEAVE_POINT("vmstat.shepherd.before_pending_test");
      if (st.work_pending.load(std::memory_order_relaxed)) continue;
      // queue_delayed_work_on's test-and-set of the pending bit.  Acquire
      // pairs with the release that cleared it (CancelWork, RunCpuWork):
      // seeing it clear implies seeing the generation current at that
      // time, so the item queued below is never born stale (a stale item
      // would leave the bit set forever and starve the CPU of work).
      if (st.work_pending.exchange(true, std::memory_order_acquire)) continue;
      const uint64_t gen = st.work_generation.load(std::memory_order_relaxed);
      // Relaxed: a statistic; the shepherd is not the CPU's owner context.
      st.shepherd_queued.fetch_add(1, std::memory_order_relaxed);
      queue_work(cpu, gen);
      ++count;
    } else if (action == Action::kFoldRemote) {
      // A policy answering kFoldRemote declared folds_remotely, which Create
      // paired with a remote-foldable slot; other slots fold nothing here.
      if (FoldCpuRemote(cpu) > 0) st.remote_folds.fetch_add(1, std::memory_order_relaxed);
      ++count;
    }
  }
  return count;
}

// vmstat_update()
bool Vmstat::RunCpuWork(int cpu, uint64_t generation) {
  if (!ValidCpu(cpu)) return false;
  CpuState& st = State(cpu);
  if (generation != st.work_generation.load(std::memory_order_relaxed) ||
      !st.work_pending.load(std::memory_order_relaxed) || !IsOnline(cpu)) {
    OwnerIncrement(st.cancelled_work_runs);
    return false;
  }
  OwnerIncrement(st.work_runs);
  const int changes = FoldOwn(cpu);
  if (changes > 0) return true;  // re-queue after round_jiffies_relative(P); stays pending
  // Release: see the shepherd's acquire test-and-set (the generation this
  // item validated is visible to whoever queues the next one).
  st.work_pending.store(false, std::memory_order_release);
  return false;
}

// The owner's fold: vmstat_dirty is cleared *before* the slots, so
// a writer racing the fold (an interrupt in the kernel) sets it again.
int Vmstat::FoldOwn(int cpu) {
  if (mark_dirty_) ClearDirty(cpu);
  return RefreshCpu(cpu);
}

// cancel_delayed_work() / disable_delayed_work_sync(): retire the queued
// item's generation *before* clearing the pending bit.  In the other order a
// concurrent shepherd could see the bit clear, queue an item carrying the old
// generation, and that item would then be discarded as cancelled with the bit
// still set: the CPU would never get work again.
void Vmstat::CancelWork(int cpu) {
  CpuState& st = State(cpu);
  st.work_generation.fetch_add(1, std::memory_order_relaxed);
  ISOLATION_INTERLEAVE_POINT("vmstat.cancel_work.after_generation");
  // Release: pairs with the shepherd's acquire exchange of the bit.
  st.work_pending.store(false, std::memory_order_release);
  // The armed timer of the CPU's own work, if any, need not even fire.
  if (local_queue_ != nullptr) local_queue_->CancelLocalWork(cpu);
}

// B.local's queue_delayed_work_on() from vmstat_mark_dirty(), owner context.
void Vmstat::ArmOwnWork(int cpu) {
  CpuState& st = State(cpu);
  // The cpu_offline flag: never while (or after) the CPU goes down.
  if (!st.online.load(std::memory_order_relaxed)) return;
  if (st.work_pending.load(std::memory_order_relaxed)) return;  // already armed
  // Test-and-set as the shepherd does (acquire: see Shepherd()); a policy
  // arming its own work keeps the shepherd off this CPU, so only this CPU's
  // own contexts race for it.
  if (st.work_pending.exchange(true, std::memory_order_acquire)) return;
  OwnerIncrement(st.local_work_arms);
  if (local_queue_ != nullptr) {
    local_queue_->ArmLocalWork(cpu, st.work_generation.load(std::memory_order_relaxed));
  }
}

// Out of line: a policy call on the rare clean->dirty transition only.
void Vmstat::NotifyFirstDirty(int cpu) {
  FoldContext ctx(*this);
  policy_->OnFirstDirty(ctx, cpu);
}

void Vmstat::WriterMarkDirty(int cpu) { MarkDirty(cpu); }

namespace {
// The dirty flag of writers whose policy does not mark CPUs dirty: their
// fast path has no dirty test, but a VmstatSlotWriter<form, true> made from
// one still reads a flag: always set, so its clean->dirty test never fires.
const std::atomic<bool> kAlwaysDirty{true};
}  // namespace

// The writer front end: this CPU's blocks and thresholds, once.
absl::StatusOr<VmstatWriter> Vmstat::Writer(int cpu) {
  if (!ValidCpu(cpu)) {
    return absl::InvalidArgumentError(
        absl::StrCat("vmstat: Writer(cpu ", cpu, "): outside cpus [0, ", config_.num_cpus, ")"));
  }
  using internal::WriterForm;
  const size_t c = static_cast<size_t>(cpu);
  const size_t zones = static_cast<size_t>(num_zones());
  const size_t nodes = static_cast<size_t>(num_nodes());
  void* zone_block = nullptr;
  void* node_block = nullptr;
  // The block type is the form's; the offset is cpu x instances blocks.
  auto offset = [&](auto* tag) {
    using Block = std::remove_pointer_t<decltype(tag)>;
    zone_block = static_cast<Block*>(writer_blocks_[0]) + c * zones;
    node_block = static_cast<Block*>(writer_blocks_[1]) + c * nodes;
  };
#define ISOLATION_VMSTAT_BLOCK_OFFSET_(form, Form)                            \
  case WriterForm::form:                                                      \
    offset(static_cast<internal::CellBlock<internal::Form::Cell>*>(nullptr)); \
    break;
  switch (writer_form_) {
    ISOLATION_VMSTAT_INLINE_WRITER_FORMS(ISOLATION_VMSTAT_BLOCK_OFFSET_)
    case WriterForm::kVirtual:
      break;
  }
#undef ISOLATION_VMSTAT_BLOCK_OFFSET_
  return VmstatWriter(this, cpu, writer_form_, mark_dirty_, zone_block, node_block,
                      &zone_threshold_[c * zones], &node_threshold_[c * nodes],
                      mark_dirty_ ? &dirty_[c].v : &kAlwaysDirty);
}

bool Vmstat::QuietVmstat(int cpu, bool tick_stopped) {
  if (!ValidCpu(cpu)) return false;
  CpuState& st = State(cpu);
  OwnerIncrement(st.quiet_calls);
  FoldContext ctx(*this);
  const bool folded = policy_->QuietVmstat(ctx, cpu, tick_stopped);
  if (folded) OwnerIncrement(st.quiet_folds);
  return folded;
}

// tick_nohz_user_enter_prepare(): only nohz_full CPUs, only policies that
// hook it (the others pay one test of a member).
bool Vmstat::ReturnToUser(int cpu, bool tick_stopped) {
  if (!traits_.hooks_return_to_user || !IsNohzFull(cpu)) return false;
  FoldContext ctx(*this);
  const bool folded = policy_->ReturnToUser(ctx, cpu, tick_stopped);
  if (folded) OwnerIncrement(State(cpu).rtu_folds);
  return folded;
}

// ---- FoldContext and the policy defaults ------------------------------------------

int FoldContext::FoldOwn(int cpu) { return vm_.ValidCpu(cpu) ? vm_.FoldOwn(cpu) : 0; }
void FoldContext::CancelWork(int cpu) {
  if (vm_.ValidCpu(cpu)) vm_.CancelWork(cpu);
}
void FoldContext::ArmOwnWork(int cpu) {
  if (vm_.ValidCpu(cpu)) vm_.ArmOwnWork(cpu);
}

bool FoldPolicy::QuietVmstat(FoldContext& ctx, int cpu, bool tick_stopped) {
  (void)ctx, (void)cpu, (void)tick_stopped;
  return false;
}
bool FoldPolicy::ReturnToUser(FoldContext& ctx, int cpu, bool tick_stopped) {
  (void)ctx, (void)cpu, (void)tick_stopped;
  return false;
}
void FoldPolicy::OnFirstDirty(FoldContext& ctx, int cpu) { (void)ctx, (void)cpu; }
bool FoldPolicy::RequeueLocally(const Vmstat& vm, int cpu) const {
  (void)vm, (void)cpu;
  return false;
}

absl::StatusOr<std::unique_ptr<Vmstat>> Vmstat::Create(VmstatConfig config) {
  if (config.num_cpus < 1 || config.num_cpus > kMaxCpus) {
    return absl::InvalidArgumentError(
        absl::StrCat("vmstat: num_cpus ", config.num_cpus, " out of [1, ", kMaxCpus, "]"));
  }
  if (config.zone_items < 1 || config.zone_items > kMaxZoneItems) {
    return absl::InvalidArgumentError(
        absl::StrCat("vmstat: zone_items ", config.zone_items, " out of [1, ", kMaxZoneItems, "]"));
  }
  if (config.node_items < 1 || config.node_items > kMaxNodeItems) {
    return absl::InvalidArgumentError(
        absl::StrCat("vmstat: node_items ", config.node_items, " out of [1, ", kMaxNodeItems, "]"));
  }
  if (config.num_nodes < 1 || config.num_nodes > kMaxNumaNodes) {
    return absl::InvalidArgumentError(
        absl::StrCat("vmstat: num_nodes ", config.num_nodes, " outside [1, ", kMaxNumaNodes, "]"));
  }
  if (config.zones.empty() || config.zones.size() > static_cast<size_t>(kMaxZones)) {
    return absl::InvalidArgumentError(
        absl::StrCat("vmstat: ", config.zones.size(), " zones, outside [1, ", kMaxZones, "]"));
  }
  for (const ZoneSpec& z : config.zones) {
    if (z.node < 0 || z.node >= config.num_nodes) {
      return absl::InvalidArgumentError(absl::StrCat("vmstat: zone '", z.name, "' on node ", z.node,
                                                     " >= num_nodes ", config.num_nodes));
    }
    if (z.managed_pages > kMaxZonePages || z.high_wmark > kMaxZonePages) {
      return absl::InvalidArgumentError(absl::StrCat("vmstat: zone '", z.name, "' of ",
                                                     z.managed_pages, " pages with high watermark ",
                                                     z.high_wmark, ", more than ", kMaxZonePages));
    }
    if (z.managed_pages < 0 || z.min_wmark < 0 || z.min_wmark > z.low_wmark ||
        z.low_wmark > z.high_wmark) {
      return absl::InvalidArgumentError(absl::StrCat(
          "vmstat: zone '", z.name, "' has a negative size or watermarks out of order (min ",
          z.min_wmark, " low ", z.low_wmark, " high ", z.high_wmark, ")"));
    }
  }
  for (const CpuMask* m : {&config.isolated, &config.nohz_full}) {
    if (m->nbits() != 0 && m->nbits() != config.num_cpus) {
      return absl::InvalidArgumentError(
          absl::StrCat("vmstat: cpu mask of ", m->nbits(), " bits for ", config.num_cpus, " cpus"));
    }
  }
  if (config.stat_interval <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("vmstat: stat_interval ", config.stat_interval, " must be > 0"));
  }
  if (config.page_shift < 9 || config.page_shift > 27) {
    return absl::InvalidArgumentError(
        absl::StrCat("vmstat: page_shift ", config.page_shift, " out of [9, 27]"));
  }
  // The two axes, from their registries.
  ISOLATION_ASSIGN_OR_RETURN(config.fold_policy, ParseFoldPolicy(config.fold_policy));
  ISOLATION_ASSIGN_OR_RETURN(const FoldPolicyEntry* entry,
                             FoldPolicyRegistry().Find(config.fold_policy));
  std::unique_ptr<FoldPolicy> policy = entry->factory();
  if (policy == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("vmstat: fold policy '", config.fold_policy,
                                                   "': its factory returned no policy"));
  }
  const FoldPolicyTraits traits = policy->traits();
  if (config.slot.empty()) config.slot = std::string(traits.slot);
  auto slot = SlotRegistry().Find(config.slot);
  if (!slot.ok())
    return absl::InvalidArgumentError(absl::StrCat("vmstat: ", slot.status().message()));
  config.slot = (*slot)->name;
  if (traits.folds_remotely && !(*slot)->factory.traits.remote_foldable) {
    return absl::InvalidArgumentError(absl::StrCat("vmstat: fold policy '", config.fold_policy,
                                                   "' folds remotely, but slot '", config.slot,
                                                   "' may be written only by its owner"));
  }
  return (*slot)->factory.make(std::move(config), std::move(policy));
}

}  // namespace isolation::vmstat
