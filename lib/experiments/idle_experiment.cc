// SPDX-License-Identifier: GPL-2.0-or-later
//
// `isolab idle`: wakeup idle-CPU selection variants (idle_select).
//
//  1. select: cost, probes and success of every variant on one LLC of
//     --idle_llc_cpus (default 16, 64, 256; quick: 64) at busy shares 0..100 %
//     with the SIS_UTIL budget fed the busy share (host timing, no driver).
//  2. workloads: hackbench-like groups (1, 2, 4) and pipe ping-pong on the
//     run-queue harness (IdleSelectHooks) under the deterministic simulator
//     (or the real-thread driver, --idle_driver=real, on the workload
//     machine sized to the host, real_model.h: indicative only), per
//     variant, with V1 against V0 in percent laid out like the seed's table;
//     plus a schbench-like batch wake (wake->run p50/p90/p99), and the
//     S22 load sweep (`load_sweep`: every workload and the RR analogue at
//     25/50/100/200 % of the CPUs, simulator), and the concurrent wake-up
//     table (`stacking`: the RR analogue at 50/75/90 % with the
//     simulator's select->enqueue and idle-entry windows open; stackings and
//     lost wakeups per registered selector, plus the negative control
//     V0-norecheck, whose broken handshake loses wakeups).
//  3. isolation: the LLC spans wakeup selection sees on --topology with
//     --isolcpus (the seeds' machine by default): domain-isolated CPUs are
//     singleton LLCs and appear in no span.
//  4. placement penalty (--idle_placement_penalty, default both): the
//     workload and schbench tables again with the simulator's cache-refill
//     penalty on (SimOptions::refill_penalty), beside the penalty-off
//     figures, with where the work landed (moves per wakeup by distance).
//
// --trace records the first iteration of each workload (hackbench-1/2/4,
// pipe) for V0 and V1: 8 runs, every placement an "idle.select" event.

#include "experiments/idle_experiment.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "isolation/idle_select/idle_select.h"
#include "isolation/idle_select/workload.h"
#include "isolation/runtime/real_driver.h"
#include "isolation/runtime/sim.h"
#include "core/status_macros.h"
#include "experiments/idle_probe.h"
#include "experiments/real_model.h"

namespace isolation::experiments {
namespace {

using idle_select::SelectorName;
// One selector row, resolved through the registry.
struct Sel {
  std::string name;   // registered ("V4g")
  std::string label;  // in tables and JSON: the entry's row label ("V4")
  bool outside =
      false;  // registered outside the library, not a negative control: rows beside mainline's
  bool Is(std::string_view registered) const { return name == registered; }
};

Sel SelOf(const idle_select::SelectorEntry& e) {
  return {e.name, e.row_label(), !e.is_builtin() && !e.negative_control};
}

// A selector the seeds' figures name (the sections below compare the
// variants the seeds measured: V0 and V1 in the workload table, ...).
absl::StatusOr<Sel> SeedSel(std::string_view name) {
  ISOLATION_ASSIGN_OR_RETURN(const idle_select::SelectorEntry* e, idle_select::FindSelector(name));
  return SelOf(*e);
}

struct Stats {
  double mean = 0, std = 0, q90 = 0, q99 = 0;
};

double Quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  // Nearest rank.
  const size_t idx = static_cast<size_t>(std::ceil(q * static_cast<double>(v.size()))) - 1;
  return v[std::min(idx, v.size() - 1)];
}

Stats Summarise(const std::vector<double>& v) {
  Stats s;
  if (v.empty()) return s;
  double sum = 0;
  for (double x : v) sum += x;
  s.mean = sum / static_cast<double>(v.size());
  double var = 0;
  for (double x : v) var += (x - s.mean) * (x - s.mean);
  s.std = v.size() > 1 ? std::sqrt(var / static_cast<double>(v.size() - 1)) : 0.0;
  s.q90 = Quantile(v, 0.90);
  s.q99 = Quantile(v, 0.99);
  return s;
}

double Pct(double ours, double base) { return base == 0 ? 0.0 : 100.0 * (ours - base) / base; }

// Two-sided 95 % Student t quantile for `df` degrees of freedom (df rounded
// down: slightly wider, never narrower); above 30 the Cornish-Fisher
// expansion around the normal quantile.
double TQuantile975(double df) {
  static constexpr double kTable[] = {12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306,
                                      2.262,  2.228, 2.201, 2.179, 2.160, 2.145, 2.131, 2.120,
                                      2.110,  2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064,
                                      2.060,  2.056, 2.052, 2.048, 2.045, 2.042};
  const int d = std::max(1, static_cast<int>(std::floor(df)));
  if (d <= 30) return kTable[d - 1];
  const double z = 1.959964;
  return z + (z * z * z + z) / (4.0 * d) +
         (5 * std::pow(z, 5) + 16 * z * z * z + 3 * z) / (96.0 * d * d);
}

// 95 % confidence interval of mean(b) - mean(a) (Welch: unequal variances),
// in percent of mean(a).  n < 2 on either side: the point difference.
std::pair<double, double> DiffCi95Pct(const Stats& a, size_t na, const Stats& b, size_t nb) {
  const double diff = b.mean - a.mean;
  double half = 0;
  if (na > 1 && nb > 1) {
    const double va = a.std * a.std / static_cast<double>(na),
                 vb = b.std * b.std / static_cast<double>(nb);
    if (va + vb > 0) {
      const double df =
          (va + vb) * (va + vb) /
          (va * va / static_cast<double>(na - 1) + vb * vb / static_cast<double>(nb - 1));
      half = TQuantile975(df) * std::sqrt(va + vb);
    }
  }
  if (a.mean == 0) return {0.0, 0.0};
  return {100.0 * (diff - half) / a.mean, 100.0 * (diff + half) / a.mean};
}

struct HarnessRun {
  double value = 0;  // seconds (hackbench) or ops/s (pipe)
  idle_select::HarnessCounters counters;
  bool completed = false;
  std::string violation;
  std::vector<Nanos> latencies;
  SimPlacementStats placement;  // simulator only
};

int64_t TotalMoves(const SimPlacementStats& p) {
  int64_t n = 0;
  for (int64_t m : p.moves) n += m;
  return n;
}

void AddPlacement(SimPlacementStats& sum, const SimPlacementStats& p) {
  for (size_t d = 0; d < sum.moves.size(); ++d) sum.moves[d] += p.moves[d];
  sum.penalties += p.penalties;
  sum.penalty_ns += p.penalty_ns;
}

// Moves per distance (the distances a move can have), for the JSON.
nlohmann::json MovesByDistance(const SimPlacementStats& p) {
  nlohmann::json j = nlohmann::json::object();
  for (int d = 1; d < kNumCacheDistances; ++d) {
    j[CacheDistanceName(static_cast<CacheDistance>(d))] = p.moves[static_cast<size_t>(d)];
  }
  return j;
}

double PerWakeup(int64_t n, int64_t selections) {
  return selections == 0 ? 0.0 : static_cast<double>(n) / static_cast<double>(selections);
}

enum class Workload { kHackbench, kPipe, kSchbench };

// One workload of the tables: hackbench with `groups` groups, or pipe.
struct WlSpec {
  std::string name;
  Workload kind;
  int groups;
};

// The metric of a workload's rows ("duration_s", "ops/sec") and of its text
// and V1-vs-V0 lines ("duration", "ops/sec").
const char* RowMetric(Workload kind) { return kind == Workload::kPipe ? "ops/sec" : "duration_s"; }
const char* ShortMetric(Workload kind) { return kind == Workload::kPipe ? "ops/sec" : "duration"; }

// One run of the experiment: the validated options, the report as it is
// built, and the figures a later section reads from an earlier one.  Run()
// calls one function per section, in the order of the text.
class IdleExperiment {
 public:
  IdleExperiment(const CommonOptions& common, const IdleExperimentOptions& idle_options,
                 Progress& run_progress)
      : options(common), opts(idle_options), progress(run_progress), quick(common.quick) {}

