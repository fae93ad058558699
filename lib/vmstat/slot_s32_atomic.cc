// SPDX-License-Identifier: GPL-2.0-or-later
// The s32-atomic slot representation (vmstat/slot.h): the counters instantiated
// over SlotMode::kSharedS32Cas (slot_impl.h).

#include "vmstat/builtin.h"
#include "vmstat/slot_impl.h"

namespace isolation::vmstat::internal {

SlotEntry S32AtomicSlot() {
  return SlotEntry{
      "s32-atomic",
      "s32 differential with a relaxed CAS loop on every update (locked cmpxchg on x86) and "
      "exchange(0) folds from any CPU; C (Tosatti 2023)",
      false,
      SlotFactory{TraitsOf<SlotMode::kSharedS32Cas>(), &MakeVmstat<SlotMode::kSharedS32Cas>}};
}

}  // namespace isolation::vmstat::internal
