// SPDX-License-Identifier: GPL-2.0-or-later
// -----------------------------------------------------------------------------
// vmstat/internal/forms.h
// -----------------------------------------------------------------------------
//
// Internal: no API stability; not for use outside the library and the inline
// writer (vmstat/writer.h), which is why it is installed at all: the
// inline writer's slot forms, each a type whose fast path VmstatWriter
// inlines into its callers' code, and their table.
//
// Adding an inline form (for a slot representation of lib/vmstat/):
//   1. its cell in vmstat/internal/cells.h, unless an existing one fits;
//   2. its form type below: `using Cell`, and
//        template <typename Writer>
//        static bool TryFast(const Writer& w, StatKind kind, int instance,
//                            int item, int64_t delta, int64_t t, int mode);
//      the update of w's cell (kind, instance, item) within threshold `t`
//      (w.CellAt / w.BlockAt; w is the VmstatWriter, whose friend every
//      form type is), or false with nothing stored (the virtual Vmstat path
//      then does the whole update); `mode` is 0 for Mod, +1 / -1 for Inc /
//      Dec (the overstep of a fold).  What it needs of w only on a rare
//      path (w.vm_, w.cpu_) it reads there, not before: the loads would
//      otherwise be on the fast path.  A fold it does out of line is its
//      own static function, declared here and defined in its slot's file
//      (lib/vmstat/slot_<name>.cc; every form type is also a friend of
//      Vmstat);
//   3. its row X(kName, NameForm) in ISOLATION_VMSTAT_INLINE_WRITER_FORMS;
//   4. the slot representation names it: its kWriterForm (slot_impl.h).
// Nothing else: the enumerator, VmstatWriter's dispatch (TryFast,
// WithSlotForm), the block type of Vmstat::Writer and the friendships come
// from the row.
//
// Kernel counterpart: __mod_zone_page_state / mod_zone_state
// (mm/vmstat.c) as compiled into their callers, per representation.
//
// Thread-safety: as Vmstat's writers (vmstat/writer.h): a fast path runs in
// CPU cpu's context only.

#ifndef ISOLATION_VMSTAT_INTERNAL_FORMS_H_
#define ISOLATION_VMSTAT_INTERNAL_FORMS_H_

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "isolation/core/contract.h"
#include "isolation/core/interleave.h"
#include "isolation/vmstat/internal/cells.h"
#include "isolation/vmstat/items.h"

namespace isolation::vmstat {

class Vmstat;

namespace internal {

// The table of inline writer forms, one row per form: X(enumerator, form
// type).  It makes the WriterForm enumerators, FormOf, the writer's
// dispatch cases (vmstat/writer.h: TryFast, WithSlotForm), the block type
// of Vmstat::Writer and the form types' friendship with Vmstat and
// VmstatWriter.
//   kOwnerS8        s8-owner: owner load + store
//   kSharedS32Cas   s32-atomic: relaxed CAS
//   kWatermark      s64-watermark: owner store of the running sum
//   kSharedS32Xadd  s32-xadd: locked add, xchg on the rare fold
//   kScaledS32      s32-scaled: locked add whose overflow flag is the threshold
#define ISOLATION_VMSTAT_INLINE_WRITER_FORMS(X) \
  X(kOwnerS8, OwnerS8Form)                      \
  X(kSharedS32Cas, SharedS32CasForm)            \
  X(kWatermark, WatermarkForm)                  \
  X(kSharedS32Xadd, SharedS32XaddForm)          \
  X(kScaledS32, ScaledS32Form)

#define ISOLATION_VMSTAT_FORM_DECLARE_(form, Form) struct Form;
ISOLATION_VMSTAT_INLINE_WRITER_FORMS(ISOLATION_VMSTAT_FORM_DECLARE_)
#undef ISOLATION_VMSTAT_FORM_DECLARE_

// Which inline fast path a writer runs, fixed by the slot at Create:
// kVirtual (none: every update is the virtual Vmstat::Mod/Inc/Dec) or a row
// of the table above.
#define ISOLATION_VMSTAT_FORM_ENUMERATOR_(form, Form) form,
enum class WriterForm : uint8_t {
  kVirtual,
  ISOLATION_VMSTAT_INLINE_WRITER_FORMS(ISOLATION_VMSTAT_FORM_ENUMERATOR_)
};
#undef ISOLATION_VMSTAT_FORM_ENUMERATOR_

// The form type of each enumerator but kVirtual: FormOf<F>::type.
template <WriterForm F>
struct FormOf;
#define ISOLATION_VMSTAT_FORM_OF_(form, Form) \
  template <>                                 \
  struct FormOf<WriterForm::form> {           \
    using type = Form;                        \
  };
ISOLATION_VMSTAT_INLINE_WRITER_FORMS(ISOLATION_VMSTAT_FORM_OF_)
#undef ISOLATION_VMSTAT_FORM_OF_

// |v| <= t as one unsigned compare (t >= 0).
inline bool Within(int64_t v, int64_t t) {
  return static_cast<uint64_t>(v) + static_cast<uint64_t>(t) <= 2 * static_cast<uint64_t>(t);
}

// s8-owner (A0, A1, B, B.local).
struct OwnerS8Form {
  using Cell = OwnerS8Cell;
  template <typename Writer>
  static bool TryFast(const Writer& w, StatKind kind, int instance, int item, int64_t delta,
                      int64_t t, int mode) {
    // Owner-only slot: a relaxed load + store is the unlocked
    // this_cpu_cmpxchg (no other context writes it).
    auto& c = w.template CellAt<Cell>(kind, instance, item);
    if (mode != 0) return TryStep(c, delta, t);
    const int64_t x = delta + LoadS8ZeroExtended(c.d);
    if (!Within(x, t)) return false;
    c.d.store(static_cast<int8_t>(x), std::memory_order_relaxed);
    return true;
  }

