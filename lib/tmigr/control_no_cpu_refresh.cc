// SPDX-License-Identifier: GPL-2.0-or-later
// Negative control "no_cpu_refresh": before 61f7fdf8fd00, tmigr_update_events()
// left a queued group event with an unchanged expiry naming the old CPU, so a
// second CPU's timer with the same expiry was missed in the pass and ran late
// (spec S10).

#include "tmigr/builtins.h"
#include "tmigr/hierarchy_impl.h"

namespace isolation::tmigr {

struct NoCpuRefreshQuirks : MainlineQuirks {
  static constexpr bool kNoCpuRefresh = true;
};
template class HierarchyImpl<NoCpuRefreshQuirks>;

std::unique_ptr<TimerMigration> MakeNoCpuRefreshHierarchy(HierarchyArgs args) {
  return MakeHierarchy<NoCpuRefreshQuirks>(std::move(args));
}

// Registry entry (variants.cc registers it).
HierarchyEntry NoCpuRefreshHierarchyEntry() {
  HierarchyEntry e{"no_cpu_refresh",
                   "negative control: equal expiry does not refresh the group event's cpu, before "
                   "61f7fdf8fd00 (S10)",
                   /*negative_control=*/true,
                   [](HierarchyArgs a) { return MakeNoCpuRefreshHierarchy(std::move(a)); }};
  return e;
}

}  // namespace isolation::tmigr
