// SPDX-License-Identifier: GPL-2.0-or-later
// Interleaver: runs actors one at a time on their own threads, handing a
// baton between the controller (the thread in Run()) and the actors.
//
// All shared state is guarded by one Mutex and one CondVar
// (isolation/core/mutex.h: a std::mutex and a std::condition_variable, which
// TSan understands; absl::Mutex would produce false reports with Debian's
// uninstrumented absl).  Only the baton is annotated ABSL_GUARDED_BY: the
// actors' fields and the log pass between threads with the baton (or are
// read after Run joined the actors), a discipline the thread-safety analysis
// cannot express.  The baton names who may
// run: kController or an actor index.  An actor only runs user code while it
// holds the baton, so user code of two actors never overlaps, and every
// hand-over is a mutex release/acquire pair, which orders the actors' plain
// memory accesses for TSan and for the C++ memory model.

#include <atomic>
#include <cstdio>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "isolation/core/interleave.h"
#include "isolation/core/mutex.h"
#include "isolation/core/store_buffer.h"

namespace isolation {
namespace interleave_internal {
std::atomic<bool> g_active{false};
}  // namespace interleave_internal

namespace {
constexpr int kController = -1;
}  // namespace

struct Interleaver::Impl {
  struct Actor {
    std::string name;
    std::function<void()> fn;
    std::thread thread;
    bool started = false;
    bool finished = false;
    std::string until_point;  // of the running slice; "" = to completion
    bool stopped_at_point = false;
  };

  Mutex mu;
  CondVar cv;
  int baton ABSL_GUARDED_BY(mu) = kController;
  std::vector<std::unique_ptr<Actor>> actors;
  std::map<std::string, int> index;
  std::vector<std::string> log;

  void ActorMain(int me);
  void PointReached(int me, const char* point);
  // Hands the baton to `who` and waits until it comes back.  `lock` holds mu.
  void RunSlice(MutexLock& lock, int who) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);
};

namespace {
// The actor the current thread runs, if any.  Set once per actor thread.
thread_local Interleaver::Impl* t_impl = nullptr;
thread_local int t_actor = kController;
// One Interleaver runs at a time in the process.
std::mutex g_run_mutex;
}  // namespace

void Interleaver::Impl::ActorMain(int me) {
  t_impl = this;
  t_actor = me;
  {
    MutexLock lock(mu);
    while (baton != me) cv.Wait(lock);
  }
  actors[static_cast<size_t>(me)]->fn();
  // The operation is over: its buffered stores become visible before the
  // baton moves on (store_buffer.h).
  store_buffer_internal::OperationEnds();
  MutexLock lock(mu);
  actors[static_cast<size_t>(me)]->finished = true;
  baton = kController;
  cv.NotifyAll();
}

void Interleaver::Impl::PointReached(int me, const char* point) {
  MutexLock lock(mu);
  Actor& a = *actors[static_cast<size_t>(me)];
  log.push_back(absl::StrCat(a.name, ":", point));
  if (a.until_point.empty()) return;
  if (a.until_point != Interleaver::kNextPoint && a.until_point != point) return;
  a.until_point.clear();
  a.stopped_at_point = true;
  baton = kController;
  cv.NotifyAll();
  while (baton != me) cv.Wait(lock);
}

void Interleaver::Impl::RunSlice(MutexLock& lock, int who) {
  Actor& a = *actors[static_cast<size_t>(who)];
  a.stopped_at_point = false;
  baton = who;
  if (!a.started) {
    a.started = true;
    a.thread = std::thread([this, who] { ActorMain(who); });
  }
  cv.NotifyAll();
  while (baton != kController) cv.Wait(lock);
}

namespace interleave_internal {
void Reached(const char* name) {
  Interleaver::Impl* impl = t_impl;
  if (impl == nullptr || t_actor == kController) return;  // not an actor thread: pass through
  impl->PointReached(t_actor, name);
}
}  // namespace interleave_internal

Interleaver::Interleaver() : impl_(std::make_unique<Impl>()) {}

Interleaver::~Interleaver() {
  // Run() always joins the threads it started; nothing is left to do.
}

void Interleaver::Add(std::string actor, std::function<void()> fn) {
  MutexLock lock(impl_->mu);
  auto a = std::make_unique<Impl::Actor>();
  a->name = actor;
  a->fn = std::move(fn);
  impl_->index[actor] = static_cast<int>(impl_->actors.size());
  impl_->actors.push_back(std::move(a));
}

namespace interleave_internal {
void NoteIfInstrumentationMissing() {
  if constexpr (!kInstrumentationCompiled) {
    static std::once_flag once;
    std::call_once(once, [] { std::fprintf(stderr, "%s\n", kInstrumentationMissingMarker); });
  }
}
}  // namespace interleave_internal

