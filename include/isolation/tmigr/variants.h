// SPDX-License-Identifier: GPL-2.0-or-later
// -----------------------------------------------------------------------------
// tmigr/variants.h
// -----------------------------------------------------------------------------
//
// The variant axes of the timer-migration hierarchy, each a strategy chosen
// once when the hierarchy is created, and their registries.
//
//   participation  Which CPUs take part in the hierarchy ("available") and
//                  how a change of the isolated set is applied: v6.9 (every
//                  online CPU) or the v6.19 isolation-aware exclusion with its
//                  exclude order.  A `Participation` is consulted only on
//                  hotplug and isolation changes, never on the per-CPU hot
//                  paths (they test the per-CPU `available` flag, as the
//                  kernel does).
//   hierarchy      The pull-model algorithm itself: "mainline", or a negative
//                  control that re-creates a fixed bug so that the
//                  conformance suites can be seen to fail.  A hierarchy
//                  factory returns the whole TimerMigration; outside code may
//                  register one (for instance a decorator around "mainline").
//
// Registering is one call (RegisterParticipation / RegisterHierarchy); the
// variant then appears in isolab's flags and `isolab variants`, in the
// conformance suites (isolation/testing/tmigr.h) and in the benchmark helpers
// (isolation/testing/tmigr_bench.h).
//
//   class PinOddCpus final : public isolation::tmigr::IsolationAwareParticipation { ... };
//   absl::Status s = isolation::tmigr::RegisterParticipation(
//       {"pin-odd", "odd CPUs never take part once isolation is on", false,
//        [] { return std::make_unique<PinOddCpus>(); }});
//
// Kernel counterpart: tmigr_is_isolated(), tmigr_isolated_exclude_cpumask(),
// tmigr_init_isolation() and the hotplug callbacks of
// kernel/time/timer_migration.c (v6.9 and v6.19); the negative controls undo
// the fixes named in tmigr.h.
//
// Thread-safety contract: the registries are thread-safe (core/registry.h).
// A Participation is immutable after construction and called by the
// hierarchy under the caller's hotplug serialisation; IsIsolated() may also
// be called concurrently with itself.

#ifndef ISOLATION_TMIGR_VARIANTS_H_
#define ISOLATION_TMIGR_VARIANTS_H_

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "isolation/core/cpumask.h"
#include "isolation/core/registry.h"
#include "isolation/tmigr/tmigr.h"

namespace isolation::tmigr {

// ---- participation axis -------------------------------------------------------

// The isolation inputs a participation decides from (TimerMigration::
// SetIsolation and SetCpusetIsolated copy them in; all masks of num_cpus bits).
struct IsolationInputs {
  CpuMask domain_isolated;  // not HK_TYPE_DOMAIN housekeeping (isolcpus=domain,...)
  CpuMask cpuset_isolated;  // CPUs of isolated cpuset partitions
  CpuMask nohz_full;
  int tick_cpu = -1;  // the tick CPU while nohz_full runs (tick_do_timer_cpu)
};

// What a participation may do to the hierarchy while applying an isolation
// change.  Implemented by the hierarchy; valid only during the call it is
// passed to.
class ExclusionOps {
 public:
  virtual const IsolationInputs& inputs() const = 0;
  virtual CpuMask OnlineMask() const = 0;
  virtual CpuMask AvailableMask() const = 0;
  // static_branch_enable(&tmigr_exclude_isolated): from now on
  // Participation::IsIsolated() decides whether a CPU coming online joins.
  virtual void EnableIsolation() = 0;
  // schedule_work_on(cpu, ...) of tmigr_set_cpu_available() (re-checks
  // IsIsolated) / tmigr_clear_cpu_available(); run at the next Flush().
  virtual void QueueSetAvailable(int cpu) = 0;
  virtual void QueueClearAvailable(int cpu) = 0;
  // flush_work() of everything queued so far.
  virtual void Flush() = 0;

 protected:
  ~ExclusionOps() = default;
};

class Participation {
 public:
  virtual ~Participation() = default;
  // Declared properties; the conformance suites choose their isolation
  // checks by them, never by the variant's name.
  //   excludes_isolated_cpus: once InitIsolation() ran, domain-isolated CPUs
  //     without nohz_full (and not the tick CPU) are unavailable (TM-ISOL).
  //     false: every online CPU takes part whatever the isolation (TM-ONLINE).
  //   flushes_unisolation_first: an exclusion flushes the CPUs it makes
  //     available again before it queues the first CPU it removes (the merged
  //     order, so "pick an available CPU" always finds one).
  virtual bool excludes_isolated_cpus() const = 0;
  virtual bool flushes_unisolation_first() const = 0;
  // tmigr_is_isolated() once isolation is enabled: must `cpu` stay out?
  virtual bool IsIsolated(int cpu, const IsolationInputs& in) const = 0;
  // tmigr_init_isolation() (late initcall).
  virtual void InitIsolation(ExclusionOps& ops) const = 0;
  // tmigr_isolated_exclude_cpumask(): `exclude` is the new isolated set.
  virtual void Exclude(const CpuMask& exclude, ExclusionOps& ops) const = 0;
};

// The v6.19 isolation-aware participation, as merged: predicate with the
// cpuset term, merged exclude order.  A base for variants that change one
// step (override IsIsolated() or Exclude()).
class IsolationAwareParticipation : public Participation {
 public:
  bool excludes_isolated_cpus() const override { return true; }
  bool flushes_unisolation_first() const override { return true; }
  // (domain-isolated or in an isolated cpuset) and not nohz_full, and not
  // the tick CPU while nohz_full runs.
  bool IsIsolated(int cpu, const IsolationInputs& in) const override;
  // Enables isolation, then excludes the domain-isolated CPUs if any.
  void InitIsolation(ExclusionOps& ops) const override;
  // Merged order: set available on online ∖ exclude ∖ available, flush; then
  // clear available on IsolateSet(exclude, available now), flush.
  void Exclude(const CpuMask& exclude, ExclusionOps& ops) const override;