  // Inc / Dec (delta = mode = +1 / -1) in __inc_zone_state's order: the
  // step is stored, then tested, in bytes.  Why not Mod's order (test, then
  // store): on an Intel Xeon guest (family 6 model 207) the next update's
  // load got the stored byte without waiting for store forwarding only in
  // this order (docs/history/2026-12-08-perf-intel-207.md).  A step beyond
  // the threshold is undone before the virtual path does the whole update,
  // so what that path sees, and the condition that sends an update there
  // (|d + step| > t), are Mod's.  Between the store and the undo a remote
  // reader may see d + step, the value the update is about to give; the
  // kernel's own __inc_zone_state leaves it there until its fold.
  // One unsigned byte compare tests |v| <= t: |d| <= t <= kThresholdCap
  // (125), so v = d +- 1 is in [-126, 126], and v + t wraps below zero
  // only to 256 + v + t >= 130 + t > 2t.
  static bool TryStep(Cell& c, int64_t step, int64_t t) {
    const auto old = static_cast<uint8_t>(c.d.load(std::memory_order_relaxed));
    const auto v = static_cast<uint8_t>(old + static_cast<uint8_t>(step));
    c.d.store(static_cast<int8_t>(v), std::memory_order_relaxed);
    const auto tb = static_cast<uint8_t>(t);
    if (__builtin_expect(static_cast<uint8_t>(v + tb) > static_cast<uint8_t>(2 * tb), 0)) {
      c.d.store(static_cast<int8_t>(old), std::memory_order_relaxed);
      return false;
    }
    return true;
  }

  // The owner's load of its s8 differential, zero-extended from memory and
  // sign-extended in a register.  Same value as a plain load; the point is
  // the instruction: updates of one slot form a load -> add -> store chain
  // through memory, and recent x86 cores forward a store to the next load
  // of the same address without waiting for it (memory renaming) for a
  // zero-extending byte load (movzbl) but not for a sign-extending one
  // (movsbq), which waits for store-to-load forwarding, ~5 cycles per
  // update.  The empty asm keeps the compiler from folding the two
  // extensions back into one movsbq; it emits no instruction.  Measured
  // (docs/history/2026-12-02-perf-intel.md): the s8-owner writer's Mod on an Intel
  // Xeon KVM guest, 2.0 -> 0.9 ns.
  static int64_t LoadS8ZeroExtended(const std::atomic<int8_t>& d) {
    auto raw = static_cast<uint8_t>(d.load(std::memory_order_relaxed));
    asm("" : "+r"(raw));
    return static_cast<int8_t>(raw);
  }
};

// s32-atomic (C): load + relaxed CAS.
struct SharedS32CasForm {
  using Cell = S32Cell;
  template <typename Writer>
  static bool TryFast(const Writer& w, StatKind kind, int instance, int item, int64_t delta,
                      int64_t t, int mode) {
    (void)mode;
    auto& c = w.template CellAt<Cell>(kind, instance, item);
    int32_t o = c.d.load(std::memory_order_relaxed);
    for (;;) {
      const int64_t n = delta + o;
      if (!Within(n, t)) return false;
      ISOLATION_INTERLEAVE_POINT("vmstat.c_writer.before_cas");
      // Relaxed CAS: atomic against the shepherd's xchg (the slot's
      // single modification order); a failure reloads `o`.
      if (c.d.compare_exchange_weak(o, static_cast<int32_t>(n), std::memory_order_relaxed)) break;
    }
    return true;
  }
};

// s64-watermark (D): owner load + store of the running sum, `folded` only
// read.
struct WatermarkForm {
  using Cell = WatermarkCell;
  template <typename Writer>
  static bool TryFast(const Writer& w, StatKind kind, int instance, int item, int64_t delta,
                      int64_t t, int mode) {
    (void)mode;
    auto& c = w.template CellAt<Cell>(kind, instance, item);
    int64_t sum = c.slot.load(std::memory_order_relaxed);
    // The loaded sum in a register of its own (no instruction): otherwise
    // GCC may fold the add into a three-operand lea with the caller's
    // delta, on the load -> store chain (docs/history/2026-12-08-perf-intel-207.md).
    asm("" : "+r"(sum));
    const int64_t s = WrapAdd(sum, delta);
    if (!Within(WrapSub(s, c.folded.load(std::memory_order_relaxed)), t)) return false;
    c.slot.store(s, std::memory_order_relaxed);  // owner-only word
    return true;
  }
};

// s32-xadd (C.xadd, ours): one relaxed locked add; past the threshold an
// xchg fold out of line.
struct SharedS32XaddForm {
  using Cell = S32Cell;
  template <typename Writer>
  static bool TryFast(const Writer& w, StatKind kind, int instance, int item, int64_t delta,
                      int64_t t, int mode) {
    // A delta beyond the threshold folds in any case: the virtual path
    // (its CAS).  So the slot never holds more than 2t + t/2 and the s32
    // cannot overflow.
    if (!Within(delta, t)) return false;
    auto& c = w.template CellAt<Cell>(kind, instance, item);
    // Relaxed locked add (lock xadd): atomic against the shepherd's xchg
    // (one modification order of the slot) and nothing else is ordered
    // by it, as the CAS it replaces.  The add is done: past the threshold
    // the fold follows out of line, never the virtual path.
    const int64_t n = delta + c.d.fetch_add(static_cast<int32_t>(delta), std::memory_order_relaxed);
    if (__builtin_expect(!Within(n, t), 0)) Fold(*w.vm_, w.cpu_, kind, instance, item, c.d, mode);
    return true;
  }

