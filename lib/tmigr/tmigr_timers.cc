// SPDX-License-Identifier: GPL-2.0-or-later
// Per-CPU timer bases in front of the hierarchy (kernel/time/timer.c), see
// tmigr_timers.h.

#include "isolation/tmigr/timers.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace isolation::tmigr {

TimerSystem::TimerSystem(Config config) : config_(config) {}
TimerSystem::~TimerSystem() = default;

absl::StatusOr<std::unique_ptr<TimerSystem>> TimerSystem::Create(std::vector<int> node_of,
                                                                 const Options& options,
                                                                 Config config) {
  if (config.jiffy <= 0)
    return absl::InvalidArgumentError(absl::StrCat("bad jiffy ", config.jiffy));
  const size_t n = node_of.size();
  std::unique_ptr<TimerSystem> ts(new TimerSystem(config));
  auto tm = TimerMigration::Create(std::move(node_of), options, ts.get());
  if (!tm.ok()) return tm.status();
  ts->tmigr_ = std::move(*tm);
  ts->per_cpu_runs_.reset(new std::atomic<int64_t>[n]);
  for (size_t c = 0; c < n; ++c) {
    ts->bases_.push_back(std::make_unique<Base>());
    ts->per_cpu_runs_[c].store(0, std::memory_order_relaxed);
  }
  return ts;
}

absl::StatusOr<std::unique_ptr<TimerSystem>> TimerSystem::Create(const Topology& topology,
                                                                 const Options& options,
                                                                 Config config) {
  std::vector<int> node_of(static_cast<size_t>(topology.num_cpus()));
  for (int c = 0; c < topology.num_cpus(); ++c)
    node_of[static_cast<size_t>(c)] = topology.node_of(c);
  return Create(std::move(node_of), options, config);
}

absl::Status TimerSystem::BootAll() {
  for (int c = 0; c < num_cpus(); ++c) {
    if (absl::Status s = tmigr_->BringUpCpu(c); !s.ok()) return s;
  }
  return absl::OkStatus();
}

int64_t TimerSystem::AddTimer(int cpu, Nanos expires, bool global, Nanos now) {
  (void)BaseIndex(cpu);  // contract: checked before a record is made
  int64_t id;
  {
    MutexLock g(records_mutex_);
    id = static_cast<int64_t>(records_.size());
    TimerRecord& r = records_.emplace_back();
    r.id = id;
    r.owner = cpu;
    r.global = global;
    r.expires = expires;
  }
  bool idle;
  {
    Base& b = base(cpu);
    std::lock_guard<std::mutex> g(b.lock);
    (global ? b.global : b.local).emplace(expires, id);
    idle = b.idle;
  }
  if (idle) Reevaluate(cpu, now);
  return id;
}

void TimerSystem::RecordRun(TimerRecord& t, int owner, int runner, Nanos now) {
  const int prev = t.runs.fetch_add(1, std::memory_order_relaxed);
  if (prev != 0) runtime_violations_.fetch_add(1, std::memory_order_relaxed);  // I2: ran twice
  if (owner != runner && (!tmigr_->IsAvailable(owner) || !tmigr_->IsAvailable(runner))) {
    runtime_violations_.fetch_add(1, std::memory_order_relaxed);  // I8
  }
  t.run_cpu = runner;
  t.run_at = now;
  t.owner = owner;
  per_cpu_runs_[static_cast<size_t>(runner)].fetch_add(1, std::memory_order_relaxed);
  timers_run_.fetch_add(1, std::memory_order_relaxed);
  Nanos late = 0;  // saturating: an expiry far in the past must not overflow
  if (__builtin_sub_overflow(now, t.expires, &late)) late = kNanosMax;
  Nanos cur = max_lateness_.load(std::memory_order_relaxed);
  while (late > cur && !max_lateness_.compare_exchange_weak(cur, late, std::memory_order_relaxed)) {
  }
  if (run_callback_) run_callback_(t, runner, now);
}

