// SPDX-License-Identifier: GPL-2.0-or-later
// The idle_select race suite (IdleSelectRaceConformance): forced
// interleavings of two wakeups (S14), the lost-wakeup handshake of claim-style
// selectors on the store-buffer model (S16, I11), and real threads racing for
// one idle CPU (I5).  Labels are those of docs/idle_select.md.

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "isolation/core/fence.h"
#include "isolation/core/interleave.h"
#include "isolation/core/store_buffer.h"
#include "isolation/idle_select/selector.h"
#include "isolation/testing/idle_select.h"
#include "testing/idle_select_checks.h"

namespace isolation::testing::idle_select_conformance {
namespace {

int IndexOf(const std::vector<std::string>& log, const std::string& entry) {
  for (size_t i = 0; i < log.size(); ++i) {
    if (log[i] == entry) return static_cast<int>(i);
  }
  return -1;
}

// S14 Stacking race: one idle CPU c = 7 of 16, two wakers, every interleaving
// of probe and enqueue (and of any interleave point inside the selector).
// Scan style: stacking both wakees on c is allowed, but a waker that probes
// after the other's enqueue (ttwu_pending set) must not choose c.  Claim
// style: exactly one claim of c succeeds in every interleaving.
Violations CheckS14(const std::string& sel) {
  Violations v;
  constexpr int kIdle = 7;
  std::unique_ptr<is::IdleState> st;
  is::Selection result[2];
  bool ran[2] = {false, false};
  auto make = [&](Interleaver& il) {
    st = StateOrViolation(sel, is::IdleTopology::Uniform(1, 16), {}, v);
    if (st == nullptr) return;
    for (int c = 0; c < 16; ++c) MakeBusySettled(*st, c);
    MakeIdle(*st, kIdle);
    (void)st->SetBudget(0, 16);
    for (int w = 0; w < 2; ++w) {
      result[w] = is::Selection();
      ran[w] = false;
      il.Add(absl::StrCat("w", w), [&, w] {
        ran[w] = true;
        ISOLATION_INTERLEAVE_POINT("kit.idle_select.before_probe");
        is::WakeTask t{.prev_cpu = w};
        result[w] = st->Select(t, {.target = w, .waker_cpu = w});
        ISOLATION_INTERLEAVE_POINT("kit.idle_select.after_probe");
        // ttwu_queue_wakelist(): the chosen CPU has a wakeup in flight (a
        // claim-style selector's claim already took the idle period).
        if (result[w].cpu == kIdle && !result[w].claimed) st->SetWakePending(kIdle, true);
        ISOLATION_INTERLEAVE_POINT("kit.idle_select.after_enqueue");
      });
    }
  };
  bool claims = false;
  auto check = [&](const std::vector<std::string>& log) {
    if (st == nullptr || v.size() >= 5) return;
    claims = st->selector().traits().claims_cpus;
    if (claims) {
      int won = 0;
      for (int w = 0; w < 2; ++w) won += result[w].claimed && result[w].cpu == kIdle ? 1 : 0;
      for (int w = 0; w < 2; ++w) {
        if (result[w].claimed && result[w].cpu != kIdle) {
          v.push_back(absl::StrCat("S14: w", w, " claimed busy cpu ", result[w].cpu));
        }
      }
      if (won > 1 || (won == 0 && (ran[0] || ran[1]))) {
        v.push_back(absl::StrCat("S14/I5: ", won, " claims of the idle cpu in schedule ",
                                 absl::StrJoin(log, " ")));
      }
      return;
    }
    for (int w = 0; w < 2; ++w) {
      const int other = 1 - w;
      const int enq = IndexOf(log, absl::StrCat("w", other, ":kit.idle_select.after_enqueue"));
      const int probe = IndexOf(log, absl::StrCat("w", w, ":kit.idle_select.before_probe"));
      if (!ran[w] || enq < 0 || probe < 0 || enq > probe) continue;
      if (result[other].cpu == kIdle && result[w].cpu == kIdle && result[w].idle_found()) {
        v.push_back(absl::StrCat("S14: w", w, " chose cpu ", kIdle, " after w", other,
                                 "'s enqueue there (ttwu_pending): ", absl::StrJoin(log, " ")));
      }
    }
  };
  absl::StatusOr<int> runs = Interleaver::Explore(make, check);
  if (!runs.ok()) v.push_back("S14: " + runs.status().ToString());
  return v;
}

// The S16 handshake (docs/idle_select.md, "Memory ordering"): the idle side publishes its idle bit
// (IdleEnter), [fence], reads the shared queue; the waker queues a task,
// [fence], looks for an idle CPU (Select).  Lost wakeup: the idle side saw an
// empty queue and the waker did not get the idle CPU.  128 CPUs, the idle
// CPU 5 in another mask word than prev 100 and the waker 70.
absl::StatusOr<bool> Handshake(const std::string& sel, bool idle_fence, bool waker_fence,
                               Violations& v) {
  constexpr int kIdle = 5;
  struct Run {
    std::unique_ptr<is::IdleState> st;
    std::atomic<int> queue{0};
    int idle_saw = -1;
    is::Selection woken;
    bool idle_done = false, waker_done = false;
  };
  auto run = std::make_unique<Run>();
  bool lost = false;
  StoreBufferModel model;
  auto make = [&](Interleaver& il) {
    run = std::make_unique<Run>();
    run->st = StateOrViolation(sel, is::IdleTopology::Uniform(2, 64), {}, v);
    if (run->st == nullptr) return;
    for (int c = 0; c < 128; ++c) MakeBusySettled(*run->st, c);
    model.DrainAll();  // setup is over: everything visible
    Run* r = run.get();
    il.Add("idle", [r, idle_fence] {
      MakeIdle(*r->st, kIdle);  // do_idle(): the selector publishes the idle bit
      if (idle_fence) {
        SeqCstFence();  // smp_mb() (core/fence.h: TSan-safe)
        store_buffer::OnFullFence();
      }
      ISOLATION_INTERLEAVE_POINT("kit.idle_select.s16.published");
      r->idle_saw = store_buffer::Load(r->queue, std::memory_order_relaxed);
      ISOLATION_INTERLEAVE_POINT("kit.idle_select.s16.checked");
      r->idle_done = true;
    });
    il.Add("waker", [r, waker_fence] {
      store_buffer::Store(r->queue, 1, std::memory_order_relaxed);  // the task is queued
      if (waker_fence) {
        SeqCstFence();  // smp_mb() (core/fence.h: TSan-safe)
        store_buffer::OnFullFence();
      }
      ISOLATION_INTERLEAVE_POINT("kit.idle_select.s16.queued");
      is::WakeTask t{.prev_cpu = 100};
      r->woken = r->st->Select(t, {.target = 100, .waker_cpu = 70});
      ISOLATION_INTERLEAVE_POINT("kit.idle_select.s16.selected");
      r->waker_done = true;
    });
  };
  auto check = [&](const std::vector<std::string>&) {
    if (run->st == nullptr || !run->idle_done || !run->waker_done) return;  // a prefix
    if (run->idle_saw == 0 && run->woken.cpu != kIdle) lost = true;
  };
  absl::StatusOr<int> runs = Interleaver::Explore(make, check);
  if (!runs.ok()) return runs.status();
  return lost;
}

// S16 / I11: with both fences no interleaving loses the wakeup.
Violations CheckS16(const std::string& sel) {
  Violations v;
  absl::StatusOr<bool> lost = Handshake(sel, true, true, v);
  if (!lost.ok()) {
    v.push_back("S16: " + lost.status().ToString());
  } else if (*lost) {
    v.push_back(
        "S16/I11: a lost wakeup is reachable with both fences (the idle bit is not visible to a "
        "waker "
        "after the idle side's fence, or Select does not look at it)");
  }
  return v;
}

// I5 Unique claim with concurrent real threads: one idle CPU per epoch, four
// claimers, exactly one winner per idle period.
Violations CheckI5(const std::string& sel) {
  Violations v;
  auto st = StateOrViolation(sel, is::IdleTopology::Uniform(2, 4, 1, 2), {}, v);
  if (st == nullptr) return v;
  for (int c = 0; c < 8; ++c) MakeBusy(*st, c);
  constexpr int kThreads = 4;
  constexpr int kEpochs = 400;
  std::mutex mu;
  std::condition_variable cv;
  int epoch = -1;
  int arrived = 0;
  std::vector<int> per_epoch(kEpochs, 0);
  std::atomic<int> idle_cpu{0};
  std::atomic<int> busy_claims{0};
  auto worker = [&](int id) {
    for (int e = 0; e < kEpochs; ++e) {
      {
        std::unique_lock<std::mutex> lock(mu);
        cv.wait(lock, [&] { return epoch >= e; });
      }
      is::WakeTask t{.prev_cpu = id % 8};
      const is::Selection s = st->Select(t, {.target = id % 8});
      if (s.claimed && s.cpu != idle_cpu.load()) busy_claims.fetch_add(1);
      {
        std::lock_guard<std::mutex> lock(mu);
        if (s.claimed) ++per_epoch[static_cast<size_t>(e)];
        ++arrived;
      }
      cv.notify_all();
    }
  };
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) threads.emplace_back(worker, i);
  for (int e = 0; e < kEpochs; ++e) {
    const int c = e % 8;
    idle_cpu.store(c);
    MakeIdle(*st, c);  // a new idle period on CPU c
    {
      std::lock_guard<std::mutex> lock(mu);
      arrived = 0;
      epoch = e;
    }
    cv.notify_all();
    {
      std::unique_lock<std::mutex> lock(mu);
      cv.wait(lock, [&] { return arrived == kThreads; });
    }
    MakeBusy(*st, c);  // the winner's task runs there
  }
  for (auto& t : threads) t.join();
  if (busy_claims.load() > 0)
    v.push_back(absl::StrCat("I5: ", busy_claims.load(), " claims of a busy CPU"));
  for (int e = 0; e < kEpochs && v.size() < 5; ++e) {
    if (per_epoch[static_cast<size_t>(e)] != 1) {
      v.push_back(
          absl::StrCat("I5: epoch ", e, ": ", per_epoch[static_cast<size_t>(e)], " winners"));
    }
  }
  return v;
}

}  // namespace

