// SPDX-License-Identifier: GPL-2.0-or-later
// MmCid::Create() (through the design registry) and the deprecated flat
// MmCidConfig: ToVariant() and its Create().

#include "isolation/mm_cid/mm_cid.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "isolation/mm_cid/registry.h"

namespace isolation::mm_cid {

// This file implements the deprecated flat configuration.
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

namespace {

std::string_view DesignName(Design d) {
  switch (d) {
    case Design::kLazy:
      return "lazy";
    case Design::kOwner619:
      return "owner619";
    case Design::kV63MmLock:
      return "v63_mmlock";
  }
  return "?";
}
std::string_view AllocatorName(Allocator a) {
  switch (a) {
    case Allocator::kV6_4:
      return "alloc_v6_4";
    case Allocator::kV6_13:
      return "alloc_v6_13";
    case Allocator::kV6_14:
      return "alloc_v6_14";
  }
  return "?";
}
std::string_view ScanScopeName(ScanScope s) {
  switch (s) {
    case ScanScope::kPossible:
      return "scan_possible";
    case ScanScope::kAllowed:
      return "scan_allowed";
    case ScanScope::kCidmask:
      return "scan_cidmask";
  }
  return "?";
}
std::string_view PlacementName(Placement p) {
  switch (p) {
    case Placement::kTaskWork:
      return "work_taskwork";
    case Placement::kDelayed:
      return "work_delayed";
    case Placement::kUnbound:
      return "work_unbound";
    case Placement::kRcu:
      return "work_rcu";
    case Placement::kResume:
      return "work_resume";
  }
  return "?";
}

}  // namespace

std::string MmCidConfig::Name() const {
  if (design != Design::kLazy) {
    std::string n(DesignName(design));
    if (design == Design::kOwner619 && owner619_direct) n += "+owner619_direct";
    if (design == Design::kOwner619 && owner619_walk619) n += "+owner619_walk619";
    if (design == Design::kOwner619 && owner619_split_mode) n += "+owner619_split_mode";
    return n;
  }
  std::string n =
      absl::StrCat(std::string(DesignName(design)), "+", std::string(AllocatorName(allocator)), "+",
                   std::string(ScanScopeName(scope)), "+",
                   batch == 0 ? std::string("batch_full") : absl::StrCat("batch_", batch), "+",
                   std::string(PlacementName(placement)));
  // Implied by work_unbound / work_resume, so only printed where it is a choice.
  if (tick_kick && placement != Placement::kUnbound && placement != Placement::kResume)
    n += "+tick_kick";
  if (lazy_no_dekker_fences) n += "+lazy_no_dekker_fences";
  return n;
}

absl::StatusOr<bool> ParseTickKick(std::string_view s) {
  if (s == "tick_kick") return true;
  if (s == "no_tick_kick") return false;
  return absl::InvalidArgumentError(absl::StrCat("unknown mm_cid tick kick '", std::string(s),
                                                 "' (want tick_kick|no_tick_kick)"));
}

absl::StatusOr<MmCidVariant> ToVariant(const MmCidConfig& config) {
  if (config.batch < 0 || config.batch > kMaxCpus) {
    return absl::InvalidArgumentError(
        absl::StrCat("mm_cid: batch ", config.batch, " outside [0, ", kMaxCpus, "]"));
  }
  const auto design = static_cast<int>(config.design);
  const auto allocator = static_cast<int>(config.allocator);
  const auto scope = static_cast<int>(config.scope);
  const auto placement = static_cast<int>(config.placement);
  if (design < 0 || design > static_cast<int>(Design::kV63MmLock) || allocator < 0 ||
      allocator > static_cast<int>(Allocator::kV6_14) || scope < 0 ||
      scope > static_cast<int>(ScanScope::kCidmask) || placement < 0 ||
      placement > static_cast<int>(Placement::kResume)) {
    return absl::InvalidArgumentError(absl::StrCat("mm_cid: unknown enum value (design ", design,
                                                   ", allocator ", allocator, ", scope ", scope,
                                                   ", placement ", placement, ")"));
  }
  MmCidVariant v;
  v.design = std::string(DesignName(config.design));
  if (config.design == Design::kLazy && config.lazy_no_dekker_fences)
    v.design = "lazy_no_dekker_fences";
  if (config.design == Design::kOwner619) {
    const int controls = (config.owner619_direct ? 1 : 0) + (config.owner619_walk619 ? 1 : 0) +
                         (config.owner619_split_mode ? 1 : 0);
    if (controls > 1) {
      return absl::InvalidArgumentError(
          "mm_cid: owner619_direct, owner619_walk619 and owner619_split_mode are separate designs; "
          "pick one");
    }
    if (config.owner619_direct) v.design = "owner619_direct";
    if (config.owner619_walk619) v.design = "owner619_walk619";
    if (config.owner619_split_mode) v.design = "owner619_split_mode";
  }
  v.lazy.allocator = std::string(AllocatorName(config.allocator));
  v.lazy.scope = std::string(ScanScopeName(config.scope));
  v.lazy.granularity =
      config.batch == 0 ? std::string("batch_full") : absl::StrCat("batch_", config.batch);
  v.lazy.placement = std::string(PlacementName(config.placement));
  v.lazy.tick = config.tick_kick ? "tick_kick" : "no_tick_kick";
  return v;
}

const char* BarrierModeName(BarrierMode mode) {
  switch (mode) {
    case BarrierMode::kNone:
      return "none";
    case BarrierMode::kFences:
      return "fences";
    case BarrierMode::kMembarrier:
      return "membarrier";
  }
  return "?";
}

MmCid::MmCid(int num_cpus)
    : num_cpus_(num_cpus),
      own_rq_locks_(new Mutex[static_cast<size_t>(num_cpus > 0 ? num_cpus : 0)]) {
  rq_locks_.reserve(static_cast<size_t>(num_cpus > 0 ? num_cpus : 0));
  for (int c = 0; c < num_cpus; ++c) rq_locks_.push_back(&own_rq_locks_[static_cast<size_t>(c)]);
}

absl::Status MmCid::BindRunQueueLocks(const std::vector<Mutex*>& locks) {
  if (static_cast<int>(locks.size()) != num_cpus_) {
    return absl::InvalidArgumentError(absl::StrCat("mm_cid: BindRunQueueLocks with ", locks.size(),
                                                   " locks for ", num_cpus_, " CPUs"));
  }
  for (size_t c = 0; c < locks.size(); ++c) {
    if (locks[c] == nullptr)
      return absl::InvalidArgumentError(absl::StrCat("mm_cid: no run-queue lock for CPU ", c));
  }
  rq_locks_ = locks;
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<MmCid>> MmCid::Create(int num_cpus, const MmCidVariant& variant,
                                                     Limits limits) {
  if (num_cpus < 1 || num_cpus > kMaxCpus) {
    return absl::InvalidArgumentError(
        absl::StrCat("mm_cid: num_cpus ", num_cpus, " outside [1, ", kMaxCpus, "]"));
  }
  // Bounded before anything is allocated (tasks and the mm table are sized
  // by the limits up front).
  if (limits.max_tasks < 1 || limits.max_tasks > kMaxTasks) {
    return absl::InvalidArgumentError(absl::StrCat("mm_cid: limits.max_tasks ", limits.max_tasks,
                                                   " outside [1, ", kMaxTasks, "]"));
  }
  if (limits.max_mms < 1 || limits.max_mms > kMaxMms) {
    return absl::InvalidArgumentError(
        absl::StrCat("mm_cid: limits.max_mms ", limits.max_mms, " outside [1, ", kMaxMms, "]"));
  }
  absl::StatusOr<const DesignEntry*> design = DesignRegistry().Find(variant.design);
  if (!design.ok()) return design.status();
  absl::StatusOr<std::unique_ptr<MmCid>> created =
      (*design)->factory.create(num_cpus, variant.lazy, limits);
  if (!created.ok()) return created.status();
  if (*created == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("mm_cid design '", variant.design, "': its factory returned no object"));
  }
  (*created)->variant_ = variant;
  (*created)->max_tasks_ = limits.max_tasks;
  return created;
}

absl::StatusOr<std::unique_ptr<MmCid>> MmCid::Create(int num_cpus, std::string_view name,
                                                     Limits limits) {
  absl::StatusOr<MmCidVariant> variant = ParseVariant(name);
  if (!variant.ok()) return variant.status();
  return Create(num_cpus, *variant, limits);
}

absl::StatusOr<std::unique_ptr<MmCid>> MmCid::Create(int num_cpus, const MmCidConfig& config,
                                                     Limits limits) {
  // The machine and limits first, as before the variant existed.
  if (num_cpus < 1 || num_cpus > kMaxCpus) {
    return absl::InvalidArgumentError(
        absl::StrCat("mm_cid: num_cpus ", num_cpus, " outside [1, ", kMaxCpus, "]"));
  }
  absl::StatusOr<MmCidVariant> variant = ToVariant(config);
  if (!variant.ok()) return variant.status();
  return Create(num_cpus, *variant, limits);
}

}  // namespace isolation::mm_cid
