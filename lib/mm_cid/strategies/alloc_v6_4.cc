// SPDX-License-Identifier: GPL-2.0-or-later
// Allocator `alloc_v6_4` (v6.4-v6.12, [LF] 223baf9d17f2): __mm_cid_try_get()
// takes the first zero of the mm's ID bitmap below nr_cpu_ids -- no per-CPU
// hint, no bound but the machine size.

#include <memory>

#include "mm_cid/builtins.h"

namespace isolation::mm_cid::internal {
namespace {

class AllocV6_4 final : public AllocatorStrategy {
 public:
  AllocatorTraits traits() const override {
    AllocatorTraits t;
    t.compacts = true;
    t.id_promise = AllocatorTraits::IdPromise::kFirstFree;
    return t;
  }
  int TryGet(CidSpace& space) const override {
    const int cid = space.FirstZeroBelow(space.num_cpus());
    if (cid < 0) return -1;
    return space.TryReserve(cid) ? cid : -1;
  }
};

}  // namespace

AllocatorEntry AllocV6_4Entry() {
  AllocatorEntry e{"alloc_v6_4", "v6.4-v6.12: first zero below nr_cpu_ids ([LF] 223baf9d17f2)",
                   /*negative_control=*/false,
                   [] { return std::unique_ptr<AllocatorStrategy>(new AllocV6_4); }};
  e.aliases = {"v6_4"};
  return e;
}

}  // namespace isolation::mm_cid::internal
