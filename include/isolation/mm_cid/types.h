// SPDX-License-Identifier: GPL-2.0-or-later
// -----------------------------------------------------------------------------
// mm_cid/types.h
// -----------------------------------------------------------------------------
//
// The small vocabulary every mm_cid header shares: task and address-space
// ids, the kernel's two 100 ms constants, and what one compaction scan or
// one scan request is.  Models nothing by itself.
//
// Kernel counterpart: SCHED_MM_CID_PERIOD_NS and MM_CID_SCAN_DELAY
// (kernel/sched/sched.h, v6.4-v6.18); a task id stands for a task_struct, an
// MmId for an mm_struct.
//
// Thread-safety contract: plain values and constants; no shared state.

#ifndef ISOLATION_MM_CID_TYPES_H_
#define ISOLATION_MM_CID_TYPES_H_

#include <cstdint>

#include "isolation/core/clock.h"

namespace isolation::mm_cid {

using MmId = int32_t;
using TaskId = int32_t;
inline constexpr TaskId kNoTask = -1;
inline constexpr MmId kNoMm = -1;

// Bounds of MmCid::Limits, checked before anything is allocated: task ids
// up to the kernel's PID_MAX_LIMIT / 4 (2^20; one 64-byte slot each, 64 MiB),
// mms up to 2^20 (one pointer each until created).
inline constexpr int kMaxTasks = 1 << 20;
inline constexpr int kMaxMms = 1 << 20;

// SCHED_MM_CID_PERIOD_NS and MM_CID_SCAN_DELAY (both 100 ms).
inline constexpr Nanos kCidPeriodNs = 100 * kNsPerMs;
inline constexpr Nanos kScanDelayNs = 100 * kNsPerMs;
// Calibration of one remote slot visit (30-35 us / 256 visits in [SEED]);
// used for *modelled* costs only.
inline constexpr Nanos kModelledVisitNs = 130;

// What one call of MmCid::Scan() did.
struct ScanResult {
  bool ran = false;         // passed the rate limit / cursor claim
  int visits = 0;           // slot visits (both passes)
  int reclaimed = 0;        // IDs freed by remote clears
  bool pass_start = false;  // this call began a pass (a full pass, or a batch at cursor 0)
  bool pass_end = false;    // this call completed a pass
};

// What a hook asks the adapter to do about compaction.
struct ScanRequest {
  MmId mm = kNoMm;  // kNoMm: nothing to do
  explicit operator bool() const { return mm != kNoMm; }
};

}  // namespace isolation::mm_cid

#endif  // ISOLATION_MM_CID_TYPES_H_
