// SPDX-License-Identifier: GPL-2.0-or-later
// Internal: the mainline fold policy shared by A0 (fold_a0.cc) and A1
// (fold_a1.cc), which differ only in the CPUs the shepherd skips.

#ifndef ISOLATION_LIB_VMSTAT_FOLD_MAINLINE_H_
#define ISOLATION_LIB_VMSTAT_FOLD_MAINLINE_H_

#include "isolation/vmstat/vmstat.h"

namespace isolation::vmstat::internal {

// vmstat_shepherd() queues vmstat_update on every online CPU that
// need_update()s (A0: pre-6.5, every CPU); quiet_vmstat() folds only if the
// CPU's work is pending and it need_update()s -- the kernel's gate, which on
// a CPU the shepherd never queues work on never opens.
class MainlineFold : public FoldPolicy {
 public:
  FoldPolicyTraits traits() const override {
    FoldPolicyTraits t;
    t.shepherd_work = WorkScope::kAnyCpu;
    t.folds_kernel_bound_cpus = true;  // the work reaches every dirty CPU
    return t;
  }
  ShepherdAction Shepherd(const Vmstat& vm, int cpu,
                          absl::FunctionRef<bool(int)> tick_stopped) const override {
    (void)tick_stopped;
    return vm.NeedUpdate(cpu) ? ShepherdAction::kQueueWork : ShepherdAction::kSkip;
  }
  bool QuietVmstat(FoldContext& ctx, int cpu, bool tick_stopped) override {
    (void)tick_stopped;
    if (!ctx.vm().WorkPending(cpu) || !ctx.vm().NeedUpdate(cpu)) return false;
    ctx.FoldOwn(cpu);
    return true;
  }
};

}  // namespace isolation::vmstat::internal

#endif  // ISOLATION_LIB_VMSTAT_FOLD_MAINLINE_H_
