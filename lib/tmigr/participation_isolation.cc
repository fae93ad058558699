// SPDX-License-Identifier: GPL-2.0-or-later
// Participation "isolation" (spec TM-ISOL), as merged for v6.19 (tip commit
// 7dec062cfcf2 and its preparatory patches): the isolation predicate with
// its cpuset term, and the merged exclude order -- un-isolate, flush, then
// isolate, flush -- so that tmigr_clear_cpu_available()'s "pick an available
// CPU" always finds one.  IsolationAwareParticipation (variants.h) is also
// the base of the other isolation-aware variants.

#include "tmigr/builtins.h"

namespace isolation::tmigr {

// tmigr_is_isolated()
bool IsolationAwareParticipation::IsIsolated(int cpu, const IsolationInputs& in) const {
  const bool domain = in.domain_isolated.Test(cpu) || in.cpuset_isolated.Test(cpu);
  if (!domain || in.nohz_full.Test(cpu)) return false;
  // The tick CPU must stay to pull the nohz_full CPUs' timers.
  if (!in.nohz_full.Empty() && cpu == in.tick_cpu) return false;
  return true;
}

// tmigr_init_isolation() (late initcall)
void IsolationAwareParticipation::InitIsolation(ExclusionOps& ops) const {
  ops.EnableIsolation();
  if (ops.inputs().domain_isolated.Empty()) return;
  Exclude(ops.inputs().domain_isolated, ops);
}

CpuMask IsolationAwareParticipation::IsolateSet(const CpuMask& exclude, const CpuMask& available,
                                                const IsolationInputs& in) {
  CpuMask m = exclude;
  m.And(available);
  m.AndNot(in.nohz_full);
  if (!in.nohz_full.Empty() && in.tick_cpu >= 0 && in.tick_cpu < m.nbits()) m.Clear(in.tick_cpu);
  return m;
}

// tmigr_isolated_exclude_cpumask(), merged order.
void IsolationAwareParticipation::Exclude(const CpuMask& exclude, ExclusionOps& ops) const {
  CpuMask unisolate = ops.OnlineMask();
  unisolate.AndNot(exclude);
  unisolate.AndNot(ops.AvailableMask());
  for (int c : unisolate) ops.QueueSetAvailable(c);
  ops.Flush();
  for (int c : IsolateSet(exclude, ops.AvailableMask(), ops.inputs())) ops.QueueClearAvailable(c);
  ops.Flush();
}

std::unique_ptr<Participation> MakeIsolationParticipation() {
  return std::make_unique<IsolationAwareParticipation>();
}

// Registry entry (variants.cc registers it).
ParticipationEntry IsolationParticipationEntry() {
  ParticipationEntry e{
      "isolation",
      "TM-ISOL as merged for v6.19 (7dec062cfcf2): domain-isolated CPUs leave the hierarchy "
      "(nohz_full and tick CPU stay); exclude order un-isolate, flush, isolate",
      /*negative_control=*/false, [] { return MakeIsolationParticipation(); }};
  return e;
}

}  // namespace isolation::tmigr
