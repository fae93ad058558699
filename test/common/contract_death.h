// SPDX-License-Identifier: GPL-2.0-or-later
// Death tests of the hot entry points' contracts (contract.h).  The checks
// abort only where they are compiled into the library (Debug, sanitizer or
// ISOLATION_HARDENED builds; tools/bootstrap.sh test turns the option on);
// elsewhere the test is skipped with the reason, never silently passed.

#ifndef ISOLATION_TEST_COMMON_CONTRACT_DEATH_H_
#define ISOLATION_TEST_COMMON_CONTRACT_DEATH_H_

#include "gtest/gtest.h"
#include "isolation/core/contract.h"

namespace isolation::testing_internal {
// Hides a constant from the optimizer, so that a deliberately out-of-range
// argument in a death test does not trip -Warray-bounds on the code after
// the (noreturn) contract check.
template <typename T>
T Opaque(T v) {
  volatile T x = v;
  return x;
}
}  // namespace isolation::testing_internal

// `regex` should name the offending value; every violation message starts
// with "contract violated".
#define EXPECT_CONTRACT_DEATH(statement, regex)                                            \
  do {                                                                                     \
    if (!::isolation::ContractChecksActive()) {                                            \
      GTEST_SKIP()                                                                         \
          << "contract checks are compiled out of this build (NDEBUG without "             \
             "ISOLATION_HARDENED or a sanitizer); configure with -DISOLATION_HARDENED=ON"; \
    }                                                                                      \
    GTEST_FLAG_SET(death_test_style, "threadsafe");                                        \
    EXPECT_DEATH(statement, "contract violated.*" regex);                                  \
  } while (0)

#endif  // ISOLATION_TEST_COMMON_CONTRACT_DEATH_H_
