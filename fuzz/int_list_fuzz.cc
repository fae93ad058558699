// SPDX-License-Identifier: GPL-2.0-or-later
// Fuzz isolab::ParseIntListFlag, the parser of isolab's integer-list
// flags (--idle_llc_cpus).  The first byte picks the bounds (min, max, items);
// the rest is the flag's value.  Properties: never crash; the verdict
// matches an independent reference (split on ',', each item [1-9][0-9]* or
// "0", in range, distinct, 1..items of them); an accepted list prints back
// (joined with ',') to text that parses to the same list; an error is
// InvalidArgument naming the flag and the value.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_join.h"
#include "isolab/flag_parser.h"

namespace {

struct Bounds {
  int min, max;
  size_t items;
};
constexpr Bounds kBounds[] = {
    {2, 4096, 16}, {0, 0, 1}, {0, 2147483647, 4}, {1, 9, 3}, {100, 200, 16}};

[[noreturn]] void Fail(const char* what, std::string_view text) {
  std::fprintf(stderr, "int_list_fuzz: %s for \"%s\"\n", what,
               absl::CHexEscape(std::string(text)).c_str());
  std::abort();
}

// The grammar restated independently of the parser.
bool ReferenceAccepts(std::string_view text, const Bounds& b, std::vector<long long>* out) {
  out->clear();
  size_t start = 0;
  while (true) {
    const size_t comma = text.find(',', start);
    const std::string_view item = text.substr(
        start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    if (item.empty() || item.size() > 12) return false;
    for (char c : item) {
      if (c < '0' || c > '9') return false;
    }
    if (item.size() > 1 && item[0] == '0') return false;
    const long long v = std::stoll(std::string(item));
    if (v < b.min || v > b.max) return false;
    for (long long seen : *out) {
      if (seen == v) return false;
    }
    out->push_back(v);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return !out->empty() && out->size() <= b.items;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const Bounds& b = kBounds[data[0] % (sizeof(kBounds) / sizeof(kBounds[0]))];
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  absl::StatusOr<std::vector<int>> list =
      isolation::isolab::ParseIntListFlag("list", text, b.min, b.max, b.items);
  std::vector<long long> expected;
  const bool reference = ReferenceAccepts(text, b, &expected);
  if (list.ok() != reference)
    Fail(list.ok() ? "accepted what the grammar rejects" : "rejected a valid list", text);
  if (!list.ok()) {
    if (list.status().code() != absl::StatusCode::kInvalidArgument)
      Fail("error is not InvalidArgument", text);
    const std::string needle = "--list=" + absl::CHexEscape(std::string(text));
    if (std::string(list.status().message()).find(needle) == std::string::npos)
      Fail("error does not name the value", text);
    return 0;
  }
  if (list->size() != expected.size()) Fail("item count differs", text);
  for (size_t i = 0; i < expected.size(); ++i) {
    if ((*list)[i] != expected[i]) Fail("value differs", text);
  }
  const std::string printed = absl::StrJoin(*list, ",");
  absl::StatusOr<std::vector<int>> again =
      isolation::isolab::ParseIntListFlag("list", printed, b.min, b.max, b.items);
  if (!again.ok() || *again != *list) Fail("printed list does not parse back", text);
  return 0;
}
