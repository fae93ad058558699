// SPDX-License-Identifier: GPL-2.0-or-later
// alloc_hinted.h (mm_cid module, not installed): what alloc_v6_13 and
// alloc_v6_14 share -- __mm_cid_try_get() of v6.13+ ([LOC] 7e019dcc470f):
// (1) reuse this CPU's recent_cid, (2) expand max_nr_cid towards
// min(nr_cpus_allowed, users), (3) fall back to the first zero below
// nr_cpus_allowed.  alloc_v6_14 ([SHRINK] 02d954c0fdf9) also pulls max_nr_cid
// down to that bound first and takes the hint only below it.

#ifndef ISOLATION_LIB_MM_CID_STRATEGIES_ALLOC_HINTED_H_
#define ISOLATION_LIB_MM_CID_STRATEGIES_ALLOC_HINTED_H_

#include <algorithm>
#include <atomic>

#include "isolation/mm_cid/strategies.h"

namespace isolation::mm_cid::internal {

class HintedAllocator : public AllocatorStrategy {
 public:
  int TryGet(CidSpace& space) const final {
    const int users = space.users();
    const int nr_allowed = space.nr_cpus_allowed();
    const int allowed_max = std::min(nr_allowed, users);
    std::atomic<int>& max_nr_cid = space.max_nr_cid();
    int max_nr = max_nr_cid.load(std::memory_order_relaxed);
    // relaxed CASes: max_nr_cid only spreads allocations; the bitmap's
    // test-and-set is what reserves an ID.
    if (shrink()) {
      while (max_nr > allowed_max) {
        if (max_nr_cid.compare_exchange_weak(max_nr, allowed_max, std::memory_order_relaxed)) {
          max_nr = allowed_max;
          break;
        }
      }
    }
    // (1) the CPU's recent ID ([SHRINK]: only below max_nr_cid).
    const int recent = space.recent_cid();
    if (recent >= 0 && (!shrink() || recent < max_nr) && space.TryReserve(recent)) return recent;
    // (2) expand max_nr_cid.
    while (max_nr < allowed_max) {
      if (!max_nr_cid.compare_exchange_weak(max_nr, max_nr + 1, std::memory_order_relaxed))
        continue;
      if (space.TryReserve(max_nr)) return max_nr;
      max_nr = max_nr_cid.load(std::memory_order_relaxed);
    }
    // (3) first zero below nr_cpus_allowed.
    const int cid = space.FirstZeroBelow(nr_allowed);
    if (cid < 0) return -1;
    return space.TryReserve(cid) ? cid : -1;
  }

 protected:
  // [SHRINK]: pull max_nr_cid down to min(allowed, users) at entry.
  virtual bool shrink() const = 0;
  static AllocatorTraits HintedTraits() {
    AllocatorTraits t;
    t.recent_cid = true;
    t.bounded_by_allowed = true;
    t.reuses_recent_cid = true;
    return t;
  }
};

}  // namespace isolation::mm_cid::internal

#endif  // ISOLATION_LIB_MM_CID_STRATEGIES_ALLOC_HINTED_H_
