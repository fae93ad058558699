// SPDX-License-Identifier: GPL-2.0-or-later
//
// `isolab mmcid`: the seed thread's question in one command -- does scanning
// a smaller set keep mm_cid compaction correct, and how long does the
// compaction work stall an isolated CPU in each placement?
//
//   scan        slot visits and host-measured time of one scan (or one batch
//               call) per strategy, for an mm whose only task is pinned to
//               one isolated CPU (S12).
//   placement   the S11 workload on the simulator (per isolated CPU: an 80 %
//               hog in its own mm + a 1 ms periodic probe of one shared mm;
//               a multi-threaded mm on the housekeeping CPUs): the longest
//               compaction stall on an isolated CPU, modelled at 130 ns per
//               slot visit (calibrated at 30-35 us per 256 visits).
//   compaction  the S4 compaction test on the simulator per strategy.
//
// --trace records the three placement runs (task, workqueue, rcu).
//
// Kernel counterpart: task_mm_cid_work() and its callers (kernel/sched/core.c,
// v6.4-v6.18), patches [SEED], [WQ], [BATCH].

#include "experiments/mmcid_experiment.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "isolation/core/clock.h"
#include "isolation/mm_cid/mm_cid.h"
#include "isolation/mm_cid/hooks.h"
#include "isolation/mm_cid/registry.h"
#include "isolation/runtime/sim.h"
#include "core/status_macros.h"
#include "experiments/registered.h"

