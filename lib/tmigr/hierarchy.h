// SPDX-License-Identifier: GPL-2.0-or-later
// Internal to lib/tmigr: the hierarchy's data (struct tmigr_group /
// tmigr_cpu / tmigr_event and the timerqueue) and HierarchyBase, the part of
// TimerMigration shared by every hierarchy variant: setup, hotplug,
// isolation, snapshots and the lock-order recorder.  The walks and per-CPU
// entry points are HierarchyImpl<Quirks> (hierarchy_impl.h).  Not installed.

#ifndef ISOLATION_LIB_TMIGR_HIERARCHY_H_
#define ISOLATION_LIB_TMIGR_HIERARCHY_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "isolation/core/mutex.h"
#include "isolation/tmigr/tmigr.h"
#include "isolation/tmigr/variants.h"

namespace isolation::tmigr {

// struct tmigr_event.  `expires` and `queued` are protected by the lock of
// the group whose queue holds (or will hold) the event; `ignore` is also
// written lock-free on activation.
struct Event {
  Nanos expires = kNanosMax;
  int cpu = -1;
  std::atomic<bool> ignore{true};
  bool queued = false;
};

// The timerqueue of a group: at most one event per child, so a sorted
// fixed array of 8 pointers (no allocation; insertion is O(8)).  Equal keys
// go after existing ones, as timerqueue_add() does.
class EventQueue {
 public:
  // Returns true if `e` became the first event (timerqueue_add).
  bool Add(Event* e);
  // Returns true if the queue is still non-empty (timerqueue_del).
  bool Remove(Event* e);
  Event* First() const { return size_ > 0 ? items_[0] : nullptr; }
  int size() const { return size_; }
  Event* at(int i) const { return items_[static_cast<size_t>(i)]; }

 private:
  std::array<Event*, kMaxChildrenPerGroup> items_{};
  int size_ = 0;
};

// struct tmigr_group.
struct alignas(64) Group {
  // A plain std::mutex, not an annotated Mutex: the walks take group locks
  // hand over hand up a parent chain (LockRanked/UnlockRanked in different
  // loop iterations), which the thread-safety analysis cannot follow.
  std::mutex lock;
  std::atomic<Group*> parent{nullptr};
  Event groupevt;  // queued in the parent while this group is inactive
  std::atomic<Nanos> next_expiry{kNanosMax};
  EventQueue events;
  std::atomic<uint32_t> migr_state{GroupState{}.Pack()};
  int level = 0;
  int numa_node = -1;  // -1: at or above the crossnode level
  int num_children = 0;
  uint8_t groupmask = 0;  // this group's bit in its parent
  int index = 0;          // creation order within the level: "GRP<level>:<index>"

  GroupState state() const {
    return GroupState::Unpack(migr_state.load(std::memory_order_acquire));
  }
};

// struct tmigr_cpu.
struct alignas(64) CpuState {
  std::mutex lock;  // not annotated: taken with the group walks (see Group::lock)
  std::atomic<bool> available{false};
  std::atomic<bool> idle{false};
  std::atomic<bool> remote{false};
  Group* tmgroup = nullptr;
  uint8_t groupmask = 0;
  std::atomic<Nanos> wakeup{kNanosMax};
  Event cpuevt;
  bool prepared = false;
  bool online = false;
};

// Lock ranks for the I11 recorder: timer bases 0, tmc 1, group of level L: 2 + L.
inline constexpr int kBaseLockRank = 0;
inline constexpr int kCpuLockRank = 1;
inline int GroupLockRank(int level) { return 2 + level; }

// The I11 lock-order recorder: the ranks of the tmigr locks the calling
// thread holds.  Acquiring a rank not above the last one held is an
// inversion (or two locks of one rank nested: a potential ABBA deadlock).
// Thread-local state; returns whether the acquisition was in order.
bool RecordLockAcquire(int rank);
void RecordLockRelease(int rank);
// Locks the calling thread holds, as recorded (tests).
int RecordedLocksHeld();

class HierarchyBase : public TimerMigration, protected ExclusionOps {
 public:
  ~HierarchyBase() override;

  absl::Status SetIsolation(const IsolationConfig& config) final;
  void SetTracer(Tracer* tracer) final { tracer_ = tracer; }

  absl::Status PrepareCpu(int cpu) final;
  absl::Status SetCpuAvailable(int cpu) final;
  void ClearCpuAvailable(int cpu) final;
  absl::Status BringUpCpu(int cpu) final;
  void TakeDownCpu(int cpu) final;

  void InitIsolation() final;
  absl::Status SetCpusetIsolated(const CpuMask& isolated) final;
  absl::Status IsolatedExclude(const CpuMask& exclude) final;
  bool IsIsolated(int cpu) const final;

