// SPDX-License-Identifier: GPL-2.0-or-later
// -----------------------------------------------------------------------------
// testing/violations.h
// -----------------------------------------------------------------------------
//
// What every check of the conformance kit (`isolation::testing`) returns: a
// list of violations, one line each, empty when the check passes; and the
// one GoogleTest helper that asserts a list is empty and prints it when not.
//
//   ISOLATION_EXPECT_NO_VIOLATIONS(tmigr_conformance::Run("S1", "v6_9")) << "seed " << seed;
//   ISOLATION_ASSERT_NO_VIOLATIONS(m.CheckAlways());
//   EXPECT_THAT(mm_cid::CheckSingleThread(v), HasNoViolations());
//
// The argument may be any container of strings (a mechanism's own
// CheckInvariants() result included).  At most kMaxPrintedViolations lines
// are printed, then how many more there were.
//
// Kernel counterpart: none.  Thread-safety: as GoogleTest's assertions.

#ifndef ISOLATION_TESTING_VIOLATIONS_H_
#define ISOLATION_TESTING_VIOLATIONS_H_

#include <cstddef>
#include <ostream>
#include <iterator>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace isolation::testing {

// One line per broken promise; empty: the check passed.
using Violations = std::vector<std::string>;

inline constexpr std::size_t kMaxPrintedViolations = 32;

namespace internal {

// "N violation(s):" and the first kMaxPrintedViolations lines, indented.
template <typename Container>
std::string ViolationsText(const Container& violations) {
  std::ostringstream os;
  std::size_t n = 0;
  for (const auto& v : violations) {
    (void)v;
    ++n;
  }
  os << n << (n == 1 ? " violation:" : " violations:");
  std::size_t i = 0;
  for (const auto& v : violations) {
    if (i++ == kMaxPrintedViolations) {
      os << "\n  ... and " << (n - kMaxPrintedViolations) << " more";
      break;
    }
    os << "\n  " << v;
  }
  return os.str();
}

// The expression (without the parentheses the macros add), then the list.
template <typename Container>
::testing::AssertionResult NoViolationsFormat(const char* expr_text, const Container& violations) {
  if (std::begin(violations) == std::end(violations)) return ::testing::AssertionSuccess();
  std::string_view text(expr_text);
  if (text.size() >= 2 && text.front() == '(' && text.back() == ')')
    text = text.substr(1, text.size() - 2);
  return ::testing::AssertionFailure() << text << " has " << ViolationsText(violations);
}

class HasNoViolationsMatcher {
 public:
  template <typename Container>
  bool MatchAndExplain(const Container& violations,
                       ::testing::MatchResultListener* listener) const {
    if (std::begin(violations) == std::end(violations)) return true;
    *listener << "which has " << ViolationsText(violations);
    return false;
  }
  void DescribeTo(std::ostream* os) const { *os << "has no violations"; }
  void DescribeNegationTo(std::ostream* os) const { *os << "has at least one violation"; }
};

}  // namespace internal

// HasNoViolations(): the list is empty; a failure lists what it holds.
inline ::testing::PolymorphicMatcher<internal::HasNoViolationsMatcher> HasNoViolations() {
  return ::testing::MakePolymorphicMatcher(internal::HasNoViolationsMatcher());
}

}  // namespace isolation::testing

// ISOLATION_EXPECT_NO_VIOLATIONS(expr) / ISOLATION_ASSERT_NO_VIOLATIONS(expr):
// `expr` (evaluated once) is an empty list of violations; the failure names
// the expression and lists the violations.  Both accept a `<< message`.
#define ISOLATION_EXPECT_NO_VIOLATIONS(...) \
  EXPECT_PRED_FORMAT1(::isolation::testing::internal::NoViolationsFormat, (__VA_ARGS__))
#define ISOLATION_ASSERT_NO_VIOLATIONS(...) \
  ASSERT_PRED_FORMAT1(::isolation::testing::internal::NoViolationsFormat, (__VA_ARGS__))

#endif  // ISOLATION_TESTING_VIOLATIONS_H_
