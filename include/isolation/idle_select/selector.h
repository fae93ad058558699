// SPDX-License-Identifier: GPL-2.0-or-later
// -----------------------------------------------------------------------------
// idle_select/selector.h
// -----------------------------------------------------------------------------
//
// The selector axis of idle_select: one object per selector owns both its
// upkeep (whatever it keeps beside the shared core: an idle mask, an
// overloaded mask, sched_ext's claimable masks) and the wakeup decision
// (`Select`).  An `IdleState` creates its selector once, by registered name,
// and forwards every entry point to it; nothing in the library asks which
// selector it is.  `SelectorRegistry()` lists the built-ins and everything
// registered from outside with `RegisterSelector()`: parsing, isolab's flags
// and `isolab variants`, the conformance suites (testing/idle_select.h) and
// the benchmarks (testing/idle_select_bench.h) read it.
//
// Writing a selector: derive from `SisSelector` (sis_selector.h: mainline
// select_idle_sibling() with the LLC scan as the extension point) for a
// scan-style selector, or from `IdleSelector` for anything else; declare what
// the conformance kit may assume in `traits()` and `MaxScanProbes()`; register
// it with one call:
//
//   const absl::Status registered = RegisterSelector(SelectorEntryOf<MySelector>(
//       "my_hint", "per-LLC last-idle hint in front of the mainline scan"));
//
// Kernel counterpart: the choice between select_idle_sibling() (CFS,
// kernel/sched/fair.c) and scx_select_cpu_dfl() (sched_ext,
// kernel/sched/ext_idle.c), and the review proposals around them.
//
// Thread-safety contract: Select() runs concurrently with everything, from
// any thread (a wakeup); the upkeep hooks for CPU c run on c's own context,
// never concurrently for the same c, and concurrently with Select() and with
// other CPUs' hooks; OnRebuild() runs alone.  Hooks and Select() must not
// allocate (per-thread scratch may be allocated on first use) nor block.
// The registry is thread-safe (core/registry.h); a selector registered after
// an IdleState was created does not affect that state.
//
// Memory ordering: a selector chooses its own; the built-ins use relaxed
// hints that are re-checked against the per-CPU state (scan-style), and a
// seq_cst test-and-clear for the claim (claim-style), see idle_select.h.

#ifndef ISOLATION_IDLE_SELECT_SELECTOR_H_
#define ISOLATION_IDLE_SELECT_SELECTOR_H_

#include <climits>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "isolation/core/registry.h"
#include "isolation/idle_select/idle_select.h"

namespace isolation::idle_select {

// When a CPU that started running a task leaves the selector's idle hint
// (IdleHint()); the conformance kit checks the bound (I10).
enum class HintClear : uint8_t {
  kNoHint,      // the selector keeps no idle hint (IdleHint() returns 0 bits)
  kOnIdleExit,  // at once, when its idle task is switched out (V1-eager, V4)
  kAtTick,      // at the latest at its next tick (V1: cleared from sched_tick)
};

// Where a selection may land besides the affinity (I3): the domain check
// (D1_DomainFromTraits) and the rare-path stress assert it after every
// selection.
enum class SelectionDomain : uint8_t {
  // select_idle_sibling(): the wakeup's target T or a CPU of T's LLC span
  // (prev, recent_used_cpu and prev's SMT siblings count only inside it).
  // T is ctx.target (prev when -1); when T is not allowed, prev if allowed,
  // else the first allowed online CPU.  T without sd_llc: T only.
  kTargetLlc,
  // scx_select_cpu_dfl(): any allowed online CPU; with
  // WakeContext::node_restricted, a CPU of prev's node.
  kAnyAllowed,
};

// What a selector promises; the conformance kit decides from these (never
// from the name) which invariants apply.
struct SelectorTraits {
  // false: scan style (select_idle_sibling): Select never fails (target at
  // worst, I6), claims nothing, re-checks every hint against the per-CPU
  // state before returning a CPU as idle (I4), scans only target's LLC domain
  // so a domain-isolated CPU comes back only as the target itself (I2, I13),
  // and tries target, prev, recent_used_cpu in that order (I7).
  // true: claim style (sched_ext): a returned CPU's idle period was won by an
  // atomic claim, one winner per idle period (I5); -1 ("none") is an answer;
  // domains are ignored, only affinity keeps tasks off isolated CPUs.
  // Either style: an affinity with no online CPU gets cpu -1, kFallback,
  // nothing claimed (I6).
  bool claims_cpus = false;
  // Where the returned CPU lies (SelectionDomain).  A claim-style selector
  // that searches beyond the target's LLC declares kAnyAllowed (V4 does).
  SelectionDomain domain = SelectionDomain::kTargetLlc;
  // Keeps and consumes the LLC's idle-core hint as mainline does (I9): set on
  // idle entry only when every sibling is idle, cleared after a complete
  // idle-core scan that found none, untouched with Options::smt_preference off.
  bool idle_core_hint = false;
  HintClear idle_hint_clear = HintClear::kNoHint;
  // The go-idle half of the wakeup handshake (S16): a CPU that published
  // itself idle re-checks its run queue before it sleeps (do_idle()'s
  // need_resched() after __current_set_polling() and the barrier; the
  // sched_ext idle publish followed by the local-DSQ check), so an enqueue
  // that raced with the idle entry runs.  IdleSelectHooks answers the
  // driver's Hooks::IdleRecheck with it.  false only for the negative
  // control V0-norecheck.
  bool idle_entry_recheck = true;
};

inline constexpr int kUnboundedProbes = INT_MAX;

class IdleSelector {
 public:
  explicit IdleSelector(IdleState& state) : state_(state) {}
  virtual ~IdleSelector() = default;
  IdleSelector(const IdleSelector&) = delete;
  IdleSelector& operator=(const IdleSelector&) = delete;

