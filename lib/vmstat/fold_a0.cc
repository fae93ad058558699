// SPDX-License-Identifier: GPL-2.0-or-later
// Fold policy A0: mm/vmstat.c before v6.5 -- vmstat_shepherd() queues
// vmstat_update on every dirty online CPU, isolated or not (docs/vmstat.md, A0).

#include <memory>

#include "vmstat/builtin.h"
#include "vmstat/fold_mainline.h"

namespace isolation::vmstat::internal {

FoldPolicyEntry A0Policy() {
  return FoldPolicyEntry{"A0",
                         "pre-6.5 mainline: the shepherd queues vmstat_update on every dirty CPU, "
                         "isolated ones included",
                         false, [] { return std::make_unique<MainlineFold>(); }};
}

}  // namespace isolation::vmstat::internal
