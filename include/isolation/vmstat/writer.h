// SPDX-License-Identifier: GPL-2.0-or-later
// -----------------------------------------------------------------------------
// vmstat/writer.h
// -----------------------------------------------------------------------------
//
// VmstatWriter and VmstatSlotWriter, the inline writer front end of a Vmstat
// (made by Vmstat::Writer(cpu)): one CPU's updates with the per-CPU pointers
// resolved once and the slot's update inline in the caller.  vmstat.h
// includes this header, so either may be included; the details are at the
// class below.
//
// Kernel counterpart: mod_zone_page_state / __mod_zone_page_state and
// inc_ / dec_*_page_state (mm/vmstat.c) as compiled into their callers.
//
// Thread-safety: as Vmstat's writers: only CPU cpu()'s context updates
// through a writer; it must not outlive its Vmstat.

#ifndef ISOLATION_VMSTAT_WRITER_H_
#define ISOLATION_VMSTAT_WRITER_H_

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "isolation/core/contract.h"
#include "isolation/core/interleave.h"
#include "isolation/vmstat/internal/cells.h"
#include "isolation/vmstat/internal/forms.h"
#include "isolation/vmstat/vmstat.h"

namespace isolation::vmstat {

// ---- the inline writer front end ------------------------------------------
//
// What it models: mod_zone_page_state / inc_ / dec_*_page_state (and the node
// twins) as the kernel compiles them into their callers: the per-CPU pointers
// (this_cpu_ptr(zone->per_cpu_zonestats), its stat_threshold) are resolved
// once, at Vmstat::Writer(cpu), not recomputed per update, and the update is
// inline in the caller with no virtual call.  Its fast path is
// __mod_zone_page_state's shape: load the differential, add, compare the
// magnitude with the CPU's threshold (a relaxed byte load: the kernel's
// this_cpu_read(stat_threshold)), store.  Per slot representation (fixed at
// Create; in VmstatWriter's Mod/Inc/Dec a predictable branch on a member
// selects it per update, and WithSlotForm resolves it once for a batch,
// handing a VmstatSlotWriter<form> whose updates have no such test):
//   s8-owner       owner load + store of the s8 (A0, A1, B, B.local);
//   s32-atomic     load + relaxed CAS (C; a failed CAS retries);
//   s32-xadd       one relaxed locked add; past the threshold an xchg fold
//                  out of line (C.xadd, ours);
//   s32-scaled     a load of the zone's unit (its CPU's own word), one
//                  relaxed locked add whose overflow flag is the threshold
//                  test; on overflow a CAS fold out of line (C.addo, ours);
//   s64-watermark  owner load + store of the running sum, the `folded` word
//                  only read (D).
// The fold policy is consulted once, at Vmstat::Writer: for a policy whose
// writers mark the CPU dirty (FoldPolicyTraits::writers_mark_dirty, B and
// B.local), every fast path ends with one relaxed load of the CPU's
// vmstat_dirty flag and a never-taken branch; for the others (A0, A1, C, D,
// as mainline's __mod_zone_page_state) the fast path has no such test.  The
// writer's dispatch selects among the (form, marks dirty) pairs; WithSlotForm
// resolves both once per batch.  Out of line, through the
// virtual Vmstat path (which redoes the update from the slot as it is then, so nothing is counted
// twice: the fast path stores nothing before deciding):
//   - an update that would pass the threshold (the fold to the shared side,
//     the overstep of Inc/Dec), and a C CAS that lost to a remote fold
//     (s32-xadd and s32-scaled: only a delta beyond the threshold, and
//     s32-scaled a zone not in the published threshold's unit; their add
//     is done before they compare, so their fold goes out of line to
//     their form's Fold, never to the virtual path),
//   - a clean->dirty transition (B: the flag store; B.local: arming its work).
// Slots without an inline form -- the s32-plain negative control, and a
// Vmstat subclass of your own that does not call SetWriterLayout -- forward
// every update to the virtual Mod/Inc/Dec (inline_fast_path() says which).
// The IrqsOff forms stay on Vmstat.
//
// Kernel counterpart: mod_zone_state / __mod_zone_page_state and
// __inc_zone_state / __dec_zone_state (mm/vmstat.c), the node twins.
//
// Thread-safety: as Vmstat's writers: only CPU cpu()'s context updates
// through it (two contexts of one CPU never at once).  A copy is the same
// writer.  It holds pointers into its Vmstat: it must not outlive it.  It
// stays valid across hotplug and threshold refreshes (thresholds are loaded
// per update, never cached), but like Vmstat::Mod it must not be used while
// its CPU is offline.
//
// Memory ordering: as vmstat.h states for Vmstat: every access relaxed; the
// single modification order of each slot (C: the CAS; D: `folded` advanced
// only by CAS, `slot` written only by its owner) is what conserves the
// counts.  D reads `folded` before storing the new running sum: a remote
// fold in between only makes the real differential smaller than the one
// compared (nothing lost: the sum is the owner's alone).
//
// Contracts: Mod/Inc/Dec REQUIRE what Vmstat's writers do (kind, instance
// and item in range, |delta| <= kMaxZonePages), checked with
// ISOLATION_CONTRACT in the *caller's* build where contract checks are on
// (debug, sanitizer, ISOLATION_HARDENED): the code is inline.
class VmstatWriter {
 public:
  int cpu() const { return cpu_; }
  // false: every update is the virtual Vmstat path (see above).
  bool inline_fast_path() const { return form_ != internal::WriterForm::kVirtual; }
  internal::WriterForm form() const { return form_; }
  // Whether an update also marks the CPU's vmstat_dirty flag (the policy's
  // writers_mark_dirty or notify_first_dirty).
  bool marks_dirty() const { return marks_dirty_; }
  const Vmstat& vm() const { return *vm_; }