absl::StatusOr<bool> LostWakeupReachable(std::string_view selector, bool idle_fence,
                                         bool waker_fence) {
  Violations v;
  absl::StatusOr<bool> lost = Handshake(std::string(selector), idle_fence, waker_fence, v);
  if (!v.empty()) return absl::FailedPreconditionError(v.front());
  return lost;
}

const std::vector<CheckImpl>& RaceChecks() {
  static const auto* checks = new std::vector<CheckImpl>{
      {"S14_TwoWakersInterleaved", "IdleSelectRaceConformance",
       "every interleaving of two wakeups: no choice of a CPU with a wakeup in flight; one claim "
       "per idle period",
       &Always, &CheckS14, "every interleaving of two wakeups (Interleaver), 16-CPU 1-LLC machine"},
      {"S16_HandshakeWithFences", "IdleSelectRaceConformance",
       "store-buffer model: with both fences the idle/waker handshake never loses a wakeup",
       &ClaimStyleOnly, &CheckS16,
       "every interleaving of the handshake on the store-buffer model, 128-CPU 2-LLC machine"},
      {"I5_UniqueClaimThreads", "IdleSelectRaceConformance",
       "real threads: exactly one claim per idle period", &ClaimStyleOnly, &CheckI5,
       "400 epochs x 4 real threads, 8-CPU 2-LLC 2-node machine"},
  };
  return *checks;
}

int RaceAnchor() { return 2; }

}  // namespace isolation::testing::idle_select_conformance

using ::isolation::testing::idle_select_conformance::RunAsTest;

GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(IdleSelectRaceConformance);

TEST_P(IdleSelectRaceConformance, S14_TwoWakersInterleaved) {
  RunAsTest("S14_TwoWakersInterleaved", GetParam());
}
TEST_P(IdleSelectRaceConformance, S16_HandshakeWithFences) {
  RunAsTest("S16_HandshakeWithFences", GetParam());
}
TEST_P(IdleSelectRaceConformance, I5_UniqueClaimThreads) {
  RunAsTest("I5_UniqueClaimThreads", GetParam());
}
