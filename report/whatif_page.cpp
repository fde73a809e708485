#include "report/whatif_page.h"

#include <algorithm>

#include "report/chart.h"

namespace pipetwin {
namespace {

std::string bars_of(const std::string& title, const std::map<std::string, double>& groups) {
  std::vector<Bar> bars;
  double worst = 0;
  for (const auto& [name, slowdown] : groups) worst = std::max(worst, slowdown);
  for (const auto& [name, slowdown] : groups) {
    bars.push_back({name, slowdown, slowdown == worst, ""});
  }
  std::stable_sort(bars.begin(), bars.end(),
                   [](const Bar& a, const Bar& b) { return a.value > b.value; });
  return render_bar_chart(title, bars, Unit::kNumber, "chart bars whatif");
}

}  // namespace

void add_whatif_sections(HtmlPage& page, const WhatIfReport& report) {
  page.add_section("The steps", headline_html(report.headline));
  page.add_section(
      "Who made it slow",
      paragraph_html("Each bar: the step with that group's ops at their measured times and every "
                     "other op at its type's typical time, over the step without stragglers (1: "
                     "the group slows nothing).") +
          bars_of("slowdown by stage", report.by_stage) +
          bars_of("slowdown by data-parallel rank", report.by_dp_rank) +
          bars_of("slowdown by op type", report.by_op));
}

}  // namespace pipetwin
