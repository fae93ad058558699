// SPDX-License-Identifier: GPL-2.0-or-later
// The baseline of goal 1 of docs/performance.md ("mm_cid cached switch <= 2x an empty
// hook call"): a context-switch hook that does nothing, called through a
// virtual call the benchmark's translation unit cannot resolve.  The
// concrete class lives in empty_hook.cc, so the compiler of mm_cid_bench.cc
// sees only this interface -- as it sees only MmCid's -- and can neither
// devirtualise (not even speculatively) nor drop the arguments.
#ifndef ISOLATION_BENCH_MM_CID_SWITCH_HOOK_H_
#define ISOLATION_BENCH_MM_CID_SWITCH_HOOK_H_

#include <memory>

#include "isolation/core/clock.h"
#include "isolation/mm_cid/types.h"

namespace isolation::mm_cid::bench {

class SwitchHook {
 public:
  virtual ~SwitchHook() = default;
  virtual void ContextSwitch(int cpu, TaskId prev, TaskId next, Nanos now) = 0;
  virtual void Migrate(TaskId task, int from, int to, Nanos now) = 0;
};

// A hook whose entry points return at once (defined in empty_hook.cc).
std::unique_ptr<SwitchHook> MakeEmptySwitchHook();

}  // namespace isolation::mm_cid::bench

#endif  // ISOLATION_BENCH_MM_CID_SWITCH_HOOK_H_
