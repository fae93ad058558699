// SPDX-License-Identifier: GPL-2.0-or-later
// -----------------------------------------------------------------------------
// core/membarrier.h
// -----------------------------------------------------------------------------
//
// The slow half of an asymmetric Dekker pairing, as userspace RCU does it
// (liburcu's urcu-memb flavour): the frequent side replaces its full fence
// by a compiler barrier (std::atomic_signal_fence), and the rare side calls
// membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED), which executes a full memory
// barrier on every CPU currently running a thread of this process (and on
// the caller, before and after).  Every store a running thread made before
// the IPI is then visible to the caller's later loads, exactly what the
// frequent side's fence used to guarantee; a thread that is not running has
// passed through the kernel's context switch, which is a full barrier.
//
// Availability is decided once per process (function-local static): the
// command must be listed by MEMBARRIER_CMD_QUERY and the process registered
// with MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED.  It is reported unavailable,
// with the reason, when the kernel lacks the syscall or the command, when
// registration fails, and always in ThreadSanitizer builds: TSan does not
// know that membarrier orders other threads' accesses, so those builds keep
// the symmetric fences it understands (core/fence.h).
//
// Kernel counterpart: kernel/sched/membarrier.c (membarrier_private_expedited).
// Thread-safety: both functions may be called from any thread.

#ifndef ISOLATION_CORE_MEMBARRIER_H_
#define ISOLATION_CORE_MEMBARRIER_H_

#include <string>

namespace isolation {

struct MembarrierSupport {
  bool available = false;
  // Why not, when !available (e.g. "MEMBARRIER_CMD_QUERY failed: ENOSYS");
  // "registered" when available.
  std::string reason;
};

// Queried and registered at the first call, the same answer afterwards.
const MembarrierSupport& PrivateExpeditedMembarrier();

// membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0).  REQUIRES
// PrivateExpeditedMembarrier().available.  A failure of the call itself (it
// cannot fail once registered) aborts: returning would silently lose the
// ordering.
void MembarrierPrivateExpedited();

}  // namespace isolation

#endif  // ISOLATION_CORE_MEMBARRIER_H_
