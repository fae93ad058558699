// SPDX-License-Identifier: GPL-2.0-or-later
// Host cross-check of the isolation masks (host.h): file reading that never
// crashes, the comparison on canned kernel files, and the same check on
// the running kernel (skipped, with the reason, where it exposes nothing).

#include "isolation/core/host.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "isolation/testing/status_matchers.h"

namespace isolation {
namespace {

using ::testing::HasSubstr;

std::string TempFile(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + "/" + name;
  std::ofstream(path) << text;
  return path;
}

const HostCheck& Find(const std::vector<HostCheck>& checks, const std::string& what) {
  for (const HostCheck& c : checks) {
    if (c.name.find(what) != std::string::npos) return c;
  }
  static const HostCheck none{"missing", HostVerdict::kNotAvailable, "", "", ""};
  ADD_FAILURE() << "no check named " << what;
  return none;
}

TEST(HostFiles, MissingOrUnreadableFilesAreStatusesNamingThePath) {
  absl::StatusOr<std::string> missing = ReadHostFile("/nonexistent/isolation-test");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(missing.status().message()), HasSubstr("/nonexistent/isolation-test"));
  absl::StatusOr<std::string> dir = ReadHostFile("/");
  ASSERT_FALSE(dir.ok());  // EISDIR on read
  EXPECT_THAT(std::string(dir.status().message()), HasSubstr("/"));
  absl::StatusOr<std::string> log = ReadKernelLog("/nonexistent/kmsg");
  ASSERT_FALSE(log.ok());
  EXPECT_EQ(log.status().code(), absl::StatusCode::kNotFound);
  ISOLATION_ASSERT_OK_AND_ASSIGN(std::string file, ReadHostFile(TempFile("host_file", "0-3\n")));
  EXPECT_EQ(file, "0-3\n");
}

// devkmsg_read() record format: "prio,seq,usec,flags;text" plus " KEY=v"
// dictionary lines.
TEST(HostFiles, KernelLogRecordsKeepTheirText) {
  const std::string path =
      TempFile("kmsg",
               "6,1,0,-;Linux version 6.18\n SUBSYSTEM=cpu\n6,2,328881,-;Timer migration: 1 "
               "hierarchy levels; "
               "8 children per group; 1 crossnode level\nnot a record\n");
  ISOLATION_ASSERT_OK_AND_ASSIGN(std::string log, ReadKernelLog(path));
  EXPECT_EQ(log,
            "Linux version 6.18\nTimer migration: 1 hierarchy levels; 8 children per group; 1 "
            "crossnode level\n");
}

TEST(HostFiles, ProcCmdlineLosesOnlyItsNewline) {
  EXPECT_EQ(HostCommandLine("quiet isolcpus=1\n"), "quiet isolcpus=1");
  EXPECT_EQ(HostCommandLine("quiet"), "quiet");
  EXPECT_EQ(HostCommandLine(""), "");
}

HostIsolationInputs Inputs(const std::string& cmdline, const std::string& isolated,
                           absl::StatusOr<std::string> nohz_full) {
  return {cmdline, std::string("0-7\n"), isolated, std::move(nohz_full)};
}

TEST(HostIsolation, AgreesWhenTheKernelReportsTheCommandLine) {
  const auto checks = CheckIsolationAgainstHost(
      Inputs("quiet isolcpus=domain,2-3 nohz_full=2-5\n", "2-3\n", "2-5\n"));
  ASSERT_EQ(checks.size(), 2u);
  EXPECT_EQ(Find(checks, "isolated").verdict, HostVerdict::kAgree)
      << Find(checks, "isolated").detail;
  EXPECT_EQ(Find(checks, "isolated").model, "2-3");
  EXPECT_EQ(Find(checks, "nohz_full").verdict, HostVerdict::kAgree)
      << Find(checks, "nohz_full").detail;
  EXPECT_EQ(Find(checks, "nohz_full").kernel, "2-5");
}

TEST(HostIsolation, DisagreementIsReported) {
  const auto checks = CheckIsolationAgainstHost(Inputs("isolcpus=2-3\n", "2-4\n", "(null)\n"));
  EXPECT_EQ(Find(checks, "isolated").verdict, HostVerdict::kDisagree);
  EXPECT_EQ(Find(checks, "isolated").kernel, "2-4");
  EXPECT_EQ(Find(checks, "nohz_full").verdict, HostVerdict::kAgree);  // "(null)": never set
  EXPECT_EQ(Find(checks, "nohz_full").kernel, "(none)");
}

// tick_nohz_init() clears the boot CPU under CONFIG_PM_SLEEP_SMP.
TEST(HostIsolation, BootCpuClearedFromNohzFullStillAgrees) {
  const auto checks = CheckIsolationAgainstHost(Inputs("nohz_full=0-3\n", "\n", "1-3\n"));
  EXPECT_EQ(Find(checks, "nohz_full").verdict, HostVerdict::kAgree);
  EXPECT_THAT(Find(checks, "nohz_full").detail, HasSubstr("tick_nohz_init"));
  EXPECT_EQ(Find(checks, "nohz_full").model, "0-3");
}

// The model reads the command line as the kernel does: here the kernel's
// isolcpus= quirk isolates 1-3 from the kernel noise, which a naive reading
// (an unknown flag, then nothing) would miss.
TEST(HostIsolation, KernelLeniencyIsWhatMakesTheMasksAgree) {
  const auto checks = CheckIsolationAgainstHost(Inputs("isolcpus=nohz,foo 1-3\n", "\n", "1-3\n"));
  EXPECT_EQ(Find(checks, "nohz_full").verdict, HostVerdict::kAgree)
      << Find(checks, "nohz_full").detail;
  EXPECT_THAT(Find(checks, "nohz_full").detail, HasSubstr("kernel quirk"));
}

TEST(HostIsolation, MissingDataIsNotAvailableWithTheReason) {
  // No nohz_full file: CONFIG_NO_HZ_FULL=n, and the model ignores nohz_full= too.
  const auto no_nohz = CheckIsolationAgainstHost(
      Inputs("nohz_full=2-3\n", "\n", absl::NotFoundError("no such file")));
  EXPECT_EQ(Find(no_nohz, "nohz_full").verdict, HostVerdict::kNotAvailable);
  EXPECT_THAT(Find(no_nohz, "nohz_full").detail, HasSubstr("CONFIG_NO_HZ_FULL"));
  EXPECT_EQ(Find(no_nohz, "isolated").verdict, HostVerdict::kAgree);
  HostIsolationInputs no_possible = Inputs("", "\n", "\n");
  no_possible.possible =
      absl::PermissionDeniedError("cannot open /sys/devices/system/cpu/possible");
  for (const HostCheck& c : CheckIsolationAgainstHost(no_possible)) {
    EXPECT_EQ(c.verdict, HostVerdict::kNotAvailable);
    EXPECT_THAT(c.detail, HasSubstr("possible"));
  }
  HostIsolationInputs garbage = Inputs("", "junk\n", "\n");
  EXPECT_EQ(Find(CheckIsolationAgainstHost(garbage), "isolated").verdict,
            HostVerdict::kNotAvailable);
}

TEST(HostIsolation, ReadsAFakeSysfsTree) {
  const std::string root = ::testing::TempDir() + "/fakeroot";
  ASSERT_EQ(std::system(("mkdir -p " + root + "/proc " + root + "/sys/devices/system/cpu").c_str()),
            0);
  std::ofstream(root + "/proc/cmdline") << "isolcpus=1\n";
  std::ofstream(root + "/sys/devices/system/cpu/possible") << "0-3\n";
  std::ofstream(root + "/sys/devices/system/cpu/isolated") << "1\n";
  const auto checks = CheckIsolationAgainstHost(ReadHostIsolationInputs(root));
  EXPECT_EQ(Find(checks, "isolated").verdict, HostVerdict::kAgree);
  EXPECT_EQ(Find(checks, "nohz_full").verdict, HostVerdict::kNotAvailable);
}

// The running kernel, where it exposes the files.
void ExpectHostAgrees(const std::string& which) {
  const std::vector<HostCheck> checks = CheckIsolationAgainstHost(ReadHostIsolationInputs());
  const HostCheck& c = Find(checks, which);
  if (c.verdict == HostVerdict::kNotAvailable) GTEST_SKIP() << c.name << ": " << c.detail;
  EXPECT_EQ(c.verdict, HostVerdict::kAgree)
      << c.name << ": model " << c.model << ", kernel " << c.kernel << "; " << c.detail;
}
// UsableHostCpus: the affinity mask, plus the isolated CPUs a thread can
// really be pinned to -- never a CPU it cannot.
std::vector<int> AffinityCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  EXPECT_EQ(sched_getaffinity(0, sizeof(set), &set), 0);
  std::vector<int> cpus;
  for (int i = 0; i < CPU_SETSIZE; ++i) {
    if (CPU_ISSET(static_cast<size_t>(i), &set)) cpus.push_back(i);
  }
  return cpus;
}

