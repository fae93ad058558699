// SPDX-License-Identifier: GPL-2.0-or-later
// An independent paired check of the hot-path goals (docs/performance.md,
// "Goals and bounds"): the same subjects as vmstat_bench and mm_cid_bench
// (the writer front ends, the inline switch, the kernel's own sequences),
// timed by this file's own loop instead of the kit's
// testing::CompareToBaseline.  Each row alternates a batch of the subject
// and a batch of its baseline, --rounds times (the order flips every round),
// subtracts the clock read from each batch, and prints the median ns per
// operation of both sides, the ratio of the medians and the ratio of the
// fastest batches.  Public API only.
//
//   build-bench/bench/crosscheck/paired_crosscheck [--rounds=31] [--batch=20000]
//
// Prints a Markdown table, the CPU model first.

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "crosscheck/baselines.h"
#include "isolation/core/cpumask.h"
#include "isolation/mm_cid/mm_cid.h"
#include "isolation/mm_cid/switcher.h"
#include "isolation/mm_cid/variant.h"
#include "isolation/vmstat/items.h"
#include "isolation/vmstat/vmstat.h"
#include "isolation/vmstat/writer.h"
#include "mm_cid/kernel_switch_shape.h"
#include "vmstat/kernel_shape.h"

namespace isolation::crosscheck {
namespace {

using Clock = std::chrono::steady_clock;
using mm_cid::kNoTask;
using mm_cid::MmId;
using mm_cid::TaskId;
using Batch = std::function<void(int64_t)>;

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// One steady_clock read, the median of many (subtracted from every batch).
double ClockReadNs() {
  std::vector<double> v;
  for (int i = 0; i < 1001; ++i) {
    const auto a = Clock::now();
    const auto b = Clock::now();
    v.push_back(std::chrono::duration<double, std::nano>(b - a).count());
  }
  return Median(v);
}

double TimeBatchNs(const Batch& f, int64_t n, double clock_ns) {
  const auto a = Clock::now();
  f(n);
  const auto b = Clock::now();
  return std::max(0.0, std::chrono::duration<double, std::nano>(b - a).count() - clock_ns) /
         static_cast<double>(n);
}

struct Row {
  std::string name;
  std::string baseline_name;
  Batch subject;
  Batch baseline;
};

void RunRow(const Row& r, int rounds, int64_t batch, double clock_ns) {
  std::vector<double> s, b;
  r.subject(batch);  // warm both
  r.baseline(batch);
  for (int i = 0; i < rounds; ++i) {
    if (i % 2 == 0) {
      s.push_back(TimeBatchNs(r.subject, batch, clock_ns));
      b.push_back(TimeBatchNs(r.baseline, batch, clock_ns));
    } else {
      b.push_back(TimeBatchNs(r.baseline, batch, clock_ns));
      s.push_back(TimeBatchNs(r.subject, batch, clock_ns));
    }
  }
  const double sm = Median(s), bm = Median(b);
  const double smin = *std::min_element(s.begin(), s.end());
  const double bmin = *std::min_element(b.begin(), b.end());
  std::printf("| %s | %s | %.2f | %.2f | %.2f | %.2f |\n", r.name.c_str(), r.baseline_name.c_str(),
              sm, bm, bm > 0 ? sm / bm : 0.0, bmin > 0 ? smin / bmin : 0.0);
  std::fflush(stdout);
}

std::string CpuModel() {
  std::ifstream in("/proc/cpuinfo");
  std::string line, model = "unknown", family, number;
  while (std::getline(in, line)) {
    auto value = [&] { return line.substr(line.find(':') + 2); };
    if (line.rfind("model name", 0) == 0 && model == "unknown") model = value();
    if (line.rfind("cpu family", 0) == 0 && family.empty()) family = value();
    if (line.rfind("model\t", 0) == 0 && number.empty()) number = value();
  }
  return model + " (family " + family + " model " + number + ")";
}

// --- vmstat ------------------------------------------------------------------

std::unique_ptr<vmstat::Vmstat> MakeVm(const std::string& policy) {
  vmstat::VmstatConfig c;
  c.fold_policy = policy;
  c.num_cpus = 4;
  c.zones = {vmstat::ZoneSpec{"DMA32", 0, 262144, 100, 140, 180},
             vmstat::ZoneSpec{"Normal", 0, 16 * 262144, 8192, 10240, 12288}};
  c.isolated = CpuMask(4);
  c.nohz_full = CpuMask::Full(4);
  auto vm = vmstat::Vmstat::Create(c);
  if (!vm.ok()) {
    std::fprintf(stderr, "vmstat %s: %s\n", policy.c_str(), vm.status().ToString().c_str());
    std::exit(1);
  }
  return *std::move(vm);
}

[[gnu::noinline, gnu::aligned(64)]] void SlotWriterMods(vmstat::Vmstat& vm, int64_t n) {
  vm.Writer(0).value().WithSlotForm([n](auto w) {
    for (int64_t i = 0; i < n; ++i)
      w.Mod(vmstat::StatKind::kZone, 1, vmstat::kZoneMlock, (i & 1) != 0 ? -1 : 1);
  });
}
[[gnu::noinline, gnu::aligned(64)]] void SlotWriterIncs(vmstat::Vmstat& vm, int64_t n) {
  vm.Writer(0).value().WithSlotForm([n](auto w) {
    for (int64_t i = 0; i < n; ++i) w.Inc(vmstat::StatKind::kNode, 0, 2);
  });
}
[[gnu::noinline, gnu::aligned(64)]] void WriterMods(vmstat::Vmstat& vm, int64_t n) {
  vmstat::VmstatWriter w = vm.Writer(0).value();
  for (int64_t i = 0; i < n; ++i)
    w.Mod(vmstat::StatKind::kZone, 1, vmstat::kZoneMlock, (i & 1) != 0 ? -1 : 1);
}
[[gnu::noinline, gnu::aligned(64)]] void WriterIncs(vmstat::Vmstat& vm, int64_t n) {
  vmstat::VmstatWriter w = vm.Writer(0).value();
  for (int64_t i = 0; i < n; ++i) w.Inc(vmstat::StatKind::kNode, 0, 2);
}

vmstat::bench::KernelShapeZoneStat g_kernel_pcp;
[[gnu::noinline, gnu::aligned(64)]] void KernelMods(int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    vmstat::bench::KernelShapeMod(g_kernel_pcp, vmstat::kZoneMlock, (i & 1) != 0 ? -1 : 1);
}
[[gnu::noinline, gnu::aligned(64)]] void KernelIncs(int64_t n) {
  for (int64_t i = 0; i < n; ++i) vmstat::bench::KernelShapeInc(g_kernel_pcp, 2);
}

// --- mm_cid ------------------------------------------------------------------

std::unique_ptr<mm_cid::MmCid> MakeMm(const std::string& design) {
  mm_cid::MmCidVariant v;
  v.design = design;
  auto r = mm_cid::MmCid::Create(8, v);
  if (!r.ok()) {
    std::fprintf(stderr, "mm_cid %s: %s\n", design.c_str(), r.status().ToString().c_str());
    std::exit(1);
  }
  auto m = *std::move(r);
  const MmId a = m->CreateMm(CpuMask::Full(8), 0).value();
  if (!m->Fork(kNoTask, 0, a, CpuMask::Full(8), 0).ok() ||
      !m->Fork(0, 1, a, CpuMask::Full(8), 0).ok()) {
    std::fprintf(stderr, "mm_cid %s: fork failed\n", design.c_str());
    std::exit(1);
  }
  return m;
}

struct SwitchLoop {
  TaskId cur = kNoTask;
  Nanos now = 0;
};

template <typename Hook>
[[gnu::noinline, gnu::aligned(64)]] void Switches(Hook& h, SwitchLoop& st, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const TaskId next = st.cur == 0 ? 1 : 0;
    h.ContextSwitch(0, st.cur, next, ++st.now);
    st.cur = next;
  }
}

struct KernelSwitchMachine {
  mm_cid::bench::KernelShapePcpu pcpu[8];
  mm_cid::bench::KernelShapeMm mm;
  mm_cid::bench::KernelShapeTask tasks[2];
  mm_cid::bench::KernelShapeRq rq;
  int cur = 0;
  KernelSwitchMachine() {
    mm.pcpu = pcpu;
    mm.max_cids.store(2, std::memory_order_relaxed);
    for (uint32_t t = 0; t < 2; ++t) tasks[t] = mm_cid::bench::KernelShapeTask{&mm, true, t};
    pcpu[0].cid = 0;
  }
  [[gnu::noinline, gnu::aligned(64)]] void Run(int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
      const int next = cur == 0 ? 1 : 0;
      mm_cid::bench::KernelShapeSwitch(rq, tasks[cur], tasks[next]);
      cur = next;
    }
    asm volatile("" : : "m"(pcpu[0].cid) : "memory");
  }
};

