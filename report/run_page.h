// The report of one run, simulated or measured (`simulate --report`, `run --report`,
// `report TIMELINE`): headline numbers, the Gantt, memory, links and the time breakdown.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "analysis/metrics.h"
#include "report/html_page.h"
#include "report/run_charts.h"
#include "traces/timeline.h"

namespace pipetwin {

struct RunReport {
  const Timeline* timeline = nullptr;
  // (label, value) exactly as the text report prints them.
  std::vector<std::pair<std::string, std::string>> headline;
  MemoryChartInput memory;
  std::vector<std::string> notes;  // shown under the headline, e.g. steady-state extrapolation
  double gantt_px = 1100;
};

// Adds the run's sections to `page`; `heading` prefixes their titles when not empty (a
// page with several runs).
void add_run_sections(HtmlPage& page, const RunReport& report, const std::string& heading = "");

// "12 of 200000 spans were narrower than a pixel: ..." for a Gantt's caption.
std::string aggregation_note(int64_t spans, int64_t aggregated);

}  // namespace pipetwin
