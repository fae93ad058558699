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

// The built-ins of each axis in registration order, one line each:
// X(<entry function>), defined in the variant's file.  A new built-in is its
// file plus one line here (a slot representation: slot_impl.h says what its
// file holds; one with an inline writer fast path also adds its form type and
// that type's row in vmstat/internal/forms.h).
#define ISOLATION_VMSTAT_SLOTS(X)                 \
  X(S8OwnerSlot)      /* slot_s8_owner.cc */      \
  X(S32AtomicSlot)    /* slot_s32_atomic.cc */    \
  X(S64WatermarkSlot) /* slot_s64_watermark.cc */ \
  X(S32XaddSlot)      /* slot_s32_xadd.cc */      \
  X(S32ScaledSlot)    /* slot_s32_scaled.cc */    \
  X(S32PlainSlot)     /* slot_s32_plain.cc, negative control */

#define ISOLATION_VMSTAT_FOLD_POLICIES(X) \
  X(A0Policy)     /* fold_a0.cc */        \
  X(A1Policy)     /* fold_a1.cc */        \
  X(A0CxlPolicy)  /* fold_a0_cancel.cc */ \
  X(BPolicy)      /* fold_b.cc */         \
  X(BLocalPolicy) /* fold_b_local.cc */

#define ISOLATION_VMSTAT_DECLARE_SLOT_(entry) SlotEntry entry();
#define ISOLATION_VMSTAT_DECLARE_POLICY_(entry) FoldPolicyEntry entry();
ISOLATION_VMSTAT_SLOTS(ISOLATION_VMSTAT_DECLARE_SLOT_)
ISOLATION_VMSTAT_FOLD_POLICIES(ISOLATION_VMSTAT_DECLARE_POLICY_)
#undef ISOLATION_VMSTAT_DECLARE_SLOT_
#undef ISOLATION_VMSTAT_DECLARE_POLICY_

// Registered after the list above: C, D, C.xadd, C.addo and the C-plain
// negative control, one policy over five slots (fold_remote.cc; a new member
// of the family is one line there).
std::vector<FoldPolicyEntry> RemotePolicies();

}  // namespace isolation::vmstat::internal

#endif  // ISOLATION_LIB_VMSTAT_BUILTIN_H_
