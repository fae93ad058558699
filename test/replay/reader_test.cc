// SPDX-License-Identifier: GPL-2.0-or-later
// The text readers on small traces in every shape trace-cmd report and perf
// script print (lines taken from recordings on a 6.18 guest), and their
// errors on bad input.

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "isolation/replay/readers.h"
#include "isolation/replay/recording.h"
#include "isolation/testing/status_matchers.h"
#include "replay/reader_internal.h"

namespace isolation::replay {
namespace {

using ::testing::HasSubstr;

class Collect final : public EventSink {
 public:
  absl::Status OnInfo(const RecordingInfo& i) override {
    info = i;
    ++infos;
    return absl::OkStatus();
  }
  absl::Status OnEvent(const Event& e) override {
    events.push_back(e);
    return absl::OkStatus();
  }
  void OnComm(int32_t pid, std::string_view comm) override { comms[pid] = std::string(comm); }
  void OnMarker(const Event&, std::string_view text) override { markers.emplace_back(text); }
  RecordingInfo info;
  int infos = 0;
  std::vector<Event> events;
  Comms comms;
  std::vector<std::string> markers;
};

absl::Status Read(std::string_view text, TraceFormat format, Collect& out, ReadOptions options = {},
                  ReadStats* stats = nullptr) {
  return ReadTraceText(text, "test.txt", format, options, out, stats);
}

// One short scene in four printings: trace-cmd report (plugins, us),
// trace-cmd report -N -t, trace-cmd report -R -t, perf script --ns.
constexpr std::string_view kPlugin = R"(cpus=2
probe:             bash-6465  [000]  2571.231671: rseq_update:          cpu_id=0 node_id=0 mm_cid=0
probe:             bash-6465  [000]  2571.232068: sched_waking:         comm=rcu_preempt pid=15 prio=120 target_cpu=000
probe:             bash-6465  [000]  2571.233002: sched_wakeup:         rcu_preempt:15 [120] CPU:000
probe:             bash-6465  [000]  2571.233064: sched_switch:         bash:6465 [120] R ==> rcu_preempt:15 [120]
probe:      rcu_preempt-15    [000]  2571.233068: sched_switch:         rcu_preempt:15 [120] W ==> bash:6465 [120]
probe:             bash-6465  [000]  2571.236076: tmigr_handle_remote:  group=0xffff8881003d7700 lvl=0
probe:             bash-6465  [000]  2571.238097: task_newtask:         pid=6468 comm=bash clone_flags=1200000 oom_score_adj=0
probe:             bash-6465  [000]  2571.238103: sched_process_fork:   comm=bash pid=6465 child_comm=bash child_pid=6468
probe:      migration/0-18    [000]  2571.238350: sched_migrate_task:   comm=bash pid=6468 prio=120 orig_cpu=0 dest_cpu=1
probe:           <idle>-0     [000]  2571.244084: tmigr_group_set_cpu_inactive: group=0xffff8881003d7700 lvl=0 numa=0 active=2 migrator=2 parent=(nil) childmask=1
probe:           <idle>-0     [000]  2571.244085: tmigr_update_events:  child=(nil) group=0xffff8881003d7700 group_lvl=0 child_active=0 group_active=2 nextevt=2576348000000 next_expiry=2576348000000 child_evt_expiry=0 child_evtcpu=0
probe:           <idle>-0     [000]  2571.244086: tmigr_cpu_idle:       cpu=0 parent=0xffff8881003d7700 nextevt=2576348000000 wakeup=9223372036854775807
probe:           <idle>-0     [000]  2571.244090: tick_stop:            success=1 dependency=NONE
probe:      rcu_preempt-15    [000]  2571.240056: timer_start:          timer=0xffffc9000007fde8 function=process_timeout expires=4295535044 [timeout=1] bucket_expiry=4295535045 cpu=0 idx=5 flags=D|P|I
probe:           <idle>-0     [000]  2571.240047: timer_expire_entry:   timer=0xffffc9000007fde8 function=process_timeout now=4295535043 baseclk=4295535043
probe:           <idle>-0     [000]  2571.240035: hrtimer_expire_entry: hrtimer=0xffff888627c206f8 now=2571240033819 function=tick_nohz_handler/0x0
probe:     kworker/1:1H-46    [001]  2571.241947: workqueue_execute_start: work struct 0xffff8881024d5c40: function vmstat_update
probe:             bash-6465  [000]  2571.237846: print:                tracing_mark_write: isolab-recording {"version":1,"cpus":2,"release":"6.18.44-fc-v1147","hz":250}
)";

TEST(TextReader, TraceCmdPluginForm) {
  Collect c;
  ReadOptions o;
  o.max_time_skew = 10 * kNsPerMs;  // the scene's lines are not in time order
  ReadStats st;
  ISOLATION_ASSERT_OK(Read(kPlugin, TraceFormat::kTraceCmdReport, c, o, &st));
  EXPECT_EQ(c.infos, 1);
  EXPECT_EQ(c.info.num_cpus, 2);
  EXPECT_EQ(c.info.num_cpus_source, InfoSource::kFile);
  EXPECT_EQ(c.info.kernel_release, "6.18.44-fc-v1147");
  EXPECT_EQ(c.info.hz, 250);
  EXPECT_FALSE(c.info.ns_timestamps);
  ASSERT_EQ(c.events.size(), 18u);
  const Event& rseq = c.events[0];
  EXPECT_EQ(rseq.kind, EventKind::kRseqUpdate);
  EXPECT_EQ(rseq.time, 2571231671000);
  EXPECT_EQ(rseq.pid, 6465);
  EXPECT_EQ(rseq.task, 6465);
  EXPECT_EQ(rseq.cpu2, 0);
  EXPECT_EQ(rseq.value, 0);
  EXPECT_EQ(c.events[2].kind, EventKind::kWakeup);
  EXPECT_EQ(c.events[2].task, 15);
  EXPECT_EQ(c.events[2].cpu2, 0);
  EXPECT_EQ(c.events[2].prio, 120);
  const Event& sw = c.events[3];
  EXPECT_EQ(sw.kind, EventKind::kSwitch);
  EXPECT_EQ(sw.other, 6465);
  EXPECT_EQ(sw.task, 15);
  EXPECT_EQ(sw.value, kPrevStateRunnable);
  // The plugin's 'W' is 6.x's I (TASK_REPORT_IDLE).
  EXPECT_EQ(c.events[4].value, kPrevStateIdle);
  EXPECT_EQ(c.events[6].kind, EventKind::kNewTask);
  EXPECT_EQ(c.events[6].wide, 0x1200000);
  EXPECT_EQ(c.events[7].kind, EventKind::kFork);
  EXPECT_EQ(c.events[7].other, 6465);
  EXPECT_EQ(c.events[7].task, 6468);
  EXPECT_EQ(c.events[8].kind, EventKind::kMigrate);
  EXPECT_EQ(c.events[8].cpu2, 0);
  EXPECT_EQ(c.events[8].value, 1);
  const Event& grp = c.events[9];
  EXPECT_EQ(grp.kind, EventKind::kTmigrGroupInactive);
  EXPECT_EQ(grp.ptr, 0xffff8881003d7700ULL);
  EXPECT_EQ(grp.value, 1);
  EXPECT_EQ(grp.aux, 2);
  EXPECT_EQ(grp.aux2, 2);
  EXPECT_EQ(c.events[11].kind, EventKind::kTmigrCpuIdle);
  EXPECT_EQ(c.events[11].wide, 2576348000000);
  EXPECT_EQ(c.events[12].kind, EventKind::kTickStop);
  EXPECT_EQ(c.events[12].value, 1);
  const Event& ts = c.events[13];
  EXPECT_EQ(ts.kind, EventKind::kTimerStart);
  EXPECT_EQ(ts.cpu2, 0);
  EXPECT_EQ(ts.aux, 0) << "pretty-printed timer flags are not exact";
  EXPECT_EQ(static_cast<uint32_t>(ts.value) >> 22, 5u);
  // Out of order lines were clamped to their predecessor's time.
  EXPECT_EQ(ts.time, c.events[12].time);
  EXPECT_GT(st.reordered, 0);
  EXPECT_EQ(c.events[15].kind, EventKind::kTick);
  EXPECT_EQ(c.events[16].kind, EventKind::kWorkExecute);
  EXPECT_EQ(c.events[16].value, static_cast<int32_t>(WorkFunction::kVmstatUpdate));
  EXPECT_EQ(c.events[16].ptr, 0xffff8881024d5c40ULL);
  EXPECT_EQ(c.events[17].kind, EventKind::kMarker);
  ASSERT_EQ(c.markers.size(), 1u);
  EXPECT_THAT(c.markers[0], HasSubstr("isolab-recording"));
  EXPECT_EQ(c.comms[15], "rcu_preempt");
  EXPECT_EQ(c.comms[6468], "bash");
}

// The same events printed by trace-cmd report -N -t, -R -t and perf script --ns.
constexpr std::string_view kPrintFormat = R"(cpus=2
probe:             bash-6465  [000]  2571.231670981: rseq_update:          cpu_id=0 node_id=0 mm_cid=0
probe:             bash-6465  [000]  2571.232068206: sched_waking:         comm=rcu_preempt pid=15 prio=120 target_cpu=000
probe:             bash-6465  [000]  2571.233002375: sched_wakeup:         comm=rcu_preempt pid=15 prio=120 target_cpu=000
probe:             bash-6465  [000]  2571.233064252: sched_switch:         prev_comm=bash prev_pid=6465 prev_prio=120 prev_state=R+ ==> next_comm=rcu_preempt next_pid=15 next_prio=120
probe:      rcu_preempt-15    [000]  2571.233068062: sched_switch:         prev_comm=rcu_preempt prev_pid=15 prev_prio=120 prev_state=I ==> next_comm=bash next_pid=6465 next_prio=120
probe:             bash-6465  [000]  2571.238102831: sched_process_fork:   comm=bash pid=6465 child_comm=bash child_pid=6468
)";
constexpr std::string_view kRaw = R"(cpus=2
probe:             bash-6465  [000]  2571.231670981: rseq_update:           cpu_id=0 node_id=0 mm_cid=0
probe:             bash-6465  [000]  2571.232068206: sched_waking:          comm=rcu_preempt pid=15 prio=120 target_cpu=000
probe:             bash-6465  [000]  2571.233002375: sched_wakeup:          comm=rcu_preempt pid=15 prio=120 target_cpu=000
probe:             bash-6465  [000]  2571.233064252: sched_switch:          prev_comm=bash prev_pid=6465 prev_prio=120 prev_state=256 next_comm=rcu_preempt next_pid=15 next_prio=120
probe:      rcu_preempt-15    [000]  2571.233068062: sched_switch:          prev_comm=rcu_preempt prev_pid=15 prev_prio=120 prev_state=128 next_comm=bash next_pid=6465 next_prio=120
probe:             bash-6465  [000]  2571.238102831: sched_process_fork:    parent_comm=bash parent_pid=6465 child_comm=bash child_pid=6468
)";
constexpr std::string_view kPerf = R"(# ========
# captured on    : Thu Dec  3 17:50:38 2026
# os release : 6.18.44-fc-v1147
# nrcpus online : 2
# nrcpus avail : 2
# CPU 0: Core ID 0, Die ID 0, Socket ID 0
# CPU 1: Core ID 1, Die ID 0, Socket ID 0
# node0 cpu list : 0-1
# CPU cache info:
#  L1 Data                 48K [0]
#  L1 Data                 48K [1]
#  L2 Unified            2048K [0]
#  L2 Unified            2048K [1]
#  L3 Unified          491520K [0-1]
# ========
#
            bash  6465 [000]  2571.231670981:             rseq:rseq_update: cpu_id=0 node_id=0 mm_cid=0
            bash  6465 [000]  2571.232068206:           sched:sched_waking: comm=rcu_preempt pid=15 prio=120 target_cpu=000
            bash  6465 [000]  2571.233002375:           sched:sched_wakeup: comm=rcu_preempt pid=15 prio=120 target_cpu=000
            bash  6465 [000]  2571.233064252:           sched:sched_switch: prev_comm=bash prev_pid=6465 prev_prio=120 prev_state=R+ ==> next_comm=rcu_preempt next_pid=15 next_prio=120
     rcu_preempt    15 [000]  2571.233068062:           sched:sched_switch: prev_comm=rcu_preempt prev_pid=15 prev_prio=120 prev_state=I ==> next_comm=bash next_pid=6465 next_prio=120
            bash  6465 [000]  2571.238102831:     sched:sched_process_fork: comm=bash pid=6465 child_comm=bash child_pid=6468
)";

