// SPDX-License-Identifier: GPL-2.0-or-later
// trace_internal.h (runtime-internal): how the real-thread driver tells the
// trace sink which model CPU the calling thread plays.

#ifndef ISOLATION_LIB_RUNTIME_TRACE_INTERNAL_H_
#define ISOLATION_LIB_RUNTIME_TRACE_INTERNAL_H_

namespace isolation::trace_internal {

// Marks the calling thread as the CPU thread of model CPU `cpu` (-1: none),
// so that a TraceRun attached to a real-thread driver records this thread's
// events for `cpu` into `cpu`'s own buffer, without a lock.
void SetThreadCpu(int cpu);

}  // namespace isolation::trace_internal

#endif  // ISOLATION_LIB_RUNTIME_TRACE_INTERNAL_H_
