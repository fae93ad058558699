// SPDX-License-Identifier: GPL-2.0-or-later
// isolab's flag parsing (tools/isolab/flag_parser.h) and integer-list flags.

#include "isolab/flag_parser.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/reflection.h"
#include "isolation/testing/status_matchers.h"
#include "isolab/common_flags.h"

namespace isolation::isolab {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

const std::vector<std::string> kAllowed = {"topology", "isolcpus", "seed", "quick", "json"};

TEST(FlagParser, FormsOfAFlag) {
  absl::FlagSaver saver;
  bool help = false;
  EXPECT_EQ(
      ParseSubcommandFlags({"--topology=core:4 pu:1", "-isolcpus", "1-2", "--quick", "--seed=9"},
                           kAllowed, &help),
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
  EXPECT_THAT(ParseSubcommandFlags({"stray"}, kAllowed, &help),
              HasSubstr("unexpected argument 'stray'"));
  EXPECT_THAT(ParseSubcommandFlags({"--bogus=1"}, kAllowed, &help),
              HasSubstr("unknown flag '--bogus'"));
  EXPECT_THAT(ParseSubcommandFlags({"--nohz_full=1"}, kAllowed, &help),
              HasSubstr("unknown flag"));  // not allowed here
  EXPECT_THAT(ParseSubcommandFlags({"--seed=abc"}, kAllowed, &help),
              HasSubstr("bad value 'abc' for --seed"));
  EXPECT_THAT(ParseSubcommandFlags({"--topology"}, kAllowed, &help), HasSubstr("needs a value"));
  EXPECT_THAT(ParseSubcommandFlags({"--noseed"}, kAllowed, &help),
              HasSubstr("unknown flag '--noseed'"));
  EXPECT_THAT(ParseSubcommandFlags({"-"}, kAllowed, &help), HasSubstr("unknown flag"));
}

// One rule for every subcommand, in the parser: nothing silently changes
// what a command line meant.
TEST(FlagParser, NothingSilent) {
  absl::FlagSaver saver;
  bool help = false;
  // A flag given twice, in any of its forms.
  EXPECT_THAT(ParseSubcommandFlags({"--seed=1", "--seed=2"}, kAllowed, &help),
              HasSubstr("flag '--seed' is given twice ('--seed=1', then '--seed=2')"));
  EXPECT_THAT(ParseSubcommandFlags({"--quick", "--noquick"}, kAllowed, &help),
              HasSubstr("'--quick' is given twice"));
  EXPECT_THAT(ParseSubcommandFlags({"-seed", "1", "--seed=1"}, kAllowed, &help),
              HasSubstr("given twice"));
  // A value that is a flag: "--topology --json" names no file called --json.
  EXPECT_THAT(
      ParseSubcommandFlags({"--topology", "--json"}, kAllowed, &help),
      HasSubstr("next word '--json' is a flag (write --topology=--json if that is the value)"));
  EXPECT_EQ(ParseSubcommandFlags({"--topology=--json"}, kAllowed, &help), "");
  EXPECT_EQ(absl::GetFlag(FLAGS_topology), "--json");
  // Control bytes are escaped in every message.
  EXPECT_THAT(ParseSubcommandFlags({"--bo\x1b[2Jgus"}, kAllowed, &help),
              HasSubstr("--bo\\x1b[2Jgus"));
  EXPECT_THAT(ParseSubcommandFlags({"st\nray"}, kAllowed, &help), HasSubstr("'st\\nray'"));
  // FlagGiven says what the last parse set.
  EXPECT_EQ(ParseSubcommandFlags({"--noquick"}, kAllowed, &help), "");
  EXPECT_TRUE(FlagGiven("quick"));
  EXPECT_FALSE(FlagGiven("seed"));
}

TEST(NameListFlag, EachNameOnceAndBounded) {
  ISOLATION_ASSERT_OK_AND_ASSIGN(std::vector<std::string> v,
                                 ParseNameListFlag("idle_variants", "V0,V1"));
  EXPECT_THAT(v, ElementsAre("V0", "V1"));
  EXPECT_TRUE(ParseNameListFlag("tmigr_bugs", "", /*allow_empty=*/true)->empty());
  struct Case {
    const char* text;
    const char* why;
  };
  for (const Case& c :
       {Case{"", "empty list"}, Case{"V0,,V1", "empty name at position 3"},
        Case{"V0,", "empty name at position 3"}, Case{"V0,V0", "'V0' is listed twice"},
        Case{"V 0", "space or control byte"}, Case{"V0\n", "space or control byte"}}) {
    absl::StatusOr<std::vector<std::string>> r = ParseNameListFlag("idle_variants", c.text);
    ASSERT_FALSE(r.ok()) << "accepted \"" << c.text << "\"";
    EXPECT_THAT(std::string(r.status().message()), HasSubstr(c.why)) << c.text;
  }
  // 500 copies of one name: refused at the second, and never more than max_items names.
  std::string many = "V0";
  for (int i = 0; i < 499; ++i) many += ",V0";
  EXPECT_THAT(std::string(ParseNameListFlag("idle_variants", many).status().message()),
              HasSubstr("listed twice"));
  EXPECT_THAT(std::string(ParseNameListFlag("x", "a,b,c", false, 2).status().message()),
              HasSubstr("too many names"));
}

TEST(IntListFlag, AcceptsCanonicalLists) {
  ISOLATION_ASSERT_OK_AND_ASSIGN(std::vector<int> v,
                                 ParseIntListFlag("idle_llc_cpus", "16,64,256", 2, 4096));
  EXPECT_THAT(v, ElementsAre(16, 64, 256));
  EXPECT_THAT(*ParseIntListFlag("x", "4096", 2, 4096), ElementsAre(4096));
}

TEST(IntListFlag, RejectsEverythingElseNamingFlagValueAndItem) {
  struct Case {
    const char* text;
    const char* why;
  };
  for (const Case& c :
       {Case{"", "empty list"}, Case{"16,,64", "expected a number at position 3"},
        Case{"16,", "expected a number at position 3"}, Case{" 16", "found ' '"},
        Case{"+16", "found '+'"}, Case{"-16", "found '-'"}, Case{"016", "leading zero"},
        Case{"1", "'1' is out of range"}, Case{"4097", "out of range"},
        Case{"99999999999999999999", "out of range"}, Case{"16,16", "listed twice"},
        Case{"16;64", "expected ',' at position 2"}, Case{"0x10", "'0' is out of range"},
        Case{"2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18", "too many items"}}) {
    absl::StatusOr<std::vector<int>> v = ParseIntListFlag("idle_llc_cpus", c.text, 2, 4096);
    ASSERT_FALSE(v.ok()) << "accepted \"" << c.text << "\"";
    EXPECT_EQ(v.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(v.status().message()),
                HasSubstr(std::string("--idle_llc_cpus=") + c.text))
        << c.text;
    EXPECT_THAT(std::string(v.status().message()), HasSubstr(c.why)) << c.text;
  }
  // Control bytes in the value are escaped in the message.
  EXPECT_THAT(std::string(ParseIntListFlag("f", "1\n2", 0, 9).status().message()),
              HasSubstr("--f=1\\n2"));
}

}  // namespace
}  // namespace isolation::isolab

namespace isolation::isolab {
namespace {

// Found by isolab_flags_fuzz: absl's own message about a bad value quotes it
// raw, so a control byte reached the terminal through ours.
TEST(FlagParser, AbslsMessageAboutABadValueIsEscapedToo) {
  absl::FlagSaver saver;
  bool help = false;
  const std::string error = ParseSubcommandFlags({"--seed=--topology=pu\x1a"
                                                  "0core:"},
                                                 kAllowed, &help);
  ASSERT_THAT(error, HasSubstr("for --seed"));
  for (char c : error) {
    EXPECT_FALSE(static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
        << "raw control byte in: " << error;
  }
  EXPECT_THAT(error, HasSubstr("\\x1a"));
}

}  // namespace
}  // namespace isolation::isolab
