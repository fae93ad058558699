// SPDX-License-Identifier: GPL-2.0-or-later
// -----------------------------------------------------------------------------
// status_macros.h
// -----------------------------------------------------------------------------
//
// RETURN_IF_ERROR / ASSIGN_OR_RETURN for absl::Status, which Abseil 20220623
// does not provide publicly.  Thread safety: macros only.

#ifndef ISOLATION_STATUS_MACROS_H_
#define ISOLATION_STATUS_MACROS_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define ISOLATION_STATUS_CONCAT_INNER_(a, b) a##b
#define ISOLATION_STATUS_CONCAT_(a, b) ISOLATION_STATUS_CONCAT_INNER_(a, b)

// Evaluates `expr` (an absl::Status); returns it from the enclosing function
// if it is not OK.
#define ISOLATION_RETURN_IF_ERROR(expr)                    \
  do {                                                     \
    ::absl::Status isolation_status_ = (expr);             \
    if (!isolation_status_.ok()) return isolation_status_; \
  } while (0)

// `lhs` = value of the absl::StatusOr `rexpr`, or return its status.
#define ISOLATION_ASSIGN_OR_RETURN(lhs, rexpr)                                                   \
  ISOLATION_ASSIGN_OR_RETURN_IMPL_(ISOLATION_STATUS_CONCAT_(isolation_statusor_, __LINE__), lhs, \
                                   rexpr)
#define ISOLATION_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, rexpr) \
  auto tmp = (rexpr);                                     \
  if (!tmp.ok()) return tmp.status();                     \
  lhs = std::move(tmp).value()

#endif  // ISOLATION_STATUS_MACROS_H_