TEST(TextReader, EveryPrintingGivesTheSameEvents) {
  Collect n;
  Collect r;
  Collect p;
  ISOLATION_ASSERT_OK(Read(kPrintFormat, TraceFormat::kTraceCmdReport, n));
  ISOLATION_ASSERT_OK(Read(kRaw, TraceFormat::kTraceCmdReport, r));
  absl::Status ps = Read(kPerf, TraceFormat::kPerfScript, p);
  ISOLATION_ASSERT_OK(ps);
  ASSERT_EQ(n.events.size(), 6u);
  EXPECT_EQ(n.events, r.events);
  EXPECT_EQ(n.events, p.events);
  EXPECT_EQ(n.comms, p.comms);
  EXPECT_TRUE(n.info.ns_timestamps);
  EXPECT_EQ(n.events[3].value, kPrevStateRunnable);  // R+ and 256: preempted, still runnable
  EXPECT_EQ(n.events[4].value, kPrevStateIdle);
  // perf's header gives the machine.
  EXPECT_EQ(p.info.num_cpus, 2);
  EXPECT_EQ(p.info.kernel_release, "6.18.44-fc-v1147");
  EXPECT_EQ(p.info.topology_source, InfoSource::kFile);
  EXPECT_EQ(p.info.core_of, (std::vector<int>{0, 1}));
  EXPECT_EQ(p.info.llc_of, (std::vector<int>{0, 0}));
  ISOLATION_ASSERT_OK_AND_ASSIGN(Topology topo, MachineTopology(p.info));
  EXPECT_EQ(topo.num_llcs(), 1);
  EXPECT_EQ(topo.num_cores(), 2);
}

