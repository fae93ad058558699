// SPDX-License-Identifier: GPL-2.0-or-later
// Negative control `owner619_direct`: owner619 before 4327fb13fa47 ("sched:
// Fix live lock on task to CPU transition"): during a tasks->CPUs transition
// a running task's ID goes to its CPU directly as ONCPU instead of a
// temporary TRANSIT ID, so IDs handed out during the fixup walk never return
// to the pool; on 4 CPUs a schedin then spins for an ID while the fixup
// waits for that CPU's lock (S8; I14).

#include "mm_cid/builtins.h"
#include "mm_cid/designs/owner619_design.h"

namespace isolation::mm_cid::internal {
namespace {

struct DirectHandover : owner619_design::MainlineFixes {
  static constexpr bool kTransitHandover = false;
};

}  // namespace

DesignEntry Owner619DirectDesignEntry() {
  return {"owner619_direct",
          "negative control: owner619 without TRANSIT on tasks->CPUs hand-overs (pre-4327fb13fa47; "
          "S8 live "
          "lock, I14)",
          /*negative_control=*/true,
          DesignFactory{[](int num_cpus, const LazyConfig&, const MmCid::Limits& limits) {
                          return MakeOwner619Design<DirectHandover>(num_cpus, limits);
                        },
                        Owner619Traits()}};
}

}  // namespace isolation::mm_cid::internal
