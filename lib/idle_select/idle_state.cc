// SPDX-License-Identifier: GPL-2.0-or-later
// The shared core of idle_select: topology, per-CPU / per-LLC state and the
// entry points the kernel calls on idle transitions, ticks and rebuilds.
// Every entry point updates the shared state and hands over to the selector
// chosen at creation (IdleSelector hooks); none looks at which one it is.

#include <algorithm>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "idle_select/state_internal.h"
#include "isolation/idle_select/idle_select.h"

namespace isolation::idle_select {

// update_idle_cpu_scan() (kernel/sched/fair.c), integer form of the SIS_UTIL
// formula (docs/idle_select.md).
int SisUtilBudget(int64_t sum_util, int llc_weight, int imbalance_pct) {
  if (llc_weight <= 0 || sum_util < 0) return 0;
  const int64_t x = sum_util / llc_weight;
  const int64_t pct = imbalance_pct;
  // x^2 * pct^2 saturates (a huge utilisation means "no budget", never UB).
  int64_t prod = 0;
  int64_t t = kSchedCapacityScale;
  if (!__builtin_mul_overflow(x, x, &prod) && !__builtin_mul_overflow(prod, pct * pct, &prod)) {
    t = std::min<int64_t>(prod / (10000 * int64_t{kSchedCapacityScale}), kSchedCapacityScale);
  }
  const int64_t y = kSchedCapacityScale - t;
  return static_cast<int>(y * llc_weight / kSchedCapacityScale);
}

// ----------------------------------------------------------------------------
// IdleTopology
// ----------------------------------------------------------------------------

void IdleTopology::ApplyDomainIsolation(const CpuMask& isolated) {
  ISOLATION_CONTRACT(isolated.nbits() == num_cpus,
                     "idle topology: isolated mask of %d bits for %d cpus", isolated.nbits(),
                     num_cpus);
  // update_top_cache_domain(): a CPU outside every domain has no sd_llc and
  // is its own (size 1) LLC; we encode that as llc_of == -1.
  domain_isolated = isolated;
  llc_span.assign(hw_llc_span.size(), CpuMask(num_cpus));
  for (int cpu = 0; cpu < num_cpus; ++cpu) {
    const auto c = static_cast<size_t>(cpu);
    const bool in_domain = online.Test(cpu) && !isolated.Test(cpu);
    llc_of[c] = in_domain ? hw_llc_of[c] : -1;
    if (in_domain) llc_span[static_cast<size_t>(hw_llc_of[c])].Set(cpu);
  }
}

absl::StatusOr<IdleTopology> IdleTopology::FromIds(const std::vector<int>& llc_of,
                                                   const std::vector<int>& core_of,
                                                   const std::vector<int>& node_of,
                                                   const CpuMask& domain_isolated,
                                                   const CpuMask& boot_domain_isolated) {
  const size_t n = llc_of.size();
  if (n == 0 || n > static_cast<size_t>(kMaxCpus) || core_of.size() != n || node_of.size() != n) {
    return absl::InvalidArgumentError(absl::StrCat("idle topology: id vectors of sizes ", n, ", ",
                                                   core_of.size(), ", ", node_of.size(),
                                                   " (need equal, 1..", kMaxCpus, ")"));
  }
  // An isolation mask of another size was dropped silently: name it.
  for (const auto& [mask, what] : {std::pair{&domain_isolated, "domain_isolated"},
                                   std::pair{&boot_domain_isolated, "boot_domain_isolated"}}) {
    if (mask->nbits() != 0 && static_cast<size_t>(mask->nbits()) != n) {
      return absl::InvalidArgumentError(absl::StrCat("idle topology: ", what, " mask of ",
                                                     mask->nbits(), " bits for ", n, " CPUs (want ",
                                                     n, " bits, or empty for none)"));
    }
  }
  IdleTopology t;
  t.num_cpus = static_cast<int>(n);
  const int nbits = t.num_cpus;
  auto dense = [&](const std::vector<int>& ids, const char* what) -> absl::StatusOr<int> {
    int max_id = -1;
    for (int id : ids) {
      // Dense ids are below the CPU count; checked before `seen` is sized.
      if (id < 0 || static_cast<size_t>(id) >= n) {
        return absl::InvalidArgumentError(
            absl::StrCat("idle topology: ", what, " id ", id, " outside [0, ", n, ")"));
      }
      max_id = std::max(max_id, id);
    }
    std::vector<bool> seen(static_cast<size_t>(max_id + 1), false);
    for (int id : ids) seen[static_cast<size_t>(id)] = true;
    for (int i = 0; i <= max_id; ++i) {
      if (!seen[static_cast<size_t>(i)]) {
        return absl::InvalidArgumentError(
            absl::StrCat("idle topology: ", what, " id ", i, " unused (ids must be dense)"));
      }
    }
    return max_id + 1;
  };
  auto nllc = dense(llc_of, "llc");
  if (!nllc.ok()) return nllc.status();
  auto ncore = dense(core_of, "core");
  if (!ncore.ok()) return ncore.status();
  auto nnode = dense(node_of, "node");
  if (!nnode.ok()) return nnode.status();
  t.hw_llc_of = llc_of;
  t.core_of = core_of;
  t.node_of = node_of;
  t.hw_llc_span.assign(static_cast<size_t>(*nllc), CpuMask(nbits));
  t.smt_mask.assign(static_cast<size_t>(*ncore), CpuMask(nbits));
  t.node_span.assign(static_cast<size_t>(*nnode), CpuMask(nbits));
  for (int cpu = 0; cpu < nbits; ++cpu) {
    const auto c = static_cast<size_t>(cpu);
    t.hw_llc_span[static_cast<size_t>(llc_of[c])].Set(cpu);
    t.smt_mask[static_cast<size_t>(core_of[c])].Set(cpu);
    t.node_span[static_cast<size_t>(node_of[c])].Set(cpu);
  }
  for (const auto& m : t.smt_mask) t.smt_width = std::max(t.smt_width, m.Weight());
  t.online = CpuMask::Full(nbits);
  t.llc_of.assign(n, -1);
  t.boot_domain_isolated =
      boot_domain_isolated.nbits() == nbits ? boot_domain_isolated : CpuMask(nbits);
  CpuMask iso = domain_isolated.nbits() == nbits ? domain_isolated : CpuMask(nbits);
  iso.Or(t.boot_domain_isolated);
  t.ApplyDomainIsolation(iso);
  return t;
}

IdleTopology IdleTopology::From(const Topology& topology, const IsolationConfig& isolation) {
  const int n = topology.num_cpus();
  std::vector<int> llc(static_cast<size_t>(n)), core(static_cast<size_t>(n)),
      node(static_cast<size_t>(n));
  for (int cpu = 0; cpu < n; ++cpu) {
    llc[static_cast<size_t>(cpu)] = topology.llc_of(cpu);
    core[static_cast<size_t>(cpu)] = topology.core_of(cpu);
    node[static_cast<size_t>(cpu)] = topology.node_of(cpu);
  }
  ISOLATION_CONTRACT(isolation.num_cpus() == n,
                     "idle topology: an isolation configuration of %d cpus for %d cpus",
                     isolation.num_cpus(), n);
  // The Topology already has dense ids; FromIds cannot fail on it, nor on
  // masks of its size (another size: no isolation, as before the check).
  const bool sized = isolation.num_cpus() == n;
  IdleTopology t = *FromIds(llc, core, node, sized ? isolation.DomainIsolated() : CpuMask(),
                            sized ? isolation.isolcpus_domain() : CpuMask());
  t.online = topology.online();
  for (auto& s : t.node_span) s.And(t.online);
  t.ApplyDomainIsolation(t.domain_isolated);
  return t;
}

absl::StatusOr<IdleTopology> IdleTopology::Uniform(int llcs, int cores_per_llc, int smt,
                                                   int nodes) {
  // Each factor is >= 1 and the product is checked a step at a time, so no
  // product of ints can overflow int64 before it is compared.
  if (llcs < 1 || cores_per_llc < 1 || smt < 1 || nodes < 1 || nodes > llcs ||
      int64_t{llcs} * cores_per_llc > kMaxCpus || int64_t{llcs} * cores_per_llc * smt > kMaxCpus) {
    return absl::InvalidArgumentError(absl::StrCat(
        "idle topology: Uniform(llcs=", llcs, ", cores_per_llc=", cores_per_llc, ", smt=", smt,
        ", nodes=", nodes, "): need counts >= 1, nodes <= llcs and at most ", kMaxCpus, " cpus"));
  }
  const int n = llcs * cores_per_llc * smt;
  std::vector<int> llc(static_cast<size_t>(n)), core(static_cast<size_t>(n)),
      node(static_cast<size_t>(n));
  const int llcs_per_node = std::max(1, llcs / std::max(1, nodes));
  for (int cpu = 0; cpu < n; ++cpu) {
    const int c = cpu / smt;
    const int l = c / cores_per_llc;
    llc[static_cast<size_t>(cpu)] = l;
    core[static_cast<size_t>(cpu)] = c;
    node[static_cast<size_t>(cpu)] = std::min(l / llcs_per_node, std::max(1, nodes) - 1);
  }
  return FromIds(llc, core, node);
}

absl::Status IdleTopology::Validate() const {
  auto bad = [](auto... parts) {
    return absl::InvalidArgumentError(absl::StrCat("idle topology: ", parts...));
  };
  if (num_cpus < 1 || num_cpus > kMaxCpus)
    return bad("num_cpus ", num_cpus, " outside [1, ", kMaxCpus, "]");
  const auto n = static_cast<size_t>(num_cpus);
  const std::pair<const char*, size_t> per_cpu[] = {{"hw_llc_of", hw_llc_of.size()},
                                                    {"llc_of", llc_of.size()},
                                                    {"core_of", core_of.size()},
                                                    {"node_of", node_of.size()}};
  for (const auto& [name, size] : per_cpu) {
    if (size != n) return bad(name, " has ", size, " entries for ", num_cpus, " cpus");
  }
  if (llc_span.size() != hw_llc_span.size() || hw_llc_span.empty() || smt_mask.empty() ||
      node_span.empty()) {
    return bad("span vectors of sizes hw_llc ", hw_llc_span.size(), ", llc ", llc_span.size(),
               ", smt ", smt_mask.size(), ", node ", node_span.size(),
               " (need non-empty, llc == hw_llc)");
  }
  for (size_t c = 0; c < n; ++c) {
    if (hw_llc_of[c] < 0 || static_cast<size_t>(hw_llc_of[c]) >= hw_llc_span.size()) {
      return bad("cpu ", c, " has hw_llc id ", hw_llc_of[c], " outside [0, ", hw_llc_span.size(),
                 ")");
    }
    if (llc_of[c] < -1 || llc_of[c] >= static_cast<int>(llc_span.size())) {
      return bad("cpu ", c, " has llc id ", llc_of[c], " outside [-1, ", llc_span.size(), ")");
    }
    if (core_of[c] < 0 || static_cast<size_t>(core_of[c]) >= smt_mask.size()) {
      return bad("cpu ", c, " has core id ", core_of[c], " outside [0, ", smt_mask.size(), ")");
    }
    if (node_of[c] < 0 || static_cast<size_t>(node_of[c]) >= node_span.size()) {
      return bad("cpu ", c, " has node id ", node_of[c], " outside [0, ", node_span.size(), ")");
    }
  }
  for (const auto* masks : {&hw_llc_span, &llc_span, &smt_mask, &node_span}) {
    for (const CpuMask& m : *masks) {
      if (m.nbits() != num_cpus)
        return bad("a span mask has ", m.nbits(), " bits for ", num_cpus, " cpus");
    }
  }
  for (const CpuMask* m : {&online, &domain_isolated, &boot_domain_isolated}) {
    if (m->nbits() != num_cpus)
      return bad("online/isolated mask of ", m->nbits(), " bits for ", num_cpus, " cpus");
  }
  if (smt_width < 1) return bad("smt_width ", smt_width, " < 1");
  return absl::OkStatus();
}

// ----------------------------------------------------------------------------
// IdleState
// ----------------------------------------------------------------------------

namespace internal {
CpuMask& ScratchMask(int which, int nbits) {
  thread_local CpuMask masks[4];
  CpuMask& m = masks[which & 3];
  if (m.nbits() != nbits) m = CpuMask(nbits);
  return m;
}
}  // namespace internal

IdleState::IdleState(IdleTopology topology, Options options)
    : topo_(std::move(topology)), options_(std::move(options)) {
  const int n = topo_.num_cpus;
  for (int cpu = 0; cpu < n; ++cpu) {
    cpus_.push_back(std::make_unique<CpuIdleState>());
    cpus_.back()->in_domain.store(topo_.llc_of[static_cast<size_t>(cpu)] >= 0 ? 1 : 0,
                                  std::memory_order_relaxed);
  }
  for (size_t l = 0; l < topo_.llc_span.size(); ++l) llcs_.push_back(std::make_unique<LlcShared>());
}

IdleState::~IdleState() = default;

absl::StatusOr<std::unique_ptr<IdleState>> IdleState::Create(absl::StatusOr<IdleTopology> topology,
                                                             Options options) {
  if (!topology.ok()) return topology.status();
  return Create(*std::move(topology), std::move(options));
}

namespace {
absl::Status ValidateOptions(const IdleTopology& topology, const Options& options) {
  if (absl::Status st = topology.Validate(); !st.ok()) return st;
  if (options.v3_max_probes < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("idle_select: v3_max_probes ", options.v3_max_probes, " (must be >= 1)"));
  }
  return absl::OkStatus();
}
}  // namespace

