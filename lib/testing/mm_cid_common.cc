// SPDX-License-Identifier: GPL-2.0-or-later
// What the mm_cid suites share (testing/mm_cid.h): the direct-driving scan
// runner, the parameter lists and names, and the fixture's SetUp.

#include <algorithm>
#include <cctype>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "isolation/testing/mm_cid.h"
#include "isolation/testing/status_matchers.h"

namespace isolation::testing::mm_cid {

using isolation::mm_cid::kNoMm;
using isolation::mm_cid::ScanRequest;
using isolation::mm_cid::ScanResult;

DirectScanRunner::DirectScanRunner(MmCid& m) : m_(m), placement_(m.placement()) {
  if (placement_ != nullptr) placement_->Start(*this);
}

void DirectScanRunner::MmCreated(MmId mm, Nanos now) {
  now_ = std::max(now_, now);
  if (placement_ != nullptr) placement_->OnMmCreated(mm, *this);
}

void DirectScanRunner::Tick(int cpu, TaskId task, Nanos now) {
  now_ = std::max(now_, now);
  if (ScanRequest r = m_.Tick(cpu, task, now); r && placement_ != nullptr)
    placement_->Dispatch(r.mm, *this);
}

void DirectScanRunner::ReturnToUser(int cpu, TaskId task, Nanos now) {
  now_ = std::max(now_, now);
  ScanResult res;
  const ScanRequest r = m_.ReturnToUser(cpu, task, now, &res);
  if (res.ran) {
    ++inline_scans_;
    if (res.pass_start) pass_starts_.emplace_back(m_.TaskMm(task), now);
  }
  if (r && placement_ != nullptr) placement_->Dispatch(r.mm, *this);
}

void DirectScanRunner::RunScan(MmId mm, Nanos now) {
  const ScanResult r = m_.Scan(mm, now);
  if (r.ran && r.pass_start) pass_starts_.emplace_back(mm, now);
}

void DirectScanRunner::Housekeeping(Nanos now) {
  now_ = std::max(now_, now);
  // Items queued while running (a periodic re-arm) wait for a later call.
  std::vector<Item> items = std::move(items_);
  items_.clear();
  for (Item& it : items) {
    if (it.due > now) {
      items_.push_back(it);
      continue;
    }
    if (it.period == 0) {
      RunScan(it.mm, now);
      m_.ScanRequestDone(it.mm);
      continue;
    }
    if (m_.MmUsers(it.mm) <= 0) continue;  // mm dropped: cancel_delayed_work_sync
    RunScan(it.mm, now);
    it.due = now + it.period;
    items_.push_back(it);
  }
}

void DirectScanRunner::QueueWork(MmId mm, Nanos delay) { items_.push_back({mm, now_ + delay, 0}); }
void DirectScanRunner::QueuePeriodicWork(MmId mm, Nanos period) {
  items_.push_back({mm, now_ + period, period});
}
// Direct driving models no grace period: the callback runs at the next
// housekeeping step.
void DirectScanRunner::CallRcu(MmId mm) { items_.push_back({mm, now_, 0}); }

Violations AllViolations(const MmCid& m, bool quiescent) {
  Violations v = m.CheckAlways();
  if (quiescent) {
    Violations q = m.CheckQuiescent();
    v.insert(v.end(), q.begin(), q.end());
  }
  return v;
}

int AllocationBound(const VariantTraits& t, int num_cpus, int users, int allowed, int first_free) {
  using isolation::mm_cid::AllocatorTraits;
  using isolation::mm_cid::DesignTraits;
  const int opt = std::min(users, allowed);
  // An ID above every reserved one is the first free when none is free below.
  const auto or_first_free = [first_free](int b) { return std::max(b, first_free + 1); };
  int bound = num_cpus;  // I2
  if (!t.design.lazy_axes) {
    const int promised = t.design.id_bound == DesignTraits::IdBound::kMaxCids
                             ? std::min(opt + opt / 4, num_cpus)
                             : opt;
    return std::min(bound, or_first_free(promised));
  }
  if (t.allocator.bounded_by_allowed) bound = std::min(bound, allowed);  // I3
  switch (t.allocator.id_promise) {
    case AllocatorTraits::IdPromise::kNone:
      break;
    case AllocatorTraits::IdPromise::kFirstFree:
      bound = std::min(bound, first_free + 1);
      break;
    case AllocatorTraits::IdPromise::kMaxNrCid:
      bound = std::min(bound, or_first_free(opt));
      break;
  }
  return bound;
}

void AllocationWatch::Before(TaskId task) {
  task_ = task;
  const MmId mm = m_.TaskMm(task);
  allocations_before_ = m_.Stats().allocations;
  first_free_ = mm == kNoMm ? 0 : m_.FirstFreeCid(mm);
  reserved_ = mm == kNoMm ? 0 : m_.CidmaskWeight(mm);
}

void AllocationWatch::After(TaskId task, Violations& out) {
  if (task != task_ || task < 0) return;
  task_ = -1;
  if (m_.Stats().allocations == allocations_before_) return;  // the parked ID, or none
  const int32_t id = m_.TaskCid(task);
  const MmId mm = m_.TaskMm(task);
  if (id < 0 || mm == kNoMm) return;
  const int users = m_.MmUsers(mm);
  const int allowed = m_.MmAllowedWeight(mm);
  ++allocations_;
  if (first_free_ >= std::min(users, allowed)) ++at_full_bitmap_;
  if (static_cast<size_t>(mm) >= highest_.size()) highest_.resize(static_cast<size_t>(mm) + 1, -1);
  int32_t& highest = highest_[static_cast<size_t>(mm)];
  if (highest >= 0 && users <= highest) ++users_dropped_;
  highest = std::max(highest, id);
  if (allowed < m_.num_cpus()) ++narrow_union_;
  const int bound = AllocationBound(t_, m_.num_cpus(), users, allowed, first_free_);
  if (id >= bound) {
    out.push_back(absl::StrCat("ID bound at allocation: task ", task, " of mm ", mm, " got ID ", id,
                               ", bound ", bound, " (users ", users, ", allowed CPUs ", allowed,
                               ", lowest free ID before ", first_free_, ", ", reserved_,
                               " IDs reserved before, P ", m_.num_cpus(), ")"));
  }
}

std::vector<std::string> Params(const std::vector<MmCidVariant>& variants) {
  std::vector<std::string> names;
  names.reserve(variants.size());
  for (const MmCidVariant& v : variants) names.push_back(v.Name());
  return names;
}

std::vector<std::string> Params(std::vector<std::string> names) { return names; }

std::vector<std::string> KeepScanVariants(std::vector<std::string> names) {
  std::vector<std::string> out;
  for (std::string& n : names) {
    absl::StatusOr<MmCidVariant> v = isolation::mm_cid::ParseVariant(n);
    if (!v.ok()) {  // kept: SetUp reports it
      out.push_back(std::move(n));
      continue;
    }
    absl::StatusOr<VariantTraits> t = isolation::mm_cid::DescribeVariant(*v);
    if (!t.ok() || t->design.lazy_axes) out.push_back(std::move(n));
  }
  return out;
}

std::string ParamName(const ::testing::TestParamInfo<std::string>& info) {
  std::string n = info.param;
  for (char& c : n) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return n.empty() ? std::string("empty") : n;
}

void MmCidSuiteBase::SetUp() {
  absl::StatusOr<MmCidVariant> v = isolation::mm_cid::ParseVariant(GetParam());
  ISOLATION_ASSERT_OK(v) << "variant '" << GetParam() << "'";
  variant_ = *v;
  absl::StatusOr<VariantTraits> t = isolation::mm_cid::DescribeVariant(variant_);
  ISOLATION_ASSERT_OK(t) << "variant '" << GetParam() << "'";
  traits_ = *t;
  // A variant that cannot be created fails here, naming the reason.
  absl::StatusOr<std::unique_ptr<MmCid>> m = MmCid::Create(8, variant_);
  ISOLATION_ASSERT_OK(m) << "variant '" << GetParam() << "'";
}

}  // namespace isolation::testing::mm_cid