namespace isolation::experiments {
namespace {

using mm_cid::MmCid;
using mm_cid::MmCidHooks;

struct Strategy {
  std::string name;   // JSON name
  std::string scope;  // registered scan scope
  int batch;
  bool negative_control = false;  // the scope is one: its rows are expected to fail, not counted
};

// The scan scopes' default rows (the built-ins the seeds compare, then the
// scopes registered outside the library), each under its row label, and the
// batched scan of the mainline scope.
std::vector<Strategy> Strategies(int batch) {
  std::vector<Strategy> out;
  for (const RowVariant& row : DefaultScopeRows())
    out.push_back({row.label, row.name, 0, row.negative_control});
  out.push_back({absl::StrCat("batch", batch), "scan_possible", batch, false});
  return out;
}

// The lazy design with `allocator` (a registered name) on its allocator
// axis, `scope`, when not empty, on its scope axis, batch_<batch> (0:
// batch_full) and the tick kick when asked; the other axes' defaults.
mm_cid::MmCidVariant LazyVariant(int batch, bool tick_kick, const std::string& allocator,
                                 const std::string& scope = "") {
  mm_cid::MmCidVariant v;
  v.lazy.allocator = allocator;
  if (!scope.empty()) v.lazy.scope = scope;
  v.lazy.granularity = batch == 0 ? std::string("batch_full") : absl::StrCat("batch_", batch);
  if (tick_kick) v.lazy.tick = "tick_kick";
  return v;
}

// A design without the lazy axes, by its registered name.
mm_cid::MmCidVariant DesignVariant(const std::string& design) {
  mm_cid::MmCidVariant v;
  v.design = design;
  return v;
}

CpuMask IsolatedCpus(const IsolationConfig& config) {
  CpuMask m(config.num_cpus());
  for (int c = 0; c < config.num_cpus(); ++c) {
    if (config.CpuIsIsolated(c)) m.Set(c);
  }
  return m;
}

// --quick's placement span: 500 ms, shortened in proportion above 1024 CPUs
// (the simulated work is CPUs x span) but never below 200 ms, two scan
// periods of the 100 ms rate limit.
int QuickPlacementMs(int cpus, int duration_ms) {
  const int scaled = cpus > 1024 ? std::max(200, static_cast<int>(500LL * 1024 / cpus)) : 500;
  return std::min(duration_ms, scaled);
}

struct ScanRow {
  std::string strategy;
  int cpus = 0;
  int visited = 0;
  Nanos median_ns = 0;
};

// S12: one task pinned to one isolated CPU; one scan call, timed on the host.
absl::StatusOr<ScanRow> MeasureScan(const Strategy& s, const std::string& alloc, int p,
                                    int pinned_cpu, int reps) {
  const mm_cid::MmCidVariant v = LazyVariant(s.batch, /*tick_kick=*/false, alloc, s.scope);
  ISOLATION_ASSIGN_OR_RETURN(std::unique_ptr<MmCid> m, MmCid::Create(p, v));
  const CpuMask pin = CpuMask::Of(p, pinned_cpu);
  ISOLATION_ASSIGN_OR_RETURN(mm_cid::MmId mm, m->CreateMm(pin, 0));
  ISOLATION_RETURN_IF_ERROR(m->Fork(mm_cid::kNoTask, 0, mm, pin, 0));
  m->ContextSwitch(pinned_cpu, mm_cid::kNoTask, 0, 1);
  Nanos now = 1;
  m->Scan(mm, now);  // initialises the rate limit
  std::vector<Nanos> times;
  ScanRow row{s.name, p, 0, 0};
  for (int i = 0; i < reps; ++i) {
    now += 200 * kNsPerMs;  // past the rate limit every time
    const Nanos t0 = MonotonicNanos();
    const mm_cid::ScanResult r = m->Scan(mm, now);
    const Nanos t1 = MonotonicNanos();
    if (!r.ran) continue;
    times.push_back(t1 - t0);
    row.visited = std::max(row.visited, r.visits);
  }
  if (!times.empty()) {
    std::nth_element(times.begin(), times.begin() + static_cast<long>(times.size() / 2),
                     times.end());
    row.median_ns = times[times.size() / 2];
  }
  return row;
}

// A simulator task placed on `cpu` (allowed on `affinity`) that alternates
// running for `run` and sleeping for `sleep`, starting with a run.
TaskSpec DutyCycleTask(std::string name, int cpu, const CpuMask& affinity, int group, Nanos run,
                       Nanos sleep) {
  TaskSpec t;
  t.name = std::move(name);
  t.cpu = cpu;
  t.affinity = affinity;
  t.group = group;
  t.body = MakeTaskBody([run, sleep, n = 0](TaskContext&) mutable {
    return (n++ % 2 == 0) ? Step::Run(run) : Step::Sleep(sleep);
  });
  return t;
}

struct SimRun {
  Nanos isolated_max_stall_ns = 0;
  int64_t scans_on_isolated = 0;
  int64_t scans = 0;
  int64_t violations = 0;
  std::vector<std::string> first_violations;
  int64_t context_switches = 0;
  int64_t mm_lock_acquisitions = 0;  // v63_mmlock only
};

// S11: the seed's workload on the simulator.
// `trace` (may be nullptr) records the run as `trace_name`.
absl::StatusOr<SimRun> RunS11(const Topology& topo, const IsolationConfig& iso,
                              const mm_cid::MmCidVariant& c, Nanos duration, uint64_t seed,
                              TraceFile* trace = nullptr, const std::string& trace_name = "") {
  const int p = topo.num_cpus();
  SimOptions so;
  so.seed = seed;
  ISOLATION_ASSIGN_OR_RETURN(std::unique_ptr<TraceRun> run,
                             StartTraceRun(trace, trace_name, topo, iso));
  ISOLATION_ASSIGN_OR_RETURN(std::unique_ptr<Simulator> sim, Simulator::Create(topo, iso, so));
  if (run != nullptr) run->Attach(*sim);
  ISOLATION_ASSIGN_OR_RETURN(std::unique_ptr<MmCid> m,
                             MmCid::Create(p, c, MmCid::Limits{4 * p + 64, 2 * p + 16}));
  MmCidHooks hooks(*m);  // CheckAlways() after every event (incremental: cost follows the changes)
  sim->AddHooks(&hooks);
  const CpuMask isolated = IsolatedCpus(iso);
  CpuMask hk = isolated;
  hk.Complement();
  constexpr int kProbeGroup = 1;
  constexpr int kHkGroup = 2;
  hooks.SetGroupAffinity(kProbeGroup, isolated);
  hooks.SetGroupAffinity(kHkGroup, hk);
  for (int cpu : isolated) {
    const int hog_group = 1000 + cpu;
    hooks.SetGroupAffinity(hog_group, CpuMask::Of(p, cpu));
    // stress-ng --cpu 1 --cpu-load 80
    TaskSpec hog = DutyCycleTask(absl::StrCat("hog", cpu), cpu, CpuMask::Of(p, cpu), hog_group,
                                 8 * kNsPerMs, 2 * kNsPerMs);
    ISOLATION_RETURN_IF_ERROR(sim->Spawn(std::move(hog)).status());
    // timerlat user-space probe: 1 ms period, short run.
    TaskSpec probe = DutyCycleTask(absl::StrCat("probe", cpu), cpu, CpuMask::Of(p, cpu),
                                   kProbeGroup, 20 * kNsPerUs, 980 * kNsPerUs);
    ISOLATION_RETURN_IF_ERROR(sim->Spawn(std::move(probe)).status());
  }
  for (int cpu : hk) {
    TaskSpec t =
        DutyCycleTask(absl::StrCat("hk", cpu), cpu, hk, kHkGroup, 5 * kNsPerMs, 5 * kNsPerMs);
    ISOLATION_RETURN_IF_ERROR(sim->Spawn(std::move(t)).status());
  }
  ISOLATION_RETURN_IF_ERROR(sim->RunFor(duration));
  if (run != nullptr) run->Finish(sim->Now());
  SimRun r;
  r.isolated_max_stall_ns = hooks.IsolatedMaxStallNs();
  r.scans_on_isolated = hooks.ScansOnIsolatedCpus();
  r.scans = hooks.TotalScans();
  r.violations = hooks.violations() + hooks.errors();
  r.first_violations = hooks.FirstViolations();
  const mm_cid::MmCidStats stats = m->Stats();
  r.context_switches = stats.context_switches;
  r.mm_lock_acquisitions = stats.mm_lock_acquisitions;
  for (const auto& v : m->CheckAlways()) {
    ++r.violations;
    r.first_violations.push_back(v);
  }
  return r;
}

struct CompactionRun {
  bool converged = false;
  int32_t initial_leader_cid = -1;
  int32_t final_leader_cid = -1;
  int64_t violations = 0;
  std::vector<std::string> first_violations;
};

// S4 (mm_cid_compaction_test) on the simulator with N CPUs, N tasks pinned
// one per CPU and spawned in reverse CPU order; the leader (CPU 0) sleeps
// 500 ms, runs 3 ms (so the tick interrupts it), and polls its ID 10 times.
absl::StatusOr<CompactionRun> RunS4(int n, const mm_cid::MmCidVariant& c, uint64_t seed) {
  ISOLATION_ASSIGN_OR_RETURN(Topology topo, Topology::FromSynthetic(absl::StrCat("pu:", n)));
  IsolationConfig iso(topo);
  SimOptions so;
  so.seed = seed;
  ISOLATION_ASSIGN_OR_RETURN(std::unique_ptr<Simulator> sim, Simulator::Create(topo, iso, so));
  ISOLATION_ASSIGN_OR_RETURN(std::unique_ptr<MmCid> m,
                             MmCid::Create(n, c, MmCid::Limits{n + 8, 8}));
  MmCidHooks hooks(*m);
  sim->AddHooks(&hooks);
  CompactionRun out;
  for (int cpu = n - 1; cpu >= 0; --cpu) {
    TaskSpec t;
    t.name = absl::StrCat("t", cpu);
    t.cpu = cpu;
    t.affinity = CpuMask::Of(n, cpu);
    t.group = 1;
    const bool leader = cpu == 0;
    // Barrier, 5 x 500 ms sleeps, then the others exit; the leader polls.
    t.body = MakeTaskBody([&m, &out, leader, step = 0](TaskContext& ctx) mutable -> Step {
      const int s = step++;
      if (s < 10) return s % 2 == 0 ? Step::Run(kNsPerMs) : Step::Sleep(500 * kNsPerMs);
      if (!leader) return Step::Exit();
      if (s == 10) out.initial_leader_cid = m->TaskCid(ctx.task());
      const int32_t id = m->TaskCid(ctx.task());
      out.final_leader_cid = id;
      if (id == 0) out.converged = true;
      if (out.converged || s >= 10 + 2 * 10) return Step::Block();
      return s % 2 == 0 ? Step::Run(3 * kNsPerMs) : Step::Sleep(500 * kNsPerMs);
    });
    ISOLATION_RETURN_IF_ERROR(sim->Spawn(std::move(t)).status());
  }
  ISOLATION_RETURN_IF_ERROR(sim->RunFor(9 * kNsPerSec));
  out.violations = hooks.violations() + hooks.errors();
  out.first_violations = hooks.FirstViolations();
  return out;
}

// A placement row of the S11 table: its label, the registered placement and
// the task-work batch (0: none).
struct PlacementCase {
  std::string name;
  std::string placement;  // registered
  int batch;
};

// One run of the experiment: the validated options, the report as it is
// built, and the figures the reproduce rows read.  Run() calls one function
// per section, in the order of the text.
class MmCidExperiment {
 public:
  MmCidExperiment(const CommonOptions& common, const MmCidExperimentOptions& mmcid_options,
                  Progress& run_progress)
      : options(common), opts(mmcid_options), progress(run_progress) {}