TEST(TextReader, DetectsFormats) {
  EXPECT_EQ(internal::DetectTextFormat(kPlugin), TraceFormat::kTraceCmdReport);
  EXPECT_EQ(internal::DetectTextFormat(kPerf), TraceFormat::kPerfScript);
  // Without headers: the event name tells.
  EXPECT_EQ(internal::DetectTextFormat(kPerf.substr(kPerf.find("            bash"))),
            TraceFormat::kPerfScript);
  EXPECT_EQ(internal::DetectTextFormat(kRaw.substr(kRaw.find("probe:"))),
            TraceFormat::kTraceCmdReport);
  EXPECT_EQ(internal::DetectTextFormat("hello world\nnothing here\n"), TraceFormat::kAuto);
}

TEST(TextReader, CpuCountInferredWhenTheFileDoesNotSay) {
  Collect c;
  const std::string no_header(kPerf.substr(kPerf.find("            bash")));
  ISOLATION_ASSERT_OK(Read(no_header, TraceFormat::kPerfScript, c));
  EXPECT_EQ(c.info.num_cpus, 1);  // only CPU 0 appears
  EXPECT_EQ(c.info.num_cpus_source, InfoSource::kInferred);
  EXPECT_FALSE(c.info.notes.empty());
  Collect f;
  ReadOptions o;
  o.num_cpus = 4;
  ISOLATION_ASSERT_OK(Read(no_header, TraceFormat::kPerfScript, f, o));
  EXPECT_EQ(f.info.num_cpus, 4);
  EXPECT_EQ(f.info.num_cpus_source, InfoSource::kFlag);
}

