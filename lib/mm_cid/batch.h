// SPDX-License-Identifier: GPL-2.0-or-later
// batch.h (mm_cid module, not installed): the built-in scan granularities
// (strategies.h: GranularityStrategy), batch_full (mainline) and batch_N
// ([BATCH]).  Final classes with inline methods, so that the lazy design's
// scan, which recognises them at construction (designs/lazy_design.h, ScanPath),
// calls them without a virtual call; strategies/batch_full.cc and batch_n.cc hold their
// registry entries.
//
// Thread safety: immutable objects; BatchN moves the mm's cursor with a
// relaxed CAS (the cursor only partitions the work between scanners; the
// slot CASes of each visit order the reclaim itself).

#ifndef ISOLATION_LIB_MM_CID_BATCH_H_
#define ISOLATION_LIB_MM_CID_BATCH_H_

#include <atomic>
#include <string_view>

#include "isolation/mm_cid/strategies.h"

namespace isolation::mm_cid::internal {

// batch_full: every task_mm_cid_work() call is a whole pass over the scope.
class BatchFull final : public GranularityStrategy {
 public:
  // Start() and Claim() ignore the scope's size: the inlined scan skips
  // computing it.
  static constexpr bool kUsesScopeSize = false;
  static constexpr bool kWholePass = true;                 // every call starts a pass at 0
  static constexpr std::string_view kName = "batch_full";  // its registry entry's name
  int batch() const override { return 0; }
  int Start(const std::atomic<int>&, int) const override { return 0; }
  bool Claim(std::atomic<int>&, int, int, int num_cpus, ScanWindow& window) const override {
    window.start = 0;
    window.count = num_cpus;  // the whole scope
    window.pass_end = true;
    return true;
  }
};

// batch_N: each call visits the next N CPUs of the scope (mm_cid_scan_batch).
class BatchN final : public GranularityStrategy {
 public:
  static constexpr bool kUsesScopeSize = true;
  static constexpr bool kWholePass = false;
  static constexpr std::string_view kName = "batch_N";
  explicit BatchN(int n) : n_(n) {}
  int batch() const override { return n_; }
  int Start(const std::atomic<int>& cursor, int scope_size) const override {
    const int start = cursor.load(std::memory_order_relaxed);
    return start >= scope_size ? 0 : start;
  }
  // relaxed CAS: see the file comment.
  bool Claim(std::atomic<int>& cursor, int start, int scope_size, int,
             ScanWindow& window) const override {
    const int next = start + n_ >= scope_size ? 0 : start + n_;
    int expected = cursor.load(std::memory_order_relaxed);
    if (expected >= scope_size) expected = 0;
    if (expected != start ||
        !cursor.compare_exchange_strong(expected, next, std::memory_order_relaxed)) {
      return false;  // another scanner claimed this batch
    }
    window.start = start;
    window.count = n_;
    window.pass_end = next == 0;
    return true;
  }

 private:
  const int n_;
};

}  // namespace isolation::mm_cid::internal

#endif  // ISOLATION_LIB_MM_CID_BATCH_H_
