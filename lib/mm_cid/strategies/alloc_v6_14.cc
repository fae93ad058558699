// SPDX-License-Identifier: GPL-2.0-or-later
// Allocator `alloc_v6_14` (v6.14-v6.18, [SHRINK] 02d954c0fdf9): v6.13 plus
// max_nr_cid pulled down to min(nr_cpus_allowed, users) at every
// allocation, with the recent_cid hint taken only below it -- compaction
// works again after threads exit.

#include <memory>

#include "mm_cid/strategies/alloc_hinted.h"
#include "mm_cid/builtins.h"

namespace isolation::mm_cid::internal {
namespace {

class AllocV6_14 final : public HintedAllocator {
 public:
  AllocatorTraits traits() const override {
    AllocatorTraits t = HintedTraits();
    t.id_promise = AllocatorTraits::IdPromise::kMaxNrCid;  // the hint only below max_nr_cid
    return t;
  }

 protected:
  bool shrink() const override { return true; }
};

}  // namespace

AllocatorEntry AllocV6_14Entry() {
  AllocatorEntry e{"alloc_v6_14",
                   "v6.14-v6.18: + shrink max_nr_cid to min(allowed, users), hint only below it "
                   "([SHRINK] 02d954c0fdf9)",
                   /*negative_control=*/false,
                   [] { return std::unique_ptr<AllocatorStrategy>(new AllocV6_14); }};
  e.aliases = {"v6_14"};
  return e;
}

}  // namespace isolation::mm_cid::internal
