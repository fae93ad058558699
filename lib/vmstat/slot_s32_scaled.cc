// SPDX-License-Identifier: GPL-2.0-or-later
// The s32-scaled slot representation (vmstat/slot.h): the s32 differential
// times a per-threshold unit, so that one locked add's overflow flag is the
// threshold test, and the counters instantiated over it (slot_impl.h); the
// unit arithmetic is internal::Scaled* in vmstat/internal/cells.h, the
// writer's fast path internal::ScaledS32Form in vmstat/internal/forms.h,
// whose out-of-line fold is defined here.

#include <atomic>
#include <cstdint>
#include <cstdlib>

#include "isolation/core/interleave.h"
#include "isolation/vmstat/internal/forms.h"
#include "vmstat/builtin.h"
#include "vmstat/slot_impl.h"

namespace isolation::vmstat::internal {

struct S32ScaledRep {
  using Cell = ScaledS32Cell;
  static constexpr WriterForm kWriterForm = WriterForm::kScaledS32;
  static constexpr SlotTraits kTraits{
      .remote_foldable = true, .irqs_off_writers_plain = false, .bits = 32};

  static int64_t Diff(const Cell& c) { return ScaledDecode(c.w.load(std::memory_order_relaxed)); }

  static int64_t Take(Cell& c) {
    // CAS, keeping the word's unit (only the owner changes it).
    uint64_t w = c.w.load(std::memory_order_relaxed);
    for (;;) {
      const int64_t x = ScaledDecode(w);
      if (x == 0) return 0;
      ISOLATION_INTERLEAVE_POINT("vmstat.addo_fold.before_cas");
      // Relaxed CAS: atomic against the owner's locked add and CAS.
      if (c.w.compare_exchange_weak(w, ScaledEncode(0, static_cast<uint32_t>(w)),
                                    std::memory_order_relaxed)) {
        return x;
      }
    }
  }

  // mod_zone_state() over the scaled word: the locked add when the block is
  // in the published threshold's unit; otherwise (a delta beyond the
  // threshold, or a block not rescaled yet) C's CAS loop, decoding with the
  // word's own unit and encoding in the unit of the threshold now published,
  // then a rescale of the block if its fast path is not on that unit.
  template <typename Vm>
  static void ModState(Vm& vm, int cpu, StatKind kind, int instance, int item, int64_t delta,
                       int mode) {
    const int t = vm.ThresholdRaw(cpu, kind, instance);  // hot path: unchecked (writer contract)
    auto& b = vm.BlockOf(cpu, kind, instance);
    auto& c = b.c[static_cast<size_t>(item)];
    // The block is in t's unit and the delta within t: VmstatWriter's fast
    // path (one locked add, its overflow flag the threshold test).
    const uint64_t unit = b.scale.load(std::memory_order_relaxed);  // this CPU's own word
    if ((unit >> 32) == static_cast<uint64_t>(t) && std::abs(delta) <= t) {
      if (ScaledAddOverflows(c.w, delta * static_cast<int64_t>(static_cast<uint32_t>(unit)))) {
        ScaledS32Form::Fold(vm, cpu, kind, instance, item, c.w, mode);
      }
      vm.AfterWrite(cpu);
      return;
    }
    const uint32_t k = ScaledUnit(t);
    uint64_t w = c.w.load(std::memory_order_relaxed);
    int64_t z;
    for (;;) {
      z = 0;
      int64_t n = delta + ScaledDecode(w);
      if (std::abs(n) > t) {
        const int64_t os = mode * vm.Overstep(t);
        z = n + os;
        n = -os;
      }
      ISOLATION_INTERLEAVE_POINT("vmstat.c_writer.before_cas");
      // Relaxed CAS: atomic against the shepherd's CAS.  |n| <= t: n fits
      // t's unit (t = 0: n = 0).
      if (c.w.compare_exchange_weak(w, ScaledEncode(n, k), std::memory_order_relaxed)) break;
    }
    if (z != 0) {
      ISOLATION_INTERLEAVE_POINT("vmstat.writer.mid_fold");  // slot changed, shared not yet (I2)
      vm.AddShared(kind, instance, item, z);
      vm.CountFold(cpu);
    }
    if ((b.scale.load(std::memory_order_relaxed) >> 32) != static_cast<uint64_t>(t)) {
      Rescale(vm, cpu, kind, instance, t);
    }
    vm.AfterWrite(cpu);
  }