  absl::StatusOr<ExperimentReport> Run() {
    ISOLATION_RETURN_IF_ERROR(ParseOptions());
    j["cpus"] = p;
    j["isolated"] = isolated.ToString();
    j["allocator"] = alloc;
    j["quick"] = options.quick;
    j["tick_kick"] = tick_kick;
    j["cost_model"] =
        absl::StrCat("modelled: ", mm_cid::kModelledVisitNs, " ns per slot visit (simulator)");
    j["scan_ns_label"] =
        "host-measured on this machine (indicative, not representative of a 128-CPU kernel)";
    absl::StrAppend(&text, "mm_cid on ", p, " CPUs, isolated ", isolated.ToString(), ", ", alloc,
                    options.quick ? " (quick)" : "", "\n");

    ISOLATION_RETURN_IF_ERROR(Scan());
    ISOLATION_RETURN_IF_ERROR(ScanSweep());
    ISOLATION_RETURN_IF_ERROR(Placements());
    ISOLATION_RETURN_IF_ERROR(DesignStalls());
    j["placement"] = placement_json;
    ISOLATION_RETURN_IF_ERROR(Compaction());
    j["invariant_violations"] = violations;
    report.invariant_violations = violations;
    absl::StrAppend(&text, "\ninvariant_violations (correct variants): ", violations, "\n");
    progress.Done();
    ReproduceRows();
    return std::move(report);
  }

