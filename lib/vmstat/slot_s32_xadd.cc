// SPDX-License-Identifier: GPL-2.0-or-later
// The s32-xadd slot representation (vmstat/slot.h): the counters instantiated
// over SlotMode::kSharedS32Xadd (slot_impl.h).

#include "vmstat/builtin.h"
#include "vmstat/slot_impl.h"

namespace isolation::vmstat::internal {

SlotEntry S32XaddSlot() {
  return SlotEntry{
      "s32-xadd",
      "OURS: s32 differential with one relaxed locked add per update (lock xadd on x86) and an "
      "exchange past the threshold; exchange(0) folds from any CPU; C.xadd",
      false,
      SlotFactory{TraitsOf<SlotMode::kSharedS32Xadd>(), &MakeVmstat<SlotMode::kSharedS32Xadd>}};
}

}  // namespace isolation::vmstat::internal
