// SPDX-License-Identifier: GPL-2.0-or-later
// Internal: the counters over one slot representation (vmstat/slot.h), as a
// template instantiated once per representation (slot_*.cc).  The writers'
// whole per-update path is here, inline in the instantiation: the slot mode
// is a template argument (no run-time test), and the only per-update member
// test is Vmstat::AfterWrite's `mark_dirty_`.  Written from the behaviour of
// mm/vmstat.c (__mod_zone_page_state, __inc_zone_state, mod_zone_state,
// refresh_cpu_vm_stats, need_update, cpu_vm_stats_fold); no kernel code is
// copied.

#ifndef ISOLATION_LIB_VMSTAT_SLOT_IMPL_H_
#define ISOLATION_LIB_VMSTAT_SLOT_IMPL_H_

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <utility>
#include <vector>

#include "isolation/core/interleave.h"
#include "isolation/vmstat/internal/cells.h"
#include "isolation/vmstat/vmstat.h"

namespace isolation::vmstat::internal {

enum class SlotMode {
  kOwnerS8,         // s8-owner: s8, only the owner writes
  kSharedS32Cas,    // s32-atomic: s32, CAS writers, xchg folders
  kSharedS32Plain,  // s32-plain (negative control): s32, plain writers, xchg folders
  kWatermark,       // s64-watermark: 64-bit running sum + folded watermark
  kSharedS32Xadd,   // s32-xadd: s32, locked-add writers, xchg folders
  kScaledS32,  // s32-scaled: s32 x unit, locked-add writers (overflow = threshold), CAS folders
};

template <SlotMode M>
constexpr SlotTraits TraitsOf() {
  SlotTraits t;
  t.remote_foldable = M != SlotMode::kOwnerS8;
  t.irqs_off_writers_plain = M == SlotMode::kOwnerS8;
  t.bits = M == SlotMode::kOwnerS8 ? 8 : M == SlotMode::kWatermark ? 64 : 32;
  return t;
}

// Event counters written only by their CPU's own context: a relaxed load +
// store is enough (single writer; readers take a racy snapshot) and keeps a
// locked instruction off the writer's fold path.
inline void OwnerCount(std::atomic<int64_t>& c) {
  c.store(c.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
}

// The cells are the layouts VmstatWriter shares (vmstat.h, internal::).
template <SlotMode M>
struct CellType;
template <>
struct CellType<SlotMode::kOwnerS8> {
  using type = OwnerS8Cell;
};
template <>
struct CellType<SlotMode::kSharedS32Cas> {
  using type = S32Cell;
};
template <>
struct CellType<SlotMode::kSharedS32Plain> {
  using type = S32Cell;
};
template <>
struct CellType<SlotMode::kSharedS32Xadd> {
  using type = S32Cell;
};
template <>
struct CellType<SlotMode::kScaledS32> {
  using type = ScaledS32Cell;
};
template <>
struct CellType<SlotMode::kWatermark> {
  using type = WatermarkCell;
};
template <SlotMode M>
using Cell = typename CellType<M>::type;

// The inline writer's form of each representation (the negative control's
// plain writer has none: its writers stay virtual).
template <SlotMode M>
constexpr WriterForm WriterFormOf() {
  switch (M) {
    case SlotMode::kOwnerS8:
      return WriterForm::kOwnerS8;
    case SlotMode::kSharedS32Cas:
      return WriterForm::kSharedS32Cas;
    case SlotMode::kWatermark:
      return WriterForm::kWatermark;
    case SlotMode::kSharedS32Xadd:
      return WriterForm::kSharedS32Xadd;
    case SlotMode::kScaledS32:
      return WriterForm::kScaledS32;
    case SlotMode::kSharedS32Plain:
      break;
  }
  return WriterForm::kVirtual;
}

template <SlotMode M>
class VmstatImpl final : public Vmstat {
 public:
  VmstatImpl(VmstatConfig config, std::unique_ptr<FoldPolicy> policy)
      : Vmstat(std::move(config), std::move(policy), TraitsOf<M>()),
        zone_blocks_(static_cast<size_t>(num_cpus()) * static_cast<size_t>(num_zones())),
        node_blocks_(static_cast<size_t>(num_cpus()) * static_cast<size_t>(num_nodes())) {
    SetWriterLayout(WriterFormOf<M>(), zone_blocks_.data(), node_blocks_.data());
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
    if constexpr (M == SlotMode::kOwnerS8) {
      PlainMod(cpu, kind, instance, item, delta);
    } else {
      ModState(cpu, kind, instance, item, delta, 0);  // __ variants alias the CAS path (C)
    }
  }
  void IncIrqsOff(int cpu, StatKind kind, int instance, int item) override {
    ContractSlot("IncIrqsOff", cpu, kind, instance, item);
    if constexpr (M == SlotMode::kOwnerS8) {
      PlainStep(cpu, kind, instance, item, 1);
    } else {
      ModState(cpu, kind, instance, item, 1, 1);
    }
  }
  void DecIrqsOff(int cpu, StatKind kind, int instance, int item) override {
    ContractSlot("DecIrqsOff", cpu, kind, instance, item);
    if constexpr (M == SlotMode::kOwnerS8) {
      PlainStep(cpu, kind, instance, item, -1);
    } else {
      ModState(cpu, kind, instance, item, -1, -1);
    }
  }

  int64_t Diff(int cpu, StatKind kind, int instance, int item) const override {
    return ValidSlot(cpu, kind, instance, item) ? RawDiff(cpu, kind, instance, item) : 0;
  }
  // Diff() for indices the caller knows are valid (loops over the config).
  int64_t RawDiff(int cpu, StatKind kind, int instance, int item) const {
    const auto& c = CellOf(cpu, kind, instance, item);
    if constexpr (M == SlotMode::kWatermark) {
      return internal::WrapSub(c.slot.load(std::memory_order_relaxed),
                               c.folded.load(std::memory_order_relaxed));
    } else if constexpr (M == SlotMode::kScaledS32) {
      return ScaledDecode(c.w.load(std::memory_order_relaxed));
    } else {
      return c.d.load(std::memory_order_relaxed);
    }
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
    if constexpr (M == SlotMode::kOwnerS8) {
      (void)cpu;
      return 0;  // only the owner may write an A/B slot
    } else {
      return FoldAll(cpu);
    }
  }

 protected:
  void FoldDeadCpu(int cpu) override { FoldAll(cpu); }  // cpu_vm_stats_fold

 private:
  using Block = CellBlock<Cell<M>>;  // the layout VmstatWriter indexes

  Cell<M>& CellOf(int cpu, StatKind kind, int instance, int item) {
    const size_t b = static_cast<size_t>(cpu) * static_cast<size_t>(num_instances(kind)) +
                     static_cast<size_t>(instance);
    auto& blocks = kind == StatKind::kZone ? zone_blocks_ : node_blocks_;
    return blocks[b].c[static_cast<size_t>(item)];
  }
  const Cell<M>& CellOf(int cpu, StatKind kind, int instance, int item) const {
    const size_t b = static_cast<size_t>(cpu) * static_cast<size_t>(num_instances(kind)) +
                     static_cast<size_t>(instance);
    const auto& blocks = kind == StatKind::kZone ? zone_blocks_ : node_blocks_;
    return blocks[b].c[static_cast<size_t>(item)];
  }

  void CountFold(int cpu) { OwnerCount(State(cpu).threshold_folds); }

  // __mod_zone_page_state(): owner-only load + store.
  void PlainMod(int cpu, StatKind kind, int instance, int item, int64_t delta) {
    auto& c = CellOf(cpu, kind, instance, item);
    int64_t x = delta + c.d.load(std::memory_order_relaxed);
    const int t = ThresholdRaw(cpu, kind, instance);  // hot path: unchecked (writer contract)
    if (std::abs(x) > t) {
      AddShared(kind, instance, item, x);  // shared side before the slot (I2)
      ISOLATION_INTERLEAVE_POINT("vmstat.writer.mid_fold");
      CountFold(cpu);
      x = 0;
    }
    c.d.store(static_cast<int8_t>(x), std::memory_order_relaxed);
    AfterWrite(cpu);
  }

  // __inc_zone_state() / __dec_zone_state(): the overstep trick.
  void PlainStep(int cpu, StatKind kind, int instance, int item, int dir) {
    auto& c = CellOf(cpu, kind, instance, item);
    const int v = c.d.load(std::memory_order_relaxed) + dir;
    const int t = ThresholdRaw(cpu, kind, instance);  // hot path: unchecked (writer contract)
    if (dir * v > t) {
      const int overstep = Overstep(t);
      AddShared(kind, instance, item, v + dir * overstep);
      ISOLATION_INTERLEAVE_POINT("vmstat.writer.mid_fold");
      CountFold(cpu);
      c.d.store(static_cast<int8_t>(-dir * overstep), std::memory_order_relaxed);
    } else {
      c.d.store(static_cast<int8_t>(v), std::memory_order_relaxed);
    }
    AfterWrite(cpu);
  }

  // mod_zone_state() / mod_node_state(): compute the new slot value and the
  // overflow from the old one, install it with a compare-and-swap, then add
  // the overflow to the shared side.
  void ModState(int cpu, StatKind kind, int instance, int item, int64_t delta, int mode) {
    if constexpr (M == SlotMode::kScaledS32) {
      ScaledModState(cpu, kind, instance, item, delta, mode);
    } else {
      CellModState(cpu, kind, instance, item, delta, mode);
    }
  }
  void CellModState(int cpu, StatKind kind, int instance, int item, int64_t delta, int mode) {
    auto& c = CellOf(cpu, kind, instance, item);
    if constexpr (M == SlotMode::kWatermark) {
      // D: the owner advances its running sum with a plain store; only a
      // fold touches `folded`, by CAS, so a remote fold can never be lost.
      const int64_t s = internal::WrapAdd(c.slot.load(std::memory_order_relaxed), delta);
      c.slot.store(s, std::memory_order_relaxed);
      int64_t f = c.folded.load(std::memory_order_relaxed);
      for (;;) {
        const int t = ThresholdRaw(cpu, kind, instance);  // hot path: unchecked (writer contract)
        const int64_t d = internal::WrapSub(s, f);
        if (std::abs(d) <= t) break;
        const int64_t os = mode * Overstep(t);
        const int64_t target = internal::WrapAdd(s, os);  // leaves slot - folded == -os
        ISOLATION_INTERLEAVE_POINT("vmstat.d_writer.before_folded_cas");
        // Relaxed: conservation only needs the single modification order
        // of `folded`; the winner alone adds target - f.
        if (c.folded.compare_exchange_weak(f, target, std::memory_order_relaxed)) {
          ISOLATION_INTERLEAVE_POINT("vmstat.writer.mid_fold");
          AddShared(kind, instance, item, internal::WrapSub(target, f));
          CountFold(cpu);
          break;
        }
      }
    } else {
      if constexpr (M == SlotMode::kSharedS32Xadd) {
        // C.xadd: one locked add; past the threshold, FoldAddedS32 takes
        // the slot by xchg.  A delta beyond the threshold folds in any
        // case and takes the CAS below (so the slot stays within 2t + t/2:
        // no s32 overflow).
        const int t = ThresholdRaw(cpu, kind, instance);  // hot path: unchecked (writer contract)
        if (std::abs(delta) <= t) {
          // Relaxed: atomic against the folders' xchg (the slot's single
          // modification order), as C's CAS; nothing else is ordered by it.
          const int64_t n =
              delta + c.d.fetch_add(static_cast<int32_t>(delta), std::memory_order_relaxed);
          if (std::abs(n) > t) FoldAddedS32(cpu, kind, instance, item, c.d, mode);
          AfterWrite(cpu);
          return;
        }
      }
      using T = decltype(c.d.load());
      T o = c.d.load(std::memory_order_relaxed);
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
        if constexpr (M == SlotMode::kOwnerS8) {
          // this_cpu_try_cmpxchg without a lock prefix: atomic against the
          // owner's own interrupts only.  No other context writes an A/B
          // slot and the drivers never nest two contexts of one CPU, so the
          // single-writer store is that compare-and-swap (always succeeds).
          c.d.store(static_cast<T>(n), std::memory_order_relaxed);
          break;
        } else if constexpr (M == SlotMode::kSharedS32Cas || M == SlotMode::kSharedS32Xadd) {
          ISOLATION_INTERLEAVE_POINT("vmstat.c_writer.before_cas");
          // Relaxed CAS: atomic across CPUs against the shepherd's xchg.
          if (c.d.compare_exchange_weak(o, static_cast<T>(n), std::memory_order_relaxed)) break;
        } else {
          // Negative control: plain read-modify-write; a remote xchg between
          // the load and this store is overwritten (counted twice).
          ISOLATION_INTERLEAVE_POINT("vmstat.c_writer.before_cas");
          c.d.store(static_cast<T>(n), std::memory_order_relaxed);
          break;
        }
      }
      if (z != 0) {
        ISOLATION_INTERLEAVE_POINT("vmstat.writer.mid_fold");  // slot changed, shared not yet (I2)
        AddShared(kind, instance, item, z);
        CountFold(cpu);
      }
    }
    AfterWrite(cpu);
  }

  // Takes one slot's differential to 0 and returns what it held.
  int64_t TakeSlot(Cell<M>& c) {
    if constexpr (M == SlotMode::kOwnerS8) {
      // Owner (or dead CPU) only: this_cpu_xchg without a lock prefix.
      const int64_t v = c.d.load(std::memory_order_relaxed);
      if (v != 0) c.d.store(0, std::memory_order_relaxed);
      return v;
    } else if constexpr (M == SlotMode::kScaledS32) {
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
    } else if constexpr (M == SlotMode::kWatermark) {
      const int64_t s = c.slot.load(std::memory_order_relaxed);
      int64_t f = c.folded.load(std::memory_order_relaxed);
      while (s != f) {
        // Relaxed CAS on `folded`: the winner owns the delta s - f.
        if (c.folded.compare_exchange_weak(f, s, std::memory_order_relaxed))
          return internal::WrapSub(s, f);
      }
      return 0;
    } else {
      // xchg: atomic across CPUs against the CAS writer.
      if (c.d.load(std::memory_order_relaxed) == 0) return 0;
      return c.d.exchange(0, std::memory_order_relaxed);
    }
  }

  CellBlock<ScaledS32Cell>& ScaledBlockOf(int cpu, StatKind kind, int instance) {
    const size_t b = static_cast<size_t>(cpu) * static_cast<size_t>(num_instances(kind)) +
                     static_cast<size_t>(instance);
    auto& blocks = kind == StatKind::kZone ? zone_blocks_ : node_blocks_;
    return blocks[b];
  }

  // C.addo's unit follows the published threshold t, item by item: the
  // owner re-encodes every item of the block whose differential t holds (a
  // relaxed CAS each, keeping it; a folder may CAS it meanwhile) and, once
  // all of them are in t's unit, publishes the unit to its own fast path.
  // An item t no longer holds (a threshold drop) keeps its old unit -- each
  // word carries its own, so it still decodes -- until its own next update
  // folds it, as the kernel's would; until then every update of the block
  // takes this slow path.
  void ScaledRescale(int cpu, StatKind kind, int instance, int t) {
    auto& b = ScaledBlockOf(cpu, kind, instance);
    const uint32_t k = ScaledUnit(t);
    bool all_scaled = k != 0;
    for (int item = 0; item < num_items(kind) && k != 0; ++item) {
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

  // mod_zone_state() over the scaled word: the locked add when the block is
  // in the published threshold's unit; otherwise (a delta beyond the
  // threshold, or a block not rescaled yet) C's CAS loop, decoding with the
  // word's own unit and encoding in the unit of the threshold now published,
  // then a rescale of the block if its fast path is not on that unit.
  void ScaledModState(int cpu, StatKind kind, int instance, int item, int64_t delta, int mode) {
    const int t = ThresholdRaw(cpu, kind, instance);  // hot path: unchecked (writer contract)
    auto& b = ScaledBlockOf(cpu, kind, instance);
    auto& c = b.c[static_cast<size_t>(item)];
    // The block is in t's unit and the delta within t: VmstatWriter's fast
    // path (one locked add, its overflow flag the threshold test).
    const uint64_t unit = b.scale.load(std::memory_order_relaxed);  // this CPU's own word
    if ((unit >> 32) == static_cast<uint64_t>(t) && std::abs(delta) <= t) {
      if (ScaledAddOverflows(c.w, delta * static_cast<int64_t>(static_cast<uint32_t>(unit)))) {
        FoldScaledS32(cpu, kind, instance, item, c.w, mode);
      }
      AfterWrite(cpu);
      return;
    }
    const uint32_t k = ScaledUnit(t);
    uint64_t w = c.w.load(std::memory_order_relaxed);
    int64_t z;
    for (;;) {
      z = 0;
      int64_t n = delta + ScaledDecode(w);
      if (std::abs(n) > t) {
        const int64_t os = mode * Overstep(t);
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
      AddShared(kind, instance, item, z);
      CountFold(cpu);
    }
    if ((b.scale.load(std::memory_order_relaxed) >> 32) != static_cast<uint64_t>(t)) {
      ScaledRescale(cpu, kind, instance, t);
    }
    AfterWrite(cpu);
  }

  int FoldAll(int cpu) {
    std::array<int64_t, kMaxNodeItems> zone_global{};
    std::array<int64_t, kMaxNodeItems> node_global{};
    for (int z = 0; z < num_zones(); ++z) {
      for (int item = 0; item < config_.zone_items; ++item) {
        const int64_t v = TakeSlot(CellOf(cpu, StatKind::kZone, z, item));
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
        const int64_t v = TakeSlot(CellOf(cpu, StatKind::kNode, node, item));
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

template <SlotMode M>
std::unique_ptr<Vmstat> MakeVmstat(VmstatConfig config, std::unique_ptr<FoldPolicy> policy) {
  return std::make_unique<VmstatImpl<M>>(std::move(config), std::move(policy));
}

}  // namespace isolation::vmstat::internal

#endif  // ISOLATION_LIB_VMSTAT_SLOT_IMPL_H_
