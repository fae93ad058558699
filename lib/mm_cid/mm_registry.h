// SPDX-License-Identifier: GPL-2.0-or-later
// mm_registry.h (mm_cid module, not installed): the table of mms that every
// design (designs/) keeps.  MmIds are dense, assigned in creation
// order, and an mm lives until the registry is destroyed.  No kernel
// counterpart: in the kernel a task simply holds a pointer to its mm_struct.
//
// Thread safety: Create and Size take a mutex (not on a hot path); Get is
// lock-free and may run concurrently with Create.
// Memory ordering: Create publishes the fully initialised mm with a release
// store and Get reads it with an acquire load, so a caller that obtains the
// pointer sees every field the factory initialised.

#ifndef ISOLATION_LIB_MM_CID_MM_REGISTRY_H_
#define ISOLATION_LIB_MM_CID_MM_REGISTRY_H_

#include <atomic>
#include <cstddef>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "isolation/core/mutex.h"
#include "isolation/mm_cid/mm_cid.h"

namespace isolation::mm_cid::internal {

template <typename Mm>
class MmRegistry {
 public:
  explicit MmRegistry(int max_mms)
      : max_mms_(max_mms), mms_(new std::atomic<Mm*>[static_cast<size_t>(max_mms)]) {
    for (int i = 0; i < max_mms; ++i) mms_[i].store(nullptr, std::memory_order_relaxed);
  }

  // Builds the next mm with `make(id)` (a std::unique_ptr<Mm>), called under
  // the registry lock so that IDs follow creation order, and publishes it.
  template <typename MakeMm>
  absl::StatusOr<MmId> Create(MakeMm make) {
    MutexLock l(lock_);
    const MmId id = static_cast<MmId>(owned_.size());
    if (id >= max_mms_) {
      return absl::ResourceExhaustedError(absl::StrCat("mm_cid: more than ", max_mms_, " mms"));
    }
    std::unique_ptr<Mm> mm = make(id);
    mms_[id].store(mm.get(), std::memory_order_release);  // publish the initialised mm
    owned_.push_back(std::move(mm));
    return id;
  }

  // nullptr for an ID out of range or not yet created.
  Mm* Get(MmId id) const {
    if (id < 0 || id >= max_mms_) return nullptr;
    return mms_[id].load(std::memory_order_acquire);
  }

  int Size() const {
    MutexLock l(lock_);
    return static_cast<int>(owned_.size());
  }

 private:
  const int max_mms_;
  std::unique_ptr<std::atomic<Mm*>[]> mms_;
  mutable Mutex lock_;
  std::vector<std::unique_ptr<Mm>> owned_ ABSL_GUARDED_BY(lock_);
};

}  // namespace isolation::mm_cid::internal

#endif  // ISOLATION_LIB_MM_CID_MM_REGISTRY_H_
