// SPDX-License-Identifier: GPL-2.0-or-later
// isolab's flag parsing (the fuzz targets exercise this very code) and
// integer-list flag values.

#include "isolab/flag_parser.h"

#include <cmath>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/flags/commandlineflag.h"
#include "absl/flags/reflection.h"
#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace isolation::isolab {

namespace {

// A word in a message, with control bytes and quotes escaped (a value can
// come from a file or a script and must not drive the terminal).
std::string Escaped(std::string_view word) { return absl::CHexEscape(std::string(word)); }

// Another library's message about a value (absl's flag parsing quotes it
// raw): its control bytes escaped, the rest as written.
std::string ControlBytesEscaped(std::string_view text) {
  std::string out;
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) {
      out += absl::StrFormat("\\x%02x", u);
    } else {
      out += c;
    }
  }
  return out;
}

// "-1", "-0.5": a negative number is a value, not a flag.
bool LooksLikeFlag(std::string_view word) {
  return word.size() > 1 && word[0] == '-' && !(word[1] >= '0' && word[1] <= '9') && word[1] != '.';
}

std::map<std::string, FlagRange, std::less<>>& Ranges() {
  static auto* ranges = new std::map<std::string, FlagRange, std::less<>>;
  return *ranges;
}

bool IsNumericFlag(const absl::CommandLineFlag& flag) {
  return flag.IsOfType<int32_t>() || flag.IsOfType<int64_t>() || flag.IsOfType<uint64_t>() ||
         flag.IsOfType<uint32_t>() || flag.IsOfType<double>() || flag.IsOfType<float>();
}

std::string NumberText(double v) {
  if (v == static_cast<double>(static_cast<int64_t>(v)) && std::abs(v) < 1e15) {
    return absl::StrCat(static_cast<int64_t>(v));
  }
  return absl::StrFormat("%g", v);
}

}  // namespace

bool DeclareFlagRange(std::string_view flag, double min, double max) {
  Ranges().emplace(std::string(flag), FlagRange{min, max});
  return true;
}

const FlagRange* FindFlagRange(std::string_view flag) {
  auto it = Ranges().find(flag);
  return it == Ranges().end() ? nullptr : &it->second;
}

std::string FlagRangeText(const FlagRange& range) {
  return absl::StrCat(NumberText(range.min), "..", NumberText(range.max));
}

// The flags the last ParseSubcommandFlags call set (one thread; see the header).
std::set<std::string, std::less<>>& LastGiven() {
  static std::set<std::string, std::less<>>* given = new std::set<std::string, std::less<>>;
  return *given;
}

std::string ParseSubcommandFlags(const std::vector<std::string>& args,
                                 const std::vector<std::string>& allowed, bool* wants_help) {
  const std::set<std::string> allowed_set(allowed.begin(), allowed.end());
  // Every flag once: "last one wins" silently changes what a script meant.
  std::map<std::string, std::string> given;  // flag name -> the argument that set it
  LastGiven().clear();
  const size_t argc = args.size();
  for (size_t i = 0; i < argc; ++i) {
    std::string_view arg = args[i];
    if (arg == "--help" || arg == "-h" || arg == "--helpfull") {
      *wants_help = true;
      continue;
    }
    if (arg.empty() || arg[0] != '-') {
      return absl::StrCat("unexpected argument '", Escaped(arg), "'");
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
      return absl::StrCat("unknown flag '--", Escaped(name), "' (see --help)");
    }
    const std::string canonical = negated ? name.substr(2) : name;
    if (auto [it, fresh] = given.emplace(canonical, args[i]); !fresh) {
      return absl::StrCat("flag '--", Escaped(canonical), "' is given twice ('",
                          Escaped(it->second), "', then '", Escaped(args[i]), "'); give it once");
    }
    LastGiven().insert(canonical);
    if (negated) {
      value = "false";
    } else if (!has_value) {
      if (flag->IsOfType<bool>()) {
        value = "true";
      } else if (i + 1 < argc) {
        if (LooksLikeFlag(args[i + 1])) {
          return absl::StrCat("flag '--", Escaped(name), "' needs a value, but the next word '",
                              Escaped(args[i + 1]), "' is a flag (write --", Escaped(name), "=",
                              Escaped(args[i + 1]), " if that is the value)");
        }
        value = args[++i];
      } else {
        return absl::StrCat("flag '--", Escaped(name), "' needs a value");
      }
    }
    std::string error;
    if (!flag->ParseFrom(value, &error)) {
      return absl::StrCat("bad value '", Escaped(value), "' for --", Escaped(name), ": ",
                          ControlBytesEscaped(error));
    }
    // One rule for every numeric flag: its documented range (FlagRange).
    if (const FlagRange* range = FindFlagRange(canonical);
        range != nullptr && IsNumericFlag(*flag)) {
      double v = 0;
      if (!absl::SimpleAtod(flag->CurrentValue(), &v) || !(v >= range->min && v <= range->max)) {
        return absl::StrCat("--", Escaped(canonical), "=", Escaped(value), ": out of range (want ",
                            FlagRangeText(*range), ")");
      }
    }
  }
  return "";
}

