// SPDX-License-Identifier: GPL-2.0-or-later
// The s8-owner slot representation (vmstat/slot.h): the counters instantiated
// over SlotMode::kOwnerS8 (slot_impl.h).

#include "vmstat/builtin.h"
#include "vmstat/slot_impl.h"

namespace isolation::vmstat::internal {

SlotEntry S8OwnerSlot() {
  return SlotEntry{"s8-owner",
                   "s8 per-CPU differential written only by its CPU (relaxed load + store, the "
                   "analogue of the unlocked this_cpu_cmpxchg); A0, A1, B, B.local",
                   false,
                   SlotFactory{TraitsOf<SlotMode::kOwnerS8>(), &MakeVmstat<SlotMode::kOwnerS8>}};
}

}  // namespace isolation::vmstat::internal
