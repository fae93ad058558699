// SPDX-License-Identifier: GPL-2.0-or-later
// Idle-CPU selection on a recorded kernel: one IdleState per registered
// selector, kept in the kernel's idle / busy state by the recording's own
// events (never by a variant's choice, which the kernel did not make), and
// at each wake-up that selected a CPU every selector's answer set beside the
// kernel's (the dest_cpu of the sched_migrate_task that follows the waking,
// else the previous CPU).
//
// A wake-up is *not a selection* (not counted) when the kernel cannot have
// called select_task_rq_fair(): an RT/DL wakee (prio < 100), a per-CPU
// kernel thread (pinned: nr_cpus_allowed == 1; told by its name), or a task
// the recording never saw block (still queued: ttwu_runnable()).  It is
// *judged* only when every input the kernel's choice depends on is in the
// recording:
//   - the waker runs on the wakee's previous CPU (so wake_affine() cannot
//     move the target: WF_SYNC and the loads it weighs are not traced);
//   - the wakee is certainly dequeued (its previous CPU switched to idle
//     after it blocked; otherwise DELAY_DEQUEUE may have kept it queued and
//     the kernel re-enqueued it without selecting);
//   - every CPU of the previous CPU's LLC has had an event (its idle state
//     is known), and either the previous CPU is idle (select_idle_sibling()
//     returns it first) or no other CPU of the LLC is idle (the scan finds
//     nothing whatever its SIS_UTIL budget, which depends on the untraced
//     utilisation).
// The others count as not judged.  Affinity masks are not traced: every task
// but a per-CPU kthread is taken to allow every CPU; vcpu_is_preempted() of
// a guest and a vendor scheduler patch are not modelled either (docs).

#include <memory>
#include <regex>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/status_macros.h"
#include "experiments/replay_mechanisms.h"
#include "isolation/idle_select/idle_select.h"
#include "isolation/idle_select/selector.h"

namespace isolation::experiments {
namespace {

using replay::Event;
using replay::EventKind;
using replay::ReplayDriver;

// Per-CPU kernel threads, pinned to their CPU (kthread_bind /
// kthread_create_on_cpu): no selection happens for them.
bool PerCpuKthread(std::string_view comm) {
  static const std::regex kPinned(
      R"(^(kworker/[0-9]+:.*|ksoftirqd/[0-9]+|migration/[0-9]+|cpuhp/[0-9]+|rcuc/[0-9]+|rcuop/[0-9]+|idle_inject/[0-9]+|watchdog/[0-9]+|irq_work/[0-9]+))");
  return std::regex_match(std::string(comm), kPinned);
}

struct IdleRow {
  std::string name;
  bool kernel = false;
  bool negative_control = false;
  std::string error;
  std::unique_ptr<idle_select::IdleState> state;
  absl::flat_hash_map<TaskId, int> recent_used;  // p->recent_used_cpu per task
  Agreement agreement;
  int64_t selections = 0;
  int64_t idle_found = 0;
  int64_t probes = 0;
  int64_t busy_picked = 0;  // chose a CPU the recording shows busy while one of the LLC was idle
  int64_t migrations = 0;   // chose another CPU than prev
};

// A selection the kernel made, waiting for its outcome.
struct InFlight {
  TaskId task = kIdleTask;
  int prev = -1;
  bool judged = false;
  Event waking;
  std::vector<int> choices;  // each row's answer
};

class IdleReplay final : public MechanismReplay, private Hooks {
 public:
  explicit IdleReplay(const ReplaySetup& setup) : setup_(setup) {}

  absl::Status Build() {
    const idle_select::IdleTopology topo =
        idle_select::IdleTopology::From(*setup_.topology, *setup_.isolation);
    const std::vector<std::string> registered =
        idle_select::SelectorNames(/*include_negative_controls=*/true);
    ISOLATION_ASSIGN_OR_RETURN(const RowFilter filter,
                               RowFilter::Make(setup_, "idle_select", "idle_variants", registered));
    for (const std::string& name : registered) {
      absl::StatusOr<const idle_select::SelectorEntry*> entry =
          idle_select::SelectorRegistry().Find(name);
      const bool negative_control = entry.ok() && (*entry)->negative_control;
      if (!filter.Wants(name, negative_control)) continue;
      auto row = std::make_unique<IdleRow>();
      row->name = name;
      row->kernel = name == "V0";  // mainline select_idle_sibling() / SIS_UTIL
      row->negative_control = negative_control;
      idle_select::Options o;
      o.variant = name;
      absl::StatusOr<std::unique_ptr<idle_select::IdleState>> st =
          idle_select::IdleState::Create(topo, o);
      if (st.ok()) {
        row->state = std::move(*st);
      } else {
        row->error = std::string(st.status().message());
      }
      rows_.push_back(std::move(row));
    }
    return absl::OkStatus();
  }

