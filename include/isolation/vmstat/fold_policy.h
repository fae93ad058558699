// SPDX-License-Identifier: GPL-2.0-or-later
// -----------------------------------------------------------------------------
// vmstat/fold_policy.h
// -----------------------------------------------------------------------------
//
// The fold-policy axis of vmstat: *who* folds a CPU's sub-threshold residue
// into the shared counters, and *when*.  The counters themselves (slots,
// thresholds, the writers' fast path) do not depend on it: a policy is
// consulted only by the deferred machinery -- the shepherd's pass, the
// per-CPU work, the tick-stop and return-to-user hooks -- and, if it asks
// for it, on a CPU's clean->dirty transition.  Never on an ordinary update.
//
// The built-in policies (registered by FoldPolicyRegistry()'s first call):
//   A0       pre-6.5: the shepherd queues vmstat_update on every dirty CPU.
//   A1       mainline >= 6.5 (be5e015d107d): ... except cpu_is_isolated().
//   B        the seed (Tomlin/Tosatti v8, 2022): writers mark the CPU dirty;
//            return to user of a nohz_full CPU whose tick is stopped folds;
//            the shepherd skips tick-stopped CPUs and queues on `dirty`.
//   B.local  Tosatti v9-v13: a nohz_full CPU arms its own work on its first
//            clean->dirty write; return to user folds and cancels it.
//   C        Tosatti's remote fold (2023): the shepherd folds every CPU
//            remotely (needs an atomic slot: s32 CAS writers, xchg folds).
//   D        OURS, the library's own idea: C's policy over a 64-bit running
//            sum + `folded` watermark slot (no locked op on the writer).
//   C-plain  negative control: C's policy over a plain-writer slot; it loses
//            updates under a concurrent remote fold (spec I7).
//
// A policy of your own, in ~50 lines (see docs/vmstat.md, "Open variants"):
//
//   class HalfThreshold final : public isolation::vmstat::FoldPolicy {
//    public:
//     FoldPolicyTraits traits() const override {
//       FoldPolicyTraits t;                 // slot "s8-owner" by default
//       t.writers_mark_dirty = true;        // Dirty(cpu) tells us to look
//       t.hooks_return_to_user = true;      // ReturnToUser is delivered
//       t.shepherd_work = WorkScope::kTickRunning;  // promise (spec I8)
//       return t;
//     }
//     ShepherdAction Shepherd(const Vmstat& vm, int cpu,
//                             absl::FunctionRef<bool(int)> tick_stopped) const override {
//       if (tick_stopped(cpu) || !vm.Dirty(cpu)) return ShepherdAction::kSkip;
//       return ShepherdAction::kQueueWork;
//     }
//     bool ReturnToUser(FoldContext& ctx, int cpu, bool tick_stopped) override {
//       if (!tick_stopped || ctx.vm().MaxThresholdFraction(cpu) <= 0.5) return false;
//       ctx.FoldOwn(cpu);
//       return true;
//     }
//   };
//   ... RegisterFoldPolicy({"B.half", "fold on return to user past t/2", false,
//                           [] { return std::make_unique<HalfThreshold>(); }});
//
// Kernel counterpart: mm/vmstat.c (vmstat_shepherd, vmstat_update,
// quiet_vmstat), the seed's __tick_nohz_user_enter_prepare; see vmstat.h.
//
// Thread-safety contract: a policy object belongs to one Vmstat.  Its const
// members (traits, Shepherd, RequeueLocally) may run on any thread
// concurrently with everything else; QuietVmstat, ReturnToUser and
// OnFirstDirty run in the owner CPU's context (the drivers never run two
// contexts of one CPU at once), so per-CPU state they keep needs no lock.
// A policy keeps no lock and never blocks: it runs inside the kernel's
// tick-stop and exit-to-user paths.  The registry is thread-safe
// (core/registry.h); entries are never removed.
//
// Memory ordering: a policy reads the counters through Vmstat's readers
// (relaxed, racy like the kernel's) and acts through FoldContext, whose
// operations carry the orderings documented in vmstat.h.