absl::StatusOr<std::unique_ptr<IdleState>> IdleState::Create(IdleTopology topology,
                                                             Options options) {
  if (absl::Status st = ValidateOptions(topology, options); !st.ok()) return st;
  absl::StatusOr<const SelectorEntry*> entry = FindSelector(options.variant.str());
  if (!entry.ok()) return absl::InvalidArgumentError(entry.status().message());
  options.variant = (*entry)->name;  // the registered spelling ("v4" -> "V4g")
  return Finish(std::unique_ptr<IdleState>(new IdleState(std::move(topology), std::move(options))),
                (*entry)->factory);
}

absl::StatusOr<std::unique_ptr<IdleState>> IdleState::Create(
    IdleTopology topology, Options options, const std::function<SelectorFactoryFn>& factory) {
  if (absl::Status st = ValidateOptions(topology, options); !st.ok()) return st;
  if (!factory)
    return absl::InvalidArgumentError("idle_select: Create with an empty selector factory");
  return Finish(std::unique_ptr<IdleState>(new IdleState(std::move(topology), std::move(options))),
                factory);
}

absl::StatusOr<std::unique_ptr<IdleState>> IdleState::Finish(
    std::unique_ptr<IdleState> state, const std::function<SelectorFactoryFn>& factory) {
  absl::StatusOr<std::unique_ptr<IdleSelector>> selector = factory(*state);
  if (!selector.ok()) return selector.status();
  if (*selector == nullptr) {
    return absl::InternalError(absl::StrCat("idle_select: the factory of selector '",
                                            state->selector_name(), "' returned null"));
  }
  state->selector_ = *std::move(selector);
  // sd_init() for the initial domains; every LLC starts with a full budget.
  (void)state->Rebuild(state->topo_.domain_isolated);  // sized by Validate(): cannot fail
  for (auto& llc : state->llcs_) llc->nr_idle_scan.store(llc->weight, std::memory_order_relaxed);
  return state;
}

