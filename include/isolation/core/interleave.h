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
// the running script pass through.  When an actor's function returns, its
// thread's store buffer is drained if a StoreBufferModel is active
// (store_buffer.h: the operation is over).  Only the actor holding the baton runs,
// so an actor must not block on something that only a parked actor can
// release (a lock it holds across its point): that script deadlocks, as the
// forced schedule would in the kernel.  Each hand-over is a semaphore
// post/wait (release/acquire), so the actors' plain accesses are ordered
// (TSan-clean).  The actors' threads come from a process-wide pool and are
// reused by later runs: an actor's thread_local state outlives its run.

#ifndef ISOLATION_INTERLEAVE_H_
#define ISOLATION_INTERLEAVE_H_

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace isolation {
namespace interleave_internal {
extern std::atomic<bool> g_active;
void Reached(const char* name);
}  // namespace interleave_internal

// Whether this build compiles the interleave points and the store-buffer
// routing in (the ISOLATION_INTERLEAVE_POINTS CMake option).
#if defined(ISOLATION_INTERLEAVE_POINTS)
inline constexpr bool kInstrumentationCompiled = true;
#else
inline constexpr bool kInstrumentationCompiled = false;
#endif
// The line an Interleaver script naming a point, an Interleaver::Explore or
// a StoreBufferModel prints (once per process, to stderr) in a build
// without the instrumentation: such a test cannot do what it says, and the
// project's ctest marks every test printing it as skipped
// (SKIP_REGULAR_EXPRESSION) instead of reporting a failure.  Use the same
// property for your own tests of the kit in such a build.
inline constexpr const char* kInstrumentationMissingMarker =
    "ISOLATION_INSTRUMENTATION_MISSING: built without ISOLATION_INTERLEAVE_POINTS; this test is "
    "skipped";
namespace interleave_internal {
// Prints kInstrumentationMissingMarker once if !kInstrumentationCompiled.
void NoteIfInstrumentationMissing();
}  // namespace interleave_internal

// Built with -DISOLATION_INTERLEAVE_POINTS (the CMake option of that name:
// OFF by default in Release/MinSizeRel, the builds users link and benchmark;
// ON in the other build types and in the test builds) the macro is a relaxed load of g_active plus
// a never-taken branch; without it, the macro compiles to nothing and the Interleaver still links
// (its scripts then can only run actors to completion). Memory ordering: relaxed suffices for
// g_active; it only selects the slow path, which synchronises through the Interleaver's mutex.
#if defined(ISOLATION_INTERLEAVE_POINTS)
#define ISOLATION_INTERLEAVE_POINT(name)                                                    \
  do {                                                                                      \
    if (__builtin_expect(                                                                   \
            ::isolation::interleave_internal::g_active.load(std::memory_order_relaxed), 0)) \
      ::isolation::interleave_internal::Reached(name);                                      \
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
    std::string until_point;  // "" = run the actor to completion; kNextPoint = see below
  };
  // until_point == kNextPoint: stop at the next point the actor reaches,
  // whatever its name; finishing instead is not an error.  A script of
  // such slices names a schedule by its actor order alone, which is how a
  // test enumerates every schedule at the granularity of the points.
  static constexpr const char* kNextPoint = "*";
  Interleaver();
  ~Interleaver();
  void Add(std::string actor, std::function<void()> fn);
  // Runs the script; may be called once per Interleaver.  Errors:
  // InvalidArgument for an unknown actor, an actor name added twice or an
  // actor without a function (nothing is run); NotFound for a
  // point never reached (the actor finished first; the script stops there);
  // FailedPrecondition for a slice of an actor that already finished, for a
  // second Run(), and for an actor left unfinished at the end (it is then run
  // to completion before returning, so no thread is leaked).  Actors added
  // but never named in the script are not run.  Every point an actor
  // reaches is logged, whether or not the script stops there.
  absl::Status Run(const std::vector<Slice>& script);
  // Points reached, in order, as "actor:point".
  const std::vector<std::string>& log() const;

  // Runs every schedule of a set of actors at the granularity of their
  // points (every interleaving of the segments between points), depth-first.
  // Each run starts from scratch: `make` must reset the state the actors act
  // on and Add() the actors (same names, same order every time) to the fresh
  // Interleaver it is given; after each run `check` gets that run's log.
  // Returns the number of distinct complete schedules.  `check` runs after
  // every run, including the runs of proper prefixes: there the actors the
  // prefix started were run to completion after it, but actors it never
  // named did not run at all.  So `check` should test invariants that hold
  // at any point, or mark what did not run (the complete schedules, where
  // every actor finished inside the prefix, are all among the runs).
  // Errors: ResourceExhausted when more than `max_runs` runs would be needed,
  // InvalidArgument when `make` adds no actor or `make` / `check` is empty.
  static absl::StatusOr<int> Explore(
      const std::function<void(Interleaver&)>& make,
      const std::function<void(const std::vector<std::string>& log)>& check, int max_runs = 20000);

  struct Impl;  // implementation detail (interleave.cc)

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace isolation

#endif  // ISOLATION_INTERLEAVE_H_
