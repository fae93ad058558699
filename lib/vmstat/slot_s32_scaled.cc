// SPDX-License-Identifier: GPL-2.0-or-later
// The s32-scaled slot representation (vmstat/slot.h): the counters
// instantiated over SlotMode::kScaledS32 (slot_impl.h); the unit arithmetic
// is internal::Scaled* in vmstat.h, next to the writer's fast path.

#include "vmstat/builtin.h"
#include "vmstat/slot_impl.h"

namespace isolation::vmstat::internal {

SlotEntry S32ScaledSlot() {
  return SlotEntry{
      "s32-scaled",
      "OURS: s32 differential times a per-threshold unit, so that one relaxed locked add's "
      "overflow "
      "flag is the threshold test (lock add + jo on x86); CAS folds from any CPU; C.addo",
      false, SlotFactory{TraitsOf<SlotMode::kScaledS32>(), &MakeVmstat<SlotMode::kScaledS32>}};
}

}  // namespace isolation::vmstat::internal
