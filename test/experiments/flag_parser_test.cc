// SPDX-License-Identifier: GPL-2.0-or-later
// isolab's flag parsing (tools/isolab/flag_parser.h) and integer-list flags.

#include "isolab/flag_parser.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/reflection.h"
#include "isolab/common_flags.h"

namespace isolation::isolab {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

const std::vector<std::string> kAllowed = {"topology", "isolcpus", "seed", "quick", "json"};

TEST(FlagParser, FormsOfAFlag) {
  absl::FlagSaver saver;
  bool help = false;
  EXPECT_EQ(ParseSubcommandFlags({"--topology=core:4 pu:1", "-isolcpus", "1-2", "--quick", "--seed=9"}, kAllowed, &help),
            "");
  EXPECT_FALSE(help);
  EXPECT_EQ(absl::GetFlag(FLAGS_topology), "core:4 pu:1");
  EXPECT_EQ(absl::GetFlag(FLAGS_isolcpus), "1-2");
  EXPECT_TRUE(absl::GetFlag(FLAGS_quick));
  EXPECT_EQ(absl::GetFlag(FLAGS_seed), 9u);
  EXPECT_EQ(ParseSubcommandFlags({"--noquick", "-h"}, kAllowed, &help), "");
  EXPECT_TRUE(help);
  EXPECT_FALSE(absl::GetFlag(FLAGS_quick));
}

TEST(FlagParser, ErrorsNameTheArgument) {
  absl::FlagSaver saver;
  bool help = false;
  EXPECT_THAT(ParseSubcommandFlags({"stray"}, kAllowed, &help), HasSubstr("unexpected argument 'stray'"));
  EXPECT_THAT(ParseSubcommandFlags({"--bogus=1"}, kAllowed, &help), HasSubstr("unknown flag '--bogus'"));
  EXPECT_THAT(ParseSubcommandFlags({"--nohz_full=1"}, kAllowed, &help), HasSubstr("unknown flag"));  // not allowed here
  EXPECT_THAT(ParseSubcommandFlags({"--seed=abc"}, kAllowed, &help), HasSubstr("bad value 'abc' for --seed"));
  EXPECT_THAT(ParseSubcommandFlags({"--topology"}, kAllowed, &help), HasSubstr("needs a value"));
  EXPECT_THAT(ParseSubcommandFlags({"--noseed"}, kAllowed, &help), HasSubstr("unknown flag '--noseed'"));
  EXPECT_THAT(ParseSubcommandFlags({"-"}, kAllowed, &help), HasSubstr("unknown flag"));
}

TEST(IntListFlag, AcceptsCanonicalLists) {
  absl::StatusOr<std::vector<int>> v = ParseIntListFlag("idle_llc_cpus", "16,64,256", 2, 4096);
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_THAT(*v, ElementsAre(16, 64, 256));
  EXPECT_THAT(*ParseIntListFlag("x", "4096", 2, 4096), ElementsAre(4096));
}

TEST(IntListFlag, RejectsEverythingElseNamingFlagValueAndItem) {
  struct Case {
    const char* text;
    const char* why;
  };
  for (const Case& c : {Case{"", "empty list"}, Case{"16,,64", "expected a number at position 3"},
                        Case{"16,", "expected a number at position 3"}, Case{" 16", "found ' '"},
                        Case{"+16", "found '+'"}, Case{"-16", "found '-'"}, Case{"016", "leading zero"},
                        Case{"1", "'1' is out of range"}, Case{"4097", "out of range"},
                        Case{"99999999999999999999", "out of range"}, Case{"16,16", "listed twice"},
                        Case{"16;64", "expected ',' at position 2"}, Case{"0x10", "'0' is out of range"},
                        Case{"2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18", "too many items"}}) {
    absl::StatusOr<std::vector<int>> v = ParseIntListFlag("idle_llc_cpus", c.text, 2, 4096);
    ASSERT_FALSE(v.ok()) << "accepted \"" << c.text << "\"";
    EXPECT_EQ(v.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(v.status().message()), HasSubstr(std::string("--idle_llc_cpus=") + c.text)) << c.text;
    EXPECT_THAT(std::string(v.status().message()), HasSubstr(c.why)) << c.text;
  }
  // Control bytes in the value are escaped in the message.
  EXPECT_THAT(std::string(ParseIntListFlag("f", "1\n2", 0, 9).status().message()), HasSubstr("--f=1\\n2"));
}

}  // namespace
}  // namespace isolation::isolab
