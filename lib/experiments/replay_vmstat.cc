// SPDX-License-Identifier: GPL-2.0-or-later
// Deferred vmstat flushing on a recorded kernel.  No tracepoint carries the
// per-CPU counter updates, so no policy can be run on the counters; what the
// recording does hold -- when and where the kernel ran vmstat_shepherd and
// vmstat_update, who queued each vmstat_update, whether it preempted a user
// task, and every tick stop (one quiet_vmstat() each, tick_nohz_stop_tick())
// -- is set beside each registered fold policy's declared scope
// (FoldPolicyTraits): which CPUs its shepherd may queue work on, and whether
// its quiet_vmstat folds at a tick stop.
//
// Judged (the kernel's variant, A1, and every policy): each vmstat_update
// the kernel's shepherd queued (workqueue_queue_work of vmstat_update from
// inside a vmstat_shepherd run) -- may the policy's shepherd queue work on
// that CPU (WorkScope: isolated, nohz_full, tick state)?  Whether the
// shepherd *would* have queued it (need_update()) depends on the counters:
// not judged, nor is any run whose origin the recording does not show.
// Figures per policy: the kernel's recorded vmstat_update runs that
// preempted a user task on an isolated CPU and that the policy's scope
// admits ("fold interruptions on isolated CPUs" on the recorded runs), and
// the tick stops at which the policy's quiet_vmstat may leave a residue
// (A0/A1: no vmstat work pending, reconstructed from the queue/run events;
// policies that fold a dirty CPU whatever its work: none; remote-fold
// policies: every tick stop, until the shepherd's next remote fold).

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "experiments/replay_mechanisms.h"
#include "isolation/vmstat/fold_policy.h"

namespace isolation::experiments {
namespace {

using replay::Event;
using replay::EventKind;
using replay::ReplayDriver;
using replay::WorkFunction;

struct VmstatRow {
  std::string name;
  bool kernel = false;
  bool negative_control = false;
  vmstat::FoldPolicyTraits traits;
  Agreement agreement;
  int64_t isolated_interruptions = 0;
  int64_t residue_tick_stops = 0;
};

struct CpuState {
  bool pending_known = false;  // whether vmstat work is pending is known
  bool pending = false;
  int64_t unresolved_tick_stops = 0;  // after a run whose re-queue is not yet seen
  TaskId preempted = kIdleTask;       // the user task a kworker switch-in preempted
  bool in_kworker = false;
};

class VmstatReplay final : public MechanismReplay {
 public:
  explicit VmstatReplay(const ReplaySetup& setup) : setup_(setup) {}

  absl::Status Build() {
    std::vector<std::string> registered;
    for (const auto* e : vmstat::FoldPolicyRegistry().All()) registered.push_back(e->name);
    ISOLATION_ASSIGN_OR_RETURN(const RowFilter filter,
                               RowFilter::Make(setup_, "vmstat", "vmstat_strategies", registered));
    for (const auto* e : vmstat::FoldPolicyRegistry().All()) {
      if (!filter.Wants(e->name, e->negative_control)) continue;
      auto row = std::make_unique<VmstatRow>();
      row->name = e->name;
      row->kernel =
          e->name == "A1";  // mainline since 6.5: the shepherd skips cpu_is_isolated() CPUs
      row->negative_control = e->negative_control;
      std::unique_ptr<vmstat::FoldPolicy> policy = e->factory();
      if (policy == nullptr)
        return absl::InternalError(absl::StrCat("fold policy ", e->name, ": null factory"));
      row->traits = policy->traits();
      rows_.push_back(std::move(row));
    }
    return absl::OkStatus();
  }

  std::string_view name() const override { return "vmstat"; }
  absl::Status Attach(ReplayDriver& driver) override {
    cpus_.resize(static_cast<size_t>(driver.num_cpus()));
    driver.AddObserver(this);
    return absl::OkStatus();
  }

