// The report of `pipetwin whatif --report`: the step as measured, without launch delays and
// without stragglers, and the slowdown each stage, data-parallel rank and op type causes, as
// bars (docs/whatif.md).
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "report/html_page.h"

namespace pipetwin {

struct WhatIfReport {
  std::vector<std::pair<std::string, std::string>> headline;  // (label, value)
  std::map<std::string, double> by_stage, by_dp_rank, by_op;  // group -> slowdown
};

// Adds a bar chart per grouping (<svg class="chart bars whatif" ...>), largest first.
void add_whatif_sections(HtmlPage& page, const WhatIfReport& report);

}  // namespace pipetwin
