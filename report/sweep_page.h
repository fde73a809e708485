// The report of a sweep: a chart per metric against each varied field, a line per value of
// the other fields, and the table `sweep` prints.
#pragma once

#include <string>
#include <vector>

#include "report/html_page.h"
#include "sim/sweep/sweep_row.h"

namespace pipetwin {

// The sweep's table: one column per varied path, then iteration time, throughput, bubble,
// peak memory (GiB) and the status, formatted for people; one row per row given.
struct SweepTable {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> cells;
};
SweepTable sweep_table(const std::vector<std::string>& paths, const std::vector<SweepRow>& rows);

// The metrics charted, in order: iteration time, throughput, bubble, peak memory.
inline constexpr size_t kSweepMetrics = 4;

// Adds the charts (an <svg class="chart sweep"> per metric and varied path, with data-metric
// and data-field) and the table.
void add_sweep_sections(HtmlPage& page, const std::vector<std::string>& paths,
                        const std::vector<SweepRow>& rows);

}  // namespace pipetwin