  // mod_zone_page_state / mod_node_page_state on cpu().
  void Mod(StatKind kind, int instance, int item, int64_t delta) {
    ContractMod(kind, instance, item, delta);
    if (__builtin_expect(!TryFast(kind, instance, item, delta, 0), 0))
      vm_->Mod(cpu_, kind, instance, item, delta);
  }
  // inc_ / dec_*_page_state (overstep on the out-of-line fold).
  void Inc(StatKind kind, int instance, int item) {
    vm_->ContractSlot("Writer Inc", cpu_, kind, instance, item);
    if (__builtin_expect(!TryFast(kind, instance, item, 1, 1), 0))
      vm_->Inc(cpu_, kind, instance, item);
  }
  void Dec(StatKind kind, int instance, int item) {
    vm_->ContractSlot("Writer Dec", cpu_, kind, instance, item);
    if (__builtin_expect(!TryFast(kind, instance, item, -1, -1), 0))
      vm_->Dec(cpu_, kind, instance, item);
  }

  // Calls fn(VmstatSlotWriter<form(), marks_dirty()>) and returns its
  // result: the slot form resolved once for a whole batch of updates (one
  // switch), so the loop inside `fn` -- a generic lambda, instantiated per
  // form -- has no test of the form at all:
  //   writer.WithSlotForm([&](auto w) { for (...) w.Inc(StatKind::kNode, 0, item); });
  template <typename Fn>
  decltype(auto) WithSlotForm(Fn&& fn) const;

 private:
  friend class Vmstat;
  template <internal::WriterForm F, bool kMarksDirty>
  friend class VmstatSlotWriter;
  // The forms' fast paths (internal/forms.h) read the members below.
#define ISOLATION_VMSTAT_FORM_FRIEND_(form, Form) friend struct internal::Form;
  ISOLATION_VMSTAT_INLINE_WRITER_FORMS(ISOLATION_VMSTAT_FORM_FRIEND_)
#undef ISOLATION_VMSTAT_FORM_FRIEND_

  // `dirty`: the CPU's vmstat_dirty flag when `marks_dirty`; else a flag
  // that is always set, which only a VmstatSlotWriter<form, true> made from
  // this writer reads.
  VmstatWriter(Vmstat* vm, int cpu, internal::WriterForm form, bool marks_dirty, void* zone_block,
               void* node_block, const std::atomic<int8_t>* zone_threshold,
               const std::atomic<int8_t>* node_threshold, const std::atomic<bool>* dirty)
      : vm_(vm),
        blocks_{zone_block, node_block},
        threshold_{zone_threshold, node_threshold},
        dirty_(dirty),
        cpu_(cpu),
        form_(form),
        marks_dirty_(marks_dirty),
        dispatch_(Dispatch(form, marks_dirty)) {}

