// SPDX-License-Identifier: GPL-2.0-or-later
// StoreBufferModel: per-thread FIFO store buffers and delayed CAS views.
//
// All state lives behind one Mutex (isolation/core/mutex.h: a std::mutex, which TSan understands);
// the fast paths in store_buffer.h never get here unless a model is active.  Threads are identified
// by std::thread::id, so a buffer outlives nothing: it is drained when its Interleaver actor
// returns (OperationEnds), at DrainAll() and when the model is destroyed.

#include "isolation/core/store_buffer.h"
#include "isolation/core/interleave.h"
#include "isolation/core/mutex.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

namespace isolation {
namespace store_buffer_internal {
std::atomic<bool> g_active{false};
}  // namespace store_buffer_internal

namespace {

struct Entry {
  void* addr;
  uint64_t bits;
  store_buffer_internal::CommitFn commit;
};

// Another thread's successful delayed CAS: loads of `addr` by threads other
// than `owner` return `old_bits` until the owner fences.
struct DelayedView {
  const void* addr;
  uint64_t old_bits;
  std::thread::id owner;
};

struct State {
  Mutex mu;
  std::map<std::thread::id, std::vector<Entry>> buffers ABSL_GUARDED_BY(mu);
  std::vector<DelayedView> views ABSL_GUARDED_BY(mu);
  StoreBufferModel::Stats stats ABSL_GUARDED_BY(mu);
};

State& GetState() {
  static State* s = new State();  // never destroyed: usable from any static context
  return *s;
}

// One model at a time: held from construction to destruction.  A plain
// std::mutex: locked in the constructor and unlocked in the destructor,
// which the thread-safety analysis (scoped to one function) cannot follow.
std::mutex& LifetimeMutex() {
  static std::mutex* m = new std::mutex();
  return *m;
}

void DrainThreadLocked(State& s, std::thread::id tid) ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu) {
  auto it = s.buffers.find(tid);
  if (it != s.buffers.end()) {
    for (const Entry& e : it->second) e.commit(e.addr, e.bits);  // FIFO: program order
    s.stats.drained_stores += static_cast<int64_t>(it->second.size());
    s.buffers.erase(it);
  }
  s.views.erase(std::remove_if(s.views.begin(), s.views.end(),
                               [&](const DelayedView& v) { return v.owner == tid; }),
                s.views.end());
}

}  // namespace

namespace store_buffer_internal {

void BufferStore(void* addr, uint64_t bits, CommitFn commit) {
  State& s = GetState();
  MutexLock l(s.mu);
  s.buffers[std::this_thread::get_id()].push_back(Entry{addr, bits, commit});
  ++s.stats.buffered_stores;
}

bool ViewOf(const void* addr, uint64_t* bits) {
  State& s = GetState();
  MutexLock l(s.mu);
  const std::thread::id me = std::this_thread::get_id();
  auto it = s.buffers.find(me);
  if (it != s.buffers.end()) {
    // Store forwarding: the newest own store to this location.
    for (auto e = it->second.rbegin(); e != it->second.rend(); ++e) {
      if (e->addr == addr) {
        *bits = e->bits;
        ++s.stats.forwarded_loads;
        return true;
      }
    }
  }
  for (const DelayedView& v : s.views) {
    if (v.addr == addr && v.owner != me) {
      *bits = v.old_bits;
      ++s.stats.stale_loads;
      return true;
    }
  }
  return false;
}

void AfterRmw(const void* addr, bool delayed) {
  State& s = GetState();
  MutexLock l(s.mu);
  const std::thread::id me = std::this_thread::get_id();
  s.views.erase(std::remove_if(s.views.begin(), s.views.end(),
                               [&](const DelayedView& v) {
                                 return v.addr == addr && (!delayed || v.owner != me);
                               }),
                s.views.end());
}

void DelayVisibility(const void* addr, uint64_t old_bits) {
  State& s = GetState();
  MutexLock l(s.mu);
  const std::thread::id me = std::this_thread::get_id();
  ++s.stats.delayed_cas;
  for (const DelayedView& v : s.views) {
    if (v.addr == addr && v.owner == me) return;  // others still see the oldest undone value
  }
  s.views.push_back(DelayedView{addr, old_bits, me});
}

void Fence() {
  State& s = GetState();
  MutexLock l(s.mu);
  ++s.stats.fences;
  DrainThreadLocked(s, std::this_thread::get_id());
}

void FenceEveryThread() {
  State& s = GetState();
  MutexLock l(s.mu);
  ++s.stats.process_barriers;
  while (!s.buffers.empty()) DrainThreadLocked(s, s.buffers.begin()->first);
  s.views.clear();
}

void OperationEnds() {
  if (!g_active.load(std::memory_order_relaxed)) return;
  State& s = GetState();
  MutexLock l(s.mu);
  DrainThreadLocked(s, std::this_thread::get_id());
}

}  // namespace store_buffer_internal

StoreBufferModel::StoreBufferModel() {
  interleave_internal::NoteIfInstrumentationMissing();
  LifetimeMutex().lock();
  State& s = GetState();
  {
    MutexLock l(s.mu);
    s.buffers.clear();
    s.views.clear();
    s.stats = Stats{};
  }
  // Relaxed suffices: the flag only selects the slow path, which
  // synchronises through s.mu.
  store_buffer_internal::g_active.store(true, std::memory_order_relaxed);
}

StoreBufferModel::~StoreBufferModel() {
  DrainAll();
  store_buffer_internal::g_active.store(false, std::memory_order_relaxed);
  LifetimeMutex().unlock();
}

void StoreBufferModel::DrainAll() {
  State& s = GetState();
  MutexLock l(s.mu);
  while (!s.buffers.empty()) DrainThreadLocked(s, s.buffers.begin()->first);
  s.views.clear();
}

int StoreBufferModel::Pending() const {
  State& s = GetState();
  MutexLock l(s.mu);
  size_t n = s.views.size();
  for (const auto& [tid, entries] : s.buffers) n += entries.size();
  return static_cast<int>(n);
}

StoreBufferModel::Stats StoreBufferModel::stats() const {
  State& s = GetState();
  MutexLock l(s.mu);
  return s.stats;
}

}  // namespace isolation
