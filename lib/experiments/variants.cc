// SPDX-License-Identifier: GPL-2.0-or-later
#include "experiments/variants.h"

#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "isolation/idle_select/selector.h"
#include "isolation/mm_cid/registry.h"
#include "isolation/tmigr/variants.h"
#include "isolation/vmstat/vmstat.h"

namespace isolation::experiments {
namespace {

constexpr char kNegativeControl[] = "negative control";

std::string Pad(const std::string& s, size_t width) {
  return s.size() >= width ? s : s + std::string(width - s.size(), ' ');
}

}  // namespace

std::vector<VariantInfo> AllRegisteredVariants() {
  // The mission's order: mm_cid, tmigr, idle_select, vmstat.
  std::vector<VariantInfo> out = mm_cid::ListVariants();
  for (auto* list : {&tmigr::ListVariants, &idle_select::ListVariants, &vmstat::ListVariants}) {
    for (VariantInfo& v : (*list)()) out.push_back(std::move(v));
  }
  return out;
}

std::string VariantsText(const std::vector<VariantInfo>& variants) {
  size_t w_mech = std::string("mechanism").size(), w_axis = std::string("axis").size();
  size_t w_name = std::string("name").size(), w_control = std::string(kNegativeControl).size();
  for (const VariantInfo& v : variants) {
    w_mech = std::max(w_mech, v.mechanism.size());
    w_axis = std::max(w_axis, v.axis.size());
    w_name = std::max(w_name, v.name.size());
  }
  std::string text =
      absl::StrCat(Pad("mechanism", w_mech), "  ", Pad("axis", w_axis), "  ", Pad("name", w_name),
                   "  ", Pad("", w_control), "  origin   default  description\n");
  for (const VariantInfo& v : variants) {
    absl::StrAppend(&text, Pad(v.mechanism, w_mech), "  ", Pad(v.axis, w_axis), "  ",
                    Pad(v.name, w_name), "  ",
                    Pad(v.negative_control ? kNegativeControl : "", w_control), "  ",
                    Pad(std::string(VariantOriginName(v.origin)), 7), "  ",
                    Pad(v.default_row ? "yes" : "", 7), "  ", v.description, "\n");
  }
  absl::StrAppend(&text, "\n", variants.size(), " variants\n");
  return text;
}

nlohmann::json VariantsJson(const std::vector<VariantInfo>& variants) {
  nlohmann::json j;
  j["variants"] = nlohmann::json::array();
  for (const VariantInfo& v : variants) {
    nlohmann::json row = {{"mechanism", v.mechanism},
                          {"axis", v.axis},
                          {"name", v.name},
                          {"description", v.description},
                          {"negative_control", v.negative_control},
                          {"origin", std::string(VariantOriginName(v.origin))},
                          {"default", v.default_row},
                          {"label", v.label},
                          {"aliases", v.aliases}};
    j["variants"].push_back(std::move(row));
  }
  return j;
}

}  // namespace isolation::experiments