bool FlagGiven(std::string_view name) { return LastGiven().count(name) > 0; }

absl::StatusOr<std::vector<std::string>> ParseNameListFlag(std::string_view flag,
                                                           std::string_view text, bool allow_empty,
                                                           size_t max_items) {
  const std::string name(flag), value = Escaped(text);
  auto bad = [&](std::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--", name, "=", value, ": ", std::string(why),
        " (want names separated by single commas, each once, at most ", max_items, ")"));
  };
  std::vector<std::string> out;
  if (text.empty()) {
    if (allow_empty) return out;
    return bad("empty list");
  }
  std::set<std::string_view> seen;
  size_t begin = 0;
  while (true) {
    const size_t comma = text.find(',', begin);
    const std::string_view item =
        text.substr(begin, comma == std::string_view::npos ? text.npos : comma - begin);
    if (item.empty()) return bad(absl::StrCat("empty name at position ", begin));
    for (char c : item) {
      const auto u = static_cast<unsigned char>(c);
      if (u <= ' ' || u >= 0x7f)
        return bad(absl::StrCat("'", Escaped(item), "' has a space or control byte"));
    }
    if (!seen.insert(item).second)
      return bad(absl::StrCat("'", Escaped(item), "' is listed twice"));
    if (out.size() == max_items) return bad("too many names");
    out.emplace_back(item);
    if (comma == std::string_view::npos) break;
    begin = comma + 1;
  }
  return out;
}

std::vector<std::string> SplitPositional(const std::vector<std::string>& args,
                                         const std::vector<std::string>& allowed,
                                         std::vector<std::string>* positional,
                                         std::vector<std::string>* after_dashes) {
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
    if (flag != nullptr && !flag->IsOfType<bool>() && i + 1 < args.size())
      flags.push_back(args[++i]);
  }
  return flags;
}

absl::StatusOr<std::vector<int>> ParseIntListFlag(std::string_view flag, std::string_view text,
                                                  int min, int max, size_t max_items) {
  const std::string name(flag), value = absl::CHexEscape(std::string(text));
  auto bad = [&](std::string_view why) {
    return absl::InvalidArgumentError(
        absl::StrCat("--", name, "=", value, ": ", std::string(why), " (want ",
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
      return bad(absl::StrCat(
          "expected a number at position ", begin,
          pos < text.size() ? absl::StrCat(", found '", std::string(1, text[pos]), "'") : ""));
    }
    if (item.size() > 1 && item[0] == '0')
      return bad(absl::StrCat("'", item, "' has a leading zero"));
    if (v < min || v > max) return bad(absl::StrCat("'", item, "' is out of range"));
    for (int seen : out) {
      if (seen == v) return bad(absl::StrCat("'", item, "' is listed twice"));
    }
    out.push_back(static_cast<int>(v));
    if (out.size() > max_items) return bad("too many items");
    if (pos == text.size()) break;
    if (text[pos] != ',') {
      return bad(absl::StrCat("expected ',' at position ", pos, ", found '",
                              std::string(1, text[pos]), "'"));
    }
    ++pos;
  }
  return out;
}

absl::StatusOr<std::map<std::string, std::vector<std::string>>> RowFlagsGiven() {
  constexpr struct {
    const char* mechanism;
    const char* flag;
  } kRowFlags[] = {{"mm_cid", "mmcid_variants"},
                   {"tmigr", "tmigr_variants"},
                   {"idle_select", "idle_variants"},
                   {"vmstat", "vmstat_strategies"}};
  std::map<std::string, std::vector<std::string>> rows;
  for (const auto& [mechanism, flag_name] : kRowFlags) {
    if (!FlagGiven(flag_name)) continue;
    const absl::CommandLineFlag* flag = absl::FindCommandLineFlag(flag_name);
    if (flag == nullptr) {
      return absl::InternalError(absl::StrCat("flag --", flag_name, " is not linked in"));
    }
    absl::StatusOr<std::vector<std::string>> names =
        ParseNameListFlag(flag_name, flag->CurrentValue());
    if (!names.ok()) return names.status();
    rows[mechanism] = *std::move(names);
  }
  return rows;
}

}  // namespace isolation::isolab
