// SPDX-License-Identifier: GPL-2.0-or-later
// Internal: the built-in variants of both vmstat axes, one file each
// (fold_*.cc, slot_*.cc); registry.cc registers them on first use.

#ifndef ISOLATION_LIB_VMSTAT_BUILTIN_H_
#define ISOLATION_LIB_VMSTAT_BUILTIN_H_

#include <vector>

#include "isolation/vmstat/fold_policy.h"
#include "isolation/vmstat/slot.h"

namespace isolation::vmstat::internal {

using SlotEntry = VariantEntry<SlotFactory>;

SlotEntry S8OwnerSlot();
SlotEntry S32AtomicSlot();
SlotEntry S64WatermarkSlot();
SlotEntry S32XaddSlot();
SlotEntry S32ScaledSlot();
SlotEntry S32PlainSlot();  // negative control

FoldPolicyEntry A0Policy();
FoldPolicyEntry A1Policy();
FoldPolicyEntry BPolicy();
FoldPolicyEntry BLocalPolicy();
// C, D, C.xadd, C.addo and the C-plain negative control: one policy over five slots.
std::vector<FoldPolicyEntry> RemotePolicies();

}  // namespace isolation::vmstat::internal

#endif  // ISOLATION_LIB_VMSTAT_BUILTIN_H_