 private:
  absl::Status ParseOptions() {
    ISOLATION_ASSIGN_OR_RETURN(topo, LoadTopology(options));
    ISOLATION_ASSIGN_OR_RETURN(iso, LoadIsolation(options, *topo));
    ISOLATION_RETURN_IF_ERROR(CheckTraceCpus(options.trace, *topo));
    if (options.trace != nullptr) options.trace->PlanRuns(3);  // the placement runs
    // Any registered allocator (a user's too; registered.h).
    ISOLATION_ASSIGN_OR_RETURN(alloc, ResolveAllocator("--mmcid_allocator", opts.allocator));
    absl::StatusOr<bool> parsed_kick = mm_cid::ParseTickKick(opts.tick_kick);
    if (!parsed_kick.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--mmcid_tick_kick: ", parsed_kick.status().message()));
    }
    tick_kick = *parsed_kick;
    batch = opts.batch;
    if (batch < 1)
      return absl::InvalidArgumentError(absl::StrCat("--mmcid_batch=", batch, ": must be >= 1"));
    reps = opts.scan_reps;
    if (reps < 1)
      return absl::InvalidArgumentError(absl::StrCat("--mmcid_scan_reps=", reps, ": must be >= 1"));
    duration_ms = opts.duration_ms;
    if (duration_ms < 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("--mmcid_duration_ms=", duration_ms, ": must be >= 1"));
    }
    p = topo->num_cpus();
    if (options.quick) {
      duration_ms = QuickPlacementMs(p, duration_ms);
      reps = std::min(reps, 51);
    }
    isolated = IsolatedCpus(*iso);
    pinned = isolated.Empty() ? p - 1 : isolated.Nth(isolated.Weight() / 2);
    return absl::OkStatus();
  }

