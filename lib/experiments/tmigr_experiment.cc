// SPDX-License-Identifier: GPL-2.0-or-later
//
// `isolab tmigr`: the oslat seed of the v6.19 series "timers: Exclude
// isolated cpus from timer migration" on the model machine.
//
//   modelled   spec S24 as a discrete-event run (tmigr_workload.h) of both
//              variants: isolated CPUs always busy (as under oslat),
//              housekeeping CPUs mostly idle and arming global timers (as
//              drivers' delayed work does); who runs whose timers, lateness,
//              lost timers and invariant violations.
//   real       the same mechanism under the real-thread driver on the
//              host-sized model (real_model.h; on a 2-CPU host: model CPU 0
//              housekeeping (nohz idle, a delayed-work analogue), model CPU 1
//              isolated running the noise meter with its tick on); the
//              longest gap the meters see on an isolated CPU per variant, and
//              the gaps as an `rtla osnoise hist` histogram (JSON always, text
//              with --hist).  Indicative only on a small host.
//
// --trace records, per variant, the modelled run and the real-thread run.
//
// Kernel counterpart: kernel/time/timer_migration.c (v6.9 and v6.19).

#include "experiments/tmigr_experiment.h"

#include "experiments/noise_experiment.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "isolation/core/clock.h"
#include "isolation/runtime/noise_meter.h"
#include "isolation/runtime/real_driver.h"
#include "isolation/runtime/sim.h"
#include "core/status_macros.h"
#include "isolation/tmigr/tmigr.h"
#include "isolation/tmigr/hooks.h"
#include "isolation/tmigr/timers.h"
#include "isolation/tmigr/variants.h"
#include "isolation/tmigr/workload.h"
#include "experiments/real_model.h"
#include "experiments/tmigr_bug_probe.h"

