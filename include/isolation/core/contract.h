// SPDX-License-Identifier: GPL-2.0-or-later
// -----------------------------------------------------------------------------
// contract.h
// -----------------------------------------------------------------------------
//
// Checks of the caller's contract on hot entry points.  The mechanisms'
// per-event entry points (a context switch, a tick, a wakeup selection, a
// counter update, a timer-hierarchy activation) keep the kernel's contract:
// the caller passes a valid CPU, task or index, and the entry point does not
// pay for checking it.  Each such precondition is written in the header as a
// REQUIRES line and checked in the implementation with
//
//     ISOLATION_CONTRACT(cpu >= 0 && cpu < num_cpus_, "cpu %d outside [0, %d)", cpu, num_cpus_);
//
// The check is compiled in when any of these holds:
//   - NDEBUG is not defined (Debug builds);
//   - a sanitizer build (AddressSanitizer or ThreadSanitizer detected from
//     the compiler's macros);
//   - ISOLATION_HARDENED is defined (CMake option ISOLATION_HARDENED, which
//     adds the definition PUBLIC to the library targets; the project's own
//     test build, tools/bootstrap.sh test, turns it on).
// Otherwise (Release / RelWithDebInfo without the option) the macro expands to
// a discarded `if (false && ...)`: no code, no branch, no cost on the hot
// paths the benchmarks measure.  A violation prints
//     isolation: contract violated at lib/x.cc:123: <condition>: <message>
// to stderr and calls std::abort(), as ABSL_HARDENING_ASSERT does: misuse of a
// hot entry point never runs on into an out-of-bounds access, a hang or a
// silent overwrite where the checks are on.
//
// Everything that is not a hot entry point (constructors, factories, setup,
// hotplug, observers, snapshots) validates always and returns absl::Status
// or a documented safe value instead; see docs/core.md, "Contracts and
// errors".
//
// Kernel counterpart: none directly; the kernel's equivalent is the absence of
// checks on hot paths plus WARN_ON/BUG_ON under debug options
// (CONFIG_DEBUG_*, lockdep).
//
// Thread safety: the macro may be used from any thread; a violation aborts
// the process.

#ifndef ISOLATION_CONTRACT_H_
#define ISOLATION_CONTRACT_H_

#include <string>

#include "absl/strings/str_format.h"

#if defined(__has_feature)
#define ISOLATION_INTERNAL_HAS_FEATURE(x) __has_feature(x)
#else
#define ISOLATION_INTERNAL_HAS_FEATURE(x) 0
#endif

#if defined(ISOLATION_HARDENED) || !defined(NDEBUG) || defined(__SANITIZE_ADDRESS__) || \
    defined(__SANITIZE_THREAD__) || defined(ISOLATION_TSAN) ||                          \
    ISOLATION_INTERNAL_HAS_FEATURE(address_sanitizer) ||                                \
    ISOLATION_INTERNAL_HAS_FEATURE(thread_sanitizer)
#define ISOLATION_CONTRACTS_ENABLED 1
#else
#define ISOLATION_CONTRACTS_ENABLED 0
#endif

namespace isolation {

// Whether the checks are compiled into the code including this header.
inline constexpr bool kContractChecksCompiledIn = ISOLATION_CONTRACTS_ENABLED != 0;

// Whether the checks are compiled into the library itself (lib/core/contract.cc
// is built with the library's flags).  Tests of the checks ask this, not
// kContractChecksCompiledIn, so that a test built with other flags than the
// library still knows whether a violation will abort.
bool ContractChecksActive();

namespace contract_internal {
// Prints the violation and aborts.  Out of line and cold: the hot path holds
// only the compare and a never-taken branch.
[[noreturn]] void Fail(const char* file, int line, const char* condition,
                       const std::string& message);
}  // namespace contract_internal

}  // namespace isolation

#if ISOLATION_CONTRACTS_ENABLED
#define ISOLATION_CONTRACT(cond, ...)                                     \
  do {                                                                    \
    if (__builtin_expect(!(cond), 0)) {                                   \
      ::isolation::contract_internal::Fail(__FILE__, __LINE__, #cond,     \
                                           absl::StrFormat(__VA_ARGS__)); \
    }                                                                     \
  } while (0)
#else
// Discarded: the condition and arguments are type-checked (and count as used)
// but never evaluated.
#define ISOLATION_CONTRACT(cond, ...)                         \
  do {                                                        \
    if (false && !(cond)) (void)absl::StrFormat(__VA_ARGS__); \
  } while (0)
#endif

#endif  // ISOLATION_CONTRACT_H_