absl::Status IdleState::Rebuild(const CpuMask& domain_isolated) {
  if (domain_isolated.nbits() != 0 && domain_isolated.nbits() != topo_.num_cpus) {
    return absl::InvalidArgumentError(absl::StrCat("idle_select: Rebuild with an isolated mask of ",
                                                   domain_isolated.nbits(), " bits for ",
                                                   topo_.num_cpus, " cpus"));
  }
  CpuMask iso = domain_isolated.nbits() == 0 ? CpuMask(topo_.num_cpus) : domain_isolated;
  iso.Or(topo_.boot_domain_isolated);
  topo_.ApplyDomainIsolation(iso);
  for (size_t l = 0; l < llcs_.size(); ++l) {
    LlcShared& llc = *llcs_[l];
    llc.weight = topo_.llc_span[l].Weight();
    // sd_init(): the hint cleared, the budget no larger than the new span.
    llc.has_idle_cores.store(0, std::memory_order_relaxed);
    if (llc.nr_idle_scan.load(std::memory_order_relaxed) > llc.weight) {
      llc.nr_idle_scan.store(llc.weight, std::memory_order_relaxed);
    }
  }
  for (int cpu = 0; cpu < topo_.num_cpus; ++cpu) {
    cpus_[static_cast<size_t>(cpu)]->in_domain.store(
        topo_.llc_of[static_cast<size_t>(cpu)] >= 0 ? 1 : 0, std::memory_order_relaxed);
  }
  // The selector's masks (V1: the span, V5: empty; per-CPU state such as
  // last_idle_state is the selector's to keep or reset).
  selector_->OnRebuild();
  return absl::OkStatus();
}