TEST(TextReader, OtherBuffersAndUnneededEventsAreSkipped) {
  const std::string text = absl::StrCat(
      "cpus=2\n",
      "            bash-1  [000]  1.000000: sched_stat_runtime: comm=bash pid=1 runtime=5 [ns]\n",
      "probe:      bash-1  [000]  1.000001: rseq_update: cpu_id=0 node_id=0 mm_cid=0\n",
      "            bash-1  [000]  1.000002: rseq_update: cpu_id=0 node_id=0 mm_cid=1\n");
  Collect c;
  ReadStats st;
  ISOLATION_ASSERT_OK(Read(text, TraceFormat::kTraceCmdReport, c, {}, &st));
  // The first event line's buffer is the top one: the probe: line is another buffer.
  ASSERT_EQ(c.events.size(), 1u);
  EXPECT_EQ(c.events[0].value, 1);
  EXPECT_EQ(st.skipped, 2);
  Collect p;
  ReadOptions o;
  o.buffer = "probe";
  ISOLATION_ASSERT_OK(Read(text, TraceFormat::kTraceCmdReport, p, o));
  ASSERT_EQ(p.events.size(), 1u);
  EXPECT_EQ(p.events[0].value, 0);
}

TEST(TextReader, LostEventsAreCounted) {
  Collect c;
  ReadStats st;
  ASSERT_TRUE(Read("cpus=1\nCPU:0 [LOST 17 EVENTS]\n  a-1 [000] 1.000000: rseq_update: cpu_id=0 "
                   "node_id=0 mm_cid=0\n",
                   TraceFormat::kTraceCmdReport, c, {}, &st)
                  .ok());
  EXPECT_EQ(st.lost_events, 17);
}