  void OnRecorded(const Event& e, ReplayDriver& driver) override {
    CpuState& c = cpus_[static_cast<size_t>(e.cpu)];
    switch (e.kind) {
      case EventKind::kSwitch: {
        // Which user task a kworker preempts (the vmstat_update that runs in it interrupts that
        // task).
        const std::string_view next = driver.Comm(driver.TaskOfPid(e.task));
        const bool kworker = next.starts_with("kworker/");
        if (kworker && !c.in_kworker) {
          const TaskId prev = e.other == 0 ? kIdleTask : driver.TaskOfPid(e.other);
          c.preempted = e.value == replay::kPrevStateRunnable ? prev : kIdleTask;
        }
        c.in_kworker = kworker;
        if (!kworker) shepherd_cpu_ = shepherd_cpu_ == e.cpu ? -1 : shepherd_cpu_;
        break;
      }
      case EventKind::kWorkExecute:
        if (e.value == static_cast<int32_t>(WorkFunction::kVmstatShepherd)) {
          ++shepherd_runs_;
          shepherd_cpu_ = e.cpu;
        } else {
          if (shepherd_cpu_ == e.cpu) shepherd_cpu_ = -1;  // the shepherd's item ended
          if (e.value == static_cast<int32_t>(WorkFunction::kVmstatUpdate)) Run(e, c, driver);
        }
        break;
      case EventKind::kWorkQueue:
        if (e.value == static_cast<int32_t>(WorkFunction::kVmstatUpdate) && e.cpu2 >= 0)
          Queue(e, driver);
        break;
      case EventKind::kTickStop:
        if (e.value != 0) TickStop(c);
        break;
      default:
        break;
    }
  }

  void Report(const replay::ReadStats&, const ReplayDriver&, nlohmann::json& out, std::string& text,
              int64_t&) override {
    for (CpuState& c : cpus_) {
      tick_stops_unknown_ += c.unresolved_tick_stops;
      c.unresolved_tick_stops = 0;
    }
    out["kernel"] = {{"shepherd_runs", shepherd_runs_},
                     {"vmstat_update_runs", runs_},
                     {"runs_queued_by_the_shepherd", shepherd_queued_},
                     {"runs_preempting_a_user_task", preempting_runs_},
                     {"runs_preempting_a_user_task_on_isolated_cpus", isolated_preempting_runs_},
                     {"tick_stops", tick_stops_},
                     {"tick_stops_with_work_pending", tick_stops_pending_},
                     {"tick_stops_without_work_pending", tick_stops_not_pending_},
                     {"tick_stops_pending_unknown", tick_stops_unknown_}};
    out["kernel_variant"] = "A1";
    out["notes"].push_back(
        "no tracepoint carries the counter updates: whether a shepherd queues work (need_update()) "
        "and what a "
        "fold folds are not judged; the figures count the kernel's recorded runs and tick stops");
    absl::StrAppend(&text, "vmstat: ", shepherd_runs_, " shepherd runs, ", runs_,
                    " vmstat_update runs (", shepherd_queued_, " queued by the shepherd, ",
                    preempting_runs_, " preempted a user task, ", isolated_preempting_runs_,
                    " of them on isolated CPUs); ", tick_stops_, " tick stops (work pending at ",
                    tick_stops_pending_, ", not pending at ", tick_stops_not_pending_,
                    ", unknown at ", tick_stops_unknown_, ")\n");
    std::vector<std::vector<std::string>> table;
    nlohmann::json rows = nlohmann::json::array();
    for (auto& r : rows_) {
      nlohmann::json j{{"variant", r->name},
                       {"kernel_variant", r->kernel},
                       {"negative_control", r->negative_control},
                       {"fold_interruptions_on_isolated_cpus", r->isolated_interruptions},
                       {"tick_stops_leaving_a_possible_residue", r->residue_tick_stops}};
      if (setup_.isolation_is_recorded) j["agreement"] = r->agreement.Json();
      rows.push_back(j);
      table.push_back(
          {absl::StrCat(r->name, r->kernel ? " [kernel]" : "",
                        r->negative_control ? " (negative control)" : ""),
           absl::StrCat(r->isolated_interruptions), absl::StrCat(r->residue_tick_stops),
           setup_.isolation_is_recorded ? r->agreement.Text() : "what-if: not compared"});
    }
    out["rows"] = rows;
    absl::StrAppend(&text,
                    TextTable({"fold policy", "fold interruptions on isolated CPUs (recorded runs)",
                               "tick stops leaving a possible residue",
                               "agreement: shepherd-queued runs its scope admits"},
                              table));
    for (auto& r : rows_) {
      if (!r->kernel || !setup_.isolation_is_recorded) continue;
      out["agreement"] = r->agreement.Json();
      absl::StrAppend(&text, "  the kernel's variant (A1): ", r->agreement.Text(), "\n");
      for (const std::string& d : r->agreement.first_disagreements)
        absl::StrAppend(&text, "    ", d, "\n");
    }
  }

