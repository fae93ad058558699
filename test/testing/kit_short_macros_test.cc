// SPDX-License-Identifier: GPL-2.0-or-later
// The short status macro names, opted into: defined where free, and another
// library's ASSERT_OK, defined first, left as it was.

#include <string>

#include "gtest/gtest-spi.h"
#include "gtest/gtest.h"

namespace other_library {
inline int g_assert_ok_calls = 0;
inline void AssertOk(bool) { ++g_assert_ok_calls; }
}  // namespace other_library

#define ASSERT_OK(x) ::other_library::AssertOk((x).ok())
#define ISOLATION_TESTING_SHORT_STATUS_MACROS
#include "isolation/testing/status_matchers.h"

namespace isolation::testing {
namespace {

absl::StatusOr<std::string> Name(bool ok) {
  if (!ok) return absl::NotFoundError("no name");
  return std::string("cpu7");
}

TEST(ShortStatusMacros, DefinedWhenOptedIn) {
  EXPECT_OK(Name(true));
  ASSERT_OK_AND_ASSIGN(std::string n, Name(true));
  EXPECT_EQ(n, "cpu7");
  EXPECT_NONFATAL_FAILURE(EXPECT_OK(Name(false)), "no name");
}

TEST(ShortStatusMacros, AnotherLibrarysDefinitionIsKept) {
  const int before = other_library::g_assert_ok_calls;
  ASSERT_OK(Name(false));  // the other library's macro: counts, does not fail
  EXPECT_EQ(other_library::g_assert_ok_calls, before + 1);
}

}  // namespace
}  // namespace isolation::testing
