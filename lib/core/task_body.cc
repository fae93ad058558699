// SPDX-License-Identifier: GPL-2.0-or-later
#include <memory>
#include <utility>

#include "isolation/core/driver.h"

namespace isolation {
namespace {

class FnTaskBody final : public TaskBody {
 public:
  explicit FnTaskBody(absl::AnyInvocable<Step(TaskContext&)> fn) : fn_(std::move(fn)) {}
  Step Next(TaskContext& ctx) override { return fn_(ctx); }

 private:
  absl::AnyInvocable<Step(TaskContext&)> fn_;
};

}  // namespace

std::unique_ptr<TaskBody> MakeTaskBody(absl::AnyInvocable<Step(TaskContext&)> fn) {
  return std::make_unique<FnTaskBody>(std::move(fn));
}

}  // namespace isolation