// __run_timers() for `owner`'s bases on `runner` (the global base only when
// expiring remotely).  Timers are popped under the base lock, so each runs
// exactly once even when the owner and a puller race.
void TimerSystem::RunExpired(int owner, int runner, Nanos now, bool local_too) {
  std::vector<int64_t> due;
  {
    Base& b = base(owner);
    std::lock_guard<std::mutex> g(b.lock);
    auto pop = [&](std::multimap<Nanos, int64_t>& q) {
      while (!q.empty() && q.begin()->first <= now) {
        due.push_back(q.begin()->second);
        q.erase(q.begin());
      }
    };
    if (local_too) pop(b.local);
    pop(b.global);
  }
  for (int64_t id : due) {
    TimerRecord* t;
    {
      MutexLock g(records_mutex_);
      t = &records_[static_cast<size_t>(id)];
    }
    RecordRun(*t, owner, runner, now);
  }
}

bool TimerSystem::EnterIdle(int cpu, Nanos now) {
  Base& b = base(cpu);
  std::lock_guard<std::mutex> g(b.lock);  // timer base lock before tmigr locks
  b.last_now.store(now, std::memory_order_relaxed);
  if (b.idle) return true;
  const Nanos local = b.local.empty() ? kNanosMax : b.local.begin()->first;
  const Nanos global = b.global.empty() ? kNanosMax : b.global.begin()->first;
  const Nanos next = std::min(local, global);
  // fetch_next_timer_interrupt(): an event at most one jiffy away (the wheel
  // expires timers at the first tick >= expiry) keeps the tick running and
  // the hierarchy is not called.
  const int64_t basej = now / config_.jiffy;
  // Round up without overflow (an expiry near kNanosMax must not wrap).
  const int64_t next_jiffy =
      next == kNanosMax ? kNanosMax : next / config_.jiffy + (next % config_.jiffy > 0 ? 1 : 0);
  if (next_jiffy <= basej + 1) return false;
  b.idle = true;
  // fetch_next_timer_interrupt(): the global expiry goes to the hierarchy
  // only if strictly earlier than the local one.
  const Nanos handed = global < local ? global : kNanosMax;
  const Nanos r = tmigr_->Deactivate(cpu, handed);
  // An unavailable CPU gets its own global expiry back and arms it itself.
  const Nanos own = tmigr_->IsAvailable(cpu) ? kNanosMax : global;
  b.programmed = std::max(now, std::min({local, r, own}));
  return true;
}

void TimerSystem::ExitIdle(int cpu, Nanos now) {
  Base& b = base(cpu);
  {
    std::lock_guard<std::mutex> g(b.lock);
    b.last_now.store(now, std::memory_order_relaxed);
    if (!b.idle) return;
    b.idle = false;
    b.programmed = kNanosMax;
  }
  tmigr_->Activate(cpu);  // timer_clear_idle()
}

void TimerSystem::Tick(int cpu, Nanos now) {
  base(cpu).last_now.store(now, std::memory_order_relaxed);
  // run_timer_softirq(): own bases first, then tmigr_handle_remote(), so a
  // CPU meeting its own event in the hierarchy finds its timers already run.
  RunExpired(cpu, cpu, now, /*local_too=*/true);
  if (tmigr_->RequiresHandleRemote(cpu, now)) tmigr_->HandleRemote(cpu, now);
}

void TimerSystem::IdleWakeup(int cpu, Nanos now) {
  base(cpu).last_now.store(now, std::memory_order_relaxed);
  RunExpired(cpu, cpu, now, /*local_too=*/true);
  if (tmigr_->RequiresHandleRemote(cpu, now)) tmigr_->HandleRemote(cpu, now);
  Reevaluate(cpu, now);
}

