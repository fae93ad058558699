// SPDX-License-Identifier: GPL-2.0-or-later
//
// drive_both: the same workload and the same Hooks adapter on both drivers.
//
// A 4-CPU model machine with CPUs 2-3 isolated (isolcpus=nohz,domain +
// nohz_full).  CPU 2 runs an oslat-like noise meter; a housekeeping task on
// CPU 0 periodically pokes CPU 2 with a per-CPU work item (what a deferred
// per-CPU flush does to an isolated CPU) and queues unbound housekeeping
// work.  The workload runs for 1 s on the simulator, then for a short time on
// real pinned threads; per-CPU statistics and the noise seen on CPU 2 are
// printed for both.  Copy this file to start a harness.
//
// Usage: example_drive_both [real_ms]   (default 200)

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <utility>

#include "isolation/core/driver.h"
#include "isolation/core/isolation_config.h"
#include "isolation/runtime/noise_meter.h"
#include "isolation/runtime/real_driver.h"
#include "isolation/runtime/sim.h"
#include "isolation/core/topology.h"

namespace {

using namespace isolation;  // NOLINT: example brevity

// A mechanism adapter would forward these events to the mechanism's entry
// points; this one only counts what reaches the isolated CPUs.
class IsolationWatch : public Hooks {
 public:
  explicit IsolationWatch(const IsolationConfig& iso) : nohz_full_(iso.nohz_full()) {}
  void OnTick(CpuContext& ctx, TaskId) override {
    // Hooks of different CPUs run concurrently on the real driver: atomic.
    // Relaxed suffices: the count is read after RunFor, which synchronises.
    if (nohz_full_.Test(ctx.cpu())) ticks_on_isolated.fetch_add(1, std::memory_order_relaxed);
  }
  std::atomic<int64_t> ticks_on_isolated{0};

