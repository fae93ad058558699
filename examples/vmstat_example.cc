// SPDX-License-Identifier: GPL-2.0-or-later
// The kernel's vmstat counter model as a fast approximate counter in a user
// program: four worker threads count "requests" and "bytes" through their own
// per-thread differentials (no shared cache line touched until a threshold is
// crossed), while a reporter thread reads the cheap approximate value and the
// exact-at-the-time snapshot.  Fold policy D (the library's own design) lets the
// reporter fold the workers' residue remotely without any locked operation on
// the workers' path; pass another fold policy ("C", "A1", or one you
// registered with isolation::vmstat::RegisterFoldPolicy) as argv[1] to compare.

#include <atomic>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "isolation/vmstat/vmstat.h"

using isolation::vmstat::StatKind;
using isolation::vmstat::Vmstat;
using isolation::vmstat::VmstatConfig;

int main(int argc, char** argv) {
  constexpr int kWorkers = 4;
  constexpr int kRequests = 0;  // node item 0 used as "requests"
  constexpr int kBytesKiB = 1;  // node item 1 used as "KiB sent"
  VmstatConfig config;
  config.fold_policy = argc > 1 ? argv[1] : "D";  // Create names a bad one
  config.num_cpus = kWorkers + 1;                 // slot kWorkers = the reporter
  config.node_items = 2;
  config.zone_items = 1;
  config.fixed_threshold = 64;  // fold to the shared counter every ~64 units
  auto created = Vmstat::Create(config);
  if (!created.ok()) {
    std::fprintf(stderr, "%s\n", std::string(created.status().message()).c_str());
    return 2;
  }
  Vmstat& counters = **created;

  std::atomic<bool> stop{false};
  std::vector<std::thread> workers;
  for (int w = 0; w < kWorkers; ++w) {
    workers.emplace_back([&, w] {
      int64_t n = 0;
      while (!stop.load(std::memory_order_relaxed)) {
        counters.Inc(w, StatKind::kNode, 0, kRequests);                 // one request
        counters.Mod(w, StatKind::kNode, 0, kBytesKiB, 1 + (n++ % 7));  // its size
      }
      counters.RefreshCpu(w);  // fold this thread's residue before leaving
    });
  }
  for (int tick = 0; tick < 5; ++tick) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    // C/D may fold the workers remotely (a no-op for A/B, whose slots only
    // their owner may write): the cheap read then catches up.
    for (int w = 0; w < kWorkers; ++w) counters.FoldCpuRemote(w);
    std::printf("t=%3d ms  requests: approx %10lld  snapshot %10lld   KiB: approx %10lld\n",
                (tick + 1) * 20,
                static_cast<long long>(counters.Read(StatKind::kNode, 0, kRequests)),
                static_cast<long long>(counters.ReadSnapshot(StatKind::kNode, 0, kRequests)),
                static_cast<long long>(counters.Read(StatKind::kNode, 0, kBytesKiB)));
  }
  stop.store(true);
  for (auto& t : workers) t.join();
  std::printf("final (%s): requests %lld, KiB %lld (every worker folded: approx == exact)\n",
              counters.fold_policy_name().c_str(),
              static_cast<long long>(counters.Read(StatKind::kNode, 0, kRequests)),
              static_cast<long long>(counters.Read(StatKind::kNode, 0, kBytesKiB)));
  return 0;
}
