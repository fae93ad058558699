// SPDX-License-Identifier: GPL-2.0-or-later
// The replay driver delivers a recording's events to the hooks in the order
// and form replay_driver.h states, runs the adapters' work in the
// recording's time, and refuses what only a closed loop can do.

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "isolation/core/isolation_config.h"
#include "isolation/core/topology.h"
#include "isolation/replay/readers.h"
#include "isolation/replay/replay_driver.h"
#include "isolation/testing/status_matchers.h"

namespace isolation::replay {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Logs every hook as a short line.
class Spy final : public Hooks {
 public:
  explicit Spy(int select_answer = -1) : answer_(select_answer) {}
  void OnStart(Driver& d) override {
    driver = &d;
    log.push_back("start");
  }
  void OnTick(CpuContext& ctx, TaskId curr) override {
    log.push_back(absl::StrCat("tick ", ctx.cpu(), " ", curr));
  }
  void OnIdleEnter(int cpu, Nanos) override { log.push_back(absl::StrCat("idle_enter ", cpu)); }
  void OnIdleExit(int cpu, Nanos) override { log.push_back(absl::StrCat("idle_exit ", cpu)); }
  void OnTickStop(CpuContext& ctx) override {
    log.push_back(absl::StrCat("tick_stop ", ctx.cpu()));
  }
  void OnTickRestart(CpuContext& ctx) override {
    log.push_back(absl::StrCat("tick_restart ", ctx.cpu()));
  }
  void OnContextSwitch(int cpu, TaskId prev, TaskId next, Nanos) override {
    log.push_back(absl::StrCat("switch ", cpu, " ", prev, "->", next));
  }
  void OnReturnToUser(CpuContext& ctx, TaskId task) override {
    log.push_back(absl::StrCat("rtu ", ctx.cpu(), " ", task));
  }
  void OnTaskFork(TaskId parent, TaskId child, int group, Nanos) override {
    log.push_back(absl::StrCat("fork ", parent, "->", child, " mm", group));
  }
  void OnTaskExit(int cpu, TaskId task, Nanos) override {
    log.push_back(absl::StrCat("exit ", cpu, " ", task));
  }
  void OnMigrate(TaskId task, int from, int to, Nanos) override {
    log.push_back(absl::StrCat("migrate ", task, " ", from, "->", to));
  }
  int SelectTaskCpu(TaskId task, int prev, int waker, Nanos) override {
    log.push_back(absl::StrCat("select ", task, " prev ", prev, " waker ", waker));
    return answer_;
  }
  void OnWakeEnqueue(TaskId task, int cpu, Nanos) override {
    log.push_back(absl::StrCat("enqueue ", task, " ", cpu));
  }
  std::vector<std::string> log;
  Driver* driver = nullptr;

