// SPDX-License-Identifier: GPL-2.0-or-later
// Internal: the counters over one slot representation (vmstat/slot.h), as a
// template instantiated once per representation (slot_*.cc).  The writers'
// whole per-update path is here, inline in the instantiation: the
// representation is a template argument (no run-time test), and the only
// per-update member test is Vmstat::AfterWrite's `mark_dirty_`.  Written
// from the behaviour of mm/vmstat.c (__mod_zone_page_state,
// __inc_zone_state, mod_zone_state, refresh_cpu_vm_stats, need_update,
// cpu_vm_stats_fold); no kernel code is copied.
//
// A slot representation is a struct in its own slot_<name>.cc (or in a
// small internal header beside it when representations share code, as
// slot_s32.h for the S32Cell ones):
//
//   using Cell = ...;  its cell (vmstat/internal/cells.h)
//   static constexpr WriterForm kWriterForm;
//       its row of the inline writer forms, ISOLATION_VMSTAT_INLINE_WRITER_FORMS
//       (vmstat/internal/forms.h; Cell must be that form's), or
//       WriterForm::kVirtual for none
//   static constexpr SlotTraits kTraits;
//       what it allows (vmstat/slot.h); with remote_foldable false,
//       FoldCpuRemote is a no-op
//   static int64_t Diff(const Cell&);
//       the differential it holds (a racy relaxed read: need_update, Diff)
//   static int64_t Take(Cell&);
//       takes it to 0 and returns what it held (the folds)
//   template <typename Vm> static void ModState(Vm&, int cpu, StatKind kind,
//                                               int instance, int item,
//                                               int64_t delta, int mode);
//       mod_zone_state(): the update of Mod/Inc/Dec (mode 0 / +1 / -1, the
//       overstep's sign); also of the IrqsOff writers, unless
//       kTraits.irqs_off_writers_plain, which asks for these two:
//   template <typename Vm> static void PlainMod(Vm&, int cpu, StatKind kind,
//                                               int instance, int item,
//                                               int64_t delta);
//       __mod_zone_page_state()
//   template <typename Vm> static void PlainStep(Vm&, int cpu, StatKind kind,
//                                                int instance, int item, int dir);
//       __inc_zone_state() / __dec_zone_state()
//
// Each update ends with vm.AfterWrite(cpu) (vmstat_mark_dirty, for the
// policies that mark) on every path, in the representation rather than
// after its call: with an AfterWrite after the call, GCC 12 inlined
// s32-scaled's whole CAS-and-rescale path into each of the six writers
// instead of keeping it one out-of-line function behind their tail calls.
// `Vm` is VmstatImpl<Rep>, whose friend the representation is: its
// functions use the members under "for the representation" below.  The
// slot's entry function (slot_<name>.cc) returns
// SlotFactory{Rep::kTraits, &MakeVmstat<Rep>}; registering it is its
// X(<Name>Slot) line in ISOLATION_VMSTAT_SLOTS (builtin.h).

#ifndef ISOLATION_LIB_VMSTAT_SLOT_IMPL_H_
#define ISOLATION_LIB_VMSTAT_SLOT_IMPL_H_

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

#include "isolation/core/interleave.h"
#include "isolation/vmstat/internal/cells.h"
#include "isolation/vmstat/internal/forms.h"
#include "isolation/vmstat/slot.h"
#include "isolation/vmstat/vmstat.h"

