// SPDX-License-Identifier: GPL-2.0-or-later
// -----------------------------------------------------------------------------
// testing/status_matchers.h
// -----------------------------------------------------------------------------
//
// GoogleTest helpers for absl::Status / absl::StatusOr, part of the installed
// conformance kit (`isolation::testing`).  The macros carry the ISOLATION_
// prefix so that they cannot collide with another library's ASSERT_OK:
//
//   ISOLATION_EXPECT_OK(expr);  ISOLATION_ASSERT_OK(expr) << "context";
//   ISOLATION_ASSERT_OK_AND_ASSIGN(auto x, MakeX());   // unwraps or fails
//   EXPECT_THAT(s, IsOk());
//   EXPECT_THAT(MakeX(), IsOkAndHolds(Gt(3)));
//   EXPECT_THAT(s, StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("1-x")));
//
// `expr` is a Status or a StatusOr.  The short names EXPECT_OK, ASSERT_OK and
// ASSERT_OK_AND_ASSIGN are defined only when ISOLATION_TESTING_SHORT_STATUS_MACROS
// is defined before the first include of this header, and then only where no
// other header has defined them already.
//
// Kernel counterpart: none.  Thread-safety: as GoogleTest's assertions.

#ifndef ISOLATION_TESTING_STATUS_MATCHERS_H_
#define ISOLATION_TESTING_STATUS_MATCHERS_H_

#include <ostream>
#include <string>
#include <string_view>
#include <type_traits>
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
  StatusIsMatcher(::testing::Matcher<absl::StatusCode> code,
                  ::testing::Matcher<const std::string&> message)
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

// IsOkAndHolds for one StatusOr type: OK, and the value matches `inner`.
template <typename StatusOrRef>
class IsOkAndHoldsImpl : public ::testing::MatcherInterface<StatusOrRef> {
 public:
  using Value = typename std::remove_cv_t<std::remove_reference_t<StatusOrRef>>::value_type;

  template <typename InnerMatcher>
  explicit IsOkAndHoldsImpl(InnerMatcher&& inner)
      : inner_(::testing::SafeMatcherCast<const Value&>(std::forward<InnerMatcher>(inner))) {}

  void DescribeTo(std::ostream* os) const override {
    *os << "is OK and has a value that ";
    inner_.DescribeTo(os);
  }
  void DescribeNegationTo(std::ostream* os) const override {
    *os << "is not OK or has a value that ";
    inner_.DescribeNegationTo(os);
  }
  bool MatchAndExplain(StatusOrRef actual,
                       ::testing::MatchResultListener* listener) const override {
    if (!actual.ok()) {
      *listener << "whose status is " << actual.status();
      return false;
    }
    ::testing::StringMatchResultListener inner_listener;
    const bool matches = inner_.MatchAndExplain(*actual, &inner_listener);
    *listener << "whose value " << ::testing::PrintToString(*actual);
    if (!inner_listener.str().empty()) *listener << ", " << inner_listener.str();
    return matches;
  }

 private:
  ::testing::Matcher<const Value&> inner_;
};

template <typename InnerMatcher>
class IsOkAndHoldsMatcher {
 public:
  explicit IsOkAndHoldsMatcher(InnerMatcher inner) : inner_(std::move(inner)) {}
  template <typename StatusOrType>
  operator ::testing::Matcher<StatusOrType>() const {  // NOLINT(google-explicit-constructor)
    return ::testing::Matcher<StatusOrType>(new IsOkAndHoldsImpl<const StatusOrType&>(inner_));
  }

 private:
  InnerMatcher inner_;
};

// The failure text of the OK assertions: the expression (without the
// parentheses the macros add) and its status.
template <typename T>
::testing::AssertionResult IsOkFormat(const char* expr_text, const T& value) {
  const absl::Status& status = GetStatus(value);
  if (status.ok()) return ::testing::AssertionSuccess();
  std::string_view text(expr_text);
  if (text.size() >= 2 && text.front() == '(' && text.back() == ')')
    text = text.substr(1, text.size() - 2);
  return ::testing::AssertionFailure() << text << " is not OK: " << status;
}
template <typename T>
::testing::AssertionResult IsOkToAssignFormat(const char*, const char*, const char* rexpr_text,
                                              const T& value) {
  return IsOkFormat(rexpr_text, value);
}

}  // namespace internal