 private:
  int answer_;
};

std::unique_ptr<ReplayDriver> MakeDriver(int cpus, ReplayDriverOptions o = {}) {
  auto topo =
      Topology::FromSynthetic(absl::StrCat("package:1 l3cache:1 core:", cpus, " pu:1")).value();
  IsolationConfig iso(topo);
  auto d = ReplayDriver::Create(topo, iso, o).value();
  return d;
}

absl::Status Play(ReplayDriver& d, std::string_view text) {
  absl::Status s = ReadTraceText(text, "t.txt", TraceFormat::kTraceCmdReport, {}, d);
  if (!s.ok()) return s;
  return d.Finish();
}

TEST(ReplayDriver, DeliversTheScheduleInTheKernelsOrder) {
  auto d = MakeDriver(2);
  Spy spy(/*select_answer=*/1);
  d->AddHooks(&spy);
  // CPU 0 starts running pid 10 (it predates the recording), forks 11 as a
  // thread, blocks; 11 runs, wakes 10 onto CPU 1 (which starts idle).
  const std::string text = R"(cpus=2
  a-10 [000] 1.000000000: task_newtask: pid=11 comm=a clone_flags=3d0f00 oom_score_adj=0
  a-10 [000] 1.000000100: sched_process_fork: comm=a pid=10 child_comm=a child_pid=11
  a-10 [000] 1.000000200: sched_wakeup_new: comm=a pid=11 prio=120 target_cpu=000
  a-10 [000] 1.000000300: sched_switch: prev_comm=a prev_pid=10 prev_prio=120 prev_state=S ==> next_comm=a next_pid=11 next_prio=120
  a-11 [000] 1.000000400: rseq_update: cpu_id=0 node_id=0 mm_cid=1
  <idle>-0 [001] 1.000000450: tick_stop: success=1 dependency=NONE
  a-11 [000] 1.000000500: sched_waking: comm=a pid=10 prio=120 target_cpu=000
  a-11 [000] 1.000000550: sched_migrate_task: comm=a pid=10 prio=120 orig_cpu=0 dest_cpu=1
  a-11 [000] 1.000000600: sched_wakeup: comm=a pid=10 prio=120 target_cpu=001
  <idle>-0 [001] 1.000000700: sched_switch: prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=a next_pid=10 next_prio=120
  a-11 [000] 1.000000800: sched_process_exit: comm=a pid=11 prio=120 group_dead=0
  a-11 [000] 1.000000900: sched_switch: prev_comm=a prev_pid=11 prev_prio=120 prev_state=X ==> next_comm=swapper/0 next_pid=0 next_prio=120
)";
  ISOLATION_ASSERT_OK(Play(*d, text));
  // Task ids: 10 -> 0 (predates, mm 1), 11 -> 1 (thread: mm 1 too).
  EXPECT_THAT(spy.log, ElementsAre("start", "fork -1->0 mm1", "idle_exit 0", "switch 0 -1->0",
                                   "fork 0->1 mm1", "switch 0 0->1", "rtu 0 1", "idle_enter 1",
                                   "tick_stop 1", "select 0 prev 0 waker 0", "migrate 0 0->1",
                                   "enqueue 0 1", "idle_exit 1", "tick_restart 1", "switch 1 -1->0",
                                   "exit 0 1", "switch 0 1->-1", "idle_enter 0"));
  EXPECT_EQ(d->LastSelection(0), 1);
  const TaskInfo* t10 = d->Task(0);
  ASSERT_NE(t10, nullptr);
  EXPECT_TRUE(t10->predates);
  EXPECT_FALSE(t10->mm_known);
  EXPECT_EQ(d->Task(1)->mm, t10->mm);
  EXPECT_EQ(d->TaskOfPid(11), kIdleTask) << "an exited task's pid is free";
  EXPECT_EQ(d->CurrentTask(1), 0);
  EXPECT_TRUE(d->IsIdle(0));
  EXPECT_EQ(d->counters().bootstraps, 2);
  EXPECT_EQ(d->counters().resyncs, 0);
  EXPECT_EQ(d->Comm(0), "a");
}

TEST(ReplayDriver, ExecGivesANewTaskInANewMm) {
  auto d = MakeDriver(1);
  Spy spy;
  d->AddHooks(&spy);
  const std::string text = R"(cpus=1
  sh-20 [000] 1.000000000: task_newtask: pid=21 comm=sh clone_flags=1200000 oom_score_adj=0
  sh-20 [000] 1.000000100: sched_switch: prev_comm=sh prev_pid=20 prev_prio=120 prev_state=S ==> next_comm=sh next_pid=21 next_prio=120
  sh-21 [000] 1.000000200: sched_process_exec: filename=/usr/bin/true pid=21 old_pid=21
  true-21 [000] 1.000000300: rseq_update: cpu_id=0 node_id=0 mm_cid=0
)";
  ISOLATION_ASSERT_OK(Play(*d, text));
  EXPECT_THAT(spy.log, ElementsAre("start", "fork -1->0 mm1", "idle_exit 0", "switch 0 -1->0",
                                   "fork 0->1 mm2", "switch 0 0->1", "exit 0 1", "fork -1->2 mm3",
                                   "switch 0 1->2", "rtu 0 2"));
  EXPECT_TRUE(d->Task(2)->mm_known);
  EXPECT_EQ(d->TaskOfPid(21), 2);
  EXPECT_EQ(d->Comm(2), "true");
}

TEST(ReplayDriver, TickReturnsToUserUnlessItPreempts) {
  ReplayDriverOptions o;
  o.tick_preempt_window = 50'000;
  auto d = MakeDriver(1, o);
  Spy spy;
  d->AddHooks(&spy);
  const std::string text = R"(cpus=1
  a-5 [000] 1.000000000: hrtimer_expire_entry: hrtimer=0x1 now=1 function=tick_nohz_handler
  a-5 [000] 1.000010000: sched_switch: prev_comm=a prev_pid=5 prev_prio=120 prev_state=R ==> next_comm=b next_pid=6 next_prio=120
  b-6 [000] 1.004000000: hrtimer_expire_entry: hrtimer=0x1 now=1 function=tick_nohz_handler
  b-6 [000] 1.004000100: timer_expire_entry: timer=0x2 function=process_timeout now=5 baseclk=5
  b-6 [000] 1.006000000: sched_switch: prev_comm=b prev_pid=6 prev_prio=120 prev_state=S ==> next_comm=a next_pid=5 next_prio=120
  a-5 [000] 1.008000000: hrtimer_expire_entry: hrtimer=0x1 now=1 function=other_handler
)";
  ISOLATION_ASSERT_OK(Play(*d, text));
  // The first tick preempts a (dropped); b's tick returns before b blocks;
  // the last hrtimer is not the tick.
  EXPECT_THAT(spy.log, ElementsAre("start", "fork -1->0 mm1", "idle_exit 0", "switch 0 -1->0",
                                   "tick 0 0", "fork -1->1 mm2", "switch 0 0->1", "tick 0 1",
                                   "rtu 0 1", "switch 0 1->0"));
  EXPECT_EQ(d->counters().tick_returns_dropped, 1);
  EXPECT_EQ(d->Stats(0).ticks, 2);
}

