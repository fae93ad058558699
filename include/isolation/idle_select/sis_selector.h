// SPDX-License-Identifier: GPL-2.0-or-later
// -----------------------------------------------------------------------------
// idle_select/sis_selector.h
// -----------------------------------------------------------------------------
//
// `SisSelector`: mainline select_idle_sibling() (the built-in selector "V0")
// written as a base class, so that a scan-style selector only replaces the
// step it changes.  The wakeup order is fixed here (target, prev in target's
// LLC, recent_used_cpu, an idle SMT sibling of prev when the idle-core hint is
// clear, then the LLC scan, then target); the LLC scan, select_idle_cpu(), is
// the virtual `SelectIdleCpu()`, and the helpers below are the pieces of the
// mainline scan, so a derived selector is short.  A per-LLC "last idle CPU"
// hint in front of the mainline scan:
//
//   class LastIdleHint final : public SisSelector {
//    public:
//     explicit LastIdleHint(IdleState& s) : SisSelector(s), hint_(s.num_llcs()) {}
//     int MaxScanProbes(int budget) const override { return budget + 1; }  // hint + scan
//     void OnIdleEnter(int cpu) override {
//       SisSelector::OnIdleEnter(cpu);                  // keeps the idle-core hint
//       const int llc = state().llc_of(cpu);
//       if (llc >= 0 && hint_[llc].cpu.load(std::memory_order_relaxed) != cpu) {
//         hint_[llc].cpu.store(cpu, std::memory_order_relaxed);
//         state().CountSharedWrite(cpu);                // a shared line (I12)
//       }
//     }
//     void OnRebuild() override { for (auto& h : hint_) h.cpu.store(-1); }
//
//    protected:
//     int SelectIdleCpu(const LlcScan& scan) override {
//       const int h = hint_[scan.llc].cpu.load(std::memory_order_relaxed);
//       if (!scan.has_idle_core && h >= 0 && state().llc_span(scan.llc).Test(h) &&
//           Allowed(scan.task, h)) {
//         ++scan.sel.probes;
//         if (Candidate(h, scan.task)) return h;        // re-checked: a hint only (I4)
//         ++scan.sel.stale_hits;
//       }
//       return SisSelector::SelectIdleCpu(scan);
//     }
//
//    private:
//     struct alignas(64) Hint { std::atomic<int> cpu{-1}; };
//     std::vector<Hint> hint_;
//   };
//
// Kernel counterpart: select_idle_sibling(), select_idle_cpu(),
// select_idle_core(), select_idle_smt(), __select_idle_cpu() and
// __update_idle_core() in kernel/sched/fair.c (~v6.14/6.15).
//
// Thread-safety contract: as IdleSelector (selector.h): Select() and the
// helpers run on any thread concurrently with the upkeep hooks; the helpers
// touch only the calling thread's scratch masks and the Selection passed in,
// apart from ClearIdleCores (a plain store to the shared hint, as the kernel).
//
// Memory ordering: every read of per-CPU state, the hint and the budget is
// relaxed (a hint); Candidate() is the fresh per-CPU check a returned CPU
// must pass.

#ifndef ISOLATION_IDLE_SELECT_SIS_SELECTOR_H_
#define ISOLATION_IDLE_SELECT_SIS_SELECTOR_H_

#include "isolation/core/cpumask.h"
#include "isolation/idle_select/idle_select.h"
#include "isolation/idle_select/selector.h"

namespace isolation::idle_select {

class SisSelector : public IdleSelector {
 public:
  explicit SisSelector(IdleState& state) : IdleSelector(state) {}

  // Scan style, idle-core hint kept, no idle hint of its own.
  SelectorTraits traits() const override;
  // SIS_UTIL: at most nr_idle_scan CPU-mode probes, none at budget 0.
  int MaxScanProbes(int nr_idle_scan) const override { return nr_idle_scan; }
  // select_idle_sibling(): target, prev (same LLC), recent_used_cpu (then
  // rewritten to prev), no sd_llc -> target, idle sibling of prev (SMT, hint
  // clear), SelectIdleCpu(), fallback target.
  Selection Select(WakeTask& task, const WakeContext& ctx) override;
  // __update_idle_core() when Options::smt_preference is on.
  void OnIdleEnter(int cpu) override;

 protected:
  // What select_idle_cpu() is given.  `sel` collects the counters (probes,
  // stale_hits) of the selection in progress.
  struct LlcScan {
    const WakeTask& task;
    int llc;  // target's LLC id (>= 0)
    int target;
    bool has_idle_core;  // idle-core mode: the hint was set (SMT, smt_preference)
    Selection& sel;
  };
  // select_idle_cpu(): an idle CPU of the LLC for the wakee, or -1.
  // Mainline: candidates = LLC span ∩ affinity; budget nr = nr_idle_scan + 1
  // (nr == 1: "none" at once, even in idle-core mode, hint kept); one
  // ScanCpus() pass from ScanStart(target); FinishScan().
  virtual int SelectIdleCpu(const LlcScan& scan);

  // __select_idle_cpu(): available-idle, or sched-idle unless the wakee is
  // SCHED_IDLE under Options::sched_idle_wakee_rule.  The fresh per-CPU check.
  bool Candidate(int cpu, const WakeTask& task) const;
  // `cpu` is in the task's affinity (nullptr = every CPU).
  static bool Allowed(const WakeTask& task, int cpu) {
    return task.affinity == nullptr || task.affinity->Test(cpu);
  }
  // Where the LLC scan starts: target + 1 (wrapping), or target with
  // Options::scan_from_target_plus_one off.
  int ScanStart(int target) const;
  // The loop of select_idle_cpu() over `cpus`, wrapping from `start`.
  // Idle-core mode examines each candidate's whole core (select_idle_core:
  // no budget; rejected cores leave `cpus`; the first idle sibling seen is
  // kept in `idle_cpu` as fallback).  CPU mode decrements `nr` before each
  // probe and stops when it reaches 0 ("--nr"), returning the first
  // Candidate().  `from_hint`: the candidates came from a hint, so a failed
  // probe counts as a stale hit.  Returns a CPU or -1.
  int ScanCpus(const LlcScan& scan, CpuMask& cpus, int start, int& nr, int& idle_cpu,
               bool from_hint);
  // The end of select_idle_cpu(): `found` if >= 0; else, after an idle-core
  // scan, clear the hint (it found no idle core, I9) and return `idle_cpu`.
  int FinishScan(const LlcScan& scan, int found, int idle_cpu);
  // A scratch mask of num_cpus() bits private to the calling thread (the
  // kernel's per-CPU select_rq_mask); which = 0..3, 0 is the candidate set of
  // the mainline SelectIdleCpu().  Contents are undefined on entry.
  CpuMask& Scratch(int which) const;

 private:
  // select_idle_smt(): a sibling of prev inside the LLC span, allowed, idle.
  int SelectIdleSmt(const WakeTask& task, int prev, const CpuMask& span, Selection& sel) const;
  // select_idle_core() for the core of `cpu`.
  int SelectIdleCore(const WakeTask& task, int cpu, CpuMask& cpus, int& idle_cpu,
                     Selection& sel) const;
};

}  // namespace isolation::idle_select

#endif  // ISOLATION_IDLE_SELECT_SIS_SELECTOR_H_
