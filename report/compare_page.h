// The report of `compare`: both Gantts on one time axis, the distribution of duration
// errors per op, the makespan and bubble deltas, and the worst spans.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "analysis/timeline_comparison.h"
#include "report/html_page.h"
#include "traces/timeline.h"

namespace pipetwin {

struct CompareReport {
  const Timeline* a = nullptr;
  const Timeline* b = nullptr;
  std::string label_a = "A";
  std::string label_b = "B";
  const TimelineComparison* comparison = nullptr;
  // (label, value) as the text report prints them: makespans, bubbles and their deltas.
  std::vector<std::pair<std::string, std::string>> headline;
};

// Adds the sections. The two Gantts are <svg class="gantt"> with one lane per device
// each; the distributions an <svg class="chart errors"> with a <g class="op-errors"
// data-op="OP"> per op of the comparison.
void add_compare_sections(HtmlPage& page, const CompareReport& report);

}  // namespace pipetwin
