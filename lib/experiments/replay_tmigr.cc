// SPDX-License-Identifier: GPL-2.0-or-later
// The timer-migration hierarchy on a recorded kernel: one TimerMigration per
// registered participation variant (hierarchy "mainline"), driven by the
// kernel's own tmigr entry points as its tracepoints recorded them --
//   tmigr_cpu_idle (cpu, nextevt)      -> Deactivate(cpu, nextevt)
//   tmigr_cpu_active (cpu)             -> Activate(cpu)
//   tmigr_cpu_new_timer (cpu, nextevt) -> NewTimer(cpu, nextevt)
//   tmigr_cpu_online / _offline        -> BringUpCpu / TakeDownCpu
// -- and by its own migrator duty: at every recorded tick of a CPU the model
// asks RequiresHandleRemote() and runs HandleRemote(), expiring the idle
// CPUs' global timers where *its* hierarchy says they go.
//
// Judged against the kernel (the variant of the recorded version):
//   - every tmigr_group_set_cpu_active / _inactive: the group's active mask
//     and migrator after the CPU's walk, set beside the model's group on that
//     CPU's path at that level (the kernel's deactivation events precede its
//     tmigr_cpu_idle, so they are held until it and compared after the
//     model's Deactivate);
//   - every tmigr_handle_remote (group, lvl) on CPU c: is c the migrator of
//     its level-lvl group in the model?
// Not judged: group events before every CPU's state is known (its first
// tmigr_cpu_idle / _active), and the remote CPUs' next expiries after a
// remote expiry (fetch_next_timer_interrupt_remote() reads timer wheels the
// trace does not hold; the model is given none), hence the timing of later
// remote expiries: those are figures, not agreement.
// Figures per variant: remote expiries the model ran, of them on isolated
// CPUs, and late ones (run more than a tick after the event's expiry); for
// the kernel, from timer_start / timer_expire_entry: global timers (flags
// exact only from trace.dat or -R text) expired on isolated CPUs, expired on
// another CPU than armed, and late.

#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/status_macros.h"
#include "experiments/replay_mechanisms.h"
#include "isolation/tmigr/tmigr.h"
#include "isolation/tmigr/variants.h"

namespace isolation::experiments {
namespace {

using replay::Event;
using replay::EventKind;
using replay::ReplayDriver;

constexpr int64_t kKtimeMax = INT64_MAX;

// The timer side of the model: records the remote expiries its hierarchy
// runs; a remote CPU has no further global timer once expired (the trace does
// not hold its wheel).
class ReplayBackend final : public tmigr::TimerBackend {
 public:
  void ExpireRemote(int owner, int runner, Nanos now) override {
    ++remote_expiries;
    if (isolated != nullptr && isolated->CpuIsIsolated(runner)) ++on_isolated;
    auto it = expiry.find(owner);
    if (it != expiry.end() && it->second != kNanosMax && now - it->second > late_after) ++late;
    expiry[owner] = kNanosMax;
  }
  void LockBases(int) override {}
  void UnlockBases(int) override {}
  Nanos NextGlobalLocked(int, Nanos) override { return kNanosMax; }
  bool BaseIsIdle(int) override { return false; }
  void KickCpu(int) override {}

  const IsolationConfig* isolated = nullptr;
  Nanos late_after = 0;
  absl::flat_hash_map<int, Nanos> expiry;  // owner -> its queued event's expiry
  int64_t remote_expiries = 0;
  int64_t on_isolated = 0;
  int64_t late = 0;
};

struct TmigrRow {
  std::string name;
  bool kernel = false;
  bool negative_control = false;
  std::string error;
  ReplayBackend backend;
  std::unique_ptr<tmigr::TimerMigration> tm;
  std::vector<bool> active;  // the model's view of each CPU
  Agreement agreement;
};

class TmigrReplay final : public MechanismReplay {
 public:
  explicit TmigrReplay(const ReplaySetup& setup) : setup_(setup) {}

