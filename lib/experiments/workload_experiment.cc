// SPDX-License-Identifier: GPL-2.0-or-later
// `isolab run --workload=rtapp:FILE` (workload_experiment.h): one simulator
// per mechanism row, the workload's threads under that row's adapter.

#include "experiments/workload_experiment.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "core/status_macros.h"
#include "experiments/registered.h"
#include "experiments/replay_mechanisms.h"
#include "experiments/vmstat_experiment.h"
#include "isolation/idle_select/hooks.h"
#include "isolation/idle_select/idle_select.h"
#include "isolation/mm_cid/hooks.h"
#include "isolation/mm_cid/mm_cid.h"
#include "isolation/mm_cid/registry.h"
#include "isolation/runtime/noise_meter.h"
#include "isolation/runtime/sim.h"
#include "isolation/tmigr/hooks.h"
#include "isolation/tmigr/timers.h"
#include "isolation/vmstat/hooks.h"
#include "isolation/vmstat/items.h"
#include "isolation/vmstat/vmstat.h"
#include "isolation/replay/readers.h"
#include "isolation/replay/recording.h"
#include "isolation/workload/recorded.h"
#include "isolation/workload/rtapp.h"

namespace isolation::experiments {
namespace {

using workload::RecordedRun;
using workload::RecordedWorkload;
using workload::RtAppDescription;
using workload::RtAppRun;
using workload::RtAppRunOptions;
using workload::RtAppThreadStats;

constexpr const char* kMechanisms[] = {"mm_cid", "tmigr", "idle_select", "vmstat"};
constexpr Nanos kUntilEndBound = 60 * kNsPerSec;

using KernelEntry = absl::AnyInvocable<void(CpuContext&, TaskId)>;

// One workload thread's figures, whatever the workload's language.
struct ThreadFigures {
  TaskId id = kIdleTask;
  std::vector<int> cpus;  // its affinity; empty = every CPU
  int64_t wakeups = 0;
  int64_t timer_waits = 0;
  int64_t timer_misses = 0;
  int64_t timer_wakeups = 0;  // timer sleeps that ended: the latency samples
  Nanos max_timer_latency_ns = 0;
  Nanos sum_timer_latency_ns = 0;
  bool ended = false;
};

// A workload started on a simulator.
class Instance {
 public:
  virtual ~Instance() = default;
  virtual absl::StatusOr<Nanos> Run(Nanos duration) = 0;
  virtual std::vector<ThreadFigures> Threads() const = 0;
  // Figures only this kind of workload has (a recording's reproduction).
  virtual void Extra(nlohmann::json& j, std::vector<std::string>& cells) const {
    (void)j;
    (void)cells;
  }
  // Timer wake-up latencies per CPU (rt-app timer events), for --hist.
  virtual std::vector<std::pair<int, NoiseResult>> TimerLatencies() const { return {}; }
};

class RtAppInstance final : public Instance {
 public:
  explicit RtAppInstance(std::unique_ptr<RtAppRun> run) : run_(std::move(run)) {}
  absl::StatusOr<Nanos> Run(Nanos duration) override {
    (void)duration;  // the description's, set before Start
    return run_->RunToEnd(kUntilEndBound);
  }
  std::vector<ThreadFigures> Threads() const override {
    std::vector<ThreadFigures> out;
    const RtAppDescription& d = run_->description();
    for (const RtAppThreadStats& t : run_->Threads()) {
      ThreadFigures f;
      f.id = t.id;
      for (const workload::RtAppTask& task : d.tasks) {
        if (task.name == t.task) f.cpus = task.cpus;
      }
      f.wakeups = t.wakeups;
      f.timer_waits = t.timer_waits;
      f.timer_wakeups = t.timer_wakeups;
      f.timer_misses = t.timer_misses;
      f.max_timer_latency_ns = t.max_timer_latency_ns;
      f.sum_timer_latency_ns = t.sum_timer_latency_ns;
      f.ended = t.ended;
      out.push_back(std::move(f));
    }
    return out;
  }
  std::vector<std::pair<int, NoiseResult>> TimerLatencies() const override {
    return run_->TimerLatencies();
  }

