// SPDX-License-Identifier: GPL-2.0-or-later
#include "isolation/testing/machine.h"

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace isolation::testing {

absl::StatusOr<std::unique_ptr<isolation::Simulator>> Machine::Simulator(SimOptions options) const {
  return isolation::Simulator::Create(topology, isolation, std::move(options));
}

absl::StatusOr<std::unique_ptr<RealThreadDriver>> Machine::RealThreads(
    RealDriverOptions options) const {
  return RealThreadDriver::Create(topology, isolation, std::move(options));
}

MachineBuilder& MachineBuilder::Topology(std::string_view description) {
  topology_ = std::string(description);
  return *this;
}
MachineBuilder& MachineBuilder::Isolcpus(std::string_view value) {
  isolcpus_ = std::string(value);
  use_cmdline_ = false;
  return *this;
}
MachineBuilder& MachineBuilder::NohzFull(std::string_view value) {
  nohz_full_ = std::string(value);
  use_cmdline_ = false;
  return *this;
}
MachineBuilder& MachineBuilder::Cmdline(std::string_view cmdline) {
  cmdline_ = std::string(cmdline);
  use_cmdline_ = true;
  return *this;
}

absl::StatusOr<Machine> MachineBuilder::Build() const {
  absl::StatusOr<isolation::Topology> topology = isolation::Topology::FromFlag(topology_);
  if (!topology.ok()) return topology.status();
  absl::StatusOr<IsolationConfig> config =
      use_cmdline_ ? IsolationConfig::FromBootParams(*topology, cmdline_)
                   : IsolationConfig::FromFlags(*topology, isolcpus_, nohz_full_);
  if (!config.ok()) return config.status();
  return Machine{std::move(*topology), std::move(*config)};
}

absl::StatusOr<std::unique_ptr<isolation::Simulator>> MachineBuilder::Simulator(
    SimOptions options) const {
  absl::StatusOr<Machine> m = Build();
  if (!m.ok()) return m.status();
  return m->Simulator(std::move(options));
}

absl::StatusOr<std::unique_ptr<RealThreadDriver>> MachineBuilder::RealThreads(
    RealDriverOptions options) const {
  absl::StatusOr<Machine> m = Build();
  if (!m.ok()) return m.status();
  return m->RealThreads(std::move(options));
}

}  // namespace isolation::testing