  // --- scan ---
  absl::Status Scan() {
    progress.Update("scan cost", 0.0);
    nlohmann::json scan = nlohmann::json::array();
    absl::StrAppend(&text, "\nscan (one task pinned to CPU ", pinned, "):\n",
                    absl::StrFormat("  %-10s %6s %13s %16s\n", "strategy", "cpus", "cpus_visited",
                                    "scan_ns_median"));
    for (const Strategy& s : Strategies(batch)) {
      ISOLATION_ASSIGN_OR_RETURN(ScanRow row, MeasureScan(s, alloc, p, pinned, reps));
      if (s.name == "possible") possible_row = row;
      scan.push_back({{"strategy", s.name},
                      {"cpus", row.cpus},
                      {"cpus_visited", row.visited},
                      {"scan_ns_median", row.median_ns}});
      absl::StrAppend(&text, absl::StrFormat("  %-10s %6d %13d %16d  (host, indicative)\n", s.name,
                                             row.cpus, row.visited, row.median_ns));
    }
    j["scan"] = scan;
    return absl::OkStatus();
  }

  // The same scan on machines of 8 .. 1024 CPUs (the figure "scan cost
  // against CPUs per scope"): visits are exact, host time indicative.
  absl::Status ScanSweep() {
    nlohmann::json sweep = nlohmann::json::array();
    const int sweep_reps = options.quick ? 11 : 51;
    absl::StrAppend(&text, "  scan cost vs CPUs (visits; host median ns):");
    for (int cpus : {8, 16, 32, 64, 128, 256, 512, 1024}) {
      progress.Update(absl::StrCat("scan sweep ", cpus, " CPUs"), 0.05);
      absl::StrAppend(&text, "\n    ", absl::StrFormat("%5d", cpus), ":");
      for (const Strategy& s : Strategies(batch)) {
        ISOLATION_ASSIGN_OR_RETURN(ScanRow row, MeasureScan(s, alloc, cpus, cpus - 1, sweep_reps));
        sweep.push_back({{"strategy", s.name},
                         {"cpus", cpus},
                         {"cpus_visited", row.visited},
                         {"modelled_ns", row.visited * mm_cid::kModelledVisitNs},
                         {"scan_ns_median", row.median_ns}});
        absl::StrAppend(&text, absl::StrFormat("  %s %d; %d", s.name, row.visited, row.median_ns));
      }
    }
    absl::StrAppend(&text, "\n");
    j["scan_sweep"] = sweep;
    return absl::OkStatus();
  }

  // --- placement (S11 on the simulator) ---
  absl::Status Placements() {
    // The placements' default rows: the built-ins the seed compares, then
    // the placements registered outside the library, each under its label.
    std::vector<PlacementCase> placements;
    for (const RowVariant& row : DefaultPlacementRows())
      placements.push_back({row.label, row.name, 0});
    absl::StrAppend(&text, "\nplacement (S11 on the simulator, ", duration_ms,
                    " ms; modelled stall = visits x 130 ns):\n");
    int step = 0;
    for (const PlacementCase& pc : placements) {
      progress.Update(absl::StrCat("placement ", pc.name), 0.1 + 0.25 * step++);
      mm_cid::MmCidVariant v = LazyVariant(pc.batch, tick_kick, alloc);
      v.lazy.placement = pc.placement;
      ISOLATION_ASSIGN_OR_RETURN(
          SimRun r, RunS11(*topo, *iso, v, duration_ms * kNsPerMs, options.seed, options.trace,
                           absl::StrCat("mmcid S11 placement ", pc.name, " (", alloc, ", ",
                                        duration_ms, " ms)")));
      violations += r.violations;
      stalls.emplace_back(pc.name, r.isolated_max_stall_ns);
      placement_json.push_back({{"placement", pc.name},
                                {"isolated_max_stall_ns", r.isolated_max_stall_ns},
                                {"scans_on_isolated_cpus", r.scans_on_isolated},
                                {"scans", r.scans},
                                {"label", "modelled"}});
      absl::StrAppend(
          &text,
          absl::StrFormat("  %-10s isolated_max_stall %7d ns  scans %6d (on isolated CPUs %d)\n",
                          pc.name, r.isolated_max_stall_ns, r.scans, r.scans_on_isolated));
      for (const auto& v : r.first_violations) absl::StrAppend(&text, "    violation: ", v, "\n");
    }
    return absl::OkStatus();
  }

