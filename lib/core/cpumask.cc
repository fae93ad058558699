// SPDX-License-Identifier: GPL-2.0-or-later
// cpulist parsing and printing for CpuMask.
//
// Parse() follows bitmap_parselist() of lib/bitmap-str.c (v6.x) rule for
// rule, including its permissive corners, because users paste lists from
// kernel command lines and sysfs and expect the kernel's verdict:
//  - regions are separated by ',' or whitespace, and any run of separators
//    is accepted ("1,,2", ",1", "1," and "1 2" all parse);
//  - the string ends at the first '\0' or '\n' *inside a region*; between
//    regions '\n' is just whitespace (bitmap_find_region skips it);
//  - `N` (upper case only) stands for the last bit wherever a number may
//    appear; "all" (any case) is the whole range and may carry a pattern;
//  - after `/group` the kernel does not require a separator, so
//    "0-3:1/2N" is the region 0-3:1/2 followed by the region N;
//  - errno classes: EINVAL (malformed, reversed range, group 0,
//    used > group) -> InvalidArgument; ERANGE (bit >= nbits) and EOVERFLOW
//    (number does not fit 32 bits) -> OutOfRange.  EINVAL checks come before
//    ERANGE, as in bitmap_check_region().

#include <cctype>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "isolation/core/cpumask.h"
#include "kernel_ctype.h"

namespace isolation {
namespace {

// The kernel's isspace() (lib/ctype.c) is Latin-1: 0xA0 is a space too.
using internal::KernelIsSpace;

class CpulistParser {
 public:
  CpulistParser(std::string_view text, int nbits)
      : text_(text),
        nbits_(static_cast<uint32_t>(nbits)),
        lastbit_(static_cast<uint32_t>(nbits) - 1u) {}

  // `notes` (may be null) receives what the kernel accepts silently but a
  // user would not expect: a group stride that wraps 32 bits, text after
  // the '\n' or '\0' that ends the list.
  absl::StatusOr<CpuMask> Run(int nbits, std::vector<std::string>* notes) {
    CpuMask mask(nbits);
    size_t pos = 0;
    auto note_ignored_tail = [&](size_t end) {
      if (notes == nullptr || end >= text_.size()) return;
      const std::string_view rest = text_.substr(end + 1);
      if (rest.find_first_not_of(std::string_view(" \t\n\v\f\r,\0", 8)) == std::string_view::npos)
        return;
      notes->push_back(
          absl::StrFormat("cpulist \"%s\": the list ends at the %s at position %d, as in the "
                          "kernel; \"%s\" after it is ignored",
                          ShortQuoted(), text_[end] == '\n' ? "newline" : "NUL byte", end,
                          absl::CHexEscape(std::string(rest.substr(0, 64)))));
    };
    while (true) {
      // bitmap_find_region(): skip separators (',' and whitespace).
      while (IsSeparator(At(pos))) ++pos;
      if (IsEndOfString(At(pos))) {
        note_ignored_tail(pos);
        return mask;
      }
      Region r;
      const size_t region_start = pos;
      absl::Status s = ParseRegion(pos, r);
      if (!s.ok()) return s;
      s = CheckRegion(r, region_start, pos);
      if (!s.ok()) return s;
      // bitmap_set_region()
      bool wrap_noted = false;  // one note per region: the stride can wrap up to nbits times
      for (uint32_t start = r.start; start <= r.end;) {
        const uint32_t len = std::min(r.end - start + 1, r.used);
        for (uint32_t b = 0; b < len; ++b) mask.Set(static_cast<int>(start + b));
        const uint32_t next = start + r.group_len;  // wraps as the kernel's unsigned int does
        if (next < start && next <= r.end && notes != nullptr && !wrap_noted) {
          wrap_noted = true;
          notes->push_back(absl::StrFormat(
              "cpulist \"%s\": region \"%s\": the group stride %u wraps the kernel's 32-bit "
              "arithmetic "
              "after cpu %u, so the region also sets cpu %u and on, as in the kernel",
              ShortQuoted(),
              absl::CHexEscape(std::string(
                  text_.substr(region_start, std::min<size_t>(pos - region_start, 64)))),
              r.group_len, start, next));
        }
        start = next;
      }
      if (r.ended) {
        note_ignored_tail(pos);
        return mask;
      }
    }
  }

