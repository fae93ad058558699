// SPDX-License-Identifier: GPL-2.0-or-later
#include "isolab/subcommands.h"

#include <vector>

namespace isolation::isolab {

std::vector<Subcommand> AllSubcommands() {
  return {TopologySubcommand(), MmCidSubcommand(),  TmigrSubcommand(),
          IdleSubcommand(),     VmstatSubcommand(), HostcheckSubcommand()};
}

}  // namespace isolation::isolab
