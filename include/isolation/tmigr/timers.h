// SPDX-License-Identifier: GPL-2.0-or-later
// -----------------------------------------------------------------------------
// tmigr_timers.h
// -----------------------------------------------------------------------------
//
// A small per-CPU timer base in front of the timer-migration hierarchy, so
// the hierarchy has real work: each CPU keeps local (pinned) and global
// (migratable) timers; going idle hands the first global expiry to the
// hierarchy exactly as the timer wheel does; ticks and wake-ups run expired
// timers and the hierarchy's remote expiry.  Every timer is recorded: which
// CPU ran it, when, how late, how many times (must be once).
//
// Kernel counterpart: kernel/time/timer.c as of v6.9+: timer_base is_idle,
// fetch_next_timer_interrupt() / timer_use_tmigr() (the contract between
// the timer bases and the hierarchy), timer_clear_idle(),
// run_timer_softirq(), timer_expire_remote(),
// fetch_next_timer_interrupt_remote(), timers_dead_cpu(); and the
// tick-sched callers (tick_nohz_stop_tick, tick_nohz_irq_exit).
//
// Thread-safety contract: the per-CPU calls (AddTimer, EnterIdle, ExitIdle,
// Tick, IdleWakeup) for CPU c run on c's context (never two at once for one
// CPU); calls for different CPUs may run concurrently.  Offline/Online and
// the isolation calls are serialised by the caller.  CheckInvariants and the
// result accessors need a quiescent system.  Per-CPU bases are protected by
// a std::mutex each (timer_base lock; taken before any tmigr lock).
//
// Contracts (contract.h): the per-CPU calls REQUIRE 0 <= cpu < num_cpus()
// (contract-checked); the observers return the documented safe value for a
// cpu out of range; Create, BootAll, Offline and Online return absl::Status.
//
// Allocation: timers live in a std::multimap per base and a std::deque of
// records (stable addresses); this is the simulated timer wheel, not the
// hierarchy's hot path, which never allocates.

#ifndef ISOLATION_TMIGR_TIMERS_H_
#define ISOLATION_TMIGR_TIMERS_H_

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "isolation/core/clock.h"
#include "isolation/core/mutex.h"
#include "isolation/tmigr/tmigr.h"

namespace isolation::tmigr {

struct TimerRecord {
  int64_t id = 0;
  int owner = 0;       // CPU whose base held the timer when it expired
  bool global = true;  // migratable (not pinned)
  Nanos expires = 0;
  std::atomic<int> runs{0};
  int run_cpu = -1;
  Nanos run_at = -1;
};

class TimerSystem final : public TimerBackend {
 public:
  struct Config {
    Nanos jiffy = kNsPerMs;  // 1/HZ; tmigr is not called for events <= 1 jiffy away
  };
  // Called after a timer was popped, on the running CPU, with no lock held.
  using RunCallback = std::function<void(const TimerRecord& timer, int run_cpu, Nanos now)>;

  static absl::StatusOr<std::unique_ptr<TimerSystem>> Create(std::vector<int> node_of,
                                                             const Options& options, Config config);
  static absl::StatusOr<std::unique_ptr<TimerSystem>> Create(const Topology& topology,
                                                             const Options& options, Config config);
  ~TimerSystem() override;

  TimerMigration& tmigr() { return *tmigr_; }
  const TimerMigration& tmigr() const { return *tmigr_; }
  int num_cpus() const { return tmigr_->num_cpus(); }

  // Brings every CPU online in id order (prepare + available); all start busy.
  absl::Status BootAll();
  // Optional hook run for each timer (e.g. to model callback cost or re-arm).
  void set_run_callback(RunCallback cb) { run_callback_ = std::move(cb); }
  // Called when the hierarchy wants a CPU woken (KickCpu); default: ExitIdle.
  void set_kick_callback(std::function<void(int cpu)> cb) { kick_callback_ = std::move(cb); }

  // ---- per-CPU (run on `cpu`; REQUIRES 0 <= cpu < num_cpus()) -------------
  // add_timer()/add_timer_on(): queue a timer on `cpu`'s own base.  If the
  // base is idle the next event is re-evaluated (tmigr_cpu_new_timer path).
  int64_t AddTimer(int cpu, Nanos expires, bool global, Nanos now);
  // Tick stop on idle entry.  Returns false if the next event's jiffy is at
  // most the current jiffy + 1 (the tick keeps running, the CPU stays active
  // in the hierarchy; call Tick at each jiffy and retry).
  bool EnterIdle(int cpu, Nanos now);
  // Idle exit (timer_clear_idle + tmigr_cpu_activate).  No-op if not idle.
  void ExitIdle(int cpu, Nanos now);
  // Tick of a CPU whose tick runs: own expired timers, then remote handling.
  void Tick(int cpu, Nanos now);
  // The programmed wake-up of an idle CPU fired: own expired timers, remote
  // handling, re-evaluation of the next event (tmigr_cpu_new_timer).
  void IdleWakeup(int cpu, Nanos now);
  // Programmed wake-up of an idle CPU (kNanosMax if none, not idle, or no
  // such cpu).
  Nanos ProgrammedWakeup(int cpu) const;
  // false for a cpu out of range.
  bool BaseIdle(int cpu) const;
  // Earliest pending local / global timer of `cpu` (kNanosMax if none or no
  // such cpu).
  Nanos NextLocal(int cpu) const;
  Nanos NextGlobal(int cpu) const;