 private:
  CpuMask nohz_full_;
};

// The workload; `meter` measures CPU 2 and must outlive the run.
absl::Status AddWorkload(Driver& d, NoiseMeter& meter, Nanos measure) {
  TaskSpec oslat;
  oslat.name = "oslat";
  oslat.cpu = 2;
  oslat.affinity = CpuMask::Of(d.num_cpus(), 2);
  oslat.body = meter.MakeTaskBody(measure, 50 * kNsPerUs);
  if (absl::StatusOr<TaskId> id = d.Spawn(std::move(oslat)); !id.ok()) return id.status();

  TaskSpec housekeeper;
  housekeeper.name = "housekeeper";
  housekeeper.cpu = 0;
  housekeeper.affinity = d.isolation().housekeeping(HousekeepingType::kKthread);
  housekeeper.body = MakeTaskBody([](TaskContext& ctx) {
    // Every 10 ms: a 5 us per-CPU work item on isolated CPU 2, and 20 us of
    // unbound housekeeping work.
    ctx.driver().QueueWorkOn(2, 0, [](CpuContext& k) { k.Charge(5 * kNsPerUs); });
    ctx.driver().QueueHousekeepingWork(0, [](CpuContext& k) { k.Charge(20 * kNsPerUs); });
    return Step::Sleep(10 * kNsPerMs);
  });
  if (absl::StatusOr<TaskId> id = d.Spawn(std::move(housekeeper)); !id.ok()) return id.status();
  return absl::OkStatus();
}

void PrintStats(const Driver& d) {
  std::printf(
      "  cpu  ticks  switches  work  timers  interrupts  max_stall_us  kernel_us  idle_ms  "
      "tick_stops\n");
  for (int cpu = 0; cpu < d.num_cpus(); ++cpu) {
    const CpuStats s = d.Stats(cpu);
    std::printf("  %3d %6lld %9lld %5lld %7lld %11lld %13.1f %10.1f %8.1f %11lld\n", cpu,
                static_cast<long long>(s.ticks), static_cast<long long>(s.context_switches),
                static_cast<long long>(s.work_items), static_cast<long long>(s.timer_callbacks),
                static_cast<long long>(s.interruptions), static_cast<double>(s.max_stall_ns) / 1e3,
                static_cast<double>(s.kernel_ns) / 1e3, static_cast<double>(s.idle_ns) / 1e6,
                static_cast<long long>(s.tick_stops));
  }
}

int Fail(const absl::Status& st) {
  std::fprintf(stderr, "drive_both: %s\n", std::string(st.message()).c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  long real_ms = 200;
  if (argc > 1) {
    char* end = nullptr;
    real_ms = std::strtol(argv[1], &end, 10);
    if (end == argv[1] || *end != '\0' || real_ms <= 0 || real_ms > 10000) {
      std::fprintf(stderr, "drive_both: real_ms must be an integer in [1, 10000], got '%s'\n",
                   argv[1]);
      return 2;
    }
  }

  absl::StatusOr<Topology> topo = Topology::FromSynthetic("package:1 core:4 pu:1");
  if (!topo.ok()) return Fail(topo.status());
  absl::StatusOr<IsolationConfig> iso = IsolationConfig::FromFlags(*topo, "nohz,domain,2-3", "2-3");
  if (!iso.ok()) return Fail(iso.status());
  std::printf("model: %s; %s\n", topo->Summary().c_str(), iso->ToCmdline().c_str());
  std::printf("housekeeping(wq): %s  nohz_full: %s\n",
              iso->housekeeping(HousekeepingType::kWq).ToString().c_str(),
              iso->nohz_full().ToString().c_str());

  // --- simulator: 1 s of virtual time, deterministic -------------------------------
  {
    SimOptions opts;
    opts.seed = 1;
    opts.hz = 1000;
    absl::StatusOr<std::unique_ptr<Simulator>> sim = Simulator::Create(*topo, *iso, opts);
    if (!sim.ok()) return Fail(sim.status());
    IsolationWatch watch(*iso);
    (*sim)->AddHooks(&watch);
    NoiseMeter meter;
    if (absl::Status st = AddWorkload(**sim, meter, kNsPerSec - 10 * kNsPerMs); !st.ok())
      return Fail(st);
    if (absl::Status st = (*sim)->RunFor(kNsPerSec); !st.ok()) return Fail(st);
    std::printf("\n== simulator: 1 s virtual, %lld events, trace hash %016llx\n",
                static_cast<long long>((*sim)->events_processed()),
                static_cast<unsigned long long>((*sim)->TraceHash()));
    PrintStats(**sim);
    std::printf("  ticks on nohz_full CPUs: %lld\n",
                static_cast<long long>(watch.ticks_on_isolated.load()));
    std::printf("  modelled noise on cpu 2 (one sample per 50 us slice):\n%s",
                meter.Result().ToString().c_str());
  }

  // --- real threads: pinned, real clock ----------------------------------------------
  {
    RealDriverOptions opts;
    opts.hz = 1000;
    absl::StatusOr<std::unique_ptr<RealThreadDriver>> real =
        RealThreadDriver::Create(*topo, *iso, opts);
    if (!real.ok()) return Fail(real.status());
    NoiseMeter meter;
    const Nanos run = real_ms * kNsPerMs;
    if (absl::Status st = AddWorkload(**real, meter, run * 8 / 10); !st.ok()) return Fail(st);
    if (absl::Status st = (*real)->RunFor(run); !st.ok()) return Fail(st);
    std::printf(
        "\n== real threads: %ld ms%s\n", real_ms,
        (*real)->oversubscribed()
            ? " -- OVERSUBSCRIBED (more model CPUs than host CPUs): timings not representative"
            : "");
    for (int cpu = 0; cpu < (*real)->num_cpus(); ++cpu) {
      std::printf("  model cpu %d -> host cpu %d (observed %d)\n", cpu, (*real)->HostCpu(cpu),
                  (*real)->ObservedHostCpu(cpu));
    }
    PrintStats(**real);
    std::printf("  measured noise on cpu 2:\n%s", meter.Result().ToString().c_str());
  }
  return 0;
}