namespace isolation::experiments {
namespace {

using tmigr::OslatWorkloadConfig;
using tmigr::OslatWorkloadResult;

struct RealOutcome {
  std::string variant;                             // registered participation
  std::vector<std::pair<int, NoiseResult>> noise;  // per isolated model CPU
  Nanos max_gap_ns = 0;                            // the longest gap on any isolated CPU
  int worst_cpu = -1;                              // the isolated CPU that saw it
  int64_t callbacks_on_isolated = 0;
  int64_t remote_on_isolated = 0;
  bool oversubscribed = false;
  std::string error;
};

// The host-sized model (real_model.h) on real threads: each housekeeping CPU
// runs a delayed-work analogue (nohz idle), each isolated CPU a busy noise
// meter (tick on, or stopped with nohz_full).  On a 2-CPU host: CPU 0
// housekeeping, CPU 1 isolated.
RealOutcome RunReal(const RealThreadModel& model, const std::string& variant, Nanos duration,
                    Nanos callback_cost, uint64_t seed, TraceFile* trace,
                    const NoiseHistogramOptions& hist) {
  RealOutcome out;
  out.variant = variant;
  auto fail = [&](const absl::Status& s) {
    out.error = std::string(s.message());
    return out;
  };
  const Topology& topo = model.topology;
  const IsolationConfig& iso = model.isolation;
  const int n = topo.num_cpus();
  tmigr::Options o;
  o.participation = variant;
  RealDriverOptions ro;
  ro.hz = 1000;
  ro.seed = seed;
  auto run = StartTraceRun(trace,
                           absl::StrCat("tmigr ", variant, ": real threads (", n,
                                        " CPUs, isolated ", model.isolated.ToString(), ")"),
                           topo, iso);
  if (!run.ok()) return fail(run.status());
  auto driver = RealThreadDriver::Create(topo, iso, ro);
  if (!driver.ok()) return fail(driver.status());
  if (*run != nullptr) (*run)->Attach(**driver);
  auto ts =
      tmigr::TimerSystem::Create(topo, o, tmigr::TimerSystem::Config{(*driver)->tick_period()});
  if (!ts.ok()) return fail(ts.status());
  if (absl::Status s = (*ts)->tmigr().SetIsolation(iso); !s.ok()) return fail(s);
  if (absl::Status s = (*ts)->BootAll(); !s.ok()) return fail(s);
  (*ts)->tmigr().InitIsolation();
  tmigr::TmigrHooks hooks(**ts, tmigr::TmigrHooks::Config{callback_cost});
  (*driver)->AddHooks(&hooks);
  std::vector<std::unique_ptr<NoiseMeter>> meters;  // one per measuring thread (noise_meter.h)
  for (int cpu = 0; cpu < n; ++cpu) {
    TaskSpec t;
    t.cpu = cpu;
    t.affinity = CpuMask::Of(n, cpu);
    if (model.isolated.Test(cpu)) {
      // Isolated and busy: without nohz_full its tick runs.
      (*driver)->SetTickMode(
          cpu, iso.nohz_full().TestInRange(cpu) ? TickMode::kNohzFull : TickMode::kPeriodic);
      meters.push_back(std::make_unique<NoiseMeter>(hist));
      t.name = absl::StrCat("oslat/", cpu);
      t.body = meters.back()->MakeTaskBody(duration);
    } else {
      (*driver)->SetTickMode(cpu, TickMode::kNohzIdle);
      t.name = absl::StrCat("delayed_work/", cpu);
      t.body = hooks.MakeHousekeepingTask(cpu, 10 * kNsPerMs, 100 * kNsPerUs, 4 * kNsPerMs);
    }
    if (auto s = (*driver)->Spawn(std::move(t)); !s.ok()) return fail(s.status());
  }
  if (absl::Status s = (*driver)->RunFor(duration + 20 * kNsPerMs); !s.ok()) return fail(s);
  if (*run != nullptr) (*run)->Finish((*driver)->Now());
  size_t next_meter = 0;
  for (int cpu = 0; cpu < n; ++cpu) {
    if (!model.isolated.Test(cpu)) continue;
    NoiseResult r = meters[next_meter++]->Result();
    if (out.worst_cpu < 0 || r.max_ns > out.max_gap_ns) {
      out.max_gap_ns = r.max_ns;
      out.worst_cpu = cpu;
    }
    out.callbacks_on_isolated += hooks.callbacks_on(cpu);
    out.remote_on_isolated += hooks.remote_callbacks_on(cpu);
    out.noise.emplace_back(cpu, std::move(r));
  }
  out.oversubscribed = (*driver)->oversubscribed();
  return out;
}

// --tmigr_bugs: the hierarchy negative control the modelled runs use, by
// its registered name (at most one; "mainline" when none).  Whether the
// experiment can show it is its directed probe's answer (tmigr_bug_probe.h).
absl::StatusOr<std::string> HierarchyOfBugs(const std::vector<std::string>& names) {
  std::vector<std::string> controls;
  for (const VariantEntry<tmigr::HierarchyFactory>* e : tmigr::HierarchyRegistry().All()) {
    if (e->negative_control) controls.push_back(e->name);
  }
  for (const std::string& part : names) {
    auto entry = tmigr::HierarchyRegistry().Find(part);
    if (!entry.ok() || !(*entry)->negative_control) {
      return absl::InvalidArgumentError(absl::StrCat("--tmigr_bugs: unknown bug '",
                                                     absl::CHexEscape(part), "' (want one of ",
                                                     absl::StrJoin(controls, ", "), ")"));
    }
  }
  if (names.size() > 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--tmigr_bugs: one negative control at a time, got ", absl::StrJoin(names, ", ")));
  }
  if (names.empty()) return std::string("mainline");
  return (*tmigr::HierarchyRegistry().Find(names[0]))->name;
}

std::string Us(Nanos ns) { return absl::StrFormat("%.1f us", static_cast<double>(ns) / 1000.0); }

// One run of the experiment: the validated options, the modelled and
// real-thread runs, and the report built from them.  Run() calls one
// function per section, in the order of the text.
class TmigrExperiment {
 public:
  TmigrExperiment(const CommonOptions& common, const TmigrExperimentOptions& tmigr_options,
                  Progress& run_progress)
      : options(common), opts(tmigr_options), progress(run_progress) {}