#ifndef ISOLATION_VMSTAT_FOLD_POLICY_H_
#define ISOLATION_VMSTAT_FOLD_POLICY_H_

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "isolation/core/registry.h"

namespace isolation::vmstat {

class Vmstat;

// Which CPUs the shepherd may queue vmstat_update on (spec I8).  A policy
// that declares a scope promises both directions: the shepherd queues work on
// an online CPU with a non-zero differential and no pending work if and only
// if the CPU is in the scope (A0..B.local), or never (kNoCpu: C, D).
enum class WorkScope {
  kAnyCpu,       // A0
  kNotIsolated,  // A1: skips cpu_is_isolated()
  kTickRunning,  // B: skips CPUs the (racy) tick_stopped(cpu) says are stopped
  kNotNohzFull,  // B.local: nohz_full CPUs manage their work themselves
  kNoCpu,        // C, D: no per-CPU work at all
};

// Which CPUs a return to user leaves with every differential at 0 (spec I9).
enum class ReturnToUserScope {
  kNone,                 // no promise
  kNohzFullTickStopped,  // B: nohz_full CPUs whose tick is stopped
  kNohzFull,             // B.local: every nohz_full CPU
};

// How the library runs a policy (mechanics) and what the policy promises
// (each promise is checked by the conformance kit, testing/vmstat.h).
struct FoldPolicyTraits {
  // ---- mechanics ----
  // Default slot representation (a SlotRegistry() name, vmstat/slot.h) when
  // VmstatConfig::slot is empty.  A string literal.
  std::string_view slot = "s8-owner";
  // The shepherd may answer kFoldRemote, and stat_refresh folds every CPU
  // from the caller instead of queueing work on each.  Requires a slot whose
  // traits say remote_foldable (Create rejects the pair otherwise).
  bool folds_remotely = false;
  // Every update sets the CPU's vmstat_dirty flag (Vmstat::Dirty); every
  // fold on the CPU itself clears it first (a writer racing the fold sets it again).  One relaxed
  // store per update.
  bool writers_mark_dirty = false;
  // An update that turns the CPU dirty calls OnFirstDirty (one relaxed load
  // per update more).  Implies writers_mark_dirty.
  bool notify_first_dirty = false;
  // ReturnToUser is delivered (on nohz_full CPUs only, as
  // tick_nohz_user_enter_prepare is); otherwise it costs nothing.
  bool hooks_return_to_user = false;

  // ---- promises (spec labels; the kit checks exactly these) ----
  WorkScope shepherd_work = WorkScope::kAnyCpu;                       // I8
  ReturnToUserScope return_to_user_folds = ReturnToUserScope::kNone;  // I9
  // A return to user within return_to_user_folds leaves no work pending (I9).
  bool return_to_user_cancels_work = false;
  // quiet_vmstat on a CPU with a non-zero differential folds it, whatever
  // its pending work (S11: the dirty gate instead of the pending-work gate).
  bool quiet_folds_dirty = false;
  // A dirty CPU that never returns to user (kernel-bound, S13) is folded
  // within 2 P + one shepherd run without anyone's help (I9).
  bool folds_kernel_bound_cpus = false;
};

// What a policy may do to the counters it serves.  Handed to the policy's
// owner-context hooks by the Vmstat that calls them.
class FoldContext {
 public:
  const Vmstat& vm() const { return vm_; }
  // refresh_cpu_vm_stats(false) on `cpu` from its own context, after
  // clearing its vmstat_dirty (in that order: a writer racing the
  // fold sets it again).  Returns fold_diff (global items that changed).
  int FoldOwn(int cpu);
  // cancel_delayed_work(vmstat_work): retires the CPU's queued or armed
  // item (it will find a stale generation and do nothing) and clears its
  // pending bit; an armed LocalWorkQueue timer is dropped too.
  void CancelWork(int cpu);
  // queue_delayed_work_on(cpu, mm_percpu_wq, vmstat_work, P) from the CPU
  // itself (B.local): sets the pending bit and arms the CPU's own work
  // through the LocalWorkQueue.  Nothing if already pending or offline.
  void ArmOwnWork(int cpu);

