// SPDX-License-Identifier: GPL-2.0-or-later
// -----------------------------------------------------------------------------
// vmstat/slot.h
// -----------------------------------------------------------------------------
//
// The slot-representation axis of vmstat: how one per-CPU differential is
// stored and updated, which alone decides the writers' per-update code (the
// hot path).  Each representation is a separate instantiation of the
// counters, chosen once by Vmstat::Create; an update runs its code with no
// further dispatch (no fold-policy call, no variant test).
//
//   s8-owner       A0, A1, B, B.local: `s8`, written only by its CPU (relaxed
//                  load + store: userspace's nearest analogue of the
//                  unlocked this_cpu_cmpxchg); folded only by its owner.
//   s32-atomic     C: `s32`, a relaxed CAS loop on every update (a locked
//                  cmpxchg on x86), `exchange(0)` folds from any CPU.
//   s32-xadd       C.xadd (ours, no kernel discussion): C's `s32` with one
//                  relaxed locked add per update (lock xadd on x86), and
//                  past the threshold an `exchange` of the slot for the
//                  overstep.  Between the add and that exchange a reader
//                  sees the slot up to |delta| past the threshold (C never
//                  stores a value past it); the sum is exact throughout.
//                  A delta beyond the threshold takes C's CAS path.
//   s32-scaled     C.addo (ours, no kernel discussion): the s32 x * k in a
//                  64-bit word with its unit k, chosen per threshold t so
//                  that one relaxed locked add of delta * k overflows the
//                  s32 exactly when |x + delta| > t (lock add + jo on x86);
//                  past it a CAS of the word for the overstep; a CAS (k
//                  kept) folds from any CPU.  A delta beyond the threshold,
//                  or a zone not yet rescaled to a new threshold, takes C's
//                  CAS loop.  vmstat/internal/cells.h, internal::Scaled*,
//                  has the arithmetic.
//   s64-watermark  D (ours): a 64-bit running sum stored by its owner plus a
//                  `folded` word advanced by CAS by whoever folds.
//   s32-plain      negative control: C's layout with a plain load/store
//                  writer; loses or double-counts under a remote fold (I7).
//
// Kernel counterpart: `s8 vm_stat_diff[]` in struct per_cpu_zonestat and
// per_cpu_nodestat (include/linux/mmzone.h); the s32 widening of the 2023
// remote-fold series (<20230515180015.016409657@redhat.com>).
//
// Thread-safety contract: the registry is read-only from outside (the
// representations are the library's own code) and thread-safe.  What each
// representation allows concurrently is stated in vmstat.h.

#ifndef ISOLATION_VMSTAT_SLOT_H_
#define ISOLATION_VMSTAT_SLOT_H_

#include <memory>

#include "isolation/core/registry.h"
#include "isolation/vmstat/fold_policy.h"

namespace isolation::vmstat {

struct VmstatConfig;

// What a slot representation allows.
struct SlotTraits {
  // FoldCpuRemote folds it from another CPU (C, D, the negative control);
  // false: only the owner may write it and a remote fold is a no-op.
  bool remote_foldable = false;
  // The __mod/__inc/__dec (IrqsOff) writers are the plain load + store
  // forms with their own-direction-only test; false: they alias the
  // mod_*_state path (a plain RMW could lose a concurrent remote fold).
  bool irqs_off_writers_plain = false;
  int bits = 8;  // width of the differential
};

// Builds the counters over one representation.  `config` is already
// validated and canonical (fold_policy and slot hold registered names).
struct SlotFactory {
  SlotTraits traits;
  std::unique_ptr<Vmstat> (*make)(VmstatConfig config,
                                  std::unique_ptr<FoldPolicy> policy) = nullptr;
  explicit operator bool() const { return make != nullptr; }
};

// s8-owner, s32-atomic, s64-watermark, s32-xadd, s32-scaled, s32-plain
// (negative control).
const VariantRegistry<SlotFactory>& SlotRegistry();

}  // namespace isolation::vmstat

#endif  // ISOLATION_VMSTAT_SLOT_H_