 private:
  std::unique_ptr<RtAppRun> run_;
};

class RecordedInstance final : public Instance {
 public:
  explicit RecordedInstance(std::unique_ptr<RecordedRun> run) : run_(std::move(run)) {}
  absl::StatusOr<Nanos> Run(Nanos duration) override {
    (void)duration;  // the recording's own length
    return run_->RunToEnd();
  }
  std::vector<ThreadFigures> Threads() const override {
    std::vector<ThreadFigures> out;
    const std::vector<workload::RecordedTaskStats> stats = run_->Tasks();
    for (size_t i = 0; i < stats.size(); ++i) {
      ThreadFigures f;
      f.id = stats[i].id;
      f.cpus = run_->workload().tasks[i].cpus;
      f.wakeups = stats[i].wakeups;
      f.ended = stats[i].ended;
      out.push_back(std::move(f));
    }
    return out;
  }
  // The closed loop against the recording: totals and the share of tasks
  // (1 ms of recorded run or more) within 10 % of their own run time and
  // wake-ups (docs/workloads.md states the tolerance).
  void Extra(nlohmann::json& j, std::vector<std::string>& cells) const override {
    const std::vector<workload::RecordedTaskStats> stats = run_->Tasks();
    const RecordedWorkload& w = run_->workload();
    double run_model = 0, run_rec = 0, wk_model = 0, wk_rec = 0;
    int judged = 0, within = 0;
    for (size_t i = 0; i < stats.size(); ++i) {
      const workload::RecordedTask& t = w.tasks[i];
      Nanos scripted = 0;
      for (const workload::RecordedAction& a : t.script) {
        if (a.kind == workload::RecordedAction::Kind::kRun) scripted += a.ns;
      }
      run_model += static_cast<double>(stats[i].run_ns);
      run_rec += static_cast<double>(scripted);
      wk_model += static_cast<double>(stats[i].wakeups);
      wk_rec += static_cast<double>(t.recorded_wakeups);
      if (t.recorded_run_ns < kNsPerMs) continue;
      ++judged;
      const double d = scripted > 0 ? std::abs(static_cast<double>(stats[i].run_ns - scripted)) /
                                          static_cast<double>(scripted)
                                    : 0.0;
      const double dw = t.recorded_wakeups > 0
                            ? std::abs(static_cast<double>(stats[i].wakeups - t.recorded_wakeups)) /
                                  static_cast<double>(t.recorded_wakeups)
                            : 0.0;
      if (d <= 0.10 && dw <= 0.10) ++within;
    }
    const double run_ratio = run_rec > 0 ? run_model / run_rec : 0.0;
    const double wk_ratio = wk_rec > 0 ? wk_model / wk_rec : 0.0;
    j["reproduced"] = {{"run_time_ratio", run_ratio},
                       {"wakeup_ratio", wk_ratio},
                       {"tasks_judged", judged},
                       {"tasks_within_10pct", within}};
    cells.push_back(absl::StrFormat("run %.3f, wake-ups %.3f, %d of %d tasks", run_ratio, wk_ratio,
                                    within, judged));
  }

