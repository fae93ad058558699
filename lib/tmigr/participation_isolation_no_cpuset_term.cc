// SPDX-License-Identifier: GPL-2.0-or-later
// Participation "isolation-no-cpuset-term" (a negative control): the
// isolation predicate without its cpuset term, as Frederic Weisbecker's
// post-merge "timers/migration: Remove superfluous cpuset isolation test"
// has it (gregkh/linux @ 2519003dd5fb) -- but without 03ff73510169 ("cpuset:
// Update HK_TYPE_DOMAIN cpumask from cpuset"), which upstream folds the
// isolated cpuset partitions into the domain housekeeping mask and so makes
// the term superfluous.  This model has no such fold, so a CPU of an
// isolated cpuset partition that goes offline and comes back joins the
// hierarchy again although it is still isolated (spec S22).

#include "tmigr/builtins.h"

namespace isolation::tmigr {
namespace {

class IsolationNoCpusetTermParticipation final : public IsolationAwareParticipation {
 public:
  bool IsIsolated(int cpu, const IsolationInputs& in) const override {
    if (!in.domain_isolated.Test(cpu) || in.nohz_full.Test(cpu)) return false;
    if (!in.nohz_full.Empty() && cpu == in.tick_cpu) return false;
    return true;
  }
};

}  // namespace

std::unique_ptr<Participation> MakeIsolationNoCpusetTermParticipation() {
  return std::make_unique<IsolationNoCpusetTermParticipation>();
}

// Registry entry (variants.cc registers it).
ParticipationEntry IsolationNoCpusetTermParticipationEntry() {
  ParticipationEntry e{
      "isolation-no-cpuset-term",
      "negative control: TM-ISOL predicate without the cpuset term and without the "
      "HK_TYPE_DOMAIN fold of 03ff73510169; an isolated cpuset CPU rejoins on hotplug (S22)",
      /*negative_control=*/true, [] { return MakeIsolationNoCpusetTermParticipation(); }};
  return e;
}

}  // namespace isolation::tmigr
