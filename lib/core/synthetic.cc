// SPDX-License-Identifier: GPL-2.0-or-later
// Strict parser for hwloc synthetic descriptions and the topology they
// describe, built without hwloc (see synthetic.h for why and for the
// grammar).  The semantics follow hwloc 2.x's hwloc/topology-synthetic.c:
// hwloc_backend_synthetic_init() for the levels, hwloc_type_sscanf() for the
// type names, hwloc_synthetic_parse_attrs() for the attributes and
// hwloc_synthetic_process_indexes() for indexes=.

#include "synthetic.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "isolation/core/cpumask.h"

namespace isolation::internal {
namespace {

struct TypeName {
  const char* name;
  SyntheticType type;
};
// Lower-case spellings accepted; each is one that hwloc_type_sscanf() maps to
// the same type (its matching is case-insensitive per character).
constexpr TypeName kTypeNames[] = {
    {"package", SyntheticType::kPackage}, {"pack", SyntheticType::kPackage},
    {"socket", SyntheticType::kPackage},  {"numa", SyntheticType::kNuma},
    {"numanode", SyntheticType::kNuma},   {"node", SyntheticType::kNuma},
    {"l3", SyntheticType::kL3},           {"l3cache", SyntheticType::kL3},
    {"l2", SyntheticType::kL2},           {"l2cache", SyntheticType::kL2},
    {"l1", SyntheticType::kL1},           {"l1d", SyntheticType::kL1},
    {"l1cache", SyntheticType::kL1},      {"l1dcache", SyntheticType::kL1},
    {"core", SyntheticType::kCore},       {"pu", SyntheticType::kPu},
};

const char* TypeLabel(SyntheticType t) {
  switch (t) {
    case SyntheticType::kPackage:
      return "package";
    case SyntheticType::kNuma:
      return "numa";
    case SyntheticType::kL3:
      return "l3";
    case SyntheticType::kL2:
      return "l2";
    case SyntheticType::kL1:
      return "l1";
    case SyntheticType::kCore:
      return "core";
    case SyntheticType::kPu:
      return "pu";
  }
  return "?";
}

// Top-down order of the non-NUMA levels; a NUMA level may sit anywhere above
// the core level.
int Rank(SyntheticType t) {
  switch (t) {
    case SyntheticType::kPackage:
      return 0;
    case SyntheticType::kL3:
      return 1;
    case SyntheticType::kL2:
      return 2;
    case SyntheticType::kL1:
      return 3;
    case SyntheticType::kCore:
      return 4;
    case SyntheticType::kPu:
      return 5;
    case SyntheticType::kNuma:
      return -1;
  }
  return -1;
}

bool IsCache(SyntheticType t) {
  return t == SyntheticType::kL3 || t == SyntheticType::kL2 || t == SyntheticType::kL1;
}

bool IsLetterOrDigit(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsSpace(char c) { return c == ' ' || c == '\n'; }  // what hwloc skips between items
char Lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

std::optional<SyntheticType> LookupType(std::string_view word) {
  std::string lower(word);
  for (char& c : lower) c = Lower(c);
  for (const TypeName& t : kTypeNames) {
    if (lower == t.name) return t.type;
  }
  return std::nullopt;
}

// Saturating decimal/hex accumulation: values past the cap only need to be
// recognised as too large.
constexpr uint64_t kCap = uint64_t{1} << 62;

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  absl::StatusOr<SyntheticMachine> Run() {
    if (const size_t nul = text_.find('\0'); nul != std::string_view::npos) {
      return Error(nul, "embedded NUL byte (hwloc would see only the text before it)");
    }
    size_t pos = 0;
    bool seen_pu = false;
    bool any = false;
    while (true) {
      while (pos < text_.size() && IsSpace(text_[pos])) ++pos;
      if (pos >= text_.size()) break;
      if (any && !IsSpace(text_[pos - 1])) return Error(pos, "expected a space between items");
      any = true;
      absl::Status s;
      if (text_[pos] == '[') {
        s = ParseAttached(pos);
      } else {
        if (seen_pu) return Error(pos, "pu must be the last level");
        s = ParseLevel(pos);
        if (s.ok()) seen_pu = machine_.levels.back().type == SyntheticType::kPu;
      }
      if (!s.ok()) return s;
    }
    if (!seen_pu)
      return Error(text_.size(), "the description must end with a pu level, e.g. \"core:4 pu:2\"");
    return Finish();
  }

 private:
  std::string Quoted() const {
    return absl::StrCat("\"", absl::CHexEscape(std::string(text_)), "\"");
  }

  absl::Status Error(size_t pos, std::string_view what) const {
    return absl::InvalidArgumentError(absl::StrFormat("topology %s invalid at position %d: %s",
                                                      Quoted(), pos, std::string(what)));
  }

  std::string TokenAt(size_t pos) const {
    if (pos >= text_.size()) return "end of input";
    size_t end = pos;
    while (end < text_.size() && !IsSpace(text_[end]) && end - pos < 24) ++end;
    if (end == pos) end = pos + 1;
    return absl::StrCat("\"", absl::CHexEscape(std::string(text_.substr(pos, end - pos))), "\"");
  }

  // A type name: a run of letters and digits.
  std::string_view Word(size_t& pos) const {
    const size_t begin = pos;
    while (pos < text_.size() && IsLetterOrDigit(text_[pos])) ++pos;
    return text_.substr(begin, pos - begin);
  }

  absl::Status ParseLevel(size_t& pos) {
    const size_t begin = pos;
    const std::string_view word = Word(pos);
    if (word.empty() || IsDigit(word[0])) {
      return Error(
          begin,
          absl::StrCat("expected a level such as \"core:4\" (a type, ':', a count) but found ",
                       TokenAt(begin)));
    }
    const std::optional<SyntheticType> type = LookupType(word);
    if (!type) {
      return Error(begin, absl::StrCat("unknown or unsupported level type \"",
                                       absl::CHexEscape(std::string(word)),
                                       "\" (want package, numa, l3, l2, l1, core or pu)"));
    }
    if (pos >= text_.size() || text_[pos] != ':') {
      return Error(pos, absl::StrCat("expected ':' after \"", std::string(word), "\" but found ",
                                     TokenAt(pos)));
    }
    ++pos;
    // Order and uniqueness of levels.
    for (const SyntheticLevel& l : machine_.levels) {
      if (l.type == *type)
        return Error(begin, absl::StrCat("a second ", TypeLabel(*type), " level"));
    }
    if (*type == SyntheticType::kNuma) {
      if (numa_attached_)
        return Error(begin, "a numa level and a [numa] attachment cannot both be given");
      for (const SyntheticLevel& l : machine_.levels) {
        if (Rank(l.type) >= Rank(SyntheticType::kCore))
          return Error(begin, "the numa level must be above core");
      }
    } else {
      for (const SyntheticLevel& l : machine_.levels) {
        if (Rank(l.type) >= Rank(*type)) {
          return Error(begin,
                       absl::StrCat("level ", TypeLabel(*type), " cannot be below ",
                                    TypeLabel(l.type), " (order: package, l3, l2, l1, core, pu)"));
        }
      }
    }
    uint64_t count = 0;
    absl::Status s = ParseCount(pos, count);
    if (!s.ok()) return s;
    count_product_ =
        count_product_ > kCap / std::max<uint64_t>(count, 1) ? kCap : count_product_ * count;
    machine_.levels.push_back({*type, static_cast<int>(std::min<uint64_t>(count, kMaxCpus + 1))});
    if (pos < text_.size() && text_[pos] == '(') {
      s = ParseAttributes(pos, *type, /*attached=*/false);
      if (!s.ok()) return s;
    }
    return absl::OkStatus();
  }

  // hwloc reads the count with strtoul(base 0); we take decimal without a
  // leading zero (which strtoul would read as octal) or 0x-hex.
  absl::Status ParseCount(size_t& pos, uint64_t& count) const {
    const size_t begin = pos;
    count = 0;
    if (pos + 1 < text_.size() && text_[pos] == '0' &&
        (text_[pos + 1] == 'x' || text_[pos + 1] == 'X')) {
      pos += 2;
      const size_t digits = pos;
      while (pos < text_.size() && std::isxdigit(static_cast<unsigned char>(text_[pos]))) {
        const char c = Lower(text_[pos]);
        const uint64_t d =
            IsDigit(c) ? static_cast<uint64_t>(c - '0') : static_cast<uint64_t>(c - 'a' + 10);
        count = count > (kCap >> 4) ? kCap : count * 16 + d;
        ++pos;
      }
      if (pos == digits)
        return Error(pos,
                     absl::StrCat("expected hex digits after \"0x\" but found ", TokenAt(pos)));
    } else {
      if (pos >= text_.size() || !IsDigit(text_[pos])) {
        return Error(pos, absl::StrCat("expected a number of objects but found ", TokenAt(pos)));
      }
      if (text_[pos] == '0' && pos + 1 < text_.size() && IsDigit(text_[pos + 1])) {
        return Error(pos, "a count with a leading zero (hwloc would read it as octal)");
      }
      while (pos < text_.size() && IsDigit(text_[pos])) {
        count = count > kCap / 10 ? kCap : count * 10 + static_cast<uint64_t>(text_[pos] - '0');
        ++pos;
      }
    }
    if (count == 0) return Error(begin, "a level of 0 objects");
    if (pos < text_.size() && !IsSpace(text_[pos]) && text_[pos] != '(') {
      return Error(
          pos, absl::StrCat("expected a space or '(' after the count but found ", TokenAt(pos)));
    }
    return absl::OkStatus();
  }

  absl::Status ParseAttached(size_t& pos) {
    const size_t begin = pos;
    ++pos;  // '['
    const std::string_view word = Word(pos);
    const std::optional<SyntheticType> type = LookupType(word);
    if (!type || *type != SyntheticType::kNuma) {
      return Error(begin + 1,
                   absl::StrCat("only [numa] may be attached, found ", TokenAt(begin + 1)));
    }
    if (numa_attached_) return Error(begin, "a second [numa] attachment");
    for (const SyntheticLevel& l : machine_.levels) {
      if (l.type == SyntheticType::kNuma)
        return Error(begin, "a numa level and a [numa] attachment cannot both be given");
    }
    numa_attached_ = true;
    machine_.numa_attach_depth = static_cast<int>(machine_.levels.size());
    if (pos < text_.size() && text_[pos] == '(') {
      absl::Status s = ParseAttributes(pos, SyntheticType::kNuma, /*attached=*/true);
      if (!s.ok()) return s;
    }
    if (pos >= text_.size() || text_[pos] != ']') {
      return Error(pos, absl::StrCat("expected ']' but found ", TokenAt(pos)));
    }
    ++pos;
    return absl::OkStatus();
  }

  // "(" attr (" " attr)* ")", as hwloc_synthetic_parse_attrs() reads them.
  absl::Status ParseAttributes(size_t& pos, SyntheticType type, bool attached) {
    ++pos;  // '('
    std::vector<std::string_view> seen;
    while (true) {
      const size_t begin = pos;
      size_t eq = begin;
      while (eq < text_.size() && text_[eq] >= 'a' && text_[eq] <= 'z') ++eq;
      if (eq >= text_.size() || text_[eq] != '=') {
        return Error(begin,
                     absl::StrCat("expected an attribute (memory=, size= or indexes=) but found ",
                                  TokenAt(begin)));
      }
      const std::string_view name = text_.substr(begin, eq - begin);
      if (std::find(seen.begin(), seen.end(), name) != seen.end()) {
        return Error(begin, absl::StrCat("attribute ", std::string(name), "= given twice"));
      }
      seen.push_back(name);
      pos = eq + 1;
      absl::Status s;
      if (name == "memory" && !IsCache(type)) {
        s = ParseSize(pos);
      } else if (name == "size" && IsCache(type)) {
        s = ParseSize(pos);
      } else if (name == "indexes" && type == SyntheticType::kPu && !attached) {
        pu_indexes_begin_ = pos;
        while (pos < text_.size() && text_[pos] != ' ' && text_[pos] != ')')
          ++pos;  // strcspn(" )")
        pu_indexes_ = text_.substr(pu_indexes_begin_, pos - pu_indexes_begin_);
        has_pu_indexes_ = true;
      } else {
        return Error(
            begin,
            absl::StrCat("attribute ", std::string(name), "= is not supported on ",
                         attached ? "[numa]" : TypeLabel(type),
                         " (memory= on package/numa/core/pu, size= on caches, indexes= on pu)"));
      }
      if (!s.ok()) return s;
      if (pos < text_.size() && text_[pos] == ')') {
        ++pos;
        break;
      }
      if (pos < text_.size() && text_[pos] == ' ') {
        ++pos;
        continue;
      }
      return Error(pos,
                   absl::StrCat("expected ' ' or ')' after an attribute but found ", TokenAt(pos)));
    }
    if (!attached && pos < text_.size() && !IsSpace(text_[pos])) {
      return Error(pos, absl::StrCat("expected a space after ')' but found ", TokenAt(pos)));
    }
    return absl::OkStatus();
  }

  // hwloc_synthetic_parse_memory_attr(): a number and an optional unit.  A
  // leading zero is refused: strtoull(base 0) would read octal and stop at 8.
  absl::Status ParseSize(size_t& pos) const {
    const size_t begin = pos;
    if (pos >= text_.size() || !IsDigit(text_[pos])) {
      return Error(pos, absl::StrCat("expected a size but found ", TokenAt(pos)));
    }
    if (text_[pos] == '0' && pos + 1 < text_.size() && IsDigit(text_[pos + 1])) {
      return Error(pos, "a size with a leading zero (hwloc would read it as octal)");
    }
    while (pos < text_.size() && IsDigit(text_[pos])) ++pos;
    if (pos - begin > 19) return Error(begin, "a size of more than 19 digits");
    if (pos + 1 < text_.size()) {
      const std::string unit = {Lower(text_[pos]), Lower(text_[pos + 1])};
      if (unit == "kb" || unit == "mb" || unit == "gb" || unit == "tb") pos += 2;
    }
    return absl::OkStatus();
  }

  absl::StatusOr<SyntheticMachine> Finish() {
    if (count_product_ > static_cast<uint64_t>(kMaxCpus)) {
      const std::string count =
          count_product_ >= kCap ? absl::StrCat("more than ", kCap) : absl::StrCat(count_product_);
      return absl::InvalidArgumentError(absl::StrFormat(
          "topology %s has %s cpus, more than the maximum %d", Quoted(), count, kMaxCpus));
    }
    machine_.num_pus = static_cast<int>(count_product_);
    machine_.pu_os_index.resize(static_cast<size_t>(machine_.num_pus));
    for (int i = 0; i < machine_.num_pus; ++i) machine_.pu_os_index[static_cast<size_t>(i)] = i;
    if (has_pu_indexes_) {
      absl::Status s = ProcessIndexes();
      if (!s.ok()) return s;
    }
    return std::move(machine_);
  }

  struct Loop {
    uint64_t step;
    uint64_t nb;
    int depth;  // level index + 1 for the type form (0 = the machine); -1 for the numeric form
  };

  // hwloc_synthetic_process_indexes() for the PU level (total = PU count).
  absl::Status ProcessIndexes() {
    const uint64_t total = static_cast<uint64_t>(machine_.num_pus);
    const std::string_view spec = pu_indexes_;
    const size_t at = pu_indexes_begin_;
    std::vector<int>& out = machine_.pu_os_index;
    if (spec.empty()) return Error(at, "empty indexes=");
    if (spec.find_first_not_of("0123456789,") == std::string_view::npos) {
      // Explicit list, strtoul(base 10) per item.
      std::vector<int> values;
      size_t p = 0;
      while (true) {
        const size_t b = p;
        uint64_t v = 0;
        while (p < spec.size() && IsDigit(spec[p])) {
          v = v > kCap / 10 ? kCap : v * 10 + static_cast<uint64_t>(spec[p] - '0');
          ++p;
        }
        if (p == b) return Error(at + p, "expected an index in the indexes= list");
        if (v >= total) {
          return Error(at + b, absl::StrFormat("index %s is not below the PU count %d",
                                               std::string(spec.substr(b, p - b)), total));
        }
        values.push_back(static_cast<int>(v));
        if (p >= spec.size()) break;
        ++p;  // ','
      }
      if (values.size() != total) {
        return Error(at,
                     absl::StrFormat("indexes= lists %d indexes for %d PUs", values.size(), total));
      }
      out = std::move(values);
      return CheckPermutation(at);
    }
    std::vector<Loop> loops;
    uint64_t minstep = total;
    uint64_t nbs = 1;
    if (IsDigit(spec[0])) {
      // Interleaving loops "step*nb:step*nb..." (strtol base 0 in hwloc:
      // leading zeros are refused here).
      size_t p = 0;
      while (true) {
        uint64_t step = 0, nb = 0;
        absl::Status s = LoopNumber(spec, at, p, step, total);
        if (!s.ok()) return s;
        if (p >= spec.size() || spec[p] != '*')
          return Error(at + p, "expected '*' in an interleaving loop");
        ++p;
        s = LoopNumber(spec, at, p, nb, total);
        if (!s.ok()) return s;
        loops.push_back({step, nb, -1});
        if (p >= spec.size()) break;
        if (spec[p] != ':') return Error(at + p, "expected ':' between interleaving loops");
        ++p;
      }
    } else {
      // Interleaving by level types ("core:pack").
      size_t p = 0;
      while (true) {
        const size_t b = p;
        while (p < spec.size() && IsLetterOrDigit(spec[p])) ++p;
        const std::optional<SyntheticType> type = LookupType(spec.substr(b, p - b));
        int depth = -1;
        if (type && *type != SyntheticType::kPu) {
          for (size_t i = 0; i < machine_.levels.size(); ++i) {
            if (machine_.levels[i].type == *type) depth = static_cast<int>(i) + 1;
          }
        }
        if (depth < 0) {
          return Error(at + b, absl::StrCat("indexes= names ", TokenAt(at + b),
                                            ", which is not a level above pu in this description"));
        }
        for (const Loop& l : loops) {
          if (l.depth == depth) return Error(at + b, "indexes= names a level twice");
        }
        loops.push_back({0, 0, depth});
        if (p >= spec.size()) break;
        if (spec[p] != ':') return Error(at + p, "expected ':' between level names in indexes=");
        ++p;
      }
      std::vector<uint64_t> width(machine_.levels.size() + 1,
                                  1);  // objects per level; [0] = machine
      for (size_t i = 0; i < machine_.levels.size(); ++i) {
        width[i + 1] = width[i] * static_cast<uint64_t>(machine_.levels[i].arity);
      }
      for (Loop& l : loops) {
        int prev = 0;  // the closest named level above, else the machine
        for (const Loop& o : loops) {
          if (o.depth < l.depth && o.depth > prev) prev = o.depth;
        }
        l.step = total / width[static_cast<size_t>(l.depth)];
        l.nb = width[static_cast<size_t>(l.depth)] / width[static_cast<size_t>(prev)];
      }
    }
    for (const Loop& l : loops) {
      minstep = std::min(minstep, l.step);
      if (nbs > total) break;
      nbs *= l.nb;
    }
    if (nbs > total || total % nbs != 0) {
      return Error(at, "the interleaving loops do not cover the PUs exactly");
    }
    if (nbs != total) {
      // hwloc adds the missing innermost loop when it is the smallest one.
      if (minstep != total / nbs)
        return Error(at, "the interleaving loops do not cover the PUs exactly");
      loops.push_back({1, total / nbs, -1});
    }
    std::fill(out.begin(), out.end(), 0);
    uint64_t mul = 1;
    for (const Loop& l : loops) {
      for (uint64_t j = 0; j < total; ++j) out[j] += static_cast<int>(((j / l.step) % l.nb) * mul);
      mul *= l.nb;
    }
    return CheckPermutation(at);
  }

  absl::Status LoopNumber(std::string_view spec, size_t at, size_t& p, uint64_t& value,
                          uint64_t total) const {
    const size_t b = p;
    if (p >= spec.size() || spec[p] < '1' || spec[p] > '9') {
      return Error(at + p,
                   "expected a number from 1 without a leading zero in an interleaving loop");
    }
    value = 0;
    while (p < spec.size() && IsDigit(spec[p])) {
      value = value > kCap / 10 ? kCap : value * 10 + static_cast<uint64_t>(spec[p] - '0');
      ++p;
    }
    if (value > total) return Error(at + b, "an interleaving loop larger than the PU count");
    return absl::OkStatus();
  }

  absl::Status CheckPermutation(size_t at) const {
    std::vector<bool> used(machine_.pu_os_index.size(), false);
    for (int v : machine_.pu_os_index) {
      if (v < 0 || static_cast<size_t>(v) >= used.size() || used[static_cast<size_t>(v)]) {
        return Error(
            at, absl::StrFormat("indexes= does not number the PUs 0..%d once each (PU index %d)",
                                used.size() - 1, v));
      }
      used[static_cast<size_t>(v)] = true;
    }
    return absl::OkStatus();
  }

  std::string_view text_;
  SyntheticMachine machine_;
  uint64_t count_product_ = 1;
  bool numa_attached_ = false;
  bool has_pu_indexes_ = false;
  size_t pu_indexes_begin_ = 0;
  std::string_view pu_indexes_;
};

}  // namespace

std::vector<int> DensifyIds(const std::vector<int>& ids) {
  std::map<int, int> remap;
  std::vector<int> out(ids.size());
  for (size_t i = 0; i < ids.size(); ++i) {
    auto it = remap.find(ids[i]);
    if (it == remap.end()) it = remap.emplace(ids[i], static_cast<int>(remap.size())).first;
    out[i] = it->second;
  }
  return out;
}

absl::StatusOr<SyntheticMachine> ParseSynthetic(std::string_view description) {
  return Parser(description).Run();
}

absl::StatusOr<Topology> BuildSynthetic(const SyntheticMachine& machine, std::string description) {
  const size_t n = static_cast<size_t>(machine.num_pus);
  const size_t depth = machine.levels.size();
  if (n == 0 || machine.pu_os_index.size() != n || depth == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("topology \"", description, "\" has no processing units"));
  }
  // PUs below one object of each level; the index of PU j's ancestor at
  // level i is j / below[i] (depth-first numbering of a symmetric tree).
  std::vector<size_t> below(depth, 1);
  for (size_t i = depth - 1; i-- > 0;)
    below[i] = below[i + 1] * static_cast<size_t>(machine.levels[i + 1].arity);
  auto level_of = [&](SyntheticType t) -> int {
    for (size_t i = 0; i < depth; ++i) {
      if (machine.levels[i].type == t) return static_cast<int>(i);
    }
    return -1;
  };
  const int core = level_of(SyntheticType::kCore);
  const int l3 = level_of(SyntheticType::kL3);
  const int package = level_of(SyntheticType::kPackage);
  const int numa = level_of(SyntheticType::kNuma);
  std::vector<int> core_of(n), llc_of(n), node_of(n), package_of(n);
  for (size_t j = 0; j < n; ++j) {
    auto index_at = [&](int level) {
      return static_cast<int>(j / below[static_cast<size_t>(level)]);
    };
    const size_t cpu = static_cast<size_t>(machine.pu_os_index[j]);
    // Same rules as for hwloc topologies (FromLoadedHwloc): a PU without a
    // core is its own core; the LLC is the L3, else the package, else all.
    core_of[cpu] = core >= 0 ? index_at(core) : static_cast<int>(j);
    package_of[cpu] = package >= 0 ? index_at(package) : 0;
    llc_of[cpu] = l3 >= 0 ? index_at(l3) : package_of[cpu];
    if (numa >= 0) {
      node_of[cpu] = index_at(numa);
    } else if (machine.numa_attach_depth > 0) {
      node_of[cpu] = index_at(machine.numa_attach_depth - 1);
    } else {
      node_of[cpu] = 0;
    }
  }
  return Topology::FromIds(DensifyIds(core_of), DensifyIds(llc_of), DensifyIds(node_of),
                           DensifyIds(package_of), std::move(description));
}

}  // namespace isolation::internal