bool Flag(std::string_view arg, std::string_view name, int64_t& out) {
  if (arg.rfind(name, 0) != 0) return false;
  char* end = nullptr;
  const std::string v(arg.substr(name.size()));
  const long long x = std::strtoll(v.c_str(), &end, 10);
  if (v.empty() || *end != '\0' || x < 1) {
    std::fprintf(stderr, "bad value in %.*s: want an integer >= 1\n", static_cast<int>(arg.size()),
                 arg.data());
    std::exit(2);
  }
  out = x;
  return true;
}

int Main(int argc, char** argv) {
  int64_t rounds = 31, batch = 20000;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (!Flag(a, "--rounds=", rounds) && !Flag(a, "--batch=", batch)) {
      std::fprintf(stderr, "usage: %s [--rounds=N] [--batch=N]\nunknown argument: %s\n", argv[0],
                   argv[i]);
      return 2;
    }
  }
  const double clock_ns = ClockReadNs();
  std::printf(
      "host: %s; steady_clock read %.1f ns (subtracted); %lld rounds of %lld operations\n\n",
      CpuModel().c_str(), clock_ns, static_cast<long long>(rounds), static_cast<long long>(batch));
  std::printf(
      "| subject | baseline | subject ns | baseline ns | ratio of medians | ratio of minimums |\n");
  std::printf("|---|---|---|---|---|---|\n");

  const Batch tl = ThreadLocalIncrements;
  const Batch fa = FetchAdds;
  std::vector<Row> rows;
  rows.push_back({"kernel __mod_zone_page_state shape", "thread-local increment", KernelMods, tl});
  rows.push_back({"kernel __inc_zone_state shape", "thread-local increment", KernelIncs, tl});
  std::vector<std::unique_ptr<vmstat::Vmstat>> vms;
  for (const char* p : {"A0", "A1", "B", "B.local", "D", "C", "C.addo"}) {
    vms.push_back(MakeVm(p));
    vmstat::Vmstat* vm = vms.back().get();
    // Kernel shapes fold at the same thresholds as CPU 0 of the subjects.
    g_kernel_pcp.stat_threshold.store(
        static_cast<int8_t>(vm->Threshold(0, vmstat::StatKind::kZone, 1)),
        std::memory_order_relaxed);
    const bool shared = std::string_view(p)[0] == 'C';
    const Batch& base = shared ? fa : tl;
    const std::string base_name = shared ? "fetch_add" : "thread-local increment";
    const std::string name(p);
    rows.push_back({"vmstat SlotWriter Mod " + name, base_name,
                    [vm](int64_t n) { SlotWriterMods(*vm, n); }, base});
    rows.push_back({"vmstat SlotWriter Inc " + name, base_name,
                    [vm](int64_t n) { SlotWriterIncs(*vm, n); }, base});
    rows.push_back(
        {"vmstat Writer Mod " + name, base_name, [vm](int64_t n) { WriterMods(*vm, n); }, base});
    rows.push_back(
        {"vmstat Writer Inc " + name, base_name, [vm](int64_t n) { WriterIncs(*vm, n); }, base});
    if (name == "C.addo") {
      // Beside fetch_add, a load and a fetch_add that depends on it (baselines.h).
      rows.push_back({"vmstat SlotWriter Mod C.addo", "load + dependent fetch_add",
                      [vm](int64_t n) { SlotWriterMods(*vm, n); }, LoadThenFetchAdds});
      rows.push_back({"vmstat Writer Mod C.addo", "load + dependent fetch_add",
                      [vm](int64_t n) { WriterMods(*vm, n); }, LoadThenFetchAdds});
    }
  }
  rows.push_back({"load + dependent fetch_add", "fetch_add", LoadThenFetchAdds, fa});
  rows.push_back(
      {"load + dependent fetch_add, one line", "fetch_add", LoadSameLineThenFetchAdds, fa});
  for (const auto& r : rows) RunRow(r, static_cast<int>(rounds), batch, clock_ns);

  std::unique_ptr<EmptySwitch> empty = MakeEmptySwitch();
  auto empty_state = std::make_shared<SwitchLoop>();
  const Batch empty_hook = [&empty, empty_state](int64_t n) { Switches(*empty, *empty_state, n); };
  auto kernel = std::make_shared<KernelSwitchMachine>();
  const Batch kernel_switch = [kernel](int64_t n) { kernel->Run(n); };
  std::vector<Row> switch_rows;
  switch_rows.push_back(
      {"kernel mm_cid_switch_to shape", "empty virtual hook", kernel_switch, empty_hook});
  std::vector<std::unique_ptr<mm_cid::MmCid>> mms;
  for (const char* d : {"lazy", "owner619"}) {
    mms.push_back(MakeMm(d));
    mm_cid::MmCid* m = mms.back().get();
    auto st = std::make_shared<SwitchLoop>();
    const Batch via_switcher = [m, st](int64_t n) {
      m->Switcher().WithSwitchForm([&](auto s) { Switches(s, *st, n); });
    };
    const Batch via_virtual = [m, st](int64_t n) { Switches(*m, *st, n); };
    switch_rows.push_back(
        {std::string("mm_cid Switcher ") + d, "empty virtual hook", via_switcher, empty_hook});
    switch_rows.push_back(
        {std::string("mm_cid Switcher ") + d, "kernel shape", via_switcher, kernel_switch});
    switch_rows.push_back({std::string("mm_cid virtual ContextSwitch ") + d, "empty virtual hook",
                           via_virtual, empty_hook});
  }
  for (const auto& r : switch_rows) RunRow(r, static_cast<int>(rounds), batch, clock_ns);
  return 0;
}

}  // namespace
}  // namespace isolation::crosscheck

int main(int argc, char** argv) { return isolation::crosscheck::Main(argc, argv); }