TEST(UsableHostCpus, AffinityMaskWhenNothingIsIsolated) {
  const std::vector<int> affinity = AffinityCpus();
  for (const std::string& text : {std::string("\n"), std::string("(null)\n")}) {
    ISOLATION_ASSERT_OK_AND_ASSIGN(auto cpus, UsableHostCpus(TempFile("isolated_none", text)));
    EXPECT_EQ(cpus, affinity) << "isolated = \"" << text << "\"";
  }
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto missing,
                                 UsableHostCpus(::testing::TempDir() + "/no_such_isolated_file"));
  EXPECT_EQ(missing, affinity);
}

TEST(UsableHostCpus, AnIsolatedCpuNoThreadCanUseIsLeftOut) {
  // CPU 1000 exists on no test host: the probe's pin fails, so it is not
  // offered; an isolated CPU already in the mask is listed once.
  const std::vector<int> affinity = AffinityCpus();
  ISOLATION_ASSERT_OK_AND_ASSIGN(
      auto cpus,
      UsableHostCpus(TempFile("isolated_far", absl::StrCat(affinity.front(), ",1000\n"))));
  EXPECT_EQ(cpus, affinity);
  // The caller's own affinity is untouched by the probe.
  EXPECT_EQ(AffinityCpus(), affinity);
}

TEST(UsableHostCpus, AMalformedIsolatedFileIsIgnored) {
  ISOLATION_ASSERT_OK_AND_ASSIGN(auto cpus, UsableHostCpus(TempFile("isolated_bad", "1-x\n")));
  EXPECT_EQ(cpus, AffinityCpus());
}

TEST(HostIsolation, RunningKernelIsolatedMatchesItsCommandLine) { ExpectHostAgrees("isolated"); }
TEST(HostIsolation, RunningKernelNohzFullMatchesItsCommandLine) { ExpectHostAgrees("nohz_full"); }

}  // namespace
}  // namespace isolation
