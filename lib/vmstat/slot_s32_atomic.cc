// SPDX-License-Identifier: GPL-2.0-or-later
// The s32-atomic slot representation (vmstat/slot.h): an s32 differential
// updated by CAS and folded by exchange(0) from any CPU (slot_s32.h), and
// the counters instantiated over it (slot_impl.h).

#include <cstdint>

#include "vmstat/builtin.h"
#include "vmstat/slot_impl.h"
#include "vmstat/slot_s32.h"

namespace isolation::vmstat::internal {

struct S32AtomicRep : S32CellRep {
  static constexpr WriterForm kWriterForm = WriterForm::kSharedS32Cas;
  static constexpr SlotTraits kTraits{
      .remote_foldable = true, .irqs_off_writers_plain = false, .bits = 32};

  // mod_zone_state() / mod_node_state(): C's CAS loop.
  template <typename Vm>
  static void ModState(Vm& vm, int cpu, StatKind kind, int instance, int item, int64_t delta,
                       int mode) {
    vm.ModWord(vm.CellOf(cpu, kind, instance, item).d, cpu, kind, instance, item, delta, mode,
               CasInstall{});
  }
};

SlotEntry S32AtomicSlot() {
  return SlotEntry{
      "s32-atomic",
      "s32 differential with a relaxed CAS loop on every update (locked cmpxchg on x86) and "
      "exchange(0) folds from any CPU; C (Tosatti 2023)",
      false, SlotFactory{S32AtomicRep::kTraits, &MakeVmstat<S32AtomicRep>}};
}

}  // namespace isolation::vmstat::internal
