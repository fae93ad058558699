// SPDX-License-Identifier: GPL-2.0-or-later
// The shared core of idle_select: topology, per-CPU / per-LLC state and the
// entry points the kernel calls on idle transitions, ticks and rebuilds.

#include <algorithm>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "isolation/idle_select/idle_select.h"

namespace isolation::idle_select {

// update_idle_cpu_scan() (kernel/sched/fair.c), integer form of spec 2.5.
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

const std::vector<Variant>& AllVariants() {
  static const auto* all = new std::vector<Variant>{
      Variant::kV0, Variant::kV1, Variant::kV1Eager, Variant::kV1TickStop, Variant::kV1Unbounded,
      Variant::kV2, Variant::kV3, Variant::kV4Global, Variant::kV4Node,   Variant::kV5};
  return *all;
}

std::string_view VariantName(Variant v) {
  switch (v) {
    case Variant::kV0: return "V0";
    case Variant::kV1: return "V1";
    case Variant::kV1Eager: return "V1-eager";
    case Variant::kV1TickStop: return "V1-tickstop";
    case Variant::kV1Unbounded: return "V1-unbounded";
    case Variant::kV2: return "V2";
    case Variant::kV3: return "V3";
    case Variant::kV4Global: return "V4g";
    case Variant::kV4Node: return "V4n";
    case Variant::kV5: return "V5";
  }
  return "?";
}

absl::StatusOr<Variant> ParseVariant(std::string_view name) {
  if (name == "V4") return Variant::kV4Global;
  for (Variant v : AllVariants()) {
    if (VariantName(v) == name) return v;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown idle_select variant '", std::string(name),
                   "' (expected V0, V1, V1-eager, V1-tickstop, V1-unbounded, V2, V3, V4, V4g, "
                   "V4n or V5)"));
}

bool IsScxVariant(Variant v) { return v == Variant::kV4Global || v == Variant::kV4Node; }

bool HasV1ScanFloor(Variant v) {
  return v == Variant::kV1 || v == Variant::kV1Eager || v == Variant::kV1TickStop;
}

bool UsesIdleMask(Variant v) {
  switch (v) {
    case Variant::kV1:
    case Variant::kV1Eager:
    case Variant::kV1TickStop:
    case Variant::kV1Unbounded:
    case Variant::kV2:
    case Variant::kV3:
      return true;
    default:
      return false;
  }
}

// ----------------------------------------------------------------------------
// IdleTopology
// ----------------------------------------------------------------------------

void IdleTopology::ApplyDomainIsolation(const CpuMask& isolated) {
  ISOLATION_CONTRACT(isolated.nbits() == num_cpus, "idle topology: isolated mask of %d bits for %d cpus",
                     isolated.nbits(), num_cpus);
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
        return absl::InvalidArgumentError(absl::StrCat("idle topology: ", what, " id ", i, " unused (ids must be dense)"));
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
  std::vector<int> llc(static_cast<size_t>(n)), core(static_cast<size_t>(n)), node(static_cast<size_t>(n));
  for (int cpu = 0; cpu < n; ++cpu) {
    llc[static_cast<size_t>(cpu)] = topology.llc_of(cpu);
    core[static_cast<size_t>(cpu)] = topology.core_of(cpu);
    node[static_cast<size_t>(cpu)] = topology.node_of(cpu);
  }
  // The Topology already has dense ids; FromIds cannot fail on it.
  IdleTopology t = *FromIds(llc, core, node, isolation.DomainIsolated(), isolation.isolcpus_domain());
  t.online = topology.online();
  for (auto& s : t.node_span) s.And(t.online);
  t.ApplyDomainIsolation(t.domain_isolated);
  return t;
}