  // The S11 stall of the other designs, below the placement table.
  absl::Status DesignStalls() {
    // The batched task-work variant ([BATCH]) for the reproduce row.
    {
      mm_cid::MmCidVariant v = LazyVariant(batch, tick_kick, alloc);
      v.lazy.placement = "work_taskwork";
      ISOLATION_ASSIGN_OR_RETURN(SimRun r,
                                 RunS11(*topo, *iso, v, duration_ms * kNsPerMs, options.seed));
      violations += r.violations;
      batch_stall = r.isolated_max_stall_ns;
      absl::StrAppend(&text, absl::StrFormat("  (task + batch%d: isolated_max_stall %d ns)\n",
                                             batch, batch_stall));
    }
    // The 6.19 rewrite has no background work at all (I10).
    {
      const mm_cid::MmCidVariant v = DesignVariant("owner619");
      ISOLATION_ASSIGN_OR_RETURN(SimRun r,
                                 RunS11(*topo, *iso, v, duration_ms * kNsPerMs, options.seed));
      violations += r.violations;
      owner_stall = r.isolated_max_stall_ns;
      absl::StrAppend(&text, absl::StrFormat("  (owner619: isolated_max_stall %d ns, scans %d)\n",
                                             owner_stall, r.scans));
    }
    // The v6.3 baseline has no background work either, but every switch
    // between the hog and the probe (different mms) takes the mms' cid_lock,
    // the probe mm's one lock shared by every isolated CPU.
    {
      const mm_cid::MmCidVariant v = DesignVariant("v63_mmlock");
      ISOLATION_ASSIGN_OR_RETURN(SimRun r,
                                 RunS11(*topo, *iso, v, duration_ms * kNsPerMs, options.seed));
      violations += r.violations;
      absl::StrAppend(
          &text, absl::StrFormat(
                     "  (v63_mmlock: isolated_max_stall %d ns, scans %d, cid_lock round trips "
                     "%d in %d context switches)\n",
                     r.isolated_max_stall_ns, r.scans, r.mm_lock_acquisitions, r.context_switches));
      for (const auto& v : r.first_violations) absl::StrAppend(&text, "    violation: ", v, "\n");
    }
    return absl::OkStatus();
  }

  // --- compaction (S4 on the simulator) ---
  absl::Status Compaction() {
    const int n = options.quick ? std::min(p, 16) : std::min(p, 128);
    nlohmann::json compaction = nlohmann::json::array();
    absl::StrAppend(&text, "\ncompaction (S4 on the simulator, N=", n,
                    ", leader polls its ID 10 x 500 ms):\n");
    int64_t cidmask_failures = 0;
    for (const Strategy& s : Strategies(batch)) {
      progress.Update(absl::StrCat("compaction ", s.name), 0.85);
      const mm_cid::MmCidVariant v = LazyVariant(s.batch, tick_kick, alloc, s.scope);
      ISOLATION_ASSIGN_OR_RETURN(CompactionRun r, RunS4(n, v, options.seed));
      const bool wrong = s.negative_control;
      if (wrong) {
        cidmask_failures += r.converged ? 0 : 1;
      } else {
        violations += r.violations;
      }
      compaction.push_back({{"strategy", s.name},
                            {"converged", r.converged},
                            {"leader_initial_cid", r.initial_leader_cid},
                            {"leader_final_cid", r.final_leader_cid}});
      absl::StrAppend(&text, absl::StrFormat("  %-10s converged %-5s leader cid %d -> %d%s\n",
                                             s.name, r.converged ? "true" : "false",
                                             r.initial_leader_cid, r.final_leader_cid,
                                             wrong ? "  (WRONG strategy: negative control)" : ""));
      for (const auto& v : r.first_violations) absl::StrAppend(&text, "    violation: ", v, "\n");
    }
    j["compaction"] = compaction;
    j["cidmask_violations"] = cidmask_failures;
    return absl::OkStatus();
  }

