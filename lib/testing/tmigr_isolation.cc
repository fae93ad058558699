// SPDX-License-Identifier: GPL-2.0-or-later
// TmigrIsolation: the isolation scenarios S18-S23 (testing/tmigr.h, docs/tmigr.md).
// What a variant must do follows from the properties its Participation
// declares: excludes_isolated_cpus (TM-ISOL's predicate, docs/tmigr.md) or
// not (every online CPU takes part), and flushes_unisolation_first (the
// merged exclude order).

#include <algorithm>
#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "testing/tmigr_common.h"

namespace isolation::testing {

using tmigr_internal::Fixture;
using tmigr_internal::RecordingBackend;
using tmigr_internal::Report;

#define TMIGR_TRAITS_OR_RETURN(report, traits, v)                             \
  auto traits##_or = TraitsOf(v);                                             \
  if (!traits##_or.ok()) {                                                    \
    (report).Fail(absl::StrCat("traits: ", traits##_or.status().ToString())); \
    return (report).Take();                                                   \
  }                                                                           \
  const TmigrTraits traits = *traits##_or

#define TMIGR_ISOLATED_OR_RETURN(report, f, ...)                         \
  auto f##_or = tmigr_internal::MakeIsolated(__VA_ARGS__);               \
  if (!f##_or.ok()) {                                                    \
    (report).Fail(absl::StrCat("set-up: ", f##_or.status().ToString())); \
    return (report).Take();                                              \
  }                                                                      \
  Fixture& f = *f##_or

namespace {

// Bits of CPUs 1-3 in the level-0 groups.
bool AnyBitOf(const tmigr::HierarchySnapshot& s, std::initializer_list<int> cpus) {
  for (int c : cpus) {
    if ((s.group_of(c).state.active & s.cpu(c).groupmask) != 0) return true;
  }
  return false;
}

// Logs the isolation work items: "set N" / "clear N" / "noop N" (what the
// item did to CPU N's availability) in queue order, "flush" at each flush.
// A flush runs its batch in reverse queue order: the items are concurrent in
// the kernel, so an order that relies on queueing alone shows.
class WorkLoggingBackend : public RecordingBackend {
 public:
  explicit WorkLoggingBackend(int ncpus) : RecordingBackend(ncpus) {}
  tmigr::TimerMigration* tm = nullptr;
  std::vector<std::string> log;
  // For each "clear N": the available mask just before it ran.
  std::vector<std::string> available_before_clear;

  void QueueWork(int cpu, absl::AnyInvocable<void()> fn) override {
    log.push_back(absl::StrCat("queued ", cpu));
    batch_.push_back({cpu, std::move(fn), log.size() - 1});
  }
  void FlushWork() override {
    while (!batch_.empty()) {
      std::vector<Item> batch;
      batch.swap(batch_);
      for (auto it = batch.rbegin(); it != batch.rend(); ++it) {
        const bool before = tm->IsAvailable(it->cpu);
        const std::string mask = tm->AvailableMask().ToString();
        it->fn();
        const bool after = tm->IsAvailable(it->cpu);
        const char* what = before == after ? "noop" : (after ? "set" : "clear");
        log[it->slot] = absl::StrCat(what, " ", it->cpu);
        if (!after && before)
          available_before_clear.push_back(absl::StrCat("clear ", it->cpu, " with ", mask));
      }
    }
    log.push_back("flush");
  }

 private:
  struct Item {
    int cpu;
    absl::AnyInvocable<void()> fn;
    size_t slot;
  };
  std::vector<Item> batch_;
};

}  // namespace

// S18 boot isolation: 8 CPUs, isolcpus=domain,1-3, no nohz_full.
std::vector<std::string> CheckS18BootIsolation(const TmigrVariant& v) {
  Report r("S18");
  TMIGR_TRAITS_OR_RETURN(r, traits, v);
  {
    TMIGR_ISOLATED_OR_RETURN(r, before, v, 8, "isolcpus=domain,1-3", /*init=*/false);
    r.Eq(before.tm->AvailableMask().ToString(), std::string("0-7"), "S18a: before the late init");
  }
  TMIGR_ISOLATED_OR_RETURN(r, f, v, 8, "isolcpus=domain,1-3");
  if (traits.excludes_isolated_cpus) {
    r.Eq(f.tm->AvailableMask().ToString(), std::string("0,4-7"), "available after the late init");
    r.Eq(f.tm->Deactivate(2, 77), Nanos{77}, "isolated cpu 2 handles its own timer (deactivate)");
    r.Eq(f.tm->NewTimer(2, 66), Nanos{66}, "isolated cpu 2 handles its own timer (new timer)");
    r.Eq(f.tm->QuickCheck(1, 55), Nanos{55}, "isolated cpu 1's quick check");
    r.True(!f.tm->RequiresHandleRemote(1, 1000), "isolated cpu 1 never pulls");
    r.True(!AnyBitOf(f.snap(), {1, 2, 3}), "isolated CPUs in no active mask");
  } else {
    r.Eq(f.tm->AvailableMask().ToString(), std::string("0-7"), "every online CPU takes part");
  }
  r.Add(f.tm->CheckInvariants(), "end");
  return r.Take();
}

// S19 nohz_full: CPUs 1-3 domain-isolated and nohz_full stay available in
// every variant; when CPU 2 stops its tick a housekeeping CPU pulls it.
std::vector<std::string> CheckS19NohzFullStaysAvailable(const TmigrVariant& v) {
  Report r("S19");
  TMIGR_ISOLATED_OR_RETURN(r, f, v, 8, "isolcpus=domain,1-3 nohz_full=1-3");
  r.Eq(f.tm->AvailableMask().ToString(), std::string("0-7"), "available");
  for (int c = 3; c < 8; ++c) f.tm->Deactivate(c, kNanosMax);
  f.tm->Deactivate(1, kNanosMax);
  f.backend->next_global[2] = 100;
  f.tm->Deactivate(2, 100);  // tick stopped: idle in the hierarchy
  r.True(f.tm->RequiresHandleRemote(0, 100), "housekeeping cpu 0 required at 100");
  f.tm->HandleRemote(0, 100);
  r.Eq(f.backend->expired.size(), 1u, "remote expiries");
  if (f.backend->expired.size() == 1)
    r.True(f.backend->expired[0] == std::make_pair(2, 0), "cpu 0 pulled cpu 2");
  r.Add(f.tm->CheckInvariants(), "end");
  return r.Take();
}

// S20: nohz_full runs (tick CPU 0), exclude {0,1} via a cpuset: CPU 0 stays.
std::vector<std::string> CheckS20TickCpuStays(const TmigrVariant& v) {
  Report r("S20");
  TMIGR_TRAITS_OR_RETURN(r, traits, v);
  TMIGR_ISOLATED_OR_RETURN(r, f, v, 8, "nohz_full=2-7");
  r.Ok(f.tm->SetCpusetIsolated(CpuMask::Range(8, 0, 1)), "cpuset {0,1}");
  r.True(f.tm->IsAvailable(0), "tick cpu 0 stays available");
  r.Eq(f.tm->IsAvailable(1), !traits.excludes_isolated_cpus, "cpu 1 available");
  r.Add(f.tm->CheckInvariants(), "end");
  return r.Take();
}

std::vector<std::string> CheckS21Order(const std::vector<std::string>& log,
                                       bool flushes_unisolation_first) {
  Report r("S21 order");
  if (!flushes_unisolation_first) return r.Take();
  // Between a "set" and any later "clear" of the same exclusion, a flush.
  bool unflushed_set = false;
  for (const std::string& e : log) {
    if (e.rfind("set ", 0) == 0) unflushed_set = true;
    if (e == "flush") unflushed_set = false;
    if (e.rfind("clear ", 0) == 0 && unflushed_set) {
      r.Fail(absl::StrCat(
          "'", e, "' queued before the un-isolation was flushed: ", absl::StrJoin(log, "; ")));
      break;
    }
  }
  return r.Take();
}

namespace {
struct S21Run {
  std::vector<std::string> log;  // of the second exclusion
  std::vector<std::string> clears;
  std::vector<std::string> violations;
};

S21Run RunS21(const TmigrVariant& v, bool excludes) {
  S21Run out;
  Report r("S21");
  auto backend = std::make_unique<WorkLoggingBackend>(8);
  WorkLoggingBackend* log = backend.get();
  auto f = tmigr_internal::MakeIsolated(v, 8, "", true, std::move(backend));
  if (!f.ok()) {
    r.Fail(absl::StrCat("set-up: ", f.status().ToString()));
    out.violations = r.Take();
    return out;
  }
  log->tm = f->tm.get();
  r.Ok(f->tm->SetCpusetIsolated(CpuMask::Range(8, 2, 3)), "cpuset {2,3}");
  r.Eq(f->tm->AvailableMask().ToString(), std::string(excludes ? "0-1,4-7" : "0-7"),
       "available after {2,3}");
  log->log.clear();
  log->available_before_clear.clear();
  r.Ok(f->tm->SetCpusetIsolated(CpuMask::Range(8, 3, 4)), "cpuset {3,4}");
  r.Eq(f->tm->AvailableMask().ToString(), std::string(excludes ? "0-2,5-7" : "0-7"),
       "available after {3,4}");
  r.Add(f->tm->CheckInvariants(), "end");
  out.log = log->log;
  out.clears = log->available_before_clear;
  out.violations = r.Take();
  return out;
}
}  // namespace

std::vector<std::string> S21ExclusionLog(const TmigrVariant& v) {
  auto traits = TraitsOf(v);
  return RunS21(v, traits.ok() && traits->excludes_isolated_cpus).log;
}

// S21 cpuset change: exclude {2,3} -> {3,4}: CPU 2 available again, CPU 4
// unavailable, mask consistent; a variant that flushes un-isolation first
// makes CPU 2 available before CPU 4 leaves, even if the backend runs a
// flushed batch in any order.
std::vector<std::string> CheckS21CpusetChange(const TmigrVariant& v) {
  Report r("S21");
  TMIGR_TRAITS_OR_RETURN(r, traits, v);
  const S21Run run = RunS21(v, traits.excludes_isolated_cpus);
  std::vector<std::string> out = run.violations;
  if (traits.excludes_isolated_cpus) {
    for (const std::string& e : {std::string("set 2"), std::string("clear 4")}) {
      if (std::find(run.log.begin(), run.log.end(), e) == run.log.end()) {
        out.push_back(absl::StrCat("S21: no '", e, "' in ", absl::StrJoin(run.log, "; ")));
      }
    }
    if (traits.flushes_unisolation_first) {
      for (const std::string& c : run.clears) {
        if (c.rfind("clear 4 with ", 0) == 0 && c != "clear 4 with 0-2,4-7") {
          out.push_back(absl::StrCat("S21: CPU 2 not available before CPU 4 left: ", c));
        }
      }
    }
    for (std::string& e : CheckS21Order(run.log, traits.flushes_unisolation_first))
      out.push_back(std::move(e));
  }
  return out;
}

std::vector<std::string> CheckS21BootIsolatedStayOut(const TmigrVariant& v) {
  Report r("S21 boot");
  TMIGR_TRAITS_OR_RETURN(r, traits, v);
  TMIGR_ISOLATED_OR_RETURN(r, f, v, 8, "isolcpus=domain,1-3");
  r.Ok(f.tm->SetCpusetIsolated(CpuMask::Of(8, 5)), "cpuset {5}");
  r.Eq(f.tm->AvailableMask().ToString(),
       std::string(traits.excludes_isolated_cpus ? "0,4,6-7" : "0-7"),
       "boot-isolated CPUs stay out of the un-isolate step");
  r.Add(f.tm->CheckInvariants(), "end");
  return r.Take();
}

// S22 offline/online of an isolated CPU: still unavailable after coming back.
std::vector<std::string> CheckS22OfflineOnlineIsolated(const TmigrVariant& v) {
  Report r("S22");
  TMIGR_TRAITS_OR_RETURN(r, traits, v);
  TMIGR_ISOLATED_OR_RETURN(r, f, v, 8, "isolcpus=domain,1-3");
  f.tm->TakeDownCpu(2);
  r.Ok(f.tm->BringUpCpu(2), "bring cpu 2 back");
  r.Eq(f.tm->IsAvailable(2), !traits.excludes_isolated_cpus, "cpu 2 available after coming back");
  r.Add(f.tm->CheckInvariants(), "end");
  return r.Take();
}

// S22 for a CPU of an isolated cpuset partition: the isolation predicate's
// cpuset term keeps it out when it comes back online.
std::vector<std::string> CheckS22CpusetIsolatedStaysOutOnHotplug(const TmigrVariant& v) {
  Report r("S22 cpuset");
  TMIGR_TRAITS_OR_RETURN(r, traits, v);
  TMIGR_ISOLATED_OR_RETURN(r, f, v, 8, "");
  r.Ok(f.tm->SetCpusetIsolated(CpuMask::Of(8, 5)), "cpuset {5}");
  r.Eq(f.tm->IsAvailable(5), !traits.excludes_isolated_cpus, "cpu 5 available in the cpuset");
  f.tm->TakeDownCpu(5);
  r.Ok(f.tm->BringUpCpu(5), "bring cpu 5 back");
  r.Eq(f.tm->IsAvailable(5), !traits.excludes_isolated_cpus, "cpu 5 available after coming back");
  r.Eq(f.tm->IsIsolated(5), traits.excludes_isolated_cpus, "cpu 5 isolated (tmigr_is_isolated)");
  r.Add(f.tm->CheckInvariants(), "end");
  return r.Take();
}

// S23 (HK-ENFORCE lives in IsolationConfig): the rule leaves an available CPU.
std::vector<std::string> CheckS23HousekeepingRule(const TmigrVariant& v) {
  Report r("S23");
  TMIGR_ISOLATED_OR_RETURN(r, f, v, 8, "nohz_full=1-7 isolcpus=domain,0");
  r.True(!f.tm->AvailableMask().Empty(), "an available CPU");
  r.Add(f.tm->CheckInvariants(), "end");
  return r.Take();
}

// ---------------------------------------------------------------------------
// The suite
// ---------------------------------------------------------------------------
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(TmigrIsolation);
TEST_P(TmigrIsolation, S18_BootIsolation) { tmigr_conformance::RunAsTest(GetParam()); }
TEST_P(TmigrIsolation, S19_NohzFullStaysAvailable) { tmigr_conformance::RunAsTest(GetParam()); }
TEST_P(TmigrIsolation, S20_TickCpuStays) { tmigr_conformance::RunAsTest(GetParam()); }
TEST_P(TmigrIsolation, S21_CpusetChange) { tmigr_conformance::RunAsTest(GetParam()); }
TEST_P(TmigrIsolation, S21_BootIsolatedStayOut) { tmigr_conformance::RunAsTest(GetParam()); }
TEST_P(TmigrIsolation, S22_OfflineOnlineIsolated) { tmigr_conformance::RunAsTest(GetParam()); }
TEST_P(TmigrIsolation, S22_CpusetIsolatedStaysOutOnHotplug) {
  tmigr_conformance::RunAsTest(GetParam());
}
TEST_P(TmigrIsolation, S23_HousekeepingRule) { tmigr_conformance::RunAsTest(GetParam()); }

int TmigrIsolationAnchor() { return 1; }

}  // namespace isolation::testing