// Every malformed input is an InvalidArgument naming the file and the line.
TEST(TextReader, BadInputNamesTheFileAndLine) {
  struct Case {
    std::string text;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"", "empty"},
      {"cpus=2\ngarbage line\n", "line 2"},
      {"cpus=0\n", "line 1"},
      {"cpus=2\n  a-1 [000] 1.000000: rseq_update: cpu_id=0 node_id=0\n", "mm_cid"},
      {"cpus=2\n  a-1 [005] 1.000000: rseq_update: cpu_id=0 node_id=0 mm_cid=0\n", "CPU 5"},
      {"cpus=2\n  a-1 [000] 1.000000: rseq_update: cpu_id=7 node_id=0 mm_cid=0\n", "cpu_id 7"},
      {"cpus=2\n  a-1 [000] 1.000000: rseq_update: cpu_id=0 node_id=0 mm_cid=99999\n",
       "mm_cid 99999"},
      {"cpus=2\n  a-1 [000] 2.000000: rseq_update: cpu_id=0 node_id=0 mm_cid=0\n"
       "  a-1 [000] 1.000000: rseq_update: cpu_id=0 node_id=0 mm_cid=0\n",
       "goes back"},
      {"cpus=2\n  a-1 [000] 1.000000: sched_switch: a:1 [120] Q ==> b:2 [120]\n", "prev_state"},
      {"cpus=2\n  a-1 [000] 1.000000: sched_switch: prev_comm=a prev_pid=x\n", "line 2"},
      {"cpus=2\n  a-1 [000] 1.000000: sched_waking: comm=a pid=99999999999 prio=1 target_cpu=0\n",
       "line 2"},
      {"cpus=2\n  a-1 [000] 1.000000: print: tracing_mark_write: isolab-recording {not json\n",
       "not a JSON"},
      {"cpus=2\n  a-1 [000] 1.000000: tmigr_group_set_cpu_active: group=0x1 lvl=99 numa=0 active=1 "
       "migrator=1 "
       "parent=(nil) childmask=1\n",
       "level 99"},
  };
  for (const Case& c : cases) {
    Collect out;
    absl::Status s = Read(c.text, TraceFormat::kTraceCmdReport, out);
    EXPECT_FALSE(s.ok()) << c.text;
    EXPECT_THAT(std::string(s.message()), HasSubstr("test.txt")) << c.text;
    EXPECT_THAT(std::string(s.message()), HasSubstr(c.message)) << c.text;
  }
}

