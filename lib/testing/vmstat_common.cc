// SPDX-License-Identifier: GPL-2.0-or-later
// The vmstat kit's shared helpers (vmstat_common.h) and the variant plumbing
// of testing/vmstat.h.

#include "testing/vmstat_common.h"

#include <algorithm>
#include <cstdlib>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace isolation::testing {

absl::StatusOr<VmstatVariant> VmstatVariant::Parse(std::string_view text) {
  const size_t colon = text.find(':');
  VmstatVariant v;
  v.fold_policy = std::string(text.substr(0, colon));
  if (colon != std::string_view::npos) {
    v.slot = std::string(text.substr(colon + 1));
    if (v.slot.find(':') != std::string::npos || v.slot.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("vmstat variant '", std::string(text), "': want <fold policy>[:<slot>]"));
    }
  }
  if (v.fold_policy.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("vmstat variant '", std::string(text), "': no fold policy"));
  }
  return v;
}

std::string VmstatVariant::ToString() const {
  return slot.empty() ? fold_policy : fold_policy + ":" + slot;
}

absl::StatusOr<std::unique_ptr<vmstat::Vmstat>> MakeVmstat(std::string_view variant,
                                                           vmstat::VmstatConfig base) {
  auto v = VmstatVariant::Parse(variant);
  if (!v.ok()) return v.status();
  base.fold_policy = v->fold_policy;
  base.slot = v->slot;
  return vmstat::Vmstat::Create(std::move(base));
}

absl::StatusOr<vmstat::FoldPolicyTraits> VmstatPolicyTraits(std::string_view variant) {
  auto vm = MakeVmstat(variant, vmstat::VmstatConfig{});
  if (!vm.ok()) return vm.status();
  return (*vm)->policy_traits();
}

