// SPDX-License-Identifier: GPL-2.0-or-later
// The s64-watermark slot representation (vmstat/slot.h): a 64-bit running
// sum stored by its owner plus a `folded` word advanced by CAS, and the
// counters instantiated over it (slot_impl.h).

#include <atomic>
#include <cstdint>
#include <cstdlib>

#include "isolation/core/interleave.h"
#include "vmstat/builtin.h"
#include "vmstat/slot_impl.h"

namespace isolation::vmstat::internal {

struct S64WatermarkRep {
  using Cell = WatermarkCell;
  static constexpr WriterForm kWriterForm = WriterForm::kWatermark;
  static constexpr SlotTraits kTraits{
      .remote_foldable = true, .irqs_off_writers_plain = false, .bits = 64};

  static int64_t Diff(const Cell& c) {
    return internal::WrapSub(c.slot.load(std::memory_order_relaxed),
                             c.folded.load(std::memory_order_relaxed));
  }

  static int64_t Take(Cell& c) {
    const int64_t s = c.slot.load(std::memory_order_relaxed);
    int64_t f = c.folded.load(std::memory_order_relaxed);
    while (s != f) {
      // Relaxed CAS on `folded`: the winner owns the delta s - f.
      if (c.folded.compare_exchange_weak(f, s, std::memory_order_relaxed))
        return internal::WrapSub(s, f);
    }
    return 0;
  }

  // mod_zone_state() / mod_node_state() over the running sum.
  template <typename Vm>
  static void ModState(Vm& vm, int cpu, StatKind kind, int instance, int item, int64_t delta,
                       int mode) {
    auto& c = vm.CellOf(cpu, kind, instance, item);
    // D: the owner advances its running sum with a plain store; only a
    // fold touches `folded`, by CAS, so a remote fold can never be lost.
    const int64_t s = internal::WrapAdd(c.slot.load(std::memory_order_relaxed), delta);
    c.slot.store(s, std::memory_order_relaxed);
    int64_t f = c.folded.load(std::memory_order_relaxed);
    for (;;) {
      const int t = vm.ThresholdRaw(cpu, kind, instance);  // hot path: unchecked (writer contract)
      const int64_t d = internal::WrapSub(s, f);
      if (std::abs(d) <= t) break;
      const int64_t os = mode * vm.Overstep(t);
      const int64_t target = internal::WrapAdd(s, os);  // leaves slot - folded == -os
      ISOLATION_INTERLEAVE_POINT("vmstat.d_writer.before_folded_cas");
      // Relaxed: conservation only needs the single modification order
      // of `folded`; the winner alone adds target - f.
      if (c.folded.compare_exchange_weak(f, target, std::memory_order_relaxed)) {
        ISOLATION_INTERLEAVE_POINT("vmstat.writer.mid_fold");
        vm.AddShared(kind, instance, item, internal::WrapSub(target, f));
        vm.CountFold(cpu);
        break;
      }
    }
    vm.AfterWrite(cpu);
  }
};

SlotEntry S64WatermarkSlot() {
  return SlotEntry{
      "s64-watermark",
      "OURS: 64-bit running sum stored by its owner plus a folded word advanced by CAS by any "
      "folder; D",
      false, SlotFactory{S64WatermarkRep::kTraits, &MakeVmstat<S64WatermarkRep>}};
}

}  // namespace isolation::vmstat::internal
