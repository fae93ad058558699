// SPDX-License-Identifier: GPL-2.0-or-later
// Interleaver: runs actors one at a time on their own threads, handing a
// baton between the controller (the thread in Run()) and the actors.
//
// The baton is a set of POSIX semaphores, one per party: handing it to a
// party posts that party's semaphore, and the giver then waits on its own.
// Only the holder runs user code, so user code of two actors never
// overlaps, and every hand-over is a sem_post/sem_wait pair (release /
// acquire; TSan intercepts both), which orders the actors' plain memory
// accesses -- the log, the actors' fields, the state the actors act on --
// for TSan and for the C++ memory model.  The thread-safety analysis cannot
// express that discipline, so these fields carry no ABSL_GUARDED_BY.
//
// Why a pool and a semaphore per party: Explore runs thousands of short
// runs.  With a thread per actor per run and one condition variable
// notified to all, the kit's vmstat I7 check spent 42596 clone3 calls and
// 1.2 M futex calls (most of them wake-ups of parties the baton was not
// for) on 14200 runs -- 10 s of a Release ctest and 23 s under TSan
// (2026-12-07).  The actor threads now live in a process-wide pool and are
// reused by every run; a hand-over wakes exactly one thread.  That took
// the check to 7.3 s; the rest was the wake-ups crossing CPUs (an IPI, and
// in a guest a VM exit, for every hand-over).  Only one party runs at a
// time, so a run loses nothing by keeping all of them on the CPU the
// controller is on: Run() pins the controller there for its length (and
// restores its affinity), and each worker follows it.  1.2 s.

#include <pthread.h>
#include <sched.h>
#include <semaphore.h>

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdio>
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
#include "isolation/core/store_buffer.h"

namespace isolation {
namespace interleave_internal {
std::atomic<bool> g_active{false};
}  // namespace interleave_internal

namespace {

// A counting semaphore of the C library, which the sanitizers understand.
class Semaphore {
 public:
  Semaphore() { sem_init(&sem_, 0, 0); }
  ~Semaphore() { sem_destroy(&sem_); }
  Semaphore(const Semaphore&) = delete;
  Semaphore& operator=(const Semaphore&) = delete;
  void Post() { sem_post(&sem_); }
  void Wait() {
    while (sem_wait(&sem_) != 0 && errno == EINTR) {
    }
  }

 private:
  sem_t sem_;
};

// One thread of the pool.  It waits on `go`; a post either starts `job`
// (the worker is then an actor of the running Interleaver) or, inside a
// job, hands the baton back to that actor.
struct Worker {
  Semaphore go;
  std::function<void()> job;  // set by the controller before the first post
  int cpu = -1;               // where the job should run (-1: anywhere)
  int pinned = -1;            // where the worker's affinity now holds it
};

// Pins the calling thread to `cpu`; false when the system refuses.
bool PinSelf(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return sched_setaffinity(0, sizeof(set), &set) == 0;
}

// For the length of a Run: the controller pinned to the CPU it is on, its
// affinity restored afterwards.  cpu() is -1 when pinning is not possible
// (more CPUs than a cpu_set_t holds, a refused call): nothing is pinned.
class ControllerPin {
 public:
  ControllerPin() {
    if (sched_getaffinity(0, sizeof(saved_), &saved_) != 0) return;
    const int here = sched_getcpu();
    if (here < 0 || here >= CPU_SETSIZE || !CPU_ISSET(here, &saved_)) return;
    if (PinSelf(here)) cpu_ = here;
  }
  ~ControllerPin() {
    if (cpu_ >= 0) sched_setaffinity(0, sizeof(saved_), &saved_);
  }
  ControllerPin(const ControllerPin&) = delete;
  ControllerPin& operator=(const ControllerPin&) = delete;
  int cpu() const { return cpu_; }

 private:
  cpu_set_t saved_;
  int cpu_ = -1;
};

// The process-wide pool.  Workers are never destroyed: they wait on their
// semaphore (detached) until the process exits.  Run() takes workers
// under g_run_mutex (one Interleaver runs at a time), so the pool needs no
// lock of its own.
class WorkerPool {
 public:
  // The pool of this process: a child of fork() starts a new one (the
  // parent's threads do not exist in the child).
  static WorkerPool& Get() {
    static const bool registered = [] {
      // The fork child's pool is empty; the parent's workers are leaked.
      pthread_atfork(nullptr, nullptr, [] { current = nullptr; });
      return true;
    }();
    (void)registered;
    if (current == nullptr) current = new WorkerPool();
    return *current;
  }
  // The i-th worker (distinct workers for distinct i), created on first use.
  Worker& At(size_t i) {
    while (workers_.size() <= i) {
      workers_.push_back(std::make_unique<Worker>());
      Worker* w = workers_.back().get();
      std::thread([w] { Loop(*w); }).detach();
    }
    return *workers_[i];
  }