 private:
  std::unique_ptr<RecordedRun> run_;
};

// The workload of --workload, read once and started once per row.
struct Source {
  bool recorded = false;
  RtAppDescription rtapp;
  std::shared_ptr<const RecordedWorkload> trace;  // one conversion for every row
  replay::RecordingInfo info;
  std::vector<std::string> notes;
  // What the mechanisms must be sized for: threads (an rt-app file that forks
  // may reach kRtAppMaxThreads), address spaces, and the recording's size.
  int64_t threads = 0;
  int64_t groups = 1;
  int64_t actions = 0;
  int64_t events = 0;
  absl::StatusOr<std::unique_ptr<Instance>> Start(Simulator& sim, Nanos duration, KernelEntry entry,
                                                  const NoiseHistogramOptions& shape) const {
    if (recorded) {
      ISOLATION_ASSIGN_OR_RETURN(std::unique_ptr<RecordedRun> run,
                                 RecordedRun::Start(trace, sim, std::move(entry)));
      return std::unique_ptr<Instance>(new RecordedInstance(std::move(run)));
    }
    RtAppDescription d = rtapp;
    d.duration = duration;
    RtAppRunOptions o;
    o.on_kernel_entry = std::move(entry);
    o.timer_latency_histogram = shape;
    ISOLATION_ASSIGN_OR_RETURN(std::unique_ptr<RtAppRun> run,
                               RtAppRun::Start(d, sim, std::move(o)));
    return std::unique_ptr<Instance>(new RtAppInstance(std::move(run)));
  }
};

// One row's run: the mechanism's adapter on a fresh simulator, attached
// before the workload starts; `figures` reads the mechanism after the run.
struct RowSetup {
  std::vector<std::unique_ptr<Hooks>> hooks;  // owned adapters, in AddHooks order
  std::function<KernelEntry()> kernel_entry;
  std::function<absl::Status(Simulator&, const Instance&)> after_start;
  std::function<void(const Simulator&, nlohmann::json&, std::vector<std::string>&)> figures;
  std::vector<std::shared_ptr<void>> keep;  // mechanism state the adapters point into
};

// The workload figures every row has.
void WorkloadFigures(const Simulator& sim, const Instance& run, Nanos ran, nlohmann::json& j,
                     std::vector<std::string>& cells) {
  int64_t wakeups = 0;
  int64_t timer_waits = 0;
  int64_t misses = 0;
  Nanos max_latency = 0;
  Nanos sum_latency = 0;
  int64_t ended = 0;
  int64_t samples = 0;  // timer sleeps that ended (those still asleep have no latency yet)
  const std::vector<ThreadFigures> threads = run.Threads();
  for (const ThreadFigures& t : threads) {
    samples += t.timer_wakeups;
    wakeups += t.wakeups;
    timer_waits += t.timer_waits;
    misses += t.timer_misses;
    max_latency = std::max(max_latency, t.max_timer_latency_ns);
    sum_latency += t.sum_timer_latency_ns;
    ended += t.ended ? 1 : 0;
  }
  int64_t interruptions = 0;
  Nanos max_stall = 0;
  for (int c = 0; c < sim.num_cpus(); ++c) {
    if (!sim.isolation().CpuIsIsolated(c)) continue;
    const CpuStats s = sim.Stats(c);
    interruptions += s.interruptions;
    max_stall = std::max(max_stall, s.max_stall_ns);
  }
  const double mean_latency_us =
      samples > 0 ? static_cast<double>(sum_latency) / static_cast<double>(samples) / 1000.0 : 0.0;
  j["ran_ns"] = ran;
  j["threads"] = threads.size();
  j["threads_ended"] = ended;
  j["wakeups"] = wakeups;
  j["timer_waits"] = timer_waits;
  j["timer_misses"] = misses;
  j["timer_latency_max_ns"] = max_latency;
  j["timer_latency_mean_us"] = mean_latency_us;
  j["isolated_interruptions"] = interruptions;
  j["isolated_max_stall_ns"] = max_stall;
  cells.push_back(absl::StrCat(wakeups));
  cells.push_back(absl::StrCat(misses, "/", timer_waits));
  cells.push_back(
      absl::StrFormat("%.1f / %.1f", mean_latency_us, static_cast<double>(max_latency) / 1000.0));
  cells.push_back(absl::StrCat(interruptions));
  cells.push_back(absl::StrFormat("%.1f", static_cast<double>(max_stall) / 1000.0));
}

// Task ids the adapters must track: the workload's threads, one tmigr
// housekeeping task per CPU and a margin; bounded by the adapters' own limits.
int TrackedTasks(const Source& source, const Topology& topo, int64_t limit) {
  return static_cast<int>(std::min<int64_t>(limit, source.threads + topo.num_cpus() + 64));
}

absl::StatusOr<RowSetup> MmCidRow(const std::string& name, const Topology& topo,
                                  const Source& source) {
  ISOLATION_ASSIGN_OR_RETURN(mm_cid::MmCidVariant v, mm_cid::ParseVariant(name));
  ISOLATION_ASSIGN_OR_RETURN(
      std::unique_ptr<mm_cid::MmCid> m,
      mm_cid::MmCid::Create(
          topo.num_cpus(), v,
          mm_cid::MmCid::Limits{
              .max_tasks = TrackedTasks(source, topo, mm_cid::kMaxTasks),
              .max_mms = static_cast<int>(std::min<int64_t>(mm_cid::kMaxMms, source.groups + 2))}));
  RowSetup r;
  auto mech = std::shared_ptr<mm_cid::MmCid>(std::move(m));
  auto hooks = std::make_unique<mm_cid::MmCidHooks>(*mech);
  mm_cid::MmCidHooks* h = hooks.get();
  r.keep.push_back(mech);
  r.hooks.push_back(std::move(hooks));
  r.figures = [h](const Simulator&, nlohmann::json& j, std::vector<std::string>& cells) {
    h->Drain();
    j["scans"] = h->TotalScans();
    j["scans_on_isolated_cpus"] = h->ScansOnIsolatedCpus();
    j["isolated_max_scan_stall_ns"] = h->IsolatedMaxStallNs();
    j["invariant_violations"] = h->violations();
    // Tasks or address spaces the model could not take (its limits): never
    // silently left out.
    j["errors"] = h->errors();
    cells.push_back(
        absl::StrCat(h->TotalScans(), " (", h->ScansOnIsolatedCpus(), " isolated)",
                     h->errors() > 0 ? absl::StrCat(", ", h->errors(), " errors") : ""));
    cells.push_back(
        absl::StrFormat("%.1f us", static_cast<double>(h->IsolatedMaxStallNs()) / 1000.0));
  };
  return r;
}

absl::StatusOr<RowSetup> TmigrRow(const std::string& name, const Topology& topo,
                                  const IsolationConfig& iso, Nanos tick_period) {
  tmigr::Options o;
  o.participation = name;
  ISOLATION_ASSIGN_OR_RETURN(
      std::unique_ptr<tmigr::TimerSystem> ts,
      tmigr::TimerSystem::Create(topo, o, tmigr::TimerSystem::Config{tick_period}));
  ISOLATION_RETURN_IF_ERROR(ts->tmigr().SetIsolation(iso));
  ISOLATION_RETURN_IF_ERROR(ts->BootAll());
  ts->tmigr().InitIsolation();
  RowSetup r;
  auto system = std::shared_ptr<tmigr::TimerSystem>(std::move(ts));
  auto hooks = std::make_unique<tmigr::TmigrHooks>(*system, tmigr::TmigrHooks::Config{});
  tmigr::TmigrHooks* h = hooks.get();
  r.keep.push_back(system);
  r.hooks.push_back(std::move(hooks));
  r.after_start = [h](Simulator& sim, const Instance&) -> absl::Status {
    // The global timers: one delayed-work owner per housekeeping CPU, a
    // 100 us burst every 10 jiffies arming a timer 4 jiffies ahead (10 ms and
    // 4 ms at HZ=1000, as `isolab tmigr`): the hierarchy takes a timer only
    // when it is more than a jiffy ahead, and pulls one only in an idle
    // window longer than that (tmigr/workload.h), at any HZ.
    const Nanos jiffy = sim.tick_period();
    for (int c = 0; c < sim.num_cpus(); ++c) {
      if (sim.isolation().CpuIsIsolated(c)) continue;
      TaskSpec t;
      t.name = absl::StrCat("delayed_work/", c);
      t.cpu = c;
      t.affinity = CpuMask::Of(sim.num_cpus(), c);
      t.group = 1;  // not the workload's address space
      t.body = h->MakeHousekeepingTask(c, 10 * jiffy, 100 * kNsPerUs, 4 * jiffy);
      ISOLATION_RETURN_IF_ERROR(sim.Spawn(std::move(t)).status());
    }
    return absl::OkStatus();
  };
  r.figures = [h](const Simulator& sim, nlohmann::json& j, std::vector<std::string>& cells) {
    int64_t on_isolated = 0;
    int64_t remote_on_isolated = 0;
    int64_t total = 0;
    for (int c = 0; c < sim.num_cpus(); ++c) {
      total += h->callbacks_on(c);
      if (!sim.isolation().CpuIsIsolated(c)) continue;
      on_isolated += h->callbacks_on(c);
      remote_on_isolated += h->remote_callbacks_on(c);
    }
    j["timer_callbacks"] = total;
    j["timer_callbacks_on_isolated_cpus"] = on_isolated;
    j["remote_timer_callbacks_on_isolated_cpus"] = remote_on_isolated;
    j["status"] = std::string(h->status().message());
    cells.push_back(absl::StrCat(on_isolated, " of ", total, " (", remote_on_isolated, " pulled)"));
  };
  return r;
}

absl::StatusOr<RowSetup> IdleRow(const std::string& name, const Topology& topo,
                                 const IsolationConfig& iso, const Source& source) {
  idle_select::Options o;
  o.variant = name;
  ISOLATION_ASSIGN_OR_RETURN(
      std::unique_ptr<idle_select::IdleState> st,
      idle_select::IdleState::Create(idle_select::IdleTopology::From(topo, iso), o));
  RowSetup r;
  auto state = std::shared_ptr<idle_select::IdleState>(std::move(st));
  idle_select::HarnessOptions ho;
  ho.max_tasks = TrackedTasks(source, topo, idle_select::kMaxHarnessTasks);
  auto hooks = std::make_unique<idle_select::IdleSelectHooks>(*state, ho);
  idle_select::IdleSelectHooks* h = hooks.get();
  r.keep.push_back(state);
  r.hooks.push_back(std::move(hooks));
  r.after_start = [h](Simulator& sim, const Instance& run) -> absl::Status {
    for (const ThreadFigures& t : run.Threads()) {
      CpuMask mask(sim.num_cpus());
      for (int c = 0; c < sim.num_cpus(); ++c) {
        if (t.cpus.empty() || std::binary_search(t.cpus.begin(), t.cpus.end(), c)) mask.Set(c);
      }
      if (mask.Empty()) {
        for (int c = 0; c < sim.num_cpus(); ++c) mask.Set(c);
      }
      ISOLATION_RETURN_IF_ERROR(h->RegisterTask(t.id, mask));
    }
    return absl::OkStatus();
  };
  r.figures = [h](const Simulator&, nlohmann::json& j, std::vector<std::string>& cells) {
    const idle_select::HarnessCounters c = h->counters();
    j["selections"] = c.selections;
    j["idle_found"] = c.idle_found;
    j["migrations"] = c.migrations;
    j["placed_on_busy"] = c.placed_on_busy;
    j["invariant_violations"] = c.invariant_violations;
    const double share =
        c.selections > 0 ? 100.0 * static_cast<double>(c.idle_found) / c.selections : 0.0;
    cells.push_back(absl::StrFormat("%d (%.1f %% idle found, %d migrations)", c.selections, share,
                                    c.migrations));
  };
  return r;
}

absl::StatusOr<RowSetup> VmstatRow(const std::string& name, const Topology& topo,
                                   const IsolationConfig& iso) {
  ISOLATION_ASSIGN_OR_RETURN(std::unique_ptr<vmstat::Vmstat> v,
                             vmstat::Vmstat::Create(VmstatModelConfig(name, topo, iso, kNsPerSec)));
  RowSetup r;
  auto vm = std::shared_ptr<vmstat::Vmstat>(std::move(v));
  auto hooks = std::make_unique<vmstat::VmstatHooks>(*vm);
  r.keep.push_back(vm);
  r.hooks.push_back(std::move(hooks));
  // Per CPU, entries alternate +1 and -1 page: the differential stays within
  // every threshold (no fold from the update itself) and is non-zero after
  // every other entry, so only the deferred work or a fold at return to
  // user clears it -- the seeds' mlock/munlock pattern.
  auto signs = std::make_shared<std::vector<int64_t>>(static_cast<size_t>(topo.num_cpus()), 1);
  r.keep.push_back(signs);
  const int nodes = std::max(1, topo.num_nodes());
  r.kernel_entry = [vm, signs, nodes, &topo]() -> KernelEntry {
    return [vm, signs, nodes, &topo](CpuContext& k, TaskId) {
      const int zone = 1 + topo.node_of(k.cpu()) % nodes;
      int64_t& sign = (*signs)[static_cast<size_t>(k.cpu())];
      vm->Mod(k.cpu(), vmstat::StatKind::kZone, zone, vmstat::kZoneMlock, sign);
      sign = -sign;
    };
  };
  r.figures = [vm](const Simulator& sim, nlohmann::json& j, std::vector<std::string>& cells) {
    int64_t isolated_runs = 0;
    int64_t runs = 0;
    int64_t residue = 0;
    for (int c = 0; c < sim.num_cpus(); ++c) {
      const int64_t w = vm->Counters(c).work_runs;
      runs += w;
      if (!sim.isolation().CpuIsIsolated(c)) continue;
      isolated_runs += w;
      residue = std::max(residue, vm->MaxAbsDiff(c));
    }
    j["vmstat_update_runs"] = runs;
    j["vmstat_update_runs_on_isolated_cpus"] = isolated_runs;
    j["isolated_max_residue"] = residue;
    cells.push_back(absl::StrCat(isolated_runs, " of ", runs, " (residue ", residue, ")"));
  };
  return r;
}

absl::StatusOr<std::vector<std::string>> RowsOf(const std::string& mechanism,
                                                const WorkloadExperimentOptions& options) {
  auto it = options.variants.find(mechanism);
  if (it == options.variants.end()) {
    if (mechanism == "mm_cid") {
      std::vector<std::string> names;
      for (const mm_cid::MmCidVariant& v : mm_cid::CoveringVariants()) names.push_back(v.Name());
      return names;
    }
    if (mechanism == "tmigr") return DefaultTmigrVariants();
    if (mechanism == "idle_select") return DefaultIdleVariants();
    return DefaultVmstatStrategies();
  }
  std::vector<std::string> names;
  for (const std::string& n : it->second) {
    if (mechanism == "mm_cid") {
      absl::StatusOr<mm_cid::MmCidVariant> v = mm_cid::ParseVariant(n);
      if (!v.ok()) {
        return absl::InvalidArgumentError(absl::StrCat("--mmcid_variants: ", v.status().message()));
      }
      names.push_back(v->Name());
    } else if (mechanism == "tmigr") {
      ISOLATION_ASSIGN_OR_RETURN(std::string r, ResolveParticipation("--tmigr_variants", n));
      names.push_back(r);
    } else if (mechanism == "idle_select") {
      ISOLATION_ASSIGN_OR_RETURN(std::string r, ResolveSelector("--idle_variants", n));
      names.push_back(r);
    } else {
      ISOLATION_ASSIGN_OR_RETURN(std::string r, ResolveFoldPolicy("--vmstat_strategies", n));
      names.push_back(r);
    }
  }
  return names;
}

struct Validated {
  Source source;
  std::vector<std::pair<std::string, std::vector<std::string>>> rows;  // mechanism -> names
  Nanos duration = 0;  // rt-app: the run's (-1: until the threads end)
};

// --variants: each name to the mechanism whose registry knows it.
absl::StatusOr<std::map<std::string, std::vector<std::string>>> ResolveAnyVariants(
    const std::vector<std::string>& names) {
  std::map<std::string, std::vector<std::string>> rows;
  for (const std::string& n : names) {
    std::vector<std::pair<std::string, std::string>> hits;  // mechanism, spelling
    if (absl::StatusOr<mm_cid::MmCidVariant> m = mm_cid::ParseVariant(n); m.ok()) {
      hits.emplace_back("mm_cid", m->Name());
    }
    if (absl::StatusOr<std::string> t = ResolveParticipation("--variants", n); t.ok()) {
      hits.emplace_back("tmigr", *t);
    }
    if (absl::StatusOr<std::string> i = ResolveSelector("--variants", n); i.ok()) {
      hits.emplace_back("idle_select", *i);
    }
    if (absl::StatusOr<std::string> f = ResolveFoldPolicy("--variants", n); f.ok()) {
      hits.emplace_back("vmstat", *f);
    }
    if (hits.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--variants: '", n,
                       "' is no registered variant of mm_cid, tmigr, idle_select or "
                       "vmstat (isolab variants lists them)"));
    }
    if (hits.size() > 1) {
      return absl::InvalidArgumentError(absl::StrCat("--variants: '", n, "' names a variant of ",
                                                     hits[0].first, " and of ", hits[1].first,
                                                     ": use that mechanism's own flag"));
    }
    rows[hits[0].first].push_back(hits[0].second);
  }
  return rows;
}

