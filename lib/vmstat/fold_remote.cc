// SPDX-License-Identifier: GPL-2.0-or-later
// Fold policy of C and D: the housekeeping shepherd folds every online CPU
// remotely each P; no per-CPU work anywhere, nothing on the CPU itself.
// C is Marcelo Tosatti's "fold per-CPU vmstats remotely" (v8 cover
// <20230515180015.016409657@redhat.com>) over an atomic s32 slot; D is the
// library's own idea over the watermark slot; C.xadd, also ours, is C over
// one locked add per update (s32-xadd); C.addo, ours, the same add with its
// overflow flag as the threshold test (s32-scaled); C-plain is the negative control, C
// over a plain-writer slot (spec I7).

#include <memory>
#include <string_view>
#include <vector>

#include "isolation/vmstat/vmstat.h"
#include "vmstat/builtin.h"

namespace isolation::vmstat::internal {
namespace {

class RemoteFold final : public FoldPolicy {
 public:
  explicit RemoteFold(std::string_view slot) : slot_(slot) {}
  FoldPolicyTraits traits() const override {
    FoldPolicyTraits t;
    t.slot = slot_;
    t.folds_remotely = true;
    t.shepherd_work = WorkScope::kNoCpu;
    t.folds_kernel_bound_cpus = true;
    return t;
  }
  // The remote_fold_need_update_filter knob: C folds every online CPU; with
  // the knob only those need_update() finds dirty (A's filter).
  ShepherdAction Shepherd(const Vmstat& vm, int cpu,
                          absl::FunctionRef<bool(int)> tick_stopped) const override {
    (void)tick_stopped;
    if (vm.config().remote_fold_need_update_filter && !vm.NeedUpdate(cpu))
      return ShepherdAction::kSkip;
    return ShepherdAction::kFoldRemote;
  }

 private:
  std::string_view slot_;  // a string literal
};

}  // namespace

std::vector<FoldPolicyEntry> RemotePolicies() {
  std::vector<FoldPolicyEntry> entries = {
      FoldPolicyEntry{"C",
                      "Tosatti's remote fold (2023): CAS writers on s32 slots; the shepherd folds "
                      "every CPU remotely, no per-CPU work",
                      false, [] { return std::make_unique<RemoteFold>("s32-atomic"); }},
      FoldPolicyEntry{"D",
                      "OURS (no kernel discussion): C's remote fold over a 64-bit running sum + "
                      "folded watermark; no locked op on the writer",
                      false, [] { return std::make_unique<RemoteFold>("s64-watermark"); }},
      FoldPolicyEntry{"C.xadd",
                      "OURS (no kernel discussion): C's remote fold with one locked add per update "
                      "(lock xadd) and an xchg fold past the threshold, instead of load + CAS",
                      false, [] { return std::make_unique<RemoteFold>("s32-xadd"); }},
      FoldPolicyEntry{
          "C.addo",
          "OURS (no kernel discussion): C's remote fold with one locked add per update whose "
          "overflow flag is the threshold test (lock add + jo), the differential stored in "
          "units of the threshold",
          false, [] { return std::make_unique<RemoteFold>("s32-scaled"); }},
      FoldPolicyEntry{"C-plain",
                      "negative control: C's remote fold over a plain load/store writer; loses "
                      "updates under a concurrent fold (spec I7)",
                      true, [] { return std::make_unique<RemoteFold>("s32-plain"); }},
  };
  // The seeds' table compares A0, A1, B and C; the library's own designs run by name.
  for (FoldPolicyEntry& e : entries) {
    if (e.name != "C") e.default_row = false;
    if (e.name == "C-plain")
      e.aliases = {"C-plain-negative-control"};  // isolab's spelling before the registry
  }
  return entries;
}

}  // namespace isolation::vmstat::internal