  absl::Status Build() {
    const int version = setup_.kernel_version[0] * 100 + setup_.kernel_version[1];
    kernel_name_ = version == 0     ? "v6.9"
                   : version < 609  ? ""
                   : version <= 618 ? "v6.9"
                                    : "isolation";
    if (version == 0)
      note_ = "kernel version unknown: the kernel's variant is taken as v6.9-v6.18's (v6.9)";
    if (version > 0 && version < 609)
      note_ = "kernels before 6.9 have no timer-migration hierarchy";
    const int n = setup_.topology->num_cpus();
    std::vector<std::string> registered;
    for (const auto* e : tmigr::ParticipationRegistry().All()) registered.push_back(e->name);
    ISOLATION_ASSIGN_OR_RETURN(const RowFilter filter,
                               RowFilter::Make(setup_, "tmigr", "tmigr_variants", registered));
    for (const auto* e : tmigr::ParticipationRegistry().All()) {
      if (!filter.Wants(e->name, e->negative_control)) continue;
      auto row = std::make_unique<TmigrRow>();
      row->name = e->name;
      row->kernel = e->name == kernel_name_;
      row->negative_control = e->negative_control;
      row->backend.isolated = setup_.isolation;
      tmigr::Options o;
      o.participation = e->name;
      absl::StatusOr<std::unique_ptr<tmigr::TimerMigration>> tm =
          tmigr::TimerMigration::Create(*setup_.topology, o, &row->backend);
      if (!tm.ok()) {
        row->error = std::string(tm.status().message());
        rows_.push_back(std::move(row));
        continue;
      }
      row->tm = std::move(*tm);
      if (absl::Status s = row->tm->SetIsolation(*setup_.isolation); !s.ok())
        row->error = std::string(s.message());
      for (int c = 0; c < n && row->error.empty(); ++c) {
        if (absl::Status s = row->tm->BringUpCpu(c); !s.ok()) row->error = std::string(s.message());
      }
      row->tm->InitIsolation();
      row->active.assign(static_cast<size_t>(n), true);
      rows_.push_back(std::move(row));
    }
    return absl::OkStatus();
  }

  std::string_view name() const override { return "tmigr"; }
  absl::Status Attach(ReplayDriver& driver) override {
    driver_ = &driver;
    const int n = driver.num_cpus();
    known_.assign(static_cast<size_t>(n), false);
    held_.resize(static_cast<size_t>(n));
    for (auto& r : rows_) r->backend.late_after = driver.tick_period();
    driver.AddObserver(this);
    return absl::OkStatus();
  }

  void OnRecorded(const Event& e, ReplayDriver& driver) override {
    switch (e.kind) {
      case EventKind::kTmigrGroupInactive:
        if (held_[static_cast<size_t>(e.cpu)].size() < 64)
          held_[static_cast<size_t>(e.cpu)].push_back(e);
        return;
      case EventKind::kTmigrCpuIdle: {
        const Nanos next = e.wide == kKtimeMax ? kNanosMax : e.wide;
        for (auto& r : rows_) {
          if (!r->tm) continue;
          if (!r->active[static_cast<size_t>(e.cpu2)])
            r->tm->Activate(e.cpu2);  // it left idle unrecorded
          r->tm->Deactivate(e.cpu2, next);
          r->active[static_cast<size_t>(e.cpu2)] = false;
          r->backend.expiry[e.cpu2] = next;
        }
        known_[static_cast<size_t>(e.cpu2)] = true;
        for (const Event& g : held_[static_cast<size_t>(e.cpu)]) JudgeGroup(g, driver);
        held_[static_cast<size_t>(e.cpu)].clear();
        return;
      }
      case EventKind::kTmigrCpuActive:
        for (auto& r : rows_) {
          if (!r->tm) continue;
          if (r->active[static_cast<size_t>(e.cpu2)])
            r->tm->Deactivate(e.cpu2, kNanosMax);  // it was idle at the start
          r->tm->Activate(e.cpu2);
          r->active[static_cast<size_t>(e.cpu2)] = true;
          r->backend.expiry.erase(e.cpu2);
        }
        known_[static_cast<size_t>(e.cpu2)] = true;
        return;
      case EventKind::kTmigrGroupActive:
        JudgeGroup(e, driver);
        return;
      case EventKind::kTmigrCpuNewTimer: {
        if (e.wide < 0) return;  // plain tmigr_cpu_new_timer: the expiry is not in the event
        const Nanos next = e.wide == kKtimeMax ? kNanosMax : e.wide;
        for (auto& r : rows_) {
          if (!r->tm || r->active[static_cast<size_t>(e.cpu2)]) continue;
          r->tm->NewTimer(e.cpu2, next);
          r->backend.expiry[e.cpu2] = next;
        }
        return;
      }
      case EventKind::kTmigrCpuOnline:
        for (auto& r : rows_) {
          if (r->tm) (void)r->tm->BringUpCpu(e.cpu2);
        }
        return;
      case EventKind::kTmigrCpuOffline:
        for (auto& r : rows_) {
          if (r->tm) r->tm->TakeDownCpu(e.cpu2);
        }
        return;
      case EventKind::kTmigrHandleRemote:
        ++kernel_handle_remote_;
        JudgeMigrator(e, driver);
        return;
      case EventKind::kTmigrHandleRemoteCpu:
        ++kernel_remote_cpus_;
        if (setup_.isolation->CpuIsIsolated(e.cpu)) ++kernel_remote_on_isolated_;
        return;
      case EventKind::kTick: {
        // The model's own migrator duty in this CPU's tick.
        const Nanos now = MonoNow(e);
        for (auto& r : rows_) {
          if (!r->tm || !r->active[static_cast<size_t>(e.cpu)]) continue;
          if (r->tm->RequiresHandleRemote(e.cpu, now)) r->tm->HandleRemote(e.cpu, now);
        }
        return;
      }
      case EventKind::kTimerStart:
        KernelTimerStart(e);
        return;
      case EventKind::kTimerExpire:
        KernelTimerExpire(e);
        return;
      default:
        return;
    }
  }

