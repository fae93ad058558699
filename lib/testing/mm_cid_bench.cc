// SPDX-License-Identifier: GPL-2.0-or-later
// RegisterMmCidBenchmarks (testing/mm_cid_bench.h): mm_cid's hot paths, a
// variant beside a baseline, timed alternately in one run.

#include "isolation/testing/mm_cid_bench.h"

#include <memory>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "isolation/mm_cid/mm_cid.h"
#include "isolation/mm_cid/switcher.h"
#include "isolation/testing/bench.h"

namespace isolation::testing {
namespace {

using isolation::mm_cid::kNoTask;
using isolation::mm_cid::MmCid;
using isolation::mm_cid::MmId;
using isolation::mm_cid::TaskId;

// One side of a comparison: a mechanism in the benchmark's starting state
// and the operation, `n` times.
class Scenario {
 public:
  virtual ~Scenario() = default;
  virtual void Run(int64_t n) = 0;
};

// Tasks 0 and 1 take turns on CPU 0: of one mm (switch_cached) or of two;
// through the virtual ContextSwitch or, `via_switcher`, through
// MmCid::Switcher() with its form resolved once per batch (switcher_cached).
class AlternateOnCpu0 final : public Scenario {
 public:
  AlternateOnCpu0(std::unique_ptr<MmCid> m, bool separate_mms, bool via_switcher = false)
      : m_(std::move(m)), via_switcher_(via_switcher) {
    const MmId a = *m_->CreateMm(CpuMask::Full(8), 0);
    const MmId b = separate_mms ? *m_->CreateMm(CpuMask::Full(8), 0) : a;
    (void)m_->Fork(kNoTask, 0, a, CpuMask::Full(8), 0);
    (void)m_->Fork(separate_mms ? kNoTask : 0, 1, b, CpuMask::Full(8), 0);
  }
  void Run(int64_t n) override {
    if (via_switcher_) {
      m_->Switcher().WithSwitchForm([&](auto s) { Loop(s, n); });
    } else {
      Loop(*m_, n);
    }
    benchmark::DoNotOptimize(cur_);
  }

 private:
  template <typename Hook>
  void Loop(Hook& h, int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
      const TaskId next = cur_ == 0 ? 1 : 0;
      h.ContextSwitch(0, cur_, next, ++now_);
      cur_ = next;
    }
  }
  std::unique_ptr<MmCid> m_;
  bool via_switcher_;
  TaskId cur_ = kNoTask;
  Nanos now_ = 0;
};

// Task 0 switches out, migrates to the other CPU and switches in there.
class Migrate final : public Scenario {
 public:
  explicit Migrate(std::unique_ptr<MmCid> m) : m_(std::move(m)) {
    const MmId a = *m_->CreateMm(CpuMask::Full(8), 0);
    (void)m_->Fork(kNoTask, 0, a, CpuMask::Full(8), 0);
    (void)m_->Fork(0, 1, a, CpuMask::Full(8), 0);  // 2 users < 8 allowed: migration moves IDs
    m_->ContextSwitch(cpu_, kNoTask, 0, ++now_);
  }
  void Run(int64_t n) override {
    for (int64_t i = 0; i < n; ++i) {
      m_->ContextSwitch(cpu_, 0, kNoTask, ++now_);
      const int to = 1 - cpu_;
      m_->Migrate(0, cpu_, to, now_);
      m_->ContextSwitch(to, kNoTask, 0, ++now_);
      cpu_ = to;
    }
  }

 private:
  std::unique_ptr<MmCid> m_;
  int cpu_ = 0;
  Nanos now_ = 0;
};

// One scan pass (all batches of one) for an mm pinned to CPU 64 of 128.
class ScanPass final : public Scenario {
 public:
  explicit ScanPass(std::unique_ptr<MmCid> m) : m_(std::move(m)) {
    const CpuMask pin = CpuMask::Of(128, 64);
    mm_ = *m_->CreateMm(pin, 0);
    (void)m_->Fork(kNoTask, 0, mm_, pin, 0);
    m_->ContextSwitch(64, kNoTask, 0, 1);
    m_->Scan(mm_, 1);  // initialises the rate limit
  }
  void Run(int64_t n) override {
    for (int64_t i = 0; i < n; ++i) {
      now_ += 200 * kNsPerMs;
      for (int batch = 0; batch < 1024; ++batch) {  // the batches of one pass
        const isolation::mm_cid::ScanResult r = m_->Scan(mm_, now_ + batch);
        benchmark::DoNotOptimize(r.visits);
        if (!r.ran || r.pass_end) break;
      }
    }
  }

 private:
  std::unique_ptr<MmCid> m_;
  MmId mm_ = 0;
  Nanos now_ = 1;
};

using MakeScenario = std::unique_ptr<Scenario> (*)(std::unique_ptr<MmCid>);

absl::StatusOr<std::unique_ptr<Scenario>> Build(std::string_view variant, int cpus,
                                                MakeScenario make) {
  absl::StatusOr<std::unique_ptr<MmCid>> m = MmCid::Create(cpus, variant);
  if (!m.ok()) return m.status();
  return make(std::move(*m));
}

void Register(const std::string& what, std::string_view variant, std::string_view baseline,
              int cpus, MakeScenario make) {
  const std::string name = absl::StrCat("MmCid/", what, "/", std::string(variant));
  benchmark::RegisterBenchmark(name.c_str(), [v = std::string(variant), b = std::string(baseline),
                                              cpus, make](benchmark::State& state) {
    auto subject = Build(v, cpus, make);
    auto base = Build(b, cpus, make);
    if (!subject.ok() || !base.ok()) {
      const absl::Status& s = !subject.ok() ? subject.status() : base.status();
      state.SkipWithError(std::string(s.message()).c_str());
      return;
    }
    state.SetLabel(v);
    Scenario* sp = subject->get();
    Scenario* bp = base->get();
    CompareToBaseline(
        state, [sp](int64_t n) { sp->Run(n); }, [bp](int64_t n) { bp->Run(n); },
        b == kMmCidMainline ? std::string_view("mainline") : std::string_view(b));
  })->UseManualTime();
}

}  // namespace

void RegisterMmCidBenchmarks(std::string_view variant, std::string_view baseline) {
  Register("switch_cached", variant, baseline, 8,
           [](std::unique_ptr<MmCid> m) -> std::unique_ptr<Scenario> {
             return std::make_unique<AlternateOnCpu0>(std::move(m), /*separate_mms=*/false);
           });
  Register("switcher_cached", variant, baseline, 8,
           [](std::unique_ptr<MmCid> m) -> std::unique_ptr<Scenario> {
             return std::make_unique<AlternateOnCpu0>(std::move(m), /*separate_mms=*/false,
                                                      /*via_switcher=*/true);
           });
  Register("switch_cross_mm", variant, baseline, 8,
           [](std::unique_ptr<MmCid> m) -> std::unique_ptr<Scenario> {
             return std::make_unique<AlternateOnCpu0>(std::move(m), /*separate_mms=*/true);
           });
  Register("switch_migrate", variant, baseline, 8,
           [](std::unique_ptr<MmCid> m) -> std::unique_ptr<Scenario> {
             return std::make_unique<Migrate>(std::move(m));
           });
  Register("scan_128", variant, baseline, 128,
           [](std::unique_ptr<MmCid> m) -> std::unique_ptr<Scenario> {
             return std::make_unique<ScanPass>(std::move(m));
           });
}

}  // namespace isolation::testing
