// SPDX-License-Identifier: GPL-2.0-or-later
// Internal to lib/replay: the tracepoints the readers turn into events.

#ifndef ISOLATION_LIB_REPLAY_EVENT_NAMES_H_
#define ISOLATION_LIB_REPLAY_EVENT_NAMES_H_

#include <array>
#include <string_view>

#include "isolation/replay/recording.h"

namespace isolation::replay {

struct TracepointName {
  std::string_view system;
  std::string_view name;
  std::string_view full_name;
  EventKind kind;
};

// hrtimer_expire_entry becomes kTick only for the tick handler's functions
// (TickHandlerName); workqueue_execute_start keeps every function and tells
// vmstat's apart (WorkFunctionOf).
inline constexpr std::array<TracepointName, 29> kTracepoints = {{
    {"sched", "sched_switch", "sched:sched_switch", EventKind::kSwitch},
    {"sched", "sched_waking", "sched:sched_waking", EventKind::kWaking},
    {"sched", "sched_wakeup", "sched:sched_wakeup", EventKind::kWakeup},
    {"sched", "sched_wakeup_new", "sched:sched_wakeup_new", EventKind::kWakeupNew},
    {"sched", "sched_migrate_task", "sched:sched_migrate_task", EventKind::kMigrate},
    {"sched", "sched_process_fork", "sched:sched_process_fork", EventKind::kFork},
    {"task", "task_newtask", "task:task_newtask", EventKind::kNewTask},
    {"sched", "sched_process_exec", "sched:sched_process_exec", EventKind::kExec},
    {"sched", "sched_process_exit", "sched:sched_process_exit", EventKind::kExit},
    {"rseq", "rseq_update", "rseq:rseq_update", EventKind::kRseqUpdate},
    {"timer_migration", "tmigr_cpu_idle", "timer_migration:tmigr_cpu_idle",
     EventKind::kTmigrCpuIdle},
    {"timer_migration", "tmigr_cpu_active", "timer_migration:tmigr_cpu_active",
     EventKind::kTmigrCpuActive},
    {"timer_migration", "tmigr_cpu_new_timer", "timer_migration:tmigr_cpu_new_timer",
     EventKind::kTmigrCpuNewTimer},
    {"timer_migration", "tmigr_cpu_new_timer_idle", "timer_migration:tmigr_cpu_new_timer_idle",
     EventKind::kTmigrCpuNewTimer},
    {"timer_migration", "tmigr_cpu_online", "timer_migration:tmigr_cpu_online",
     EventKind::kTmigrCpuOnline},
    {"timer_migration", "tmigr_cpu_offline", "timer_migration:tmigr_cpu_offline",
     EventKind::kTmigrCpuOffline},
    {"timer_migration", "tmigr_group_set_cpu_active", "timer_migration:tmigr_group_set_cpu_active",
     EventKind::kTmigrGroupActive},
    {"timer_migration", "tmigr_group_set_cpu_inactive",
     "timer_migration:tmigr_group_set_cpu_inactive", EventKind::kTmigrGroupInactive},
    {"timer_migration", "tmigr_handle_remote", "timer_migration:tmigr_handle_remote",
     EventKind::kTmigrHandleRemote},
    {"timer_migration", "tmigr_handle_remote_cpu", "timer_migration:tmigr_handle_remote_cpu",
     EventKind::kTmigrHandleRemoteCpu},
    {"timer_migration", "tmigr_update_events", "timer_migration:tmigr_update_events",
     EventKind::kTmigrUpdateEvents},
    {"timer", "timer_start", "timer:timer_start", EventKind::kTimerStart},
    {"timer", "timer_expire_entry", "timer:timer_expire_entry", EventKind::kTimerExpire},
    {"timer", "timer_base_idle", "timer:timer_base_idle", EventKind::kTimerBaseIdle},
    {"timer", "tick_stop", "timer:tick_stop", EventKind::kTickStop},
    {"timer", "hrtimer_expire_entry", "timer:hrtimer_expire_entry", EventKind::kTick},
    {"workqueue", "workqueue_execute_start", "workqueue:workqueue_execute_start",
     EventKind::kWorkExecute},
    {"workqueue", "workqueue_queue_work", "workqueue:workqueue_queue_work", EventKind::kWorkQueue},
    {"ftrace", "print", "ftrace:print", EventKind::kMarker},
}};

// The entry for "sched:sched_switch" or "sched_switch"; nullptr if the
// readers skip that tracepoint.
const TracepointName* FindTracepoint(std::string_view name);

// The tick's hrtimer handler across kernel versions: tick_nohz_handler
// (6.9+), tick_nohz_highres_handler (6.7-6.8), tick_sched_timer (earlier).
inline bool TickHandlerName(std::string_view function) {
  // trace-cmd's plugin prints "tick_nohz_handler/0x0" (symbol/offset).
  const size_t slash = function.find('/');
  if (slash != std::string_view::npos) function = function.substr(0, slash);
  const size_t plus = function.find('+');
  if (plus != std::string_view::npos) function = function.substr(0, plus);
  return function == "tick_nohz_handler" || function == "tick_nohz_highres_handler" ||
         function == "tick_sched_timer";
}

inline WorkFunction WorkFunctionOf(std::string_view function) {
  const size_t plus = function.find_first_of("+/");
  if (plus != std::string_view::npos) function = function.substr(0, plus);
  if (function == "vmstat_update") return WorkFunction::kVmstatUpdate;
  if (function == "vmstat_shepherd") return WorkFunction::kVmstatShepherd;
  return WorkFunction::kOther;
}

// sched_switch prev_state letters as TASK_REPORT bits (recording.h keeps
// prev_state & 0xff: the preempted flag TASK_REPORT_MAX is dropped because
// trace-cmd's plugin does not print it).  Two alphabets: the 6.x print
// format's (__print_flags: S D T t X Z P I, "R" for 0, a trailing '+' when
// preempted) and trace-cmd's sched_switch plugin's (libtraceevent
// plugin_sched_switch.c write_state: bit i is "SDTtZXxW"[i], "R" for none --
// the pre-4.14 alphabet, so 6.x's X/Z/P/I print as Z/X/x/W).
inline bool PrevStateFromLetters(std::string_view text, bool plugin_alphabet, int32_t& state) {
  state = 0;
  if (text.empty()) return false;
  static constexpr std::string_view kPrintFormat = "SDTtXZPI";
  static constexpr std::string_view kPlugin = "SDTtZXxW";
  const std::string_view alphabet = plugin_alphabet ? kPlugin : kPrintFormat;
  for (char c : text) {
    if (c == 'R' || c == '|' || c == '+') continue;
    const size_t bit = alphabet.find(c);
    if (bit == std::string_view::npos) return false;
    state |= 1 << bit;
  }
  return true;
}

}  // namespace isolation::replay

#endif  // ISOLATION_LIB_REPLAY_EVENT_NAMES_H_
