// SPDX-License-Identifier: GPL-2.0-or-later
// The s64-watermark slot representation (vmstat/slot.h): the counters instantiated
// over SlotMode::kWatermark (slot_impl.h).

#include "vmstat/builtin.h"
#include "vmstat/slot_impl.h"

namespace isolation::vmstat::internal {

SlotEntry S64WatermarkSlot() {
  return SlotEntry{
      "s64-watermark",
      "OURS: 64-bit running sum stored by its owner plus a folded word advanced by CAS by any "
      "folder; D",
      false, SlotFactory{TraitsOf<SlotMode::kWatermark>(), &MakeVmstat<SlotMode::kWatermark>}};
}

}  // namespace isolation::vmstat::internal
