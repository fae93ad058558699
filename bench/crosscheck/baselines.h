// SPDX-License-Identifier: GPL-2.0-or-later
// The cross-check's baselines, compiled apart from the subjects
// (baselines.cc) so that no call is devirtualised or folded into a loop.
//
// Kernel counterpart: none (host calibration).
//
// Thread-safety: one thread.

#ifndef ISOLATION_BENCH_CROSSCHECK_BASELINES_H_
#define ISOLATION_BENCH_CROSSCHECK_BASELINES_H_

#include <cstdint>
#include <memory>

#include "isolation/core/clock.h"
#include "isolation/mm_cid/types.h"

namespace isolation::crosscheck {

// A context-switch hook that does nothing: the empty virtual call of goal 1.
class EmptySwitch {
 public:
  virtual ~EmptySwitch() = default;
  virtual void ContextSwitch(int cpu, mm_cid::TaskId prev, mm_cid::TaskId next, Nanos now) = 0;
};
std::unique_ptr<EmptySwitch> MakeEmptySwitch();

// n increments of a thread-local counter (goal 3's baseline), and n
// uncontended relaxed fetch_adds (C's).
void ThreadLocalIncrements(int64_t n);
void FetchAdds(int64_t n);
// n relaxed loads of a word, each followed by a locked fetch_add of the
// value loaded: what a remote-foldable counter that reads its scale afresh
// does at the least per update (C.addo: the zone's unit, then a locked add
// of delta times it).  The word loaded on a line of its own, and on the
// line the fetch_add writes (C.addo's block holds both).
void LoadThenFetchAdds(int64_t n);
void LoadSameLineThenFetchAdds(int64_t n);

}  // namespace isolation::crosscheck

#endif  // ISOLATION_BENCH_CROSSCHECK_BASELINES_H_
