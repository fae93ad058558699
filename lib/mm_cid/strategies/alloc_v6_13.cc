// SPDX-License-Identifier: GPL-2.0-or-later
// Allocator `alloc_v6_13` (v6.13, [LOC] 7e019dcc470f): recent_cid hint and
// max_nr_cid expansion bounded by nr_cpus_allowed.  The hint is taken
// whatever its value, so a CPU gets its old high ID back after its siblings
// exit: IDs do not compact (I8 fails, declared in its traits).

#include <memory>

#include "mm_cid/strategies/alloc_hinted.h"
#include "mm_cid/builtins.h"

namespace isolation::mm_cid::internal {
namespace {

class AllocV6_13 final : public HintedAllocator {
 public:
  AllocatorTraits traits() const override {
    AllocatorTraits t = HintedTraits();
    t.compacts = false;  // the hint re-grants the old high ID
    return t;
  }

 protected:
  bool shrink() const override { return false; }
};

}  // namespace

AllocatorEntry AllocV6_13Entry() {
  AllocatorEntry e{"alloc_v6_13",
                   "v6.13: + recent_cid hint and max_nr_cid expansion bounded by nr_cpus_allowed "
                   "([LOC] 7e019dcc470f); "
                   "cannot compact after thread exit",
                   /*negative_control=*/false,
                   [] { return std::unique_ptr<AllocatorStrategy>(new AllocV6_13); }};
  e.aliases = {"v6_13"};
  return e;
}

}  // namespace isolation::mm_cid::internal