  int num_cpus() const final { return num_cpus_; }
  const Sizing& sizing() const final { return sizing_; }
  const Options& options() const final { return options_; }
  bool IsAvailable(int cpu) const final {
    return cpu >= 0 && cpu < num_cpus_ &&
           cpus_[static_cast<size_t>(cpu)]->available.load(std::memory_order_relaxed);
  }
  CpuMask AvailableMask() const final;
  bool isolation_enabled() const final {
    return isolation_enabled_.load(std::memory_order_relaxed);
  }
  Counters& counters() final { return counters_; }
  const Counters& counters() const final { return counters_; }
  std::vector<int64_t> RemoteExpiriesByRunner() const final;
  HierarchySnapshot Snapshot() const final;

 protected:
  explicit HierarchyBase(HierarchyArgs args);

  // The walks the shared code needs from the algorithm (cold paths only:
  // hotplug and setup).
  virtual void ActivateLocked(CpuState& tmc) = 0;
  virtual Nanos DeactivateLocked(CpuState& tmc, Nanos next_global) = 0;
  // tmigr_setup_groups() of an old root under a new top: propagate its
  // activity upward from `parent` (the walk of tmigr_active_up()).
  virtual void PropagateActivation(Group* parent, uint8_t childmask) = 0;

  size_t CpuIndex(int cpu) const {
    ISOLATION_CONTRACT(cpu >= 0 && cpu < num_cpus_, "tmigr: cpu %d outside [0, %d)", cpu,
                       num_cpus_);
    return static_cast<size_t>(cpu);
  }
  CpuState& cpu_state(int cpu) { return *cpus_[CpuIndex(cpu)]; }

  // Locks with the I11 recorder.  Recording is off unless asked for: then
  // the cost is one predictable branch per lock.
  void LockRanked(std::mutex& m, int rank) {
    if (record_lock_order_) NoteAcquire(rank);
    m.lock();
  }
  void UnlockRanked(std::mutex& m, int rank) {
    m.unlock();
    if (record_lock_order_) RecordLockRelease(rank);
  }
  // A lock taken outside tmigr (the timer bases) in the recorder's view.
  void NoteAcquire(int rank) {
    if (record_lock_order_ && !RecordLockAcquire(rank)) {
      counters_.lock_order_violations.fetch_add(1, std::memory_order_relaxed);
    }
  }
  void NoteRelease(int rank) {
    if (record_lock_order_) RecordLockRelease(rank);
  }
  void Warn() { counters_.warnings.fetch_add(1, std::memory_order_relaxed); }
  // A group's migrator role changed hands during `cpu`'s walk (tracer set).
  void TraceMigrator(const Group* group, uint8_t from, uint8_t to, int cpu);
  void CountCasRetry() { counters_.cas_retries.fetch_add(1, std::memory_order_relaxed); }
  void CountRemoteExpiry(int runner) {
    counters_.remote_expiries.fetch_add(1, std::memory_order_relaxed);
    remote_by_runner_[static_cast<size_t>(runner)].fetch_add(1, std::memory_order_relaxed);
  }

  const Options options_;
  TimerBackend* const backend_;
  const int num_cpus_;
  const bool record_lock_order_;
  Tracer* tracer_ = nullptr;
  std::vector<std::unique_ptr<CpuState>> cpus_;

 private:
  // ExclusionOps, for the participation.
  const IsolationInputs& inputs() const final { return inputs_; }
  CpuMask OnlineMask() const final;
  void EnableIsolation() final { isolation_enabled_.store(true, std::memory_order_relaxed); }
  void QueueSetAvailable(int cpu) final;
  void QueueClearAvailable(int cpu) final;
  void Flush() final;

  void SetCpuAvailableUnchecked(int cpu);
  Group* GetGroup(int node, int level) ABSL_EXCLUSIVE_LOCKS_REQUIRED(setup_mutex_);
  absl::Status SetupGroups(int cpu, int node, Group* start, bool activate)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(setup_mutex_);
  bool InitRoot(Group* group, bool activate);
  void ConnectChildParent(Group* child, Group* parent, bool activate);

  std::unique_ptr<const Participation> participation_;
  std::vector<int> node_of_;
  Sizing sizing_;
  std::deque<Group> storage_;                // groups are never freed; stable addresses
  std::vector<std::vector<Group*>> levels_;  // creation order (kernel list head = newest)
  Group* root_ = nullptr;
  Mutex setup_mutex_;  // tmigr_mutex
  bool reconnecting_old_root_ ABSL_GUARDED_BY(setup_mutex_) = false;
  mutable Mutex available_mutex_;                             // tmigr_available_mutex
  CpuMask available_mask_ ABSL_GUARDED_BY(available_mutex_);  // tmigr_available_cpumask
  std::atomic<bool> isolation_enabled_{false};                // static key tmigr_exclude_isolated
  IsolationInputs inputs_;
  Counters counters_;
  std::unique_ptr<std::atomic<int64_t>[]> remote_by_runner_;
};

}  // namespace isolation::tmigr

#endif  // ISOLATION_LIB_TMIGR_HIERARCHY_H_