 private:
  friend class Vmstat;
  explicit FoldContext(Vmstat& vm) : vm_(vm) {}
  Vmstat& vm_;
};

class FoldPolicy {
 public:
  // What the shepherd does with one online CPU.
  enum class ShepherdAction {
    kSkip,        // nothing
    kQueueWork,   // queue vmstat_update on it (unless already pending)
    kFoldRemote,  // fold it from the shepherd (traits().folds_remotely only)
  };

  virtual ~FoldPolicy() = default;

  // Read once by Vmstat::Create; must not change afterwards.
  virtual FoldPolicyTraits traits() const = 0;

  // vmstat_shepherd()'s decision for online `cpu`.  `tick_stopped(cpu)` is
  // the racy remote tick_nohz_tick_stopped_cpu(); call it only if needed.
  virtual ShepherdAction Shepherd(const Vmstat& vm, int cpu,
                                  absl::FunctionRef<bool(int)> tick_stopped) const = 0;

  // quiet_vmstat() from the tick-stop path of `cpu`; true if it folded.
  // Default: nothing (the remote-fold policies).
  virtual bool QuietVmstat(FoldContext& ctx, int cpu, bool tick_stopped);

  // exit_to_user_mode_prepare -> tick_nohz_user_enter_prepare of nohz_full
  // `cpu` (only when traits().hooks_return_to_user); true if it folded.
  virtual bool ReturnToUser(FoldContext& ctx, int cpu, bool tick_stopped);

  // notify_first_dirty: an update turned `cpu` dirty (vmstat_mark_dirty).
  // Runs inside the writer, owner context: keep it short.
  virtual void OnFirstDirty(FoldContext& ctx, int cpu);

  // A vmstat_update that folded something re-queues itself after P: through
  // the CPU's LocalWorkQueue (true: a timer the CPU can cancel itself, as
  // B.local does on nohz_full CPUs) or as an ordinary delayed work item.
  virtual bool RequeueLocally(const Vmstat& vm, int cpu) const;
};

// ---- the registry --------------------------------------------------------

// Makes a fresh policy object for one Vmstat.
using FoldPolicyFactory = std::function<std::unique_ptr<FoldPolicy>()>;
using FoldPolicyEntry = VariantEntry<FoldPolicyFactory>;

// Every fold policy, built-ins first in registration order (A0, A1, ...;
// `isolab variants` lists them all, docs/vmstat.md describes them).
VariantRegistry<FoldPolicyFactory>& FoldPolicyRegistry();

// Registers a policy of your own; it then appears wherever policies are
// listed (the conformance suites' lists, the benchmarks, `isolab vmstat`,
// `isolab variants`).  Errors: as VariantRegistry::Register (empty or
// malformed name, duplicate, no factory); a policy whose default slot is a
// negative control ("s32-plain") that is not itself flagged negative_control
// (InvalidArgument naming both: it would join the default lists).
absl::Status RegisterFoldPolicy(FoldPolicyEntry entry);

// The registered name for `name` (case-insensitive; also the old spellings
// "B-local", "Blocal" and "C-plain-negative-control").  Errors: InvalidArgument
// naming the value and listing the registered policies.
absl::StatusOr<std::string> ParseFoldPolicy(std::string_view name);

// True for a policy of the library itself (any spelling ParseFoldPolicy
// takes), false for one registered through RegisterFoldPolicy or unknown.
bool IsBuiltinFoldPolicy(std::string_view name);

}  // namespace isolation::vmstat

#endif  // ISOLATION_VMSTAT_FOLD_POLICY_H_
