// SPDX-License-Identifier: GPL-2.0-or-later
// The vmstat kit's checks of the inline writer front end (Vmstat::Writer,
// VmstatWriter in vmstat.h), for every variant: whatever the slot, an update
// through a writer must do exactly what the same update through the virtual
// Vmstat::Mod/Inc/Dec does.  The lock-step check drives two counters of the
// variant with the same seeded schedule, one through each path, and compares
// every observable after every step (every other update through the
// form-specialised VmstatSlotWriter of WithSlotForm); the real-thread checks (vmstat_real.cc)
// and the forced interleavings (vmstat_interleave.cc) run their writers
// through the front end too, so I1 and I7 are checked on it directly.

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "testing/vmstat_common.h"

namespace isolation::testing {

using namespace vmstat_kit;  // NOLINT(build/namespaces): the kit's own helpers
using vmstat::VmstatWriter;

namespace {

// Every observable of `cpu` in `a` and `b`: slots, shared and global
// counters of every item, the dirty flag, the pending bit and the counters
// the writers move.  Returns false (with a violation) at the first
// difference.
bool SameState(Report& r, const Vmstat& a, const Vmstat& b, int cpu, const std::string& at) {
  for (StatKind k : {StatKind::kZone, StatKind::kNode}) {
    const char* kind = k == StatKind::kZone ? "zone" : "node";
    for (int inst = 0; inst < a.num_instances(k); ++inst) {
      for (int item = 0; item < a.num_items(k); ++item) {
        if (a.Diff(cpu, k, inst, item) != b.Diff(cpu, k, inst, item)) {
          r.Fail("cpu ", cpu, " ", kind, " ", inst, " item ", item, ": differential ",
                 b.Diff(cpu, k, inst, item), " through the writer, ", a.Diff(cpu, k, inst, item),
                 " through Vmstat", at);
          return false;
        }
        if (a.SharedRaw(k, inst, item) != b.SharedRaw(k, inst, item)) {
          r.Fail(kind, " ", inst, " item ", item, ": shared ", b.SharedRaw(k, inst, item),
                 " through the writer, ", a.SharedRaw(k, inst, item), " through Vmstat", at);
          return false;
        }
      }
    }
    for (int item = 0; item < a.num_items(k); ++item) {
      if (a.GlobalRaw(k, item) != b.GlobalRaw(k, item)) {
        r.Fail(kind, " item ", item, ": global ", b.GlobalRaw(k, item), " through the writer, ",
               a.GlobalRaw(k, item), " through Vmstat", at);
        return false;
      }
    }
  }
  const CpuCounters ca = a.Counters(cpu), cb = b.Counters(cpu);
  const bool same = a.Dirty(cpu) == b.Dirty(cpu) && a.WorkPending(cpu) == b.WorkPending(cpu) &&
                    ca.threshold_folds == cb.threshold_folds &&
                    ca.local_work_arms == cb.local_work_arms;
  if (!same) {
    r.Fail("cpu ", cpu, ": dirty ", b.Dirty(cpu), "/", a.Dirty(cpu), ", pending ",
           b.WorkPending(cpu), "/", a.WorkPending(cpu), ", threshold folds ", cb.threshold_folds,
           "/", ca.threshold_folds, ", local work arms ", cb.local_work_arms, "/",
           ca.local_work_arms, " (writer/Vmstat)", at);
  }
  return same;
}

}  // namespace

Violations CheckVmstatWriterLockstep(std::string_view variant, int seeds, int steps) {
  Report r("writer front end in lock step with Vmstat's writers", variant);
  for (uint64_t seed = 1; seed <= static_cast<uint64_t>(seeds) && !r.failed(); ++seed) {
    std::mt19937_64 rng(seed);
    const int cpus = 1 + static_cast<int>(rng() % 6);
    const int fixed = seed % 3 == 0 ? static_cast<int>(1 + rng() % 20) : 0;
    VmstatConfig c = SmallConfig(cpus, fixed);
    c.overstep = seed % 5 != 4;
    auto a = MakeOrFail(r, variant, c);  // the virtual path
    auto b = MakeOrFail(r, variant, c);  // the writer front end
    if (a == nullptr || b == nullptr) break;
    WorkLedger la, lb;  // B.local arms its work from the writer
    a->SetLocalWorkQueue(&la);
    b->SetLocalWorkQueue(&lb);
    std::vector<VmstatWriter> writers;
    for (int cpu = 0; cpu < cpus; ++cpu) {
      auto w = b->Writer(cpu);
      if (!w.ok()) {
        r.Fail("Writer(", cpu, "): ", w.status().message());
        return r.Take();
      }
      r.Expect(w->cpu() == cpu, "Writer(", cpu, ").cpu() is ", w->cpu());
      // The fast path tests the dirty flag exactly when the policy's
      // writers mark it (the lock step then compares Dirty()).
      const FoldPolicyTraits& t = b->policy_traits();
      r.Expect(w->marks_dirty() == (t.writers_mark_dirty || t.notify_first_dirty), "Writer(", cpu,
               ").marks_dirty() is ", w->marks_dirty(), " for traits writers_mark_dirty ",
               t.writers_mark_dirty, ", notify_first_dirty ", t.notify_first_dirty);
      writers.push_back(*w);
    }
    Truth truth;
    std::vector<bool> online(static_cast<size_t>(cpus), true);
    int online_count = cpus;
    for (int step = 0; step < steps && !r.failed(); ++step) {
      const std::string at = Cat(" (seed ", seed, ", step ", step, ")");
      const int cpu = static_cast<int>(rng() % static_cast<uint64_t>(cpus));
      const StatKind k = rng() % 2 ? StatKind::kZone : StatKind::kNode;
      const int inst = static_cast<int>(rng() % static_cast<uint64_t>(a->num_instances(k)));
      const int item = static_cast<int>(rng() % static_cast<uint64_t>(a->num_items(k)));
      const int op = static_cast<int>(rng() % 100);
      const bool ts = rng() % 2 == 0;
      VmstatWriter& w = writers[static_cast<size_t>(cpu)];
      const bool up = online[static_cast<size_t>(cpu)];
      if (op < 45) {
        if (!up) continue;  // writers run only on online CPUs
        const int64_t d = static_cast<int64_t>(rng() % 41) - 20 + (rng() % 50 == 0 ? 700 : 0);
        a->Mod(cpu, k, inst, item, d);
        // Odd steps through the form-specialised writer (WithSlotForm).
        step % 2 == 0 ? w.Mod(k, inst, item, d)
                      : w.WithSlotForm([&](auto sw) { sw.Mod(k, inst, item, d); });
        truth.Add(k, inst, item, d);
      } else if (op < 70) {
        if (!up) continue;
        if (rng() % 2 == 0) {
          a->Inc(cpu, k, inst, item);
          step % 2 == 0 ? w.Inc(k, inst, item)
                        : w.WithSlotForm([&](auto sw) { sw.Inc(k, inst, item); });
          truth.Add(k, inst, item, 1);
        } else {
          a->Dec(cpu, k, inst, item);
          step % 2 == 0 ? w.Dec(k, inst, item)
                        : w.WithSlotForm([&](auto sw) { sw.Dec(k, inst, item); });
          truth.Add(k, inst, item, -1);
        }
      } else if (op < 75) {
        a->RefreshCpu(cpu);
        b->RefreshCpu(cpu);
      } else if (op < 80) {
        a->FoldCpuRemote(cpu);
        b->FoldCpuRemote(cpu);
      } else if (op < 85) {
        a->ReturnToUser(cpu, ts);
        b->ReturnToUser(cpu, ts);
      } else if (op < 89) {
        a->QuietVmstat(cpu, ts);
        b->QuietVmstat(cpu, ts);
      } else if (op < 93) {
        // Both shepherds see the same tick states; nothing queued is run
        // (the pending bits are compared instead).
        const uint64_t stopped = rng();
        a->Shepherd([&](int x) { return ((stopped >> x) & 1) != 0; }, [](int, uint64_t) {});
        b->Shepherd([&](int x) { return ((stopped >> x) & 1) != 0; }, [](int, uint64_t) {});
      } else if (op < 96) {
        const int node = static_cast<int>(rng() % 2);
        const bool on = rng() % 2 == 0;
        (void)a->SetPressure(node, on);
        (void)b->SetPressure(node, on);
      } else {
        // Hotplug: the writers made before it stay valid afterwards.
        if (up && online_count > 1) {
          r.Expect(a->CpuOffline(cpu).ok() && b->CpuOffline(cpu).ok(), "CpuOffline(", cpu,
                   ") failed", at);
          online[static_cast<size_t>(cpu)] = false;
          --online_count;
        } else if (!up) {
          r.Expect(a->CpuOnline(cpu).ok() && b->CpuOnline(cpu).ok(), "CpuOnline(", cpu, ") failed",
                   at);
          online[static_cast<size_t>(cpu)] = true;
          ++online_count;
        }
      }
      if (!SameState(r, *a, *b, cpu, at)) break;
      if (step % 64 == 0 || step + 1 == steps) {
        std::string where;
        if (ConservationError(*b, truth, &where) != 0) r.Fail("I1 through the writer: ", where, at);
      }
    }
  }
  return r.Take();
}

}  // namespace isolation::testing
