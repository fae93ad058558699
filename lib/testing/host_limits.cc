// SPDX-License-Identifier: GPL-2.0-or-later
// The host a benchmark figure came from (testing/bench.h): the CPU model and
// four calibration loops timed in the same run as the benchmarks.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "isolation/testing/bench.h"

namespace isolation::testing {
namespace {

constexpr int kOps = 1 << 16;
constexpr int kRepetitions = 15;

// The loops' subjects, each behind a barrier the compiler cannot see
// through, so that every iteration does its operation.
thread_local uint64_t t_counter = 0;
std::atomic<uint64_t> g_shared{0};
alignas(64) std::atomic<int8_t> g_byte{0};
[[gnu::noinline]] void EmptyFunction() { asm volatile(""); }
void (*volatile g_empty)() = &EmptyFunction;

// Each loop is out of line and aligned, so that where the caller lands does
// not move it (the layout sensitivity the hot-path benchmarks showed).
[[gnu::noinline, gnu::aligned(64)]] void ThreadLocalIncrements(int n) {
  for (int i = 0; i < n; ++i) {
    t_counter = t_counter + 1;
    asm volatile("" : : : "memory");  // one load and one store per iteration
  }
}
// An s8 counter's load, add and store through memory, as the kernel's
// this_cpu_read / this_cpu_write of a vm_stat_diff byte: where a host forwards
// a 64-bit store to the next load without waiting (the thread-local loop) but
// not a byte's, this is the floor of any s8 differential's update.
[[gnu::noinline, gnu::aligned(64)]] void OwnerByteUpdates(int n) {
  for (int i = 0; i < n; ++i) {
    const int8_t v = g_byte.load(std::memory_order_relaxed);
    g_byte.store(static_cast<int8_t>(v + ((i & 1) != 0 ? -1 : 1)), std::memory_order_relaxed);
  }
}
[[gnu::noinline, gnu::aligned(64)]] void LockedFetchAdds(int n) {
  for (int i = 0; i < n; ++i) g_shared.fetch_add(1, std::memory_order_relaxed);
}
[[gnu::noinline, gnu::aligned(64)]] void EmptyIndirectCalls(int n) {
  void (*fn)() = g_empty;
  for (int i = 0; i < n; ++i) {
    fn();
    asm volatile("" : "+r"(fn));  // reloaded as if it could change: an indirect call each time
  }
}

HostLimit Time(void (*loop)(int)) {
  using Clock = std::chrono::steady_clock;
  loop(kOps);  // warm-up
  std::vector<double> per_op;
  for (int r = 0; r < kRepetitions; ++r) {
    const auto t0 = Clock::now();
    loop(kOps);
    const auto t1 = Clock::now();
    per_op.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count() / kOps);
  }
  std::sort(per_op.begin(), per_op.end());
  return {per_op.front(), per_op[per_op.size() / 2]};
}

std::string CpuModel() {
  std::ifstream in("/proc/cpuinfo");
  std::string line, name, family, model;
  auto value = [](const std::string& l) {
    const size_t colon = l.find(':');
    return colon == std::string::npos
               ? std::string()
               : std::string(absl::StripAsciiWhitespace(l.substr(colon + 1)));
  };
  while (std::getline(in, line)) {
    if (line.empty()) break;  // the first processor's block is enough
    const std::string key(absl::StripAsciiWhitespace(line.substr(0, line.find(':'))));
    if (key == "model name") name = value(line);
    if (key == "cpu family") family = value(line);
    if (key == "model") model = value(line);
  }
  if (name.empty()) return "unknown";
  if (!family.empty() && !model.empty()) {
    return absl::StrCat(name, " (family ", family, " model ", model, ")");
  }
  return name;
}

}  // namespace

HostLimits MeasureHostLimits() {
  HostLimits h;
  h.cpu_model = CpuModel();
  h.thread_local_increment = Time(&ThreadLocalIncrements);
  h.owner_byte_update = Time(&OwnerByteUpdates);
  h.locked_fetch_add = Time(&LockedFetchAdds);
  h.empty_indirect_call = Time(&EmptyIndirectCalls);
  return h;
}

void AddHostLimitsContext() {
  const HostLimits h = MeasureHostLimits();
  auto format = [](const HostLimit& l) {
    return absl::StrFormat("min %.2f median %.2f", l.min_ns, l.median_ns);
  };
  benchmark::AddCustomContext("host_cpu", h.cpu_model);
  benchmark::AddCustomContext("host_thread_local_increment_ns", format(h.thread_local_increment));
  benchmark::AddCustomContext("host_owner_byte_update_ns", format(h.owner_byte_update));
  benchmark::AddCustomContext("host_locked_fetch_add_ns", format(h.locked_fetch_add));
  benchmark::AddCustomContext("host_empty_indirect_call_ns", format(h.empty_indirect_call));
}

int BenchmarkMain(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  AddHostLimitsContext();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

}  // namespace isolation::testing
