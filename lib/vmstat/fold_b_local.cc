// SPDX-License-Identifier: GPL-2.0-or-later
// Fold policy B.local: Marcelo Tosatti's v9-v13 rework of the seed (local
// management for nohz_full; v10 3/6 <20221216194904.155675758@redhat.com> to
// v13 <20230105125218.031928326@redhat.com>, FLUSH_WORK_ON_RESUME_USER on).
// The shepherd ignores nohz_full CPUs; such a CPU's first clean->dirty write
// arms its own vmstat_update after P (not if pending or going offline),
// return to user folds and cancels it, idle entry only folds.  docs/vmstat.md, B.local.

#include <memory>

#include "isolation/vmstat/vmstat.h"
#include "vmstat/builtin.h"

namespace isolation::vmstat::internal {
namespace {

class LocalFold final : public FoldPolicy {
 public:
  FoldPolicyTraits traits() const override {
    FoldPolicyTraits t;
    t.writers_mark_dirty = true;
    t.notify_first_dirty = true;  // vmstat_mark_dirty() arms the work
    t.hooks_return_to_user = true;
    t.shepherd_work = WorkScope::kNotNohzFull;
    t.return_to_user_folds = ReturnToUserScope::kNohzFull;
    t.return_to_user_cancels_work = true;
    t.quiet_folds_dirty = true;
    t.folds_kernel_bound_cpus = true;  // the CPU's own work is the fallback (v13)
    return t;
  }
  // v10 3/6: nohz_full CPUs manage their work themselves.
  ShepherdAction Shepherd(const Vmstat& vm, int cpu,
                          absl::FunctionRef<bool(int)> tick_stopped) const override {
    (void)tick_stopped;
    if (vm.IsNohzFull(cpu)) return ShepherdAction::kSkip;
    return vm.Dirty(cpu) ? ShepherdAction::kQueueWork : ShepherdAction::kSkip;
  }
  // Idle entry only folds: the armed work stays, finds the CPU clean, dies.
  bool QuietVmstat(FoldContext& ctx, int cpu, bool tick_stopped) override {
    (void)tick_stopped;
    if (!ctx.vm().Dirty(cpu)) return false;
    ctx.FoldOwn(cpu);
    return true;
  }
  // No tick-state test (so no remote race): fold if dirty, then cancel the
  // armed (or re-queued) work.
  bool ReturnToUser(FoldContext& ctx, int cpu, bool tick_stopped) override {
    (void)tick_stopped;
    bool folded = false;
    if (ctx.vm().Dirty(cpu)) {
      ctx.FoldOwn(cpu);
      folded = true;
    }
    if (ctx.vm().WorkPending(cpu)) ctx.CancelWork(cpu);
    return folded;
  }
  void OnFirstDirty(FoldContext& ctx, int cpu) override {
    if (ctx.vm().IsNohzFull(cpu)) ctx.ArmOwnWork(cpu);
  }
  // A fold that moved something re-arms the same cancellable timer.
  bool RequeueLocally(const Vmstat& vm, int cpu) const override { return vm.IsNohzFull(cpu); }
};

}  // namespace

FoldPolicyEntry BLocalPolicy() {
  FoldPolicyEntry e{"B.local",
                    "Tosatti v9-v13: a nohz_full CPU arms its own work on its first dirtying "
                    "write; return to user folds and cancels it",
                    false, [] { return std::make_unique<LocalFold>(); }};
  e.aliases = {"B-local", "Blocal"};  // isolab's spellings before the registry
  e.default_row = false;              // run by name: the seeds' table compares A0, A1, B and C
  return e;
}

}  // namespace isolation::vmstat::internal