  // The fold after a locked add left `slot` (cpu's cell of kind / instance
  // / item) past the threshold: exchange it for the overstep (mode 0: Mod,
  // +1: Inc, -1: Dec) and add what it held to the shared side.  Out of line
  // (lib/vmstat/slot_s32_xadd.cc); shared by the slot code and the writer.
  static void Fold(Vmstat& vm, int cpu, StatKind kind, int instance, int item,
                   std::atomic<int32_t>& slot, int mode);
};

// s32-scaled (C.addo, ours): a load of the zone's unit (its CPU's own
// word), one relaxed locked add whose overflow flag is the threshold test;
// on overflow a CAS fold out of line.
struct ScaledS32Form {
  using Cell = ScaledS32Cell;
  template <typename Writer>
  static bool TryFast(const Writer& w, StatKind kind, int instance, int item, int64_t delta,
                      int64_t t, int mode) {
    // C.addo: the block's unit, written by this CPU only.  Scaled for
    // another threshold than the one now published (a refresh happened,
    // or nothing is scaled yet), or a delta beyond the threshold (it
    // folds in any case): the virtual path rescales / folds by CAS.
    auto& b = w.template BlockAt<Cell>(kind, instance);
    const uint64_t unit = b.scale.load(std::memory_order_relaxed);
    if ((unit >> 32) != static_cast<uint64_t>(t) || !Within(delta, t)) return false;
    // One locked add; its overflow flag is the threshold test.  The add
    // is done: an overflow folds out of line, never the virtual path.
    auto& c = b.c[static_cast<size_t>(item)];
    ISOLATION_CONTRACT(
        static_cast<uint32_t>(c.w.load(std::memory_order_relaxed)) == static_cast<uint32_t>(unit),
        "vmstat C.addo writer: cpu %d item %d is not in its zone's unit %d", w.cpu_, item,
        static_cast<uint32_t>(unit));
    if (__builtin_expect(
            ScaledAddOverflows(c.w, delta * static_cast<int64_t>(static_cast<uint32_t>(unit))),
            0)) {
      Fold(*w.vm_, w.cpu_, kind, instance, item, c.w, mode);
    }
    return true;
  }

  // The fold after a locked add overflowed `word` (cpu's item word of kind
  // / instance / item): CAS it, k kept, to the overstep and add the
  // differential it held to the shared side (nothing, if a remote fold took
  // it first).  Out of line (lib/vmstat/slot_s32_scaled.cc); shared by the
  // slot code and the writer.
  static void Fold(Vmstat& vm, int cpu, StatKind kind, int instance, int item,
                   std::atomic<uint64_t>& word, int mode);
};

}  // namespace internal

}  // namespace isolation::vmstat

#endif  // ISOLATION_VMSTAT_INTERNAL_FORMS_H_