 private:
  static void Loop(Worker& w) {
    for (;;) {
      w.go.Wait();
      if (w.cpu >= 0 && w.cpu != w.pinned) w.pinned = PinSelf(w.cpu) ? w.cpu : -1;
      // Moved out: the controller may set the next run's job as soon as
      // this one posts the controller's baton, before job() has returned.
      std::function<void()> job = std::move(w.job);
      job();
    }
  }
  std::vector<std::unique_ptr<Worker>> workers_;
  static inline WorkerPool* current = nullptr;
};

constexpr int kController = -1;

// The controller's semaphore.  Global, not a member of the Interleaver: a
// finishing actor posts it as its last access to shared state, and the
// controller may destroy the Interleaver as soon as the post lands.
Semaphore& ControllerBaton() {
  static Semaphore* sem = new Semaphore();
  return *sem;
}

}  // namespace

struct Interleaver::Impl {
  struct Actor {
    std::string name;
    std::function<void()> fn;
    Worker* worker = nullptr;  // from the pool, when started
    bool started = false;
    bool finished = false;
    std::string until_point;  // of the running slice; "" = to completion
    bool stopped_at_point = false;
  };

  std::vector<std::unique_ptr<Actor>> actors;
  std::map<std::string, int> index;
  std::vector<std::string> log;

  void ActorMain(int me);
  void PointReached(int me, const char* point);
  // Hands the baton to `who` and waits until it comes back.
  void RunSlice(int who);

  int cpu = -1;  // the controller's, while Run() holds it pinned
};

namespace {
// The actor the current thread runs, if any: set by a pool worker for the
// length of one job.
thread_local Interleaver::Impl* t_impl = nullptr;
thread_local int t_actor = kController;
// One Interleaver runs at a time in the process.
std::mutex g_run_mutex;
}  // namespace

void Interleaver::Impl::ActorMain(int me) {
  t_impl = this;
  t_actor = me;
  Actor& a = *actors[static_cast<size_t>(me)];
  a.fn();
  // The operation is over: its buffered stores become visible before the
  // baton moves on (store_buffer.h).
  store_buffer_internal::OperationEnds();
  t_impl = nullptr;
  t_actor = kController;
  a.finished = true;
  ControllerBaton().Post();  // the last access to this Impl
}

void Interleaver::Impl::PointReached(int me, const char* point) {
  Actor& a = *actors[static_cast<size_t>(me)];
  log.push_back(absl::StrCat(a.name, ":", point));
  if (a.until_point.empty()) return;
  if (a.until_point != Interleaver::kNextPoint && a.until_point != point) return;
  a.until_point.clear();
  a.stopped_at_point = true;
  Worker& w = *a.worker;
  ControllerBaton().Post();
  w.go.Wait();
}

void Interleaver::Impl::RunSlice(int who) {
  Actor& a = *actors[static_cast<size_t>(who)];
  a.stopped_at_point = false;
  if (!a.started) {
    a.started = true;
    // Distinct actors of a run get distinct workers: index by start order.
    size_t busy = 0;
    for (const auto& other : actors) busy += (other->worker != nullptr) ? 1 : 0;
    a.worker = &WorkerPool::Get().At(busy);
    a.worker->job = [this, who] { ActorMain(who); };
    a.worker->cpu = cpu;
  }
  a.worker->go.Post();
  ControllerBaton().Wait();
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
  // Run() always runs the actors it started to completion; nothing is left to do.
}

void Interleaver::Add(std::string actor, std::function<void()> fn) {
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
  const ControllerPin pin;
  im.cpu = pin.cpu();
  for (auto& a : im.actors) {
    if (a->started) {
      return absl::FailedPreconditionError("interleaver: Run() may be called only once");
    }
  }
  // Release ordering is not needed for g_active: it only enables the slow
  // path, and the slow path synchronises through the semaphores.
  interleave_internal::g_active.store(true, std::memory_order_relaxed);
  absl::Status status = absl::OkStatus();
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
    im.RunSlice(who);
    if (!s.until_point.empty() && s.until_point != Interleaver::kNextPoint && !a.stopped_at_point) {
      status = absl::NotFoundError(absl::StrCat("interleaver script step ", i, ": actor \"",
                                                s.actor, "\" finished without reaching point \"",
                                                s.until_point, "\""));
    }
  }
  // Any actor still parked at a point is run to completion, so that no
  // worker stays inside this run; that is an error of the script (unless
  // one already happened, which is reported instead).
  for (auto& a : im.actors) {
    if (a->started && !a->finished) {
      if (status.ok()) {
        status = absl::FailedPreconditionError(
            absl::StrCat("interleaver script left actor \"", a->name, "\" unfinished"));
      }
      a->until_point.clear();
      im.RunSlice(im.index[a->name]);
    }
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
