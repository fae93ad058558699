// SPDX-License-Identifier: GPL-2.0-or-later
// `isolab hostcheck`: no flags of its own (the real /proc, /sys and
// /dev/kmsg).

#include "experiments/hostcheck.h"
#include "isolab/subcommands.h"

namespace isolation::isolab {

Subcommand HostcheckSubcommand() {
  return {"hostcheck",
          "Cross-check the model against the running kernel (isolation masks, vmstat thresholds, "
          "tmigr levels, "
          "mm_cid)",
          {"json"},
          [](const experiments::CommonOptions& common, experiments::Progress& progress) {
            return experiments::RunHostcheckExperiment(common, experiments::HostCheckOptions{},
                                                       progress);
          },
          [](const experiments::CommonOptions&) -> absl::StatusOr<experiments::RunCost> {
            return experiments::RunCost{0.5, 32e6, "reads /proc, /sys and /dev/kmsg"};
          }};
}

}  // namespace isolation::isolab