  absl::StatusOr<ExperimentReport> Run() {
    ISOLATION_RETURN_IF_ERROR(ParseOptions());
    ISOLATION_RETURN_IF_ERROR(RunBugProbes());
    ISOLATION_RETURN_IF_ERROR(SetUpRuns());
    Header();
    ISOLATION_RETURN_IF_ERROR(ModelledRuns());
    ProbeVerdicts();
    ISOLATION_RETURN_IF_ERROR(RealThreadRuns());
    progress.Done();
    AddReproduceRow();
    return std::move(report);
  }

 private:
  absl::Status ParseOptions() {
    // Registered participations, a user's too (registered.h).
    for (const std::string& part : opts.variants) {
      ISOLATION_ASSIGN_OR_RETURN(std::string name, ResolveParticipation("--tmigr_variants", part));
      variants.push_back(std::move(name));
    }
    if (variants.empty()) return absl::InvalidArgumentError("--tmigr_variants: empty list");
    duration_ms = opts.duration_ms;
    if (duration_ms <= 0 || duration_ms > 3'600'000) {
      return absl::InvalidArgumentError(
          absl::StrCat("--tmigr_duration_ms=", duration_ms, ": want 1..3600000"));
    }
    hk_period_us = opts.hk_period_us;
    if (hk_period_us <= 100 || hk_period_us > 1'000'000) {
      return absl::InvalidArgumentError(
          absl::StrCat("--tmigr_hk_period_us=", hk_period_us, ": want 101..1000000"));
    }
    cost_us = opts.callback_cost_us;
    if (cost_us < 0 || cost_us > 100'000) {
      return absl::InvalidArgumentError(
          absl::StrCat("--tmigr_callback_cost_us=", cost_us, ": want 0..100000"));
    }
    real_ms = opts.real_ms;
    if (real_ms < 0 || real_ms > 600'000) {
      return absl::InvalidArgumentError(
          absl::StrCat("--tmigr_real_ms=", real_ms, ": want 0..600000"));
    }
    ISOLATION_ASSIGN_OR_RETURN(hierarchy, HierarchyOfBugs(opts.bugs));
    bugs_text = absl::StrJoin(opts.bugs, ",");
    ISOLATION_RETURN_IF_ERROR(ValidateNoiseHistogram(options.hist.shape));
    if (options.quick) {
      duration_ms = std::min<int64_t>(duration_ms, 2000);
      real_ms = std::min<int64_t>(real_ms, 150);
    }
    ISOLATION_ASSIGN_OR_RETURN(topo, LoadTopology(options));
    ISOLATION_ASSIGN_OR_RETURN(iso, LoadIsolation(options, *topo));
    ISOLATION_RETURN_IF_ERROR(CheckTraceCpus(options.trace, *topo));
    return absl::OkStatus();
  }

  // Each bug switch's directed probe on this machine (tmigr_bug_probe.h),
  // first: a configuration that cannot show the bug is refused before the
  // runs, never reported clean.
  absl::Status RunBugProbes() {
    for (const std::string& bug : opts.bugs) {
      std::vector<std::string> reasons;
      bool shown = false;
      for (const std::string& variant : variants) {
        ISOLATION_ASSIGN_OR_RETURN(TmigrBugProbe probe, ProbeTmigrBug(bug, variant, *topo, *iso));
        if (!probe.applicable)
          reasons.push_back(absl::StrCat("with ", probe.participation, " it ", probe.reason));
        shown = shown || probe.applicable;
        probes.push_back(std::move(probe));
      }
      if (!shown) {
        return absl::InvalidArgumentError(
            absl::StrCat("--tmigr_bugs=", bug, " (", probes.back().scenario,
                         ") cannot be shown on this machine: ", absl::StrJoin(reasons, "; ")));
      }
    }
    return absl::OkStatus();
  }

