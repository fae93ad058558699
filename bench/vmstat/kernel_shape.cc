// SPDX-License-Identifier: GPL-2.0-or-later
// The out-of-line fold of the kernel-shaped reference (kernel_shape.h).

#include "kernel_shape.h"

namespace isolation::vmstat::bench {
namespace {
std::atomic<long> g_vm_zone_stat[kKernelShapeItems];  // vm_zone_stat[]
}  // namespace

void KernelShapeFold(long x, int item) {
  // atomic_long_add(): the shared counter, as zone_page_state_add() does.
  g_vm_zone_stat[item].fetch_add(x, std::memory_order_relaxed);
}

}  // namespace isolation::vmstat::bench
