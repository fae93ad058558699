// SPDX-License-Identifier: GPL-2.0-or-later
// per_cpu_slots.h (mm_cid module, not installed): storage for the per-(mm,
// CPU) slots of the lazy and owner619 designs, laid out the way the kernel's
// alloc_percpu() lays out mm->pcpu_cid / mm->mm_cid.pcpu: per CPU, the slots
// of a group of kMmsPerChunk mms sit next to each other in that CPU's own
// cache lines.  A CPU's switch path never shares a line with another CPU's
// (the false sharing the kernel's per-CPU areas avoid), and the footprint is
// sizeof(Slot) per (mm, CPU) -- 16 bytes for lazy, 4 for owner619 -- instead
// of one 64-byte line per (mm, CPU) that a per-mm array of aligned slots
// costs (1 GB for 4096 mms on 4096 CPUs).
//
// Thread safety: Allocate() must be serialised by the caller (the mm
// registry's lock, under which a new mm is built); the returned PerCpuRef
// is published with the mm.  Slot access is then the design's business.

#ifndef ISOLATION_LIB_MM_CID_PER_CPU_SLOTS_H_
#define ISOLATION_LIB_MM_CID_PER_CPU_SLOTS_H_

#include <cstddef>
#include <memory>
#include <vector>

namespace isolation::mm_cid::internal {

inline constexpr int kMmsPerChunk = 64;

// One mm's slots: `rows[cpu].slot[index]`.
template <typename Slot>
struct alignas(64) PerCpuRow {
  Slot slot[kMmsPerChunk];
};

template <typename Slot>
class PerCpuRef {
 public:
  PerCpuRef() = default;
  PerCpuRef(PerCpuRow<Slot>* rows, int index) : rows_(rows), index_(index) {}
  Slot& operator[](int cpu) const { return rows_[cpu].slot[index_]; }

 private:
  PerCpuRow<Slot>* rows_ = nullptr;
  int index_ = 0;
};

template <typename Slot>
class PerCpuSlots {
 public:
  static_assert(sizeof(PerCpuRow<Slot>) == kMmsPerChunk * sizeof(Slot),
                "a CPU's row must hold its slots without padding between them");

  explicit PerCpuSlots(int num_cpus) : num_cpus_(num_cpus) {}

  // The slots of the next mm, initialised by Slot's default constructor.
  PerCpuRef<Slot> Allocate() {
    if (next_ % kMmsPerChunk == 0) {
      chunks_.push_back(std::make_unique<PerCpuRow<Slot>[]>(static_cast<size_t>(num_cpus_)));
    }
    const int index = next_++ % kMmsPerChunk;
    return PerCpuRef<Slot>(chunks_.back().get(), index);
  }

 private:
  int num_cpus_;
  int next_ = 0;
  std::vector<std::unique_ptr<PerCpuRow<Slot>[]>> chunks_;
};

}  // namespace isolation::mm_cid::internal

#endif  // ISOLATION_LIB_MM_CID_PER_CPU_SLOTS_H_
