// SPDX-License-Identifier: GPL-2.0-or-later
// mm_cid on a recorded kernel: every registered variant (AllVariants(), plus
// NegativeControlVariants() when asked) runs behind its ordinary hooks
// adapter (MmCidHooks), and at each rseq:rseq_update -- the ID the kernel
// gave the thread on its way back to user space -- the ID each variant's
// model holds for that thread is set beside the kernel's.
//
// Only mms the recording saw created (a fork without CLONE_VM, an exec, or a
// CLONE_VM child of such a task) are modelled: the IDs of an mm that existed
// before the recording started depend on state the trace does not hold, so
// their rseq_updates are not judged.  That filter is exact for the modelled
// mms: IDs are per mm, and for mm A a switch to a task of another mm, a
// kernel thread or idle is the same switch away from A (switch_mm_cid()
// puts prev's ID either way), so the other tasks are delivered as idle.
// Affinity masks are not in a trace: every task is taken to allow every CPU
// (mm_cpus_allowed = all), which is wrong for a pinned workload (docs).

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/status_macros.h"
#include "experiments/replay_mechanisms.h"
#include "isolation/mm_cid/hooks.h"
#include "isolation/mm_cid/mm_cid.h"
#include "isolation/mm_cid/registry.h"

namespace isolation::experiments {
namespace {

using replay::Event;
using replay::EventKind;
using replay::ReplayDriver;

// Model capacity: tasks and mms of the recording that are modelled (their
// ids are not reused).  Past them, later mms are not modelled (counted).
// (ReplayExperimentOptions::mm_cid_tasks; mms: a quarter of it.)

// The variant of the recorded kernel's version (docs/mm_cid.md, "Variants").
std::string KernelVariantName(std::array<int, 2> v, std::string& note) {
  const int version = v[0] * 100 + v[1];
  if (version == 0) {
    note = "kernel version unknown: the kernel's variant is taken as v6.14-v6.18's";
    return "lazy+alloc_v6_14";
  }
  if (version < 603) return "";
  if (version == 603) return "v63_mmlock";
  if (version <= 612) return "lazy+alloc_v6_4";
  if (version == 613) {
    note = "6.13: taken as v6.13's allocator (6.13.5 and later carry v6.14's shrink fix)";
    return "lazy+alloc_v6_13";
  }
  if (version <= 618) return "lazy+alloc_v6_14";
  return "owner619";
}

// What every row counts from the IDs it reports at the rseq_updates.  The
// per-task state is a vector by model task id (dense); the set of (mm, ID)
// pairs is touched only when a thread's ID changes.
struct CidFigures {
  absl::flat_hash_set<int64_t> used;  // (mm << 32 | ID) seen
  int32_t largest = -1;
  int64_t changes = 0;  // a thread reported another ID than its last one
  int64_t threads = 0;
  std::vector<int32_t> last;  // model task -> last ID, kUnseen before its first
  static constexpr int32_t kUnseen = INT32_MIN;
  void Note(int mm, int32_t task, int32_t cid) {
    if (static_cast<size_t>(task) >= last.size())
      last.resize(static_cast<size_t>(task) + 1, kUnseen);
    int32_t& l = last[static_cast<size_t>(task)];
    if (l == cid) return;
    if (l == kUnseen) {
      ++threads;
    } else {
      ++changes;
    }
    l = cid;
    if (cid >= 0) used.insert((static_cast<int64_t>(mm) << 32) | static_cast<uint32_t>(cid));
    largest = std::max(largest, cid);
  }
};

struct MmCidRow {
  std::string name;
  bool kernel = false;
  bool negative_control = false;
  std::string error;  // the variant could not be built
  std::unique_ptr<mm_cid::MmCid> mech;
  std::unique_ptr<mm_cid::MmCidHooks> hooks;
  Agreement agreement;
  CidFigures figures;
};

class MmCidReplay final : public MechanismReplay, private Hooks {
 public:
  explicit MmCidReplay(const ReplaySetup& setup) : setup_(setup) {}

