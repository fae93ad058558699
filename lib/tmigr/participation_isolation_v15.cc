// SPDX-License-Identifier: GPL-2.0-or-later
// Participation "isolation-v15": TM-ISOL with the exclude order of [V15]
// (<20251113083324.33490-1-gmonaco@redhat.com>): the available mask is read
// once, both the un-isolate and the isolate sets are computed from it up
// front, both sets are queued and then flushed together.  The respin that
// was merged flushes un-isolation first instead (participation_isolation.cc).

#include "tmigr/builtins.h"

namespace isolation::tmigr {
namespace {

class IsolationV15Participation final : public IsolationAwareParticipation {
 public:
  bool flushes_unisolation_first() const override { return false; }
  void Exclude(const CpuMask& exclude, ExclusionOps& ops) const override {
    const CpuMask available = ops.AvailableMask();
    CpuMask unisolate = ops.OnlineMask();
    unisolate.AndNot(exclude);
    unisolate.AndNot(available);
    const CpuMask isolate = IsolateSet(exclude, available, ops.inputs());
    for (int c : unisolate) ops.QueueSetAvailable(c);
    for (int c : isolate) ops.QueueClearAvailable(c);
    ops.Flush();
  }
};

}  // namespace

std::unique_ptr<Participation> MakeIsolationV15Participation() {
  return std::make_unique<IsolationV15Participation>();
}

// Registry entry (variants.cc registers it).
ParticipationEntry IsolationV15ParticipationEntry() {
  ParticipationEntry e{
      "isolation-v15",
      "TM-ISOL with the [V15] exclude order: both sets from one snapshot, queued together, "
      "one flush",
      /*negative_control=*/false, [] { return MakeIsolationV15Participation(); }};
  e.default_row = false;  // an alternative the discussion weighed, run by name
  return e;
}

}  // namespace isolation::tmigr
