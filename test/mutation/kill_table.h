// SPDX-License-Identifier: GPL-2.0-or-later
// What the tmigr and vmstat mutation tests share: the counter that makes a
// mutation's rare form fire, and the run of a kit's check list over every
// mutation, in list order up to the first check that reports a violation,
// with its kill rate and table printed.
//
// Kernel counterpart: none; test harness code around the conformance kits.
//
// Thread-safety: a Trigger is a pair of relaxed atomics (a kit's check may
// drive a mutation from several threads); ExpectEveryMutationKilled runs on
// the test's thread.

#ifndef ISOLATION_TEST_MUTATION_KILL_TABLE_H_
#define ISOLATION_TEST_MUTATION_KILL_TABLE_H_

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "isolation/testing/status_matchers.h"

namespace isolation::mutation_test {

// Counts the relevant events of one mutation; Fire() is true on one in
// `period`.  Process-wide: the kit's checks make many short-lived counters.
class Trigger {
 public:
  explicit Trigger(int64_t period) : period_(period) {}
  bool Fire() {
    const int64_t n = events_.fetch_add(1, std::memory_order_relaxed) + 1;
    const bool fire = n % period_ == 0;
    if (fire) fired_.fetch_add(1, std::memory_order_relaxed);
    return fire;
  }
  int64_t events() const { return events_.load(std::memory_order_relaxed); }
  int64_t fired() const { return fired_.load(std::memory_order_relaxed); }

 private:
  const int64_t period_;
  std::atomic<int64_t> events_{0};
  std::atomic<int64_t> fired_{0};
};

struct MutationCase {
  std::string name;  // the registered variant
  std::string bug_class;
  bool rare;
  const Trigger* trigger = nullptr;  // rare forms
};

// Runs `checks` (a kit's AllChecks()) on each mutation through the kit's
// `not_applicable(check, variant)` and `run(check, variant)`, expects every
// mutation killed, and prints "kill rate <mechanism>: K of N", the table and
// each killing check's first violation.
template <typename Check, typename NotApplicableFn, typename RunFn>
void ExpectEveryMutationKilled(std::string_view mechanism,
                               const std::vector<MutationCase>& mutations,
                               const std::vector<Check>& checks, NotApplicableFn not_applicable,
                               RunFn run) {
  struct Row {
    std::string name, bug_class, killed_by, first;
    bool rare;
    int64_t events = 0, fired = 0;
  };
  std::vector<Row> rows;
  int killed = 0;
  for (const MutationCase& m : mutations) {
    Row row{m.name, m.bug_class, "", "", m.rare};
    for (const Check& check : checks) {
      auto why = not_applicable(check.name, m.name);
      ISOLATION_ASSERT_OK(why) << m.name;
      if (!why->empty()) continue;
      const auto v = run(check.name, m.name);
      if (!v.empty()) {
        row.killed_by = check.name;
        row.first = v.front();
        break;
      }
    }
    if (m.trigger != nullptr) {
      row.events = m.trigger->events();
      row.fired = m.trigger->fired();
    }
    killed += !row.killed_by.empty();
    EXPECT_FALSE(row.killed_by.empty())
        << m.name << " (" << m.bug_class << ") survived every check of the kit";
    rows.push_back(std::move(row));
  }
  std::printf("kill rate %s: %d of %zu\n", std::string(mechanism).c_str(), killed, rows.size());
  std::printf(
      "| mutation | bug class | form | killed by | rare events (fired) |\n|---|---|---|---|---|\n");
  for (const Row& r : rows) {
    std::printf(
        "| %s | %s | %s | %s | %s |\n", r.name.c_str(), r.bug_class.c_str(),
        r.rare ? "rare" : "common", r.killed_by.empty() ? "SURVIVED" : r.killed_by.c_str(),
        r.rare ? (std::to_string(r.events) + " (" + std::to_string(r.fired) + ")").c_str() : "-");
  }
  for (const Row& r : rows) {
    if (!r.first.empty()) std::printf("%s: %s\n", r.name.c_str(), r.first.substr(0, 300).c_str());
  }
}

}  // namespace isolation::mutation_test

#endif  // ISOLATION_TEST_MUTATION_KILL_TABLE_H_
