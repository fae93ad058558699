// SPDX-License-Identifier: GPL-2.0-or-later
// Fuzz CpuMask::Parse (bitmap_parselist rules).  The first byte picks the
// mask size; the rest is the list.  Properties: never crash; an accepted
// list prints canonically, and the canonical text parses back to the same
// mask and prints identically; the hex form has one chunk per 32 bits.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "isolation/core/cpumask.h"

namespace {
[[noreturn]] void Fail(const char* what) {
  std::fprintf(stderr, "cpulist_fuzz: %s\n", what);
  std::abort();
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  // Sizes around word boundaries and the kernel's maximum; 0 exercises the
  // nbits == 0 corner (N wraps to UINT_MAX).
  static constexpr int kSizes[] = {0,   1,   2,   31,  32,  33,   63,   64,   65,
                                   127, 128, 129, 255, 256, 1000, 4096, 8191, 8192};
  const int nbits = kSizes[data[0] % (sizeof(kSizes) / sizeof(kSizes[0]))];
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  absl::StatusOr<isolation::CpuMask> mask = isolation::CpuMask::Parse(text, nbits);
  if (!mask.ok()) {
    if (mask.status().message().empty()) Fail("error without message");
    return 0;
  }
  if (mask->nbits() != nbits) Fail("wrong size");
  const std::string canonical = mask->ToString();
  absl::StatusOr<isolation::CpuMask> again = isolation::CpuMask::Parse(canonical, nbits);
  if (!again.ok()) Fail("canonical text rejected");
  if (!(*again == *mask)) Fail("round trip changed the mask");
  if (again->ToString() != canonical) Fail("printing not canonical");
  const std::string hex = mask->ToHexString();
  size_t commas = 0;
  for (char c : hex) commas += c == ',' ? 1 : 0;
  if (nbits > 0 && commas + 1 != static_cast<size_t>((nbits + 31) / 32)) Fail("hex chunk count");
  return 0;
}
