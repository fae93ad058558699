// SPDX-License-Identifier: GPL-2.0-or-later
// Fuzz isolab's flag parsing: isolab::ParseSubcommandFlags (the code
// tools/isolab runs) on an argument vector, then, as every experiment does,
// the validation of the options every subcommand shares, mapped from the
// flags as isolab maps them (isolab::CommonOptionsFromFlags):
// experiments::LoadTopology (--topology) and LoadIsolation (--isolcpus,
// --nohz_full).  The input is the argument vector, one argument per line.
// isolab's flags are defined in tools/isolab/common_flags.cc (string, uint64, bool); the
// experiments' own flags are plain absl flags of the types declared here,
// which stand in for them (int32, int64, double, and an integer list).
// Properties: never crash; a parse error is a non-empty message without a
// raw control byte; a ranged flag never holds a value outside its range; the
// validation fails only with InvalidArgument or OutOfRange (isolab's exit 2),
// so malformed input can never be taken for a run-time failure (exit 1).
// --topology=host is skipped (it would read the machine, not the input).

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/flags/commandlineflag.h"
#include "absl/flags/flag.h"
#include "absl/flags/reflection.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "experiments/experiment.h"
#include "isolab/common_flags.h"
#include "isolab/flag_parser.h"

ABSL_FLAG(int32_t, fuzz_int32, 20000, "stand-in for an experiment's int32 flag");
ABSL_FLAG(int64_t, fuzz_int64, 62000, "stand-in for an experiment's int64 flag");
ABSL_FLAG(double, fuzz_double, 0.5, "stand-in for a double flag");
ABSL_FLAG(std::string, fuzz_int_list, "16,64,256", "stand-in for --idle_llc_cpus");
// Ranged as the experiments' flags are (ISOLAB_FLAG_RANGE): the parser must
// refuse every value outside, in every spelling of the flag.
ISOLAB_FLAG_RANGE(fuzz_int32, 1, 10000000);
ISOLAB_FLAG_RANGE(fuzz_int64, 0, 3600000);
ISOLAB_FLAG_RANGE(fuzz_double, 0, 3600);

namespace {

[[noreturn]] void Fail(const char* what, const std::vector<std::string>& args) {
  std::string joined;
  for (const std::string& a : args) joined += "'" + absl::CHexEscape(a) + "' ";
  std::fprintf(stderr, "isolab_flags_fuzz: %s for %s\n", what, joined.c_str());
  std::abort();
}

bool IsBadInputCode(absl::StatusCode code) {
  return code == absl::StatusCode::kInvalidArgument || code == absl::StatusCode::kOutOfRange;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::vector<std::string> kAllowed = {
      "topology", "isolcpus",   "nohz_full",  "seed",        "quick",
      "json",     "fuzz_int32", "fuzz_int64", "fuzz_double", "fuzz_int_list"};
  // Every input starts from the defaults (absl::FlagSaver would log each restore).
  for (const std::string& name : kAllowed) {
    absl::CommandLineFlag* flag = absl::FindCommandLineFlag(name);
    std::string error;
    if (flag == nullptr || !flag->ParseFrom(flag->DefaultValue(), &error))
      Fail("cannot reset a flag", {name});
  }
  std::vector<std::string> args;
  std::string current;
  for (size_t i = 0; i < size; ++i) {
    const char c = static_cast<char>(data[i]);
    if (c == '\n') {
      args.push_back(current);
      current.clear();
    } else if (c != '\0') {  // argv strings cannot hold NUL
      current.push_back(c);
    }
  }
  if (!current.empty()) args.push_back(current);
  bool wants_help = false;
  const std::string error = isolation::isolab::ParseSubcommandFlags(args, kAllowed, &wants_help);
  if (!error.empty() || wants_help) {
    if (error.empty()) return 0;
    // Messages are escaped: a value's control bytes never reach the terminal.
    for (char c : error) {
      const auto u = static_cast<unsigned char>(c);
      if (u < 0x20 || u == 0x7f) Fail("a control byte in an error message", args);
    }
    return 0;
  }
  // Every ranged flag holds a value inside its range.
  for (const char* name : {"fuzz_int32", "fuzz_int64", "fuzz_double"}) {
    const isolation::isolab::FlagRange* range = isolation::isolab::FindFlagRange(name);
    double v = 0;
    if (range == nullptr ||
        !absl::SimpleAtod(absl::FindCommandLineFlag(name)->CurrentValue(), &v) || v < range->min ||
        v > range->max) {
      Fail("a ranged flag accepted a value outside its range", args);
    }
  }
  if (absl::GetFlag(FLAGS_topology) == "host") return 0;
  absl::StatusOr<std::vector<int>> list = isolation::isolab::ParseIntListFlag(
      "fuzz_int_list", absl::GetFlag(FLAGS_fuzz_int_list), 2, 4096);
  if (!list.ok() && !IsBadInputCode(list.status().code()))
    Fail("integer list error is not bad input", args);
  const isolation::experiments::CommonOptions common = isolation::isolab::CommonOptionsFromFlags();
  absl::StatusOr<isolation::Topology> topology = isolation::experiments::LoadTopology(common);
  if (!topology.ok()) {
    if (!IsBadInputCode(topology.status().code())) Fail("--topology error is not bad input", args);
    return 0;
  }
  absl::StatusOr<isolation::IsolationConfig> config =
      isolation::experiments::LoadIsolation(common, *topology);
  if (!config.ok()) {
    if (!IsBadInputCode(config.status().code()))
      Fail("--isolcpus/--nohz_full error is not bad input", args);
    if (config.status().message().empty()) Fail("error without message", args);
    return 0;
  }
  if (config->num_cpus() != topology->num_cpus()) Fail("isolation built for another machine", args);
  return 0;
}