  // --- isolab reproduce ---
  void ReproduceRows() {
    report.rows.push_back(
        {"mmcid", absl::StrCat("task_mm_cid_work duration, ", p, " CPUs"),
         "30-35 us on a 128-core aarch64, isolated cores [SEED]",
         absl::StrFormat(
             "modelled %.1f us (%d visits x %d ns); host-measured median %d ns (indicative)",
             static_cast<double>(possible_row.visited * mm_cid::kModelledVisitNs) / 1000.0,
             possible_row.visited, mm_cid::kModelledVisitNs, possible_row.median_ns)});
    std::string stall_text;
    for (const auto& [name, ns] : stalls) absl::StrAppend(&stall_text, name, " ", ns, " ns; ");
    absl::StrAppend(&stall_text, "task+batch", batch, " ", batch_stall, " ns; owner619 ",
                    owner_stall, " ns (modelled)");
    report.rows.push_back({"mmcid", "compaction stall on an isolated CPU (S11)",
                           "timerlat max 48 us (task work) -> < 20 us after moving the work [SEED]",
                           stall_text});
  }

  const CommonOptions& options;
  const MmCidExperimentOptions& opts;
  Progress& progress;

  // The options, validated.
  std::optional<Topology> topo;
  std::optional<IsolationConfig> iso;
  std::string alloc;  // a registered allocator
  bool tick_kick = false;
  int batch = 0;
  int reps = 0;
  int duration_ms = 0;
  int p = 0;  // CPUs
  CpuMask isolated;
  int pinned = 0;  // the scan's task

  ExperimentReport report;
  nlohmann::json& j = report.json;
  std::string& text = report.text;
  int64_t violations = 0;

  // Figures the reproduce rows read.
  ScanRow possible_row;
  nlohmann::json placement_json = nlohmann::json::array();
  std::vector<std::pair<std::string, Nanos>> stalls;
  Nanos batch_stall = 0;
  Nanos owner_stall = 0;
};

}  // namespace

absl::StatusOr<RunCost> EstimateMmCidExperiment(const CommonOptions& common,
                                                const MmCidExperimentOptions& options) {
  ISOLATION_ASSIGN_OR_RETURN(Topology topo, LoadTopology(common));
  ISOLATION_ASSIGN_OR_RETURN(IsolationConfig iso, LoadIsolation(common, topo));
  const double p = topo.num_cpus();
  const double isolated = IsolatedCpus(iso).Weight();
  const double strategies = static_cast<double>(Strategies(std::max(options.batch, 1)).size());
  const double placements = 6.0 + static_cast<double>(OutsidePlacements().size());
  double reps = std::max(options.scan_reps, 1);
  double duration_ms = std::max(options.duration_ms, 1);
  if (common.quick) {
    reps = std::min(reps, 51.0);
    duration_ms = QuickPlacementMs(topo.num_cpus(), static_cast<int>(duration_ms));
  }
  // Per-unit costs fitted to runs on the reference host (README.md, "isolab"):
  // a possible-CPU scan ~6 ns per CPU, ~1 us per call;
  // the S11 workload ~0.15 us per isolated CPU and modelled ms, plus the
  // scans of every hog's own mm over every CPU, ~0.28 ns per CPU pair and
  // ms; memory: each of the ~2P mms holds a slot per CPU.
  RunCost scan{reps * (p * 6e-9 + strategies * 1e-6), reps * strategies * 8.0,
               absl::StrCat("scan: ", strategies, " strategies x ", reps, " reps x ", p, " CPUs")};
  const double iso_cpus = std::max(isolated, 1.0);
  RunCost placement{placements * duration_ms * (iso_cpus * 1.5e-7 + iso_cpus * p * 2.8e-10) + 0.2,
                    2 * p * p * 9.0 + p * 20e3 + 16e6,
                    absl::StrCat("placement: ", placements, " runs x ", duration_ms, " ms x ",
                                 isolated, " isolated CPUs x ", p, " CPUs")};
  const double n = common.quick ? std::min(p, 16.0) : std::min(p, 128.0);
  RunCost compaction{strategies * n * 9000 * 1e-7, n * p * 16.0 + 16e6, ""};
  RunCost total;
  AddCost(total, scan);
  AddCost(total, placement);
  AddCost(total, compaction);
  return total;
}

absl::StatusOr<ExperimentReport> RunMmCidExperiment(const CommonOptions& common,
                                                    const MmCidExperimentOptions& options,
                                                    Progress& progress) {
  ISOLATION_ASSIGN_OR_RETURN(ExperimentReport report,
                             MmCidExperiment(common, options, progress).Run());
  FinishReport(ConfigurationWarnings(common), report);
  return report;
}

}  // namespace isolation::experiments
