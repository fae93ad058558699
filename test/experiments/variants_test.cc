// SPDX-License-Identifier: GPL-2.0-or-later
// `isolab variants` (experiments/variants.h): every registered variant, read
// from the registries, so a variant registered by outside code gets a row.

#include "experiments/variants.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "isolation/idle_select/selector.h"
#include "isolation/testing/status_matchers.h"
#include "isolation/vmstat/fold_policy.h"

namespace isolation::experiments {
namespace {

const VariantInfo* Find(const std::vector<VariantInfo>& rows, const std::string& mechanism,
                        const std::string& axis, const std::string& name) {
  auto it = std::find_if(rows.begin(), rows.end(), [&](const VariantInfo& v) {
    return v.mechanism == mechanism && v.axis == axis && v.name == name;
  });
  return it == rows.end() ? nullptr : &*it;
}

TEST(Variants, ListsBuiltInsAndNegativeControls) {
  const std::vector<VariantInfo> rows = AllRegisteredVariants();
  ASSERT_NE(Find(rows, "idle_select", "selector", "V0"), nullptr);
  ASSERT_NE(Find(rows, "vmstat", "fold_policy", "A1"), nullptr);
  const VariantInfo* control = Find(rows, "idle_select", "selector", "V1-trusting");
  ASSERT_NE(control, nullptr);
  EXPECT_TRUE(control->negative_control);
  EXPECT_FALSE(Find(rows, "idle_select", "selector", "V0")->negative_control);
  // Every axis of the four mechanisms, and nothing else.
  const std::set<std::string> axes = {
      "mm_cid/design",        "mm_cid/allocator",   "mm_cid/scope",        "mm_cid/granularity",
      "mm_cid/placement",     "mm_cid/tick",        "tmigr/participation", "tmigr/hierarchy",
      "idle_select/selector", "vmstat/fold_policy", "vmstat/slot"};
  std::set<std::string> seen;
  for (const VariantInfo& v : rows) {
    const std::string axis = v.mechanism + "/" + v.axis;
    EXPECT_TRUE(axes.contains(axis)) << axis;
    seen.insert(axis);
    EXPECT_FALSE(v.description.empty()) << v.name;
  }
  EXPECT_EQ(seen, axes);
}

TEST(Variants, OutsideRegistrationsGetARow) {
  const idle_select::SelectorEntry selector{
      "variants_test_selector", "a selector registered by this test", false,
      [](idle_select::IdleState&) -> absl::StatusOr<std::unique_ptr<idle_select::IdleSelector>> {
        return absl::UnimplementedError("listing only");
      }};
  ISOLATION_ASSERT_OK(idle_select::RegisterSelector(selector));
  ASSERT_TRUE(vmstat::RegisterFoldPolicy(
                  {"variants_test_policy", "a fold policy registered by this test", true,
                   []() -> std::unique_ptr<vmstat::FoldPolicy> { return nullptr; }})
                  .ok());
  const std::vector<VariantInfo> rows = AllRegisteredVariants();
  const VariantInfo* s = Find(rows, "idle_select", "selector", "variants_test_selector");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->description, "a selector registered by this test");
  EXPECT_FALSE(s->negative_control);
  const VariantInfo* p = Find(rows, "vmstat", "fold_policy", "variants_test_policy");
  ASSERT_NE(p, nullptr);
  EXPECT_TRUE(p->negative_control);

  const nlohmann::json j = VariantsJson(rows);
  ASSERT_EQ(j["variants"].size(), rows.size());
  bool found = false;
  for (const auto& row : j["variants"]) {
    if (row["name"] == "variants_test_policy") {
      found = true;
      EXPECT_EQ(row["mechanism"], "vmstat");
      EXPECT_EQ(row["axis"], "fold_policy");
      EXPECT_EQ(row["negative_control"], true);
    }
  }
  EXPECT_TRUE(found);
  // Every mechanism has a registry: built-ins of each are listed.
  EXPECT_NE(Find(rows, "mm_cid", "design", "lazy"), nullptr);
  EXPECT_NE(Find(rows, "tmigr", "participation", "v6.9"), nullptr);
  EXPECT_NE(Find(rows, "idle_select", "selector", "V0"), nullptr);
  EXPECT_NE(Find(rows, "vmstat", "fold_policy", "A1"), nullptr);
  const std::string text = VariantsText(rows);
  EXPECT_NE(text.find("variants_test_selector"), std::string::npos) << text;
  EXPECT_NE(text.find("a fold policy registered by this test"), std::string::npos) << text;
}

}  // namespace
}  // namespace isolation::experiments