  void Report(const replay::ReadStats&, const ReplayDriver&, nlohmann::json& out, std::string& text,
              int64_t& violations) override {
    out["kernel_variant"] = kernel_name_;
    if (!note_.empty()) out["notes"].push_back(note_);
    out["kernel"] = {{"handle_remote", kernel_handle_remote_},
                     {"remote_cpu_expiries", kernel_remote_cpus_},
                     {"remote_cpu_expiries_on_isolated_cpus", kernel_remote_on_isolated_},
                     {"global_timers_expired", global_expired_},
                     {"global_timers_expired_on_isolated_cpus", global_on_isolated_},
                     {"global_timers_expired_on_another_cpu", global_remote_},
                     {"late_timers", late_timers_},
                     {"timers_whose_flags_are_unknown", flags_unknown_}};
    absl::StrAppend(&text, "tmigr: the kernel handled remote timers ", kernel_handle_remote_,
                    " times (", kernel_remote_cpus_, " remote CPUs, ", kernel_remote_on_isolated_,
                    " by isolated CPUs); ", global_expired_, " global timers expired (",
                    global_on_isolated_, " on isolated CPUs, ", global_remote_,
                    " on another CPU than armed, ", late_timers_, " late)",
                    flags_unknown_ > 0
                        ? absl::StrCat("; ", flags_unknown_, " timers of unknown flags not counted")
                        : "",
                    "\n");
    if (!note_.empty()) absl::StrAppend(&text, "  note: ", note_, "\n");
    std::vector<std::vector<std::string>> table;
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
      const std::vector<std::string> bad = r->tm->CheckInvariants();
      if (!r->negative_control) violations += static_cast<int64_t>(bad.size());
      j["remote_expiries"] = r->backend.remote_expiries;
      j["remote_expiries_on_isolated_cpus"] = r->backend.on_isolated;
      j["late_remote_expiries"] = r->backend.late;
      j["available_cpus"] = r->tm->AvailableMask().ToString();
      j["invariant_violations"] = bad.size();
      if (setup_.isolation_is_recorded) j["agreement"] = r->agreement.Json();
      rows.push_back(j);
      table.push_back(
          {absl::StrCat(r->name, r->kernel ? " [kernel]" : "",
                        r->negative_control ? " (negative control)" : ""),
           r->tm->AvailableMask().ToString(), absl::StrCat(r->backend.remote_expiries),
           absl::StrCat(r->backend.on_isolated), absl::StrCat(r->backend.late),
           setup_.isolation_is_recorded ? r->agreement.Text() : "what-if: not compared"});
    }
    out["rows"] = rows;
    absl::StrAppend(&text,
                    TextTable({"participation", "available CPUs", "remote expiries (model)",
                               "on isolated CPUs", "late", "agreement: group states and migrators"},
                              table));
    for (auto& r : rows_) {
      if (!r->kernel || !setup_.isolation_is_recorded) continue;
      out["agreement"] = r->agreement.Json();
      absl::StrAppend(&text, "  the kernel's variant (", r->name, "): ", r->agreement.Text(), "\n");
      for (const std::string& d : r->agreement.first_disagreements)
        absl::StrAppend(&text, "    ", d, "\n");
    }
  }

