// SPDX-License-Identifier: GPL-2.0-or-later
// The s32-xadd slot representation (vmstat/slot.h): s32-atomic's cell and
// folds (slot_s32.h) with one locked add per update, and the counters
// instantiated over it (slot_impl.h).

#include <atomic>
#include <cstdint>
#include <cstdlib>

#include "isolation/core/interleave.h"
#include "isolation/vmstat/internal/forms.h"
#include "vmstat/builtin.h"
#include "vmstat/slot_impl.h"
#include "vmstat/slot_s32.h"

namespace isolation::vmstat::internal {

struct S32XaddRep : S32CellRep {
  static constexpr WriterForm kWriterForm = WriterForm::kSharedS32Xadd;
  static constexpr SlotTraits kTraits{
      .remote_foldable = true, .irqs_off_writers_plain = false, .bits = 32};

  // mod_zone_state() / mod_node_state() as one locked add.
  template <typename Vm>
  static void ModState(Vm& vm, int cpu, StatKind kind, int instance, int item, int64_t delta,
                       int mode) {
    auto& c = vm.CellOf(cpu, kind, instance, item);
    // C.xadd: one locked add; past the threshold, the form's Fold takes
    // the slot by xchg.  A delta beyond the threshold folds in any
    // case and takes the CAS below (so the slot stays within 2t + t/2:
    // no s32 overflow).
    const int t = vm.ThresholdRaw(cpu, kind, instance);  // hot path: unchecked (writer contract)
    if (std::abs(delta) <= t) {
      // Relaxed: atomic against the folders' xchg (the slot's single
      // modification order), as C's CAS; nothing else is ordered by it.
      const int64_t n =
          delta + c.d.fetch_add(static_cast<int32_t>(delta), std::memory_order_relaxed);
      if (std::abs(n) > t) SharedS32XaddForm::Fold(vm, cpu, kind, instance, item, c.d, mode);
      vm.AfterWrite(cpu);
      return;
    }
    vm.ModWord(c.d, cpu, kind, instance, item, delta, mode, CasInstall{});
  }
};

// C.xadd's fold (no kernel counterpart; the shape of mod_zone_state's fold):
// the locked add already left the slot past the threshold.  xchg it for the
// overstep and add what it held: our add, less anything a remote fold took
// in between (that fold added it), plus whatever else it held.  Conserved
// either way: slot + shared side is unchanged by the xchg + add pair.
void SharedS32XaddForm::Fold(Vmstat& vm, int cpu, StatKind kind, int instance, int item,
                             std::atomic<int32_t>& slot, int mode) {
  const int64_t overstep = mode * vm.Overstep(vm.ThresholdRaw(cpu, kind, instance));
  ISOLATION_INTERLEAVE_POINT("vmstat.xadd_writer.before_xchg");  // added, not yet taken
  // Relaxed xchg: atomic against the folders' xchg; orders nothing else.
  const int64_t taken =
      slot.exchange(static_cast<int32_t>(-overstep), std::memory_order_relaxed) + overstep;
  if (taken != 0) {
    ISOLATION_INTERLEAVE_POINT("vmstat.writer.mid_fold");  // slot changed, shared not yet (I2)
    vm.AddShared(kind, instance, item, taken);
  }
  OwnerCount(vm.State(cpu).threshold_folds);  // as the slot code's CountFold
}

SlotEntry S32XaddSlot() {
  return SlotEntry{
      "s32-xadd",
      "OURS: s32 differential with one relaxed locked add per update (lock xadd on x86) and an "
      "exchange past the threshold; exchange(0) folds from any CPU; C.xadd",
      false, SlotFactory{S32XaddRep::kTraits, &MakeVmstat<S32XaddRep>}};
}

}  // namespace isolation::vmstat::internal