TEST(ReplayDriver, ResyncsWhenAnEventShowsAnotherCurrentTask) {
  auto d = MakeDriver(1);
  Spy spy;
  d->AddHooks(&spy);
  const std::string text = R"(cpus=1
  a-5 [000] 1.000000000: rseq_update: cpu_id=0 node_id=0 mm_cid=0
  b-6 [000] 1.000001000: rseq_update: cpu_id=0 node_id=0 mm_cid=0
)";
  ISOLATION_ASSERT_OK(Play(*d, text));
  EXPECT_EQ(d->counters().resyncs, 1);
  EXPECT_EQ(d->CurrentTask(0), 1);
}

TEST(ReplayDriver, RunsAdapterWorkInTheRecordingsTime) {
  auto d = MakeDriver(2);
  struct Worker final : Hooks {
    void OnStart(Driver& drv) override {
      drv.QueueWorkOn(1, 500, [this](CpuContext& ctx) {
        ran.push_back(absl::StrCat("work ", ctx.cpu(), " @", ctx.now()));
      });
      const TimerId t = drv.ArmTimer(0, drv.Now() + 2000, [this](CpuContext& ctx) {
        ran.push_back(absl::StrCat("timer @", ctx.now()));
      });
      drv.ArmTimer(0, drv.Now() + 300,
                   [this](CpuContext& ctx) { ran.push_back(absl::StrCat("early @", ctx.now())); });
      cancelled = drv.CancelTimer(t);
    }
    std::vector<std::string> ran;
    bool cancelled = false;
  } w;
  d->AddHooks(&w);
  const std::string text = R"(cpus=2
  a-5 [000] 1.000000000: rseq_update: cpu_id=0 node_id=0 mm_cid=0
  a-5 [000] 1.000001000: rseq_update: cpu_id=0 node_id=0 mm_cid=0
)";
  ISOLATION_ASSERT_OK(Play(*d, text));
  EXPECT_TRUE(w.cancelled);
  EXPECT_THAT(w.ran, ElementsAre("early @1000000300", "work 1 @1000000500"));
  EXPECT_EQ(d->Stats(1).work_items, 1);
  EXPECT_EQ(d->Stats(0).timer_callbacks, 1);
}

TEST(ReplayDriver, RefusesClosedLoopServicesAndBadSetups) {
  auto d = MakeDriver(2);
  TaskSpec spec;
  spec.name = "x";
  EXPECT_EQ(d->Spawn(std::move(spec)).status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(d->RunFor(1).code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(d->SetCpuOnline(1, false).code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(d->SetAffinity(0, CpuMask::Full(2)).code(), absl::StatusCode::kFailedPrecondition);
  // A recording of another machine size.
  absl::Status s =
      ReadTraceText("cpus=4\n  a-5 [003] 1.000000000: rseq_update: cpu_id=3 node_id=0 mm_cid=0\n",
                    "t.txt", TraceFormat::kTraceCmdReport, {}, *d);
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("the recording has 4 CPUs, the replayed machine 2"));
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto topo, Topology::FromSynthetic("package:1 core:2 pu:1"));
  EXPECT_FALSE(ReplayDriver::Create(topo, IsolationConfig(topo), {.hz = 0}).ok());
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto other, Topology::FromSynthetic("package:1 core:3 pu:1"));
  EXPECT_FALSE(ReplayDriver::Create(topo, IsolationConfig(other)).ok());
}

TEST(ReplayDriver, BoundsLiveTasks) {
  ReplayDriverOptions o;
  o.max_live_tasks = 3;
  auto d = MakeDriver(1, o);
  std::string text = "cpus=1\n";
  for (int pid = 10; pid < 20; ++pid) {
    absl::StrAppend(&text, "  a-10 [000] 1.0000000", pid, ": task_newtask: pid=", pid + 100,
                    " comm=a clone_flags=0 oom_score_adj=0\n");
  }
  absl::Status s = Play(*d, text);
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(s.message()), HasSubstr("max_live_tasks"));
}

}  // namespace
}  // namespace isolation::replay