 protected:
  // exclude ∩ available ∖ nohz_full, minus the tick CPU while nohz_full runs.
  static CpuMask IsolateSet(const CpuMask& exclude, const CpuMask& available,
                            const IsolationInputs& in);
};

using ParticipationFactory = absl::AnyInvocable<std::unique_ptr<Participation>() const>;
using ParticipationEntry = VariantEntry<ParticipationFactory>;
// Built-ins first, in registration order ("v6.9", "isolation", ...; `isolab
// variants` lists them all, docs/tmigr.md describes them).
VariantRegistry<ParticipationFactory>& ParticipationRegistry();
// Errors: as VariantRegistry::Register (bad or duplicate name, no factory).
absl::Status RegisterParticipation(ParticipationEntry entry);

// ---- hierarchy axis -------------------------------------------------------------

// What a hierarchy factory gets: validated inputs and the participation
// already built from the registry.
struct HierarchyArgs {
  std::vector<int> node_of;  // node of each CPU, 1..kMaxCpus entries
  int num_nodes = 1;
  Options options;                  // names resolved, compatibility fields cleared
  TimerBackend* backend = nullptr;  // not null
  std::unique_ptr<const Participation> participation;  // not null
};
using HierarchyFactory = absl::AnyInvocable<std::unique_ptr<TimerMigration>(HierarchyArgs) const>;

// A TimerMigration that forwards everything to another: the base of a
// decorator variant (override what you change).
//   RegisterHierarchy({"mine", "...", false, [](HierarchyArgs a) {
//     auto inner = (*HierarchyRegistry().Find("mainline"))->factory(std::move(a));
//     return std::make_unique<Mine>(std::move(inner));
//   }});
class ForwardingTimerMigration : public TimerMigration {
 public:
  explicit ForwardingTimerMigration(std::unique_ptr<TimerMigration> inner)
      : inner_(std::move(inner)) {}
  absl::Status SetIsolation(const IsolationConfig& config) override {
    return inner_->SetIsolation(config);
  }
  void SetTracer(Tracer* tracer) override { inner_->SetTracer(tracer); }
  absl::Status PrepareCpu(int cpu) override { return inner_->PrepareCpu(cpu); }
  absl::Status SetCpuAvailable(int cpu) override { return inner_->SetCpuAvailable(cpu); }
  void ClearCpuAvailable(int cpu) override { inner_->ClearCpuAvailable(cpu); }
  absl::Status BringUpCpu(int cpu) override { return inner_->BringUpCpu(cpu); }
  void TakeDownCpu(int cpu) override { inner_->TakeDownCpu(cpu); }
  void InitIsolation() override { inner_->InitIsolation(); }
  absl::Status SetCpusetIsolated(const CpuMask& isolated) override {
    return inner_->SetCpusetIsolated(isolated);
  }
  absl::Status IsolatedExclude(const CpuMask& exclude) override {
    return inner_->IsolatedExclude(exclude);
  }
  bool IsIsolated(int cpu) const override { return inner_->IsIsolated(cpu); }
  void Activate(int cpu) override { inner_->Activate(cpu); }
  Nanos Deactivate(int cpu, Nanos next_global) override {
    return inner_->Deactivate(cpu, next_global);
  }
  Nanos NewTimer(int cpu, Nanos next_global) override { return inner_->NewTimer(cpu, next_global); }
  Nanos QuickCheck(int cpu, Nanos next_global) override {
    return inner_->QuickCheck(cpu, next_global);
  }
  bool RequiresHandleRemote(int cpu, Nanos now) override {
    return inner_->RequiresHandleRemote(cpu, now);
  }
  void HandleRemote(int cpu, Nanos now) override { inner_->HandleRemote(cpu, now); }
  int num_cpus() const override { return inner_->num_cpus(); }
  const Sizing& sizing() const override { return inner_->sizing(); }
  const Options& options() const override { return inner_->options(); }
  bool IsAvailable(int cpu) const override { return inner_->IsAvailable(cpu); }
  CpuMask AvailableMask() const override { return inner_->AvailableMask(); }
  bool isolation_enabled() const override { return inner_->isolation_enabled(); }
  Counters& counters() override { return inner_->counters(); }
  const Counters& counters() const override { return inner_->counters(); }
  std::vector<int64_t> RemoteExpiriesByRunner() const override {
    return inner_->RemoteExpiriesByRunner();
  }
  HierarchySnapshot Snapshot() const override { return inner_->Snapshot(); }

 protected:
  TimerMigration& inner() { return *inner_; }

 private:
  std::unique_ptr<TimerMigration> inner_;
};
using HierarchyEntry = VariantEntry<HierarchyFactory>;
// Built-ins first, in registration order: "mainline" (the kernel's walk plus
// our fix of race R4, docs/tmigr.md), then negative controls that re-create a
// kernel bug ("ghost_timer", ...; `isolab variants` lists them all).
VariantRegistry<HierarchyFactory>& HierarchyRegistry();
absl::Status RegisterHierarchy(HierarchyEntry entry);

// Every variant of both axes, for `isolab variants` (axes "participation",
// "hierarchy").
std::vector<VariantInfo> ListVariants();

}  // namespace isolation::tmigr

#endif  // ISOLATION_TMIGR_VARIANTS_H_
