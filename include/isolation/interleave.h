// SPDX-License-Identifier: GPL-2.0-or-later
// -----------------------------------------------------------------------------
// interleave.h
// -----------------------------------------------------------------------------
//
// Forced interleavings inside a mechanism's operation.  The kernel's race
// scenarios (a remote clear racing a context switch, two CPUs walking the
// timer hierarchy at once) depend on one operation stopping between two of
// its steps while another runs.  Mechanisms mark those steps with
//
//     ISOLATION_INTERLEAVE_POINT("mm_cid.remote_clear.after_lazy_cas");
//
// In normal builds the macro is a relaxed load of a global flag and a
// never-taken branch.  A test installs a Script: each participating actor runs
// on its own thread, but only one actor runs at a time (a baton), and the
// script says, e.g., "A runs until point P, then B runs to completion, then A
// continues".  The result is deterministic and repeatable, and runs under TSan.
//
//   Interleaver il;
//   il.Add("switch", [&] { mech.ContextSwitch(...); });
//   il.Add("clear",  [&] { mech.RemoteClear(...); });
//   il.Run({{"clear", "mm_cid.remote_clear.after_lazy_cas"},
//           {"switch", ""},          // "" = run to completion
//           {"clear", ""}});
//
// Thread safety: one Interleaver runs at a time in the process (Run holds a
// global registration); points reached by threads that are not actors of
// the running script pass through.  Only the actor holding the baton runs,
// so an actor must not block on something that only a parked actor can
// release (a lock it holds across its point): that script deadlocks, as the
// forced schedule would in the kernel.  Each hand-over is a std::mutex
// release/acquire, so the actors' plain accesses are ordered (TSan-clean).

#ifndef ISOLATION_INTERLEAVE_H_
#define ISOLATION_INTERLEAVE_H_

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"

namespace isolation {
namespace interleave_internal {
extern std::atomic<bool> g_active;
void Reached(const char* name);
}  // namespace interleave_internal

// Built with -DISOLATION_INTERLEAVE_POINTS (the CMake option of that name,
// ON by default) the macro is a relaxed load of g_active plus a never-taken
// branch; without it, the macro compiles to nothing and the Interleaver
// still links (its scripts then can only run actors to completion).
// Memory ordering: relaxed suffices for g_active; it only selects the slow
// path, which synchronises through the Interleaver's mutex.
#if defined(ISOLATION_INTERLEAVE_POINTS)
#define ISOLATION_INTERLEAVE_POINT(name)                                                 \
  do {                                                                                    \
    if (__builtin_expect(::isolation::interleave_internal::g_active.load(                 \
                             std::memory_order_relaxed),                                  \
                         0))                                                              \
      ::isolation::interleave_internal::Reached(name);                                    \
  } while (0)
#else
#define ISOLATION_INTERLEAVE_POINT(name) \
  do {                                   \
  } while (0)
#endif

class Interleaver {
 public:
  struct Slice {
    std::string actor;
    std::string until_point;  // "" = run the actor to completion
  };
  Interleaver();
  ~Interleaver();
  void Add(std::string actor, std::function<void()> fn);
  // Runs the script; may be called once per Interleaver.  Errors:
  // InvalidArgument for an unknown actor (nothing is run); NotFound for a
  // point never reached (the actor finished first; the script stops there);
  // FailedPrecondition for a slice of an actor that already finished, for a
  // second Run(), and for an actor left unfinished at the end (it is then run
  // to completion before returning, so no thread is leaked).  Actors added
  // but never named in the script are not run.  Every point an actor
  // reaches is logged, whether or not the script stops there.
  absl::Status Run(const std::vector<Slice>& script);
  // Points reached, in order, as "actor:point".
  const std::vector<std::string>& log() const;

  struct Impl;  // implementation detail (interleave.cc)

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace isolation

#endif  // ISOLATION_INTERLEAVE_H_