  // The real-thread machine, sized to the host (an oversubscribed one is
  // refused here, before the modelled runs), and the modelled runs' workload.
  absl::Status SetUpRuns() {
    if (real_ms > 0) {
      ISOLATION_ASSIGN_OR_RETURN(RealThreadModel m, HostSizedModel(options, *topo, *iso));
      real_model.emplace(std::move(m));
    }
    // The modelled runs share the bound first; the (small) real-thread runs
    // share what they leave.
    if (options.trace != nullptr) options.trace->PlanRuns(static_cast<int>(variants.size()));
    cfg.duration = duration_ms * kNsPerMs;
    cfg.hk_period = hk_period_us * kNsPerUs;
    cfg.callback_cost = cost_us * kNsPerUs;
    cfg.seed = options.seed;
    // With nohz_full on the isolated CPUs their tick stops while busy (S26).
    cfg.isolated_tick_stopped = !iso->nohz_full().Empty();
    return absl::OkStatus();
  }

  // The JSON's configuration and the text's first lines.
  void Header() {
    j["experiment"] = "tmigr";
    j["quick"] = options.quick;
    j["topology"] = topo->description();
    j["isolcpus"] = iso->isolcpus_domain().ToString();
    j["nohz_full"] = iso->nohz_full().ToString();
    j["duration_ns"] = cfg.duration;
    j["hk_period_ns"] = cfg.hk_period;
    j["label"] = "modelled (discrete-event, deterministic seed)";
    j["bugs"] = bugs_text;
    j["variants"] = nlohmann::json::array();
    j["details"] = nlohmann::json::array();
    absl::StrAppend(
        &text, "tmigr: ", topo->Summary(), ", isolcpus=", iso->isolcpus_domain().ToString(), ", ",
        duration_ms, " ms modelled", options.quick ? " (quick)" : "",
        bugs_text.empty() ? "" : absl::StrCat(" (negative control: --tmigr_bugs=", bugs_text, ")"),
        "\n");
    absl::StrAppend(&text, absl::StrFormat("%-10s %12s %12s %8s %14s %10s  %s\n", "variant",
                                           "timers", "on_isolated", "lost", "max_late",
                                           "violations", "pullers (cpu:remote expiries)"));
  }

