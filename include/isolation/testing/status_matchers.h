// SPDX-License-Identifier: GPL-2.0-or-later
// -----------------------------------------------------------------------------
// testing/status_matchers.h
// -----------------------------------------------------------------------------
//
// GoogleTest helpers for absl::Status / absl::StatusOr, part of the installed
// conformance kit (`isolation::testing`):
//
//   EXPECT_OK(expr);  ASSERT_OK(expr);            // expr is a Status or StatusOr
//   ASSERT_OK_AND_ASSIGN(auto x, MakeX());        // unwraps a StatusOr or fails
//   EXPECT_THAT(s, IsOk());
//   EXPECT_THAT(s, StatusIs(absl::StatusCode::kInvalidArgument));
//   EXPECT_THAT(s, StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("1-x")));
//
// Kernel counterpart: none.  Thread-safety: as GoogleTest's assertions.

#ifndef ISOLATION_TESTING_STATUS_MATCHERS_H_
#define ISOLATION_TESTING_STATUS_MATCHERS_H_

#include <ostream>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace isolation::testing {
namespace internal {

inline const absl::Status& GetStatus(const absl::Status& status) { return status; }
template <typename T>
const absl::Status& GetStatus(const absl::StatusOr<T>& status_or) {
  return status_or.status();
}

// Matches a Status or StatusOr whose code and message match the inner matchers.
class StatusIsMatcher {
 public:
  StatusIsMatcher(::testing::Matcher<absl::StatusCode> code, ::testing::Matcher<const std::string&> message)
      : code_(std::move(code)), message_(std::move(message)) {}

  template <typename T>
  bool MatchAndExplain(const T& value, ::testing::MatchResultListener* listener) const {
    const absl::Status& status = GetStatus(value);
    *listener << "whose status is " << status;
    return code_.Matches(status.code()) && message_.Matches(std::string(status.message()));
  }
  void DescribeTo(std::ostream* os) const {
    *os << "has a status code that ";
    code_.DescribeTo(os);
    *os << " and a message that ";
    message_.DescribeTo(os);
  }
  void DescribeNegationTo(std::ostream* os) const {
    *os << "does not have a status code that ";
    code_.DescribeTo(os);
    *os << " or a message that ";
    message_.DescribeTo(os);
  }

 private:
  ::testing::Matcher<absl::StatusCode> code_;
  ::testing::Matcher<const std::string&> message_;
};

}  // namespace internal

// StatusIs(code) / StatusIs(code, message_matcher).
inline ::testing::PolymorphicMatcher<internal::StatusIsMatcher> StatusIs(
    ::testing::Matcher<absl::StatusCode> code,
    ::testing::Matcher<const std::string&> message = ::testing::_) {
  return ::testing::MakePolymorphicMatcher(internal::StatusIsMatcher(std::move(code), std::move(message)));
}

// IsOk(): the status (or the StatusOr's status) is OK.
inline ::testing::PolymorphicMatcher<internal::StatusIsMatcher> IsOk() {
  return StatusIs(absl::StatusCode::kOk);
}

}  // namespace isolation::testing

#define ISOLATION_TESTING_CONCAT_INNER_(a, b) a##b
#define ISOLATION_TESTING_CONCAT_(a, b) ISOLATION_TESTING_CONCAT_INNER_(a, b)

#define EXPECT_OK(expr) EXPECT_THAT((expr), ::isolation::testing::IsOk())
#define ASSERT_OK(expr) ASSERT_THAT((expr), ::isolation::testing::IsOk())

// ASSERT_OK_AND_ASSIGN(lhs, rexpr): evaluates `rexpr` (a StatusOr) once; on
// error fails the current test (return from it), else moves the value into
// `lhs`, which may be a declaration (`auto x`) or an existing variable.
#define ASSERT_OK_AND_ASSIGN(lhs, rexpr) \
  ISOLATION_TESTING_ASSERT_OK_AND_ASSIGN_IMPL_(ISOLATION_TESTING_CONCAT_(status_or_, __LINE__), lhs, rexpr)
#define ISOLATION_TESTING_ASSERT_OK_AND_ASSIGN_IMPL_(tmp, lhs, rexpr) \
  auto tmp = (rexpr);                                                 \
  ASSERT_TRUE(tmp.ok()) << #rexpr << ": " << tmp.status();            \
  lhs = std::move(tmp).value()

#endif  // ISOLATION_TESTING_STATUS_MATCHERS_H_