bool IdleState::IdleCpu(int cpu) const { return internal::IdleCpu(*this, cpu); }
bool IdleState::AvailableIdleCpu(int cpu) const { return internal::AvailableIdleCpu(*this, cpu); }
bool IdleState::SchedIdleCpu(int cpu) const { return internal::SchedIdleCpu(*this, cpu); }

int IdleState::nr_idle_scan(int llc) const {
  return IdleStateAccess::Llc(*this, llc).nr_idle_scan.load(std::memory_order_relaxed);
}
bool IdleState::has_idle_cores(int llc) const {
  return IdleStateAccess::Llc(*this, llc).has_idle_cores.load(std::memory_order_relaxed) != 0;
}
void IdleState::ClearIdleCores(int llc) {
  IdleStateAccess::Llc(*this, llc).has_idle_cores.store(0, std::memory_order_relaxed);
}

// __update_idle_core(): set has_idle_cores when every other sibling is idle.
void IdleState::UpdateIdleCore(int cpu) {
  const int l = llc_of(cpu);
  if (l < 0 || topo_.smt_width < 2) return;
  LlcShared& llc = *llcs_[static_cast<size_t>(l)];
  if (llc.has_idle_cores.load(std::memory_order_relaxed) != 0) return;
  for (int sib : topo_.siblings(cpu)) {
    if (sib == cpu) continue;
    if (!internal::AvailableIdleCpu(*this, sib)) return;
  }
  llc.has_idle_cores.store(1, std::memory_order_relaxed);
  CountSharedWrite(cpu);
}

