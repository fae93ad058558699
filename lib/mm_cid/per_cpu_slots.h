// SPDX-License-Identifier: GPL-2.0-or-later
// per_cpu_slots.h (mm_cid module, not installed): storage for the per-(mm,
// CPU) slots of the lazy and owner619 designs, laid out the way the kernel's
// alloc_percpu() lays out mm->pcpu_cid / mm->mm_cid.pcpu: per CPU, the slots
// of a group of mms (as many as fill one cache line: 4 lazy slots, 16
// owner619 slots) sit next to each other in a line of that CPU's own.  A
// CPU's switch path never shares a line with another CPU's (the false
// sharing the kernel's per-CPU areas avoid), and the footprint is
// sizeof(Slot) per (mm, CPU) -- 16 bytes for lazy, 4 for owner619 -- instead
// of one 64-byte line per (mm, CPU) that a per-mm array of aligned slots
// costs (1 GiB for 4096 mms on 4096 CPUs).  The rows of one group are
// consecutive lines, so a scan over every CPU of one mm walks memory with a
// 64-byte stride, as it did with the per-mm array.
//
// Thread safety: Allocate() must be serialised by the caller (the mm
// registry's lock, under which a new mm is built); the returned PerCpuRef
// is published with the mm.  Slot access is then the design's business.

#ifndef ISOLATION_LIB_MM_CID_PER_CPU_SLOTS_H_
#define ISOLATION_LIB_MM_CID_PER_CPU_SLOTS_H_

#include <cstddef>
#include <memory>
#include <vector>

#include "isolation/mm_cid/switcher.h"

namespace isolation::mm_cid::internal {

// PerCpuRow / PerCpuRef: switcher.h (the inline switch reads the slots).

template <typename Slot>
class PerCpuSlots {
 public:
  static_assert(kCacheLine % sizeof(Slot) == 0 && sizeof(PerCpuRow<Slot>) == kCacheLine,
                "a CPU's row must be one cache line of slots");

  explicit PerCpuSlots(int num_cpus) : num_cpus_(num_cpus) {}

  // The slots of the next mm, initialised by Slot's default constructor.
  PerCpuRef<Slot> Allocate() {
    if (next_ % PerCpuRow<Slot>::kMms == 0) {
      chunks_.push_back(std::make_unique<PerCpuRow<Slot>[]>(static_cast<size_t>(num_cpus_)));
    }
    const int index = next_++ % PerCpuRow<Slot>::kMms;
    return PerCpuRef<Slot>(chunks_.back().get(), index);
  }

 private:
  int num_cpus_;
  int next_ = 0;
  std::vector<std::unique_ptr<PerCpuRow<Slot>[]>> chunks_;
};

}  // namespace isolation::mm_cid::internal

#endif  // ISOLATION_LIB_MM_CID_PER_CPU_SLOTS_H_
