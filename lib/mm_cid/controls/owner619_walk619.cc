// SPDX-License-Identifier: GPL-2.0-or-later
// Negative control `owner619_walk619`: owner619's tasks->CPUs fixup as
// merged for 6.19, before the 7.0-rc4 fixes ("Prevent CID stalls due to
// concurrent forks", "Handle vfork()/CLONE_VM correctly", "Avoid full
// tasklist walks"): a forked child is accounted (and gets an ID) before it
// is visible to the walk, and the walk covers the caller's thread group,
// then the task list bounded by a users budget the thread group consumes
// again -- it misses CLONE_VM sharers and a concurrently forked child (S10;
// I11).

#include "mm_cid/builtins.h"
#include "mm_cid/designs/owner619_design.h"

namespace isolation::mm_cid::internal {
namespace {

struct Walk619 : owner619_design::MainlineFixes {
  static constexpr bool kUserListWalk = false;
};

}  // namespace

DesignEntry Owner619Walk619DesignEntry() {
  return {"owner619_walk619",
          "negative control: owner619 with the 6.19 fixup walk and fork order (misses vfork "
          "sharers and "
          "concurrent forks; S10, I11)",
          /*negative_control=*/true,
          DesignFactory{[](int num_cpus, const LazyConfig&, const MmCid::Limits& limits) {
                          return MakeOwner619Design<Walk619>(num_cpus, limits);
                        },
                        Owner619Traits()}};
}

}  // namespace isolation::mm_cid::internal
