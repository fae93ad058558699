// SPDX-License-Identifier: GPL-2.0-or-later
// Participation "isolation-7.0": TM-ISOL as the 7.0 cycle reworked it after
// the merge.  03ff73510169 ("cpuset: Update HK_TYPE_DOMAIN cpumask from
// cpuset") folds the isolated cpuset partitions into the domain housekeeping
// mask, so tmigr_is_isolated() drops its separate cpuset test ("Remove
// superfluous cpuset isolation test") and tmigr_isolated_exclude_cpumask()
// is handed the whole non-housekeeping set by the housekeeping update, whose
// un-isolate work calls __tmigr_set_cpu_available() without re-checking.
// This model keeps boot and cpuset isolation as two inputs, so the fold is
// done here: the exclude set is the caller's set plus the boot-isolated
// CPUs.  What differs from "isolation": a cpuset change no longer queues an
// un-isolate work item on every boot-isolated CPU only for it to find the
// CPU still isolated; the available mask ends the same.

#include "tmigr/builtins.h"

namespace isolation::tmigr {
namespace {

class IsolationV70Participation final : public IsolationAwareParticipation {
 public:
  // tmigr_isolated_exclude_cpumask() with the folded HK_TYPE_DOMAIN
  // complement as its argument; the merged order (un-isolate, flush,
  // isolate, flush) is kept.
  void Exclude(const CpuMask& exclude, ExclusionOps& ops) const override {
    CpuMask folded = exclude;
    folded.Or(ops.inputs().domain_isolated);
    IsolationAwareParticipation::Exclude(folded, ops);
  }
};

}  // namespace

std::unique_ptr<Participation> MakeIsolationV70Participation() {
  return std::make_unique<IsolationV70Participation>();
}

// Registry entry (variants.cc registers it).
ParticipationEntry IsolationV70ParticipationEntry() {
  ParticipationEntry e{
      "isolation-7.0",
      "TM-ISOL after the 7.0-cycle rework: cpuset partitions folded into HK_TYPE_DOMAIN "
      "(03ff73510169), exclude gets the whole isolated set, no un-isolate work on "
      "boot-isolated CPUs",
      /*negative_control=*/false, [] { return MakeIsolationV70Participation(); }};
  e.default_row = false;  // a step of kernel history, run by name
  return e;
}

}  // namespace isolation::tmigr
