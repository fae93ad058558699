// SPDX-License-Identifier: GPL-2.0-or-later
// Per-CPU VM-statistics differentials and their deferred folding; see
// include/isolation/vmstat/vmstat.h.  Written from the behaviour of mm/vmstat.c
// (v6.15 text) and the seed/remote-fold series described in
// shared/spec/vmstat.md; no kernel code is copied.

#include "isolation/vmstat/vmstat.h"

#include <algorithm>
#include <bit>
#include <cstdlib>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "isolation/core/interleave.h"

namespace isolation::vmstat {

std::string_view StrategyName(Strategy s) {
  switch (s) {
    case Strategy::kA0: return "A0";
    case Strategy::kA1: return "A1";
    case Strategy::kB: return "B";
    case Strategy::kC: return "C";
    case Strategy::kD: return "D";
    case Strategy::kCPlainWriterNegativeControl: return "C-plain-negative-control";
    case Strategy::kBLocal: return "B.local";
  }
  return "?";
}

absl::StatusOr<Strategy> ParseStrategy(std::string_view name) {
  const std::string n = absl::AsciiStrToUpper(std::string(name));
  if (n == "A0") return Strategy::kA0;
  if (n == "A1") return Strategy::kA1;
  if (n == "B") return Strategy::kB;
  if (n == "B.LOCAL" || n == "B-LOCAL" || n == "BLOCAL") return Strategy::kBLocal;
  if (n == "C") return Strategy::kC;
  if (n == "D") return Strategy::kD;
  if (n == "C-PLAIN" || n == "C-PLAIN-NEGATIVE-CONTROL") {
    return Strategy::kCPlainWriterNegativeControl;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown vmstat strategy '", std::string(name), "' (want A0, A1, B, B.local, C, D or C-plain)"));
}

int Fls(uint64_t x) { return x == 0 ? 0 : 64 - std::countl_zero(x); }

// calculate_normal_threshold()
int NormalThreshold(int64_t managed_pages, int online_cpus, int page_shift) {
  ISOLATION_CONTRACT(page_shift >= 0 && page_shift <= 27, "vmstat: page_shift %d outside [0, 27]", page_shift);
  page_shift = std::clamp(page_shift, 0, 27);
  const int64_t mem = managed_pages >> (27 - page_shift);  // 128 MiB units
  const int t = 2 * Fls(static_cast<uint64_t>(std::max(online_cpus, 0))) *
                (1 + Fls(static_cast<uint64_t>(std::max<int64_t>(mem, 0))));
  return std::min(kThresholdCap, t);
}

// calculate_pressure_threshold()
int PressureThreshold(int64_t low_wmark, int64_t min_wmark, int online_cpus) {
  int64_t distance = 0;
  if (__builtin_sub_overflow(low_wmark, min_wmark, &distance)) distance = low_wmark > min_wmark ? INT64_MAX : 0;
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

Vmstat::Vmstat(VmstatConfig config)
    : config_(std::move(config)),
      cpu_state_(static_cast<size_t>(config_.num_cpus)),
      dirty_(static_cast<size_t>(config_.num_cpus)),
      zone_shared_(config_.zones.size()),
      node_shared_(static_cast<size_t>(config_.num_nodes)),
      drift_mark_(config_.zones.size(), 0),
      node_pressure_(static_cast<size_t>(config_.num_nodes), false) {
  isolated_ = config_.isolated.nbits() == config_.num_cpus ? config_.isolated : CpuMask(config_.num_cpus);
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

int Vmstat::Threshold(int cpu, StatKind kind, int instance) const {
  return ValidSlot(cpu, kind, instance, 0) ? ThresholdRaw(cpu, kind, instance) : 0;
}
int64_t Vmstat::DriftMark(int zone) const {
  return zone >= 0 && zone < num_zones() ? drift_mark_[static_cast<size_t>(zone)] : 0;
}
bool Vmstat::IsOnline(int cpu) const { return ValidCpu(cpu) && State(cpu).online.load(std::memory_order_relaxed); }
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
  return config_.fixed_threshold > 0 ? std::min(config_.fixed_threshold, kThresholdCap)
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
      ThresholdSlot(cpu, StatKind::kZone, z).store(static_cast<int8_t>(t), std::memory_order_relaxed);
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
        ThresholdSlot(cpu, StatKind::kZone, z).store(static_cast<int8_t>(t), std::memory_order_relaxed);
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
  CancelWork(cpu);
  // B.local (v11 fix): the armed item must not run unbound elsewhere; the
  // writer's `IsOnline` test below keeps it from being re-armed.
  if (strategy() == Strategy::kBLocal && local_queue_ != nullptr) local_queue_->CancelLocalWork(cpu);
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

// vmstat_shepherd()
int Vmstat::Shepherd(absl::FunctionRef<bool(int)> tick_stopped,
                     absl::FunctionRef<void(int cpu, uint64_t generation)> queue_work) {
  int count = 0;
  const Strategy s = strategy();
  for (int cpu = 0; cpu < num_cpus(); ++cpu) {
    if (!IsOnline(cpu)) continue;
    CpuState& st = State(cpu);
    switch (s) {
      case Strategy::kA0:
      case Strategy::kA1:
      case Strategy::kB:
      case Strategy::kBLocal: {
        if (s == Strategy::kA1 && IsIsolated(cpu)) continue;  // be5e015d107d
        if (s == Strategy::kB && tick_stopped(cpu)) continue;  // v8 3/5
        // B.local: nohz_full CPUs manage their work themselves (v10 3/6).
        if (s == Strategy::kBLocal && IsNohzFull(cpu)) continue;
        const bool wanted = (s == Strategy::kB || s == Strategy::kBLocal) ? Dirty(cpu) : NeedUpdate(cpu);
        if (!wanted) continue;
        ISOLATION_INTERLEAVE_POINT("vmstat.shepherd.before_pending_test");
        if (st.work_pending.load(std::memory_order_relaxed)) continue;
        // queue_delayed_work_on's test-and-set of the pending bit.  Acquire
        // pairs with the release that cleared it (CancelWork, RunCpuWork):
        // seeing it clear implies seeing the generation current at that
        // time, so the item queued below is never born stale (a stale item
        // would leave the bit set forever and starve the CPU of work).
        if (st.work_pending.exchange(true, std::memory_order_acquire)) continue;
        const uint64_t gen = st.work_generation.load(std::memory_order_relaxed);
        queue_work(cpu, gen);
        ++count;
        break;
      }
      case Strategy::kC:
      case Strategy::kD:
      case Strategy::kCPlainWriterNegativeControl: {
        if (config_.remote_fold_need_update_filter && !NeedUpdate(cpu)) continue;
        if (FoldCpuRemote(cpu) > 0) st.remote_folds.fetch_add(1, std::memory_order_relaxed);
        ++count;
        break;
      }
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
  if (strategy() == Strategy::kB || strategy() == Strategy::kBLocal) ClearDirty(cpu);  // before the slots (spec 3.4)
  const int changes = RefreshCpu(cpu);
  if (changes > 0) return true;  // re-queue after round_jiffies_relative(P); stays pending
  // Release: see the shepherd's acquire test-and-set (the generation this
  // item validated is visible to whoever queues the next one).
  st.work_pending.store(false, std::memory_order_release);
  return false;
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
}

bool Vmstat::QuietImpl(int cpu, bool tick_stopped) {
  CpuState& st = State(cpu);
  switch (strategy()) {
    case Strategy::kA0:
    case Strategy::kA1:
      // quiet_vmstat(): folds only if the work is pending and need_update.
      if (!st.work_pending.load(std::memory_order_relaxed)) return false;
      if (!NeedUpdate(cpu)) return false;
      RefreshCpu(cpu);
      return true;
    case Strategy::kB:
      if (!Dirty(cpu)) return false;
      ClearDirty(cpu);
      RefreshCpu(cpu);
      if (tick_stopped && st.work_pending.load(std::memory_order_relaxed)) {
        // cancel_delayed_work(): the queued item will find a stale generation.
        CancelWork(cpu);
      }
      return true;
    case Strategy::kBLocal:
      // Idle entry only folds (the v13 series): the armed work stays, it
      // finds the CPU clean and dies.
      if (!Dirty(cpu)) return false;
      ClearDirty(cpu);
      RefreshCpu(cpu);
      return true;
    default:
      return false;  // C/D: nothing is ever folded on the CPU itself
  }
}

// B.local's queue_delayed_work_on() from vmstat_mark_dirty(), owner context.
void Vmstat::ArmLocalWork(int cpu) {
  CpuState& st = State(cpu);
  // The cpu_offline flag: never while (or after) the CPU goes down.  (Owner
  // context from a writer: the cpu is valid by the writer contract.)
  if (!st.online.load(std::memory_order_relaxed)) return;
  if (st.work_pending.load(std::memory_order_relaxed)) return;  // already armed
  // Test-and-set as the shepherd does (acquire: see Shepherd()); the shepherd
  // skips nohz_full CPUs here, so only this CPU's own contexts race for it.
  if (st.work_pending.exchange(true, std::memory_order_acquire)) return;
  OwnerIncrement(st.local_work_arms);
  if (local_queue_ != nullptr) {
    local_queue_->ArmLocalWork(cpu, st.work_generation.load(std::memory_order_relaxed));
  }
}

bool Vmstat::QuietVmstat(int cpu, bool tick_stopped) {
  if (!ValidCpu(cpu)) return false;
  CpuState& st = State(cpu);
  OwnerIncrement(st.quiet_calls);
  const bool folded = QuietImpl(cpu, tick_stopped);
  if (folded) OwnerIncrement(st.quiet_folds);
  return folded;
}

// __tick_nohz_user_enter_prepare() of the seed patch.
bool Vmstat::ReturnToUser(int cpu, bool tick_stopped) {
  if (!ValidCpu(cpu)) return false;
  if (strategy() == Strategy::kBLocal) {
    // B.local (FLUSH_WORK_ON_RESUME_USER): no tick-state test, so no remote
    // race; fold if dirty, then cancel the armed (or re-queued) work.
    if (!IsNohzFull(cpu)) return false;
    bool folded = false;
    if (Dirty(cpu)) {
      ClearDirty(cpu);
      RefreshCpu(cpu);
      folded = true;
    }
    if (State(cpu).work_pending.load(std::memory_order_relaxed)) {
      CancelWork(cpu);
      if (local_queue_ != nullptr) local_queue_->CancelLocalWork(cpu);
    }
    if (folded) OwnerIncrement(State(cpu).rtu_folds);
    return folded;
  }
  if (strategy() != Strategy::kB || !tick_stopped || !IsNohzFull(cpu)) return false;
  const bool folded = QuietImpl(cpu, tick_stopped);
  if (folded) OwnerIncrement(State(cpu).rtu_folds);
  return folded;
}

// -----------------------------------------------------------------------------
// Slot layouts per strategy.
// -----------------------------------------------------------------------------
namespace {

enum class SlotMode {
  kOwnerS8,          // A0, A1, B: s8, only the owner writes
  kSharedS32Cas,     // C: s32, CAS writers, xchg folders
  kSharedS32Plain,   // negative control: s32, plain writers, xchg folders
  kWatermark,        // D: 64-bit running sum + folded watermark
};

template <SlotMode M>
struct Cell;
template <>
struct Cell<SlotMode::kOwnerS8> {
  std::atomic<int8_t> d{0};
};
template <>
struct Cell<SlotMode::kSharedS32Cas> {
  std::atomic<int32_t> d{0};
};
template <>
struct Cell<SlotMode::kSharedS32Plain> {
  std::atomic<int32_t> d{0};
};
template <>
struct Cell<SlotMode::kWatermark> {
  std::atomic<int64_t> slot{0};    // written only by the owner
  std::atomic<int64_t> folded{0};  // advanced by CAS by any folder
};

template <SlotMode M>
class VmstatImpl final : public Vmstat {
 public:
  explicit VmstatImpl(VmstatConfig config)
      : Vmstat(std::move(config)),
        zone_blocks_(static_cast<size_t>(num_cpus()) * static_cast<size_t>(num_zones())),
        node_blocks_(static_cast<size_t>(num_cpus()) * static_cast<size_t>(num_nodes())) {}

  void Mod(int cpu, StatKind kind, int instance, int item, int64_t delta) override {
    ContractSlot("Mod", cpu, kind, instance, item);
    ContractDelta("Mod", delta);
    ModState(cpu, kind, instance, item, delta, 0);
  }
  void Inc(int cpu, StatKind kind, int instance, int item) override {
    ContractSlot("Inc", cpu, kind, instance, item);
    ModState(cpu, kind, instance, item, 1, 1);
  }
  void Dec(int cpu, StatKind kind, int instance, int item) override {
    ContractSlot("Dec", cpu, kind, instance, item);
    ModState(cpu, kind, instance, item, -1, -1);
  }
  void ModIrqsOff(int cpu, StatKind kind, int instance, int item, int64_t delta) override {
    ContractSlot("ModIrqsOff", cpu, kind, instance, item);
    ContractDelta("ModIrqsOff", delta);
    if constexpr (M == SlotMode::kOwnerS8) {
      PlainMod(cpu, kind, instance, item, delta);
    } else {
      ModState(cpu, kind, instance, item, delta, 0);  // C: __ variants alias the CAS path
    }
  }
  void IncIrqsOff(int cpu, StatKind kind, int instance, int item) override {
    ContractSlot("IncIrqsOff", cpu, kind, instance, item);
    if constexpr (M == SlotMode::kOwnerS8) {
      PlainStep(cpu, kind, instance, item, 1);
    } else {
      ModState(cpu, kind, instance, item, 1, 1);
    }
  }
  void DecIrqsOff(int cpu, StatKind kind, int instance, int item) override {
    ContractSlot("DecIrqsOff", cpu, kind, instance, item);
    if constexpr (M == SlotMode::kOwnerS8) {
      PlainStep(cpu, kind, instance, item, -1);
    } else {
      ModState(cpu, kind, instance, item, -1, -1);
    }
  }

  int64_t Diff(int cpu, StatKind kind, int instance, int item) const override {
    return ValidSlot(cpu, kind, instance, item) ? RawDiff(cpu, kind, instance, item) : 0;
  }
  // Diff() for indices the caller knows are valid (loops over the config).
  int64_t RawDiff(int cpu, StatKind kind, int instance, int item) const {
    const auto& c = CellOf(cpu, kind, instance, item);
    if constexpr (M == SlotMode::kWatermark) {
      return c.slot.load(std::memory_order_relaxed) - c.folded.load(std::memory_order_relaxed);
    } else {
      return c.d.load(std::memory_order_relaxed);
    }
  }

  // need_update(): racy scan of the CPU's zone and node differentials.
  bool NeedUpdate(int cpu) const override {
    if (!ValidCpu(cpu)) return false;
    for (StatKind kind : {StatKind::kZone, StatKind::kNode}) {
      for (int i = 0; i < num_instances(kind); ++i) {
        for (int item = 0; item < num_items(kind); ++item) {
          if (RawDiff(cpu, kind, i, item) != 0) return true;
        }
      }
    }
    return false;
  }

  // refresh_cpu_vm_stats(false): zones first (zone atomics at once, global
  // accumulated), then nodes, then the globals (fold_diff).
  int RefreshCpu(int cpu) override { return ValidCpu(cpu) ? FoldAll(cpu) : 0; }

  int FoldCpuRemote(int cpu) override {
    if (!ValidCpu(cpu)) return 0;
    if constexpr (M == SlotMode::kOwnerS8) {
      (void)cpu;
      return 0;  // only the owner may write an A/B slot
    } else {
      return FoldAll(cpu);
    }
  }

 protected:
  void FoldDeadCpu(int cpu) override { FoldAll(cpu); }  // cpu_vm_stats_fold

 private:
  struct alignas(64) Block {
    std::array<Cell<M>, kMaxNodeItems> c;
  };

  Cell<M>& CellOf(int cpu, StatKind kind, int instance, int item) {
    const size_t b = static_cast<size_t>(cpu) * static_cast<size_t>(num_instances(kind)) +
                     static_cast<size_t>(instance);
    auto& blocks = kind == StatKind::kZone ? zone_blocks_ : node_blocks_;
    return blocks[b].c[static_cast<size_t>(item)];
  }
  const Cell<M>& CellOf(int cpu, StatKind kind, int instance, int item) const {
    const size_t b = static_cast<size_t>(cpu) * static_cast<size_t>(num_instances(kind)) +
                     static_cast<size_t>(instance);
    const auto& blocks = kind == StatKind::kZone ? zone_blocks_ : node_blocks_;
    return blocks[b].c[static_cast<size_t>(item)];
  }

  void AfterWrite(int cpu) {
    if (strategy() == Strategy::kB) {
      MarkDirty(cpu);  // vmstat_mark_dirty()
    } else if (strategy() == Strategy::kBLocal) {
      MarkDirtyLocal(cpu);
    }
  }
  void CountFold(int cpu) { OwnerIncrement(State(cpu).threshold_folds); }

  // __mod_zone_page_state(): owner-only load + store.
  void PlainMod(int cpu, StatKind kind, int instance, int item, int64_t delta) {
    auto& c = CellOf(cpu, kind, instance, item);
    int64_t x = delta + c.d.load(std::memory_order_relaxed);
    const int t = ThresholdRaw(cpu, kind, instance);  // hot path: unchecked (writer contract)
    if (std::abs(x) > t) {
      AddShared(kind, instance, item, x);  // shared side before the slot (I2)
      CountFold(cpu);
      x = 0;
    }
    c.d.store(static_cast<int8_t>(x), std::memory_order_relaxed);
    AfterWrite(cpu);
  }

  // __inc_zone_state() / __dec_zone_state(): the overstep trick.
  void PlainStep(int cpu, StatKind kind, int instance, int item, int dir) {
    auto& c = CellOf(cpu, kind, instance, item);
    const int v = c.d.load(std::memory_order_relaxed) + dir;
    const int t = ThresholdRaw(cpu, kind, instance);  // hot path: unchecked (writer contract)
    if (dir * v > t) {
      const int overstep = Overstep(t);
      AddShared(kind, instance, item, v + dir * overstep);
      CountFold(cpu);
      c.d.store(static_cast<int8_t>(-dir * overstep), std::memory_order_relaxed);
    } else {
      c.d.store(static_cast<int8_t>(v), std::memory_order_relaxed);
    }
    AfterWrite(cpu);
  }

  // mod_zone_state() / mod_node_state(): compute the new slot value and the
  // overflow from the old one, install it with a compare-and-swap, then add
  // the overflow to the shared side.
  void ModState(int cpu, StatKind kind, int instance, int item, int64_t delta, int mode) {
    auto& c = CellOf(cpu, kind, instance, item);
    if constexpr (M == SlotMode::kWatermark) {
      // D: the owner advances its running sum with a plain store; only a
      // fold touches `folded`, by CAS, so a remote fold can never be lost.
      const int64_t s = c.slot.load(std::memory_order_relaxed) + delta;
      c.slot.store(s, std::memory_order_relaxed);
      int64_t f = c.folded.load(std::memory_order_relaxed);
      for (;;) {
        const int t = ThresholdRaw(cpu, kind, instance);  // hot path: unchecked (writer contract)
        const int64_t d = s - f;
        if (std::abs(d) <= t) break;
        const int64_t os = mode * Overstep(t);
        const int64_t target = s + os;  // leaves slot - folded == -os
        ISOLATION_INTERLEAVE_POINT("vmstat.d_writer.before_folded_cas");
        // Relaxed: conservation only needs the single modification order
        // of `folded`; the winner alone adds target - f.
        if (c.folded.compare_exchange_weak(f, target, std::memory_order_relaxed)) {
          AddShared(kind, instance, item, target - f);
          CountFold(cpu);
          break;
        }
      }
    } else {
      using T = decltype(c.d.load());
      T o = c.d.load(std::memory_order_relaxed);
      int64_t z;
      for (;;) {
        z = 0;
        const int t = ThresholdRaw(cpu, kind, instance);  // hot path: unchecked (writer contract)
        int64_t n = delta + o;
        if (std::abs(n) > t) {
          const int64_t os = mode * Overstep(t);
          z = n + os;
          n = -os;
        }
        if constexpr (M == SlotMode::kOwnerS8) {
          // this_cpu_try_cmpxchg without a lock prefix: atomic against the
          // owner's own interrupts only.  No other context writes an A/B
          // slot and the drivers never nest two contexts of one CPU, so the
          // single-writer store is that compare-and-swap (always succeeds).
          c.d.store(static_cast<T>(n), std::memory_order_relaxed);
          break;
        } else if constexpr (M == SlotMode::kSharedS32Cas) {
          ISOLATION_INTERLEAVE_POINT("vmstat.c_writer.before_cas");
          // Relaxed CAS: atomic across CPUs against the shepherd's xchg.
          if (c.d.compare_exchange_weak(o, static_cast<T>(n), std::memory_order_relaxed)) break;
        } else {
          // Negative control: plain read-modify-write; a remote xchg between
          // the load and this store is overwritten (counted twice).
          ISOLATION_INTERLEAVE_POINT("vmstat.c_writer.before_cas");
          c.d.store(static_cast<T>(n), std::memory_order_relaxed);
          break;
        }
      }
      if (z != 0) {
        AddShared(kind, instance, item, z);
        CountFold(cpu);
      }
    }
    AfterWrite(cpu);
  }

  // Takes one slot's differential to 0 and returns what it held.
  int64_t TakeSlot(Cell<M>& c) {
    if constexpr (M == SlotMode::kOwnerS8) {
      // Owner (or dead CPU) only: this_cpu_xchg without a lock prefix.
      const int64_t v = c.d.load(std::memory_order_relaxed);
      if (v != 0) c.d.store(0, std::memory_order_relaxed);
      return v;
    } else if constexpr (M == SlotMode::kWatermark) {
      const int64_t s = c.slot.load(std::memory_order_relaxed);
      int64_t f = c.folded.load(std::memory_order_relaxed);
      while (s != f) {
        // Relaxed CAS on `folded`: the winner owns the delta s - f.
        if (c.folded.compare_exchange_weak(f, s, std::memory_order_relaxed)) return s - f;
      }
      return 0;
    } else {
      // xchg: atomic across CPUs against the CAS writer.
      if (c.d.load(std::memory_order_relaxed) == 0) return 0;
      return c.d.exchange(0, std::memory_order_relaxed);
    }
  }

  int FoldAll(int cpu) {
    std::array<int64_t, kMaxNodeItems> zone_global{};
    std::array<int64_t, kMaxNodeItems> node_global{};
    for (int z = 0; z < num_zones(); ++z) {
      for (int item = 0; item < config_.zone_items; ++item) {
        const int64_t v = TakeSlot(CellOf(cpu, StatKind::kZone, z, item));
        if (v != 0) {
          Shared(StatKind::kZone, z).v[static_cast<size_t>(item)].fetch_add(v, std::memory_order_relaxed);
          zone_global[static_cast<size_t>(item)] += v;
        }
      }
    }
    for (int node = 0; node < num_nodes(); ++node) {
      for (int item = 0; item < config_.node_items; ++item) {
        const int64_t v = TakeSlot(CellOf(cpu, StatKind::kNode, node, item));
        if (v != 0) {
          Shared(StatKind::kNode, node).v[static_cast<size_t>(item)].fetch_add(v, std::memory_order_relaxed);
          node_global[static_cast<size_t>(item)] += v;
        }
      }
    }
    // fold_diff(): add to the globals, count the items that changed.
    int changes = 0;
    for (int item = 0; item < config_.zone_items; ++item) {
      if (const int64_t v = zone_global[static_cast<size_t>(item)]; v != 0) {
        Global(StatKind::kZone).v[static_cast<size_t>(item)].fetch_add(v, std::memory_order_relaxed);
        ++changes;
      }
    }
    for (int item = 0; item < config_.node_items; ++item) {
      if (const int64_t v = node_global[static_cast<size_t>(item)]; v != 0) {
        Global(StatKind::kNode).v[static_cast<size_t>(item)].fetch_add(v, std::memory_order_relaxed);
        ++changes;
      }
    }
    return changes;
  }

  std::vector<Block> zone_blocks_, node_blocks_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Vmstat>> Vmstat::Create(VmstatConfig config) {
  if (config.num_cpus < 1 || config.num_cpus > kMaxCpus) {
    return absl::InvalidArgumentError(absl::StrCat("vmstat: num_cpus ", config.num_cpus, " out of [1, ", kMaxCpus, "]"));
  }
  if (config.zone_items < 1 || config.zone_items > kMaxZoneItems) {
    return absl::InvalidArgumentError(absl::StrCat("vmstat: zone_items ", config.zone_items, " out of [1, ", kMaxZoneItems, "]"));
  }
  if (config.node_items < 1 || config.node_items > kMaxNodeItems) {
    return absl::InvalidArgumentError(absl::StrCat("vmstat: node_items ", config.node_items, " out of [1, ", kMaxNodeItems, "]"));
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
      return absl::InvalidArgumentError(absl::StrCat("vmstat: zone '", z.name, "' on node ", z.node, " >= num_nodes ", config.num_nodes));
    }
    if (z.managed_pages > kMaxZonePages || z.high_wmark > kMaxZonePages) {
      return absl::InvalidArgumentError(absl::StrCat("vmstat: zone '", z.name, "' of ", z.managed_pages,
                                                     " pages with high watermark ", z.high_wmark, ", more than ",
                                                     kMaxZonePages));
    }
    if (z.managed_pages < 0 || z.min_wmark < 0 || z.min_wmark > z.low_wmark || z.low_wmark > z.high_wmark) {
      return absl::InvalidArgumentError(absl::StrCat("vmstat: zone '", z.name, "' has a negative size or watermarks out of order (min ", z.min_wmark, " low ", z.low_wmark, " high ", z.high_wmark, ")"));
    }
  }
  for (const CpuMask* m : {&config.isolated, &config.nohz_full}) {
    if (m->nbits() != 0 && m->nbits() != config.num_cpus) {
      return absl::InvalidArgumentError(absl::StrCat("vmstat: cpu mask of ", m->nbits(), " bits for ", config.num_cpus, " cpus"));
    }
  }
  if (config.stat_interval <= 0) {
    return absl::InvalidArgumentError(absl::StrCat("vmstat: stat_interval ", config.stat_interval, " must be > 0"));
  }
  if (config.page_shift < 9 || config.page_shift > 27) {
    return absl::InvalidArgumentError(absl::StrCat("vmstat: page_shift ", config.page_shift, " out of [9, 27]"));
  }
  switch (config.strategy) {
    case Strategy::kA0:
    case Strategy::kA1:
    case Strategy::kB:
    case Strategy::kBLocal:
      return std::unique_ptr<Vmstat>(new VmstatImpl<SlotMode::kOwnerS8>(std::move(config)));
    case Strategy::kC:
      return std::unique_ptr<Vmstat>(new VmstatImpl<SlotMode::kSharedS32Cas>(std::move(config)));
    case Strategy::kCPlainWriterNegativeControl:
      return std::unique_ptr<Vmstat>(new VmstatImpl<SlotMode::kSharedS32Plain>(std::move(config)));
    case Strategy::kD:
      return std::unique_ptr<Vmstat>(new VmstatImpl<SlotMode::kWatermark>(std::move(config)));
  }
  return absl::InvalidArgumentError(absl::StrCat("vmstat: unknown strategy ", static_cast<int>(config.strategy)));
}

}  // namespace isolation::vmstat