  // The key TryFast and WithSlotForm switch on: one (form, marks dirty) pair.
  static constexpr uint8_t Dispatch(internal::WriterForm form, bool marks_dirty) {
    return static_cast<uint8_t>(static_cast<int>(form) * 2 + (marks_dirty ? 1 : 0));
  }
  // TryFast and WithSlotForm have a case for every pair: both expand the
  // table of forms (internal/forms.h, ISOLATION_VMSTAT_INLINE_WRITER_FORMS).

  void ContractMod(StatKind kind, int instance, int item, int64_t delta) const {
    vm_->ContractSlot("Writer Mod", cpu_, kind, instance, item);
    Vmstat::ContractDelta("Writer Mod", delta);
  }

  // For the forms' fast paths (internal/forms.h): cpu()'s block and cell.
  template <typename Cell>
  internal::CellBlock<Cell>& BlockAt(StatKind kind, int instance) const {
    return static_cast<internal::CellBlock<Cell>*>(blocks_[static_cast<size_t>(kind)])[instance];
  }
  template <typename Cell>
  Cell& CellAt(StatKind kind, int instance, int item) const {
    return BlockAt<Cell>(kind, instance).c[static_cast<size_t>(item)];
  }

  // The update below the threshold, or false with nothing stored (the
  // virtual path then does all of it): the form's fast path
  // (internal/forms.h, FormOf<F>::type::TryFast), then the dirty mark.
  // `mode`: 0 for Mod, +1 / -1 for Inc / Dec (their overstep on a fold).
  template <internal::WriterForm F, bool kMarksDirty>
  bool TryFastAs(StatKind kind, int instance, int item, int64_t delta, int mode) const {
    const size_t k = static_cast<size_t>(kind);
    // Relaxed: racy across threshold refreshes, as the kernel's this_cpu_read.
    const int64_t t = threshold_[k][instance].load(std::memory_order_relaxed);
    if constexpr (F == internal::WriterForm::kVirtual) {
      (void)delta, (void)item, (void)t, (void)mode;
      return false;
    } else {
      using Form = typename internal::FormOf<F>::type;
      if (!Form::TryFast(*this, kind, instance, item, delta, t, mode)) return false;
      // vmstat_mark_dirty(): relaxed (owner-set, owner-cleared; the shepherd
      // only takes a hint); the clean->dirty store goes out of line.  Only
      // for the policies whose writers mark it: mainline's fast path has no
      // such flag.
      if constexpr (kMarksDirty) {
        if (__builtin_expect(!dirty_->load(std::memory_order_relaxed), 0))
          vm_->WriterMarkDirty(cpu_);
      }
      return true;
    }
  }
  // Measured on a Zen 4 host (docs/history/2026-12-02-perf-zen4.md): with the fifth
  // form GCC lays the watermark form's code out behind taken branches, and
  // D's Writer Mod went 0.60-0.66 -> 0.71-0.86 of a thread-local increment
  // (an if-chain in either order and a shared s32 case: 0.82-0.91);
  // WithSlotForm's loops have no such test and did not move.
  bool TryFast(StatKind kind, int instance, int item, int64_t delta, int mode) const {
    using internal::WriterForm;
#define ISOLATION_VMSTAT_WRITER_CASES_(form, Form)                                \
  case Dispatch(WriterForm::form, false):                                         \
    return TryFastAs<WriterForm::form, false>(kind, instance, item, delta, mode); \
  case Dispatch(WriterForm::form, true):                                          \
    return TryFastAs<WriterForm::form, true>(kind, instance, item, delta, mode);
    switch (dispatch_) {
      ISOLATION_VMSTAT_INLINE_WRITER_FORMS(ISOLATION_VMSTAT_WRITER_CASES_)
      case Dispatch(WriterForm::kVirtual, false):
      case Dispatch(WriterForm::kVirtual, true):
        return false;
      default:
        // dispatch_ is only ever Dispatch(form, marks) of a WriterForm: no
        // bounds test before the jump table.
        __builtin_unreachable();
    }
#undef ISOLATION_VMSTAT_WRITER_CASES_
  }