absl::StatusOr<Validated> Validate(const WorkloadExperimentOptions& given) {
  WorkloadExperimentOptions options = given;
  if (!options.any_variants.empty()) {
    ISOLATION_ASSIGN_OR_RETURN(auto rows, ResolveAnyVariants(options.any_variants));
    std::vector<std::string> mechanisms;
    for (const std::string& m : options.mechanisms) {
      if (rows.count(m) == 0) continue;
      mechanisms.push_back(m);
      if (options.variants.count(m) == 0) options.variants[m] = rows[m];
    }
    options.mechanisms = std::move(mechanisms);
  }
  Validated v;
  const bool rtapp = absl::StartsWith(options.workload, "rtapp:");
  const bool trace = absl::StartsWith(options.workload, "trace:");
  const size_t colon = options.workload.find(':');
  if ((!rtapp && !trace) || colon + 1 >= options.workload.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--workload='", options.workload,
                     "': want rtapp:FILE (an rt-app JSON file) or trace:FILE (a recording)"));
  }
  if (options.duration_ms < 0 || options.duration_ms > 3'600'000) {
    return absl::InvalidArgumentError(
        absl::StrCat("--run_duration_ms=", options.duration_ms, ": want 0..3600000"));
  }
  if (!(options.cpu_scale > 0.0 && options.cpu_scale <= 100.0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--cpu_scale=", options.cpu_scale, ": want a value in (0, 100]"));
  }
  if (trace && options.duration_ms > 0) {
    return absl::InvalidArgumentError(
        "--run_duration_ms: a recording runs for its own length (drop the flag)");
  }
  if (rtapp && options.cpu_scale != 1.0) {
    return absl::InvalidArgumentError(
        "--cpu_scale: scales a recording's run times; an rt-app run is already in model time");
  }
  const std::string path = options.workload.substr(colon + 1);
  if (rtapp) {
    ISOLATION_ASSIGN_OR_RETURN(v.source.rtapp, workload::LoadRtApp(path));
    v.source.notes = v.source.rtapp.notes;
    bool forks = false;
    for (const workload::RtAppTask& t : v.source.rtapp.tasks) {
      v.source.threads += t.instances;
      for (const workload::RtAppPhase& p : t.phases) {
        for (const workload::RtAppEvent& e : p.events) {
          forks = forks || e.kind == workload::RtAppEventKind::kFork;
        }
      }
    }
    if (forks) v.source.threads = workload::kRtAppMaxThreads;
    v.duration = options.duration_ms > 0 ? options.duration_ms * kNsPerMs : v.source.rtapp.duration;
  } else {
    ISOLATION_ASSIGN_OR_RETURN(replay::Recording recording, replay::ReadRecording(path));
    ISOLATION_ASSIGN_OR_RETURN(
        RecordedWorkload converted,
        workload::WorkloadFromRecording(recording, {.cpu_scale = options.cpu_scale}));
    const RecordedWorkload& trace =
        *(v.source.trace = std::make_shared<const RecordedWorkload>(std::move(converted)));
    v.source.recorded = true;
    v.source.info = recording.info;
    v.source.events = static_cast<int64_t>(recording.events.size());
    v.source.threads = static_cast<int64_t>(trace.tasks.size());
    std::set<int> groups;
    for (const workload::RecordedTask& t : trace.tasks) {
      groups.insert(t.group);
      v.source.actions += static_cast<int64_t>(t.script.size());
    }
    v.source.groups = static_cast<int64_t>(groups.size());
    v.source.notes = trace.notes;
    v.source.notes.push_back(absl::StrCat(
        trace.tasks.size(), " recorded tasks; ", trace.blocks_woken_by_tasks,
        " blocks ended by a recorded task's wake-up (replayed as wake-ups), ", trace.blocks_timed,
        " by an interrupt or timer (replayed as sleeps); run times x ", options.cpu_scale));
    v.duration = trace.duration;
  }
  for (const std::string& m : options.mechanisms) {
    if (std::find(std::begin(kMechanisms), std::end(kMechanisms), m) == std::end(kMechanisms)) {
      return absl::InvalidArgumentError(
          absl::StrCat("--run_mechanisms: unknown mechanism '", m,
                       "' (want mm_cid, tmigr, idle_select, vmstat)"));
    }
    ISOLATION_ASSIGN_OR_RETURN(std::vector<std::string> names, RowsOf(m, options));
    v.rows.emplace_back(m, std::move(names));
  }
  return v;
}