// tick_nohz_irq_exit() -> fetch_next_timer_interrupt() with the base idle:
// tmigr_cpu_new_timer() and re-arm.
void TimerSystem::Reevaluate(int cpu, Nanos now) {
  Base& b = base(cpu);
  std::lock_guard<std::mutex> g(b.lock);
  if (!b.idle) return;
  const Nanos local = b.local.empty() ? kNanosMax : b.local.begin()->first;
  const Nanos global = b.global.empty() ? kNanosMax : b.global.begin()->first;
  const Nanos handed = global < local ? global : kNanosMax;
  const Nanos r = tmigr_->NewTimer(cpu, handed);
  const Nanos own = tmigr_->IsAvailable(cpu) ? kNanosMax : global;
  b.programmed = std::max(now, std::min({local, r, own}));
}

Nanos TimerSystem::ProgrammedWakeup(int cpu) const {
  if (!ValidCpu(cpu)) return kNanosMax;
  const Base& b = base(cpu);
  std::lock_guard<std::mutex> g(b.lock);
  return b.idle ? b.programmed : kNanosMax;
}

bool TimerSystem::BaseIdle(int cpu) const {
  if (!ValidCpu(cpu)) return false;
  const Base& b = base(cpu);
  std::lock_guard<std::mutex> g(b.lock);
  return b.idle;
}

Nanos TimerSystem::NextLocal(int cpu) const {
  if (!ValidCpu(cpu)) return kNanosMax;
  const Base& b = base(cpu);
  std::lock_guard<std::mutex> g(b.lock);
  return b.local.empty() ? kNanosMax : b.local.begin()->first;
}

Nanos TimerSystem::NextGlobal(int cpu) const {
  if (!ValidCpu(cpu)) return kNanosMax;
  const Base& b = base(cpu);
  std::lock_guard<std::mutex> g(b.lock);
  return b.global.empty() ? kNanosMax : b.global.begin()->first;
}

absl::Status TimerSystem::Offline(int cpu, int target, Nanos now) {
  if (cpu < 0 || cpu >= num_cpus() || target < 0 || target >= num_cpus() || target == cpu) {
    return absl::InvalidArgumentError(
        absl::StrCat("tmigr offline: bad cpu ", cpu, " / target ", target));
  }
  ExitIdle(cpu, now);  // the teardown runs on the CPU itself
  tmigr_->TakeDownCpu(cpu);
  // timers_dead_cpu(): move every pending timer to the target base.
  std::multimap<Nanos, int64_t> local, global;
  {
    Base& b = base(cpu);
    std::lock_guard<std::mutex> g(b.lock);
    local.swap(b.local);
    global.swap(b.global);
  }
  bool idle;
  {
    Base& t = base(target);
    std::lock_guard<std::mutex> g(t.lock);
    t.local.insert(local.begin(), local.end());
    t.global.insert(global.begin(), global.end());
    idle = t.idle;
  }
  if (idle) Reevaluate(target, now);
  return absl::OkStatus();
}

absl::Status TimerSystem::Online(int cpu, Nanos now) {
  if (cpu < 0 || cpu >= num_cpus())
    return absl::InvalidArgumentError(absl::StrCat("tmigr online: bad cpu ", cpu));
  base(cpu).last_now.store(now, std::memory_order_relaxed);
  return tmigr_->BringUpCpu(cpu);
}

int64_t TimerSystem::CountLost(Nanos deadline) const {
  int64_t lost = 0;
  // Under the lock (the thread-safety analysis found it read without):
  // AddTimer may append concurrently, and a deque's append is not safe
  // against a reader.
  MutexLock g(records_mutex_);
  for (const TimerRecord& t : records_) {
    if (t.expires <= deadline && t.runs.load(std::memory_order_relaxed) == 0) ++lost;
  }
  return lost;
}

