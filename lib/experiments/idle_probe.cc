// SPDX-License-Identifier: GPL-2.0-or-later
// The stale-hint probe of `isolab idle` (idle_probe.h).

#include "experiments/idle_probe.h"

#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "isolation/idle_select/idle_select.h"
#include "isolation/idle_select/selector.h"

namespace isolation::experiments {
namespace {

namespace is = idle_select;

void Busy(is::IdleState& st, int cpu) {
  if (st.cpu(cpu).curr_is_idle) {
    st.IdleExit(cpu);     // put_prev_task_idle()
    st.TickRestart(cpu);  // tick_nohz_idle_exit()
  }
  st.SetNrRunning(cpu, 1);
  st.SetNrSchedIdle(cpu, 0);
  st.SetWakePending(cpu, false);
}

void Idle(is::IdleState& st, int cpu) {
  st.SetNrRunning(cpu, 0);
  st.SetNrSchedIdle(cpu, 0);
  st.SetWakePending(cpu, false);
  st.IdleEnter(cpu);
  st.TickStop(cpu);
}

}  // namespace

absl::StatusOr<StaleHintProbe> ProbeStaleIdleHint(std::string_view selector, int llc_cpus) {
  is::Options o;
  o.variant = std::string(selector);
  ISOLATION_ASSIGN_OR_RETURN(std::unique_ptr<is::IdleState> st,
                             is::IdleState::Create(is::IdleTopology::Uniform(1, llc_cpus), o));
  StaleHintProbe out;
  if (st->selector().traits().claims_cpus) return out;
  out.applicable = true;
  const int n = st->num_cpus();
  // Round r: every CPU idles (hints published), then the first `stale` CPUs
  // after the target in scan order go busy with no tick since -- their hints
  // still say idle -- and one CPU further on stays idle.
  for (int stale = 1; stale < n - 1; ++stale) {
    for (int c = 0; c < n; ++c) Idle(*st, c);
    for (int c = 0; c < n; ++c) st->Tick(c);
    const int target = 0;
    Busy(*st, target);
    for (int k = 1; k <= stale; ++k) Busy(*st, k);
    for (int c = stale + 2; c < n; ++c) Busy(*st, c);  // CPU stale+1 is the idle one
    (void)st->SetBudget(0, n);                         // the whole LLC may be scanned
    is::WakeTask t{.prev_cpu = target, .recent_used_cpu = -1};
    const is::Selection s = st->Select(t, {.target = target});
    ++out.selections;
    if (!s.idle_found() || s.cpu < 0) continue;
    if (st->AvailableIdleCpu(s.cpu) || st->SchedIdleCpu(s.cpu)) continue;
    ++out.violation_count;
    if (out.violations.size() < 10) {
      out.violations.push_back(
          absl::StrCat("I4: ", std::string(selector), " returned cpu ", s.cpu,
                       " as idle, but it runs a task (its idle hint was stale: cpus 1-", stale,
                       " went busy after publishing idle, cpu ", stale + 1, " is idle)"));
    }
  }
  return out;
}

}  // namespace isolation::experiments