  virtual SelectorTraits traits() const { return {}; }
  // I8: the most CPU-mode probes (Selection::probes) one Select() may make
  // when the LLC's SIS_UTIL budget is `nr_idle_scan`; kUnboundedProbes for
  // none.  Returning 0 for budget 0 promises SIS_UTIL's cut: no probe and a
  // fallback even with the idle-core hint set.
  virtual int MaxScanProbes(int nr_idle_scan) const {
    (void)nr_idle_scan;
    return kUnboundedProbes;
  }

  // The wakeup (IdleState::Select checked the contract).  Fills the counters
  // of the Selection it returns; may update task.recent_used_cpu.
  virtual Selection Select(WakeTask& task, const WakeContext& ctx) = 0;

  // Upkeep, called by IdleState's entry points on `cpu`'s own context after
  // the per-CPU state was updated (curr_is_idle, tick_stopped).  Count every
  // write to a shared line with state().CountSharedWrite(cpu).  Default:
  // nothing.
  virtual void OnIdleEnter(int cpu) { (void)cpu; }    // do_idle()
  virtual void OnIdleExit(int cpu) { (void)cpu; }     // put_prev_task_idle()
  virtual void OnIdleRefresh(int cpu) { (void)cpu; }  // pick_task_idle() while idle
  virtual void OnTick(int cpu) { (void)cpu; }         // sched_tick()
  virtual void OnTickStop(int cpu) { (void)cpu; }     // tick_nohz_idle_stop_tick()
  // After IdleState::Rebuild applied new domains (state().topology() and the
  // LLC spans are the new ones): re-initialise the selector's masks.  Also
  // called once right after construction.  Runs alone.
  virtual void OnRebuild() {}

  // Inspection (quiescent).  The selector's masks, for tests and tools.
  virtual std::vector<MaskSnapshot> Masks() const { return {}; }
  // Every CPU the selector's idle hint currently marks idle (0 bits: keeps no
  // idle hint); the subject of SelectorTraits::idle_hint_clear.
  virtual CpuMask IdleHint() const { return CpuMask(); }
  // I1 for the selector's own masks: "" or a description of the violation.
  virtual std::string CheckQuiescent() const { return ""; }

 protected:
  IdleState& state() const { return state_; }

 private:
  IdleState& state_;
};

// ---------------------------------------------------------------------------
// Registry
// ---------------------------------------------------------------------------
using SelectorFactory = std::function<SelectorFactoryFn>;
using SelectorEntry = VariantEntry<SelectorFactory>;

// Every selector: the built-ins (registered on the first call) and those
// registered from outside, in registration order.
VariantRegistry<SelectorFactory>& SelectorRegistry();
// One call registers a selector; it then appears in the conformance suites'
// parameter lists (SelectorNames), the benchmarks, isolab's variant flags and
// `isolab variants`.  Errors: those of VariantRegistry::Register (bad or
// duplicate name, no factory).
absl::Status RegisterSelector(SelectorEntry entry);
// The entry named `name` (case-insensitive; "V4" is V4g).  Errors: NotFound
// naming the value and listing the registered names.
absl::StatusOr<const SelectorEntry*> FindSelector(std::string_view name);
// Registered names in order; negative controls only when asked for.
std::vector<std::string> SelectorNames(bool include_negative_controls = false);
// `isolab variants` rows of idle_select (one axis: "selector").
std::vector<VariantInfo> ListVariants();

// An entry whose factory constructs T(IdleState&).
template <typename T>
SelectorEntry SelectorEntryOf(std::string name, std::string description,
                              bool negative_control = false) {
  return SelectorEntry{std::move(name), std::move(description), negative_control,
                       [](IdleState& state) -> absl::StatusOr<std::unique_ptr<IdleSelector>> {
                         return std::unique_ptr<IdleSelector>(std::make_unique<T>(state));
                       }};
}

// Compatibility: a handle on `state`'s own selector, for code written when
// selectors were separate objects (IdleSelectHooks' three-argument
// constructor).  Select() forwards to state.Select(); the upkeep hooks do
// nothing (the state keeps its own selector up to date).
std::unique_ptr<IdleSelector> MakeSelector(IdleState& state);

inline Selection IdleState::Select(WakeTask& task, const WakeContext& ctx) {
  CheckWake(task, ctx);
  return selector_->Select(task, ctx);
}

}  // namespace isolation::idle_select

#endif  // ISOLATION_IDLE_SELECT_SELECTOR_H_