std::string VmstatParamName(std::string_view variant) {
  std::string n(variant);
  for (char& ch : n) {
    const bool ok =
        (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9');
    if (!ok) ch = '_';
  }
  return n;
}

namespace vmstat_kit {

int64_t ConservationError(const Vmstat& vm, const Truth& truth, std::string* where) {
  int64_t err = 0;
  auto note = [&](const std::string& what) {
    if (where != nullptr && where->empty()) *where = what;
  };
  for (StatKind k : {StatKind::kZone, StatKind::kNode}) {
    const char* kind = k == StatKind::kZone ? "zone" : "node";
    for (int item = 0; item < vm.num_items(k); ++item) {
      int64_t global_true = 0, sum_shared = 0, sum_diff_all = 0;
      for (int inst = 0; inst < vm.num_instances(k); ++inst) {
        int64_t diffs = 0;
        for (int cpu = 0; cpu < vm.num_cpus(); ++cpu) {
          if (vm.IsOnline(cpu)) diffs += vm.Diff(cpu, k, inst, item);
        }
        const int64_t t = truth.Get(k, inst, item);
        const int64_t e = std::abs(vm.SharedRaw(k, inst, item) + diffs - t);
        if (e != 0) {
          note(Cat(kind, " ", inst, " item ", item, ": shared ", vm.SharedRaw(k, inst, item),
                   " + diffs ", diffs, " != true ", t));
        }
        err += e;
        global_true += t;
        sum_shared += vm.SharedRaw(k, inst, item);
        sum_diff_all += diffs;
      }
      const int64_t e1 = std::abs(sum_shared - vm.GlobalRaw(k, item));
      const int64_t e2 = std::abs(vm.GlobalRaw(k, item) + sum_diff_all - global_true);
      if (e1 + e2 != 0) {
        note(Cat("global ", kind, " item ", item, ": global ", vm.GlobalRaw(k, item),
                 ", sum of instances ", sum_shared, ", diffs ", sum_diff_all, ", true ",
                 global_true));
      }
      err += e1 + e2;
    }
  }
  return err;
}

Transient MaxTransient(const Vmstat& vm, const Truth& truth) {
  Transient t;
  for (StatKind k : {StatKind::kZone, StatKind::kNode}) {
    for (int item = 0; item < vm.num_items(k); ++item) {
      int64_t global_true = 0, sum_diff_all = 0;
      for (int inst = 0; inst < vm.num_instances(k); ++inst) {
        int64_t diffs = 0;
        for (int cpu = 0; cpu < vm.num_cpus(); ++cpu) {
          if (vm.IsOnline(cpu)) diffs += vm.Diff(cpu, k, inst, item);
        }
        const int64_t tr = truth.Get(k, inst, item);
        t.instance = std::max(t.instance, std::abs(vm.SharedRaw(k, inst, item) + diffs - tr));
        global_true += tr;
        sum_diff_all += diffs;
      }
      t.global = std::max(t.global, std::abs(vm.GlobalRaw(k, item) + sum_diff_all - global_true));
    }
  }
  return t;
}

VmstatConfig SmallConfig(int cpus, int fixed_threshold) {
  VmstatConfig c;
  c.num_cpus = cpus;
  c.num_nodes = 2;
  c.zones = {ZoneSpec{"DMA32", 0, 1 * kGiB, 100, 140, 180},
             ZoneSpec{"Normal", 0, 4 * kGiB, 8192, 10240, 12288},
             ZoneSpec{"Normal1", 1, 2 * kGiB, 4096, 5120, 6144}};
  c.zone_items = vmstat::kMaxZoneItems;
  c.node_items = vmstat::kMaxNodeItems;
  c.fixed_threshold = fixed_threshold;
  c.isolated = CpuMask(cpus);
  c.nohz_full = CpuMask(cpus);
  for (int cpu = 1; cpu < cpus; ++cpu) {
    c.isolated.Set(cpu);
    c.nohz_full.Set(cpu);
  }
  return c;
}

std::unique_ptr<Vmstat> MakeOrFail(Report& r, std::string_view variant, VmstatConfig config) {
  auto vm = MakeVmstat(variant, std::move(config));
  if (!vm.ok()) {
    r.Fail("cannot create the counters: ", vm.status().message());
    return nullptr;
  }
  return std::move(vm).value();
}

void WorkLedger::CancelLocalWork(int cpu) {
  items_.erase(std::remove_if(items_.begin(), items_.end(),
                              [cpu](const Item& i) { return i.local && i.cpu == cpu; }),
               items_.end());
}

void WorkLedger::RunAt(Vmstat& vm, size_t i) {
  const Item item = items_[i];
  items_.erase(items_.begin() + static_cast<std::ptrdiff_t>(i));
  if (vm.RunCpuWork(item.cpu, item.generation)) {
    // Re-queued after P (still pending): as VmstatHooks::CpuWork does.
    items_.push_back({item.cpu, item.generation, vm.RequeueLocally(item.cpu)});
  }
}

bool WorkLedger::Drain(Vmstat& vm, int max_runs) {
  for (int n = 0; !items_.empty(); ++n) {
    if (n >= max_runs) return false;
    RunAt(vm, 0);
  }
  return true;
}

bool InShepherdScope(WorkScope scope, const Vmstat& vm, int cpu, bool tick_stopped) {
  switch (scope) {
    case WorkScope::kAnyCpu:
      return true;
    case WorkScope::kNotIsolated:
      return !vm.IsIsolated(cpu);
    case WorkScope::kTickRunning:
      return !tick_stopped;
    case WorkScope::kNotNohzFull:
      return !vm.IsNohzFull(cpu);
    case WorkScope::kNoCpu:
      return false;
  }
  return false;
}

bool InReturnToUserScope(ReturnToUserScope scope, const Vmstat& vm, int cpu, bool tick_stopped) {
  switch (scope) {
    case ReturnToUserScope::kNone:
      return false;
    case ReturnToUserScope::kNohzFullTickStopped:
      return vm.IsNohzFull(cpu) && tick_stopped;
    case ReturnToUserScope::kNohzFull:
      return vm.IsNohzFull(cpu);
  }
  return false;
}

const char* ScopeName(WorkScope scope) {
  switch (scope) {
    case WorkScope::kAnyCpu:
      return "any CPU";
    case WorkScope::kNotIsolated:
      return "not isolated";
    case WorkScope::kTickRunning:
      return "tick running";
    case WorkScope::kNotNohzFull:
      return "not nohz_full";
    case WorkScope::kNoCpu:
      return "no CPU";
  }
  return "?";
}

bool TraitsOrFail(Report& r, std::string_view variant, FoldPolicyTraits* traits) {
  auto t = VmstatPolicyTraits(variant);
  if (!t.ok()) {
    r.Fail("cannot create the counters: ", t.status().message());
    return false;
  }
  *traits = *t;
  return true;
}

}  // namespace vmstat_kit
}  // namespace isolation::testing