 private:
  struct Region {
    uint32_t start = 0, end = 0, used = 0, group_len = 0;
    bool ended = false;  // the string ended right after this region
  };

  // Past the view (or at an embedded NUL) reads as '\0', the C terminator.
  char At(size_t pos) const { return pos < text_.size() ? text_[pos] : '\0'; }
  static bool IsEndOfString(char c) { return c == '\0' || c == '\n'; }
  static bool IsSeparator(char c) {
    return c == ',' || KernelIsSpace(static_cast<unsigned char>(c));
  }
  static bool IsEndOfRegion(char c) { return IsSeparator(c) || IsEndOfString(c); }

  std::string Quoted() const { return absl::CHexEscape(std::string(text_)); }
  // For notes, which can be many: bounded, so their memory is linear in the list.
  std::string ShortQuoted() const {
    constexpr size_t kMax = 64;
    if (text_.size() <= kMax) return Quoted();
    return absl::StrCat(absl::CHexEscape(std::string(text_.substr(0, kMax))), "...");
  }

  absl::Status Error(absl::StatusCode code, size_t pos, std::string_view what) const {
    return absl::Status(code, absl::StrFormat("cpulist \"%s\" invalid at position %d: %s", Quoted(),
                                              pos, std::string(what)));
  }
  std::string TokenAt(size_t pos) const {
    size_t end = pos;
    while (end < text_.size() && !IsEndOfRegion(text_[end])) ++end;
    if (end == pos)
      return At(pos) == '\0' ? "end of input" : absl::CHexEscape(std::string(1, At(pos)));
    return absl::StrCat("\"", absl::CHexEscape(std::string(text_.substr(pos, end - pos))), "\"");
  }

  // bitmap_getnum(): `N` or a decimal number that fits 32 bits.
  absl::Status GetNumber(size_t& pos, uint32_t& out, std::string_view role) const {
    if (At(pos) == 'N') {
      out = lastbit_;
      ++pos;
      return absl::OkStatus();
    }
    const size_t begin = pos;
    uint64_t value = 0;
    bool overflow = false;
    while (At(pos) >= '0' && At(pos) <= '9') {
      value = value * 10 + static_cast<uint64_t>(At(pos) - '0');
      if (value > UINT32_MAX) overflow = true;  // sticky; keep consuming digits like _parse_integer
      if (overflow) value = uint64_t{UINT32_MAX} + 1;
      ++pos;
    }
    if (pos == begin) {
      return Error(
          absl::StatusCode::kInvalidArgument, pos,
          absl::StrCat("expected a number (", std::string(role), ") but found ", TokenAt(pos)));
    }
    if (overflow) {
      return Error(absl::StatusCode::kOutOfRange, begin,
                   absl::StrCat("number \"", std::string(text_.substr(begin, pos - begin)),
                                "\" does not fit 32 bits (EOVERFLOW)"));
    }
    out = static_cast<uint32_t>(value);
    return absl::OkStatus();
  }

  // bitmap_parse_region()
  absl::Status ParseRegion(size_t& pos, Region& r) const {
    const bool is_all = text_.size() - pos >= 3 &&
                        std::tolower(static_cast<unsigned char>(text_[pos])) == 'a' &&
                        std::tolower(static_cast<unsigned char>(text_[pos + 1])) == 'l' &&
                        std::tolower(static_cast<unsigned char>(text_[pos + 2])) == 'l';
    if (is_all) {
      r.start = 0;
      r.end = lastbit_;
      pos += 3;
    } else {
      absl::Status s = GetNumber(pos, r.start, "first cpu");
      if (!s.ok()) return s;
      if (IsEndOfRegion(At(pos))) {
        r.end = r.start;
        return NoPattern(pos, r);
      }
      if (At(pos) != '-') {
        return Error(absl::StatusCode::kInvalidArgument, pos,
                     absl::StrCat("expected '-' or ',' but found ", TokenAt(pos)));
      }
      ++pos;
      s = GetNumber(pos, r.end, "last cpu of range");
      if (!s.ok()) return s;
    }
    // check_pattern:
    if (IsEndOfRegion(At(pos))) return NoPattern(pos, r);
    if (At(pos) != ':') {
      return Error(absl::StatusCode::kInvalidArgument, pos,
                   absl::StrCat("expected ':' or ',' but found ", TokenAt(pos)));
    }
    ++pos;
    absl::Status s = GetNumber(pos, r.used, "used bits per group");
    if (!s.ok()) return s;
    if (At(pos) != '/') {
      return Error(absl::StatusCode::kInvalidArgument, pos,
                   absl::StrCat("expected '/' but found ", TokenAt(pos)));
    }
    ++pos;
    s = GetNumber(pos, r.group_len, "group size");
    if (!s.ok()) return s;
    // The kernel resumes scanning right here, without requiring a separator.
    r.ended = false;
    return absl::OkStatus();
  }