absl::StatusOr<IdleTopology> IdleTopology::Uniform(int llcs, int cores_per_llc, int smt, int nodes) {
  // Each factor is >= 1 and the product is checked a step at a time, so no
  // product of ints can overflow int64 before it is compared.
  if (llcs < 1 || cores_per_llc < 1 || smt < 1 || nodes < 1 || nodes > llcs ||
      int64_t{llcs} * cores_per_llc > kMaxCpus || int64_t{llcs} * cores_per_llc * smt > kMaxCpus) {
    return absl::InvalidArgumentError(absl::StrCat("idle topology: Uniform(llcs=", llcs, ", cores_per_llc=",
                                                   cores_per_llc, ", smt=", smt, ", nodes=", nodes,
                                                   "): need counts >= 1, nodes <= llcs and at most ", kMaxCpus,
                                                   " cpus"));
  }
  const int n = llcs * cores_per_llc * smt;
  std::vector<int> llc(static_cast<size_t>(n)), core(static_cast<size_t>(n)), node(static_cast<size_t>(n));
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
  auto bad = [](auto... parts) { return absl::InvalidArgumentError(absl::StrCat("idle topology: ", parts...)); };
  if (num_cpus < 1 || num_cpus > kMaxCpus) return bad("num_cpus ", num_cpus, " outside [1, ", kMaxCpus, "]");
  const auto n = static_cast<size_t>(num_cpus);
  const std::pair<const char*, size_t> per_cpu[] = {
      {"hw_llc_of", hw_llc_of.size()}, {"llc_of", llc_of.size()}, {"core_of", core_of.size()},
      {"node_of", node_of.size()}};
  for (const auto& [name, size] : per_cpu) {
    if (size != n) return bad(name, " has ", size, " entries for ", num_cpus, " cpus");
  }
  if (llc_span.size() != hw_llc_span.size() || hw_llc_span.empty() || smt_mask.empty() || node_span.empty()) {
    return bad("span vectors of sizes hw_llc ", hw_llc_span.size(), ", llc ", llc_span.size(), ", smt ",
               smt_mask.size(), ", node ", node_span.size(), " (need non-empty, llc == hw_llc)");
  }
  for (size_t c = 0; c < n; ++c) {
    if (hw_llc_of[c] < 0 || static_cast<size_t>(hw_llc_of[c]) >= hw_llc_span.size()) {
      return bad("cpu ", c, " has hw_llc id ", hw_llc_of[c], " outside [0, ", hw_llc_span.size(), ")");
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
      if (m.nbits() != num_cpus) return bad("a span mask has ", m.nbits(), " bits for ", num_cpus, " cpus");
    }
  }
  for (const CpuMask* m : {&online, &domain_isolated, &boot_domain_isolated}) {
    if (m->nbits() != num_cpus) return bad("online/isolated mask of ", m->nbits(), " bits for ", num_cpus, " cpus");
  }
  if (smt_width < 1) return bad("smt_width ", smt_width, " < 1");
  return absl::OkStatus();
}

// ----------------------------------------------------------------------------
// IdleState
// ----------------------------------------------------------------------------

CpuMask& ScratchMask(int which, int nbits) {
  thread_local CpuMask masks[4];
  CpuMask& m = masks[which & 3];
  if (m.nbits() != nbits) m = CpuMask(nbits);
  return m;
}

IdleState::IdleState(IdleTopology topology, Options options)
    : topo_(std::move(topology)), options_(options) {
  const int n = topo_.num_cpus;
  for (int cpu = 0; cpu < n; ++cpu) {
    cpus_.push_back(std::make_unique<CpuIdleState>());
    cpus_.back()->in_domain.store(topo_.llc_of[static_cast<size_t>(cpu)] >= 0 ? 1 : 0,
                                  std::memory_order_relaxed);
  }
  for (size_t l = 0; l < topo_.llc_span.size(); ++l) {
    auto llc = std::make_unique<LlcShared>();
    llc->idle_cpus.Reset(n);
    llc->overloaded.Reset(n);
    llcs_.push_back(std::move(llc));
  }
  const int scopes = options_.variant == Variant::kV4Node ? static_cast<int>(topo_.node_span.size()) : 1;
  for (int s = 0; s < scopes; ++s) {
    auto m = std::make_unique<ScxIdleMasks>();
    m->cpu.Reset(n);
    m->smt.Reset(n);
    scx_.push_back(std::move(m));
  }
  // scx_idle_enable(): masks reset to the online CPUs (every CPU starts idle).
  for (int cpu = 0; cpu < n; ++cpu) {
    if (!topo_.online.Test(cpu)) continue;
    ScxIdleMasks& m = *scx_[static_cast<size_t>(scx_scope_of(cpu))];
    m.cpu.Set(cpu);
    if (topo_.siblings(cpu).IsSubsetOf(topo_.online)) m.smt.Set(cpu);
  }
  (void)Rebuild(topo_.domain_isolated);  // sized by Validate(): cannot fail
  for (auto& llc : llcs_) llc->nr_idle_scan.store(llc->weight, std::memory_order_relaxed);
}

IdleState::~IdleState() = default;

absl::StatusOr<std::unique_ptr<IdleState>> IdleState::Create(absl::StatusOr<IdleTopology> topology,
                                                             Options options) {
  if (!topology.ok()) return topology.status();
  return Create(*std::move(topology), options);
}