  Vmstat* vm_;
  void* blocks_[2];                          // cpu()'s first zone / node block
  const std::atomic<int8_t>* threshold_[2];  // cpu()'s zone / node thresholds
  const std::atomic<bool>* dirty_;           // cpu()'s vmstat_dirty (used if marks_dirty_)
  int cpu_;
  internal::WriterForm form_;
  bool marks_dirty_;
  uint8_t dispatch_;  // Dispatch(form_, marks_dirty_)
};

// A VmstatWriter whose slot form F, and whether its updates mark the CPU
// dirty, are compile-time constants (made by VmstatWriter::WithSlotForm,
// which picks F = form(), kMarksDirty = marks_dirty()): the same updates,
// with the slot's code alone inline.  F = kVirtual forwards every update to
// the virtual Vmstat path.  A writer whose policy does not mark may be
// wrapped with kMarksDirty = true (it marks an unused flag: slower, still
// correct); the reverse would lose the marks and is a contract violation.
// Same contract and thread-safety as VmstatWriter.
template <internal::WriterForm F, bool kMarksDirty>
class VmstatSlotWriter {
 public:
  explicit VmstatSlotWriter(const VmstatWriter& w) : w_(w) {
    ISOLATION_CONTRACT(w.form_ == F, "vmstat VmstatSlotWriter<%d> made from a writer of form %d",
                       static_cast<int>(F), static_cast<int>(w.form_));
    ISOLATION_CONTRACT(kMarksDirty || !w.marks_dirty_,
                       "vmstat VmstatSlotWriter<%d, no marks> made from a writer that marks dirty",
                       static_cast<int>(F));
  }
  int cpu() const { return w_.cpu_; }
  void Mod(StatKind kind, int instance, int item, int64_t delta) {
    w_.ContractMod(kind, instance, item, delta);
    if (__builtin_expect(!w_.template TryFastAs<F, kMarksDirty>(kind, instance, item, delta, 0),
                         0)) {
      w_.vm_->Mod(w_.cpu_, kind, instance, item, delta);
    }
  }
  void Inc(StatKind kind, int instance, int item) {
    w_.vm_->ContractSlot("Writer Inc", w_.cpu_, kind, instance, item);
    if (__builtin_expect(!w_.template TryFastAs<F, kMarksDirty>(kind, instance, item, 1, 1), 0))
      w_.vm_->Inc(w_.cpu_, kind, instance, item);
  }
  void Dec(StatKind kind, int instance, int item) {
    w_.vm_->ContractSlot("Writer Dec", w_.cpu_, kind, instance, item);
    if (__builtin_expect(!w_.template TryFastAs<F, kMarksDirty>(kind, instance, item, -1, -1), 0))
      w_.vm_->Dec(w_.cpu_, kind, instance, item);
  }

 private:
  VmstatWriter w_;
};

template <typename Fn>
decltype(auto) VmstatWriter::WithSlotForm(Fn&& fn) const {
  using internal::WriterForm;
#define ISOLATION_VMSTAT_SLOT_WRITER_CASES_(form, Form)          \
  case Dispatch(WriterForm::form, false):                        \
    return fn(VmstatSlotWriter<WriterForm::form, false>(*this)); \
  case Dispatch(WriterForm::form, true):                         \
    return fn(VmstatSlotWriter<WriterForm::form, true>(*this));
  switch (dispatch_) {
    ISOLATION_VMSTAT_INLINE_WRITER_FORMS(ISOLATION_VMSTAT_SLOT_WRITER_CASES_)
    default:
      break;  // kVirtual
  }
#undef ISOLATION_VMSTAT_SLOT_WRITER_CASES_
  return fn(VmstatSlotWriter<WriterForm::kVirtual, true>(*this));
}

}  // namespace isolation::vmstat

#endif  // ISOLATION_VMSTAT_WRITER_H_
