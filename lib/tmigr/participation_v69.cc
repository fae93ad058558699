// SPDX-License-Identifier: GPL-2.0-or-later
// Participation "v6.9" (spec TM-ONLINE): every online CPU takes part in the
// hierarchy, isolated or not; v6.9 had no tmigr_is_isolated() and no
// exclusion, so isolation changes are no-ops.

#include "tmigr/builtins.h"

namespace isolation::tmigr {
namespace {

class V69Participation final : public Participation {
 public:
  bool excludes_isolated_cpus() const override { return false; }
  bool flushes_unisolation_first() const override { return false; }
  bool IsIsolated(int, const IsolationInputs&) const override { return false; }
  void InitIsolation(ExclusionOps&) const override {}
  void Exclude(const CpuMask&, ExclusionOps&) const override {}
};

}  // namespace

std::unique_ptr<Participation> MakeV69Participation() {
  return std::make_unique<V69Participation>();
}

// Registry entry (variants.cc registers it).
ParticipationEntry V69ParticipationEntry() {
  ParticipationEntry e{
      "v6.9",
      "TM-ONLINE (v6.9): every online CPU takes part; isolated busy CPUs pull housekeeping timers",
      /*negative_control=*/false, [] { return MakeV69Participation(); }};
  return e;
}

}  // namespace isolation::tmigr