std::vector<std::string> TimerSystem::CheckInvariants(Nanos now) const {
  // One snapshot for the hierarchy's invariants and every CPU's I5 path.
  const HierarchySnapshot snap = tmigr_->Snapshot();
  std::vector<std::string> v = CheckHierarchyInvariants(snap);
  // I5: every idle CPU's first global timer is covered.
  for (int c = 0; c < num_cpus(); ++c) {
    const Base& b = base(c);
    std::lock_guard<std::mutex> g(b.lock);
    if (!b.idle) continue;
    const Nanos local = b.local.empty() ? kNanosMax : b.local.begin()->first;
    const Nanos global = b.global.empty() ? kNanosMax : b.global.begin()->first;
    if (!snap.cpus[static_cast<size_t>(c)].available) {
      // Overdue timers (e.g. just migrated from an offlined CPU) are due "now".
      if (b.programmed > std::max(now, std::min(local, global))) {
        v.push_back(absl::StrCat("I5 cpu", c, ": unavailable, wake-up ", b.programmed,
                                 " after its timer ", std::min(local, global)));
      }
      continue;
    }
    if (!(global < local)) continue;
    const PathCoverage cov = CoverageOf(snap, c, global);
    if (cov.min_expiry_on_path > global) {
      v.push_back(absl::StrCat("I5 cpu", c, ": global timer ", global,
                               " not covered on its path up to an active group"));
      continue;
    }
    if (cov.reaches_idle_root) {
      bool woken = false;
      for (const CpuSnapshot& s : snap.cpus) {
        if (s.available && s.idle && s.wakeup <= global) {
          woken = true;
          break;
        }
      }
      if (!woken)
        v.push_back(absl::StrCat("I5 cpu", c, ": global timer ", global,
                                 " with an idle root and no idle CPU waking for it"));
    }
  }
  if (runtime_violations() != 0)
    v.push_back(absl::StrCat("I2/I8 run-time violations: ", runtime_violations()));
  if (tmigr_->counters().lock_order_violations.load() != 0) {
    v.push_back(absl::StrCat("I11 lock-order inversions: ",
                             tmigr_->counters().lock_order_violations.load()));
  }
  return v;
}

// ---- TimerBackend ----------------------------------------------------------
void TimerSystem::ExpireRemote(int owner, int runner, Nanos now) {
  RunExpired(owner, runner, now, /*local_too=*/false);
}

void TimerSystem::LockBases(int cpu) { base(cpu).lock.lock(); }
void TimerSystem::UnlockBases(int cpu) { base(cpu).lock.unlock(); }

// fetch_next_timer_interrupt_remote(): the same rule as the idle path -- the
// global expiry is handed to the hierarchy only if strictly earlier than the
// local one (a tie counts as local first); otherwise the owner's own wake-up
// for its local timer comes first and re-hands the global one from there.
Nanos TimerSystem::NextGlobalLocked(int cpu, Nanos now) {
  (void)now;
  const Base& b = base(cpu);
  const Nanos local = b.local.empty() ? kNanosMax : b.local.begin()->first;
  const Nanos global = b.global.empty() ? kNanosMax : b.global.begin()->first;
  return global < local ? global : kNanosMax;
}

bool TimerSystem::BaseIsIdle(int cpu) {
  // Called with tmc->lock held: no base lock here (lock order base -> tmc).
  return base(cpu).idle.load(std::memory_order_relaxed);
}

void TimerSystem::KickCpu(int cpu) {
  if (kick_callback_) {
    kick_callback_(cpu);
    return;
  }
  ExitIdle(cpu, base(cpu).last_now.load(std::memory_order_relaxed));
}

void TimerSystem::RunOnCpu(int cpu, absl::FunctionRef<void()> fn) {
  // A work item wakes the CPU: it leaves idle, runs the item, idles again.
  const bool was_idle = BaseIdle(cpu);
  const Nanos now = base(cpu).last_now.load(std::memory_order_relaxed);
  if (was_idle) ExitIdle(cpu, now);
  fn();
  if (was_idle) EnterIdle(cpu, now);
}

}  // namespace isolation::tmigr
