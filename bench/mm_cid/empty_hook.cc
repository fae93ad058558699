// SPDX-License-Identifier: GPL-2.0-or-later
// The empty hook of switch_hook.h, in its own translation unit so that the
// benchmark's calls to it stay real indirect calls with their arguments.
#include <memory>

#include "switch_hook.h"

namespace isolation::mm_cid::bench {
namespace {

class EmptySwitchHook final : public SwitchHook {
 public:
  void ContextSwitch(int, TaskId, TaskId, Nanos) override {}
  void Migrate(TaskId, int, int, Nanos) override {}
};

}  // namespace

std::unique_ptr<SwitchHook> MakeEmptySwitchHook() { return std::make_unique<EmptySwitchHook>(); }

}  // namespace isolation::mm_cid::bench