// StatusIs(code) / StatusIs(code, message_matcher).
inline ::testing::PolymorphicMatcher<internal::StatusIsMatcher> StatusIs(
    ::testing::Matcher<absl::StatusCode> code,
    ::testing::Matcher<const std::string&> message = ::testing::_) {
  return ::testing::MakePolymorphicMatcher(
      internal::StatusIsMatcher(std::move(code), std::move(message)));
}

// IsOk(): the status (or the StatusOr's status) is OK.
inline ::testing::PolymorphicMatcher<internal::StatusIsMatcher> IsOk() {
  return StatusIs(absl::StatusCode::kOk);
}

// IsOkAndHolds(m): a StatusOr that is OK and whose value matches `m` (a
// matcher or a value); on error the failure shows the status.
template <typename InnerMatcher>
internal::IsOkAndHoldsMatcher<std::decay_t<InnerMatcher>> IsOkAndHolds(InnerMatcher&& inner) {
  return internal::IsOkAndHoldsMatcher<std::decay_t<InnerMatcher>>(
      std::forward<InnerMatcher>(inner));
}

}  // namespace isolation::testing

#define ISOLATION_TESTING_CONCAT_INNER_(a, b) a##b
#define ISOLATION_TESTING_CONCAT_(a, b) ISOLATION_TESTING_CONCAT_INNER_(a, b)

// ISOLATION_EXPECT_OK(expr) / ISOLATION_ASSERT_OK(expr): `expr` (a Status or
// StatusOr) is OK; the failure names the expression and its status.  Both
// accept a `<< message`.
#define ISOLATION_EXPECT_OK(...) \
  EXPECT_PRED_FORMAT1(::isolation::testing::internal::IsOkFormat, (__VA_ARGS__))
#define ISOLATION_ASSERT_OK(...) \
  ASSERT_PRED_FORMAT1(::isolation::testing::internal::IsOkFormat, (__VA_ARGS__))

// ISOLATION_ASSERT_OK_AND_ASSIGN(lhs, rexpr): evaluates `rexpr` (a StatusOr)
// once; on error fails the current test and returns from it, the failure
// naming `rexpr` and its status; else moves the value into `lhs`, which may be
// a declaration (`auto x`) or an existing variable.  `rexpr` may contain
// commas (braced initialisers); `lhs` may not.
#define ISOLATION_ASSERT_OK_AND_ASSIGN(lhs, ...) \
  ISOLATION_TESTING_ASSERT_OK_AND_ASSIGN_IMPL_(  \
      ISOLATION_TESTING_CONCAT_(isolation_status_or_, __LINE__), lhs, __VA_ARGS__)
#define ISOLATION_TESTING_ASSERT_OK_AND_ASSIGN_IMPL_(tmp, lhs, ...)                           \
  auto tmp = (__VA_ARGS__);                                                                   \
  ASSERT_PRED_FORMAT2(::isolation::testing::internal::IsOkToAssignFormat, #__VA_ARGS__, tmp); \
  lhs = std::move(tmp).value()

#ifdef ISOLATION_TESTING_SHORT_STATUS_MACROS
#ifndef EXPECT_OK
#define EXPECT_OK(...) ISOLATION_EXPECT_OK(__VA_ARGS__)
#endif
#ifndef ASSERT_OK
#define ASSERT_OK(...) ISOLATION_ASSERT_OK(__VA_ARGS__)
#endif
#ifndef ASSERT_OK_AND_ASSIGN
#define ASSERT_OK_AND_ASSIGN(lhs, ...) ISOLATION_ASSERT_OK_AND_ASSIGN(lhs, __VA_ARGS__)
#endif
#endif  // ISOLATION_TESTING_SHORT_STATUS_MACROS

#endif  // ISOLATION_TESTING_STATUS_MATCHERS_H_
