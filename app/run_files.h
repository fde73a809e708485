// The files a run writes beside its summary: the HTML report (report/, docs/reports.md) and
// the --trace and --timeline files.
#pragma once

#include <string>
#include <vector>

#include "analysis/metrics.h"
#include "sim/driver/simulate.h"
#include "traces/timeline.h"

namespace pipetwin {

// --report of simulate and run: the HTML report of `result` (docs/reports.md), with
// `notes` under the headline.
void write_run_report(const std::string& path, const SimulationResult& result,
                      const RunMetrics& metrics, const std::vector<std::string>& notes = {});

// The HTML report of saved timelines, one run after the other (`pipetwin report`).
void write_timeline_report(const std::string& path, const std::vector<std::string>& names,
                           const std::vector<Timeline>& timelines);

// The --trace and --timeline files of a run (each skipped when its path is empty),
// written whole or not at all.
void write_run_files(const Timeline& timeline, const std::string& trace_path,
                     const std::string& timeline_path);

}  // namespace pipetwin