  absl::StatusOr<ExperimentReport> Run() {
    ISOLATION_RETURN_IF_ERROR(ParseOptions());
    j["experiment"] = "idle";
    j["quick"] = quick;
    ISOLATION_RETURN_IF_ERROR(SelectSweep());
    ISOLATION_RETURN_IF_ERROR(StaleHints());
    ISOLATION_RETURN_IF_ERROR(WorkloadTables());
    ISOLATION_RETURN_IF_ERROR(SchbenchTable());
    if (penalty_section) {
      ISOLATION_RETURN_IF_ERROR(PenaltySection());
    } else {
      NoPenaltySection();
    }
    ISOLATION_RETURN_IF_ERROR(LoadSweep());
    ISOLATION_RETURN_IF_ERROR(ConcurrentWakeups());
    IsolationSpans();

    j["invariant_violations"] = violations;
    report.invariant_violations = violations;
    absl::StrAppend(&text, "\ninvariant_violations: ", violations, "\n");
    report.text = text;
    progress.Done();
    ReproduceRows();
    return std::move(report);
  }

 private:
  // Options, validated as given, then --quick shortens them.
  absl::Status ParseOptions() {
    // Every registered selector is accepted; each row shows its entry's label.
    for (const std::string& name : opts.variants) {
      ISOLATION_ASSIGN_OR_RETURN(std::string registered, ResolveSelector("--idle_variants", name));
      ISOLATION_ASSIGN_OR_RETURN(Sel sel, SeedSel(registered));
      variants.push_back(sel);
    }
    if (variants.empty()) return absl::InvalidArgumentError("--idle_variants is empty");
    llc_sizes = opts.llc_cpus;
    if (llc_sizes.empty()) return absl::InvalidArgumentError("--idle_llc_cpus is empty");
    for (int llc : llc_sizes) {
      if (llc < 2 || llc > 4096) {
        return absl::InvalidArgumentError(
            absl::StrCat("--idle_llc_cpus=", absl::StrJoin(llc_sizes, ","), ": '", llc,
                         "' is out of range (want 2..4096)"));
      }
    }
    samples = opts.samples;
    iterations = opts.iterations;
    loops = opts.hackbench_loops;
    round_trips = opts.pipe_round_trips;
    if (samples < 1)
      return absl::InvalidArgumentError(
          absl::StrCat("--idle_samples=", samples, " (must be >= 1)"));
    if (iterations < 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("--idle_iterations=", iterations, " (must be >= 1)"));
    }
    if (loops < 1)
      return absl::InvalidArgumentError(
          absl::StrCat("--idle_hackbench_loops=", loops, " (must be >= 1)"));
    if (round_trips < 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("--idle_pipe_round_trips=", round_trips, " (must be >= 1)"));
    }
    if (quick) {
      llc_sizes = {64};
      samples = std::min(samples, 3000);
      iterations = std::min(iterations, 3);
      loops = std::min(loops, 40);
      round_trips = std::min(round_trips, 300);
    }
    if (std::find(llc_sizes.begin(), llc_sizes.end(), 64) == llc_sizes.end())
      llc_sizes.push_back(64);
    if (driver_kind != "sim" && driver_kind != "real") {
      return absl::InvalidArgumentError(
          absl::StrCat("--idle_driver='", driver_kind, "' (want sim or real)"));
    }
    if (penalty_mode != "off" && penalty_mode != "on" && penalty_mode != "both") {
      return absl::InvalidArgumentError(
          absl::StrCat("--idle_placement_penalty='", penalty_mode, "' (want off, on or both)"));
    }
    if (penalty_mode == "on" && driver_kind == "real") {
      return absl::InvalidArgumentError(
          "--idle_placement_penalty=on with --idle_driver=real: the real-thread driver models no "
          "placement cost "
          "(its tasks pay real cache refills); use off or both");
    }
    // The workload and schbench tables run with the penalty on only for
    // "on"; "both" adds the penalty-on section (simulator only).
    tables_penalty = penalty_mode == "on";
    penalty_section = penalty_mode == "both" && driver_kind == "sim";
    ISOLATION_ASSIGN_OR_RETURN(machine, LoadTopology(options));
    ISOLATION_ASSIGN_OR_RETURN(machine_iso, LoadIsolation(options, *machine));
    ISOLATION_RETURN_IF_ERROR(CheckTraceCpus(options.trace, *machine));
    if (options.trace != nullptr)
      options.trace->PlanRuns(8);  // first iteration, 4 workloads x V0/V1
    wl_topo = Topology::FromFlag(opts.workload_topology);
    if (!wl_topo.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--idle_workload_topology: ", wl_topo.status().message()));
    }
    // --idle_driver=real: the workloads' machine sized to the host
    // (real_model.h; no isolation, as the seed's), refused if oversubscribed.
    if (driver_kind == "real") {
      ISOLATION_ASSIGN_OR_RETURN(RealThreadModel m,
                                 HostSizedModel(options, *wl_topo, IsolationConfig(*wl_topo)));
      real_model.emplace(std::move(m));
    }
    real = driver_kind == "real";
    return absl::OkStatus();
  }

  // --- 1. select sweep -------------------------------------------------------
  absl::Status SelectSweep() {
    const std::vector<int> busy_points = {0, 25, 50, 75, 90, 95, 100};
    const std::vector<int> quick_busy = {0, 50, 75, 90, 95};
    const auto& busy_list = quick ? quick_busy : busy_points;
    nlohmann::json select = nlohmann::json::array();
    text =
        "select sweep (one LLC, SIS_UTIL fed the busy share; host cycle-counter timing, median per "
        "Select; "
        "shared host: indicative)\n";
    absl::StrAppend(
        &text, absl::StrFormat("%-13s %5s %5s %6s %10s %11s %9s %8s\n", "variant", "llc", "busy%",
                               "budget", "probes", "select_ns", "found%", "stale"));
    const size_t total_points = llc_sizes.size() * busy_list.size() * variants.size();
    size_t done_points = 0;
    for (int llc : llc_sizes) {
      for (int busy : busy_list) {
        for (const Sel& v : variants) {
          progress.Update(
              absl::StrCat("select ", v.label, " llc ", llc, " busy ", busy),
              static_cast<double>(done_points++) / static_cast<double>(total_points) * 0.4);
          idle_select::SweepParams sp;
          sp.variant = v.name;
          sp.llc_cpus = llc;
          sp.busy_pct = busy;
          sp.samples = samples;
          sp.seed = options.seed * 1000003 + static_cast<uint64_t>(llc * 101 + busy);
          ISOLATION_ASSIGN_OR_RETURN(idle_select::SweepResult r, idle_select::MeasureSelect(sp));
          nlohmann::json row;
          row["variant"] = v.label;
          row["llc_cpus"] = llc;
          row["busy_pct"] = busy;
          row["probes_mean"] = r.probes_mean;
          row["select_ns_median"] = r.select_ns_median;
          row["found_pct"] = r.found_pct;
          row["stale_hits_mean"] = r.stale_hits_mean;
          row["nr_idle_scan"] = r.budget;
          select.push_back(row);
          absl::StrAppend(
              &text, absl::StrFormat("%-13s %5d %5d %6d %10.3f %11.1f %9.2f %8.3f\n", v.label, llc,
                                     busy, r.budget, r.probes_mean, r.select_ns_median, r.found_pct,
                                     r.stale_hits_mean));
          if (llc == 64 && busy == 75 && v.Is("V0")) {
            v0_ns_75 = r.select_ns_median;
            v0_probes_75 = r.probes_mean;
          }
          if (llc == 64 && busy == 75 && v.Is("V1")) {
            v1_ns_75 = r.select_ns_median;
            v1_probes_75 = r.probes_mean;
          }
        }
      }
    }
    j["select"] = select;
    j["select_timing"] =
        "host cycle counter (calibrated to CLOCK_MONOTONIC) around batches of 16 Select() "
        "calls on an unchanged state; median over batches of ns per call; a shared 2-core "
        "host: indicative only";
    return absl::OkStatus();
  }

  // The stale-hint probe (idle_probe.h): I4 where the sweep's fresh hints
  // cannot show it, for every variant asked for.
  absl::Status StaleHints() {
    nlohmann::json probes = nlohmann::json::array();
    absl::StrAppend(
        &text, "\nstale idle hints (directed, one LLC of ", llc_sizes.front(),
        " CPUs: CPUs first in scan order go busy after publishing idle): I4 violations\n");
    for (const Sel& v : variants) {
      ISOLATION_ASSIGN_OR_RETURN(StaleHintProbe p, ProbeStaleIdleHint(v.name, llc_sizes.front()));
      violations += p.violation_count;
      nlohmann::json row;
      row["variant"] = v.label;
      row["applicable"] = p.applicable;
      row["selections"] = p.selections;
      row["violations"] = p.violation_count;
      row["first_violations"] = p.violations;
      probes.push_back(row);
      absl::StrAppend(
          &text,
          absl::StrFormat("  %-13s %s\n", v.label,
                          p.applicable
                              ? absl::StrCat(p.violation_count, " of ", p.selections, " selections")
                              : std::string("n/a (claim-style: I4 is scan-style)")));
      for (const std::string& line : p.violations)
        absl::StrAppend(&text, "    violation: ", line, "\n");
    }
    j["stale_hint_probe"] = probes;
    return absl::OkStatus();
  }

  // The `iterations` runs of one workload-table cell (workload x variant),
  // seeded as the tables are, so that the penalty section repeats the same
  // runs with the penalty the only change; every run's violations counted.
  struct CellRuns {
    Stats stats;
    idle_select::HarnessCounters sum;  // selections, probes, placed_on_busy
    SimPlacementStats placed;
  };
  absl::StatusOr<CellRuns> RunCell(const Topology& topo, const WlSpec& spec, const Sel& v,
                                   bool real_threads, bool penalty, TraceFile* trace,
                                   const std::function<void(int)>& on_iteration) {
    std::vector<double> values;
    CellRuns cell;
    for (int it = 0; it < iterations; ++it) {
      on_iteration(it);
      ISOLATION_ASSIGN_OR_RETURN(
          HarnessRun run,
          RunWorkload(topo, v.name, spec.kind, spec.groups, loops, round_trips,
                      options.seed * 7919 + static_cast<uint64_t>(it), real_threads, penalty,
                      it == 0 ? trace : nullptr,
                      absl::StrCat("idle ", spec.name, " ", v.label, " (",
                                   real_threads ? "real threads" : "simulator", ", iteration 0)")));
      if (!run.completed) ++violations;  // lost wakeup / stuck task
      if (!run.violation.empty()) ++violations;
      violations += run.counters.invariant_violations;
      values.push_back(run.value);
      cell.sum.selections += run.counters.selections;
      cell.sum.probes += run.counters.probes;
      cell.sum.placed_on_busy += run.counters.placed_on_busy;
      AddPlacement(cell.placed, run.placement);
    }
    cell.stats = Summarise(values);
    return cell;
  }

  // A cell's row: its workload, variant and the statistics of its runs.
  nlohmann::json StatsRow(const WlSpec& spec, const Sel& v, const Stats& s) const {
    nlohmann::json row;
    row["workload"] = spec.name;
    row["variant"] = v.label;
    row["metric"] = RowMetric(spec.kind);
    row["mean"] = s.mean;
    row["std"] = s.std;
    row["q90"] = s.q90;
    row["q99"] = s.q99;
    row["iterations"] = iterations;
    return row;
  }

  // V1 against V0 on one workload: the change of the mean in percent, the
  // run-to-run spread of each side in the measured unit, and the 95 %
  // confidence interval of the mean difference (a ratio of two standard
  // deviations, reported before, read as nonsense).
  nlohmann::json V1VsV0(const WlSpec& spec, const std::vector<Stats>& per_variant) const {
    nlohmann::json c;
    c["workload"] = spec.name;
    c["metric"] = ShortMetric(spec.kind);
    c["mean"] = Pct(per_variant[1].mean, per_variant[0].mean);
    c["std_v0"] = per_variant[0].std;
    c["std_v1"] = per_variant[1].std;
    const auto [ci_lo, ci_hi] = DiffCi95Pct(per_variant[0], static_cast<size_t>(iterations),
                                            per_variant[1], static_cast<size_t>(iterations));
    c["mean_ci95_pct"] = {ci_lo, ci_hi};
    return c;
  }

  // --- 2. workloads on the run-queue harness -------------------------------------
  absl::Status WorkloadTables() {
    driver_note = "simulator (deterministic, modelled time)";
    if (real) {
      driver_note = absl::StrCat("real-thread driver (host time: indicative, not representative); ",
                                 real_model->label);
      j["real_thread_model"] = real_model->Json();
    }
    // V0 and V1 (the seed's table), then the selectors of --idle_variants
    // registered outside the library: rows beside mainline's.
    for (const char* name : {"V0", "V1"}) {
      ISOLATION_ASSIGN_OR_RETURN(Sel sel, SeedSel(name));
      wl_variants.push_back(sel);
    }
    for (const Sel& v : variants) {
      if (v.outside) wl_variants.push_back(v);
    }
    nlohmann::json workloads = nlohmann::json::array();
    nlohmann::json change = nlohmann::json::array();
    absl::StrAppend(
        &text, "\nworkloads on the run-queue harness: ", driver_note,
        real ? "" : (tables_penalty ? ", placement penalty on" : ", placement penalty off"), "\n");
    absl::StrAppend(
        &text, absl::StrFormat("%-12s %-4s %-9s %12s %12s %12s %12s %9s %8s\n", "workload", "var",
                               "metric", "mean", "std", "q90", "q99", "probes/w", "stacked"));
    size_t wl_done = 0;
    for (const WlSpec& spec : specs) {
      std::vector<Stats> per_variant(wl_variants.size());
      for (size_t vi = 0; vi < wl_variants.size(); ++vi) {
        const Sel& v = wl_variants[vi];
        ISOLATION_ASSIGN_OR_RETURN(
            CellRuns cell,
            RunCell(RunTopo(), spec, v, real, tables_penalty, options.trace, [&](int it) {
              progress.Update(
                  absl::StrCat(spec.name, " ", v.label, " #", it),
                  0.4 + 0.5 * static_cast<double>(wl_done++) /
                            static_cast<double>(specs.size() * wl_variants.size() * iterations));
            }));
        const Stats& s = cell.stats;
        const idle_select::HarnessCounters& sum = cell.sum;
        const SimPlacementStats& placed = cell.placed;
        per_variant[vi] = s;
        table_stats[{spec.name, v.label}] = s;
        table_moves[{spec.name, v.label}] = PerWakeup(TotalMoves(placed), sum.selections);
        table_wakeups[{spec.name, v.label}] = sum.selections;
        nlohmann::json row = StatsRow(spec, v, s);
        row["probes_per_wakeup"] = sum.selections == 0 ? 0.0
                                                       : static_cast<double>(sum.probes) /
                                                             static_cast<double>(sum.selections);
        row["placed_on_busy_pct"] = sum.selections == 0
                                        ? 0.0
                                        : 100.0 * static_cast<double>(sum.placed_on_busy) /
                                              static_cast<double>(sum.selections);
        if (!real) {
          // Where the work landed: starts away from the task's warm CPU.
          row["moves_per_wakeup"] = PerWakeup(TotalMoves(placed), sum.selections);
          row["moves_by_distance"] = MovesByDistance(placed);
          row["refill_ns_per_iteration"] = static_cast<double>(placed.penalty_ns) / iterations;
        }
        workloads.push_back(row);
        absl::StrAppend(
            &text, absl::StrFormat("%-12s %-4s %-9s %12.6g %12.4g %12.6g %12.6g %9.3f %7.2f%%\n",
                                   spec.name, v.label, ShortMetric(spec.kind), s.mean, s.std, s.q90,
                                   s.q99, row["probes_per_wakeup"].get<double>(),
                                   row["placed_on_busy_pct"].get<double>()));
      }
      nlohmann::json c = V1VsV0(spec, per_variant);
      c["q90"] = Pct(per_variant[1].q90, per_variant[0].q90);
      c["q99"] = Pct(per_variant[1].q99, per_variant[0].q99);
      change_means.push_back(c["mean"].get<double>());
      change.push_back(c);
    }
    j["workloads"] = workloads;
    j["v1_vs_v0_pct"] = change;
    j["workload_driver"] = driver_note;
    if (!real) j["workload_placement_penalty"] = tables_penalty ? "on" : "off";
    j["workload_topology"] = wl_topo->description();
    j["workload_scale"] = absl::StrCat(
        "hackbench 20+20 tasks per group, ", loops, " loops (seed: 5000); pipe ", round_trips,
        " round trips (seed: 100000); ", iterations, " iterations (seed: 100)");
    absl::StrAppend(
        &text, "\nV1 vs V0 (percent, like the seed's table; 95 % CI of the mean difference over ",
        iterations, " iterations each; std: run-to-run, in the metric's unit):\n");
    for (const auto& c : change) {
      const bool pipe = c["metric"].get<std::string>() == "ops/sec";
      absl::StrAppend(
          &text,
          absl::StrFormat("  %-12s %-9s mean %+7.2f%% [%+.2f, %+.2f]  q90 %+7.2f%%  q99 %+7.2f%%  "
                          "std V0 %.4g / V1 %.4g %s\n",
                          c["workload"].get<std::string>(), c["metric"].get<std::string>(),
                          c["mean"].get<double>(), c["mean_ci95_pct"][0].get<double>(),
                          c["mean_ci95_pct"][1].get<double>(), c["q90"].get<double>(),
                          c["q99"].get<double>(), c["std_v0"].get<double>(),
                          c["std_v1"].get<double>(), pipe ? "ops/s" : "s"));
    }
    return absl::OkStatus();
  }

  // schbench-like batch wake: wake -> run latency per variant.
  absl::Status SchbenchTable() {
    sb = nlohmann::json::array();
    absl::StrAppend(&text, "\nschbench-like batch wake, wake->run latency (us):\n");
    for (const char* name : {"V0", "V1", "V1-tickstop", "V2", "V4g"}) {
      ISOLATION_ASSIGN_OR_RETURN(Sel sel, SeedSel(name));
      sb_variants.push_back(sel);
    }
    for (const Sel& v : variants) {
      if (v.outside) sb_variants.push_back(v);
    }
    for (const Sel& v : sb_variants) {
      progress.Update(absl::StrCat("schbench ", v.label), 0.92);
      ISOLATION_ASSIGN_OR_RETURN(
          HarnessRun run, RunWorkload(RunTopo(), v.name, Workload::kSchbench, 0, quick ? 20 : 200,
                                      0, options.seed, real, tables_penalty));
      violations += SchbenchViolations(run);
      nlohmann::json row = SchbenchRow(v.label, run);
      if (!real)
        row["moves_per_wakeup"] = PerWakeup(TotalMoves(run.placement), run.counters.selections);
      sb.push_back(row);
      absl::StrAppend(
          &text, absl::StrFormat(
                     "  %-12s p50 %8.2f  p90 %8.2f  p99 %8.2f  (%d wakeups)%s\n", v.label,
                     row["p50_us"].get<double>(), row["p90_us"].get<double>(),
                     row["p99_us"].get<double>(), row["samples"].get<int>(),
                     run.completed ? "" : "  INCOMPLETE: the run hit its timeout (a violation)"));
      row["completed"] = run.completed;
    }
    j["schbench"] = sb;
    return absl::OkStatus();
  }

  // --- 4. placement penalty on, beside the tables above (off) ----------------------
  absl::Status PenaltySection() {
    const CacheRefillPenalty costs = PenaltyOn();
    nlohmann::json pen;
    pen["mode"] = penalty_mode;
    pen["costs_ns"] = {{"smt_sibling", costs.smt_sibling},
                       {"cross_core_same_llc", costs.cross_core_same_llc},
                       {"cross_llc", costs.cross_llc},
                       {"cross_node", costs.cross_node}};
    pen["model"] =
        "work starting on a CPU other than the one the task last ran work on runs longer by the "
        "refill cost of their distance (SimOptions::refill_penalty defaults: working set / "
        "refill "
        "bandwidth, docs/idle_select.md)";
    absl::StrAppend(&text, "\nplacement penalty (simulator, ", wl_topo->description(),
                    "): work starting away "
                    "from the task's warm CPU runs longer by smt_sibling ",
                    costs.smt_sibling / 1000.0, " us, cross_core_same_llc ",
                    costs.cross_core_same_llc / 1000.0, " us, cross_llc ", costs.cross_llc / 1000.0,
                    " us, cross_node ", costs.cross_node / 1000.0, " us\n");
    absl::StrAppend(&text, absl::StrFormat("%-12s %-4s %-9s %12s %12s %8s %12s %9s %9s %11s\n",
                                           "workload", "var", "metric", "off mean", "on mean",
                                           "on/off", "on std", "moves/w", "(off)", "refill/iter"));
    nlohmann::json pen_rows = nlohmann::json::array();
    nlohmann::json pen_change = nlohmann::json::array();
    std::vector<std::string> change_text;
    for (const WlSpec& spec : specs) {
      std::vector<Stats> per_variant(wl_variants.size());
      for (size_t vi = 0; vi < wl_variants.size(); ++vi) {
        const Sel& v = wl_variants[vi];
        progress.Update(absl::StrCat("placement penalty ", spec.name, " ", v.label), 0.93);
        // The tables' seeds: the same runs, the penalty the only change.
        ISOLATION_ASSIGN_OR_RETURN(CellRuns cell,
                                   RunCell(*wl_topo, spec, v, false, true, nullptr, [](int) {}));
        const Stats& s = cell.stats;
        const SimPlacementStats& placed = cell.placed;
        per_variant[vi] = s;
        const Stats& off = table_stats[{spec.name, v.label}];
        const double moves = PerWakeup(TotalMoves(placed), cell.sum.selections);
        nlohmann::json row = StatsRow(spec, v, s);
        row["mean_off"] = off.mean;
        row["on_vs_off_pct"] = Pct(s.mean, off.mean);
        row["moves_per_wakeup"] = moves;
        row["moves_per_wakeup_off"] = table_moves[{spec.name, v.label}];
        row["moves_by_distance"] = MovesByDistance(placed);
        row["wakeups_per_iteration"] = static_cast<double>(cell.sum.selections) / iterations;
        row["wakeups_per_iteration_off"] =
            static_cast<double>(table_wakeups[{spec.name, v.label}]) / iterations;
        row["penalties_per_iteration"] = static_cast<double>(placed.penalties) / iterations;
        row["refill_ns_per_iteration"] = static_cast<double>(placed.penalty_ns) / iterations;
        pen_rows.push_back(row);
        absl::StrAppend(
            &text,
            absl::StrFormat("%-12s %-4s %-9s %12.6g %12.6g %+7.2f%% %12.4g %9.3f %9.3f %8.3f ms\n",
                            spec.name, v.label, ShortMetric(spec.kind), off.mean, s.mean,
                            row["on_vs_off_pct"].get<double>(), s.std, moves,
                            row["moves_per_wakeup_off"].get<double>(),
                            static_cast<double>(placed.penalty_ns) / iterations / 1e6));
      }
      nlohmann::json c = V1VsV0(spec, per_variant);
      c["mean_off"] = Pct(table_stats[{spec.name, wl_variants[1].label}].mean,
                          table_stats[{spec.name, wl_variants[0].label}].mean);
      pen_change.push_back(c);
      change_text.push_back(
          absl::StrFormat("  %-12s %-9s mean %+7.2f%% [%+.2f, %+.2f]  (penalty off: %+.2f%%)\n",
                          spec.name, c["metric"].get<std::string>(), c["mean"].get<double>(),
                          c["mean_ci95_pct"][0].get<double>(), c["mean_ci95_pct"][1].get<double>(),
                          c["mean_off"].get<double>()));
    }
    absl::StrAppend(
        &text,
        "moves/w: work starts away from the task's warm CPU per wakeup, penalty on (off); "
        "refill/iter: modelled refill time per iteration, summed over the CPUs\n");
    absl::StrAppend(&text, "V1 vs V0 with the penalty on (percent; 95 % CI over ", iterations,
                    " iterations each):\n");
    for (const std::string& line : change_text) absl::StrAppend(&text, line);
    pen["workloads"] = pen_rows;
    pen["v1_vs_v0_pct"] = pen_change;
    ISOLATION_ASSIGN_OR_RETURN(pen["schbench"], PenaltySchbench());
    j["placement_penalty"] = pen;
    return absl::OkStatus();
  }

  // The schbench table again with the penalty on, beside its p99 off.
  absl::StatusOr<nlohmann::json> PenaltySchbench() {
    nlohmann::json pen_sb = nlohmann::json::array();
    absl::StrAppend(&text,
                    "schbench-like batch wake with the penalty on, wake->run latency (us):\n");
    for (size_t si = 0; si < sb_variants.size(); ++si) {
      const Sel& v = sb_variants[si];
      progress.Update(absl::StrCat("placement penalty schbench ", v.label), 0.94);
      ISOLATION_ASSIGN_OR_RETURN(
          HarnessRun run, RunWorkload(*wl_topo, v.name, Workload::kSchbench, 0, quick ? 20 : 200, 0,
                                      options.seed, false, true));
      violations += SchbenchViolations(run);
      nlohmann::json row = SchbenchRow(v.label, run);
      row["p99_us_off"] = sb[si]["p99_us"];
      row["moves_per_wakeup"] = PerWakeup(TotalMoves(run.placement), run.counters.selections);
      row["refill_ns"] = run.placement.penalty_ns;
      pen_sb.push_back(row);
      absl::StrAppend(
          &text, absl::StrFormat("  %-12s p50 %8.2f  p90 %8.2f  p99 %8.2f (off %8.2f)  moves/w %.3f"
                                 "  (%d wakeups)\n",
                                 v.label, row["p50_us"].get<double>(), row["p90_us"].get<double>(),
                                 row["p99_us"].get<double>(), row["p99_us_off"].get<double>(),
                                 row["moves_per_wakeup"].get<double>(), row["samples"].get<int>()));
    }
    return pen_sb;
  }

  // No penalty section (--idle_placement_penalty off or on, or real threads):
  // its mode only, and on real threads why.
  void NoPenaltySection() {
    nlohmann::json pen;
    pen["mode"] = penalty_mode;
    if (real) {
      pen["note"] = "not modelled on real threads (tasks pay real cache refills)";
      absl::StrAppend(
          &text,
          "\nplacement penalty: not modelled on real threads (tasks pay real cache refills)\n");
    }
    j["placement_penalty"] = pen;
  }

  // S22 load sweep: hackbench, pipe, schbench and the RR analogue at 25 /
  // 50 / 100 / 200 % of the workload machine's CPUs, V0 vs V1 (plus V3 and
  // V1-unbounded for rr, the S12 comparison), always on the simulator.
  absl::Status LoadSweep() {
    nlohmann::json sweep = nlohmann::json::array();
    const Nanos window = (quick ? 20 : 30) * kNsPerMs;
    absl::StrAppend(&text, "\nload sweep (simulator, ", wl_topo->description(),
                    "; value: hackbench ms, pipe/rr round trips per ms, schbench p99 us):\n");
    for (idle_select::LoadWorkload w :
         {idle_select::LoadWorkload::kHackbench, idle_select::LoadWorkload::kPipe,
          idle_select::LoadWorkload::kSchbench, idle_select::LoadWorkload::kRequestResponse}) {
      std::vector<std::string> sweep_names = {"V0", "V1"};
      if (w == idle_select::LoadWorkload::kRequestResponse) {
        sweep_names.push_back("V3");
        sweep_names.push_back("V1-unbounded");
      }
      std::vector<Sel> sweep_variants;
      for (const std::string& name : sweep_names) {
        ISOLATION_ASSIGN_OR_RETURN(Sel sel, SeedSel(name));
        sweep_variants.push_back(sel);
      }
      for (int load : {25, 50, 100, 200}) {
        progress.Update(absl::StrCat("load sweep ", std::string(idle_select::LoadWorkloadName(w)),
                                     " ", load, " %"),
                        0.95);
        double v0_value = 0;
        for (const Sel& v : sweep_variants) {
          ISOLATION_ASSIGN_OR_RETURN(idle_select::LoadPointResult r,
                                     RunLoadPoint(*wl_topo, v.name, w, load, window, options.seed));
          violations += r.counters.invariant_violations;
          const double n = static_cast<double>(std::max<int64_t>(1, r.counters.selections));
          nlohmann::json row;
          row["workload"] = std::string(idle_select::LoadWorkloadName(w));
          row["load_pct"] = load;
          row["tasks"] = r.tasks;
          row["variant"] = v.label;
          row["metric"] = w == idle_select::LoadWorkload::kHackbench  ? "duration_ms"
                          : w == idle_select::LoadWorkload::kSchbench ? "p99_us"
                                                                      : "round_trips_per_ms";
          row["value"] = r.value;
          row["probes_per_wakeup"] = static_cast<double>(r.counters.probes) / n;
          row["migrations_pct"] = 100.0 * static_cast<double>(r.counters.migrations) / n;
          row["max_queued_ahead"] = r.counters.max_queued_ahead;
          if (v.Is("V0")) v0_value = r.value;
          row["vs_v0_pct"] = v0_value != 0 ? Pct(r.value, v0_value) : 0.0;
          absl::StrAppend(
              &text, absl::StrFormat("  %-9s %4d%% %-12s %10.2f (%+7.2f%% vs V0)  probes %6.2f  "
                                     "migrations %5.1f%%\n",
                                     row["workload"].get<std::string>(), load, v.label, r.value,
                                     row["vs_v0_pct"].get<double>(),
                                     row["probes_per_wakeup"].get<double>(),
                                     row["migrations_pct"].get<double>()));
          sweep.push_back(row);
        }
      }
    }
    j["load_sweep"] = sweep;
    return absl::OkStatus();
  }

  // Concurrent wake-ups (S14, S16 with library code on the simulator):
  // every registered selector and the broken-handshake control at
  // 50 / 75 / 90 % load, the windows open.
  absl::Status ConcurrentWakeups() {
    nlohmann::json stacking = nlohmann::json::array();
    const Nanos window = (quick ? 5 : 20) * kNsPerMs;
    std::vector<std::string> names = idle_select::SelectorNames();
    names.push_back("V0-norecheck");
    // A negative control asked for by name is a row too (and counted).
    for (const Sel& v : variants) {
      if (std::find(names.begin(), names.end(), v.name) == names.end()) names.push_back(v.name);
    }
    absl::StrAppend(&text, "\nconcurrent wake-ups (simulator, ", wl_topo->description(),
                    "; rr for ", window / kNsPerMs, " ms; select->enqueue ",
                    idle_select::kConcurrentWakeSelectCost,
                    " ns + up to as much jitter, idle entry ",
                    idle_select::kConcurrentIdleEntryCost, " ns): stackings / lost wakeups\n");
    absl::StrAppend(&text,
                    absl::StrFormat("  %-14s %14s %14s %14s\n", "variant", "50%", "75%", "90%"));
    for (const std::string& name : names) {
      progress.Update(absl::StrCat("concurrent wake-ups ", name), 0.97);
      ISOLATION_ASSIGN_OR_RETURN(const idle_select::SelectorEntry* entry,
                                 idle_select::FindSelector(name));
      std::string line = absl::StrFormat("  %-14s", name);
      for (int load : {50, 75, 90}) {
        ISOLATION_ASSIGN_OR_RETURN(StackingPoint p,
                                   RunStackingPoint(*wl_topo, name, load, window, options.seed));
        violations += p.result.counters.invariant_violations;
        // A correct selector never loses a wakeup: one that does is a
        // violation.  The always-shown control row counts only when the
        // control was asked for (--idle_variants).
        const bool asked = std::any_of(variants.begin(), variants.end(),
                                       [&](const Sel& v) { return v.name == name; });
        if (!entry->negative_control || asked) violations += p.lost_wakeups;
        nlohmann::json row;
        row["variant"] = name;
        row["negative_control"] = entry->negative_control;
        row["load_pct"] = load;
        row["tasks"] = p.result.tasks;
        row["stackings"] = p.result.counters.stackings;
        row["lost_wakeups"] = p.lost_wakeups;
        row["harness_lost_wakeups"] = p.result.counters.lost_wakeups;
        row["selections"] = p.result.counters.selections;
        row["round_trips_per_ms"] = p.result.value;
        stacking.push_back(row);
        absl::StrAppend(
            &line, absl::StrFormat(" %8d / %-3d", p.result.counters.stackings, p.lost_wakeups));
      }
      absl::StrAppend(&text, line, entry->negative_control ? "  (negative control)\n" : "\n");
    }
    j["stacking"] = stacking;
    j["stacking_setup"] = absl::StrCat(
        "rr (kernel wake_affine) for ", window / kNsPerMs, " ms on ", wl_topo->description(),
        ", SimOptions wake_select_cost ", idle_select::kConcurrentWakeSelectCost,
        " ns, idle_entry_cost ", idle_select::kConcurrentIdleEntryCost, " ns, seed ", options.seed);
    return absl::OkStatus();
  }

  // --- 3. isolation: the spans wakeup selection sees -----------------------------
  void IsolationSpans() {
    const idle_select::IdleTopology it = idle_select::IdleTopology::From(*machine, *machine_iso);
    nlohmann::json spans = nlohmann::json::array();
    int isolated_in_spans = 0;
    const CpuMask isolated = machine_iso->DomainIsolated();
    for (const CpuMask& span : it.llc_span) {
      spans.push_back(span.ToString());
      isolated_in_spans += span.WeightAnd(isolated);
    }
    violations += isolated_in_spans;  // I2: must be 0
    nlohmann::json iso;
    iso["topology"] = machine->description();
    iso["isolcpus_domain"] = machine_iso->isolcpus_domain().ToString();
    iso["llc_spans"] = spans;
    iso["isolated_cpus_in_spans"] = isolated_in_spans;
    auto scx = idle_select::IdleState::Create(it, idle_select::Options{.variant = "V4g"});
    iso["sched_ext_loads"] = scx.ok();
    if (!scx.ok()) iso["sched_ext_refusal"] = std::string(scx.status().message());
    j["isolation"] = iso;
    std::string span_text;
    for (const auto& s : spans)
      absl::StrAppend(&span_text, span_text.empty() ? "" : " | ", s.get<std::string>());
    absl::StrAppend(&text, "\nisolation: ", machine->description(), " isolcpus=domain ",
                    machine_iso->isolcpus_domain().ToString(), " -> wakeup LLC spans ", span_text,
                    "; sched_ext ", scx.ok() ? "loads" : "refuses to load", "\n");
  }

  // --- reproduce rows --------------------------------------------------------------
  void ReproduceRows() {
    const std::string label = quick ? " [quick]" : "";
    const std::string wl_label =
        real ? absl::StrCat(real_model->row_prefix(), "host time: indicative, not representative; ",
                            real_model->label)
             : std::string("simulator, modelled time");
    report.rows.push_back(
        {"idle", "hackbench groups 1/2/4 mean duration, V1 vs V0",
         "-1.07 / -0.79 / -0.54 % (Ampere eMAG 32 cores, 100 runs, <jhj1rh6yygz.mognet@arm.com>)",
         absl::StrFormat("%+.2f / %+.2f / %+.2f %% (%s, %d iterations, %d loops)%s",
                         change_means[0], change_means[1], change_means[2], wl_label, iterations,
                         loops, label)});
    report.rows.push_back({"idle", "perf bench sched pipe ops/s, V1 vs V0",
                           "+1.05 % (not significant, KS p ~ 0.9; same machine and thread)",
                           absl::StrFormat("%+.2f %% (%s, %d round trips x %d)%s", change_means[3],
                                           wl_label, round_trips, iterations, label)});
    report.rows.push_back(
        {"idle", "avg scan cost, base vs idle cpumask",
         "223.12 ns -> 63.4 ns (192 CPUs, 4x overcommit, SIS_PROP base; Aubrey Li RFC v3 thread)",
         v0_ns_75 < 0 || v1_ns_75 < 0
             ? std::string("n/a (V0 or V1 not in --idle_variants)")
             : absl::StrFormat("%.1f ns -> %.1f ns median per selection, probes %.2f -> %.2f "
                               "(64-CPU LLC, 75 %% "
                               "busy, SIS_UTIL budget; host, shared 2-core machine: indicative)%s",
                               v0_ns_75, v1_ns_75, v0_probes_75, v1_probes_75, label)});
  }

  // The machine the workload tables run on: the host-sized model on real
  // threads, else --idle_workload_topology.
  const Topology& RunTopo() const {
    return real_model.has_value() ? real_model->topology : *wl_topo;
  }

  const CommonOptions& options;
  const IdleExperimentOptions& opts;
  Progress& progress;
  const bool quick;

  // The options, validated.
  std::vector<Sel> variants;
  std::vector<int> llc_sizes;
  int samples = 0;
  int iterations = 0;
  int loops = 0;
  int round_trips = 0;
  const std::string& driver_kind = opts.driver;
  const std::string& penalty_mode = opts.placement_penalty;
  // The workload and schbench tables run with the penalty on only for
  // "on"; "both" adds the penalty-on section (simulator only).
  bool tables_penalty = false;
  bool penalty_section = false;
  bool real = false;                // --idle_driver=real
  std::optional<Topology> machine;  // --topology, --isolcpus
  std::optional<IsolationConfig> machine_iso;
  absl::StatusOr<Topology> wl_topo;
  std::optional<RealThreadModel> real_model;

  ExperimentReport report;
  nlohmann::json& j = report.json;
  std::string text;
  int64_t violations = 0;

  // Figures a later section or the reproduce rows read.
  double v0_ns_75 = -1, v1_ns_75 = -1, v0_probes_75 = -1, v1_probes_75 = -1;
  std::string driver_note;
  std::vector<Sel> wl_variants;  // the workload tables' rows
  const std::vector<WlSpec> specs = {{"hackbench-1", Workload::kHackbench, 1},
                                     {"hackbench-2", Workload::kHackbench, 2},
                                     {"hackbench-4", Workload::kHackbench, 4},
                                     {"pipe", Workload::kPipe, 0}};
  std::vector<double> change_means;  // V1 vs V0 per workload, in `specs` order
  // The tables' figures per (workload, variant), for the penalty section.
  std::map<std::pair<std::string, std::string>, Stats> table_stats;
  std::map<std::pair<std::string, std::string>, double> table_moves;
  std::map<std::pair<std::string, std::string>, int64_t> table_wakeups;
  std::vector<Sel> sb_variants;  // the schbench table's rows
  nlohmann::json sb;             // and the rows themselves (penalty off)

  // One S22 cell on the simulator (RR with the kernel wake_affine rule, as
  // the S12 test; the rest with the harness default, as S19-S21).
  static absl::StatusOr<idle_select::LoadPointResult> RunLoadPoint(const Topology& topo,
                                                                   const std::string& v,
                                                                   idle_select::LoadWorkload w,
                                                                   int load, Nanos window,
                                                                   uint64_t seed) {
    IsolationConfig iso(topo);
    idle_select::Options o;
    o.variant = v;
    ISOLATION_ASSIGN_OR_RETURN(
        std::unique_ptr<idle_select::IdleState> state,
        idle_select::IdleState::Create(idle_select::IdleTopology::From(topo, iso), o));
    std::unique_ptr<idle_select::IdleSelector> selector = idle_select::MakeSelector(*state);
    idle_select::HarnessOptions ho;
    ho.max_tasks = HarnessTasks(topo, 4096);
    ho.wake_affine_kernel = w == idle_select::LoadWorkload::kRequestResponse;
    idle_select::IdleSelectHooks hooks(*state, *selector, ho);
    SimOptions so;
    so.seed = seed;
    so.hz = 250;
    ISOLATION_ASSIGN_OR_RETURN(std::unique_ptr<Simulator> sim, Simulator::Create(topo, iso, so));
    sim->AddHooks(&hooks);
    return idle_select::RunLoadPoint(*sim, hooks, w, load, window);
  }

  struct StackingPoint {
    idle_select::LoadPointResult result;
    int64_t lost_wakeups = 0;  // the simulator's count (Simulator::lost_wakeups)
  };
  // One cell of the concurrent wake-up table: the RR analogue with the
  // kernel wake_affine rule (as S12), both windows open.
  static absl::StatusOr<StackingPoint> RunStackingPoint(const Topology& topo,
                                                        const std::string& selector, int load,
                                                        Nanos window, uint64_t seed) {
    IsolationConfig iso(topo);
    idle_select::Options o;
    o.variant = selector;
    ISOLATION_ASSIGN_OR_RETURN(
        std::unique_ptr<idle_select::IdleState> state,
        idle_select::IdleState::Create(idle_select::IdleTopology::From(topo, iso), o));
    idle_select::HarnessOptions ho;
    ho.max_tasks = HarnessTasks(topo, 4096);
    ho.wake_affine_kernel = true;
    idle_select::IdleSelectHooks hooks(*state, ho);
    SimOptions so;
    so.seed = seed;
    so.hz = 250;
    so.wake_select_cost = idle_select::kConcurrentWakeSelectCost;
    so.idle_entry_cost = idle_select::kConcurrentIdleEntryCost;
    ISOLATION_ASSIGN_OR_RETURN(std::unique_ptr<Simulator> sim, Simulator::Create(topo, iso, so));
    sim->AddHooks(&hooks);
    StackingPoint p;
    ISOLATION_ASSIGN_OR_RETURN(
        p.result, idle_select::RunLoadPoint(
                      *sim, hooks, idle_select::LoadWorkload::kRequestResponse, load, window));
    p.lost_wakeups = sim->lost_wakeups();
    return p;
  }

  // A schbench run's invariant violations (an unfinished run counts one).
  static int64_t SchbenchViolations(const HarnessRun& run) {
    return (run.completed ? 0 : 1) + run.counters.invariant_violations;
  }
  // One schbench table row: the run's wake->run latency quantiles (us).
  static nlohmann::json SchbenchRow(const std::string& label, const HarnessRun& run) {
    std::vector<double> lat;
    lat.reserve(run.latencies.size());
    for (Nanos x : run.latencies) lat.push_back(static_cast<double>(x) / 1000.0);
    nlohmann::json row;
    row["variant"] = label;
    row["p50_us"] = Quantile(lat, 0.50);
    row["p90_us"] = Quantile(lat, 0.90);
    row["p99_us"] = Quantile(lat, 0.99);
    row["samples"] = lat.size();
    return row;
  }

  // Task ids the harness keeps state for: the workload's `tasks` and, as the
  // drivers number them, a few per CPU of the machine (a real-thread model of
  // 8192 CPUs numbered past 1024 and failed).
  static int HarnessTasks(const Topology& topo, int tasks) {
    return std::min(idle_select::kMaxHarnessTasks, tasks + 4 * topo.num_cpus());
  }

  // The penalty of the "on" runs: the simulator's default costs, enabled.
  static CacheRefillPenalty PenaltyOn() {
    CacheRefillPenalty p;
    p.enabled = true;
    return p;
  }

  static absl::StatusOr<HarnessRun> RunWorkload(const Topology& topo, const SelectorName& v,
                                                Workload kind, int groups, int loops_or_rounds,
                                                int round_trips, uint64_t seed, bool real,
                                                bool refill_penalty, TraceFile* trace = nullptr,
                                                const std::string& trace_name = "") {
    IsolationConfig iso(topo);
    ISOLATION_ASSIGN_OR_RETURN(std::unique_ptr<TraceRun> trace_run,
                               StartTraceRun(trace, trace_name, topo, iso));
    idle_select::Options o;
    o.variant = v;
    ISOLATION_ASSIGN_OR_RETURN(
        std::unique_ptr<idle_select::IdleState> state,
        idle_select::IdleState::Create(idle_select::IdleTopology::From(topo, iso), o));
    std::unique_ptr<idle_select::IdleSelector> selector = idle_select::MakeSelector(*state);
    idle_select::HarnessOptions ho;
    ho.max_tasks = HarnessTasks(topo, 1024);
    idle_select::IdleSelectHooks hooks(*state, *selector, ho);
    std::unique_ptr<Driver> driver;
    Simulator* sim = nullptr;
    if (real) {
      RealDriverOptions ro;
      ro.seed = seed;
      ISOLATION_ASSIGN_OR_RETURN(std::unique_ptr<RealThreadDriver> d,
                                 RealThreadDriver::Create(topo, iso, ro));
      driver = std::move(d);
    } else {
      SimOptions so;
      so.seed = seed;
      so.hz = 250;
      if (refill_penalty) so.refill_penalty = PenaltyOn();
      ISOLATION_ASSIGN_OR_RETURN(std::unique_ptr<Simulator> d, Simulator::Create(topo, iso, so));
      sim = d.get();
      driver = std::move(d);
    }
    if (trace_run != nullptr) trace_run->Attach(*driver);
    driver->AddHooks(&hooks);
    const Nanos timeout = 60 * kNsPerSec;
    HarnessRun out;
    absl::StatusOr<idle_select::WorkloadResult> r;
    switch (kind) {
      case Workload::kHackbench: {
        idle_select::HackbenchParams p;
        p.groups = groups;
        p.senders = 20;
        p.messages = loops_or_rounds;
        p.work_jitter_pct = 20;
        r = idle_select::RunHackbench(*driver, &hooks, p, timeout);
        if (r.ok()) out.value = static_cast<double>(r->duration_ns) / 1e9;
        break;
      }
      case Workload::kPipe: {
        idle_select::PipeParams p;
        p.round_trips = round_trips;
        p.work_jitter_pct = 20;
        r = idle_select::RunPipe(*driver, &hooks, p, timeout);
        if (r.ok())
          out.value = r->duration_ns > 0 ? static_cast<double>(r->operations) * 1e9 /
                                               static_cast<double>(r->duration_ns)
                                         : 0.0;
        break;
      }
      case Workload::kSchbench: {
        idle_select::SchbenchParams p;
        p.message_tasks = 2;
        p.workers_per_message = std::max(1, topo.num_cpus() / 2);
        p.rounds = loops_or_rounds;
        r = idle_select::RunSchbench(*driver, &hooks, p, timeout);
        if (r.ok()) out.latencies = r->latencies;
        break;
      }
    }
    if (trace_run != nullptr) trace_run->Finish(driver->Now());
    if (!r.ok()) return r.status();
    out.completed = r->completed;
    out.counters = hooks.counters();
    out.violation = state->CheckSubsetInvariant();
    if (sim != nullptr) out.placement = sim->placement_stats();
    return out;
  }
};

}  // namespace

