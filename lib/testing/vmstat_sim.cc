// SPDX-License-Identifier: GPL-2.0-or-later
// The vmstat conformance suite on the deterministic simulator
// (testing/vmstat.h), through VmstatHooks: S7 (RT-init pattern), S9 (idle
// entry), S12 (interrupt dirtying), S13 (never returns to user), S14
// (stat_refresh vs a task that never yields), S15 (hotplug, I10) and S17
// (noise census over a simulated hour), each ending with I1 and checking
// I8/I9 as the fold policy promises.

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "isolation/core/driver.h"
#include "isolation/runtime/sim.h"
#include "isolation/testing/machine.h"
#include "isolation/testing/violations.h"
#include "isolation/vmstat/hooks.h"
#include "testing/vmstat_common.h"

namespace isolation::testing {

using namespace vmstat_kit;  // NOLINT(build/namespaces): the kit's own helpers
using vmstat::kNodeWriteback;
using vmstat::kZoneMlock;
using vmstat::kZoneWritePending;
using vmstat::NormalThreshold;

namespace {

constexpr Nanos kP = 10 * kNsPerMs;  // stat interval, shortened for the model
constexpr int kCpus = 8;             // CPUs 1-7 isolated and nohz_full

// A simulated machine running one variant's counters through VmstatHooks.
// Members are destroyed simulator first (its tasks point into this box).
struct SimBox {
  std::unique_ptr<Vmstat> vm;
  std::unique_ptr<vmstat::VmstatHooks> hooks;
  Truth truth;
  std::unique_ptr<Simulator> sim;