TEST(TextReader, MalformedLinesWithinTheBudgetAreSkippedAndNoted) {
  Collect c;
  ReadOptions o;
  o.max_bad_lines = 2;
  ReadStats st;
  ASSERT_TRUE(Read("cpus=1\nbad one\n  a-1 [000] 1.000000: rseq_update: cpu_id=0 node_id=0 "
                   "mm_cid=0\nbad two\n",
                   TraceFormat::kTraceCmdReport, c, o, &st)
                  .ok());
  EXPECT_EQ(st.bad_lines, 2);
  EXPECT_EQ(c.events.size(), 1u);
  Collect d;
  EXPECT_FALSE(Read("cpus=1\nbad\nbad\nbad\n", TraceFormat::kTraceCmdReport, d, o).ok());
}

TEST(TextReader, LongLinesAndControlBytesAreBoundedAndEscaped) {
  Collect c;
  ReadOptions o;
  o.max_line_bytes = 100;
  absl::Status s = Read(absl::StrCat("cpus=1\n", std::string(500, 'x'), "\n"),
                        TraceFormat::kTraceCmdReport, c, o);
  EXPECT_THAT(std::string(s.message()), HasSubstr("longer than 100"));
  Collect d;
  s = Read("cpus=1\n\x1b[31mred\x07\n", TraceFormat::kTraceCmdReport, d);
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.message()), HasSubstr("\\x1b"));
  EXPECT_EQ(std::string(s.message()).find('\x1b'), std::string::npos);
}

TEST(RecordingMarker, ChunksAreJoinedAndBadOnesRefused) {
  const std::string text = absl::StrCat(
      "cpus=2\n",
      "  a-1 [000] 1.000000: print: tracing_mark_write: isolab-recording[1/2] "
      "{\"version\":1,\"cpus\":2,\n",
      "  a-1 [000] 1.000001: print: tracing_mark_write: isolab-recording[2/2] "
      "\"core_of\":[0,1],\"llc_of\":[0,0],"
      "\"node_of\":[0,0],\"package_of\":[0,0],\"isolcpus\":\"1\",\"nohz_full\":\"\"}\n");
  Collect c;
  absl::Status s = Read(text, TraceFormat::kTraceCmdReport, c);
  ISOLATION_ASSERT_OK(s);
  EXPECT_EQ(c.info.isolcpus, "1");
  EXPECT_EQ(c.info.isolation_source, InfoSource::kFile);
  EXPECT_EQ(c.info.llc_of, (std::vector<int>{0, 0}));
  RecordingInfo info;
  EXPECT_FALSE(ApplyRecordingMarker("{\"version\":2}", info).ok());
  EXPECT_FALSE(ApplyRecordingMarker("{\"cpus\":-1}", info).ok());
  EXPECT_FALSE(ApplyRecordingMarker("{\"core_of\":[0],\"llc_of\":[]}", info).ok());
  EXPECT_FALSE(ApplyRecordingMarker("[]", info).ok());
}