  // ---- hotplug -----------------------------------------------------------
  // Offline `cpu` (it must be active): clear available, migrate its timers to
  // `target` (timers_dead_cpu).  Errors: bad cpu/target.
  absl::Status Offline(int cpu, int target, Nanos now);
  absl::Status Online(int cpu, Nanos now);

  // ---- results (quiescent) ------------------------------------------------
  const std::deque<TimerRecord>& timers() const { return records_; }
  int64_t timers_run() const { return timers_run_.load(std::memory_order_relaxed); }
  // 0 for a cpu out of range.
  int64_t runs_on(int cpu) const {
    return cpu >= 0 && cpu < num_cpus()
               ? per_cpu_runs_[static_cast<size_t>(cpu)].load(std::memory_order_relaxed)
               : 0;
  }
  Nanos max_lateness() const { return max_lateness_.load(std::memory_order_relaxed); }
  // Timers run by an unavailable CPU for another, or of an unavailable CPU
  // elsewhere (I8), and timers run twice (I2): counted as they happen.
  int64_t runtime_violations() const { return runtime_violations_.load(std::memory_order_relaxed); }
  // Timers with expiry <= `deadline` that never ran.
  int64_t CountLost(Nanos deadline) const;
  // Hierarchy invariants + I5 (no lost timer, needs the bases) + I2/I8
  // run-time counts + I11 lock-order count.  `now` is the current time.
  std::vector<std::string> CheckInvariants(Nanos now) const;

  // ---- TimerBackend --------------------------------------------------------
  void ExpireRemote(int owner, int runner, Nanos now) override;
  void LockBases(int cpu) override;
  void UnlockBases(int cpu) override;
  Nanos NextGlobalLocked(int cpu, Nanos now) override;
  bool BaseIsIdle(int cpu) override;
  void KickCpu(int cpu) override;
  void RunOnCpu(int cpu, absl::FunctionRef<void()> fn) override;

 private:
  struct alignas(64) Base {
    // timer_base lock.  A plain std::mutex, not an annotated Mutex: tmigr
    // holds it across calls through LockBases/UnlockBases(cpu), and
    // NextGlobalLocked reads `local`/`global` with the lock of base(cpu)
    // held by its caller -- a lock reached through a run-time index, which
    // the thread-safety analysis cannot name.
    mutable std::mutex lock;
    std::multimap<Nanos, int64_t> local, global;
    // base->is_idle: written under `lock` on the CPU's own context, read
    // lock-free by timer_base_is_idle() (like the kernel's per-CPU read).
    std::atomic<bool> idle{false};
    Nanos programmed = kNanosMax;    // wake-up armed while idle
    std::atomic<Nanos> last_now{0};  // latest time seen on this CPU (for kicks)
  };
  explicit TimerSystem(Config config);
  void RunExpired(int owner, int runner, Nanos now, bool local_too);
  void Reevaluate(int cpu, Nanos now);
  void RecordRun(TimerRecord& t, int owner, int runner, Nanos now);
  Base& base(int cpu) { return *bases_[BaseIndex(cpu)]; }
  const Base& base(int cpu) const { return *bases_[BaseIndex(cpu)]; }
  size_t BaseIndex(int cpu) const {
    ISOLATION_CONTRACT(cpu >= 0 && static_cast<size_t>(cpu) < bases_.size(),
                       "tmigr timers: cpu %d outside [0, %d)", cpu, bases_.size());
    return static_cast<size_t>(cpu);
  }
  bool ValidCpu(int cpu) const { return cpu >= 0 && static_cast<size_t>(cpu) < bases_.size(); }

  Config config_;
  std::unique_ptr<TimerMigration> tmigr_;
  std::vector<std::unique_ptr<Base>> bases_;
  mutable Mutex records_mutex_;
  std::deque<TimerRecord> records_ ABSL_GUARDED_BY(records_mutex_);
  std::unique_ptr<std::atomic<int64_t>[]> per_cpu_runs_;
  std::atomic<int64_t> timers_run_{0};
  std::atomic<Nanos> max_lateness_{0};
  std::atomic<int64_t> runtime_violations_{0};
  RunCallback run_callback_;
  std::function<void(int)> kick_callback_;
};

}  // namespace isolation::tmigr

#endif  // ISOLATION_TMIGR_TIMERS_H_