  // C.addo's unit follows the published threshold t, item by item: the
  // owner re-encodes every item of the block whose differential t holds (a
  // relaxed CAS each, keeping it; a folder may CAS it meanwhile) and, once
  // all of them are in t's unit, publishes the unit to its own fast path.
  // An item t no longer holds (a threshold drop) keeps its old unit -- each
  // word carries its own, so it still decodes -- until its own next update
  // folds it, as the kernel's would; until then every update of the block
  // takes this slow path.
  template <typename Vm>
  static void Rescale(Vm& vm, int cpu, StatKind kind, int instance, int t) {
    auto& b = vm.BlockOf(cpu, kind, instance);
    const uint32_t k = ScaledUnit(t);
    bool all_scaled = k != 0;
    for (int item = 0; item < vm.num_items(kind) && k != 0; ++item) {
      auto& c = b.c[static_cast<size_t>(item)];
      uint64_t w = c.w.load(std::memory_order_relaxed);
      for (;;) {
        const int64_t x = ScaledDecode(w);
        if (std::abs(x) > t) {
          all_scaled = false;
          break;
        }
        const uint64_t want = ScaledEncode(x, k);
        if (w == want) break;
        // (a point only where a folder has something to race for)
        if (x != 0) ISOLATION_INTERLEAVE_POINT("vmstat.addo_rescale.before_cas");
        // Relaxed CAS: atomic against the folders' CAS.
        if (c.w.compare_exchange_weak(w, want, std::memory_order_relaxed)) break;
      }
    }
    // Relaxed: read only by this CPU's own fast path (program order).
    b.scale.store(all_scaled ? (uint64_t{k} | static_cast<uint64_t>(t) << 32) : kScaledNoFastPath,
                  std::memory_order_relaxed);
  }
};

// C.addo's fold (no kernel counterpart; the shape of mod_zone_state's fold):
// the locked add overflowed, so the word holds the wrapped s32 of a
// differential past the threshold -- unless a remote fold took it in between
// (then it holds whatever came after, within the threshold: nothing to do).
// CAS, not xchg: k, the word's low half, must survive a concurrent fold's CAS.
void ScaledS32Form::Fold(Vmstat& vm, int cpu, StatKind kind, int instance, int item,
                         std::atomic<uint64_t>& word, int mode) {
  ISOLATION_INTERLEAVE_POINT("vmstat.addo_writer.before_cas");  // added, not yet taken
  uint64_t w = word.load(std::memory_order_relaxed);
  int64_t taken = 0;
  for (;;) {
    const uint32_t k = static_cast<uint32_t>(w);
    const int t = ScaledThresholdOf(k);  // the threshold the word is scaled for
    const int64_t x = ScaledDecode(w);
    if (std::abs(x) <= t) {
      taken = 0;
      break;
    }
    const int64_t overstep = mode * vm.Overstep(t);
    taken = x + overstep;
    // Relaxed CAS: atomic against the folders' CAS; orders nothing else.
    if (word.compare_exchange_weak(w, ScaledEncode(-overstep, k), std::memory_order_relaxed)) break;
  }
  if (taken != 0) {
    ISOLATION_INTERLEAVE_POINT("vmstat.writer.mid_fold");  // slot changed, shared not yet (I2)
    vm.AddShared(kind, instance, item, taken);
    OwnerCount(vm.State(cpu).threshold_folds);
  }
}

SlotEntry S32ScaledSlot() {
  return SlotEntry{
      "s32-scaled",
      "OURS: s32 differential times a per-threshold unit, so that one relaxed locked add's "
      "overflow "
      "flag is the threshold test (lock add + jo on x86); CAS folds from any CPU; C.addo",
      false, SlotFactory{S32ScaledRep::kTraits, &MakeVmstat<S32ScaledRep>}};
}

}  // namespace isolation::vmstat::internal