absl::StatusOr<std::unique_ptr<IdleState>> IdleState::Create(IdleTopology topology, Options options) {
  if (absl::Status st = topology.Validate(); !st.ok()) return st;
  const auto& variants = AllVariants();
  if (std::find(variants.begin(), variants.end(), options.variant) == variants.end()) {
    return absl::InvalidArgumentError(
        absl::StrCat("idle_select: unknown variant ", static_cast<int>(options.variant)));
  }
  if (IsScxVariant(options.variant) && !topology.boot_domain_isolated.Empty()) {
    // scx_enable() refuses boot-time isolcpus=domain (9f391f94a173).
    return absl::FailedPreconditionError(absl::StrCat(
        "idle_select: variant ", std::string(VariantName(options.variant)),
        " (sched_ext) refuses to load with isolcpus=domain CPUs ",
        topology.boot_domain_isolated.ToString(), "; use an isolated cpuset partition instead"));
  }
  if (options.v3_max_probes < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("idle_select: v3_max_probes ", options.v3_max_probes, " (must be >= 1)"));
  }
  return std::unique_ptr<IdleState>(new IdleState(std::move(topology), options));
}

int IdleState::scx_scope_of(int cpu) const {
  const size_t c = CpuIndex(cpu);
  return options_.variant == Variant::kV4Node ? topo_.node_of[c] : 0;
}

absl::Status IdleState::Rebuild(const CpuMask& domain_isolated) {
  if (domain_isolated.nbits() != 0 && domain_isolated.nbits() != topo_.num_cpus) {
    return absl::InvalidArgumentError(absl::StrCat("idle_select: Rebuild with an isolated mask of ",
                                                   domain_isolated.nbits(), " bits for ", topo_.num_cpus, " cpus"));
  }
  CpuMask iso = domain_isolated.nbits() == 0 ? CpuMask(topo_.num_cpus) : domain_isolated;
  iso.Or(topo_.boot_domain_isolated);
  topo_.ApplyDomainIsolation(iso);
  for (size_t l = 0; l < llcs_.size(); ++l) {
    LlcShared& llc = *llcs_[l];
    llc.span = topo_.llc_span[l];
    llc.weight = llc.span.Weight();
    // sd_init(): V1 mask = the span ("all idle"), V5 = empty; hint cleared.
    llc.idle_cpus.Store(llc.span);
    llc.overloaded.ClearAll();
    llc.has_idle_cores.store(0, std::memory_order_relaxed);
    if (llc.nr_idle_scan.load(std::memory_order_relaxed) > llc.weight) {
      llc.nr_idle_scan.store(llc.weight, std::memory_order_relaxed);
    }
  }
  for (int cpu = 0; cpu < topo_.num_cpus; ++cpu) {
    CpuIdleState& s = *cpus_[static_cast<size_t>(cpu)];
    s.in_domain.store(topo_.llc_of[static_cast<size_t>(cpu)] >= 0 ? 1 : 0, std::memory_order_relaxed);
    // last_idle_state is per-CPU and NOT reset by the rebuild (spec 3.8,
    // S10) unless the fix option is on.
    if (options_.v1_reset_state_on_rebuild) s.last_idle_state = 1;
  }
  return absl::OkStatus();
}

bool IdleState::IdleCpu(int cpu) const {
  const CpuIdleState& s = cpu_state(cpu);
  // idle_cpu(): idle task current, nothing queued, no wakeup in flight.
  return s.curr_is_idle.load(std::memory_order_relaxed) != 0 &&
         s.nr_running.load(std::memory_order_relaxed) == 0 &&
         s.ttwu_pending.load(std::memory_order_relaxed) == 0;
}

bool IdleState::AvailableIdleCpu(int cpu) const {
  // available_idle_cpu(): vcpu_is_preempted() is always false in userspace.
  return IdleCpu(cpu);
}

bool IdleState::SchedIdleCpu(int cpu) const {
  const CpuIdleState& s = cpu_state(cpu);
  const int32_t nr = s.nr_running.load(std::memory_order_relaxed);
  return nr > 0 && nr == s.nr_sched_idle.load(std::memory_order_relaxed);
}

// update_idle_cpumask() of Aubrey Li's series (v8 form).
void IdleState::V1Update(int cpu, bool idle) {
  CpuIdleState& s = cpu_state(cpu);
  const uint8_t state = (idle || SchedIdleCpu(cpu)) ? 1 : 0;
  if (state == s.last_idle_state) return;  // I12: no write without change
  const int l = llc_of(cpu);
  if (l < 0) return;  // I13: no sd_llc, no shared write
  LlcShared& llc = *llcs_[static_cast<size_t>(l)];
  // Relaxed: a fresh per-CPU check always follows a mask read (I4).
  if (state) {
    llc.idle_cpus.Set(cpu);
  } else {
    llc.idle_cpus.Clear(cpu);
  }
  s.last_idle_state = state;
  s.shared_writes.fetch_add(1, std::memory_order_relaxed);
}