absl::Status Interleaver::Run(const std::vector<Slice>& script) {
  Impl& im = *impl_;
  for (const Slice& slice : script) {
    if (!slice.until_point.empty()) interleave_internal::NoteIfInstrumentationMissing();
  }
  // Validate the actors and the whole script before running any of it.
  for (size_t i = 0; i < im.actors.size(); ++i) {
    const Impl::Actor& a = *im.actors[i];
    if (im.index[a.name] != static_cast<int>(i)) {
      return absl::InvalidArgumentError(
          absl::StrCat("interleaver: actor \"", a.name, "\" added twice"));
    }
    if (!a.fn)
      return absl::InvalidArgumentError(
          absl::StrCat("interleaver: actor \"", a.name, "\" has no function"));
  }
  for (const Slice& s : script) {
    if (im.index.find(s.actor) == im.index.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("interleaver script: unknown actor \"", s.actor, "\""));
    }
  }
  std::lock_guard<std::mutex> run_guard(g_run_mutex);
  absl::Status status = absl::OkStatus();
  {
    MutexLock lock(im.mu);
    for (auto& a : im.actors) {
      if (a->started) {
        return absl::FailedPreconditionError("interleaver: Run() may be called only once");
      }
    }
    // Release ordering is not needed for g_active: it only enables the slow
    // path, and the slow path synchronises through `mu`.
    interleave_internal::g_active.store(true, std::memory_order_relaxed);

    for (size_t i = 0; i < script.size() && status.ok(); ++i) {
      const Slice& s = script[i];
      const int who = im.index[s.actor];
      Impl::Actor& a = *im.actors[static_cast<size_t>(who)];
      if (a.finished) {
        status = absl::FailedPreconditionError(absl::StrCat(
            "interleaver script step ", i, ": actor \"", s.actor, "\" already finished"));
        break;
      }
      a.until_point = s.until_point;
      im.RunSlice(lock, who);
      if (!s.until_point.empty() && s.until_point != Interleaver::kNextPoint &&
          !a.stopped_at_point) {
        status = absl::NotFoundError(absl::StrCat("interleaver script step ", i, ": actor \"",
                                                  s.actor, "\" finished without reaching point \"",
                                                  s.until_point, "\""));
      }
    }
    // Any actor still parked at a point is run to completion, so that no
    // thread is leaked; that is an error of the script (unless one already
    // happened, which is reported instead).
    for (auto& a : im.actors) {
      if (a->started && !a->finished) {
        if (status.ok()) {
          status = absl::FailedPreconditionError(
              absl::StrCat("interleaver script left actor \"", a->name, "\" unfinished"));
        }
        a->until_point.clear();
        im.RunSlice(lock, im.index[a->name]);
      }
    }
  }  // mu released before joining the actors
  for (auto& a : im.actors) {
    if (a->thread.joinable()) a->thread.join();
  }
  interleave_internal::g_active.store(false, std::memory_order_relaxed);
  return status;
}

const std::vector<std::string>& Interleaver::log() const { return impl_->log; }

absl::StatusOr<int> Interleaver::Explore(
    const std::function<void(Interleaver&)>& make,
    const std::function<void(const std::vector<std::string>& log)>& check, int max_runs) {
  // A schedule prefix is a sequence of actor indices; each names a slice
  // that runs that actor to its next point (or to its end).  Actor i is
  // still unfinished after the prefix iff each of its s_i slices stopped at a
  // point, i.e. it reached at least s_i points in the run (later points come
  // from the run-to-completion that ends every run).
  if (!make || !check)
    return absl::InvalidArgumentError("Interleaver::Explore: make or check is empty");
  interleave_internal::NoteIfInstrumentationMissing();
  std::vector<std::vector<int>> stack = {{}};
  int runs = 0;
  int complete = 0;
  while (!stack.empty()) {
    std::vector<int> prefix = std::move(stack.back());
    stack.pop_back();
    if (++runs > max_runs) {
      return absl::ResourceExhaustedError(
          absl::StrCat("Interleaver::Explore: more than ", max_runs, " runs"));
    }
    Interleaver il;
    make(il);
    const size_t n = il.impl_->actors.size();
    if (n == 0) return absl::InvalidArgumentError("Interleaver::Explore: make() added no actor");
    std::vector<std::string> names;
    for (const auto& a : il.impl_->actors) names.push_back(a->name);
    std::vector<Slice> script;
    std::vector<int> slices(n, 0);
    for (int i : prefix) {
      script.push_back({names[static_cast<size_t>(i)], kNextPoint});
      ++slices[static_cast<size_t>(i)];
    }
    // An unfinished actor at the end of the prefix is an expected error; a
    // bad actor set (duplicate name, no function) is the caller's.
    if (absl::Status st = il.Run(script); absl::IsInvalidArgument(st)) return st;
    std::vector<int> points(n, 0);
    for (const std::string& entry : il.log()) {
      for (size_t i = 0; i < n; ++i) {
        if (entry.size() > names[i].size() && entry.compare(0, names[i].size(), names[i]) == 0 &&
            entry[names[i].size()] == ':') {
          ++points[i];
          break;
        }
      }
    }
    check(il.log());
    bool leaf = true;
    for (size_t i = n; i-- > 0;) {  // pushed in reverse: actor 0's branch runs first
      if (slices[i] <= points[i]) {
        leaf = false;
        std::vector<int> child = prefix;
        child.push_back(static_cast<int>(i));
        stack.push_back(std::move(child));
      }
    }
    if (leaf) ++complete;
  }
  return complete;
}

}  // namespace isolation