 private:
  bool Isolated(int cpu) const { return setup_.isolation->CpuIsIsolated(cpu); }
  bool NohzFull(int cpu) const {
    const CpuMask& m = setup_.isolation->nohz_full();
    return m.nbits() > cpu && m.Test(cpu);
  }
  // FoldPolicyTraits::shepherd_work: may the policy's shepherd queue work on `cpu`?
  bool Admits(const VmstatRow& r, int cpu, const ReplayDriver& driver) const {
    switch (r.traits.shepherd_work) {
      case vmstat::WorkScope::kAnyCpu:
        return true;
      case vmstat::WorkScope::kNotIsolated:
        return !Isolated(cpu);
      case vmstat::WorkScope::kTickRunning:
        return !driver.TickStopped(cpu);
      case vmstat::WorkScope::kNotNohzFull:
        return !NohzFull(cpu);
      case vmstat::WorkScope::kNoCpu:
        return false;
    }
    return false;
  }

  void Queue(const Event& e, const ReplayDriver& driver) {
    const int target = e.cpu2;
    CpuState& t = cpus_[static_cast<size_t>(target)];
    const bool from_shepherd = shepherd_cpu_ == e.cpu;
    // The tick stops since the target's last run are resolved: a shepherd
    // queue means its work had stopped re-queueing (not pending), a timer's
    // queue that it re-queued itself (pending).
    if (t.unresolved_tick_stops > 0) {
      if (from_shepherd) {
        NotPending(t.unresolved_tick_stops);
      } else {
        tick_stops_pending_ += t.unresolved_tick_stops;
      }
      t.unresolved_tick_stops = 0;
    }
    t.pending_known = true;
    t.pending = true;
    if (!from_shepherd) return;
    ++shepherd_queued_;
    if (!setup_.isolation_is_recorded) return;
    for (auto& r : rows_) {
      r->agreement.Judge(Admits(*r, target, driver), setup_.options->disagreements, [&] {
        return absl::StrCat(DescribeEvent(e, driver),
                            ": the kernel's shepherd queued vmstat_update on CPU ", target,
                            ", which this policy's shepherd never queues on");
      });
    }
  }

  void Run(const Event& e, CpuState& c, const ReplayDriver& driver) {
    ++runs_;
    // After the run the work re-queues itself only if it folded something:
    // unknown until the CPU's next queue event.
    c.pending_known = false;
    c.pending = false;
    const bool preempting = c.preempted != kIdleTask;
    if (preempting) ++preempting_runs_;
    if (preempting && Isolated(e.cpu)) {
      ++isolated_preempting_runs_;
      for (auto& r : rows_) {
        if (Admits(*r, e.cpu, driver)) ++r->isolated_interruptions;
      }
    }
  }

  void TickStop(CpuState& c) {
    ++tick_stops_;
    for (auto& r : rows_) {
      if (r->traits.folds_remotely)
        ++r->residue_tick_stops;  // no quiet fold: the shepherd's next remote fold
    }
    if (!c.pending_known) {
      ++c.unresolved_tick_stops;  // resolved by the next queue of its work
      return;
    }
    if (c.pending) {
      ++tick_stops_pending_;
    } else {
      NotPending(1);
    }
  }

  // Tick stops with no vmstat work pending: A0/A1's quiet_vmstat returns
  // without folding (its delayed_work_pending() gate); a dirty-gated policy
  // folds.
  void NotPending(int64_t n) {
    tick_stops_not_pending_ += n;
    for (auto& r : rows_) {
      if (!r->traits.folds_remotely && !r->traits.quiet_folds_dirty) r->residue_tick_stops += n;
    }
  }

  const ReplaySetup setup_;
  std::vector<std::unique_ptr<VmstatRow>> rows_;
  std::vector<CpuState> cpus_;
  int shepherd_cpu_ = -1;  // the CPU running vmstat_shepherd now, -1 if none
  int64_t shepherd_runs_ = 0, runs_ = 0, shepherd_queued_ = 0, preempting_runs_ = 0,
          isolated_preempting_runs_ = 0;
  int64_t tick_stops_ = 0, tick_stops_pending_ = 0, tick_stops_not_pending_ = 0;
  int64_t tick_stops_unknown_ = 0;
};

}  // namespace

absl::StatusOr<std::unique_ptr<MechanismReplay>> MakeVmstatReplay(const ReplaySetup& setup) {
  auto r = std::make_unique<VmstatReplay>(setup);
  if (absl::Status s = r->Build(); !s.ok()) return s;
  return r;
}

}  // namespace isolation::experiments
