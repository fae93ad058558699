// SPDX-License-Identifier: GPL-2.0-or-later
// -----------------------------------------------------------------------------
// testing/machine.h
// -----------------------------------------------------------------------------
//
// A model machine for tests and benchmarks in one expression: a topology
// string, the `isolcpus=` and `nohz_full=` values, and the drivers built on
// it.  Part of the installed conformance kit (`isolation::testing`).
//
//   ISOLATION_ASSERT_OK_AND_ASSIGN(Machine m, MachineBuilder()
//                                                 .Topology("package:2 l3cache:4 core:16 pu:1")
//                                                 .Isolcpus("domain,1-31,33-63,65-95,97-127")
//                                                 .Build());
//   ISOLATION_ASSERT_OK_AND_ASSIGN(auto sim, m.Simulator({.seed = 7}));
//   ISOLATION_ASSERT_OK_AND_ASSIGN(auto sim2, MachineBuilder().Topology("core:2
//   pu:1").Simulator());
//
// Kernel counterpart: the boot command line of a machine booted with
// isolcpus=/nohz_full= (kernel/sched/isolation.c), see core/isolation_config.h.
//
// Thread-safety: MachineBuilder and Machine are value types; use one per
// thread or synchronise externally.

#ifndef ISOLATION_TESTING_MACHINE_H_
#define ISOLATION_TESTING_MACHINE_H_

#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "isolation/core/isolation_config.h"
#include "isolation/core/topology.h"
#include "isolation/runtime/real_driver.h"
#include "isolation/runtime/sim.h"

namespace isolation::testing {

// The seeds' machine: two packages, four LLCs of 32 CPUs, no SMT, and the
// isolation of the timer-migration thread (one housekeeping CPU per LLC).
inline constexpr char kSeedTopology[] = "package:2 l3cache:4 core:16 pu:1";
inline constexpr char kSeedIsolcpus[] = "1-31,33-63,65-95,97-127";

struct Machine {
  isolation::Topology topology;
  isolation::IsolationConfig isolation;

  int num_cpus() const { return topology.num_cpus(); }
  // A simulator on this machine.  Errors: as Simulator::Create.
  absl::StatusOr<std::unique_ptr<isolation::Simulator>> Simulator(SimOptions options = {}) const;
  // Pinned real threads driving this machine.  Errors: as RealThreadDriver::Create.
  absl::StatusOr<std::unique_ptr<RealThreadDriver>> RealThreads(
      RealDriverOptions options = {}) const;
};

class MachineBuilder {
 public:
  // A synthetic hwloc topology string ("package:2 core:4 pu:2"), or "host".
  // Default: kSeedTopology.
  MachineBuilder& Topology(std::string_view description);
  // The value of isolcpus= (flags and list, e.g. "nohz,domain,1-7"); empty: none.
  MachineBuilder& Isolcpus(std::string_view value);
  // The value of nohz_full=; empty: none.
  MachineBuilder& NohzFull(std::string_view value);
  // A whole kernel command line instead of the two values above (parsed as
  // the kernel does, leniencies included: IsolationConfig::FromBootParams).
  MachineBuilder& Cmdline(std::string_view cmdline);

  // Errors: a topology string or parameter value that does not parse, named
  // in the message.
  absl::StatusOr<Machine> Build() const;
  // Build() and a driver on the machine, for a test that needs only the
  // driver.  Errors: as Build, then as Machine::Simulator / RealThreads.
  absl::StatusOr<std::unique_ptr<isolation::Simulator>> Simulator(SimOptions options = {}) const;
  absl::StatusOr<std::unique_ptr<RealThreadDriver>> RealThreads(
      RealDriverOptions options = {}) const;

 private:
  std::string topology_ = kSeedTopology;
  std::string isolcpus_;
  std::string nohz_full_;
  std::string cmdline_;
  bool use_cmdline_ = false;
};

}  // namespace isolation::testing

#endif  // ISOLATION_TESTING_MACHINE_H_