namespace isolation::vmstat::internal {

// Event counters written only by their CPU's own context: a relaxed load +
// store is enough (single writer; readers take a racy snapshot) and keeps a
// locked instruction off the writer's fold path.
inline void OwnerCount(std::atomic<int64_t>& c) {
  c.store(c.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
}

// Whether Rep's cell is the one its inline writer form indexes.
template <typename Rep>
constexpr bool CellIsItsWriterForms() {
  if constexpr (Rep::kWriterForm == WriterForm::kVirtual) {
    return true;
  } else {
    return std::is_same_v<typename Rep::Cell, typename FormOf<Rep::kWriterForm>::type::Cell>;
  }
}

template <typename Rep>
class VmstatImpl final : public Vmstat {
 public:
  // The cells are the layouts VmstatWriter shares (vmstat/internal/cells.h).
  using Cell = typename Rep::Cell;

  VmstatImpl(VmstatConfig config, std::unique_ptr<FoldPolicy> policy)
      : Vmstat(std::move(config), std::move(policy), Rep::kTraits),
        zone_blocks_(static_cast<size_t>(num_cpus()) * static_cast<size_t>(num_zones())),
        node_blocks_(static_cast<size_t>(num_cpus()) * static_cast<size_t>(num_nodes())) {
    SetWriterLayout(Rep::kWriterForm, zone_blocks_.data(), node_blocks_.data());
  }

  void Mod(int cpu, StatKind kind, int instance, int item, int64_t delta) override {
    ContractSlot("Mod", cpu, kind, instance, item);
    ContractDelta("Mod", delta);
    ModState(cpu, kind, instance, item, delta, 0);
  }
  void Inc(int cpu, StatKind kind, int instance, int item) override {
    ContractSlot("Inc", cpu, kind, instance, item);
    ModState(cpu, kind, instance, item, 1, 1);
  }
  void Dec(int cpu, StatKind kind, int instance, int item) override {
    ContractSlot("Dec", cpu, kind, instance, item);
    ModState(cpu, kind, instance, item, -1, -1);
  }
  void ModIrqsOff(int cpu, StatKind kind, int instance, int item, int64_t delta) override {
    ContractSlot("ModIrqsOff", cpu, kind, instance, item);
    ContractDelta("ModIrqsOff", delta);
    if constexpr (Rep::kTraits.irqs_off_writers_plain) {
      Rep::PlainMod(*this, cpu, kind, instance, item, delta);
    } else {
      ModState(cpu, kind, instance, item, delta, 0);  // __ variants alias the CAS path (C)
    }
  }
  void IncIrqsOff(int cpu, StatKind kind, int instance, int item) override {
    ContractSlot("IncIrqsOff", cpu, kind, instance, item);
    if constexpr (Rep::kTraits.irqs_off_writers_plain) {
      Rep::PlainStep(*this, cpu, kind, instance, item, 1);
    } else {
      ModState(cpu, kind, instance, item, 1, 1);
    }
  }
  void DecIrqsOff(int cpu, StatKind kind, int instance, int item) override {
    ContractSlot("DecIrqsOff", cpu, kind, instance, item);
    if constexpr (Rep::kTraits.irqs_off_writers_plain) {
      Rep::PlainStep(*this, cpu, kind, instance, item, -1);
    } else {
      ModState(cpu, kind, instance, item, -1, -1);
    }
  }

  int64_t Diff(int cpu, StatKind kind, int instance, int item) const override {
    return ValidSlot(cpu, kind, instance, item) ? RawDiff(cpu, kind, instance, item) : 0;
  }
  // Diff() for indices the caller knows are valid (loops over the config).
  int64_t RawDiff(int cpu, StatKind kind, int instance, int item) const {
    return Rep::Diff(CellOf(cpu, kind, instance, item));
  }

  // need_update(): racy scan of the CPU's zone and node differentials.
  bool NeedUpdate(int cpu) const override {
    if (!ValidCpu(cpu)) return false;
    for (StatKind kind : {StatKind::kZone, StatKind::kNode}) {
      for (int i = 0; i < num_instances(kind); ++i) {
        for (int item = 0; item < num_items(kind); ++item) {
          if (RawDiff(cpu, kind, i, item) != 0) return true;
        }
      }
    }
    return false;
  }

  // refresh_cpu_vm_stats(false): zones first (zone atomics at once, global
  // accumulated), then nodes, then the globals (fold_diff).
  int RefreshCpu(int cpu) override { return ValidCpu(cpu) ? FoldAll(cpu) : 0; }

  int FoldCpuRemote(int cpu) override {
    if (!ValidCpu(cpu)) return 0;
    if constexpr (!Rep::kTraits.remote_foldable) {
      return 0;  // only the owner may write its slot (A/B)
    } else {
      return FoldAll(cpu);
    }
  }

 protected:
  void FoldDeadCpu(int cpu) override { FoldAll(cpu); }  // cpu_vm_stats_fold

 private:
  friend Rep;
  using Block = CellBlock<Cell>;  // the layout VmstatWriter indexes
  static_assert(CellIsItsWriterForms<Rep>(), "a slot representation's cell must be its form's");

  void ModState(int cpu, StatKind kind, int instance, int item, int64_t delta, int mode) {
    Rep::ModState(*this, cpu, kind, instance, item, delta, mode);
  }

  // ---- for the representation (Rep's functions, through `Vm&`) ----
  Block& BlockOf(int cpu, StatKind kind, int instance) {
    const size_t b = static_cast<size_t>(cpu) * static_cast<size_t>(num_instances(kind)) +
                     static_cast<size_t>(instance);
    auto& blocks = kind == StatKind::kZone ? zone_blocks_ : node_blocks_;
    return blocks[b];
  }
  Cell& CellOf(int cpu, StatKind kind, int instance, int item) {
    return BlockOf(cpu, kind, instance).c[static_cast<size_t>(item)];
  }
  const Cell& CellOf(int cpu, StatKind kind, int instance, int item) const {
    const size_t b = static_cast<size_t>(cpu) * static_cast<size_t>(num_instances(kind)) +
                     static_cast<size_t>(instance);
    const auto& blocks = kind == StatKind::kZone ? zone_blocks_ : node_blocks_;
    return blocks[b].c[static_cast<size_t>(item)];
  }
  // A writer update that pushed to the shared side.
  void CountFold(int cpu) { OwnerCount(State(cpu).threshold_folds); }
  // Also Vmstat's ThresholdRaw, Overstep, AddShared, AfterWrite and
  // num_items.

  // mod_zone_state() / mod_node_state() over a differential that is one
  // word `d` (s8-owner and the S32Cell representations): compute the new
  // slot value and the overflow from the old one, install it with
  // install(d, o, n) -- the representation's store or compare-and-swap,
  // true once n is in (a CAS that lost reloaded `o`: the loop recomputes)
  // -- then add the overflow to the shared side, then AfterWrite.
  template <typename T, typename Install>
  void ModWord(std::atomic<T>& d, int cpu, StatKind kind, int instance, int item, int64_t delta,
               int mode, Install install) {
    T o = d.load(std::memory_order_relaxed);
    int64_t z;
    for (;;) {
      z = 0;
      const int t = ThresholdRaw(cpu, kind, instance);  // hot path: unchecked (writer contract)
      int64_t n = delta + o;
      if (std::abs(n) > t) {
        const int64_t os = mode * Overstep(t);
        z = n + os;
        n = -os;
      }
      if (install(d, o, static_cast<T>(n))) break;
    }
    if (z != 0) {
      ISOLATION_INTERLEAVE_POINT("vmstat.writer.mid_fold");  // slot changed, shared not yet (I2)
      AddShared(kind, instance, item, z);
      CountFold(cpu);
    }
    AfterWrite(cpu);
  }

  int FoldAll(int cpu) {
    std::array<int64_t, kMaxNodeItems> zone_global{};
    std::array<int64_t, kMaxNodeItems> node_global{};
    for (int z = 0; z < num_zones(); ++z) {
      for (int item = 0; item < config_.zone_items; ++item) {
        const int64_t v = Rep::Take(CellOf(cpu, StatKind::kZone, z, item));
        if (v != 0) {
          ISOLATION_INTERLEAVE_POINT("vmstat.fold.mid_fold");  // taken, not yet added (I2)
          AddCounter(Shared(StatKind::kZone, z).v[static_cast<size_t>(item)], v);
          zone_global[static_cast<size_t>(item)] =
              internal::SaturatingAdd(zone_global[static_cast<size_t>(item)], v);
        }
      }
    }
    for (int node = 0; node < num_nodes(); ++node) {
      for (int item = 0; item < config_.node_items; ++item) {
        const int64_t v = Rep::Take(CellOf(cpu, StatKind::kNode, node, item));
        if (v != 0) {
          ISOLATION_INTERLEAVE_POINT("vmstat.fold.mid_fold");
          AddCounter(Shared(StatKind::kNode, node).v[static_cast<size_t>(item)], v);
          node_global[static_cast<size_t>(item)] =
              internal::SaturatingAdd(node_global[static_cast<size_t>(item)], v);
        }
      }
    }
    // fold_diff(): add to the globals, count the items that changed.
    // Between the instance adds and these, sum of instances != global (I2).
    ISOLATION_INTERLEAVE_POINT("vmstat.fold.before_global");
    int changes = 0;
    for (int item = 0; item < config_.zone_items; ++item) {
      if (const int64_t v = zone_global[static_cast<size_t>(item)]; v != 0) {
        AddCounter(Global(StatKind::kZone).v[static_cast<size_t>(item)], v);
        ++changes;
      }
    }
    for (int item = 0; item < config_.node_items; ++item) {
      if (const int64_t v = node_global[static_cast<size_t>(item)]; v != 0) {
        AddCounter(Global(StatKind::kNode).v[static_cast<size_t>(item)], v);
        ++changes;
      }
    }
    return changes;
  }

  std::vector<Block> zone_blocks_, node_blocks_;
};

template <typename Rep>
std::unique_ptr<Vmstat> MakeVmstat(VmstatConfig config, std::unique_ptr<FoldPolicy> policy) {
  return std::make_unique<VmstatImpl<Rep>>(std::move(config), std::move(policy));
}

}  // namespace isolation::vmstat::internal

#endif  // ISOLATION_LIB_VMSTAT_SLOT_IMPL_H_