// The model machine: --topology / --isolcpus, except that for a recording
// "seed" (their default) means the recorded machine and isolation, as in
// `isolab replay`.
struct Machine {
  Topology topology;
  IsolationConfig isolation;
  int hz = 1000;
};

absl::StatusOr<Machine> ModelMachine(const CommonOptions& common, const Source& source) {
  if (!source.recorded) {
    ISOLATION_ASSIGN_OR_RETURN(Topology topo, LoadTopology(common));
    ISOLATION_ASSIGN_OR_RETURN(IsolationConfig iso, LoadIsolation(common, topo));
    return Machine{std::move(topo), std::move(iso), 1000};
  }
  replay::RecordingInfo info = source.info;
  if (common.topology != "seed") {
    info.topology = common.topology;
    info.core_of.clear();
    info.llc_of.clear();
    info.node_of.clear();
    info.package_of.clear();
  }
  ISOLATION_ASSIGN_OR_RETURN(Topology topo, replay::MachineTopology(info));
  ISOLATION_ASSIGN_OR_RETURN(
      IsolationConfig iso,
      IsolationConfig::FromFlags(topo, common.isolcpus == "seed" ? info.isolcpus : common.isolcpus,
                                 common.nohz_full.empty() ? info.nohz_full : common.nohz_full));
  return Machine{std::move(topo), std::move(iso), info.hz > 0 ? info.hz : 250};
}

}  // namespace