  absl::Status Build() {
    kernel_name_ = KernelVariantName(setup_.kernel_version, note_);
    std::string kernel_full;
    if (!kernel_name_.empty()) {
      absl::StatusOr<mm_cid::MmCidVariant> v = mm_cid::ParseVariant(kernel_name_);
      if (v.ok()) kernel_full = v->Name();
    }
    std::vector<mm_cid::MmCidVariant> variants = mm_cid::AllVariants();
    for (const mm_cid::MmCidVariant& v : mm_cid::NegativeControlVariants()) variants.push_back(v);
    std::vector<std::string> registered;
    for (const mm_cid::MmCidVariant& v : variants) registered.push_back(v.Name());
    // --mmcid_variants may use any spelling ParseVariant accepts.
    ReplayExperimentOptions canonical = *setup_.options;
    if (auto it = canonical.variants.find("mm_cid"); it != canonical.variants.end()) {
      for (std::string& name : it->second) {
        if (absl::StatusOr<mm_cid::MmCidVariant> v = mm_cid::ParseVariant(name); v.ok())
          name = v->Name();
      }
    }
    ReplaySetup canonical_setup = setup_;
    canonical_setup.options = &canonical;
    ISOLATION_ASSIGN_OR_RETURN(
        const RowFilter filter,
        RowFilter::Make(canonical_setup, "mm_cid", "mmcid_variants", registered));
    const int cpus = setup_.topology->num_cpus();
    for (const mm_cid::MmCidVariant& v : variants) {
      absl::StatusOr<mm_cid::VariantTraits> traits = mm_cid::DescribeVariant(v);
      const bool negative_control = traits.ok() && traits->negative_control;
      if (!filter.Wants(v.Name(), negative_control)) continue;
      auto row = std::make_unique<MmCidRow>();
      row->name = v.Name();
      row->kernel = row->name == kernel_full;
      row->negative_control = negative_control;
      absl::StatusOr<std::unique_ptr<mm_cid::MmCid>> m =
          mm_cid::MmCid::Create(cpus, v,
                                {.max_tasks = setup_.options->mm_cid_tasks,
                                 .max_mms = std::max(1, setup_.options->mm_cid_tasks / 4)});
      if (!m.ok()) {
        row->error = std::string(m.status().message());
      } else {
        row->mech = std::move(*m);
        // The adapter's invariant check after every n-th event (the kit checks
        // after every one; on a recording this is a spot check).
        mm_cid::MmCidHooks::Options ho;
        ho.check_every = setup_.options->check_every;
        row->hooks = std::make_unique<mm_cid::MmCidHooks>(*row->mech, ho);
      }
      rows_.push_back(std::move(row));
    }
    return absl::OkStatus();
  }

  std::string_view name() const override { return "mm_cid"; }

  absl::Status Attach(ReplayDriver& driver) override {
    driver_ = &driver;
    driver.AddHooks(this);
    driver.AddObserver(this);
    return absl::OkStatus();
  }