  // Every variant on the simulator (S24, the oslat seed).
  absl::Status ModelledRuns() {
    for (size_t i = 0; i < variants.size(); ++i) {
      progress.Update(absl::StrCat("modelling ", variants[i]),
                      0.6 * static_cast<double>(i) / static_cast<double>(variants.size()));
      tmigr::Options o;
      o.participation = variants[i];
      o.hierarchy = hierarchy;
      ISOLATION_ASSIGN_OR_RETURN(
          std::unique_ptr<TraceRun> run,
          StartTraceRun(options.trace,
                        absl::StrCat("tmigr ", variants[i], ": modelled S24 (oslat seed), ",
                                     duration_ms, " ms"),
                        *topo, *iso));
      cfg.tracer = run.get();
      // The workload runs on a zero-cost simulator at HZ 1000 (its jiffy).
      ISOLATION_ASSIGN_OR_RETURN(
          std::unique_ptr<Simulator> sim,
          Simulator::Create(*topo, *iso, ZeroCostSimOptions(1000, options.seed)));
      ISOLATION_ASSIGN_OR_RETURN(OslatWorkloadResult r, tmigr::RunOslatWorkload(*sim, o, cfg));
      if (run != nullptr) run->Finish(cfg.duration);
      nlohmann::json v;
      v["variant"] = variants[i];
      v["timers_total"] = r.timers_total;
      v["timers_on_isolated"] = r.timers_on_isolated;
      v["global_timers"] = r.global_timers;
      v["global_on_isolated"] = r.global_on_isolated;
      v["timers_lost"] = r.timers_lost;
      v["max_lateness_ns"] = r.max_lateness_ns;
      v["invariant_violations"] = r.invariant_violations;
      nlohmann::json per_cpu = nlohmann::json::object();
      for (const auto& [cpu, n] : r.per_cpu_timers) per_cpu[std::to_string(cpu)] = n;
      v["per_cpu_timers"] = per_cpu;
      j["variants"].push_back(v);
      nlohmann::json d;
      d["variant"] = v["variant"];
      nlohmann::json pullers = nlohmann::json::object();
      std::vector<std::string> puller_text;
      for (const auto& [cpu, n] : r.remote_by_runner) {
        pullers[std::to_string(cpu)] = n;
        puller_text.push_back(absl::StrCat(cpu, ":", n));
      }
      d["remote_expiries_by_cpu"] = pullers;
      d["remote_on_isolated"] = r.remote_on_isolated;
      d["isolated_callback_ns"] = r.isolated_callback_ns;
      d["available_cpus"] = r.available;
      d["first_violations"] = r.first_violations;
      d["latest_timer"] = r.latest_timer;
      d["immediate_rearms"] = r.immediate_rearms;
      d["immediate_rearms_after_wake"] = r.immediate_rearms_after_wake;
      d["ghost_timers"] = r.ghost_timers;
      j["details"].push_back(d);
      report.invariant_violations += r.invariant_violations + r.timers_lost;
      absl::StrAppend(
          &text, absl::StrFormat("%-10s %12d %12d %8d %14s %10d  %s\n", variants[i], r.timers_total,
                                 r.timers_on_isolated, r.timers_lost, Us(r.max_lateness_ns),
                                 r.invariant_violations, absl::StrJoin(puller_text, " ")));
      for (const std::string& line : r.first_violations)
        absl::StrAppend(&text, "  violation: ", line, "\n");
      results.push_back(std::move(r));
      result_names.push_back(variants[i]);
    }
    return absl::OkStatus();
  }

  // The probes' verdicts.
  void ProbeVerdicts() {
    if (probes.empty()) return;
    absl::StrAppend(&text, "\nnegative-control probes (directed, on this machine's hierarchy):\n");
    nlohmann::json jp = nlohmann::json::array();
    for (const TmigrBugProbe& p : probes) {
      nlohmann::json e;
      e["applicable"] = p.applicable;
      if (!p.applicable) e["reason"] = p.reason;
      e["bug"] = p.bug;
      e["participation"] = p.participation;
      e["scenario"] = p.scenario;
      e["placement"] = p.placement;
      e["violations"] = p.violations;
      e["mainline_violations"] = p.mainline_violations;
      jp.push_back(e);
      report.invariant_violations +=
          static_cast<int64_t>(p.violations.size() + p.mainline_violations.size());
      // A probe whose placement should show the bug and does not is itself
      // a failure: a negative control never passes as a clean run.
      if (p.applicable && p.violations.empty()) ++report.invariant_violations;
      if (!p.applicable) {
        absl::StrAppend(&text, absl::StrFormat("  %-20s %-10s %s: cannot be shown here: it %s\n",
                                               p.bug, p.participation, p.scenario, p.reason));
        continue;
      }
      absl::StrAppend(
          &text, absl::StrFormat(
                     "  %-20s %-10s %s: %s (mainline: %s)\n", p.bug, p.participation, p.scenario,
                     p.violations.empty() ? "NOT caught"
                                          : absl::StrCat(p.violations.size(), " violation(s)"),
                     p.mainline_violations.empty()
                         ? "clean"
                         : absl::StrCat(p.mainline_violations.size(), " violation(s)")));
      absl::StrAppend(&text, "    ", p.placement, "\n");
      for (const std::string& v : p.violations) absl::StrAppend(&text, "    violation: ", v, "\n");
      for (const std::string& v : p.mainline_violations)
        absl::StrAppend(&text, "    mainline violation: ", v, "\n");
    }
    j["bug_probes"] = jp;
  }

