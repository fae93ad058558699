// SPDX-License-Identifier: GPL-2.0-or-later
// test_util.h (mm_cid tests): helpers shared by the suites that drive the
// mechanism's entry points directly (no driver): a scan placement that runs
// the scans the mechanism asks for, and the collected invariant violations.

#ifndef ISOLATION_TEST_MM_CID_TEST_UTIL_H_
#define ISOLATION_TEST_MM_CID_TEST_UTIL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "isolation/mm_cid/mm_cid.h"

namespace isolation::mm_cid::testing_util {

// A scan "placement" for direct driving: runs the scans the mechanism asks
// for, wherever the config says, at the given time.
struct DirectPlacement {
  explicit DirectPlacement(MmCid& mech) : m(mech) {}
  MmCid& m;
  std::vector<MmId> pending;
  Nanos next_delayed = kScanDelayNs;
  int64_t scans_inline = 0;
  void Tick(int cpu, TaskId t, Nanos now) {
    if (ScanRequest r = m.Tick(cpu, t, now)) pending.push_back(r.mm);
  }
  void ReturnToUser(int cpu, TaskId t, Nanos now) {
    ScanResult res;
    if (ScanRequest r = m.ReturnToUser(cpu, t, now, &res)) pending.push_back(r.mm);
    if (res.ran) ++scans_inline;
  }
  // Housekeeping work: queued requests, and the periodic delayed work.
  void Housekeeping(Nanos now, int num_mms) {
    for (MmId mm : pending) {
      m.Scan(mm, now);
      m.ScanRequestDone(mm);
    }
    pending.clear();
    if (m.config().placement == Placement::kDelayed && now >= next_delayed) {
      for (MmId mm = 0; mm < num_mms; ++mm) {
        if (m.MmUsers(mm) > 0) m.Scan(mm, now);
      }
      next_delayed = now + kScanDelayNs;
    }
  }
};

// CheckAlways(), plus CheckQuiescent() when no operation is in flight.
inline std::vector<std::string> AllViolations(const MmCid& m, bool quiescent) {
  std::vector<std::string> v = m.CheckAlways();
  if (quiescent) {
    std::vector<std::string> q = m.CheckQuiescent();
    v.insert(v.end(), q.begin(), q.end());
  }
  return v;
}

}  // namespace isolation::mm_cid::testing_util

#endif  // ISOLATION_TEST_MM_CID_TEST_UTIL_H_