  std::string_view name() const override { return "idle_select"; }
  absl::Status Attach(ReplayDriver& driver) override {
    driver_ = &driver;
    in_flight_.resize(static_cast<size_t>(driver.num_cpus()));
    pending_.assign(static_cast<size_t>(driver.num_cpus()), false);
    driver.AddHooks(this);
    driver.AddObserver(this);
    return absl::OkStatus();
  }

  // --- the kernel's idle / busy state, into every variant -------------------
  void OnIdleEnter(int cpu, Nanos) override {
    ++idle_entries_[static_cast<size_t>(cpu)];
    for (auto& r : rows_) {
      if (r->state) r->state->IdleEnter(cpu);
    }
  }
  void OnIdleExit(int cpu, Nanos) override {
    for (auto& r : rows_) {
      if (r->state) r->state->IdleExit(cpu);
    }
  }
  void OnTick(CpuContext& ctx, TaskId) override {
    for (auto& r : rows_) {
      if (r->state) r->state->Tick(ctx.cpu());
    }
  }
  void OnTickStop(CpuContext& ctx) override {
    for (auto& r : rows_) {
      if (r->state) r->state->TickStop(ctx.cpu());
    }
  }
  void OnTickRestart(CpuContext& ctx) override {
    for (auto& r : rows_) {
      if (r->state) r->state->TickRestart(ctx.cpu());
    }
  }
  void OnContextSwitch(int cpu, TaskId prev, TaskId next, Nanos) override {
    if (prev != kIdleTask) blocked_at_entries_[prev] = idle_entries_[static_cast<size_t>(cpu)];
    if (next != kIdleTask) SetPending(cpu, false);
  }
  void OnStart(Driver& d) override { idle_entries_.assign(static_cast<size_t>(d.num_cpus()), 0); }

  void OnRecorded(const Event& e, ReplayDriver& driver) override {
    switch (e.kind) {
      case EventKind::kSwitch:
      case EventKind::kWakeup:
      case EventKind::kWakeupNew:
      case EventKind::kMigrate:
        break;
      case EventKind::kWaking:
        Waking(e, driver);
        return;
      default:
        return;
    }
    if (e.kind == EventKind::kMigrate) {
      // The kernel's choice of a wake-up in flight on this (the waker's) CPU.
      InFlight& f = in_flight_[static_cast<size_t>(e.cpu)];
      if (f.task != kIdleTask && driver.TaskOfPid(e.task) == f.task) {
        Resolve(f, e.value, driver);
        SetPending(e.value, true);  // until its sched_wakeup: the wakelist's ttwu_pending
      }
    } else if (e.kind == EventKind::kWakeup) {
      SetPending(e.cpu2, false);
      for (InFlight& f : in_flight_) {
        if (f.task != kIdleTask && driver.TaskOfPid(e.task) == f.task) Resolve(f, f.prev, driver);
      }
    }
    // Keep nr_running (and so the idle test) the recording's.
    if (e.kind == EventKind::kSwitch || e.kind == EventKind::kWakeup ||
        e.kind == EventKind::kWakeupNew || e.kind == EventKind::kMigrate) {
      for (int cpu : {e.cpu, e.kind == EventKind::kSwitch ? e.cpu : e.cpu2,
                      e.kind == EventKind::kMigrate ? e.value : e.cpu}) {
        if (cpu < 0 || cpu >= driver.num_cpus()) continue;
        const int n = driver.NumRunnable(cpu);
        for (auto& r : rows_) {
          if (r->state) r->state->SetNrRunning(cpu, n);
        }
      }
    }
  }