absl::StatusOr<RunCost> EstimateIdleExperiment(const CommonOptions& common,
                                               const IdleExperimentOptions& options) {
  (void)common;
  std::vector<int> llcs = options.llc_cpus;
  double samples = std::max(options.samples, 1);
  double iterations = std::max(options.iterations, 1);
  double loops = std::max(options.hackbench_loops, 1);
  double round_trips = std::max(options.pipe_round_trips, 1);
  double busy_points = 7;
  if (common.quick) {
    llcs = {64};
    samples = std::min(samples, 3000.0);
    iterations = std::min(iterations, 3.0);
    loops = std::min(loops, 40.0);
    round_trips = std::min(round_trips, 300.0);
    busy_points = 5;
  }
  if (std::find(llcs.begin(), llcs.end(), 64) == llcs.end()) llcs.push_back(64);
  const double variants = std::max<double>(1, static_cast<double>(options.variants.size()));
  double llc_sum = 0;
  for (int llc : llcs) llc_sum += 0.25e-6 + 3.3e-9 * std::max(llc, 0);
  // Fitted to runs on the reference host (README.md, "isolab";
  // docs/history/2026-12-04-isolab-8192.md): a timed Select ~0.25 us + 3.3 ns per LLC CPU; a
  // hackbench group loop ~155 us, a pipe round trip ~73 us; the sections of fixed size ~3 s.
  RunCost sweep{llc_sum * busy_points * variants * samples, 16e6 + samples * 16.0,
                absl::StrCat("select sweep: ", llcs.size(), " LLC sizes x ", busy_points,
                             " loads x ", variants, " variants x ", samples, " samples")};
  const double wl_variants = 2 + static_cast<double>(OutsideSelectors().size());
  const double passes = options.placement_penalty == "both" && options.driver == "sim" ? 2 : 1;
  RunCost workloads{
      wl_variants * iterations * passes * (7 * loops * 1.55e-4 + round_trips * 7.25e-5) + 3.0, 16e6,
      absl::StrCat("workloads: ", wl_variants, " variants x ", iterations, " iterations x ", passes,
                   " passes")};
  RunCost total;
  AddCost(total, sweep);
  AddCost(total, workloads);
  if (options.driver == "real") {
    // The workloads on real threads: ~50 ms per run plus ~0.15 us per pair
    // of model CPUs, ~8 KB per model CPU (--quick on 2 host CPUs: 1024
    // model CPUs 5.8 s, 8192 262 s).
    absl::StatusOr<Topology> wl = Topology::FromFlag(options.workload_topology);
    const double n = wl.ok() ? RealModelCpus(common, *wl) : 1;
    const double runs = wl_variants * iterations * 4;
    AddCost(total, RunCost{runs * (0.05 + n * n * 1.5e-7), n * 8e3 + 16e6,
                           absl::StrCat("real threads: ", runs, " runs on ", n, " CPUs")});
  }
  return total;
}

absl::StatusOr<ExperimentReport> RunIdleExperiment(const CommonOptions& common,
                                                   const IdleExperimentOptions& options,
                                                   Progress& progress) {
  ISOLATION_ASSIGN_OR_RETURN(ExperimentReport report,
                             IdleExperiment(common, options, progress).Run());
  FinishReport(ConfigurationWarnings(common), report);
  return report;
}

}  // namespace isolation::experiments