  // Real threads, on the host-sized model (real_model.h).
  absl::Status RealThreadRuns() {
    nlohmann::json jr;
    jr["label"] = "indicative only: real threads on this host, host-sized model (see model)";
    jr["model"] =
        "housekeeping CPUs: nohz idle, global timer every 4 ms; isolated CPUs: busy noise meter "
        "(tick on "
        "unless nohz_full)";
    jr["duration_ns"] = real_ms * kNsPerMs;
    jr["variants"] = nlohmann::json::array();
    if (real_model.has_value()) {
      const RealThreadModel& m = *real_model;
      jr["label"] = absl::StrCat("indicative only: ", m.label);
      jr["real_thread_model"] = m.Json();
      j["real_thread_model"] = m.Json();
      absl::StrAppend(&text, "\n", m.label, "\n");
      if (m.isolated.Empty()) {
        report.warnings.push_back(
            {"real threads", absl::StrCat("skipped: the real-thread model (", m.cpus(),
                                          " CPUs) has no isolated CPU to measure")});
      } else {
        if (options.trace != nullptr) options.trace->PlanRuns(static_cast<int>(variants.size()));
        absl::StrAppend(&text, "noise meter on isolated model CPU(s) ", m.isolated.ToString(),
                        " (indicative only): longest gap per variant\n");
      }
      for (size_t i = 0; i < variants.size() && !m.isolated.Empty(); ++i) {
        progress.Update(absl::StrCat("real threads ", variants[i]),
                        0.6 + 0.4 * static_cast<double>(i) / static_cast<double>(variants.size()));
        RealOutcome r = RunReal(m, variants[i], real_ms * kNsPerMs, cost_us * kNsPerUs,
                                options.seed, options.trace, options.hist.shape);
        nlohmann::json v;
        v["variant"] = r.variant;
        v["max_gap_ns"] = r.max_gap_ns;
        v["max_gap_cpu"] = r.worst_cpu;
        v["noise_histogram"] = NoiseHistogramJson(r.noise, options.hist.no_zero_lines);
        v["timers_on_isolated"] = r.callbacks_on_isolated;
        v["remote_timers_on_isolated"] = r.remote_on_isolated;
        v["oversubscribed"] = r.oversubscribed;
        if (!r.error.empty()) v["error"] = r.error;
        jr["variants"].push_back(v);
        absl::StrAppend(
            &text, absl::StrFormat("  %s%-10s max gap %s (cpu %d), timers run on isolated CPUs %d "
                                   "(pulled %d)%s\n",
                                   m.row_prefix(), r.variant, Us(r.max_gap_ns), r.worst_cpu,
                                   r.callbacks_on_isolated, r.remote_on_isolated,
                                   r.error.empty() ? "" : absl::StrCat("  error: ", r.error)));
        if (options.hist.print && r.error.empty()) {
          RtlaHistogramFormat f;
          f.no_zero_lines = options.hist.no_zero_lines;
          f.comment.push_back(absl::StrCat("isolab tmigr ", r.variant,
                                           ": noise-meter gaps on isolated model CPU(s) ",
                                           m.isolated.ToString(), ", ", m.label, " (indicative)"));
          ISOLATION_ASSIGN_OR_RETURN(std::string table, FormatRtlaHistogram(r.noise, f));
          absl::StrAppend(&text, "\n", table, "\n");
        }
        if (options.hist.oslat && r.error.empty()) {
          // oslat's table: one column per isolated CPU, as `oslat -z --cpu-list ...`.
          std::vector<std::pair<int, OslatFigures>> cols;
          for (const auto& [cpu, noise] : r.noise) {
            ISOLATION_ASSIGN_OR_RETURN(OslatFigures of, OslatFiguresOf(noise));
            cols.emplace_back(cpu, std::move(of));
          }
          absl::StrAppend(&text, "\n  oslat format, isolab tmigr ", r.variant, " (", m.label,
                          "):\n", OslatTable(cols, /*zero_omit=*/true));
        }
        real.push_back(std::move(r));
      }
    }
    j["real_thread"] = jr;
    return absl::OkStatus();
  }

