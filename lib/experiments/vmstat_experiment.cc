// SPDX-License-Identifier: GPL-2.0-or-later
//
// `isolab vmstat`: the seed's trade-off (Tomlin/Tosatti v8, Sept 2022) on the
// seeds' 128-CPU machine.  Each isolated nohz_full CPU runs a loop of
// mlock/munlock-like syscalls touching NR_MLOCK, then does what a real-time
// application does at start-up (one mlock-like update, then a user-mode spin
// with the tick stopped) while the housekeeping CPUs keep running and host
// the shepherd.  Per strategy:
//   - isolated_interruptions, residue_max, lost_updates: from the simulator
//     (exact, modelled time);
//   - syscall_ns_median / overhead_pct: from real threads on this host (a
//     real mlock + munlock pair per iteration when permitted, each followed by
//     the strategy's counter update and return-to-user hook): indicative only.
// --trace records each strategy's simulated run.

#include "experiments/vmstat_experiment.h"

#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <random>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "isolation/core/clock.h"
#include "isolation/core/isolation_config.h"
#include "isolation/runtime/sim.h"
#include "core/status_macros.h"
#include "experiments/real_model.h"
#include "isolation/core/host.h"
#include "isolation/core/topology.h"
#include "isolation/vmstat/vmstat.h"
#include "isolation/vmstat/hooks.h"