 private:
  bool AllKnown() const {
    for (bool k : known_) {
      if (!k) return false;
    }
    return true;
  }

  // CLOCK_MONOTONIC of an event: the tick's own hrtimer time, else the
  // trace time (mono when recorded with trace_clock mono; perf's clock is
  // not, the tick's `now` corrects it).
  Nanos MonoNow(const Event& e) {
    if (e.kind == EventKind::kTick && e.wide > 0) mono_offset_ = e.wide - e.time;
    return e.time + mono_offset_;
  }

  // The model's group on `cpu`'s path at `level`.
  static const tmigr::GroupSnapshot* PathGroup(const tmigr::HierarchySnapshot& s, int cpu,
                                               int level) {
    if (cpu < 0 || cpu >= s.num_cpus() || !s.cpus[static_cast<size_t>(cpu)].prepared)
      return nullptr;
    tmigr::GroupId g = s.cpus[static_cast<size_t>(cpu)].group;
    while (g.valid() && g.level < level) g = s.group(g).parent;
    return g.valid() && g.level == level ? &s.group(g) : nullptr;
  }

  // A level-0 group event shows the state of every CPU of the group: the
  // CPUs the replay has not yet seen enter or leave idle take it (idle at
  // the start of the recording, or busy throughout), and the event is not
  // judged.  Returns whether it synchronised anything.
  bool SyncFromGroup(const Event& g) {
    if (g.cpu2 != 0) return false;
    bool synced = false;
    for (auto& r : rows_) {
      if (!r->tm) continue;
      const tmigr::HierarchySnapshot s = r->tm->Snapshot();
      const tmigr::GroupSnapshot* grp = PathGroup(s, g.cpu, 0);
      if (grp == nullptr) continue;
      for (int c = 0; c < s.num_cpus(); ++c) {
        const tmigr::CpuSnapshot& cs = s.cpus[static_cast<size_t>(c)];
        const bool blind = driver_->UnrecordedIdleExits(c) > 0;
        if (c == g.cpu || (known_[static_cast<size_t>(c)] && !blind) || !(cs.group == grp->id))
          continue;
        const bool kernel_active = (g.aux & cs.groupmask) != 0;
        if (kernel_active != r->active[static_cast<size_t>(c)]) {
          if (kernel_active) {
            r->tm->Activate(c);
          } else {
            r->tm->Deactivate(c, kNanosMax);
          }
          r->active[static_cast<size_t>(c)] = kernel_active;
          synced = true;
        }
      }
    }
    for (int c = 0; c < setup_.topology->num_cpus(); ++c) {
      // Every CPU of the group is known from here on (the same on every row).
      if (!rows_.empty() && rows_[0]->tm) {
        const tmigr::HierarchySnapshot s = rows_[0]->tm->Snapshot();
        const tmigr::GroupSnapshot* grp = PathGroup(s, g.cpu, 0);
        if (grp != nullptr && s.cpus[static_cast<size_t>(c)].group == grp->id)
          known_[static_cast<size_t>(c)] = true;
      }
    }
    return synced;
  }

  // A CPU whose idle transitions the recording misses: its state is
  // presumed, and every decision it enters is not judged.
  bool AnyBlind() const {
    for (int c = 0; c < setup_.topology->num_cpus(); ++c) {
      if (driver_->UnrecordedIdleExits(c) > 0) return true;
    }
    return false;
  }

