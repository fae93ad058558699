// SPDX-License-Identifier: GPL-2.0-or-later
// isolab's flag parsing (the fuzz targets exercise this very code) and
// integer-list flag values.

#include "isolab/flag_parser.h"

#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/flags/commandlineflag.h"
#include "absl/flags/reflection.h"
#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace isolation::isolab {

std::string ParseSubcommandFlags(const std::vector<std::string>& args, const std::vector<std::string>& allowed,
                                 bool* wants_help) {
  const std::set<std::string> allowed_set(allowed.begin(), allowed.end());
  const size_t argc = args.size();
  for (size_t i = 0; i < argc; ++i) {
    std::string_view arg = args[i];
    if (arg == "--help" || arg == "-h" || arg == "--helpfull") {
      *wants_help = true;
      continue;
    }
    if (arg.empty() || arg[0] != '-') {
      return absl::StrCat("unexpected argument '", std::string(arg), "'");
    }
    arg.remove_prefix(arg.size() > 1 && arg[1] == '-' ? 2 : 1);
    std::string name(arg), value;
    bool has_value = false;
    if (const size_t eq = arg.find('='); eq != std::string_view::npos) {
      name = std::string(arg.substr(0, eq));
      value = std::string(arg.substr(eq + 1));
      has_value = true;
    }
    absl::CommandLineFlag* flag = nullptr;
    if (allowed_set.count(name)) flag = absl::FindCommandLineFlag(name);
    bool negated = false;
    if (flag == nullptr && absl::StartsWith(name, "no") && allowed_set.count(name.substr(2))) {
      flag = absl::FindCommandLineFlag(name.substr(2));
      negated = flag != nullptr && flag->IsOfType<bool>() && !has_value;
      if (!negated) flag = nullptr;
    }
    if (flag == nullptr) {
      return absl::StrCat("unknown flag '--", name, "' (see --help)");
    }
    if (negated) {
      value = "false";
    } else if (!has_value) {
      if (flag->IsOfType<bool>()) {
        value = "true";
      } else if (i + 1 < argc) {
        value = args[++i];
      } else {
        return absl::StrCat("flag '--", name, "' needs a value");
      }
    }
    std::string error;
    if (!flag->ParseFrom(value, &error)) {
      return absl::StrCat("bad value '", value, "' for --", name, ": ", error);
    }
  }
  return "";
}

std::vector<std::string> SplitPositional(const std::vector<std::string>& args, const std::vector<std::string>& allowed,
                                         std::vector<std::string>* positional, std::vector<std::string>* after_dashes) {
  const std::set<std::string> allowed_set(allowed.begin(), allowed.end());
  std::vector<std::string> flags;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--") {
      after_dashes->assign(args.begin() + static_cast<std::ptrdiff_t>(i) + 1, args.end());
      break;
    }
    if (arg.empty() || arg[0] != '-') {
      positional->push_back(arg);
      continue;
    }
    flags.push_back(arg);
    std::string_view name(arg);
    name.remove_prefix(name.size() > 1 && name[1] == '-' ? 2 : 1);
    if (name.find('=') != std::string_view::npos) continue;
    const std::string n(name);
    if (!allowed_set.count(n)) continue;
    const absl::CommandLineFlag* flag = absl::FindCommandLineFlag(n);
    if (flag != nullptr && !flag->IsOfType<bool>() && i + 1 < args.size()) flags.push_back(args[++i]);
  }
  return flags;
}

absl::StatusOr<std::vector<int>> ParseIntListFlag(std::string_view flag, std::string_view text, int min, int max,
                                                  size_t max_items) {
  const std::string name(flag), value = absl::CHexEscape(std::string(text));
  auto bad = [&](std::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat("--", name, "=", value, ": ", std::string(why), " (want ",
                                                   max_items == 1 ? "one integer" : "integers", " ", min, "..", max,
                                                   " separated by commas, at most ", max_items, ")"));
  };
  if (text.empty()) return bad("empty list");
  std::vector<int> out;
  size_t pos = 0;
  while (true) {
    const size_t begin = pos;
    long long v = 0;
    while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') {
      if (v <= max) v = v * 10 + (text[pos] - '0');  // stops growing once past max
      ++pos;
    }
    const std::string item(text.substr(begin, pos - begin));
    if (pos == begin) {
      return bad(absl::StrCat("expected a number at position ", begin,
                              pos < text.size() ? absl::StrCat(", found '", std::string(1, text[pos]), "'") : ""));
    }
    if (item.size() > 1 && item[0] == '0') return bad(absl::StrCat("'", item, "' has a leading zero"));
    if (v < min || v > max) return bad(absl::StrCat("'", item, "' is out of range"));
    for (int seen : out) {
      if (seen == v) return bad(absl::StrCat("'", item, "' is listed twice"));
    }
    out.push_back(static_cast<int>(v));
    if (out.size() > max_items) return bad("too many items");
    if (pos == text.size()) break;
    if (text[pos] != ',') {
      return bad(absl::StrCat("expected ',' at position ", pos, ", found '", std::string(1, text[pos]), "'"));
    }
    ++pos;
  }
  return out;
}

}  // namespace isolation::isolab