  // isolab reproduce row.
  void AddReproduceRow() {
    std::vector<std::string> modelled, noise;
    for (size_t i = 0; i < results.size(); ++i) {
      modelled.push_back(absl::StrCat(result_names[i], " ", results[i].timers_on_isolated));
    }
    for (const RealOutcome& r : real) {
      noise.push_back(absl::StrCat(r.variant, " ", Us(r.max_gap_ns)));
    }
    ReproduceRow row;
    row.experiment = "tmigr";
    row.figure = "oslat max latency on isolated CPUs (worst CPU)";
    row.kernel_reported =
        "1203 us -> 10 us (128 CPUs, isolcpus=1-31,33-63,65-95,97-127, oslat 62 s; [V15] cover)";
    row.measured = absl::StrCat("timers run on isolated CPUs (modelled, ", duration_ms,
                                " ms): ", absl::StrJoin(modelled, ", "));
    if (!noise.empty()) {
      absl::StrAppend(&row.measured, "; ", real_model->row_prefix(),
                      "noise-meter longest gap on an isolated CPU (indicative only; ",
                      real_model->label, "): ", absl::StrJoin(noise, ", "));
    }
    report.rows.push_back(row);
  }

  const CommonOptions& options;
  const TmigrExperimentOptions& opts;
  Progress& progress;

  // The options, validated.
  std::vector<std::string> variants;  // registered participations
  int64_t duration_ms = 0;
  int64_t hk_period_us = 0;
  int64_t cost_us = 0;
  int64_t real_ms = 0;
  std::string hierarchy;  // the one --tmigr_bugs asks for, else mainline
  std::string bugs_text;
  std::optional<Topology> topo;
  std::optional<IsolationConfig> iso;
  std::vector<TmigrBugProbe> probes;
  // The real-thread machine, sized to the host (an oversubscribed one is
  // refused before the modelled runs).
  std::optional<RealThreadModel> real_model;
  OslatWorkloadConfig cfg;  // the modelled runs'

  ExperimentReport report;
  nlohmann::json& j = report.json;
  std::string& text = report.text;
  std::vector<OslatWorkloadResult> results;
  std::vector<std::string> result_names;  // results[i]'s participation
  std::vector<RealOutcome> real;
};

}  // namespace

absl::StatusOr<RunCost> EstimateTmigrExperiment(const CommonOptions& common,
                                                const TmigrExperimentOptions& options) {
  ISOLATION_ASSIGN_OR_RETURN(Topology topo, LoadTopology(common));
  const double p = topo.num_cpus();
  const double variants = std::max<double>(1, static_cast<double>(options.variants.size()));
  double duration_ms = static_cast<double>(std::max<int64_t>(options.duration_ms, 1));
  double real_ms = static_cast<double>(std::max<int64_t>(options.real_ms, 0));
  if (common.quick) {
    duration_ms = std::min(duration_ms, 2000.0);
    real_ms = std::min(real_ms, 150.0);
  }
  // The oslat workload on the hierarchy: ~0.25 us per CPU and modelled ms
  // (reference host); the hierarchy and its timers ~16 KB per CPU.
  RunCost total{
      variants * duration_ms * p * 0.25e-6, p * 16e3 + 8e6,
      absl::StrCat("modelled: ", variants, " variants x ", duration_ms, " ms x ", p, " CPUs")};
  if (real_ms > 0) {
    AddCost(total, RealThreadRunCost(common, RealModelCpus(common, topo), real_ms,
                                     static_cast<int>(variants)));
  }
  return total;
}

absl::StatusOr<ExperimentReport> RunTmigrExperiment(const CommonOptions& common,
                                                    const TmigrExperimentOptions& options,
                                                    Progress& progress) {
  ISOLATION_ASSIGN_OR_RETURN(ExperimentReport report,
                             TmigrExperiment(common, options, progress).Run());
  FinishReport(ConfigurationWarnings(common), report);
  return report;
}

}  // namespace isolation::experiments
