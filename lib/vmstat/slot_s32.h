// SPDX-License-Identifier: GPL-2.0-or-later
// Internal: what the slot representations over S32Cell share (s32-atomic,
// s32-xadd and the s32-plain negative control, slot_s32_*.cc): the read of
// the differential, the exchange(0) that folds it from any CPU, and C's
// compare-and-swap install.  See slot_impl.h for what a representation is.

#ifndef ISOLATION_LIB_VMSTAT_SLOT_S32_H_
#define ISOLATION_LIB_VMSTAT_SLOT_S32_H_

#include <atomic>
#include <cstdint>

#include "isolation/core/interleave.h"
#include "isolation/vmstat/internal/cells.h"

namespace isolation::vmstat::internal {

struct S32CellRep {
  using Cell = S32Cell;

  static int64_t Diff(const Cell& c) { return c.d.load(std::memory_order_relaxed); }

  static int64_t Take(Cell& c) {
    // xchg: atomic across CPUs against the CAS writer.
    if (c.d.load(std::memory_order_relaxed) == 0) return 0;
    return c.d.exchange(0, std::memory_order_relaxed);
  }

  // mod_zone_state()'s install of the new value (VmstatImpl::ModWord):
  // C's compare-and-swap.
  struct CasInstall {
    bool operator()(std::atomic<int32_t>& d, int32_t& o, int32_t n) const {
      ISOLATION_INTERLEAVE_POINT("vmstat.c_writer.before_cas");
      // Relaxed CAS: atomic across CPUs against the shepherd's xchg.
      return d.compare_exchange_weak(o, n, std::memory_order_relaxed);
    }
  };
};

}  // namespace isolation::vmstat::internal

#endif  // ISOLATION_LIB_VMSTAT_SLOT_S32_H_