namespace isolation::experiments {
namespace {

using vmstat::FoldPolicyTraits;
using vmstat::ReturnToUserScope;
using vmstat::StatKind;
using vmstat::Vmstat;
using vmstat::VmstatConfig;
using vmstat::VmstatHooks;
using vmstat::WorkScope;
using vmstat::ZoneSpec;

constexpr int64_t kGiB = 262144;  // 4 KiB pages

struct SimOutcome {
  int64_t isolated_interruptions = 0;  // vmstat_update runs on isolated CPUs (whole run)
  int64_t spin_interruptions = 0;      // ... during the RT spin phase
  int64_t residue_max = 0;
  int64_t lost_updates = 0;  // |I1 discrepancy| at the end (lost or double-counted)
  Nanos max_stall_ns = 0;    // modelled, isolated CPUs
  int64_t return_to_user_folds = 0;
  int64_t remote_folds = 0;
  int64_t shepherd_runs = 0;
  int64_t spins_finished = 0;
  // The same two on the isolated CPUs that are also nohz_full, the only ones
  // B and B.local keep free of vmstat work (they fold on return to user of a
  // CPU whose tick is stopped; an isolated CPU whose tick runs gets the work).
  int64_t nohz_isolated_interruptions = 0;
  int64_t nohz_isolated_residue_max = 0;
};

struct HostOutcome {
  double syscall_ns_median = 0;
  double syscall_cycles_median = 0;
  int64_t lost_updates = 0;
};

// One fold policy of --vmstat_strategies, resolved through the registry.
struct Policy {
  std::string name;         // registered
  FoldPolicyTraits traits;  // what the checks read
  bool ours = false;  // the library's own design, not a kernel proposal ("OURS" in its description)
};

// The seeds' reference rows: the overhead column is relative to A1 (the
// cost of an isolation-aware shepherd without the fix), and the reproduce
// rows compare vanilla 2022 (A0) with its patch (B).
constexpr char kOverheadBaseline[] = "A1";
constexpr char kSeedVanilla[] = "A0";
constexpr char kSeedPatch[] = "B";

VmstatConfig ModelConfigOf(const std::string& policy, const Topology& topo,
                           const IsolationConfig& iso, Nanos period) {
  VmstatConfig c;
  c.fold_policy = policy;
  c.num_cpus = topo.num_cpus();
  c.num_nodes = std::max(1, topo.num_nodes());
  c.zones.clear();
  c.zones.push_back(ZoneSpec{"DMA32", 0, 4 * kGiB - 4096, 4096, 5120, 6144});
  for (int n = 0; n < c.num_nodes; ++n) {
    c.zones.push_back(
        ZoneSpec{absl::StrCat("Normal", n), n, 64 * kGiB / c.num_nodes, 16384, 20480, 24576});
  }
  c.stat_interval = period;
  c.isolated = CpuMask(c.num_cpus);
  for (int cpu = 0; cpu < c.num_cpus; ++cpu) {
    if (iso.CpuIsIsolated(cpu)) c.isolated.Set(cpu);
  }
  c.nohz_full = iso.nohz_full();
  return c;
}

VmstatConfig ModelConfig(const Policy& s, const Topology& topo, const IsolationConfig& iso,
                         Nanos period) {
  return ModelConfigOf(s.name, topo, iso, period);
}

// The simulated run: exact interference counts and residues.
absl::StatusOr<SimOutcome> RunSimulated(const Policy& s, const Topology& topo,
                                        const IsolationConfig& iso, Nanos period, int syscalls,
                                        Nanos spin, uint64_t seed, TraceFile* trace) {
  ISOLATION_ASSIGN_OR_RETURN(std::unique_ptr<Vmstat> vm,
                             Vmstat::Create(ModelConfig(s, topo, iso, period)));
  VmstatHooks hooks(*vm);
  SimOptions opt;
  opt.seed = seed;
  ISOLATION_ASSIGN_OR_RETURN(
      std::unique_ptr<TraceRun> run,
      StartTraceRun(trace,
                    absl::StrCat("vmstat ", s.name, ": simulated, P = ", period / kNsPerMs, " ms"),
                    topo, iso));
  ISOLATION_ASSIGN_OR_RETURN(std::unique_ptr<Simulator> sim, Simulator::Create(topo, iso, opt));
  if (run != nullptr) run->Attach(*sim);
  sim->AddHooks(&hooks);
  const int n = topo.num_cpus();
  std::map<std::tuple<int, int, int>, int64_t> truth;
  auto apply = [&](int cpu, StatKind k, int inst, int item, int64_t d) {
    vm->Mod(cpu, k, inst, item, d);
    truth[{static_cast<int>(k), inst, item}] += d;
  };
  auto zone_of_cpu = [&](int cpu) { return 1 + topo.node_of(cpu) % std::max(1, topo.num_nodes()); };
  struct PerCpu {
    int64_t residue = -1;
    int64_t work_at_spin = 0;
    int64_t spin_work = 0;
  };
  std::vector<PerCpu> per(static_cast<size_t>(n));
  for (int cpu = 0; cpu < n; ++cpu) {
    TaskSpec t;
    t.cpu = cpu;
    t.affinity = CpuMask::Of(n, cpu);
    if (!vm->IsIsolated(cpu)) {
      // Housekeeping: keeps dirtying node counters and sleeping.
      auto rng = std::make_shared<std::mt19937_64>(seed * 1000 + static_cast<uint64_t>(cpu));
      t.name = "housekeeping";
      t.body = MakeTaskBody([&, rng](TaskContext& ctx) {
        ctx.Syscall([&, rng](CpuContext& k) {
          apply(k.cpu(), StatKind::kNode, topo.node_of(k.cpu()) % vm->num_nodes(),
                static_cast<int>((*rng)() % 6), static_cast<int64_t>((*rng)() % 9) - 4);
        });
        return Step::Sleep(500 * kNsPerUs);
      });
    } else {
      auto step = std::make_shared<int>(0);
      t.name = "rt-app";
      t.body = MakeTaskBody([&, step, cpu](TaskContext& ctx) {
        const int i = (*step)++;
        const int zone = zone_of_cpu(cpu);
        if (i < syscalls) {
          // mlock (+1 page) / munlock (-1 page) on NR_MLOCK: ~8461 cycles
          // at ~3 GHz, modelled as 2.8 us of kernel time.
          ctx.Syscall(
              [&, i, zone](CpuContext& k) {
                apply(k.cpu(), StatKind::kZone, zone, vmstat::kZoneMlock, i % 2 == 0 ? 1 : -1);
              },
              2800);
          return Step::Run(1 * kNsPerUs);
        }
        if (i == syscalls) {
          // RT start-up: one mlock-like update (below every threshold), then spin.
          ctx.Syscall(
              [&, zone](CpuContext& k) {
                apply(k.cpu(), StatKind::kZone, zone, vmstat::kZoneMlock, 16);
                apply(k.cpu(), StatKind::kNode, topo.node_of(k.cpu()) % vm->num_nodes(), 1, 16);
              },
              2800);
          per[static_cast<size_t>(cpu)].work_at_spin = vm->Counters(cpu).work_runs;
          return Step::Run(spin);
        }
        if (i == syscalls + 1) {
          per[static_cast<size_t>(cpu)].residue = vm->MaxAbsDiff(cpu);
          per[static_cast<size_t>(cpu)].spin_work =
              vm->Counters(cpu).work_runs - per[static_cast<size_t>(cpu)].work_at_spin;
        }
        return Step::Run(spin);  // keep spinning until the run ends
      });
    }
    ISOLATION_RETURN_IF_ERROR(sim->Spawn(std::move(t)).status());
  }
  // Syscall phase ~4 us per iteration (6 with slack), then the spin.
  const Nanos total = static_cast<Nanos>(syscalls) * 6 * kNsPerUs + spin + period / 2;
  ISOLATION_RETURN_IF_ERROR(sim->RunFor(total));
  if (run != nullptr) run->Finish(sim->Now());

  SimOutcome out;
  for (int cpu = 0; cpu < n; ++cpu) {
    if (!vm->IsIsolated(cpu)) continue;
    const PerCpu& p = per[static_cast<size_t>(cpu)];
    const vmstat::CpuCounters cc = vm->Counters(cpu);
    out.isolated_interruptions += cc.work_runs;
    if (vm->IsNohzFull(cpu)) out.nohz_isolated_interruptions += cc.work_runs;
    out.return_to_user_folds += cc.return_to_user_folds;
    out.remote_folds += cc.remote_folds;
    if (p.residue >= 0) {
      ++out.spins_finished;
      out.residue_max = std::max(out.residue_max, p.residue);
      if (vm->IsNohzFull(cpu))
        out.nohz_isolated_residue_max = std::max(out.nohz_isolated_residue_max, p.residue);
      out.spin_interruptions += p.spin_work;
    }
    out.max_stall_ns = std::max(out.max_stall_ns, sim->Stats(cpu).max_stall_ns);
  }
  out.shepherd_runs = hooks.shepherd_runs();
  // I1 at the end of the run (the simulator is quiescent between events).
  for (StatKind k : {StatKind::kZone, StatKind::kNode}) {
    for (int inst = 0; inst < vm->num_instances(k); ++inst) {
      for (int item = 0; item < vm->num_items(k); ++item) {
        int64_t x = vm->SharedRaw(k, inst, item);
        for (int cpu = 0; cpu < n; ++cpu) x += vm->Diff(cpu, k, inst, item);
        auto it = truth.find({static_cast<int>(k), inst, item});
        out.lost_updates += std::abs(x - (it == truth.end() ? 0 : it->second));
      }
    }
  }
  return out;
}

// --- host measurement ---------------------------------------------------------------

struct HostSyscall {
  void* page = nullptr;
  bool real = false;
  std::string name;
};

HostSyscall PrepareSyscall(bool want_real) {
  HostSyscall h;
  h.page = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (h.page != MAP_FAILED && want_real) {
    static_cast<char*>(h.page)[0] = 1;
    if (mlock(h.page, 4096) == 0 && munlock(h.page, 4096) == 0) {
      h.real = true;
      h.name = "mlock/munlock (real syscalls)";
      return h;
    }
  }
  h.name = "getppid (mlock denied or disabled)";
  return h;
}

inline void DoSyscall(const HostSyscall& h, bool lock) {
  if (h.real) {
    if (lock) {
      (void)mlock(h.page, 4096);
    } else {
      (void)munlock(h.page, 4096);
    }
  } else {
    (void)syscall(SYS_getppid);
  }
}

Nanos ThreadCpuNanos() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<Nanos>(ts.tv_sec) * kNsPerSec + ts.tv_nsec;
}

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Real threads: the measuring thread plays isolated CPU 1 (tick stopped,
// nohz_full); a second thread plays the housekeeping shepherd every
// `shepherd_period`.  Strategies are measured in interleaved batches so that
// host drift hits them alike.
// Pins the calling thread to host CPU `host_cpu` (best effort: an indicative
// figure, so a failed pin only loses the 1:1 placement).
void PinToHostCpu(int host_cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(static_cast<size_t>(host_cpu), &set);
  (void)pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

// The host-sized model's roles (real_model.h): the measuring thread is the
// first isolated model CPU, the shepherd thread the first housekeeping one,
// each pinned 1:1 to its host CPU.
std::vector<HostOutcome> RunHost(const std::vector<Policy>& strategies, int iterations,
                                 bool want_real, const RealThreadModel& model,
                                 std::string* syscall_name) {
  const int kCpus = model.cpus();
  const int measured_cpu = model.isolated.First();
  const int shepherd_cpu = model.housekeeping.First();
  absl::StatusOr<std::vector<int>> host_cpus = UsableHostCpus();
  auto host_of = [&](int model_cpu) {
    return host_cpus.ok() ? (*host_cpus)[static_cast<size_t>(model_cpu) % host_cpus->size()]
                          : model_cpu;
  };
  // Small batches: most are not preempted on a busy host; the median
  // discards the ones that were.  Time is the thread's CPU time (excludes
  // time descheduled); cycles are TSC deltas of the same batches.
  constexpr int kBatch = 16;
  const HostSyscall hs = PrepareSyscall(want_real);
  *syscall_name = hs.name;
  std::vector<std::unique_ptr<Vmstat>> vms;
  for (const Policy& s : strategies) {
    VmstatConfig c;
    c.fold_policy = s.name;
    c.num_cpus = kCpus;
    c.zones = {ZoneSpec{"Normal", 0, 64 * kGiB, 16384, 20480, 24576}};
    c.isolated = model.isolated;
    c.nohz_full = c.isolated;
    vms.push_back(std::move(Vmstat::Create(c)).value());
  }
  std::vector<std::vector<double>> ns(strategies.size()), cycles(strategies.size());
  std::vector<int64_t> truth(strategies.size(), 0);
  std::atomic<bool> stop{false};
  std::thread shepherd([&] {
    PinToHostCpu(host_of(shepherd_cpu));
    while (!stop.load(std::memory_order_acquire)) {
      for (auto& vm : vms)
        vm->Shepherd([&](int cpu) { return model.isolated.Test(cpu); }, [](int, uint64_t) {});
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  });
  const int rounds = std::max(1, iterations / kBatch);
  std::vector<size_t> order(strategies.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::mt19937_64 rng(12345);
  // A thread of its own, so the caller's affinity is never changed.
  std::thread measurer([&] {
    PinToHostCpu(host_of(measured_cpu));
    for (int r = 0; r < rounds; ++r) {
      std::shuffle(order.begin(), order.end(), rng);  // no strategy always runs first
      for (size_t si : order) {
        Vmstat& vm = *vms[si];
        const uint64_t c0 = CycleCounter();
        const Nanos t0 = ThreadCpuNanos();
        for (int i = 0; i < kBatch; ++i) {
          DoSyscall(hs, true);
          vm.Mod(measured_cpu, StatKind::kZone, 0, vmstat::kZoneMlock,
                 1);  // in-kernel part of mlock
          vm.ReturnToUser(measured_cpu, true);
          DoSyscall(hs, false);
          vm.Mod(measured_cpu, StatKind::kZone, 0, vmstat::kZoneMlock, -1);
          vm.ReturnToUser(measured_cpu, true);
        }
        const Nanos t1 = ThreadCpuNanos();
        const uint64_t c1 = CycleCounter();
        ns[si].push_back(static_cast<double>(t1 - t0) / (2.0 * kBatch));
        cycles[si].push_back(static_cast<double>(c1 - c0) / (2.0 * kBatch));
      }
    }
  });
  measurer.join();
  stop.store(true, std::memory_order_release);
  shepherd.join();
  if (hs.page != MAP_FAILED && hs.page != nullptr) munmap(hs.page, 4096);
  std::vector<HostOutcome> out(strategies.size());
  for (size_t si = 0; si < strategies.size(); ++si) {
    out[si].syscall_ns_median = Median(ns[si]);
    out[si].syscall_cycles_median = Median(cycles[si]);
    // I1 after the join (every +1 had its -1: the true count is 0).
    Vmstat& vm = *vms[si];
    int64_t x = vm.SharedRaw(StatKind::kZone, 0, vmstat::kZoneMlock);
    for (int cpu = 0; cpu < kCpus; ++cpu) x += vm.Diff(cpu, StatKind::kZone, 0, vmstat::kZoneMlock);
    out[si].lost_updates = std::abs(x - truth[si]);
  }
  return out;
}

// One run of the experiment: the validated options, the model's and the
// host's runs, and the report built from them.  Run() calls one function per
// part, in order.
class VmstatExperiment {
 public:
  VmstatExperiment(const CommonOptions& common, const VmstatExperimentOptions& vmstat_options,
                   Progress& run_progress)
      : options(common), opts(vmstat_options), progress(run_progress) {}

  absl::StatusOr<ExperimentReport> Run() {
    ISOLATION_RETURN_IF_ERROR(ParseOptions());
    ISOLATION_RETURN_IF_ERROR(RunStrategies());
    Tables();
    Checks();
    Text();
    ReproduceRows();
    return std::move(report);
  }

 private:
  // The options, validated, and the machines: the model and the host-sized
  // one of the host part.
  absl::Status ParseOptions() {
    // Every registered fold policy is accepted (a user's too); a built-in
    // keeps its enum for its own checks.
    for (const std::string& part : opts.strategies) {
      ISOLATION_ASSIGN_OR_RETURN(std::string name, ResolveFoldPolicy("--vmstat_strategies", part));
      Policy p{name, {}, false};
      ISOLATION_ASSIGN_OR_RETURN(const vmstat::FoldPolicyEntry* entry,
                                 vmstat::FoldPolicyRegistry().Find(name));
      if (entry->negative_control) {
        return absl::InvalidArgumentError(
            absl::StrCat("--vmstat_strategies: '", name,
                         "' is a negative control, a test fixture, not a strategy to "
                         "run here"));
      }
      p.ours = absl::StartsWith(entry->description, "OURS");
      std::unique_ptr<vmstat::FoldPolicy> policy = entry->factory();
      if (policy == nullptr) {
        return absl::InvalidArgumentError(absl::StrCat("--vmstat_strategies: fold policy '", name,
                                                       "': its factory returned no policy"));
      }
      p.traits = policy->traits();
      strategies.push_back(std::move(p));
    }
    if (strategies.empty()) return absl::InvalidArgumentError("--vmstat_strategies: empty list");
    period_ms = opts.stat_interval_ms;
    if (period_ms <= 0 || period_ms > 60000) {
      return absl::InvalidArgumentError(
          absl::StrCat("--vmstat_stat_interval_ms=", period_ms, ": want 1..60000"));
    }
    syscalls = opts.syscalls;
    spin_ms = opts.spin_ms;
    host_iterations = opts.host_iterations;
    if (syscalls < 0 || syscalls > 10'000'000) {
      return absl::InvalidArgumentError(
          absl::StrCat("--vmstat_syscalls=", syscalls, ": want 0..10000000"));
    }
    if (spin_ms <= 0 || spin_ms > 3'600'000) {
      return absl::InvalidArgumentError(
          absl::StrCat("--vmstat_spin_ms=", spin_ms, ": want 1..3600000"));
    }
    if (host_iterations < 0 || host_iterations > 100'000'000) {
      return absl::InvalidArgumentError(
          absl::StrCat("--vmstat_host_iterations=", host_iterations, ": want 0..100000000"));
    }
    period = static_cast<Nanos>(period_ms) * kNsPerMs;
    if (options.quick) {
      syscalls = std::min(syscalls, 200);
      host_iterations = std::min(host_iterations, 4000);
      // Shorter model time: P shrinks with the spin so A0's work still shows.
      period = std::min<Nanos>(period, 20 * kNsPerMs);
      spin_ms = static_cast<int32_t>(std::min<Nanos>(spin_ms, 3 * period / kNsPerMs));
    }
    spin = static_cast<Nanos>(spin_ms) * kNsPerMs;

    ISOLATION_ASSIGN_OR_RETURN(topo, LoadTopology(options));
    ISOLATION_ASSIGN_OR_RETURN(iso, LoadIsolation(options, *topo));
    if (options.nohz_full.empty()) {
      // Default: nohz_full on the isolated CPUs (the seeds' setup).
      CpuMask isolated(topo->num_cpus());
      for (int cpu = 0; cpu < topo->num_cpus(); ++cpu) {
        if (iso->CpuIsIsolated(cpu)) isolated.Set(cpu);
      }
      if (!isolated.Empty()) ISOLATION_RETURN_IF_ERROR(iso->ApplyNohzFull(isolated.ToString()));
    }
    ISOLATION_RETURN_IF_ERROR(CheckTraceCpus(options.trace, *topo));
    // The host part runs on the host-sized model (real_model.h): refused
    // here, before any simulation, when oversubscribed without the flag.
    ISOLATION_ASSIGN_OR_RETURN(RealThreadModel model, HostSizedModel(options, *topo, *iso));
    real_model.emplace(std::move(model));
    host_runs = !real_model->isolated.Empty() && !real_model->housekeeping.Empty();
    if (options.trace != nullptr) options.trace->PlanRuns(static_cast<int>(strategies.size()));
    return absl::OkStatus();
  }

  // Every strategy on the simulator, then on host threads.
  absl::Status RunStrategies() {
    // Simulated runs.
    for (size_t i = 0; i < strategies.size(); ++i) {
      progress.Update(absl::StrCat("simulating ", strategies[i].name),
                      0.7 * static_cast<double>(i) / static_cast<double>(strategies.size()));
      ISOLATION_ASSIGN_OR_RETURN(SimOutcome o,
                                 RunSimulated(strategies[i], *topo, *iso, period, syscalls, spin,
                                              options.seed, options.trace));
      sims.push_back(o);
    }
    // Host runs.
    progress.Update("host syscall loop", 0.75);
    syscall_name = "none (the host-sized model has no isolated or no housekeeping CPU)";
    host.resize(strategies.size());
    if (host_runs)
      host = RunHost(strategies, host_iterations, opts.real_syscall, *real_model, &syscall_name);
    progress.Done();

    for (size_t i = 0; i < strategies.size(); ++i) {
      if (strategies[i].name == kOverheadBaseline) {
        a1_ns = host[i].syscall_ns_median;
        a1_cycles = host[i].syscall_cycles_median;
      }
    }
    return absl::OkStatus();
  }

  // The JSON: the model, the host part, and one row per strategy.
  void Tables() {
    for (int cpu = 0; cpu < topo->num_cpus(); ++cpu) {
      isolated_count += iso->CpuIsIsolated(cpu) ? 1 : 0;
      nohz_isolated_count += iso->CpuIsIsolated(cpu) && iso->nohz_full().Test(cpu) ? 1 : 0;
    }
    j["experiment"] = "vmstat";
    j["quick"] = options.quick;
    j["model"] = {{"topology", topo->description()},
                  {"cpus", topo->num_cpus()},
                  {"isolated_cpus", isolated_count},
                  {"nohz_full", iso->nohz_full().ToString()},
                  {"stat_interval_ms", static_cast<double>(period) / kNsPerMs},
                  {"syscalls_per_isolated_cpu", syscalls},
                  {"spin_ms", spin_ms},
                  {"source", "simulator (exact counts, modelled time)"}};
    j["host"] = {
        {"syscall", syscall_name},
        {"iterations_per_strategy", host_iterations},
        {"label",
         absl::StrCat(real_model->row_prefix(),
                      "host real threads: indicative, not representative (includes the real "
                      "syscall, the model update and the return-to-user hook); ",
                      real_model->label)}};
    j["real_thread_model"] = real_model->Json();
    nlohmann::json list = nlohmann::json::array();
    nlohmann::json details = nlohmann::json::array();
    for (size_t i = 0; i < strategies.size(); ++i) {
      const std::string& sname = strategies[i].name;
      const double overhead = a1_ns > 0 ? (host[i].syscall_ns_median / a1_ns - 1.0) * 100.0 : 0.0;
      list.push_back({{"strategy", sname},
                      {"syscall_ns_median", host[i].syscall_ns_median},
                      {"overhead_pct", overhead},
                      {"isolated_interruptions", sims[i].isolated_interruptions},
                      {"residue_max", sims[i].residue_max},
                      {"lost_updates", sims[i].lost_updates + host[i].lost_updates}});
      details.push_back(
          {{"strategy", sname},
           {"ours", strategies[i].ours},
           {"syscall_cycles_median", host[i].syscall_cycles_median},
           {"overhead_cycles_pct",
            a1_cycles > 0 ? (host[i].syscall_cycles_median / a1_cycles - 1.0) * 100.0 : 0.0},
           {"spin_interruptions", sims[i].spin_interruptions},
           {"modelled_max_stall_us", static_cast<double>(sims[i].max_stall_ns) / kNsPerUs},
           {"return_to_user_folds", sims[i].return_to_user_folds},
           {"remote_folds", sims[i].remote_folds},
           {"shepherd_runs", sims[i].shepherd_runs},
           {"spins_finished", sims[i].spins_finished},
           {"lost_updates_sim", sims[i].lost_updates},
           {"lost_updates_host", host[i].lost_updates}});
    }
    j["strategies"] = list;
    j["details"] = details;
  }

  // Expected outcomes: A0 interrupts isolated CPUs, A1/B/C do not;
  // A1 leaves residue, B does not; lost_updates 0.
  // A check about CPUs the configuration does not have (no isolated CPU,
  // or for B / B.local no isolated nohz_full CPU) does not apply: it is
  // skipped with a note, not counted as a failure.
  void Checks() {
    const std::string no_isolated =
        isolated_count == 0 ? "no isolated CPU in this configuration (--isolcpus / --nohz_full)"
                            : "";
    const std::string no_nohz_isolated =
        nohz_isolated_count == 0
            ? "no isolated nohz_full CPU in this configuration (--isolcpus / --nohz_full)"
            : "";
    auto check = [&](const std::string& what, bool ok, const std::string& skip_reason) {
      if (!skip_reason.empty()) {
        checks.push_back({{"check", what}, {"ok", true}, {"skipped", skip_reason}});
        if (std::find(skip_notes.begin(), skip_notes.end(), skip_reason) == skip_notes.end()) {
          skip_notes.push_back(skip_reason);
        }
        return;
      }
      checks.push_back({{"check", what}, {"ok", ok}});
      if (!ok) ++violations;
    };
    for (size_t i = 0; i < strategies.size(); ++i) {
      const std::string& sname = strategies[i].name;
      const SimOutcome& o = sims[i];
      check(sname + ": lost_updates == 0", o.lost_updates + host[i].lost_updates == 0, "");
      check(sname + ": every RT spin finished", o.spins_finished == isolated_count, no_isolated);
      // The checks the policy's traits imply (fold_policy.h), the same for a
      // built-in and a policy registered outside the library.
      const FoldPolicyTraits& t = strategies[i].traits;
      switch (t.shepherd_work) {
        case WorkScope::kAnyCpu:
          // The seeds' observation: work queued on every CPU reaches the isolated ones.
          check(sname + ": interrupts isolated CPUs", o.isolated_interruptions > 0, no_isolated);
          break;
        case WorkScope::kNotIsolated:
        case WorkScope::kNoCpu:
          check(sname + ": no isolated interruption", o.isolated_interruptions == 0, no_isolated);
          break;
        case WorkScope::kTickRunning:
        case WorkScope::kNotNohzFull:
          check(sname + ": no interruption of isolated nohz_full CPUs",
                o.nohz_isolated_interruptions == 0, no_nohz_isolated);
          break;
      }
      if (t.return_to_user_folds != ReturnToUserScope::kNone) {
        check(sname + ": no residue after the spin on isolated nohz_full CPUs",
              o.nohz_isolated_residue_max == 0, no_nohz_isolated);
      } else if (t.folds_remotely) {
        check(sname + ": no residue after the spin", o.residue_max == 0, no_isolated);
      } else if (t.shepherd_work == WorkScope::kNotIsolated && !t.folds_kernel_bound_cpus) {
        // Nobody folds an isolated CPU: what it wrote before the spin stays (the seeds' A1
        // residue).
        check(sname + ": leaves residue", o.residue_max > 0, no_isolated);
      }
    }
    j["checks"] = checks;
    report.invariant_violations = violations;
    report.warnings = iso->warnings();  // including the default nohz_full's
    if (!host_runs) {
      report.warnings.push_back(
          {"real threads", absl::StrCat("host part skipped: ", real_model->label,
                                        " has no isolated or no housekeeping CPU")});
    }
  }

  // The text table, its notes and the failed checks.
  void Text() {
    std::string& t = report.text;
    absl::StrAppend(
        &t,
        absl::StrFormat(
            "vmstat: %d CPUs (%s), %d isolated (%d nohz_full); P = %g ms; %d mlock/munlock-like "
            "syscalls then RT start-up + %d ms spin per isolated CPU%s\n",
            topo->num_cpus(), topo->description(), isolated_count, nohz_isolated_count,
            static_cast<double>(period) / kNsPerMs, syscalls, spin_ms,
            options.quick ? " (quick)" : ""));
    absl::StrAppend(
        &t, absl::StrFormat("%-7s %14s %10s %12s %14s %10s %8s %10s\n", "", "syscall ns*", "vs A1",
                            "cycles*", "isol. interr.", "residue", "lost", "stall us~"));
    for (size_t i = 0; i < strategies.size(); ++i) {
      const double overhead = a1_ns > 0 ? (host[i].syscall_ns_median / a1_ns - 1.0) * 100.0 : 0.0;
      absl::StrAppend(
          &t, absl::StrFormat("%-7s %14.1f %+9.1f%% %12.0f %14d %10d %8d %10.1f\n",
                              strategies[i].name, host[i].syscall_ns_median, overhead,
                              host[i].syscall_cycles_median, sims[i].isolated_interruptions,
                              sims[i].residue_max, sims[i].lost_updates + host[i].lost_updates,
                              static_cast<double>(sims[i].max_stall_ns) / kNsPerUs));
    }
    for (const Policy& p : strategies) {
      if (p.ours)
        absl::StrAppend(&t, p.name, " is the library's own design, not a kernel proposal.\n");
    }
    absl::StrAppend(
        &t, "* ", real_model->row_prefix(), "host real threads (", real_model->label, "), ",
        syscall_name,
        ": indicative, not representative.  ~ modelled (simulator).  Interruptions and residue: "
        "simulator, exact.\n");
    for (const std::string& note : skip_notes) absl::StrAppend(&t, "checks skipped: ", note, "\n");
    for (const auto& c : checks) {
      if (!c["ok"].get<bool>())
        absl::StrAppend(&t, "CHECK FAILED: ", c["check"].get<std::string>(), "\n");
    }
  }

  // Reproduce rows: the seed compares vanilla of 2022 (= A0) with its patch (= B).
  void ReproduceRows() {
    int a0 = -1, b = -1;
    for (size_t i = 0; i < strategies.size(); ++i) {
      if (strategies[i].name == kSeedVanilla) a0 = static_cast<int>(i);
      if (strategies[i].name == kSeedPatch) b = static_cast<int>(i);
    }
    if (a0 >= 0 && b >= 0) {
      const auto& ha = host[static_cast<size_t>(a0)];
      const auto& hb = host[static_cast<size_t>(b)];
      report.rows.push_back(
          {"vmstat", "mlock/munlock cost per syscall, vanilla (A0) -> fold on return to user (B)",
           "8461 -> 8690 cycles (+2.6 %) [SEED 4/5, Tomlin, 2022]",
           absl::StrFormat("%.0f -> %.0f cycles (%+.1f %%), %s; host, indicative%s",
                           ha.syscall_cycles_median, hb.syscall_cycles_median,
                           ha.syscall_cycles_median > 0
                               ? (hb.syscall_cycles_median / ha.syscall_cycles_median - 1.0) * 100.0
                               : 0.0,
                           syscall_name, options.quick ? ", quick" : "")});
      const auto& sa = sims[static_cast<size_t>(a0)];
      const auto& sb = sims[static_cast<size_t>(b)];
      report.rows.push_back(
          {"vmstat", "oslat max latency on isolated nohz_full CPUs, vanilla (A0) -> B",
           "15 us -> 7 us (oslat 8 h, Folco) [SEED]",
           absl::StrFormat("kworker interruptions during the RT spin %d -> %d; modelled max stall "
                           "%.1f -> %.1f us "
                           "(simulator; real kworker/oslat latency not reproducible in userspace)",
                           sa.spin_interruptions, sb.spin_interruptions,
                           static_cast<double>(sa.max_stall_ns) / kNsPerUs,
                           static_cast<double>(sb.max_stall_ns) / kNsPerUs)});
    }
  }

  const CommonOptions& options;
  const VmstatExperimentOptions& opts;
  Progress& progress;

  // The options, validated.
  std::vector<Policy> strategies;
  int32_t period_ms = 0;
  int32_t syscalls = 0;
  int32_t spin_ms = 0;
  int32_t host_iterations = 0;
  Nanos period = 0;
  Nanos spin = 0;
  std::optional<Topology> topo;
  std::optional<IsolationConfig> iso;
  std::optional<RealThreadModel> real_model;  // the host part's machine
  bool host_runs = false;                     // it has an isolated and a housekeeping CPU

  // The runs, one per strategy.
  std::vector<SimOutcome> sims;
  std::vector<HostOutcome> host;
  std::string syscall_name;
  double a1_ns = 0, a1_cycles = 0;  // the overhead baseline's syscall

  ExperimentReport report;
  nlohmann::json& j = report.json;
  int isolated_count = 0, nohz_isolated_count = 0;
  int64_t violations = 0;
  nlohmann::json checks = nlohmann::json::array();
  std::vector<std::string> skip_notes;
};

}  // namespace

vmstat::VmstatConfig VmstatModelConfig(const std::string& policy, const Topology& topology,
                                       const IsolationConfig& isolation, Nanos period) {
  return ModelConfigOf(policy, topology, isolation, period);
}

absl::StatusOr<RunCost> EstimateVmstatExperiment(const CommonOptions& common,
                                                 const VmstatExperimentOptions& options) {
  ISOLATION_ASSIGN_OR_RETURN(Topology topo, LoadTopology(common));
  ISOLATION_ASSIGN_OR_RETURN(IsolationConfig iso, LoadIsolation(common, topo));
  const double p = topo.num_cpus();
  double isolated = 0;
  for (int cpu = 0; cpu < topo.num_cpus(); ++cpu) isolated += iso.CpuIsIsolated(cpu) ? 1 : 0;
  const double strategies = std::max<double>(1, static_cast<double>(options.strategies.size()));
  double syscalls = std::max(options.syscalls, 0);
  double spin_ms = std::max(options.spin_ms, 1);
  double host_iterations = std::max(options.host_iterations, 0);
  if (common.quick) {
    syscalls = std::min(syscalls, 200.0);
    host_iterations = std::min(host_iterations, 4000.0);
    spin_ms = std::min(spin_ms, 60.0);
  }
  // Fitted to runs on the reference host (README.md, "isolab";
  // docs/history/2026-12-04-isolab-8192.md): a simulated syscall ~94 ns, a modelled ms of spin ~17
  // ns per CPU, ~20 us of set-up per CPU and strategy; a host mlock+munlock iteration ~8.5 us; ~5
  // KB per CPU.
  RunCost sim{strategies * (syscalls * isolated * 9.4e-8 + spin_ms * p * 1.7e-8 + p * 2e-5),
              p * 5e3 + 8e6,
              absl::StrCat("simulated: ", strategies, " strategies x ", syscalls, " syscalls x ",
                           isolated, " isolated CPUs")};
  RunCost host{
      strategies * host_iterations * 8.5e-6, 8e6,
      absl::StrCat("host: ", strategies, " strategies x ", host_iterations, " syscall iterations")};
  RunCost total;
  AddCost(total, sim);
  AddCost(total, host);
  return total;
}

absl::StatusOr<ExperimentReport> RunVmstatExperiment(const CommonOptions& common,
                                                     const VmstatExperimentOptions& options,
                                                     Progress& progress) {
  ISOLATION_ASSIGN_OR_RETURN(ExperimentReport report,
                             VmstatExperiment(common, options, progress).Run());
  FinishReport(ConfigurationWarnings(common), report);
  return report;
}

}  // namespace isolation::experiments
