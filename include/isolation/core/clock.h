// SPDX-License-Identifier: GPL-2.0-or-later
// -----------------------------------------------------------------------------
// clock.h
// -----------------------------------------------------------------------------
//
// Time units and host clocks shared by every module.  Mechanism entry points
// take time as `Nanos` (signed 64-bit nanoseconds, like the kernel's ktime_t),
// so the same code runs on the simulator's virtual clock and on the host's
// monotonic clock.
//
// Kernel counterpart: ktime_t / KTIME_MAX (include/linux/ktime.h), jiffies.
//
// Thread safety: all functions are safe to call from any thread.

#ifndef ISOLATION_CLOCK_H_
#define ISOLATION_CLOCK_H_

#include <cstdint>
#include <ctime>
#include <limits>

#include "isolation/core/contract.h"

namespace isolation {

using Nanos = int64_t;
// KTIME_MAX.  As a time it means "never" (a timer that never expires, a
// Step::Sleep that never ends); virtual clocks saturate at it rather than
// overflow (SaturatingAdd).
inline constexpr Nanos kNanosMax = std::numeric_limits<int64_t>::max();
inline constexpr Nanos kNsPerUs = 1'000;
inline constexpr Nanos kNsPerMs = 1'000'000;
inline constexpr Nanos kNsPerSec = 1'000'000'000;

// a + b clamped to [INT64_MIN, kNanosMax] (ktime_add_safe()): a time plus a
// delay of kNanosMax stays kNanosMax ("never") instead of wrapping negative.
constexpr Nanos SaturatingAdd(Nanos a, Nanos b) {
  Nanos r = 0;
  if (__builtin_add_overflow(a, b, &r))
    return b > 0 ? kNanosMax : std::numeric_limits<int64_t>::min();
  return r;
}

// CLOCK_MONOTONIC in nanoseconds (vDSO; no syscall on x86-64 and arm64).
inline Nanos MonotonicNanos() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<Nanos>(ts.tv_sec) * kNsPerSec + ts.tv_nsec;
}

// Raw cycle counter where the CPU has one (rdtsc on x86-64, cntvct on arm64),
// else MonotonicNanos().  Use only for differences on one thread.
inline uint64_t CycleCounter() {
#if defined(__x86_64__)
  uint32_t lo, hi;
  __asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
  return (static_cast<uint64_t>(hi) << 32) | lo;
#elif defined(__aarch64__)
  uint64_t v;
  __asm__ __volatile__("mrs %0, cntvct_el0" : "=r"(v));
  return v;
#else
  return static_cast<uint64_t>(MonotonicNanos());
#endif
}

// Jiffies for a given time and HZ (time 0 = jiffy 0).  REQUIRES: 1 <= hz <=
// kNsPerSec (contract-checked); JiffiesToNanos saturates at kNanosMax.
inline int64_t NanosToJiffies(Nanos t, int hz) {
  ISOLATION_CONTRACT(hz >= 1 && hz <= kNsPerSec, "hz %d outside [1, %d]", hz, kNsPerSec);
  return t / (kNsPerSec / hz);
}
inline Nanos JiffiesToNanos(int64_t j, int hz) {
  ISOLATION_CONTRACT(hz >= 1 && hz <= kNsPerSec, "hz %d outside [1, %d]", hz, kNsPerSec);
  Nanos r = 0;
  if (__builtin_mul_overflow(j, kNsPerSec / hz, &r))
    return j > 0 ? kNanosMax : std::numeric_limits<int64_t>::min();
  return r;
}

}  // namespace isolation

#endif  // ISOLATION_CLOCK_H_