  void Report(const replay::ReadStats&, const ReplayDriver&, nlohmann::json& out, std::string& text,
              int64_t& violations) override {
    (void)violations;
    out["wakeups"] = wakings_;
    out["not_selections"] = {{"rt_or_dl", excluded_rt_},
                             {"per_cpu_kthread", excluded_pinned_},
                             {"still_queued", excluded_queued_}};
    out["selections"] = selections_;
    out["judged"] = judged_;
    out["not_judged"] = {{"waker_not_prev", nj_waker_},
                         {"maybe_delayed_dequeue", nj_delayed_},
                         {"llc_state_unknown", nj_unknown_},
                         {"needs_sis_budget", nj_budget_}};
    out["kernel_variant"] = "V0";
    out["notes"].push_back(
        "V0 is mainline's select_idle_sibling(); a vendor scheduler patch or a guest's "
        "vcpu_is_preempted() "
        "is not modelled");
    absl::StrAppend(&text, "idle_select: ", wakings_, " wake-ups, ", selections_,
                    " selected a CPU (the others: RT/DL ", excluded_rt_, ", per-CPU kthreads ",
                    excluded_pinned_, ", still queued ", excluded_queued_, "); ", judged_,
                    " judged, not judged: waker not on prev ", nj_waker_,
                    ", maybe delayed dequeue ", nj_delayed_,
                    ", LLC idle state unknown or presumed ", nj_unknown_,
                    ", needs the SIS_UTIL budget ", nj_budget_, "\n");
    std::vector<std::vector<std::string>> table;
    table.push_back({"kernel (recorded)", absl::StrCat(selections_), "-", "-",
                     absl::StrCat(kernel_busy_picked_), absl::StrCat(kernel_migrations_),
                     "(the reference)"});
    nlohmann::json rows = nlohmann::json::array();
    for (auto& r : rows_) {
      nlohmann::json j{{"variant", r->name},
                       {"kernel_variant", r->kernel},
                       {"negative_control", r->negative_control}};
      if (!r->error.empty()) {
        j["error"] = r->error;
        rows.push_back(j);
        continue;
      }
      j["selections"] = r->selections;
      j["idle_found"] = r->idle_found;
      j["probes"] = r->probes;
      j["busy_cpu_picked"] = r->busy_picked;
      j["migrations"] = r->migrations;
      if (setup_.isolation_is_recorded) j["agreement"] = r->agreement.Json();
      rows.push_back(j);
      table.push_back(
          {absl::StrCat(r->name, r->kernel ? " [kernel]" : "",
                        r->negative_control ? " (negative control)" : ""),
           absl::StrCat(r->selections), absl::StrCat(r->idle_found), absl::StrCat(r->probes),
           absl::StrCat(r->busy_picked), absl::StrCat(r->migrations),
           setup_.isolation_is_recorded ? r->agreement.Text() : "what-if: not compared"});
    }
    out["rows"] = rows;
    out["kernel"] = {{"busy_cpu_picked", kernel_busy_picked_}, {"migrations", kernel_migrations_}};
    absl::StrAppend(&text,
                    TextTable({"selector", "selections", "idle found", "probes", "busy CPU picked",
                               "moved off prev", "agreement with the kernel (judged wake-ups)"},
                              table));
    for (auto& r : rows_) {
      if (!r->kernel || !setup_.isolation_is_recorded) continue;
      out["agreement"] = r->agreement.Json();
      absl::StrAppend(&text, "  the kernel's variant (V0): ", r->agreement.Text(), "\n");
      for (const std::string& d : r->agreement.first_disagreements)
        absl::StrAppend(&text, "    ", d, "\n");
    }
  }

 private:
  bool IdleCpu(int cpu) const {
    return driver_->IsIdle(cpu) && driver_->NumRunnable(cpu) == 0 &&
           !pending_[static_cast<size_t>(cpu)];
  }
  void SetPending(int cpu, bool on) {
    if (cpu < 0 || cpu >= static_cast<int>(pending_.size()) ||
        pending_[static_cast<size_t>(cpu)] == on)
      return;
    pending_[static_cast<size_t>(cpu)] = on;
    for (auto& r : rows_) {
      if (r->state) r->state->SetWakePending(cpu, on);
    }
  }

