// SPDX-License-Identifier: GPL-2.0-or-later
// The s32-plain slot representation (vmstat/slot.h): the counters instantiated
// over SlotMode::kSharedS32Plain (slot_impl.h).

#include "vmstat/builtin.h"
#include "vmstat/slot_impl.h"

namespace isolation::vmstat::internal {

SlotEntry S32PlainSlot() {
  return SlotEntry{
      "s32-plain",
      "negative control: s32 differential with a plain load/store writer racing exchange(0) folds; "
      "loses or double-counts updates (spec I7)",
      true,
      SlotFactory{TraitsOf<SlotMode::kSharedS32Plain>(), &MakeVmstat<SlotMode::kSharedS32Plain>}};
}

}  // namespace isolation::vmstat::internal
