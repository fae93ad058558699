// SPDX-License-Identifier: GPL-2.0-or-later
// The s32-plain slot representation (vmstat/slot.h), a negative control:
// s32-atomic's cell and folds (slot_s32.h) with a plain load/store writer,
// and the counters instantiated over it (slot_impl.h).  No inline writer
// form: its writers stay virtual.

#include <atomic>
#include <cstdint>

#include "isolation/core/interleave.h"
#include "vmstat/builtin.h"
#include "vmstat/slot_impl.h"
#include "vmstat/slot_s32.h"

namespace isolation::vmstat::internal {

struct S32PlainRep : S32CellRep {
  static constexpr WriterForm kWriterForm = WriterForm::kVirtual;
  static constexpr SlotTraits kTraits{
      .remote_foldable = true, .irqs_off_writers_plain = false, .bits = 32};

  // mod_zone_state() / mod_node_state() with the CAS replaced by a store.
  template <typename Vm>
  static void ModState(Vm& vm, int cpu, StatKind kind, int instance, int item, int64_t delta,
                       int mode) {
    vm.ModWord(vm.CellOf(cpu, kind, instance, item).d, cpu, kind, instance, item, delta, mode,
               [](std::atomic<int32_t>& d, int32_t&, int32_t n) {
                 // Negative control: plain read-modify-write; a remote xchg between
                 // the load and this store is overwritten (counted twice).
                 ISOLATION_INTERLEAVE_POINT("vmstat.c_writer.before_cas");
                 d.store(n, std::memory_order_relaxed);
                 return true;
               });
  }
};

SlotEntry S32PlainSlot() {
  return SlotEntry{
      "s32-plain",
      "negative control: s32 differential with a plain load/store writer racing exchange(0) folds; "
      "loses or double-counts updates (spec I7)",
      true, SlotFactory{S32PlainRep::kTraits, &MakeVmstat<S32PlainRep>}};
}

}  // namespace isolation::vmstat::internal