// __update_idle_core(): set has_idle_cores when every other sibling is idle.
void IdleState::UpdateIdleCore(int cpu) {
  const int l = llc_of(cpu);
  if (l < 0 || topo_.smt_width < 2) return;
  LlcShared& llc = *llcs_[static_cast<size_t>(l)];
  if (llc.has_idle_cores.load(std::memory_order_relaxed) != 0) return;
  for (int sib : topo_.siblings(cpu)) {
    if (sib == cpu) continue;
    if (!AvailableIdleCpu(sib)) return;
  }
  llc.has_idle_cores.store(1, std::memory_order_relaxed);
  cpu_state(cpu).shared_writes.fetch_add(1, std::memory_order_relaxed);
}

// update_builtin_idle() (ext_idle.c): cpu bit on both edges, smt = whole
// idle cores.  Port deviation: smt uses atomic word RMW (stricter than the
// kernel's plain word ops); writes are test-before-write.
void IdleState::ScxUpdateIdle(int cpu, bool idle) {
  ScxIdleMasks& m = *scx_[static_cast<size_t>(scx_scope_of(cpu))];
  CpuIdleState& s = cpu_state(cpu);
  const CpuMask& sibs = topo_.siblings(cpu);
  if (idle) {
    if (!m.cpu.Test(cpu)) {
      m.cpu.Set(cpu);
      s.shared_writes.fetch_add(1, std::memory_order_relaxed);
    }
    if (topo_.smt_width > 1 && options_.smt_preference) {
      bool whole = true;
      for (int sib : sibs) whole = whole && m.cpu.Test(sib);
      if (whole) {
        for (int sib : sibs) {
          if (!m.smt.Test(sib)) {
            m.smt.Set(sib);
            s.shared_writes.fetch_add(1, std::memory_order_relaxed);
          }
        }
      }
    } else if (topo_.smt_width == 1 && !m.smt.Test(cpu)) {
      m.smt.Set(cpu);  // without SMT every idle CPU is an idle core
    }
  } else {
    if (m.cpu.Test(cpu)) {
      m.cpu.Clear(cpu);
      s.shared_writes.fetch_add(1, std::memory_order_relaxed);
    }
    for (int sib : sibs) {
      if (m.smt.Test(sib)) {
        m.smt.Clear(sib);
        s.shared_writes.fetch_add(1, std::memory_order_relaxed);
      }
    }
  }
}

void IdleState::IdleEnter(int cpu) {
  CpuIdleState& s = cpu_state(cpu);
  s.curr_is_idle.store(1, std::memory_order_relaxed);
  if (options_.smt_preference && !IsScxVariant(options_.variant)) UpdateIdleCore(cpu);
  switch (options_.variant) {
    case Variant::kV1:
    case Variant::kV1Eager:
    case Variant::kV1Unbounded:
    case Variant::kV2:
    case Variant::kV3:
      V1Update(cpu, true);
      break;
    case Variant::kV1TickStop:
      if (s.tick_stopped.load(std::memory_order_relaxed)) V1Update(cpu, true);
      break;
    case Variant::kV4Global:
    case Variant::kV4Node:
      ScxUpdateIdle(cpu, true);
      break;
    default:
      break;
  }
}

void IdleState::IdleExit(int cpu) {
  CpuIdleState& s = cpu_state(cpu);
  s.curr_is_idle.store(0, std::memory_order_relaxed);
  if (options_.variant == Variant::kV1Eager) V1Update(cpu, false);
  if (IsScxVariant(options_.variant)) ScxUpdateIdle(cpu, false);
}

void IdleState::IdleRefresh(int cpu) {
  (void)CpuIndex(cpu);
  if (IsScxVariant(options_.variant) && options_.scx_idle_refresh &&
      cpu_state(cpu).curr_is_idle.load(std::memory_order_relaxed)) {
    ScxUpdateIdle(cpu, true);
  }
}

