// SPDX-License-Identifier: GPL-2.0-or-later
// The out-of-line paths of the kernel-shaped switch (kernel_switch_shape.h):
// never taken by the benchmark, which sets IDs that stay on the fast path.
// They only drop the ID, so that a misuse cannot loop.

#include "kernel_switch_shape.h"

namespace isolation::mm_cid::bench {

void KernelShapeSchedoutSlow(KernelShapeTask& prev) { prev.cid = kKernelCidUnset; }

void KernelShapeSchedinSlow(KernelShapeRq& rq, KernelShapeTask& next, uint32_t cpu_cid,
                            uint32_t mode) {
  (void)cpu_cid, (void)mode;
  next.mm->pcpu[rq.cpu].cid = kKernelCidUnset;
}

}  // namespace isolation::mm_cid::bench