void IdleState::CountSharedWrite(int cpu) {
  // Owner-only counter: relaxed (read when quiescent).
  cpus_[CpuIndex(cpu)]->shared_writes.fetch_add(1, std::memory_order_relaxed);
}

void IdleState::IdleEnter(int cpu) {
  cpus_[CpuIndex(cpu)]->curr_is_idle.store(1, std::memory_order_relaxed);
  selector_->OnIdleEnter(cpu);
}

void IdleState::IdleExit(int cpu) {
  cpus_[CpuIndex(cpu)]->curr_is_idle.store(0, std::memory_order_relaxed);
  selector_->OnIdleExit(cpu);
}

void IdleState::IdleRefresh(int cpu) {
  (void)CpuIndex(cpu);
  selector_->OnIdleRefresh(cpu);
}

void IdleState::Tick(int cpu) {
  (void)CpuIndex(cpu);
  selector_->OnTick(cpu);
}

void IdleState::TickStop(int cpu) {
  cpus_[CpuIndex(cpu)]->tick_stopped.store(1, std::memory_order_relaxed);
  selector_->OnTickStop(cpu);
}

void IdleState::TickRestart(int cpu) {
  cpus_[CpuIndex(cpu)]->tick_stopped.store(0, std::memory_order_relaxed);
}

void IdleState::Enqueue(int cpu, bool sched_idle) {
  CpuIdleState& s = *cpus_[CpuIndex(cpu)];
  s.nr_running.fetch_add(1, std::memory_order_relaxed);
  if (sched_idle) s.nr_sched_idle.fetch_add(1, std::memory_order_relaxed);
  s.ttwu_pending.store(0, std::memory_order_relaxed);
}

void IdleState::Dequeue(int cpu, bool sched_idle) {
  CpuIdleState& s = *cpus_[CpuIndex(cpu)];
  s.nr_running.fetch_sub(1, std::memory_order_relaxed);
  if (sched_idle) s.nr_sched_idle.fetch_sub(1, std::memory_order_relaxed);
}

void IdleState::SetNrRunning(int cpu, int nr_running) {
  cpus_[CpuIndex(cpu)]->nr_running.store(nr_running, std::memory_order_relaxed);
}

void IdleState::SetNrSchedIdle(int cpu, int nr_sched_idle) {
  cpus_[CpuIndex(cpu)]->nr_sched_idle.store(nr_sched_idle, std::memory_order_relaxed);
}