  void Apply(int cpu, StatKind k, int inst, int item, int64_t d) {
    vm->Mod(cpu, k, inst, item, d);
    truth.Add(k, inst, item, d);
  }
  int64_t ConservationError(std::string* where) const {
    return vmstat_kit::ConservationError(*vm, truth, where);
  }
  int64_t ShepherdQueued(int cpu) const { return vm->Counters(cpu).shepherd_queued; }
  int64_t IsolatedShepherdQueued() const {
    int64_t n = 0;
    for (int cpu = 0; cpu < vm->num_cpus(); ++cpu) {
      if (vm->IsIsolated(cpu)) n += ShepherdQueued(cpu);
    }
    return n;
  }
};

std::unique_ptr<SimBox> MakeSimBox(Report& r, std::string_view variant, uint64_t seed = 1,
                                   Nanos period = kP, int hz = 1000) {
  auto machine =
      MachineBuilder().Topology("package:1 core:8 pu:1").Isolcpus("1-7").NohzFull("1-7").Build();
  if (!machine.ok()) {
    r.Fail("machine: ", machine.status().message());
    return nullptr;
  }
  VmstatConfig c;
  c.num_cpus = machine->num_cpus();
  c.zones = {ZoneSpec{"Normal", 0, 16 * kGiB, 8192, 10240, 12288}};
  c.stat_interval = period;
  c.isolated = CpuMask(c.num_cpus);
  for (int cpu = 0; cpu < c.num_cpus; ++cpu) {
    if (machine->isolation.CpuIsIsolated(cpu)) c.isolated.Set(cpu);
  }
  c.nohz_full = machine->isolation.nohz_full();
  auto box = std::make_unique<SimBox>();
  box->vm = MakeOrFail(r, variant, c);
  if (box->vm == nullptr) return nullptr;
  box->hooks = std::make_unique<vmstat::VmstatHooks>(*box->vm);
  SimOptions o;
  o.seed = seed;
  o.hz = hz;
  auto sim = machine->Simulator(o);
  if (!sim.ok()) {
    r.Fail("simulator: ", sim.status().message());
    return nullptr;
  }
  box->sim = std::move(sim).value();
  box->sim->AddHooks(box->hooks.get());
  return box;
}

bool RunFor(Report& r, SimBox& box, Nanos d) {
  const absl::Status s = box.sim->RunFor(d);
  return r.Expect(s.ok(), "RunFor: ", s.message());
}

void ExpectConserved(Report& r, const SimBox& box, const char* when) {
  std::string where;
  if (box.ConservationError(&where) != 0) r.Fail("I1 ", when, ": ", where);
}

// Housekeeping CPU 0: a task that keeps dirtying node counters and sleeping.
void SpawnHousekeeper(Report& r, SimBox& box, Nanos sleep = 200 * kNsPerUs) {
  auto rng = std::make_shared<std::mt19937_64>(99);
  TaskSpec t;
  t.name = "hk";
  t.cpu = 0;
  t.affinity = CpuMask::Of(box.vm->num_cpus(), 0);
  SimBox* b = &box;
  t.body = MakeTaskBody([b, rng, sleep](TaskContext& ctx) {
    ctx.Syscall([b, rng](CpuContext& k) {
      b->Apply(k.cpu(), StatKind::kNode, 0, static_cast<int>((*rng)() % 4),
               static_cast<int64_t>((*rng)() % 7) - 3);
    });
    return Step::Sleep(sleep);
  });
  r.Expect(box.sim->Spawn(std::move(t)).ok(), "spawning the housekeeper failed");
}

struct RtResult {
  int64_t residue_after_spin = -1;
};

// S7's task on `cpu`: `syscalls` mlock/munlock-like syscalls (NR_MLOCK +1 /
// -1), one mlock-like burst below every threshold on several items, then a
// user spin of `spin` with the tick stopped; the residue is read at its end.
void SpawnRtInit(Report& r, SimBox& box, int cpu, int syscalls, Nanos spin, RtResult* out) {
  auto state = std::make_shared<int>(0);
  TaskSpec t;
  t.name = "rt";
  t.cpu = cpu;
  t.affinity = CpuMask::Of(box.vm->num_cpus(), cpu);
  SimBox* b = &box;
  t.body = MakeTaskBody([b, state, syscalls, spin, out](TaskContext& ctx) {
    const int i = (*state)++;
    if (i < syscalls) {
      ctx.Syscall(
          [b, i](CpuContext& k) {
            b->Apply(k.cpu(), StatKind::kZone, 0, kZoneMlock, i % 2 == 0 ? 1 : -1);
          },
          2 * kNsPerUs);
      return Step::Run(3 * kNsPerUs);
    }
    if (i == syscalls) {
      ctx.Syscall([b](CpuContext& k) {
        b->Apply(k.cpu(), StatKind::kZone, 0, kZoneMlock, 5);
        b->Apply(k.cpu(), StatKind::kNode, 0, 1, 3);   // NR_ACTIVE_ANON
        b->Apply(k.cpu(), StatKind::kNode, 0, 13, 2);  // NR_ANON_MAPPED
      });
      return Step::Run(spin);
    }
    out->residue_after_spin = b->vm->MaxAbsDiff(ctx.cpu());
    return Step::Block();  // stays on the CPU's runqueue, off the CPU
  });
  r.Expect(box.sim->Spawn(std::move(t)).ok(), "spawning the RT task failed");
}

// The promises as the scenarios need them.
bool FoldsOnReturnToUser(const FoldPolicyTraits& t) {
  return t.return_to_user_folds != ReturnToUserScope::kNone;
}
bool ShepherdSparesIsolated(const FoldPolicyTraits& t) {
  return t.shepherd_work != WorkScope::kAnyCpu;
}

}  // namespace

// ---- S7 ------------------------------------------------------------------------------------

Violations CheckVmstatRtInit(std::string_view variant) {
  Report r("S7 RT-init pattern", variant);
  auto box = MakeSimBox(r, variant);
  if (box == nullptr) return r.Take();
  const FoldPolicyTraits& t = box->vm->policy_traits();
  SpawnHousekeeper(r, *box);
  std::vector<RtResult> res(kCpus);
  for (int cpu = 1; cpu < kCpus; ++cpu)
    SpawnRtInit(r, *box, cpu, 2000, 4 * kP, &res[static_cast<size_t>(cpu)]);
  if (!RunFor(r, *box, 8 * kP)) return r.Take();
  r.Expect(box->hooks->shepherd_runs() > 0, "the shepherd never ran");
  r.Expect(box->hooks->last_shepherd_cpu() == 0, "the shepherd ran on cpu ",
           box->hooks->last_shepherd_cpu(), ", not on housekeeping cpu 0");
  for (int cpu = 1; cpu < kCpus; ++cpu) {
    const int64_t residue = res[static_cast<size_t>(cpu)].residue_after_spin;
    if (!r.Expect(residue >= 0, "the spin did not finish on cpu ", cpu)) continue;
    // The spin follows a return to user with the tick stopped; a policy
    // folding kernel-bound CPUs had 4 P to reach this one.
    if (FoldsOnReturnToUser(t) || t.folds_kernel_bound_cpus) {
      r.Expect(residue == 0, "I9: residue ", residue, " on isolated cpu ", cpu,
               " at the end of its spin");
    }
  }
  if (ShepherdSparesIsolated(t)) {
    r.Expect(box->IsolatedShepherdQueued() == 0, "I8: the shepherd queued ",
             box->IsolatedShepherdQueued(),
             " work items on isolated nohz_full CPUs (scope: ", ScopeName(t.shepherd_work), ")");
  }
  ExpectConserved(r, *box, "at the end");
  return r.Take();
}

// ---- S12 -----------------------------------------------------------------------------------

Violations CheckVmstatInterruptDirtying(std::string_view variant) {
  Report r("S12 interrupt dirtying", variant);
  auto box = MakeSimBox(r, variant);
  if (box == nullptr) return r.Take();
  const FoldPolicyTraits& t = box->vm->policy_traits();
  SpawnHousekeeper(r, *box);
  TaskSpec task;
  task.name = "vcpu";
  task.cpu = 3;
  task.affinity = CpuMask::Of(kCpus, 3);
  task.body = MakeTaskBody([](TaskContext&) { return Step::Run(100 * kNsPerUs); });
  r.Expect(box->sim->Spawn(std::move(task)).ok(), "spawn failed");
  SimBox* b = box.get();
  box->sim->ArmTimer(3, kP / 2, [b](CpuContext& k) {
    b->Apply(k.cpu(), StatKind::kNode, 0, kNodeWriteback, -3);
    b->Apply(k.cpu(), StatKind::kZone, 0, kZoneWritePending, -3);
  });
  if (!RunFor(r, *box, 5 * kP)) return r.Take();
  const int64_t residue = box->vm->MaxAbsDiff(3);
  // The interrupt returns to the user loop (the same exit path as a syscall).
  if (FoldsOnReturnToUser(t) || t.folds_kernel_bound_cpus) {
    r.Expect(residue == 0, "I9: residue ", residue, " left by the interrupt on isolated cpu 3");
  }
  if (ShepherdSparesIsolated(t)) {
    r.Expect(box->ShepherdQueued(3) == 0, "I8: the shepherd queued work on isolated cpu 3");
  }
  ExpectConserved(r, *box, "at the end");
  return r.Take();
}

// ---- S13 -----------------------------------------------------------------------------------

Violations CheckVmstatKernelBound(std::string_view variant) {
  Report r("S13 never returns to user", variant);
  auto box = MakeSimBox(r, variant);
  if (box == nullptr) return r.Take();
  const FoldPolicyTraits& t = box->vm->policy_traits();
  SpawnHousekeeper(r, *box);
  // Isolated cpu 5 has no user task: interrupt-driven kernel work dirties it.
  SimBox* b = box.get();
  for (int k = 1; k <= 3; ++k) {
    box->sim->ArmTimer(5, k * kP / 3,
                       [b](CpuContext& c) { b->Apply(c.cpu(), StatKind::kNode, 0, 9, 2); });
  }
  if (!RunFor(r, *box, 5 * kP)) return r.Take();
  if (t.folds_kernel_bound_cpus) {
    r.Expect(box->vm->MaxAbsDiff(5) == 0, "I9: residue ", box->vm->MaxAbsDiff(5),
             " on a CPU that never returns to user, 4 P after the last write");
  }
  if (ShepherdSparesIsolated(t)) {
    r.Expect(box->ShepherdQueued(5) == 0, "I8: the shepherd queued work on isolated cpu 5");
  }
  ExpectConserved(r, *box, "at the end");
  return r.Take();
}

// ---- S9 ------------------------------------------------------------------------------------

Violations CheckVmstatIdleEntry(std::string_view variant) {
  Report r("S9 idle entry", variant);
  // Isolated cpu 6 stays idle with its tick stopped and takes 50 interrupts;
  // every second one dirties a node counter.  The driver delivers
  // OnTickStop only on a running->stopped transition (mainline: quiet_vmstat
  // on the first stop only); the seed's v8 5/5 (quiet_vmstat on every
  // attempt) is played by the interrupt itself.
  constexpr int kCpu = 6;
  constexpr int kIrqs = 50;
  for (const bool every_attempt : {false, true}) {
    const char* how = every_attempt ? " (every attempt)" : " (first stop only)";
    auto box = MakeSimBox(r, variant);
    if (box == nullptr) return r.Take();
    const FoldPolicyTraits& t = box->vm->policy_traits();
    SpawnHousekeeper(r, *box);
    if (!RunFor(r, *box, kP / 20)) return r.Take();
    if (!r.Expect(box->sim->IsIdle(kCpu) && box->sim->TickStopped(kCpu),
                  "cpu 6 not idle with its tick stopped")) {
      return r.Take();
    }
    const vmstat::CpuCounters before = box->vm->Counters(kCpu);
    const int64_t stops_before = box->sim->Stats(kCpu).tick_stops;
    SimBox* b = box.get();
    for (int k = 1; k <= kIrqs; ++k) {
      box->sim->ArmTimer(kCpu, kP / 20 + k * kP / 10, [b, k, every_attempt](CpuContext& c) {
        if (k % 2 == 0) b->Apply(c.cpu(), StatKind::kNode, 0, 3, 1);
        if (every_attempt) (void)b->vm->QuietVmstat(c.cpu(), c.driver().TickStopped(c.cpu()));
      });
    }
    if (!RunFor(r, *box, kIrqs * kP / 10 + kP / 20)) return r.Take();
    const vmstat::CpuCounters after = box->vm->Counters(kCpu);
    const int64_t stops = box->sim->Stats(kCpu).tick_stops - stops_before;
    r.Expect(after.quiet_calls - before.quiet_calls == stops + (every_attempt ? kIrqs : 0),
             "quiet_vmstat gate checks ", after.quiet_calls - before.quiet_calls, " != tick stops ",
             stops, every_attempt ? " + one per interrupt" : "", how);
    if (every_attempt && t.quiet_folds_dirty) {
      r.Expect(box->vm->MaxAbsDiff(kCpu) == 0, "residue after quiet_vmstat on every attempt", how);
      r.Expect(after.quiet_folds - before.quiet_folds == kIrqs / 2, "quiet folds ",
               after.quiet_folds - before.quiet_folds, " != dirtying interrupts ", kIrqs / 2, how);
    }
    if (ShepherdSparesIsolated(t)) {
      r.Expect(box->ShepherdQueued(kCpu) == 0,
               "I8: the shepherd queued work on isolated idle cpu 6", how);
    }
    ExpectConserved(r, *box, how);
  }
  return r.Take();
}

// ---- S14 -----------------------------------------------------------------------------------

Violations CheckVmstatStatRefresh(std::string_view variant) {
  Report r("S14 stat_refresh vs a spinning task", variant);
  constexpr int kSpinCpu = 3;
  auto box = MakeSimBox(r, variant);
  if (box == nullptr) return r.Take();
  const bool remote = box->vm->policy_traits().folds_remotely;
  SpawnHousekeeper(r, *box);
  TaskSpec t;
  t.name = "fifo-spinner";
  t.cpu = kSpinCpu;
  t.affinity = CpuMask::Of(kCpus, kSpinCpu);
  t.body = MakeTaskBody([](TaskContext&) { return Step::Run(1000 * kP); });
  r.Expect(box->sim->Spawn(std::move(t)).ok(), "spawn failed");
  box->hooks->SetNeverYields(kSpinCpu, true);
  if (!RunFor(r, *box, kP / 2)) return r.Take();
  for (int cpu = 1; cpu < kCpus; ++cpu) box->Apply(cpu, StatKind::kNode, 0, 2, 2);
  r.Expect(box->hooks->StatRefresh(*box->sim), "stat_refresh refused to start");
  if (remote) {
    // Folded from the caller: complete at once.
    r.Expect(box->hooks->stat_refreshes_completed() == 1,
             "a remote-fold stat_refresh did not complete at once");
    for (int cpu = 1; cpu < kCpus; ++cpu) {
      r.Expect(box->vm->MaxAbsDiff(cpu) == 0, "cpu ", cpu,
               " not folded by a remote-fold stat_refresh");
    }
  }
  if (!RunFor(r, *box, 10 * kP)) return r.Take();  // the bounded wait
  if (remote) {
    r.Expect(box->vm->Counters(kSpinCpu).work_runs == 0, "work ran on the spinning CPU");
  } else {
    // schedule_on_each_cpu waits for the spinning CPU's kworker.
    r.Expect(box->hooks->stat_refreshes_completed() == 0, "stat_refresh completed although cpu ",
             kSpinCpu, " never yielded");
    r.Expect(box->hooks->stat_refresh_waiting() == 1, "stat_refresh waits for ",
             box->hooks->stat_refresh_waiting(), " CPUs, not just the spinning one");
    for (int cpu = 1; cpu < kCpus; ++cpu) {
      if (cpu != kSpinCpu) r.Expect(box->vm->MaxAbsDiff(cpu) == 0, "cpu ", cpu, " not refreshed");
    }
    r.Expect(!box->hooks->StatRefresh(*box->sim), "a second refresh started while one waits");
    box->hooks->SetNeverYields(kSpinCpu, false);  // e.g. RT throttling
    if (!RunFor(r, *box, kP)) return r.Take();
    r.Expect(box->hooks->stat_refreshes_completed() == 1,
             "stat_refresh did not complete once the task yielded");
    r.Expect(box->vm->MaxAbsDiff(kSpinCpu) == 0, "the spinning CPU was not refreshed");
  }
  ExpectConserved(r, *box, "at the end");
  return r.Take();
}

// ---- S15 -----------------------------------------------------------------------------------

Violations CheckVmstatSimHotplug(std::string_view variant) {
  Report r("S15/I10 hotplug", variant);
  auto box = MakeSimBox(r, variant);
  if (box == nullptr) return r.Take();
  SpawnHousekeeper(r, *box);
  std::vector<RtResult> res(kCpus);
  for (int cpu = 1; cpu < kCpus; ++cpu)
    SpawnRtInit(r, *box, cpu, 200, 10 * kP, &res[static_cast<size_t>(cpu)]);
  bool checked = false;
  SimBox* b = box.get();
  box->sim->At(2 * kP + 123, [b, &r, &checked] {
    if (!b->sim->SetCpuOnline(6, false).ok()) r.Fail("SetCpuOnline(6, false) failed");
    r.Expect(!b->vm->IsOnline(6), "cpu 6 still online in the counters");
    r.Expect(b->vm->MaxAbsDiff(6) == 0, "I10: the dead CPU's slots are not 0");
    r.Expect(!b->vm->WorkPending(6), "I10: work still pending on the dead CPU");
    r.Expect(b->vm->online_cpus() == 7, "online count");
    r.Expect(b->vm->Threshold(0, StatKind::kZone, 0) == NormalThreshold(16 * kGiB, 7),
             "I10: thresholds for n = 7");
    ExpectConserved(r, *b, "right after the offline");
    checked = true;
  });
  box->sim->At(4 * kP, [b, &r] {
    r.Expect(b->sim->SetCpuOnline(6, true).ok(), "SetCpuOnline(6, true) failed");
  });
  if (!RunFor(r, *box, 8 * kP)) return r.Take();
  r.Expect(checked, "the offline never happened");
  r.Expect(box->vm->IsOnline(6), "cpu 6 not back online");
  r.Expect(box->vm->Threshold(6, StatKind::kZone, 0) == NormalThreshold(16 * kGiB, 8),
           "I10: thresholds for n = 8");
  ExpectConserved(r, *box, "at the end");
  return r.Take();
}

// ---- S17 -----------------------------------------------------------------------------------

std::string VmstatNoiseCensus::Percentiles(std::vector<int64_t> samples) {
  if (samples.empty()) return "no samples";
  std::sort(samples.begin(), samples.end());
  auto at = [&](double q) {
    return samples[std::min(samples.size() - 1, static_cast<size_t>(q * samples.size()))];
  };
  return Cat("p50 ", at(0.50), " p90 ", at(0.90), " p99 ", at(0.99), " max ", samples.back());
}

absl::StatusOr<VmstatNoiseCensus> RunVmstatNoiseCensus(std::string_view variant, Nanos duration,
                                                       uint64_t seed) {
  Report r("S17", variant);
  // The real stat interval (1 s) and HZ=250; the housekeeper sleeps 50 ms.
  auto box = MakeSimBox(r, variant, seed, kNsPerSec, 250);
  if (box == nullptr) return absl::InvalidArgumentError(r.Take().front());
  SimBox* b = box.get();
  SpawnHousekeeper(r, *box, 50 * kNsPerMs);
  // Isolated CPUs: user compute of 10-200 ms; before one run in five a
  // syscall that moves a random zone item by -4..+4 pages.
  for (int cpu = 1; cpu < kCpus; ++cpu) {
    auto rng = std::make_shared<std::mt19937_64>(seed * 1000 + static_cast<uint64_t>(cpu));
    TaskSpec t;
    t.name = "user";
    t.cpu = cpu;
    t.affinity = CpuMask::Of(kCpus, cpu);
    t.body = MakeTaskBody([b, rng](TaskContext& ctx) {
      if ((*rng)() % 5 == 0) {
        ctx.Syscall([b, rng](CpuContext& k) {
          b->Apply(k.cpu(), StatKind::kZone, 0, static_cast<int>((*rng)() % vmstat::kMaxZoneItems),
                   static_cast<int64_t>((*rng)() % 9) - 4);
        });
      }
      return Step::Run(static_cast<Nanos>(10 + (*rng)() % 191) * kNsPerMs);
    });
    if (!box->sim->Spawn(std::move(t)).ok()) return absl::InternalError("spawn failed");
  }
  // I/O completions on isolated CPUs: about one per CPU every 5 s.
  std::mt19937_64 irq_rng(seed);
  for (int cpu = 1; cpu < kCpus; ++cpu) {
    for (Nanos at = 0;;) {
      at += static_cast<Nanos>(1 + irq_rng() % 10000) * kNsPerMs;
      if (at >= duration) break;
      box->sim->ArmTimer(cpu, at, [b](CpuContext& c) {
        b->Apply(c.cpu(), StatKind::kNode, 0, kNodeWriteback, -1);
        b->Apply(c.cpu(), StatKind::kZone, 0, kZoneWritePending, -1);
      });
    }
  }
  VmstatNoiseCensus census;
  int64_t i4_violations = 0;
  for (Nanos at = kNsPerSec / 2; at < duration; at += kNsPerSec) {
    box->sim->At(at, [b, &census, &i4_violations] {
      const Vmstat& vm = *b->vm;
      int64_t drift = 0;
      for (StatKind k : {StatKind::kZone, StatKind::kNode}) {
        for (int item = 0; item < vm.num_items(k); ++item) {
          int64_t truth = 0, bound = 0;
          for (int inst = 0; inst < vm.num_instances(k); ++inst) {
            truth += b->truth.Get(k, inst, item);
            for (int cpu = 0; cpu < vm.num_cpus(); ++cpu) {
              if (vm.IsOnline(cpu)) bound += vm.Threshold(cpu, k, inst);
            }
          }
          const int64_t d = std::abs(vm.GlobalRaw(k, item) - truth);
          if (d > bound) ++i4_violations;
          drift += d;
        }
      }
      int64_t residue = 0;
      for (int cpu = 0; cpu < vm.num_cpus(); ++cpu) {
        if (vm.IsIsolated(cpu)) residue = std::max(residue, vm.MaxAbsDiff(cpu));
      }
      census.drift_samples.push_back(drift);
      census.isolated_residue_samples.push_back(residue);
    });
  }
  const absl::Status run = box->sim->RunFor(duration);
  if (!run.ok()) return run;
  census.simulated = duration;
  for (int cpu = 0; cpu < kCpus; ++cpu) {
    const vmstat::CpuCounters c = box->vm->Counters(cpu);
    VmstatNoiseCensus::Class& k = box->vm->IsIsolated(cpu) ? census.isolated : census.housekeeping;
    k.work_runs += c.work_runs;
    k.shepherd_queued += c.shepherd_queued;
    k.quiet_folds += c.quiet_folds;
    k.return_to_user_folds += c.return_to_user_folds;
    k.remote_folds += c.remote_folds;
    k.threshold_folds += c.threshold_folds;
    for (StatKind kind : {StatKind::kZone, StatKind::kNode}) {
      for (int inst = 0; inst < box->vm->num_instances(kind); ++inst)
        census.drift_bound += box->vm->Threshold(cpu, kind, inst);
    }
  }
  census.conservation_error = box->ConservationError(nullptr);
  if (i4_violations > 0) {
    return absl::InternalError(
        Cat("I4: ", i4_violations, " samples with |G - T| beyond the sum of thresholds"));
  }
  if (r.failed()) return absl::InternalError(r.Take().front());
  return census;
}

Violations CheckVmstatNoiseCensus(std::string_view variant, VmstatNoiseCensus* out) {
  Report r("S17 noise census", variant);
  auto census = RunVmstatNoiseCensus(variant);
  if (!census.ok()) {
    r.Fail(census.status().message());
    return r.Take();
  }
  if (out != nullptr) *out = *census;
  FoldPolicyTraits t;
  if (!TraitsOrFail(r, variant, &t)) return r.Take();
  r.Expect(census->conservation_error == 0, "I1 after a simulated hour: discrepancy ",
           census->conservation_error);
  r.Expect(census->drift_samples.size() == 3600,
           "not one drift sample per second: ", census->drift_samples.size());
  if (ShepherdSparesIsolated(t)) {
    r.Expect(census->isolated.shepherd_queued == 0, "I8: ", census->isolated.shepherd_queued,
             " shepherd work items on isolated nohz_full CPUs in an hour");
  }
  if (t.folds_remotely) {
    r.Expect(census->isolated.work_runs == 0,
             "vmstat_update ran on isolated CPUs under a remote-fold policy");
    r.Expect(census->isolated.remote_folds > 0,
             "the shepherd never folded an isolated CPU remotely in an hour");
  }
  if (FoldsOnReturnToUser(t)) {
    r.Expect(census->isolated.return_to_user_folds > 0,
             "no return-to-user fold in an hour of dirtying syscalls");
  }
  return r.Take();
}

// ---- the suite ---------------------------------------------------------------------------------

int VmstatSimConformanceAnchor() { return 0; }

// A binary may link the kit without instantiating every suite.
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(VmstatSimConformance);

namespace {

TEST_P(VmstatSimConformance, S7_RtInitPattern) { ISOLATION_VMSTAT_RUN_CHECK(); }
TEST_P(VmstatSimConformance, S9_IdleEntry) { ISOLATION_VMSTAT_RUN_CHECK(); }
TEST_P(VmstatSimConformance, S12_InterruptDirtying) { ISOLATION_VMSTAT_RUN_CHECK(); }
TEST_P(VmstatSimConformance, S13_NeverReturnsToUser) { ISOLATION_VMSTAT_RUN_CHECK(); }
TEST_P(VmstatSimConformance, S14_StatRefreshVsSpinningTask) { ISOLATION_VMSTAT_RUN_CHECK(); }
TEST_P(VmstatSimConformance, S15_I10_Hotplug) { ISOLATION_VMSTAT_RUN_CHECK(); }
TEST_P(VmstatSimConformance, S17_NoiseCensusSimulatedHour) {
  ISOLATION_VMSTAT_SKIP_IF_NOT_APPLICABLE();
  VmstatNoiseCensus c;
  ISOLATION_EXPECT_NO_VIOLATIONS(CheckVmstatNoiseCensus(GetParam(), &c));
  if (c.drift_samples.empty()) return;
  const VmstatNoiseCensus* census = &c;
  // The census is the scenario's output: recorded in the test's XML and log.
  const std::string drift = VmstatNoiseCensus::Percentiles(census->drift_samples);
  const std::string residue = VmstatNoiseCensus::Percentiles(census->isolated_residue_samples);
  RecordProperty("drift_pages", drift);
  RecordProperty("isolated_residue_pages", residue);
  std::printf(
      "S17 %s: isolated: %lld work runs (%lld queued by the shepherd), %lld quiet, %lld "
      "return-to-user, "
      "%lld remote, %lld threshold folds; housekeeping: %lld work runs; drift over all items "
      "(pages): %s; "
      "largest isolated residue: %s\n",
      GetParam().c_str(), static_cast<long long>(census->isolated.work_runs),
      static_cast<long long>(census->isolated.shepherd_queued),
      static_cast<long long>(census->isolated.quiet_folds),
      static_cast<long long>(census->isolated.return_to_user_folds),
      static_cast<long long>(census->isolated.remote_folds),
      static_cast<long long>(census->isolated.threshold_folds),
      static_cast<long long>(census->housekeeping.work_runs), drift.c_str(), residue.c_str());
}

}  // namespace
}  // namespace isolation::testing