  void JudgeGroup(const Event& g, ReplayDriver& driver) {
    if (!setup_.isolation_is_recorded) return;
    const bool synced = SyncFromGroup(g) || AnyBlind();
    for (auto& r : rows_) {
      if (!r->tm) continue;
      if (synced || !AllKnown()) {
        ++r->agreement.not_judged;
        continue;
      }
      const tmigr::HierarchySnapshot s = r->tm->Snapshot();
      const tmigr::GroupSnapshot* grp = PathGroup(s, g.cpu, g.cpu2);
      const bool same =
          grp != nullptr && grp->state.active == g.aux && grp->state.migrator == g.aux2;
      r->agreement.Judge(same, setup_.options->disagreements, [&] {
        return absl::StrFormat("%s: kernel lvl %d active=%02x migrator=%02x, model %s",
                               DescribeEvent(g, driver), g.cpu2, g.aux, g.aux2,
                               grp == nullptr
                                   ? std::string("has no such group")
                                   : absl::StrFormat("%s active=%02x migrator=%02x", grp->Name(),
                                                     grp->state.active, grp->state.migrator));
      });
    }
  }

  void JudgeMigrator(const Event& e, ReplayDriver& driver) {
    if (!setup_.isolation_is_recorded) return;
    for (auto& r : rows_) {
      if (!r->tm) continue;
      if (!AllKnown() || AnyBlind()) {
        ++r->agreement.not_judged;
        continue;
      }
      const tmigr::HierarchySnapshot s = r->tm->Snapshot();
      const tmigr::GroupSnapshot* grp = PathGroup(s, e.cpu, e.cpu2);
      // This CPU's child of the group: its own bit at level 0, its path's group's bit above.
      uint8_t mine = 0;
      if (grp != nullptr) {
        mine = e.cpu2 == 0 ? s.cpus[static_cast<size_t>(e.cpu)].groupmask
                           : PathGroup(s, e.cpu, e.cpu2 - 1)->groupmask;
      }
      const bool same = grp != nullptr && grp->state.migrator == mine;
      r->agreement.Judge(same, setup_.options->disagreements, [&] {
        return absl::StrFormat(
            "%s: the kernel's CPU %d handled remote timers at lvl %d; the model's migrator there "
            "is %s",
            DescribeEvent(e, driver), e.cpu, e.cpu2,
            grp == nullptr ? std::string("-")
                           : absl::StrFormat("%02x (ours %02x)", grp->state.migrator, mine));
      });
    }
  }

  void KernelTimerStart(const Event& e) {
    if (timers_.size() > (1u << 20))
      timers_.clear();  // bound: a trace that never expires its timers
    timers_[e.ptr] = {e.wide, static_cast<uint32_t>(e.value), e.aux != 0};
  }
  void KernelTimerExpire(const Event& e) {
    auto it = timers_.find(e.ptr);
    if (it == timers_.end()) return;  // armed before the recording
    const KernelTimer t = it->second;
    timers_.erase(it);
    if (!t.flags_exact) {
      ++flags_unknown_;
      return;
    }
    if (!replay::TimerFlags::Global(t.flags)) return;
    ++global_expired_;
    if (setup_.isolation->CpuIsIsolated(e.cpu)) ++global_on_isolated_;
    if (replay::TimerFlags::Cpu(t.flags) != e.cpu) ++global_remote_;
    if (e.wide > t.expires + 1) ++late_timers_;  // jiffies: more than one tick late
  }

  struct KernelTimer {
    int64_t expires;
    uint32_t flags;
    bool flags_exact;
  };

  const ReplaySetup setup_;
  ReplayDriver* driver_ = nullptr;
  std::vector<std::unique_ptr<TmigrRow>> rows_;
  std::string kernel_name_;
  std::string note_;
  std::vector<bool> known_;
  std::vector<std::vector<Event>> held_;  // per CPU: deactivation group events until tmigr_cpu_idle
  absl::flat_hash_map<uint64_t, KernelTimer> timers_;
  Nanos mono_offset_ = 0;
  int64_t kernel_handle_remote_ = 0, kernel_remote_cpus_ = 0, kernel_remote_on_isolated_ = 0;
  int64_t global_expired_ = 0, global_on_isolated_ = 0, global_remote_ = 0, late_timers_ = 0,
          flags_unknown_ = 0;
};

}  // namespace

absl::StatusOr<std::unique_ptr<MechanismReplay>> MakeTmigrReplay(const ReplaySetup& setup) {
  auto r = std::make_unique<TmigrReplay>(setup);
  if (absl::Status s = r->Build(); !s.ok()) return s;
  return r;
}

}  // namespace isolation::experiments
