// SPDX-License-Identifier: GPL-2.0-or-later
// membarrier(2) detection and registration (core/membarrier.h).

#include "isolation/core/membarrier.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "absl/strings/str_cat.h"

#if defined(__linux__)
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

// The syscall is used only where it exists and the build is not TSan's.
#if defined(__linux__) && defined(SYS_membarrier) && !defined(__SANITIZE_THREAD__) && \
    !defined(ISOLATION_TSAN)
#define ISOLATION_USE_MEMBARRIER 1
#endif

namespace isolation {
namespace {

#if defined(ISOLATION_USE_MEMBARRIER)
long Membarrier(int cmd) { return syscall(SYS_membarrier, cmd, 0U, 0); }
#endif

MembarrierSupport Detect() {
  MembarrierSupport s;
#if defined(__SANITIZE_THREAD__) || defined(ISOLATION_TSAN)
  s.reason = "ThreadSanitizer build (TSan does not model membarrier's remote barriers)";
#elif !defined(ISOLATION_USE_MEMBARRIER)
  s.reason = "no membarrier syscall on this platform";
#else
  const long cmds = Membarrier(MEMBARRIER_CMD_QUERY);
  if (cmds < 0) {
    s.reason = absl::StrCat("MEMBARRIER_CMD_QUERY failed: ", std::strerror(errno));
    return s;
  }
  if ((cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0 ||
      (cmds & MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) == 0) {
    s.reason =
        absl::StrCat("MEMBARRIER_CMD_QUERY = 0x", absl::Hex(cmds), " lacks PRIVATE_EXPEDITED");
    return s;
  }
  if (Membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) != 0) {
    s.reason =
        absl::StrCat("MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED failed: ", std::strerror(errno));
    return s;
  }
  s.available = true;
  s.reason = "registered";
#endif
  return s;
}

}  // namespace

const MembarrierSupport& PrivateExpeditedMembarrier() {
  static const MembarrierSupport* s = new MembarrierSupport(Detect());  // never destroyed
  return *s;
}

void MembarrierPrivateExpedited() {
#if defined(ISOLATION_USE_MEMBARRIER)
  if (Membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0) return;
  std::fprintf(stderr, "isolation: membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) failed: %s\n",
               std::strerror(errno));
#else
  std::fprintf(stderr,
               "isolation: MembarrierPrivateExpedited() called where membarrier is unavailable\n");
#endif
  std::abort();
}

}  // namespace isolation