absl::StatusOr<RunCost> EstimateWorkloadExperiment(const CommonOptions& common,
                                                   const WorkloadExperimentOptions& options) {
  ISOLATION_ASSIGN_OR_RETURN(Validated v, Validate(options));
  ISOLATION_ASSIGN_OR_RETURN(Machine machine, ModelMachine(common, v.source));
  const Topology& topo = machine.topology;
  size_t rows = 0;
  for (const auto& [m, names] : v.rows) rows += names.size();
  const double seconds_run =
      static_cast<double>(v.duration > 0 ? v.duration : kUntilEndBound) / kNsPerSec;
  RunCost cost;
  // Per row: every CPU ticks (~1 us of host time per simulated tick at
  // HZ=1000, measured for the seed machine's idle-heavy runs) plus the
  // workload's own events.
  cost.seconds = static_cast<double>(rows) * seconds_run * topo.num_cpus() * 1e-3 * 0.5;
  // One row's simulator and mechanism, plus (a recording) its events while
  // they are converted and the one shared conversion.
  cost.bytes = 64.0 * 1024 * 1024 + 56.0 * static_cast<double>(v.source.events) +
               32.0 * static_cast<double>(v.source.actions);
  cost.basis =
      absl::StrCat("run: ", rows, " rows x ", seconds_run, " s x ", topo.num_cpus(), " CPUs");
  return cost;
}

