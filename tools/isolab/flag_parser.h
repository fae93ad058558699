// SPDX-License-Identifier: GPL-2.0-or-later
// flag_parser.h (isolab): the command-line flag parsing of isolab, also
// run by the fuzz targets (fuzz/isolab_flags_fuzz.cc,
// fuzz/int_list_fuzz.cc).  Thread safety: ParseSubcommandFlags writes the
// global absl flags; call it from one thread.  ParseIntListFlag is pure.

#ifndef ISOLATION_TOOLS_ISOLAB_FLAG_PARSER_H_
#define ISOLATION_TOOLS_ISOLAB_FLAG_PARSER_H_

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace isolation::isolab {

// Parses `args` (the words after the subcommand): --name=value, --name
// value, --bool, --nobool, -name..., for the flags in `allowed` only;
// --help/-h/--helpfull set *wants_help.  Returns an error message naming
// the bad argument (control bytes escaped), or "" on success (then the
// flags hold the values).  One rule for every subcommand: a flag given
// twice (in any of its forms) is an error, and so is "--flag VALUE" whose
// VALUE looks like a flag ("--trace --json"; a negative number is a
// value; "--trace=--json" says it is meant).
std::string ParseSubcommandFlags(const std::vector<std::string>& args,
                                 const std::vector<std::string>& allowed, bool* wants_help);

// Separates a subcommand's positional words from its flags: `args` minus
// the words that are not flags and not the value of a preceding
// "--flag value" (a non-bool flag in `allowed` written without '='), which
// go to *positional in order.  A "--" ends the flags: every word after it
// goes to *after_dashes (isolab record's command).  Errors: none; the flags
// left are checked by ParseSubcommandFlags.
std::vector<std::string> SplitPositional(const std::vector<std::string>& args,
                                         const std::vector<std::string>& allowed,
                                         std::vector<std::string>* positional,
                                         std::vector<std::string>* after_dashes);

// An integer-list flag value such as --idle_llc_cpus=16,64,256: decimal
// numbers (no sign, no spaces, no leading zeros) separated by single commas,
// between 1 and `max_items` of them, each in [min, max], none twice.
// Errors: InvalidArgument naming the flag, the (C-escaped) value and the
// bad item.
absl::StatusOr<std::vector<int>> ParseIntListFlag(std::string_view flag, std::string_view text,
                                                  int min, int max, size_t max_items = 16);

// The documented range of a numeric flag, [min, max] (integer flags: whole
// numbers).  ParseSubcommandFlags checks every numeric flag it sets against
// its range, one rule for every subcommand ("--x=V: out of range, want
// MIN..MAX"), and --help prints it.  Declared beside the flag's definition,
// at namespace scope:
//   ISOLAB_FLAG_RANGE(mmcid_scan_reps, 1, 1000000);
// A range bounds what one value can ask; what a whole run costs is the cost
// estimate's business (experiments::RunCost, --force).
struct FlagRange {
  double min = 0;
  double max = 0;
};
// Records `flag`'s range; returns true (for a static initializer).  A second
// declaration of one flag keeps the first.
bool DeclareFlagRange(std::string_view flag, double min, double max);
// The declared range of `flag`, or nullptr.
const FlagRange* FindFlagRange(std::string_view flag);
// "MIN..MAX" as --help and the errors print it.
std::string FlagRangeText(const FlagRange& range);

#define ISOLAB_FLAG_RANGE(name, min, max)                                    \
  [[maybe_unused]] static const bool isolab_flag_range_##name =              \
      ::isolation::isolab::DeclareFlagRange(#name, static_cast<double>(min), \
                                            static_cast<double>(max))

// Whether the last ParseSubcommandFlags call set flag `name` (in any of its
// forms): a default left alone and the same value given explicitly can mean
// different things ("every registered variant" vs "this list").
bool FlagGiven(std::string_view name);

// A list-of-names flag value such as --idle_variants=V0,V1: names (no
// spaces or control bytes) separated by single commas, each once, at most
// `max_items`; "" is the empty list when `allow_empty`.  Errors:
// InvalidArgument naming the flag, the escaped value and the bad item.
absl::StatusOr<std::vector<std::string>> ParseNameListFlag(std::string_view flag,
                                                           std::string_view text,
                                                           bool allow_empty = false,
                                                           size_t max_items = 256);

// For the subcommands that run every mechanism (replay, run): the rows the
// user chose with the flags that choose them in each mechanism's own
// subcommand (--mmcid_variants, --tmigr_variants, --idle_variants,
// --vmstat_strategies), mechanism ("mm_cid", "tmigr", "idle_select",
// "vmstat") -> names, for the flags given only.  Errors: ParseNameListFlag's;
// Internal when such a flag is not linked in.
absl::StatusOr<std::map<std::string, std::vector<std::string>>> RowFlagsGiven();

}  // namespace isolation::isolab

#endif  // ISOLATION_TOOLS_ISOLAB_FLAG_PARSER_H_
