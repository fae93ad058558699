// SPDX-License-Identifier: GPL-2.0-or-later
//
// RealThreadDriver: NOT IMPLEMENTED YET (placeholder so the runtime module
// links while the simulator lands).  Create() returns UnimplementedError.

#include "isolation/real_driver.h"

namespace isolation {

struct RealThreadDriver::Impl {
  Topology topology;
  IsolationConfig isolation;
};

absl::StatusOr<std::unique_ptr<RealThreadDriver>> RealThreadDriver::Create(Topology, IsolationConfig,
                                                                          RealDriverOptions) {
  return absl::UnimplementedError("RealThreadDriver: not implemented yet");
}
RealThreadDriver::RealThreadDriver(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
RealThreadDriver::~RealThreadDriver() = default;
const Topology& RealThreadDriver::topology() const { return impl_->topology; }
const IsolationConfig& RealThreadDriver::isolation() const { return impl_->isolation; }
Nanos RealThreadDriver::Now() const { return 0; }
Nanos RealThreadDriver::tick_period() const { return kNsPerMs; }
void RealThreadDriver::AddHooks(Hooks*) {}
absl::StatusOr<TaskId> RealThreadDriver::Spawn(TaskSpec) { return absl::UnimplementedError("x"); }
void RealThreadDriver::Wake(TaskId, int) {}
absl::Status RealThreadDriver::SetAffinity(TaskId, const CpuMask&) { return absl::UnimplementedError("x"); }
int RealThreadDriver::TaskCpu(TaskId) const { return -1; }
int RealThreadDriver::TaskGroup(TaskId) const { return -1; }
TaskId RealThreadDriver::CurrentTask(int) const { return kIdleTask; }
int RealThreadDriver::NumRunnable(int) const { return 0; }
bool RealThreadDriver::IsIdle(int) const { return true; }
void RealThreadDriver::QueueWorkOn(int, Nanos, WorkFn) {}
int RealThreadDriver::QueueHousekeepingWork(Nanos, WorkFn) { return -1; }
TimerId RealThreadDriver::ArmTimer(int, Nanos, WorkFn) { return kNoTimer; }
bool RealThreadDriver::CancelTimer(TimerId) { return false; }
void RealThreadDriver::SetTickMode(int, TickMode) {}
TickMode RealThreadDriver::GetTickMode(int) const { return TickMode::kPeriodic; }
bool RealThreadDriver::TickStopped(int) const { return false; }
absl::Status RealThreadDriver::SetCpuOnline(int, bool) { return absl::UnimplementedError("x"); }
absl::Status RealThreadDriver::RunFor(Nanos) { return absl::UnimplementedError("x"); }
CpuStats RealThreadDriver::Stats(int) const { return {}; }
uint64_t RealThreadDriver::Random() { return 0; }
int RealThreadDriver::HostCpu(int) const { return -1; }
bool RealThreadDriver::oversubscribed() const { return false; }
int RealThreadDriver::ObservedHostCpu(int) const { return -1; }

}  // namespace isolation