  void Waking(const Event& e, ReplayDriver& driver) {
    ++wakings_;
    const TaskId t = driver.TaskOfPid(e.task);
    const replay::TaskInfo* ti = driver.Task(t);
    if (e.prio >= 0 && e.prio < 100) {
      ++excluded_rt_;
      return;
    }
    if (PerCpuKthread(driver.Comm(t))) {
      ++excluded_pinned_;
      return;
    }
    if (ti == nullptr || ti->state != replay::TaskInfo::State::kBlocked) {
      ++excluded_queued_;
      return;
    }
    ++selections_;
    const int prev = e.cpu2;
    InFlight& f = in_flight_[static_cast<size_t>(e.cpu)];
    if (f.task != kIdleTask) Resolve(f, f.prev, driver);  // an unresolved one: it stayed on prev
    f.task = t;
    f.prev = prev;
    f.waking = e;
    // Judged?
    const CpuMask& llc = setup_.topology->llc_mask(setup_.topology->llc_of(prev));
    bool llc_known = true;
    bool other_idle = false;
    for (int c = llc.First(); c < llc.nbits(); c = llc.Next(c)) {
      // Unknown: no event yet, or idle only as far as a recording that
      // misses the CPU's idle exits can tell.
      if (!driver.CpuKnown(c) || (IdleCpu(c) && driver.UnrecordedIdleExits(c) > 0))
        llc_known = false;
      if (c != prev && IdleCpu(c)) other_idle = true;
    }
    const auto entries = blocked_at_entries_.find(t);
    const bool dequeued = entries != blocked_at_entries_.end() &&
                          idle_entries_[static_cast<size_t>(prev)] > entries->second;
    f.judged = false;
    f.choices.assign(rows_.size(), -1);
    if (e.cpu != prev) {
      ++nj_waker_;
    } else if (!dequeued) {
      ++nj_delayed_;
    } else if (!llc_known) {
      ++nj_unknown_;
    } else if (!IdleCpu(prev) && other_idle) {
      ++nj_budget_;
    } else {
      f.judged = true;
      ++judged_;
    }
    for (size_t i = 0; i < rows_.size(); ++i) {
      IdleRow* r = rows_[i].get();
      if (!r->state) continue;
      idle_select::WakeTask wt;
      wt.prev_cpu = prev;
      auto [it, fresh] = r->recent_used.try_emplace(t, -1);
      wt.recent_used_cpu = it->second;
      idle_select::WakeContext ctx;
      ctx.target = e.cpu == prev ? prev : -1;
      ctx.waker_cpu = e.cpu;
      const idle_select::Selection s = r->state->Select(wt, ctx);
      it->second = wt.recent_used_cpu;
      const int cpu = s.cpu >= 0 ? s.cpu : prev;
      f.choices[i] = cpu;
      ++r->selections;
      if (s.idle_found()) ++r->idle_found;
      r->probes += s.probes;
      if (cpu != prev) ++r->migrations;
      if (!IdleCpu(cpu) && (other_idle || IdleCpu(prev))) ++r->busy_picked;
    }
  }

  void Resolve(InFlight& f, int kernel_cpu, ReplayDriver& driver) {
    if (kernel_cpu != f.prev) ++kernel_migrations_;
    bool any_idle = false;
    const CpuMask& llc = setup_.topology->llc_mask(setup_.topology->llc_of(f.prev));
    for (int c = llc.First(); c < llc.nbits(); c = llc.Next(c)) any_idle |= IdleCpu(c);
    if (kernel_cpu >= 0 && kernel_cpu < driver.num_cpus() && !IdleCpu(kernel_cpu) && any_idle)
      ++kernel_busy_picked_;
    if (setup_.isolation_is_recorded) {
      for (size_t i = 0; i < rows_.size(); ++i) {
        IdleRow* r = rows_[i].get();
        if (!r->state) continue;
        if (f.judged) {
          r->agreement.Judge(f.choices[i] == kernel_cpu, setup_.options->disagreements, [&] {
            return absl::StrCat(DescribeEvent(f.waking, driver), ": kernel chose CPU ", kernel_cpu,
                                ", model CPU ", f.choices[i]);
          });
        } else {
          ++r->agreement.not_judged;
        }
      }
    }
    f.task = kIdleTask;
  }

  const ReplaySetup setup_;
  ReplayDriver* driver_ = nullptr;
  std::vector<std::unique_ptr<IdleRow>> rows_;
  std::vector<InFlight> in_flight_;    // per waker CPU
  std::vector<int64_t> idle_entries_;  // per CPU: idle entries so far
  std::vector<bool> pending_;          // per CPU: a wake-up in flight to it (ttwu_pending)
  absl::flat_hash_map<TaskId, int64_t>
      blocked_at_entries_;  // idle entries of its CPU when it last left
  int64_t wakings_ = 0, excluded_rt_ = 0, excluded_pinned_ = 0, excluded_queued_ = 0,
          selections_ = 0, judged_ = 0;
  int64_t nj_waker_ = 0, nj_delayed_ = 0, nj_unknown_ = 0, nj_budget_ = 0;
  int64_t kernel_busy_picked_ = 0, kernel_migrations_ = 0;
};

}  // namespace

absl::StatusOr<std::unique_ptr<MechanismReplay>> MakeIdleReplay(const ReplaySetup& setup) {
  auto r = std::make_unique<IdleReplay>(setup);
  if (absl::Status s = r->Build(); !s.ok()) return s;
  return r;
}

}  // namespace isolation::experiments