  absl::Status NoPattern(size_t pos, Region& r) const {
    // 32-bit unsigned arithmetic, as in the kernel: with nbits == 0, `N` is
    // UINT_MAX and the group length wraps to 0 (-> EINVAL).
    r.used = r.end + 1u;
    r.group_len = r.end + 1u;
    r.ended = IsEndOfString(At(pos));
    return absl::OkStatus();
  }

  // bitmap_check_region()
  absl::Status CheckRegion(const Region& r, size_t begin, size_t end) const {
    const std::string region = absl::StrCat(
        "region \"", absl::CHexEscape(std::string(text_.substr(begin, end - begin))), "\"");
    if (r.start > r.end) {
      return Error(absl::StatusCode::kInvalidArgument, begin,
                   absl::StrFormat("%s is reversed (%u > %u)", region, r.start, r.end));
    }
    if (r.group_len == 0) {
      return Error(absl::StatusCode::kInvalidArgument, begin,
                   absl::StrCat(region, " has group size 0"));
    }
    if (r.used > r.group_len) {
      return Error(absl::StatusCode::kInvalidArgument, begin,
                   absl::StrFormat("%s uses %u bits of groups of %u", region, r.used, r.group_len));
    }
    if (r.end >= nbits_) {
      return Error(absl::StatusCode::kOutOfRange, begin,
                   absl::StrFormat("%s: cpu %u is out of range (only %u cpus, ERANGE)", region,
                                   r.end, nbits_));
    }
    return absl::OkStatus();
  }

  std::string_view text_;
  uint32_t nbits_;
  uint32_t lastbit_;
};

}  // namespace

// bitmap_parselist()
absl::StatusOr<CpuMask> CpuMask::Parse(std::string_view list, int nbits) {
  if (nbits < 0 || nbits > kMaxCpus) {
    return absl::InvalidArgumentError(
        absl::StrFormat("cpulist \"%s\": mask size %d is outside [0, %d]",
                        absl::CHexEscape(std::string(list)), nbits, kMaxCpus));
  }
  return CpulistParser(list, nbits).Run(nbits, nullptr);
}

absl::StatusOr<CpuMask> CpuMask::Parse(std::string_view list, int nbits,
                                       std::vector<std::string>* notes) {
  if (nbits < 0 || nbits > kMaxCpus) return Parse(list, nbits);
  return CpulistParser(list, nbits).Run(nbits, notes);
}

// bitmap_list_string() ("%*pbl"): ascending, runs of two or more as "a-b".
std::string CpuMask::ToString() const {
  std::string out;
  for (int first = First(); first < nbits_;) {
    const int next_zero = NextZero(first);
    const int last = next_zero - 1;  // NextZero returns nbits_ when none
    if (!out.empty()) out.push_back(',');
    absl::StrAppend(&out, first);
    if (last > first) absl::StrAppend(&out, "-", last);
    if (next_zero >= nbits_) break;
    first = Next(next_zero);
  }
  return out;
}

// bitmap_string() ("%*pb"): 32-bit chunks, most significant first; the top
// chunk is printed with only as many hex digits as its bits need.
std::string CpuMask::ToHexString() const {
  std::string out;
  int chunk_bits = nbits_ % 32 == 0 ? 32 : nbits_ % 32;
  for (int i = ((nbits_ + 31) / 32 - 1) * 32; i >= 0; i -= 32) {
    const uint64_t word = words_[static_cast<size_t>(i / 64)];
    const uint64_t chunk_mask = (uint64_t{1} << chunk_bits) - 1;
    const uint64_t value = (word >> (i % 64)) & chunk_mask;
    if (!out.empty()) out.push_back(',');
    absl::StrAppendFormat(&out, "%0*x", (chunk_bits + 3) / 4, value);
    chunk_bits = 32;
  }
  return out;
}

}  // namespace isolation