  // --- Hooks: the fan-out to every variant's adapter, in model task ids ----
  void OnStart(Driver& d) override {
    for (auto& r : rows_) {
      if (r->hooks) r->hooks->OnStart(d);
    }
  }
  void OnTick(CpuContext& ctx, TaskId curr) override {
    const TaskId m = Model(curr);
    for (auto& r : rows_) {
      if (r->hooks) r->hooks->OnTick(ctx, m);
    }
  }
  void OnContextSwitch(int cpu, TaskId prev, TaskId next, Nanos now) override {
    const TaskId p = Model(prev);
    const TaskId n = Model(next);
    if (p == kIdleTask && n == kIdleTask)
      return;  // neither is modelled: nothing changes for a modelled mm
    for (auto& r : rows_) {
      if (r->hooks) r->hooks->OnContextSwitch(cpu, p, n, now);
    }
  }
  void OnReturnToUser(CpuContext& ctx, TaskId task) override {
    const TaskId m = Model(task);
    if (m == kIdleTask) return;
    for (auto& r : rows_) {
      if (r->hooks) r->hooks->OnReturnToUser(ctx, m);
    }
  }
  void OnTaskFork(TaskId parent, TaskId child, int group, Nanos now) override {
    const replay::TaskInfo* t = driver_->Task(child);
    if (t == nullptr || !t->mm_known) return;
    if (next_task_ >= setup_.options->mm_cid_tasks) {
      ++over_capacity_;
      return;
    }
    auto [it, fresh] = model_mm_.try_emplace(group, next_mm_);
    if (fresh) {
      if (next_mm_ >= std::max(1, setup_.options->mm_cid_tasks / 4)) {
        model_mm_.erase(it);
        ++over_capacity_;
        return;
      }
      ++next_mm_;
    }
    const TaskId m = next_task_++;
    if (static_cast<size_t>(child) >= model_.size())
      model_.resize(static_cast<size_t>(child) + 1, kIdleTask);
    model_[static_cast<size_t>(child)] = m;
    mm_of_model_.push_back(it->second);
    const TaskId p = Model(parent);
    for (auto& r : rows_) {
      if (r->hooks) r->hooks->OnTaskFork(p, m, it->second, now);
    }
  }
  void OnTaskExit(int cpu, TaskId task, Nanos now) override {
    const TaskId m = Model(task);
    if (m == kIdleTask) return;
    for (auto& r : rows_) {
      if (r->hooks) r->hooks->OnTaskExit(cpu, m, now);
    }
  }
  void OnMigrate(TaskId task, int from, int to, Nanos now) override {
    const TaskId m = Model(task);
    if (m == kIdleTask) return;
    for (auto& r : rows_) {
      if (r->hooks) r->hooks->OnMigrate(m, from, to, now);
    }
  }

  // --- the kernel's decisions ----------------------------------------------
  void OnRecorded(const Event& e, ReplayDriver& driver) override {
    if (e.kind != EventKind::kRseqUpdate) return;
    ++rseq_updates_;
    const TaskId t = driver.CurrentTask(e.cpu);
    const TaskId m = Model(t);
    if (m == kIdleTask) {
      ++not_modelled_;
      return;
    }
    const int mm = mm_of_model_[static_cast<size_t>(m)];
    kernel_.Note(mm, m, e.value);
    if (!setup_.isolation_is_recorded) return;
    for (auto& r : rows_) {
      if (!r->mech) continue;
      const int32_t cid = r->mech->TaskCid(m);
      r->figures.Note(mm, m, cid);
      r->agreement.Judge(cid == e.value, setup_.options->disagreements, [&] {
        return absl::StrCat(DescribeEvent(e, driver), ": kernel ID ", e.value, ", model ID ", cid,
                            " (mm ", mm, ", ", r->mech->MmUsers(r->mech->TaskMm(m)), " users)");
      });
    }
  }