void IdleState::SetWakePending(int cpu, bool pending) {
  cpus_[CpuIndex(cpu)]->ttwu_pending.store(pending ? 1 : 0, std::memory_order_relaxed);
}

absl::Status IdleState::UpdateIdleCpuScan(int l, int64_t sum_util) {
  if (l < 0 || l >= num_llcs()) {
    return absl::InvalidArgumentError(absl::StrCat("idle_select: UpdateIdleCpuScan of llc ", l,
                                                   " outside [0, ", num_llcs(), ")"));
  }
  LlcShared& llc = *llcs_[static_cast<size_t>(l)];
  const int nr = SisUtilBudget(sum_util, llc.weight);
  // Compare before store: the field shares a line every waker reads (I12).
  if (llc.nr_idle_scan.load(std::memory_order_relaxed) != nr) {
    llc.nr_idle_scan.store(nr, std::memory_order_relaxed);
    llc.budget_stores.fetch_add(1, std::memory_order_relaxed);
  }
  return absl::OkStatus();
}

absl::Status IdleState::SetBudget(int l, int nr_idle_scan) {
  if (l < 0 || l >= num_llcs() || nr_idle_scan < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("idle_select: SetBudget(llc ", l, ", nr_idle_scan ", nr_idle_scan,
                     "): llc outside [0, ", num_llcs(), ") or negative budget"));
  }
  llcs_[static_cast<size_t>(l)]->nr_idle_scan.store(nr_idle_scan, std::memory_order_relaxed);
  return absl::OkStatus();
}

absl::Status IdleState::SetIdleCoresHint(int l, bool has_idle_cores) {
  if (l < 0 || l >= num_llcs()) {
    return absl::InvalidArgumentError(
        absl::StrCat("idle_select: SetIdleCoresHint of llc ", l, " outside [0, ", num_llcs(), ")"));
  }
  llcs_[static_cast<size_t>(l)]->has_idle_cores.store(has_idle_cores ? 1 : 0,
                                                      std::memory_order_relaxed);
  return absl::OkStatus();
}

CpuSnapshot IdleState::cpu(int cpu) const {
  const CpuIdleState& s = *cpus_[CpuIndex(cpu)];
  CpuSnapshot out;
  out.curr_is_idle = s.curr_is_idle.load(std::memory_order_relaxed) != 0;
  out.ttwu_pending = s.ttwu_pending.load(std::memory_order_relaxed) != 0;
  out.tick_stopped = s.tick_stopped.load(std::memory_order_relaxed) != 0;
  out.in_domain = s.in_domain.load(std::memory_order_relaxed) != 0;
  out.nr_running = s.nr_running.load(std::memory_order_relaxed);
  out.nr_sched_idle = s.nr_sched_idle.load(std::memory_order_relaxed);
  out.shared_writes = s.shared_writes.load(std::memory_order_relaxed);
  return out;
}

LlcSnapshot IdleState::llc(int id) const {
  const LlcShared& l = *llcs_[IdIndex(id, llcs_.size(), "llc")];
  LlcSnapshot out;
  out.span = topo_.llc_span[static_cast<size_t>(id)];
  out.weight = l.weight;
  out.has_idle_cores = l.has_idle_cores.load(std::memory_order_relaxed) != 0;
  out.nr_idle_scan = l.nr_idle_scan.load(std::memory_order_relaxed);
  out.budget_stores = l.budget_stores.load(std::memory_order_relaxed);
  return out;
}

std::vector<MaskSnapshot> IdleState::SelectorMasks() const { return selector_->Masks(); }

CpuMask IdleState::SelectorMask(std::string_view name, int scope) const {
  for (MaskSnapshot& m : selector_->Masks()) {
    if (m.name == name && m.scope == scope) return std::move(m.cpus);
  }
  return CpuMask();
}

int64_t IdleState::TotalSharedWrites() const {
  int64_t n = 0;
  for (const auto& c : cpus_) n += c->shared_writes.load(std::memory_order_relaxed);
  for (const auto& l : llcs_) n += l->budget_stores.load(std::memory_order_relaxed);
  return n;
}

std::string IdleState::CheckSubsetInvariant() const { return selector_->CheckQuiescent(); }

}  // namespace isolation::idle_select
