// SPDX-License-Identifier: GPL-2.0-or-later
// The vmstat kit's forced interleavings (testing/vmstat.h): every schedule,
// at the granularity of the mechanism's interleave points, of
//   - a writer on CPU 0 against a remote fold of CPU 0 (I7, for policies
//     that fold remotely), and
//   - CPU 0's (or nohz_full CPU 1's) own quiet_vmstat / return to user and a
//     write, against a shepherd pass (I9: the pending bit is never stranded
//     and work is still queued afterwards; I1),
// each with an observer actor that, wherever it lands, checks I2: the
// discrepancy in flight is at most |delta| + t + t/2 per writer and t + t/2
// per slot being folded (an instance; the global item collects one slot per
// instance, because refresh_cpu_vm_stats adds the instances before the
// global).
//
// The vmstat protocol has no store/fence/load pairing (nothing
// orders one slot against another location), so unlike mm_cid there is no
// store-buffer check to run: sequentially consistent interleavings are the
// whole concurrency story of a single slot.

#include <cstdint>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "isolation/core/interleave.h"
#include "testing/vmstat_common.h"

namespace isolation::testing {

using namespace vmstat_kit;  // NOLINT(build/namespaces): the kit's own helpers

namespace {

constexpr int kT = 10;  // fixed threshold of these scenarios
constexpr int kOverstep = kT / 2;

// What one actor may leave in flight (I2).
struct Bound {
  int64_t instance = 0;
  int64_t global = 0;
};
Bound WriterBound(int64_t delta) {
  return {std::abs(delta) + kT + kOverstep, std::abs(delta) + kT + kOverstep};
}
Bound FoldBound(const Vmstat& vm) {
  const int instances =
      std::max(vm.num_instances(StatKind::kZone), vm.num_instances(StatKind::kNode));
  return {kT + kOverstep, static_cast<int64_t>(kT + kOverstep) * instances};
}
Bound Sum(Bound a, Bound b) { return {a.instance + b.instance, a.global + b.global}; }

// One run's state, rebuilt by `make` for every schedule.  The actors run
// one at a time (the Interleaver's baton), so plain fields suffice.
struct Run {
  std::unique_ptr<Vmstat> vm;
  WorkLedger ledger;
  Truth truth;         // true counts of every completed operation
  Truth actor_writes;  // what the owner/writer actor writes
  // What each of the two operating actors has in flight right now (zero
  // when it is between operations, not started or finished).
  Bound in_flight[2];
  bool observed = false;
  Transient seen;
  Bound bound;
};

// The observer: wherever it lands, the other actors are parked between two
// steps of at most one operation each.
void Observe(Run& run) {
  run.observed = true;
  run.seen = MaxTransient(*run.vm, run.truth);
  run.bound = Sum(run.in_flight[0], run.in_flight[1]);
}

// Checks I2 from the observer's sample.
void CheckTransient(Report& r, const Run& run, const std::string& at) {
  if (!run.observed) return;
  r.Expect(run.seen.instance <= run.bound.instance, "I2: instance discrepancy ", run.seen.instance,
           " in flight > ", run.bound.instance, at);
  r.Expect(run.seen.global <= run.bound.global, "I2: global discrepancy ", run.seen.global,
           " in flight > ", run.bound.global, at);
}

// CPU 0's writer (CPU 0 exists in every scenario's counters).
vmstat::VmstatWriter CpuZeroWriter(Vmstat& vm) { return vm.Writer(0).value(); }

std::string Schedule(const std::vector<std::string>& log) {
  std::string s;
  for (const std::string& e : log) s += (s.empty() ? "" : ", ") + e;
  return s.empty() ? "(no point reached)" : s;
}

}  // namespace

Violations CheckVmstatRemoteFoldInterleavings(std::string_view variant) {
  Report r("I7/I2 writer vs remote fold", variant);
  FoldPolicyTraits traits;
  if (!TraitsOrFail(r, variant, &traits) || !traits.folds_remotely) return r.Take();
  struct Scenario {
    const char* name;
    int64_t prefill;                     // CPU 0's slot before
    int64_t delta;                       // what the writer adds
    std::function<void(Vmstat&)> write;  // on CPU 0, zone 1, NR_MLOCK
  };
  const std::vector<Scenario> scenarios = {
      {"Mod +3 below t", 6, 3,
       [](Vmstat& vm) { vm.Mod(0, StatKind::kZone, 1, vmstat::kZoneMlock, 3); }},
      {"Mod +7 crossing t", 6, 7,
       [](Vmstat& vm) { vm.Mod(0, StatKind::kZone, 1, vmstat::kZoneMlock, 7); }},
      {"Inc crossing t (overstep)", 10, 1,
       [](Vmstat& vm) { vm.Inc(0, StatKind::kZone, 1, vmstat::kZoneMlock); }},
      {"DecIrqsOff crossing -t", -10, -1,
       [](Vmstat& vm) { vm.DecIrqsOff(0, StatKind::kZone, 1, vmstat::kZoneMlock); }},
      {"ModIrqsOff -20 crossing", 6, -20,
       [](Vmstat& vm) { vm.ModIrqsOff(0, StatKind::kZone, 1, vmstat::kZoneMlock, -20); }},
      // The same updates through CPU 0's inline writer front end
      // (Vmstat::Writer; its fast path and its out-of-line fold).
      {"Writer Mod +3 below t", 6, 3,
       [](Vmstat& vm) { CpuZeroWriter(vm).Mod(StatKind::kZone, 1, vmstat::kZoneMlock, 3); }},
      {"Writer Mod +7 crossing t", 6, 7,
       [](Vmstat& vm) { CpuZeroWriter(vm).Mod(StatKind::kZone, 1, vmstat::kZoneMlock, 7); }},
      {"Writer Inc crossing t (overstep)", 10, 1,
       [](Vmstat& vm) { CpuZeroWriter(vm).Inc(StatKind::kZone, 1, vmstat::kZoneMlock); }},
      {"Writer Dec below -t", -6, -1,
       [](Vmstat& vm) { CpuZeroWriter(vm).Dec(StatKind::kZone, 1, vmstat::kZoneMlock); }},
  };
  for (const Scenario& sc : scenarios) {
    std::shared_ptr<Run> run;
    auto make = [&](Interleaver& il) {
      run = std::make_shared<Run>();
      auto vm = MakeVmstat(variant, SmallConfig(2, kT));
      if (!vm.ok()) return;
      run->vm = std::move(vm).value();
      // A second dirty slot, so the fold is in flight over two instances.
      run->vm->Mod(0, StatKind::kZone, 1, vmstat::kZoneMlock, sc.prefill);
      run->truth.Add(StatKind::kZone, 1, vmstat::kZoneMlock, sc.prefill);
      run->vm->Mod(0, StatKind::kZone, 0, vmstat::kZoneMlock, -4);
      run->truth.Add(StatKind::kZone, 0, vmstat::kZoneMlock, -4);
      run->actor_writes.Add(StatKind::kZone, 1, vmstat::kZoneMlock, sc.delta);
      std::shared_ptr<Run> self = run;
      il.Add("writer", [self, &sc] {
        self->in_flight[0] = WriterBound(sc.delta);
        sc.write(*self->vm);
        self->in_flight[0] = {};
        self->truth.Merge(self->actor_writes);
      });
      il.Add("folder", [self] {
        self->in_flight[1] = FoldBound(*self->vm);
        self->vm->FoldCpuRemote(0);
        self->in_flight[1] = {};
      });
      il.Add("observer", [self] { Observe(*self); });
    };
    auto check = [&](const std::vector<std::string>& log) {
      if (run == nullptr || run->vm == nullptr) {
        r.Fail("cannot create the counters");
        return;
      }
      const std::string at = Cat(" [", sc.name, "; schedule: ", Schedule(log), "]");
      std::string where;
      if (ConservationError(*run->vm, run->truth, &where) != 0) {
        r.Fail("I7: an update was lost or counted twice: ", where, at);
      }
      CheckTransient(r, *run, at);
    };
    auto n = Interleaver::Explore(make, check);
    if (!n.ok()) r.Fail("Interleaver::Explore: ", n.status().message(), " [", sc.name, "]");
  }
  return r.Take();
}

Violations CheckVmstatOwnerShepherdInterleavings(std::string_view variant) {
  Report r("I9/I2 owner vs shepherd", variant);
  FoldPolicyTraits traits;
  if (!TraitsOrFail(r, variant, &traits)) return r.Take();
  // CPU 0 is housekeeping (not isolated, not nohz_full); CPU 1 is isolated
  // and nohz_full.  The owner of `cpu` runs quiet_vmstat (tick stopped) or a
  // return to user (tick stopped), then writes +12 (> t); the shepherd thinks every
  // tick runs -- the race Weisbecker pointed out in v8 3/5 -- and queues
  // whatever its policy queues.
  struct Scenario {
    const char* name;
    int cpu;
    bool return_to_user;
  };
  const Scenario scenarios[] = {{"cpu 0 quiet_vmstat + write", 0, false},
                                {"cpu 1 return to user + write", 1, true}};
  for (const Scenario& sc : scenarios) {
    std::shared_ptr<Run> run;
    auto make = [&](Interleaver& il) {
      run = std::make_shared<Run>();
      auto vm = MakeVmstat(variant, SmallConfig(2, kT));
      if (!vm.ok()) return;
      run->vm = std::move(vm).value();
      Vmstat& v = *run->vm;
      WorkLedger& ledger = run->ledger;
      v.SetLocalWorkQueue(&ledger);
      v.Mod(0, StatKind::kZone, 1, vmstat::kZoneMlock, 6);
      v.Mod(1, StatKind::kNode, 0, 2, 4);
      run->truth.Add(StatKind::kZone, 1, vmstat::kZoneMlock, 6);
      run->truth.Add(StatKind::kNode, 0, 2, 4);
      v.Shepherd([](int) { return false; }, [&ledger](int c, uint64_t g) { ledger.Queue(c, g); });
      // Dirty again after the pass (the work is queued, not yet run).
      v.Mod(sc.cpu, StatKind::kZone, 1, vmstat::kZoneMlock, 3);
      run->truth.Add(StatKind::kZone, 1, vmstat::kZoneMlock, 3);
      run->actor_writes.Add(StatKind::kZone, 1, vmstat::kZoneMlock, 12);
      std::shared_ptr<Run> self = run;
      const bool remote = traits.folds_remotely;
      il.Add("owner", [self, sc] {
        self->in_flight[0] = FoldBound(*self->vm);
        if (sc.return_to_user) {
          self->vm->ReturnToUser(sc.cpu, true);
        } else {
          self->vm->QuietVmstat(sc.cpu, true);
        }
        self->in_flight[0] = WriterBound(12);
        self->vm->Mod(sc.cpu, StatKind::kZone, 1, vmstat::kZoneMlock,
                      12);  // crosses t whatever came before
        self->in_flight[0] = {};
        self->truth.Merge(self->actor_writes);
      });
      il.Add("shepherd", [self, remote] {
        // Only a remote fold moves counts from the shepherd.
        if (remote) self->in_flight[1] = FoldBound(*self->vm);
        WorkLedger& l = self->ledger;
        self->vm->Shepherd([](int) { return false; }, [&l](int c, uint64_t g) { l.Queue(c, g); });
        self->in_flight[1] = {};
      });
      il.Add("observer", [self] { Observe(*self); });
    };
    auto check = [&](const std::vector<std::string>& log) {
      if (run == nullptr || run->vm == nullptr) {
        r.Fail("cannot create the counters");
        return;
      }
      Vmstat& v = *run->vm;
      const std::string at = Cat(" [", sc.name, "; schedule: ", Schedule(log), "]");
      CheckTransient(r, *run, at);
      // Run every queued or armed item (each on its CPU).
      r.Expect(run->ledger.Drain(v), "work items never settled", at);
      for (int cpu = 0; cpu < 2; ++cpu) {
        r.Expect(!v.WorkPending(cpu), "I9: pending bit of cpu ", cpu,
                 " left set with no live work item", at);
      }
      std::string where;
      if (ConservationError(v, run->truth, &where) != 0) r.Fail("I1: ", where, at);
      // Liveness: housekeeping CPU 0 dirties again with its tick running; the
      // shepherd must still reach it (queue work, or fold it remotely).
      v.Mod(0, StatKind::kNode, 1, 3, 2);
      bool queued0 = false;
      v.Shepherd([](int) { return false; },
                 [&](int c, uint64_t g) {
                   queued0 = queued0 || c == 0;
                   run->ledger.Queue(c, g);
                 });
      if (InShepherdScope(traits.shepherd_work, v, 0, false)) {
        r.Expect(queued0, "I9: the shepherd no longer queues work on dirty cpu 0", at);
      } else if (traits.folds_remotely) {
        r.Expect(v.MaxAbsDiff(0) == 0, "I9: the remote fold no longer reaches cpu 0", at);
      }
      v.SetLocalWorkQueue(nullptr);
    };
    auto n = Interleaver::Explore(make, check);
    if (!n.ok()) r.Fail("Interleaver::Explore: ", n.status().message(), " [", sc.name, "]");
  }
  return r.Take();
}

}  // namespace isolation::testing