absl::StatusOr<ExperimentReport> RunWorkloadExperiment(const CommonOptions& common,
                                                       const WorkloadExperimentOptions& options,
                                                       Progress& progress) {
  ISOLATION_ASSIGN_OR_RETURN(Validated v, Validate(options));
  ISOLATION_ASSIGN_OR_RETURN(Machine machine, ModelMachine(common, v.source));
  const Topology& topo = machine.topology;
  const IsolationConfig& iso = machine.isolation;
  ExperimentReport report;
  nlohmann::json& out = report.json;
  out["experiment"] = "run";
  out["workload"] = options.workload;
  out["machine"] = {{"cpus", topo.num_cpus()},
                    {"topology", common.topology},
                    {"isolated", iso.isolcpus_domain().ToString()},
                    {"nohz_full", iso.nohz_full().ToString()}};
  out["seed"] = common.seed;
  out["notes"] = v.source.notes;
  absl::StrAppend(&report.text, "Workload ", options.workload, " on ", topo.num_cpus(),
                  " model CPUs (isolated: ", iso.isolcpus_domain().ToString(), "), seed ",
                  common.seed, "\n");
  for (const std::string& n : v.source.notes) absl::StrAppend(&report.text, "  note: ", n, "\n");
  size_t total_rows = 0;
  for (const auto& [m, names] : v.rows) total_rows += names.size();
  size_t done = 0;
  for (const auto& [mechanism, names] : v.rows) {
    nlohmann::json rows = nlohmann::json::array();
    std::vector<std::vector<std::string>> table;
    std::string extra_text;  // the rows' rtla tables, after the mechanism's table
    for (const std::string& name : names) {
      progress.Update(absl::StrCat(mechanism, " ", name),
                      static_cast<double>(done++) / static_cast<double>(total_rows));
      // A recording's on-CPU times include the kernel's own costs: its
      // simulator charges none on top (only what the mechanisms charge).
      SimOptions so =
          v.source.recorded ? ZeroCostSimOptions(machine.hz, common.seed) : SimOptions{};
      so.seed = common.seed;
      ISOLATION_ASSIGN_OR_RETURN(std::unique_ptr<Simulator> sim, Simulator::Create(topo, iso, so));
      absl::StatusOr<RowSetup> setup =
          mechanism == "mm_cid"        ? MmCidRow(name, topo, v.source)
          : mechanism == "tmigr"       ? TmigrRow(name, topo, iso, sim->tick_period())
          : mechanism == "idle_select" ? IdleRow(name, topo, iso, v.source)
                                       : VmstatRow(name, topo, iso);
      if (!setup.ok()) {
        // A variant that refuses this machine (sched_ext under isolcpus=domain)
        // is a row that says so, as in `isolab replay`.
        rows.push_back({{"variant", name}, {"error", std::string(setup.status().message())}});
        table.push_back(
            {name, "-", "-", "-", "-", "-", absl::StrCat("refused: ", setup.status().message())});
        continue;
      }
      for (const auto& h : setup->hooks) sim->AddHooks(h.get());
      ISOLATION_ASSIGN_OR_RETURN(
          std::unique_ptr<Instance> run,
          v.source.Start(*sim, v.duration,
                         setup->kernel_entry ? setup->kernel_entry() : KernelEntry(nullptr),
                         common.hist.shape));
      if (setup->after_start) {
        if (absl::Status st = setup->after_start(*sim, *run); !st.ok()) {
          rows.push_back({{"variant", name}, {"error", std::string(st.message())}});
          table.push_back({name, "-", "-", "-", "-", "-", absl::StrCat("failed: ", st.message())});
          continue;
        }
      }
      ISOLATION_ASSIGN_OR_RETURN(Nanos ran, run->Run(v.duration));
      nlohmann::json j{{"variant", name}};
      std::vector<std::string> cells{name};
      WorkloadFigures(*sim, *run, ran, j, cells);
      setup->figures(*sim, j, cells);
      run->Extra(j, cells);
      if (j.contains("invariant_violations")) {
        report.invariant_violations += j["invariant_violations"].get<int64_t>();
      }
      // rtla's formats (docs/workloads.md): timerlat hist of the rt-app
      // timer latencies (--hist), osnoise top of the isolated CPUs.
      if (common.hist.print) {
        const std::vector<std::pair<int, NoiseResult>> lat = run->TimerLatencies();
        if (!lat.empty()) {
          RtlaHistogramFormat f;
          f.tool = "timerlat";
          f.column = "Thr";
          f.no_zero_lines = common.hist.no_zero_lines;
          f.comment.push_back(absl::StrCat("isolab run, ", mechanism, " ", name,
                                           ": rt-app timer wake-up latency (modelled)"));
          ISOLATION_ASSIGN_OR_RETURN(std::string h, FormatRtlaHistogram(lat, f));
          absl::StrAppend(&extra_text, "\n", h);
        }
      }
      if (options.osnoise_top) {
        std::vector<std::pair<int, CpuStats>> per_cpu;
        for (int c = 0; c < sim->num_cpus(); ++c) {
          if (iso.CpuIsIsolated(c) || iso.isolcpus_domain().Empty()) {
            per_cpu.emplace_back(c, sim->Stats(c));
          }
        }
        absl::StrAppend(
            &extra_text, "\n",
            FormatRtlaOsnoiseTop(
                per_cpu, ran, {absl::StrCat("isolab run, ", mechanism, " ", name, " (modelled)")}));
      }
      rows.push_back(std::move(j));
      table.push_back(std::move(cells));
    }
    out["mechanisms"][mechanism] = std::move(rows);
    const char* column = mechanism == "mm_cid"        ? "scans"
                         : mechanism == "tmigr"       ? "timer callbacks on isolated CPUs"
                         : mechanism == "idle_select" ? "selections"
                                                      : "vmstat_update on isolated CPUs";
    std::vector<std::string> header{"variant",
                                    "wake-ups",
                                    "timer misses",
                                    "timer lat. mean/max us",
                                    "isolated interruptions",
                                    "isolated max stall us",
                                    column};
    if (mechanism == "mm_cid") header.push_back("isolated max scan stall");
    if (v.source.recorded) header.push_back("closed loop / recording");
    absl::StrAppend(&report.text, "\n", mechanism, ":\n", TextTable(header, table), extra_text);
  }
  progress.Done();
  FinishReport(ConfigurationWarnings(common), report);
  return report;
}

}  // namespace isolation::experiments
