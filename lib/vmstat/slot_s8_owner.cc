// SPDX-License-Identifier: GPL-2.0-or-later
// The s8-owner slot representation (vmstat/slot.h): an s8 differential
// written only by its CPU, and the counters instantiated over it
// (slot_impl.h).

#include <atomic>
#include <cstdint>
#include <cstdlib>

#include "isolation/core/interleave.h"
#include "vmstat/builtin.h"
#include "vmstat/slot_impl.h"

namespace isolation::vmstat::internal {

struct S8OwnerRep {
  using Cell = OwnerS8Cell;
  static constexpr WriterForm kWriterForm = WriterForm::kOwnerS8;
  static constexpr SlotTraits kTraits{
      .remote_foldable = false, .irqs_off_writers_plain = true, .bits = 8};

  static int64_t Diff(const Cell& c) { return c.d.load(std::memory_order_relaxed); }

  static int64_t Take(Cell& c) {
    // Owner (or dead CPU) only: this_cpu_xchg without a lock prefix.
    const int64_t v = c.d.load(std::memory_order_relaxed);
    if (v != 0) c.d.store(0, std::memory_order_relaxed);
    return v;
  }

  // mod_zone_state() / mod_node_state().
  template <typename Vm>
  static void ModState(Vm& vm, int cpu, StatKind kind, int instance, int item, int64_t delta,
                       int mode) {
    vm.ModWord(vm.CellOf(cpu, kind, instance, item).d, cpu, kind, instance, item, delta, mode,
               [](std::atomic<int8_t>& d, int8_t&, int8_t n) {
                 // this_cpu_try_cmpxchg without a lock prefix: atomic against the
                 // owner's own interrupts only.  No other context writes an A/B
                 // slot and the drivers never nest two contexts of one CPU, so the
                 // single-writer store is that compare-and-swap (always succeeds).
                 d.store(n, std::memory_order_relaxed);
                 return true;
               });
  }

  // __mod_zone_page_state(): owner-only load + store.
  template <typename Vm>
  static void PlainMod(Vm& vm, int cpu, StatKind kind, int instance, int item, int64_t delta) {
    auto& c = vm.CellOf(cpu, kind, instance, item);
    int64_t x = delta + c.d.load(std::memory_order_relaxed);
    const int t = vm.ThresholdRaw(cpu, kind, instance);  // hot path: unchecked (writer contract)
    if (std::abs(x) > t) {
      vm.AddShared(kind, instance, item, x);  // shared side before the slot (I2)
      ISOLATION_INTERLEAVE_POINT("vmstat.writer.mid_fold");
      vm.CountFold(cpu);
      x = 0;
    }
    c.d.store(static_cast<int8_t>(x), std::memory_order_relaxed);
    vm.AfterWrite(cpu);
  }

  // __inc_zone_state() / __dec_zone_state(): the overstep trick.
  template <typename Vm>
  static void PlainStep(Vm& vm, int cpu, StatKind kind, int instance, int item, int dir) {
    auto& c = vm.CellOf(cpu, kind, instance, item);
    const int v = c.d.load(std::memory_order_relaxed) + dir;
    const int t = vm.ThresholdRaw(cpu, kind, instance);  // hot path: unchecked (writer contract)
    if (dir * v > t) {
      const int overstep = vm.Overstep(t);
      vm.AddShared(kind, instance, item, v + dir * overstep);
      ISOLATION_INTERLEAVE_POINT("vmstat.writer.mid_fold");
      vm.CountFold(cpu);
      c.d.store(static_cast<int8_t>(-dir * overstep), std::memory_order_relaxed);
    } else {
      c.d.store(static_cast<int8_t>(v), std::memory_order_relaxed);
    }
    vm.AfterWrite(cpu);
  }
};

SlotEntry S8OwnerSlot() {
  return SlotEntry{"s8-owner",
                   "s8 per-CPU differential written only by its CPU (relaxed load + store, the "
                   "analogue of the unlocked this_cpu_cmpxchg); A0, A1, B, B.local",
                   false, SlotFactory{S8OwnerRep::kTraits, &MakeVmstat<S8OwnerRep>}};
}

}  // namespace isolation::vmstat::internal
