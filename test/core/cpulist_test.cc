// SPDX-License-Identifier: GPL-2.0-or-later
// cpulist parsing (bitmap_parselist rules) and printing ("%*pbl", "%*pb").

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "isolation/testing/status_matchers.h"

#include "isolation/core/cpumask.h"

namespace isolation {
namespace {

using ::testing::HasSubstr;

CpuMask MaskOf(int nbits, std::initializer_list<int> cpus) {
  CpuMask m(nbits);
  for (int c : cpus) m.Set(c);
  return m;
}

std::string ParseToString(std::string_view text, int nbits) {
  absl::StatusOr<CpuMask> m = CpuMask::Parse(text, nbits);
  if (!m.ok()) return "error: " + m.status().ToString();
  return m->ToString();
}

TEST(Cpulist, RoundTripOfRandomMasks) {
  std::mt19937_64 rng(20260101);
  for (int nbits : {1, 2, 63, 64, 65, 128, 4096, 8192}) {
    for (int round = 0; round < 30; ++round) {
      CpuMask m(nbits);
      // Runs of random length, so that both singletons and ranges appear.
      std::uniform_int_distribution<int> run(1, 9);
      bool on = std::bernoulli_distribution(0.5)(rng);
      for (int c = 0; c < nbits;) {
        const int len = run(rng);
        for (int k = 0; k < len && c < nbits; ++k, ++c) m.Assign(c, on);
        on = !on;
      }
      const std::string text = m.ToString();
      absl::StatusOr<CpuMask> back = CpuMask::Parse(text, nbits);
      ISOLATION_ASSERT_OK(back) << "for " << text;
      EXPECT_EQ(*back, m) << text;
    }
  }
}

TEST(Cpulist, CanonicalPrinting) {
  EXPECT_EQ(MaskOf(64, {}).ToString(), "");
  EXPECT_EQ(MaskOf(64, {5}).ToString(), "5");
  EXPECT_EQ(MaskOf(64, {5, 6}).ToString(), "5-6");
  EXPECT_EQ(MaskOf(64, {0, 2, 3, 4, 63}).ToString(), "0,2-4,63");
  EXPECT_EQ(CpuMask::Full(64).ToString(), "0-63");
  EXPECT_EQ(CpuMask::Full(1).ToString(), "0");
  CpuMask m = CpuMask::Range(64, 1, 63);
  m.Clear(32);
  EXPECT_EQ(m.ToString(), "1-31,33-63");
}

TEST(Cpulist, KernelHexPrinting) {
  CpuMask m = CpuMask::Range(64, 1, 63);
  m.Clear(32);
  EXPECT_EQ(m.ToHexString(), "fffffffe,fffffffe");
  EXPECT_EQ(CpuMask::Full(4).ToHexString(), "f");
  EXPECT_EQ(CpuMask::Full(36).ToHexString(), "f,ffffffff");
  EXPECT_EQ(MaskOf(40, {0}).ToHexString(), "00,00000001");
  EXPECT_EQ(MaskOf(128, {127}).ToHexString(), "80000000,00000000,00000000,00000000");
  EXPECT_EQ(MaskOf(8, {}).ToHexString(), "00");
  EXPECT_EQ(MaskOf(96, {64}).ToHexString(), "00000001,00000000,00000000");
}

TEST(Cpulist, Strides) {
  EXPECT_EQ(ParseToString("0-127:2/8", 128),
            "0-1,8-9,16-17,24-25,32-33,40-41,48-49,56-57,64-65,72-73,80-81,88-89,96-97,104-105,112-"
            "113,120-121");
  EXPECT_EQ(ParseToString("0-1023:2/256", 1024),
            "0-1,256-257,512-513,768-769");                       // the kernel's doc example
  EXPECT_EQ(ParseToString("9-38:4/10", 64), "9-12,19-22,29-32");  // the kernel's region picture
  EXPECT_EQ(ParseToString("0-6:3/4", 8), "0-2,4-6");  // the last group is cut at the range end
  EXPECT_EQ(ParseToString("0-7:0/4", 8), "");         // zero used bits is legal and sets nothing
  EXPECT_EQ(ParseToString("0-7:4/4", 8), "0-7");
  EXPECT_EQ(ParseToString("3-3:1/1", 8), "3");
}

TEST(Cpulist, LastBitAndAll) {
  EXPECT_EQ(ParseToString("N", 128), "127");
  EXPECT_EQ(ParseToString("0-N", 128), "0-127");
  EXPECT_EQ(ParseToString("N-N", 16), "15");
  EXPECT_EQ(ParseToString("1-N:1/N", 16), "1");  // group N = 15: 1, then 16 is past the end
  EXPECT_EQ(ParseToString("0-N:1/2", 8), "0,2,4,6");
  EXPECT_EQ(ParseToString("all", 8), "0-7");
  EXPECT_EQ(ParseToString("ALL", 8), "0-7");
  EXPECT_EQ(ParseToString("All:1/2", 8), "0,2,4,6");
  EXPECT_EQ(ParseToString("all,3", 8), "0-7");
  EXPECT_EQ(ParseToString("2,all:1/4", 8), "0,2,4");
}

// What bitmap_parselist() accepts although it looks odd; mirrored on purpose.
TEST(Cpulist, KernelPermissiveSeparators) {
  EXPECT_EQ(ParseToString("", 8), "");
  EXPECT_EQ(ParseToString("\n", 8), "");
  EXPECT_EQ(ParseToString("  \t", 8), "");
  EXPECT_EQ(ParseToString(",", 8), "");
  EXPECT_EQ(ParseToString("1,,2", 8), "1-2");
  EXPECT_EQ(ParseToString(",1", 8), "1");
  EXPECT_EQ(ParseToString("1,", 8), "1");
  EXPECT_EQ(ParseToString("1 3\t5", 8), "1,3,5");
  EXPECT_EQ(ParseToString("0-3\n", 8), "0-3");
  EXPECT_EQ(ParseToString(" 0-3 , 5 \n", 8), "0-3,5");
  // A newline right after a region ends the string; after a separator it is whitespace.
  EXPECT_EQ(ParseToString("1\n2", 8), "1");
  EXPECT_EQ(ParseToString("1 \n2", 8), "1-2");
  // An embedded NUL ends the string, as in C.
  EXPECT_EQ(ParseToString(std::string_view("1,3\0"
                                           "5",
                                           5),
                          8),
            "1,3");
  // No separator is needed after a "/group" pattern.
  EXPECT_EQ(ParseToString("0-3:1/2N", 8), "0,2,7");
}

struct BadInput {
  const char* text;
  int nbits;
  absl::StatusCode code;
  const char* position;  // "position K" expected in the message
  const char* detail;    // another substring the message must contain
};

class CpulistMalformed : public ::testing::TestWithParam<BadInput> {};

TEST_P(CpulistMalformed, RejectedWithMessageNamingValueAndPosition) {
  const BadInput& in = GetParam();
  absl::StatusOr<CpuMask> m = CpuMask::Parse(in.text, in.nbits);
  ASSERT_FALSE(m.ok()) << "accepted \"" << in.text << "\" as " << m->ToString();
  EXPECT_EQ(m.status().code(), in.code) << m.status();
  const std::string msg(m.status().message());
  EXPECT_THAT(msg, HasSubstr(std::string("cpulist \"") + in.text + "\""));
  EXPECT_THAT(msg, HasSubstr(in.position));
  EXPECT_THAT(msg, HasSubstr(in.detail));
}

constexpr absl::StatusCode kInval = absl::StatusCode::kInvalidArgument;
constexpr absl::StatusCode kRange = absl::StatusCode::kOutOfRange;

INSTANTIATE_TEST_SUITE_P(
    Table, CpulistMalformed,
    ::testing::Values(BadInput{"1-x", 8, kInval, "position 2", "expected a number"},
                      BadInput{"x", 8, kInval, "position 0", "\"x\""},
                      BadInput{"3-1", 8, kInval, "position 0", "reversed"},
                      BadInput{"0x3", 8, kInval, "position 1", "\"x3\""},
                      BadInput{"-1", 8, kInval, "position 0", "expected a number"},
                      BadInput{"1-", 8, kInval, "position 2", "expected a number"},
                      BadInput{"1--2", 8, kInval, "position 2", "expected a number"},
                      BadInput{"1-2-3", 8, kInval, "position 3", "expected ':'"},
                      BadInput{"0-7:2", 8, kInval, "position 5", "expected '/'"},
                      BadInput{"0-7:/2", 8, kInval, "position 4", "used bits"},
                      BadInput{"0-7:2/", 8, kInval, "position 6", "group size"},
                      BadInput{"0-7:2/0", 8, kInval, "position 0", "group size 0"},
                      BadInput{"0-7:3/2", 8, kInval, "position 0", "uses 3 bits of groups of 2"},
                      BadInput{"0:1/2", 8, kInval, "position 1", "expected '-'"},
                      BadInput{"1;2", 8, kInval, "position 1", "\";2\""},
                      BadInput{"1.5", 8, kInval, "position 1", "\".5\""},
                      BadInput{"+1", 8, kInval, "position 0", "\"+1\""},
                      BadInput{"n", 8, kInval, "position 0", "\"n\""},
                      BadInput{"al", 8, kInval, "position 0", "\"al\""},
                      BadInput{"allx", 8, kInval, "position 3", "\"x\""},
                      BadInput{"all-3", 8, kInval, "position 3", "expected ':'"},
                      BadInput{"1,2,a", 8, kInval, "position 4", "\"a\""},
                      BadInput{"0-3:1/2x", 8, kInval, "position 7", "\"x\""},
                      BadInput{"5-N:1/2", 4, kInval, "position 0", "reversed"},
                      BadInput{"8", 8, kRange, "position 0", "out of range"},
                      BadInput{"0-8", 8, kRange, "position 0", "cpu 8"},
                      BadInput{"1,200", 128, kRange, "position 2", "cpu 200"},
                      BadInput{"0-9:1/2", 8, kRange, "position 0", "out of range"},
                      BadInput{"4294967296", 8, kRange, "position 0", "does not fit 32 bits"},
                      BadInput{"1-99999999999999999999999", 8, kRange, "position 2", "EOVERFLOW"},
                      BadInput{"0-3:1/4294967296", 8, kRange, "position 6", "EOVERFLOW"},
                      BadInput{"4294967294", 8, kRange, "position 0", "out of range"},
                      BadInput{"4294967295", 8, kInval, "position 0",
                               "group size 0"},  // end+1 wraps to 0 in 32 bits
                      BadInput{"N", 0, kInval, "position 0",
                               "group size 0"},  // 32-bit wrap of N+1, as in the kernel
                      BadInput{"0", 0, kRange, "position 0", "out of range"}));

TEST(Cpulist, BadMaskSizeIsAnError) {
  EXPECT_EQ(CpuMask::Parse("1", -1).status().code(), kInval);
  EXPECT_EQ(CpuMask::Parse("1", kMaxCpus + 1).status().code(), kInval);
  ISOLATION_EXPECT_OK(CpuMask::Parse("8191", kMaxCpus));
}

TEST(Cpulist, NonPrintableInputIsEscapedInMessages) {
  absl::StatusOr<CpuMask> m = CpuMask::Parse(std::string("1-\x01", 3), 8);
  ASSERT_FALSE(m.ok());
  EXPECT_THAT(std::string(m.status().message()), HasSubstr("\\x01"));
}

// What the kernel accepts without a word but a user would not expect gets
// a note; the mask stays the kernel's.
TEST(Cpulist, KernelFaithfulLeniencyIsNoted) {
  std::vector<std::string> notes;
  absl::StatusOr<CpuMask> m = CpuMask::Parse("1-3:1/4294967295", 8, &notes);
  ISOLATION_ASSERT_OK(m);
  EXPECT_EQ(m->ToString(), "0-1");  // the stride wraps to cpu 0, as bitmap_set_region() does
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_THAT(notes[0], HasSubstr("wraps the kernel's 32-bit arithmetic"));

  notes.clear();
  m = CpuMask::Parse("1\n2", 8, &notes);
  ISOLATION_ASSERT_OK(m);
  EXPECT_EQ(m->ToString(), "1");
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_THAT(notes[0], HasSubstr("ends at the newline at position 1"));
  EXPECT_THAT(notes[0], HasSubstr("\"2\" after it is ignored"));

  notes.clear();
  ISOLATION_ASSERT_OK(CpuMask::Parse("1,2\n", 8, &notes));  // a trailing newline drops nothing
  ISOLATION_ASSERT_OK(CpuMask::Parse("0-7:1/2", 8, &notes));
  EXPECT_TRUE(notes.empty());
  // A stride that wraps many times gives one note per region, of bounded size.
  std::string many;
  for (int i = 0; i < 1000; ++i) many += "1-7:1/4294967295,";
  ISOLATION_ASSERT_OK(CpuMask::Parse(many, 8, &notes));
  ASSERT_EQ(notes.size(), 1000u);
  for (const std::string& n : notes) EXPECT_LT(n.size(), 400u);
}

}  // namespace
}  // namespace isolation
