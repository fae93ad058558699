// SPDX-License-Identifier: GPL-2.0-or-later
// Internal to lib/replay: writes a trace.dat (file format version 6,
// Documentation/trace-cmd/trace-cmd.dat.v6.5.txt) from a tracefs instance's
// formats and the per-CPU ring-buffer pages the recorder drained.

#ifndef ISOLATION_LIB_REPLAY_TRACE_DAT_WRITER_H_
#define ISOLATION_LIB_REPLAY_TRACE_DAT_WRITER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace isolation::replay {

struct DatWriteInput {
  std::string tracing_dir;             // the tracefs mount (events/ formats, saved_cmdlines)
  std::string instance_dir;            // the instance recorded
  std::vector<std::string> systems;    // event systems whose formats go in the file
  std::vector<std::string> cpu_files;  // per CPU: whole ring-buffer pages
  int page_size = 4096;
  std::string uname;        // "sysname nodename release version machine"
  std::string trace_clock;  // the instance's trace_clock file ("... [mono] ...")
};

// Returns the bytes written.  Errors: Internal naming the file that could not
// be read or written.
absl::StatusOr<int64_t> WriteTraceDat(const std::string& path, const DatWriteInput& in);

}  // namespace isolation::replay

#endif  // ISOLATION_LIB_REPLAY_TRACE_DAT_WRITER_H_
