// SPDX-License-Identifier: GPL-2.0-or-later
// -----------------------------------------------------------------------------
// mm_cid/host_check.h
// -----------------------------------------------------------------------------
//
// The running kernel's mm_cid against the model's invariants, for
// `isolab hostcheck`: one thread pinned to each CPU this process may use (at
// most 8) spins for 30 ms reading its rseq `mm_cid` (include/uapi/linux/
// rseq.h, v6.3+: the u32 at offset 24, present when the auxv
// AT_RSEQ_FEATURE_SIZE is >= 28).  The kernel agrees with the model when
// every ID is below the process's allowed-CPU count (I3, the bound of
// __mm_cid_try_get() since v6.13) and no ID is seen on two pinned threads
// (I1: a pinned thread's ID stays parked on its CPU).  Exact values are not
// compared (the kernel's allocation policy changes by release); the port's
// side of the same layout is test/mm_cid/host_rseq_test.cc.
//
// Kernel counterpart: kernel/sched/core.c / sched.h mm_cid (v6.4-v6.18
// lazy design, v6.19 owner rewrite); rseq_update_cpu_node_id().
//
// Thread safety: starts and joins its own threads; call from one thread.

#ifndef ISOLATION_MM_CID_HOST_CHECK_H_
#define ISOLATION_MM_CID_HOST_CHECK_H_

#include "isolation/core/host.h"

namespace isolation::mm_cid {

// kNotAvailable (with why) when the kernel has no rseq mm_cid, glibc did
// not register rseq, or a thread cannot be pinned.
HostCheck CheckHostMmCid();

}  // namespace isolation::mm_cid

#endif  // ISOLATION_MM_CID_HOST_CHECK_H_
