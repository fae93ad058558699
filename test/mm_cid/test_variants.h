// SPDX-License-Identifier: GPL-2.0-or-later
// test_variants.h (mm_cid tests): the variant lists the parameterized suites
// run over, and their printable names.

#ifndef ISOLATION_TEST_MM_CID_TEST_VARIANTS_H_
#define ISOLATION_TEST_MM_CID_TEST_VARIANTS_H_

#include <cctype>
#include <ostream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "isolation/mm_cid/mm_cid.h"

namespace isolation::mm_cid {

inline void PrintTo(const MmCidConfig& c, std::ostream* os) { *os << c.Name(); }

namespace testing_variants {

// Every lazy configuration: 3 allocators x 3 scopes x 2 granularities x 5 placements.
inline std::vector<MmCidConfig> AllLazyConfigs() {
  std::vector<MmCidConfig> v;
  for (Allocator a : {Allocator::kV6_4, Allocator::kV6_13, Allocator::kV6_14}) {
    for (ScanScope s : {ScanScope::kPossible, ScanScope::kAllowed, ScanScope::kCidmask}) {
      for (int batch : {0, 8}) {
        for (Placement p : {Placement::kTaskWork, Placement::kDelayed, Placement::kUnbound, Placement::kRcu,
                            Placement::kResume}) {
          MmCidConfig c;
          c.allocator = a;
          c.scope = s;
          c.batch = batch;
          c.placement = p;
          v.push_back(c);
        }
      }
    }
  }
  return v;
}

// Every lazy configuration plus owner619 and the v6.3 baseline v63_mmlock
// (negative controls excluded).  Tests that check a property only some
// designs promise switch on `design` explicitly.
inline std::vector<MmCidConfig> AllCorrectConfigs() {
  std::vector<MmCidConfig> v = AllLazyConfigs();
  MmCidConfig o;
  o.design = Design::kOwner619;
  v.push_back(o);
  MmCidConfig v63;
  v63.design = Design::kV63MmLock;
  v.push_back(v63);
  return v;
}

inline std::string ConfigTestName(const ::testing::TestParamInfo<MmCidConfig>& info) {
  std::string n = info.param.Name();
  for (char& ch : n) {
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  }
  return n;
}

}  // namespace testing_variants
}  // namespace isolation::mm_cid

#endif  // ISOLATION_TEST_MM_CID_TEST_VARIANTS_H_