void IdleState::Tick(int cpu) {
  (void)CpuIndex(cpu);
  switch (options_.variant) {
    case Variant::kV1:
    case Variant::kV1Eager:
    case Variant::kV1Unbounded:
    case Variant::kV2:
    case Variant::kV3:
      // sched_tick(): rq->idle_balance = idle_cpu(cpu); update(idle_balance).
      V1Update(cpu, IdleCpu(cpu));
      break;
    case Variant::kV1TickStop:
      // Set only when the tick stops; the tick only clears.
      if (!IdleCpu(cpu)) V1Update(cpu, false);
      break;
    case Variant::kV5: {
      // Overloaded: >= 2 runnable non-SCHED_IDLE tasks (the utilisation
      // terms of spec 3.3 are not modelled).  Test before write (I12).
      const int l = llc_of(cpu);
      if (l < 0) break;
      const CpuIdleState& s = cpu_state(cpu);
      const bool over = s.nr_running.load(std::memory_order_relaxed) -
                            s.nr_sched_idle.load(std::memory_order_relaxed) >= 2;
      AtomicCpuMask& m = llcs_[static_cast<size_t>(l)]->overloaded;
      if (m.Test(cpu) != over) {
        over ? m.Set(cpu) : m.Clear(cpu);
        cpu_state(cpu).shared_writes.fetch_add(1, std::memory_order_relaxed);
      }
      break;
    }
    default:
      break;
  }
}

void IdleState::TickStop(int cpu) {
  CpuIdleState& s = cpu_state(cpu);
  s.tick_stopped.store(1, std::memory_order_relaxed);
  if (options_.variant == Variant::kV1TickStop && s.curr_is_idle.load(std::memory_order_relaxed)) {
    V1Update(cpu, true);
  }
}

void IdleState::TickRestart(int cpu) { cpu_state(cpu).tick_stopped.store(0, std::memory_order_relaxed); }

void IdleState::Enqueue(int cpu, bool sched_idle) {
  CpuIdleState& s = cpu_state(cpu);
  s.nr_running.fetch_add(1, std::memory_order_relaxed);
  if (sched_idle) s.nr_sched_idle.fetch_add(1, std::memory_order_relaxed);
  s.ttwu_pending.store(0, std::memory_order_relaxed);
}

void IdleState::Dequeue(int cpu, bool sched_idle) {
  CpuIdleState& s = cpu_state(cpu);
  s.nr_running.fetch_sub(1, std::memory_order_relaxed);
  if (sched_idle) s.nr_sched_idle.fetch_sub(1, std::memory_order_relaxed);
}

void IdleState::SetWakePending(int cpu, bool pending) {
  cpu_state(cpu).ttwu_pending.store(pending ? 1 : 0, std::memory_order_relaxed);
}

absl::Status IdleState::UpdateIdleCpuScan(int l, int64_t sum_util) {
  if (l < 0 || l >= num_llcs()) {
    return absl::InvalidArgumentError(
        absl::StrCat("idle_select: UpdateIdleCpuScan of llc ", l, " outside [0, ", num_llcs(), ")"));
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
    return absl::InvalidArgumentError(absl::StrCat("idle_select: SetBudget(llc ", l, ", nr_idle_scan ", nr_idle_scan,
                                                   "): llc outside [0, ", num_llcs(), ") or negative budget"));
  }
  llcs_[static_cast<size_t>(l)]->nr_idle_scan.store(nr_idle_scan, std::memory_order_relaxed);
  return absl::OkStatus();
}

int64_t IdleState::TotalSharedWrites() const {
  int64_t n = 0;
  for (const auto& c : cpus_) n += c->shared_writes.load(std::memory_order_relaxed);
  for (const auto& l : llcs_) n += l->budget_stores.load(std::memory_order_relaxed);
  return n;
}

std::string IdleState::CheckSubsetInvariant() const {
  if (UsesIdleMask(options_.variant)) {
    for (size_t l = 0; l < llcs_.size(); ++l) {
      const CpuMask m = llcs_[l]->idle_cpus.Snapshot();
      if (!m.IsSubsetOf(llcs_[l]->span)) {
        return absl::StrCat("I1: V1 mask of LLC ", l, " = ", m.ToString(), " not within span ",
                            llcs_[l]->span.ToString());
      }
    }
  }
  if (IsScxVariant(options_.variant)) {
    for (size_t s = 0; s < scx_.size(); ++s) {
      const CpuMask cpu = scx_[s]->cpu.Snapshot();
      const CpuMask smt = scx_[s]->smt.Snapshot();
      if (!cpu.IsSubsetOf(topo_.online)) return absl::StrCat("I1: scx cpu mask ", cpu.ToString(), " not online");
      if (!smt.IsSubsetOf(cpu)) {
        return absl::StrCat("I1: scx smt ", smt.ToString(), " not within cpu ", cpu.ToString());
      }
      for (int c : smt) {
        if (!topo_.siblings(c).IsSubsetOf(cpu)) {
          return absl::StrCat("I1: scx smt holds CPU ", c, " whose core is not all idle");
        }
      }
    }
  }
  return "";
}

}  // namespace isolation::idle_select