  void Report(const replay::ReadStats& stats, const ReplayDriver&, nlohmann::json& out,
              std::string& text, int64_t& violations) override {
    out["rseq_updates"] = rseq_updates_;
    out["rseq_updates_of_mms_predating_the_recording"] = not_modelled_;
    out["tasks_over_model_capacity"] = over_capacity_;
    out["kernel_variant"] = kernel_name_;
    if (!note_.empty()) out["notes"].push_back(note_);
    absl::StrAppend(&text, "mm_cid: ", rseq_updates_, " rseq_updates, ",
                    rseq_updates_ - not_modelled_,
                    " of threads whose mm the recording saw created (the others are not judged)\n");
    if (!note_.empty()) absl::StrAppend(&text, "  note: ", note_, "\n");
    std::vector<std::vector<std::string>> table;
    auto figures_row = [&](const std::string& label, const CidFigures& f, int64_t visits,
                           int64_t isolated_scans) {
      const int64_t threads = f.threads;
      return std::vector<std::string>{
          label,
          absl::StrCat(f.used.size()),
          absl::StrCat(f.largest),
          threads == 0 ? "-"
                       : absl::StrFormat(
                             "%.2f", static_cast<double>(f.changes) / static_cast<double>(threads)),
          visits < 0 ? "-" : absl::StrCat(visits),
          isolated_scans < 0 ? "-" : absl::StrCat(isolated_scans)};
    };
    table.push_back(figures_row("kernel (recorded)", kernel_, -1, -1));
    out["kernel"] = {{"cids_used", kernel_.used.size()},
                     {"largest_cid", kernel_.largest},
                     {"cid_changes", kernel_.changes},
                     {"threads", kernel_.threads}};
    nlohmann::json rows = nlohmann::json::array();
    for (auto& r : rows_) {
      nlohmann::json j{{"variant", r->name},
                       {"kernel_variant", r->kernel},
                       {"negative_control", r->negative_control}};
      if (!r->error.empty()) {
        j["error"] = r->error;
        rows.push_back(j);
        continue;
      }
      const int64_t v = r->hooks->violations();
      if (!r->negative_control) violations += v;
      j["cids_used"] = r->figures.used.size();
      j["largest_cid"] = r->figures.largest;
      j["cid_changes"] = r->figures.changes;
      j["compaction_visits"] = r->hooks->TotalVisits();
      j["scans"] = r->hooks->TotalScans();
      j["scans_on_isolated_cpus"] = r->hooks->ScansOnIsolatedCpus();
      j["invariant_violations"] = v;
      if (setup_.isolation_is_recorded) j["agreement"] = r->agreement.Json();
      rows.push_back(j);
      std::vector<std::string> cells =
          figures_row(absl::StrCat(r->name, r->kernel ? " [kernel]" : "",
                                   r->negative_control ? " (negative control)" : ""),
                      r->figures, r->hooks->TotalVisits(), r->hooks->ScansOnIsolatedCpus());
      cells.push_back(setup_.isolation_is_recorded ? r->agreement.Text() : "what-if: not compared");
      table.push_back(std::move(cells));
    }
    table[0].push_back(setup_.isolation_is_recorded ? "(the reference)" : "");
    out["rows"] = rows;
    absl::StrAppend(
        &text, TextTable({"variant", "cids used", "largest cid", "cid changes/thread",
                          "compaction visits", "scans on isolated", "agreement with the kernel"},
                         table));
    for (auto& r : rows_) {
      if (!r->kernel || !setup_.isolation_is_recorded) continue;
      out["agreement"] = r->agreement.Json();
      absl::StrAppend(&text, "  the kernel's variant (", r->name, "): ", r->agreement.Text(), "\n");
      for (const std::string& d : r->agreement.first_disagreements)
        absl::StrAppend(&text, "    ", d, "\n");
    }
    (void)stats;
  }

 private:
  TaskId Model(TaskId t) const {
    return t >= 0 && static_cast<size_t>(t) < model_.size() ? model_[static_cast<size_t>(t)]
                                                            : kIdleTask;
  }

  const ReplaySetup setup_;
  ReplayDriver* driver_ = nullptr;
  std::vector<std::unique_ptr<MmCidRow>> rows_;
  std::string kernel_name_;
  std::string note_;
  CidFigures kernel_;
  std::vector<TaskId> model_;               // driver task -> model task (kIdleTask: not modelled)
  std::vector<int> mm_of_model_;            // model task -> model mm (group)
  absl::flat_hash_map<int, int> model_mm_;  // driver mm -> model mm
  TaskId next_task_ = 0;
  int next_mm_ = 1;
  int64_t rseq_updates_ = 0;
  int64_t not_modelled_ = 0;
  int64_t over_capacity_ = 0;
};

}  // namespace

absl::StatusOr<std::unique_ptr<MechanismReplay>> MakeMmCidReplay(const ReplaySetup& setup) {
  auto r = std::make_unique<MmCidReplay>(setup);
  if (absl::Status s = r->Build(); !s.ok()) return s;
  return r;
}

}  // namespace isolation::experiments
