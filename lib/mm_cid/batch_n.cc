// SPDX-License-Identifier: GPL-2.0-or-later
// Granularity family `batch_N` ([BATCH] <20250716160603.138385-9-gmonaco@redhat.com>,
// CONFIG_RSEQ_CID_SCAN_BATCH, default 8): each call visits the next N CPUs of
// the scope in each loop, claimed by a CAS on the mm's cursor
// (mm_cid_scan_batch); only a call starting at position 0 is rate limited,
// and a full pass takes ceil(size / N) calls.

#include <memory>

#include "absl/strings/str_cat.h"
#include "isolation/core/cpumask.h"
#include "mm_cid/builtins.h"

namespace isolation::mm_cid::internal {
namespace {

class BatchN final : public GranularityStrategy {
 public:
  explicit BatchN(int n) : n_(n) {}
  int batch() const override { return n_; }
  int Start(const std::atomic<int>& cursor, int scope_size) const override {
    const int start = cursor.load(std::memory_order_relaxed);
    return start >= scope_size ? 0 : start;
  }
  // relaxed CAS: the cursor only partitions the work between scanners; the
  // slot CASes of each visit order the reclaim itself.
  bool Claim(std::atomic<int>& cursor, int start, int scope_size, int, ScanWindow& window) const override {
    const int next = start + n_ >= scope_size ? 0 : start + n_;
    int expected = cursor.load(std::memory_order_relaxed);
    if (expected >= scope_size) expected = 0;
    if (expected != start || !cursor.compare_exchange_strong(expected, next, std::memory_order_relaxed)) {
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

}  // namespace

GranularityEntry BatchNEntry() {
  GranularityFactory factory;
  factory.create = [](int n) -> absl::StatusOr<std::unique_ptr<GranularityStrategy>> {
    if (n < 1 || n > kMaxCpus) {
      return absl::InvalidArgumentError(absl::StrCat("mm_cid: batch ", n, " outside [1, ", kMaxCpus, "]"));
    }
    return std::unique_ptr<GranularityStrategy>(new BatchN(n));
  };
  factory.enumerate_n = 8;  // the spec's default batch_8
  return {"batch_N", "[BATCH]: N CPUs of the scope per call (batch_8 ...), rate limit only at cursor 0",
          /*negative_control=*/false, std::move(factory)};
}

}  // namespace isolation::mm_cid::internal