TEST(Numbers, ParseTheTracepointsForms) {
  int64_t ns;
  bool nsd;
  ASSERT_TRUE(internal::ParseTimestamp("2571.231671", ns, nsd));
  EXPECT_EQ(ns, 2571231671000);
  EXPECT_FALSE(nsd);
  ASSERT_TRUE(internal::ParseTimestamp("2571.231670981", ns, nsd));
  EXPECT_EQ(ns, 2571231670981);
  EXPECT_TRUE(nsd);
  EXPECT_FALSE(internal::ParseTimestamp("1.1234567890", ns, nsd));
  EXPECT_FALSE(internal::ParseTimestamp("x.1", ns, nsd));
  uint64_t u;
  EXPECT_TRUE(internal::ParsePointer("(nil)", u));
  EXPECT_EQ(u, 0u);
  EXPECT_FALSE(internal::ParsePointer("12", u));
  EXPECT_FALSE(internal::ParseHex("0x12345678901234567", u));
  EXPECT_FALSE(internal::ParseU64("99999999999999999999", u));
  int32_t i;
  EXPECT_TRUE(internal::ParseInt32("007", i));
  EXPECT_EQ(i, 7);
  EXPECT_FALSE(internal::ParseInt32("2147483648", i));
}

}  // namespace
}  // namespace isolation::replay

namespace isolation::replay {
namespace {

// A marker is an event like the others: it keeps the time order (found by
// trace_text_fuzz: a marker older than its predecessor was delivered as is).
TEST(TextReader, MarkersKeepTheTimeOrder) {
  Collect c;
  ASSERT_TRUE(Read("cpus=1\n  a-1 [000] 1.000500: rseq_update: cpu_id=0 node_id=0 mm_cid=0\n"
                   "  a-1 [000] 1.000000: print: tracing_mark_write: hello\n",
                   TraceFormat::kTraceCmdReport, c)
                  .ok());
  ASSERT_EQ(c.events.size(), 2u);
  EXPECT_EQ(c.events[1].time, c.events[0].time);
  Collect d;
  absl::Status s = Read(
      "cpus=1\n  a-1 [000] 2.000000: rseq_update: cpu_id=0 node_id=0 mm_cid=0\n"
      "  a-1 [000] 1.000000: print: tracing_mark_write: hello\n",
      TraceFormat::kTraceCmdReport, d);
  EXPECT_THAT(std::string(s.message()), HasSubstr("goes back"));
}

}  // namespace
}  // namespace isolation::replay

namespace isolation::replay {
namespace {

// tmigr_cpu_new_timer has no nextevt (its _idle twin has): both read.
TEST(TextReader, NewTimerWithAndWithoutNextevt) {
  Collect c;
  absl::Status s = Read(
      "cpus=2\n  a-1 [000] 1.000000: tmigr_cpu_new_timer: cpu=0 parent=0xffff8881003d7700 "
      "wakeup=9223372036854775807\n"
      "  a-1 [000] 1.000001: tmigr_cpu_new_timer_idle: cpu=0 parent=0xffff8881003d7700 nextevt=5 "
      "wakeup=9\n",
      TraceFormat::kTraceCmdReport, c);
  ISOLATION_ASSERT_OK(s);
  ASSERT_EQ(c.events.size(), 2u);
  EXPECT_EQ(c.events[0].wide, -1);
  EXPECT_EQ(c.events[0].value, 0);
  EXPECT_EQ(c.events[1].wide, 5);
  EXPECT_EQ(c.events[1].value, 1);
}

TEST(TimerFlagsTest, DeferrableTimersAreNotGlobal) {
  EXPECT_TRUE(TimerFlags::Global(0x1400000));
  EXPECT_FALSE(TimerFlags::Global(0x1400000 | TimerFlags::kPinned));
  EXPECT_FALSE(TimerFlags::Global(0x1400000 | TimerFlags::kDeferrable));
  EXPECT_EQ(TimerFlags::Cpu(0x1400001), 1);
}

}  // namespace
}  // namespace isolation::replay
