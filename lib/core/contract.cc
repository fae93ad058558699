// SPDX-License-Identifier: GPL-2.0-or-later
// Contract violations (contract.h): report and abort.

#include "isolation/core/contract.h"

#include <cstdio>
#include <cstdlib>

namespace isolation {

bool ContractChecksActive() { return kContractChecksCompiledIn; }

namespace contract_internal {

void Fail(const char* file, int line, const char* condition, const std::string& message) {
  std::fprintf(stderr, "isolation: contract violated at %s:%d: %s: %s\n", file, line, condition,
               message.c_str());
  std::fflush(stderr);
  std::abort();
}

}  // namespace contract_internal
}  // namespace isolation
